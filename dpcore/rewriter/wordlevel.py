"""A word-level sanitizer applied to every word of a text, as a rewriter: SanText (Yue et al.
2021, §4.2, Algorithm 1, eq. 1) over the GloVe vocabulary dpcore's ``sanitize`` uses by default.

Each word xᵢ of the text (the GloVe tokenizer's tokens) is replaced independently by
y ∈ V with Pr[y] ∝ exp(−½·ε·d(φ(xᵢ), φ(y))) (:class:`dpcore.text.mechanisms.SanText`), which
is ε·d-metric LDP per word (Yue et al., Theorem 1). For two texts of the same length whose words
are all in V, sequential composition over the positions gives the claim audited here:

    ln Pr[M(x) = y] − ln Pr[M(x′) = y] ≤ Σᵢ ε·d(φ(xᵢ), φ(x′ᵢ)),

summed over the positions where the texts differ (:meth:`WordSanitizerRewriter.claimed_bound`).
Its premise: the two texts have the same number of words (the output has the input's length,
which is public), and every word is in V (an unknown word is released as ``[UNK]``, which says
it was unknown).

The nominal ε is per unit of embedding distance, so the same ε means another bound per word
than DP-MLM's or DP-Prompt's ε per token: in GloVe 50d, two different words of V are typically
4 to 6 apart, so one changed word costs 4ε to 6ε. This is the point of the calibration
(:mod:`dpcore.rewriter.calibrate`): a nominal ε alone does not say how distinguishable the
outputs are.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from dpcore.rewriter.catalog import FULL_VOCABULARY, REWRITERS
from dpcore.rewriter.interface import RewriterClaim, same_length_premise
from dpcore.validation import check_epsilon

__all__ = ["WordSanitizerRewriter"]

CITATION = "Yue et al. 2021, SanText Thm 1: ε·d-LDP per word, summed over the words (composition)"
#: The vocabulary: GloVe's most frequent words, as ``sanitize`` builds it by default.
EMBEDDING, VOCAB_SIZE = "glove", 15_000


@REWRITERS.register(
    "santext-words",
    summary="SanText applied to every word (ε·d per word, summed over the words)",
    citation=CITATION,
    tags=("kind:dpcore",),
    display="dpcore's SanText on every word",
)
class WordSanitizerRewriter:
    """SanText applied to every word of a text (module docstring).

    Parameters
    ----------
    epsilon:
        SanText's ε (per unit of Euclidean GloVe distance).
    full_vocabulary:
        Keep offensive words in V (research; default: left out, as everywhere in dpcore).
    """

    name = "santext-words"
    PARAMETERS = (FULL_VOCABULARY,)

    def __init__(self, *, epsilon: float, full_vocabulary: bool = False) -> None:
        self.epsilon = check_epsilon(epsilon)
        self.full_vocabulary = bool(full_vocabulary)
        self.claim = RewriterClaim(
            self.epsilon, unit="token", same_length=True, metric="Euclidean GloVe 50d distance",
            citation=CITATION,
        )  # fmt: skip
        self._mech: Any = None
        self._tok: Any = None

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "_mech": None, "_tok": None}

    @property
    def mechanism(self) -> Any:
        if self._mech is None:
            from dpcore.text import create_text_mechanism
            from dpcore.text.vocab import build_vocabulary

            vocab = build_vocabulary(EMBEDDING, size=VOCAB_SIZE, full=self.full_vocabulary)
            self._mech = create_text_mechanism("santext", vocab=vocab, epsilon=self.epsilon)
        return self._mech

    @property
    def tokenizer(self) -> Any:
        if self._tok is None:
            from dpcore.text.embeddings import load_tokenizer

            self._tok = load_tokenizer(EMBEDDING)
        return self._tok

    def count_tokens(self, text: str) -> int:
        return len(self.tokenizer.tokenize(str(text)))

    def premise(self, x: str, x_prime: str) -> str | None:
        """Why the pair is outside the claim (None: inside it; :func:`.same_length_premise`)."""
        tx, txp = self.tokenizer.tokenize(str(x)), self.tokenizer.tokenize(str(x_prime))
        return same_length_premise(tx, txp, self.mechanism.vocab, unit="words")

    def claimed_bound(self, x: str, x_prime: str) -> float:
        """Σᵢ ε·d(φ(xᵢ), φ(x′ᵢ)) for two texts within the premise (module docstring)."""
        vocab = self.mechanism.vocab
        a = vocab.ids(np.asarray(self.tokenizer.tokenize(str(x)), dtype=object))
        b = vocab.ids(np.asarray(self.tokenizer.tokenize(str(x_prime)), dtype=object))
        d = np.linalg.norm(vocab.vectors[a] - vocab.vectors[b], axis=1)
        return float(self.epsilon * d.sum())

    def exact_loss(self, x: str, x_prime: str) -> float:
        """The pair's exact privacy loss, max over outputs y of |ln Pr[M(x) = y] − ln Pr[M(x′) = y]|.

        The words are drawn independently, so in each direction the largest log ratio of a whole
        output is the sum, over the positions where the texts differ, of that position's largest
        log ratio; the rows are SanText's exact output distributions over V (float64, log space:
        :meth:`dpcore.text.mechanisms.SanText.iter_log_rows`). ∞ where one word can give an output
        the other cannot. For two texts within :meth:`premise`.
        """
        vocab = self.mechanism.vocab
        a = vocab.ids(np.asarray(self.tokenizer.tokenize(str(x)), dtype=object))
        b = vocab.ids(np.asarray(self.tokenizer.tokenize(str(x_prime)), dtype=object))
        diff = np.flatnonzero(a != b)
        if diff.size == 0:
            return 0.0
        rows_a = np.concatenate([r for _, r in self.mechanism.iter_log_rows(a[diff])])
        rows_b = np.concatenate([r for _, r in self.mechanism.iter_log_rows(b[diff])])
        ways = np.zeros(2)
        for ra, rb in zip(rows_a, rows_b, strict=True):
            seen = np.isfinite(ra) | np.isfinite(rb)  # outputs neither word can give carry no loss
            with np.errstate(invalid="ignore"):
                d = ra[seen] - rb[seen]
            ways += (d.max(), (-d).max())
        return float(ways.max())

    def rewrite(self, texts: Sequence[str], rng: np.random.Generator) -> list[str]:
        """Every word of every text sanitized (words outside V become ``[UNK]``)."""
        from dpcore.text.sanitize import sanitize_lines

        out = sanitize_lines([str(t) for t in texts], self.mechanism, seed=rng, tokenizer=self.tokenizer)
        return list(out.lines)

    def describe(self) -> dict[str, Any]:
        return {
            "rewriter": self.name,
            "mechanism": "santext",
            "epsilon_per_unit_distance": self.epsilon,
            "vocabulary": self.mechanism.vocab.label,
            "full_vocabulary": self.full_vocabulary,
        }
