"""Planted rewriters of known distinguishability: what the audit's power statement is checked on.

They are test instruments, not privacy mechanisms. Each mixes a leak of its input, with
probability q, into draws that do not depend on the input, so the exact privacy loss of a pair is
known in closed form (:meth:`exact_loss`) and the audit's caught rate can be compared with what
its power statement promises (``bench/rewriter_power.py``, ``tests/test_rewriter_power.py``).

:class:`CopyRewriter`
    Outputs its input with probability q, otherwise a uniform draw from a public pool of K
    sentences. For x, x′ both in the pool the output x has probability q + (1 − q)/K under x and
    (1 − q)/K under x′, and every other output is no likelier under x than under x′, so the exact
    loss is ε = ln(1 + qK/(1 − q)) (∞ when x is not in the pool).
:class:`LeakWordRewriter`
    Outputs a uniform pool sentence followed by one word: the input's word at ``position`` with
    probability q, otherwise a uniform word of a public list of K words. Its only leak is one
    word; for inputs differing there (both words in the list) the exact loss is
    ln(1 + qK/(1 − q)) by the same argument.
:class:`LeakSuffixRewriter`
    Outputs a uniform pool sentence followed by a uniform public word with one letter glued to
    its end: the input's last letter with probability q, otherwise a uniform letter a–z (K = 26).
    Its only leak is that letter, which no single word or word pair carries (each word-and-letter
    is one of K·26 rare words): a marker only in characters, which the power statement does
    not cover (:data:`dpcore.rewriter.power.NOT_COVERED`). For inputs whose last letters differ
    the exact loss is ln(1 + 26q/(1 − q)).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from dpcore.parameters import ParameterSpec
from dpcore.rewriter.catalog import REWRITERS
from dpcore.rewriter.interface import RewriterClaim
from dpcore.validation import DPCoreError, check_epsilon, check_probability

__all__ = [
    "PLANTED_POOL",
    "PLANTED_WORDS",
    "CopyRewriter",
    "LeakSuffixRewriter",
    "LeakWordRewriter",
    "copy_rewriter",
    "leak_word_rewriter",
    "planted_loss",
    "q_for_loss",
]

#: The registered planted rewriters' public pool: this many corpus sentences
#: (:func:`dpcore.rewriter.pairs.corpus_sentences`).
PLANTED_POOL = 20
#: The registered leak-word rewriter's public word list: this many ordinary words.
PLANTED_WORDS = 100
#: The leak probability of the registered planted rewriters.
Q = ParameterSpec(
    "q", 0.5, "float", 0.0, 1.0,
    "probability of the planted leak (a copy of the input, or the input's last word)",
    open_high=True, ui_high=0.95, step=0.05,
)  # fmt: skip


def planted_loss(q: float, k: int) -> float:
    """ln(1 + qK/(1 − q)): the exact loss of a leak with probability q over K alternatives."""
    if q >= 1:
        return math.inf
    return math.log1p(q * k / (1.0 - q))


def q_for_loss(loss: float, k: int) -> float:
    """The q whose leak over K alternatives has exact loss ``loss`` (inverse of :func:`planted_loss`)."""
    r = math.expm1(loss) / k
    return r / (1.0 + r)


class _Planted:
    def __init__(self, *, epsilon: float, q: float, pool: Sequence[str]) -> None:
        self.claim = RewriterClaim(
            check_epsilon(epsilon),
            unit="document",
            citation="planted test rewriter (claim given by the test)",
        )
        self.q = check_probability(q, name="q", open_high=True)
        pool = [str(s) for s in pool]
        if len(pool) < 2 or len(set(pool)) != len(pool):
            raise DPCoreError("a planted rewriter needs a pool of at least 2 distinct texts")
        self.pool = np.asarray(pool, dtype=object)

    def describe(self) -> dict[str, object]:
        return {"rewriter": self.name, "q": self.q, "pool_size": int(self.pool.size)}


class CopyRewriter(_Planted):
    """Copy the input with probability q, else a uniform sentence of the pool (module docstring).

    Parameters
    ----------
    epsilon:
        The claim to audit it against (ε per document).
    q:
        Probability of copying the input.
    pool:
        K distinct public sentences.
    """

    name = "planted:copy"

    def rewrite(self, texts: Sequence[str], rng: np.random.Generator) -> list[str]:
        n = len(texts)
        copy = rng.random(n) < self.q
        pick = self.pool[rng.integers(0, self.pool.size, size=n)]
        return [str(t) if c else str(p) for t, c, p in zip(texts, copy, pick, strict=True)]

    def exact_loss(self, x: str, x_prime: str) -> float:
        """The pair's exact privacy loss (∞ when an input is outside the pool)."""
        pool = set(self.pool.tolist())
        if x == x_prime:
            return 0.0
        if x not in pool or x_prime not in pool:
            return math.inf
        return planted_loss(self.q, int(self.pool.size))


