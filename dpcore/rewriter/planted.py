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

**Side channels** (:mod:`dpcore.rewriter.sidechannels`). Each leaks one number of its input and
nothing else: with probability q the output carries the input's value v(x) (clipped into the
rewriter's K values ``low, …, low + K − 1``), otherwise a uniform one of the K; the rest of the
output is drawn independently of the input. The output reveals its value exactly, so for inputs
whose clipped values differ the exact loss is ln(1 + qK/(1 − q)), carried by the event "the
output's value is v(x)" of probability q + (1 − q)/K under x.

:class:`LeakTokensRewriter`
    v public words (v = the input's whitespace-separated tokens).
:class:`LeakCharactersRewriter`
    One word of v uniform letters a–z (v = the input's characters).
:class:`LeakCapitalsRewriter`
    A lower-cased pool sentence with v of its letters, at uniform places, upper-cased.
:class:`LeakPunctuationRewriter`
    A pool sentence stripped of punctuation, with v marks from ``, . ; : ! ?`` each glued to a
    uniform word.
:class:`LeakDigitsRewriter`
    A pool sentence stripped of digits, then a number of v uniform digits (none for v = 0).
:class:`LeakPlaceRewriter`
    K − 1 public words and the word ``word``, put at place v (v = the place of ``word`` among the
    input's words, 0 for the first; an input without it counts as holding it last).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

import numpy as np

from dpcore.parameters import ParameterSpec
from dpcore.rewriter.catalog import REWRITERS
from dpcore.rewriter.interface import RewriterClaim
from dpcore.validation import DPCoreError, check_epsilon, check_probability

__all__ = [
    "PLANTED_POOL",
    "PLANTED_WORDS",
    "SIDE_CHANNEL_CASES",
    "SIDE_CHANNEL_REWRITERS",
    "CopyRewriter",
    "LeakCapitalsRewriter",
    "LeakCharactersRewriter",
    "LeakDigitsRewriter",
    "LeakPlaceRewriter",
    "LeakPunctuationRewriter",
    "LeakSuffixRewriter",
    "LeakTokensRewriter",
    "LeakWordRewriter",
    "copy_rewriter",
    "leak_word_rewriter",
    "planted_loss",
    "q_for_loss",
    "side_channel_case",
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


_LETTERS = re.compile("[a-z]+")


class _LeakValue(_Planted):
    """Leaks one number of its input (the module docstring's side channels).

    Parameters
    ----------
    epsilon:
        The claim to audit it against (ε per document).
    q:
        Probability of leaking the input's value.
    pool:
        Public sentences (drawn uniformly where the output needs one).
    words:
        Public words of letters a–z (drawn uniformly where the output needs words).
    low, k:
        The K values the output can carry: ``low, …, low + k − 1``.
    """

    channel = ""

    def __init__(
        self, *, epsilon: float, q: float, pool: Sequence[str], words: Sequence[str], low: int, k: int
    ) -> None:
        super().__init__(epsilon=epsilon, q=q, pool=pool)
        words = [str(w) for w in words]
        if len(words) < 2 or len(set(words)) != len(words) or not all(map(_LETTERS.fullmatch, words)):
            raise DPCoreError("a planted side-channel rewriter needs 2 or more distinct words of letters a–z")
        self.words = np.asarray(words, dtype=object)
        self.low, self.k = int(low), int(k)
        if self.low < 0 or self.k < 2:
            raise DPCoreError("a planted side-channel rewriter needs low ≥ 0 and k ≥ 2 values")

    def value(self, text: str) -> int:
        """The input's value, clipped into the K values."""
        from dpcore.rewriter.sidechannels import channel_counts

        v = int(channel_counts([text])[self.channel][0])
        return min(max(v, self.low), self.low + self.k - 1)

    def rewrite(self, texts: Sequence[str], rng: np.random.Generator) -> list[str]:
        n = len(texts)
        leak = rng.random(n) < self.q
        other = self.low + rng.integers(0, self.k, size=n)
        own = np.fromiter((self.value(t) for t in texts), dtype=np.int64, count=n)
        return self._render(np.where(leak, own, other), rng)

    def _render(self, values: np.ndarray, rng: np.random.Generator) -> list[str]:
        raise NotImplementedError

    def _sentences(self, n: int, rng: np.random.Generator) -> np.ndarray:
        return self.pool[rng.integers(0, self.pool.size, size=n)]

    def exact_loss(self, x: str, x_prime: str) -> float:
        """The pair's exact privacy loss: 0 when the clipped values agree, else ln(1 + qK/(1 − q))."""
        if self.value(x) == self.value(x_prime):
            return 0.0
        return planted_loss(self.q, self.k)

    def describe(self) -> dict[str, object]:
        return {**super().describe(), "channel": self.channel, "low": self.low, "k": self.k}


class LeakTokensRewriter(_LeakValue):
    """v public words, v the input's token count with probability q (module docstring)."""

    name = "planted:leak-tokens"
    channel = "tokens"

    def _render(self, values: np.ndarray, rng: np.random.Generator) -> list[str]:
        picks = self.words[rng.integers(0, self.words.size, size=int(values.sum()))]
        cuts = np.cumsum(values)[:-1]
        return [" ".join(part) for part in np.split(picks, cuts)]


class LeakCharactersRewriter(_LeakValue):
    """One word of v uniform letters, v the input's character count with probability q."""

    name = "planted:leak-characters"
    channel = "characters"

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        if self.low < 1:
            raise DPCoreError("the characters rewriter's values start at 1 (low ≥ 1)")

    def _render(self, values: np.ndarray, rng: np.random.Generator) -> list[str]:
        letters = np.frombuffer(b"abcdefghijklmnopqrstuvwxyz", dtype=np.uint8)
        codes = letters[rng.integers(0, 26, size=int(values.sum()))].tobytes().decode("ascii")
        ends = np.cumsum(values)
        return [codes[e - v : e] for e, v in zip(ends.tolist(), values.tolist(), strict=True)]


def _strip(sentence: str, pattern: str) -> str:
    return " ".join(re.sub(pattern, "", sentence).split())


class LeakCapitalsRewriter(_LeakValue):
    """A lower-cased pool sentence with v letters upper-cased, v the input's capitals with
    probability q (module docstring)."""

    name = "planted:leak-capitals"
    channel = "capitals"

    def _render(self, values: np.ndarray, rng: np.random.Generator) -> list[str]:
        out = []
        for s, v in zip(self._sentences(values.size, rng), values.tolist(), strict=True):
            chars = list(str(s).lower())
            letters = [i for i, c in enumerate(chars) if c.isalpha()]
            if v > len(letters):
                raise DPCoreError(f"a pool sentence has fewer than {v} letters to capitalise")
            for i in rng.choice(len(letters), size=v, replace=False).tolist():
                chars[letters[i]] = chars[letters[i]].upper()
            out.append("".join(chars))
        return out


class LeakPunctuationRewriter(_LeakValue):
    """A pool sentence without punctuation, v marks glued to uniform words, v the input's
    punctuation count with probability q (module docstring)."""

    name = "planted:leak-punctuation"
    channel = "punctuation"
    MARKS = (",", ".", ";", ":", "!", "?")

    def _render(self, values: np.ndarray, rng: np.random.Generator) -> list[str]:
        out = []
        for s, v in zip(self._sentences(values.size, rng), values.tolist(), strict=True):
            words = _strip(str(s), r"[^\w\s]").split()
            places = rng.integers(0, len(words), size=v).tolist()
            marks = rng.integers(0, len(self.MARKS), size=v).tolist()
            for i, mark in zip(places, marks, strict=True):
                words[i] += self.MARKS[mark]
            out.append(" ".join(words))
        return out


class LeakDigitsRewriter(_LeakValue):
    """A pool sentence without digits and a number of v uniform digits, v the input's digit count
    with probability q (module docstring)."""

    name = "planted:leak-digits"
    channel = "digits"

    def _render(self, values: np.ndarray, rng: np.random.Generator) -> list[str]:
        digits = "".join(map(str, rng.integers(0, 10, size=int(values.sum())).tolist()))
        ends = np.cumsum(values).tolist()
        return [
            _strip(str(s), r"\d") + (f" {digits[e - v : e]}" if v else "")
            for s, e, v in zip(self._sentences(values.size, rng), ends, values.tolist(), strict=True)
        ]


class LeakPlaceRewriter(_LeakValue):
    """K − 1 public words and ``word`` at place v, v its place in the input with probability q
    (module docstring).

    Parameters
    ----------
    epsilon, q, pool, words:
        As :class:`_LeakValue` (``words`` must not hold ``word``).
    word:
        The kept word (letters a–z).
    k:
        The places it can take, 0 … k − 1 (``low`` is 0).
    """

    name = "planted:leak-place"
    channel = "positions"

    def __init__(
        self, *, epsilon: float, q: float, pool: Sequence[str], words: Sequence[str], word: str, k: int
    ) -> None:
        super().__init__(epsilon=epsilon, q=q, pool=pool, words=[w for w in words if w != word], low=0, k=k)
        if not _LETTERS.fullmatch(str(word)):
            raise DPCoreError("the kept word must be letters a–z")
        self.word = str(word)

    def value(self, text: str) -> int:
        """The place of the kept word among the input's words (the last place when absent)."""
        from dpcore.rewriter.ngrams import WORD

        tokens = WORD.findall(str(text).lower())
        place = tokens.index(self.word) if self.word in tokens else self.k - 1
        return min(place, self.k - 1)

    def _render(self, values: np.ndarray, rng: np.random.Generator) -> list[str]:
        fill = self.words[rng.integers(0, self.words.size, size=(values.size, self.k - 1))].tolist()
        return [
            " ".join([*row[:v], self.word, *row[v:]]) for row, v in zip(fill, values.tolist(), strict=True)
        ]

    def describe(self) -> dict[str, object]:
        return {**super().describe(), "word": self.word}


#: The side-channel rewriters, by channel.
SIDE_CHANNEL_REWRITERS: dict[str, type[_LeakValue]] = {
    "tokens": LeakTokensRewriter,
    "characters": LeakCharactersRewriter,
    "capitals": LeakCapitalsRewriter,
    "punctuation": LeakPunctuationRewriter,
    "digits": LeakDigitsRewriter,
    "positions": LeakPlaceRewriter,
}


#: Each side channel's test case: the rewriter's K values and a pair whose values differ (the
#: power bench's and tests' cells, :func:`side_channel_case`).
SIDE_CHANNEL_CASES: dict[str, tuple[dict[str, object], tuple[str, str]]] = {
    "tokens": ({"low": 2, "k": 10}, ("the storm hit the coast", "the storm hit the town hall")),
    "characters": ({"low": 15, "k": 20}, ("the storm hit the coast", "the storm hit the coasts")),
    "capitals": ({"low": 0, "k": 6}, ("The Storm hit Paris", "The storm hit Paris")),
    "punctuation": ({"low": 0, "k": 6}, ("the storm, it hit the coast!", "the storm hit the coast!")),
    "digits": ({"low": 0, "k": 6}, ("the storm hit 12 homes", "the storm hit 9 homes")),
    "positions": ({"word": "storm", "k": 8}, ("storm hit the coast", "the storm hit the coast")),
}


def side_channel_case(channel: str, *, q: float, epsilon: float) -> tuple[_LeakValue, tuple[str, str]]:
    """The planted rewriter leaking ``channel`` with probability q over the public pool and
    :data:`PLANTED_WORDS` words, and its case's pair (:data:`SIDE_CHANNEL_CASES`)."""
    from dpcore.rewriter.pairs import _replacement_words

    if channel not in SIDE_CHANNEL_CASES:
        raise DPCoreError(f"unknown side channel {channel!r}; choose from {', '.join(SIDE_CHANNEL_CASES)}")
    options, pair = SIDE_CHANNEL_CASES[channel]
    words = list(_replacement_words()[:PLANTED_WORDS])
    rw = SIDE_CHANNEL_REWRITERS[channel](epsilon=epsilon, q=q, pool=_public_pool(), words=words, **options)
    return rw, pair


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
