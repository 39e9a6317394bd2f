"""DP-MLM on whole lines as a rewriter (Meisenbacher et al., Findings of ACL 2024, §3.1–3.2),
dpcore's variant (:data:`dpcore.text.dpmlm.VARIANT`: WordPieces, MiniLM, dpcore's clip).

The line is split into WordPieces of the masked LM's vocabulary and every token is replaced by a
draw of :class:`dpcore.text.dpmlm.DPMLM` given the whole line (Pr[y] ∝ exp(ε·clip(logit_y, a, b)
/ (2Δu)), §3.1). Each released token is ε-LDP with respect to the whole line, so a line of n
tokens is (n·ε)-DP against any line of the same length (sequential composition): that is the
claim, per token, with the premise that both lines have the same number of tokens (the output
has the input's length, which is public) and that every token is in V (a token outside V is
released as ``[UNK]``).

Every token is privatized: the authors' published default keeps stopwords and punctuation
verbatim, reproduced as a flawed variant in :mod:`dpcore.flawed.rewriters`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from dpcore.rewriter.catalog import FULL_VOCABULARY, REWRITERS
from dpcore.rewriter.interface import RewriterClaim, same_length_premise
from dpcore.validation import check_epsilon

__all__ = ["DPMLMRewriter"]

CITATION = "Meisenbacher et al. 2024, DP-MLM §3.1: each token ε-LDP, a line of n tokens n·ε"


@REWRITERS.register(
    "dp-mlm",
    summary=(
        "dpcore's DP-MLM variant on whole lines (ε per token, a line of n tokens n·ε; WordPieces, MiniLM, "
        "dpcore's clip)"
    ),
    citation=CITATION,
    tags=("kind:dpcore",),
    display="dpcore's DP-MLM variant",
)
class DPMLMRewriter:
    """dpcore's DP-MLM rewriting whole lines (module docstring).

    Parameters
    ----------
    epsilon:
        ε per released token (the paper's ε).
    full_vocabulary:
        Keep the offensive WordPieces in V (research; default: left out, as everywhere in dpcore).
    mlm:
        A masked LM to use instead of the shipped one (tests).
    """

    name = "dp-mlm"
    PARAMETERS = (FULL_VOCABULARY,)

    def __init__(self, *, epsilon: float, full_vocabulary: bool = False, mlm: Any = None) -> None:
        self.epsilon = check_epsilon(epsilon)
        self.full_vocabulary = bool(full_vocabulary)
        self.claim = self._claim()
        self._mlm = mlm
        self._mech: Any = None
        self._tok: Any = None

    def _claim(self) -> RewriterClaim:
        return RewriterClaim(self.epsilon, unit="token", same_length=True, citation=CITATION)

    def __getstate__(self) -> dict[str, Any]:
        # the LM and the tokenizer are loaded again where the rewriter is unpickled (a worker)
        return {**self.__dict__, "_mech": None, "_tok": None, "_mlm": None}

    @property
    def mechanism(self) -> Any:
        """The token-level :class:`~dpcore.text.dpmlm.DPMLM` (built on first use)."""
        if self._mech is None:
            from dpcore.text.dpmlm import DPMLM
            from dpcore.text.vocab import build_vocabulary

            vocab = build_vocabulary("bert-wordpiece", full=self.full_vocabulary)
            self._mech = DPMLM(vocab=vocab, epsilon=self.epsilon, mlm=self._mlm)
        return self._mech

    @property
    def tokenizer(self) -> Any:
        if self._tok is None:
            from dpcore.text.embeddings import load_tokenizer

            self._tok = load_tokenizer("bert-wordpiece")
        return self._tok

    def count_tokens(self, text: str) -> int:
        """Number of WordPieces of ``text`` (the claim's n)."""
        return len(self.tokenizer.tokenize(str(text)))

    def premise(self, x: str, x_prime: str) -> str | None:
        """Why the pair is outside the claim (None: inside it; :func:`.same_length_premise`)."""
        tx, txp = self.tokenizer.tokenize(str(x)), self.tokenizer.tokenize(str(x_prime))
        return same_length_premise(tx, txp, self.mechanism.vocab, unit="tokens", texts="lines")

    def _draw_ids(
        self, texts: Sequence[str], rng: np.random.Generator
    ) -> tuple[list[list[str]], list[np.ndarray]]:
        tokens = [self.tokenizer.tokenize(str(t)) for t in texts]
        vocab = self.mechanism.vocab
        ids = [vocab.ids(np.asarray(t, dtype=object)) if t else np.zeros(0, dtype=np.int64) for t in tokens]
        known = [i[i >= 0] for i in ids]
        drawn = self.mechanism.sample_lines(known, rng)
        out = []
        for t, i, d in zip(tokens, ids, drawn, strict=True):
            line = np.asarray(t, dtype=object).copy() if t else np.zeros(0, dtype=object)
            line[i >= 0] = vocab.words[d]
            line[i < 0] = "[UNK]"
            out.append(line)
        return tokens, out

    def rewrite(self, texts: Sequence[str], rng: np.random.Generator) -> list[str]:
        """One rewrite per line: every token drawn given its whole line (Gumbel-max)."""
        _, out = self._draw_ids(texts, rng)
        return [" ".join(map(str, line)) for line in out]

    def describe(self) -> dict[str, Any]:
        return {
            "rewriter": self.name,
            "epsilon_per_token": self.epsilon,
            "full_vocabulary": self.full_vocabulary,
        }