class LeakWordRewriter(_Planted):
    """A pool sentence and one word, the input's own with probability q (module docstring).

    Parameters
    ----------
    epsilon:
        The claim to audit it against (ε per document).
    q:
        Probability of leaking the input's word.
    pool:
        Public sentences (the output's first part, independent of the input).
    words:
        K distinct public words (the word drawn when nothing leaks).
    position:
        Which word of the input leaks (Python indexing over whitespace-separated words).
    """

    name = "planted:leak-word"

    def __init__(
        self, *, epsilon: float, q: float, pool: Sequence[str], words: Sequence[str], position: int = -1
    ) -> None:
        super().__init__(epsilon=epsilon, q=q, pool=pool)
        words = [str(w) for w in words]
        if len(words) < 2 or len(set(words)) != len(words):
            raise DPCoreError("a leak-word rewriter needs at least 2 distinct words")
        self.words = np.asarray(words, dtype=object)
        self.position = int(position)

    def _word(self, text: str) -> str:
        parts = str(text).split()
        if not parts:
            return ""
        return parts[self.position] if -len(parts) <= self.position < len(parts) else parts[-1]

    def rewrite(self, texts: Sequence[str], rng: np.random.Generator) -> list[str]:
        n = len(texts)
        leak = rng.random(n) < self.q
        base = self.pool[rng.integers(0, self.pool.size, size=n)]
        other = self.words[rng.integers(0, self.words.size, size=n)]
        return [
            f"{b} {self._word(t) if lk else o}" for t, lk, b, o in zip(texts, leak, base, other, strict=True)
        ]

    def exact_loss(self, x: str, x_prime: str) -> float:
        """The pair's exact privacy loss (∞ when a leaked word is outside the list)."""
        w, wp = self._word(x), self._word(x_prime)
        if w == wp:
            return 0.0
        known = set(self.words.tolist())
        if w not in known or wp not in known:
            return math.inf
        return planted_loss(self.q, int(self.words.size))


class LeakSuffixRewriter(LeakWordRewriter):
    """A pool sentence and a public word with a letter glued on, the input's last letter with
    probability q (module docstring).

    Parameters
    ----------
    epsilon, q, pool, words:
        As :class:`LeakWordRewriter` (``words``: the public words the letter is glued to).
    """

    name = "planted:leak-suffix"
    LETTERS = tuple("abcdefghijklmnopqrstuvwxyz")

    def __init__(self, *, epsilon: float, q: float, pool: Sequence[str], words: Sequence[str]) -> None:
        super().__init__(epsilon=epsilon, q=q, pool=pool, words=words)
        self.letters = np.asarray(self.LETTERS, dtype=object)

    def _letter(self, text: str) -> str:
        letters = [c for c in str(text).lower() if c in self.LETTERS]
        return letters[-1] if letters else ""

    def rewrite(self, texts: Sequence[str], rng: np.random.Generator) -> list[str]:
        n = len(texts)
        leak = rng.random(n) < self.q
        base = self.pool[rng.integers(0, self.pool.size, size=n)]
        word = self.words[rng.integers(0, self.words.size, size=n)]
        other = self.letters[rng.integers(0, self.letters.size, size=n)]
        return [
            f"{b} {w}{self._letter(t) if lk else o}"
            for t, lk, b, w, o in zip(texts, leak, base, word, other, strict=True)
        ]

    def exact_loss(self, x: str, x_prime: str) -> float:
        """The pair's exact privacy loss (∞ when an input has no letter a–z)."""
        a, b = self._letter(x), self._letter(x_prime)
        if a == b:
            return 0.0
        if not a or not b:
            return math.inf
        return planted_loss(self.q, len(self.LETTERS))


def _public_pool() -> list[str]:
    """The registered planted rewriters' pool: the first :data:`PLANTED_POOL` corpus sentences."""
    from dpcore.rewriter.pairs import corpus_sentences

    return corpus_sentences()[:PLANTED_POOL]


@REWRITERS.register(
    "planted:copy",
    summary="test instrument: copies its input with probability q",
    citation="planted test rewriter: exact loss ln(1 + qK/(1 − q)) (planted_loss)",
    tags=("kind:planted",),
    display="the planted rewriter that copies its input",
)
def copy_rewriter(*, epsilon: float, q: float = 0.5) -> CopyRewriter:
    """:class:`CopyRewriter` over the first :data:`PLANTED_POOL` corpus sentences."""
    return CopyRewriter(epsilon=epsilon, q=q, pool=_public_pool())


@REWRITERS.register(
    "planted:leak-word",
    summary="test instrument: leaks the input's last word with probability q",
    citation="planted test rewriter: exact loss ln(1 + qK/(1 − q)) (planted_loss)",
    tags=("kind:planted",),
    display="the planted rewriter that leaks its input's last word",
)
def leak_word_rewriter(*, epsilon: float, q: float = 0.5) -> LeakWordRewriter:
    """:class:`LeakWordRewriter` over the corpus pool and :data:`PLANTED_WORDS` ordinary words."""
    from dpcore.rewriter.pairs import _replacement_words

    words = _replacement_words()[:PLANTED_WORDS]
    return LeakWordRewriter(epsilon=epsilon, q=q, pool=_public_pool(), words=words)


copy_rewriter.PARAMETERS = (Q,)  # type: ignore[attr-defined]
leak_word_rewriter.PARAMETERS = (Q,)  # type: ignore[attr-defined]
