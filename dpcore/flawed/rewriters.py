"""FENCED: flawed reproductions of DP-MLM and DP-Prompt as rewriters. Nothing here is private.

:class:`DPMLMStopwordsVerbatim` (``flawed:dp-mlm-stopwords``)
    DP-MLM as its authors' code runs by default (Meisenbacher et al. 2024, the published
    ``dpmlm_rewrite``): stopwords and punctuation are kept verbatim and only the other tokens are
    drawn. The output then says whether an input token is a stopword: for a line with a
    stopword and the same line with a non-stopword there, the stopword is in every rewrite of the
    first and almost never of the second, so no finite ε per token bounds the loss (the claim,
    n·ε for a line of n tokens, is broken at any ε). The stopword list here is scikit-learn's
    ``ENGLISH_STOP_WORDS`` (NLTK's list, which the published code reads, is a download).
:class:`DPMLMLineEpsilon` (``flawed:dp-mlm-line-epsilon``)
    Correct draws, wrong accounting: the per-token ε is reported as the whole line's, where a
    line of n tokens spends n·ε (the mistake Lyu et al. made with k·ε, Habernal 2022).
:class:`DPPromptKeepsLastWord` (``flawed:dp-prompt-keeps-last-word``)
    A planted leak: DP-Prompt's paraphrase, then the input's last word appended verbatim (what a
    "keep the key term" post-processing step does). Post-processing may only read the private
    output; this reads the input, so for two documents whose last words differ the word is in
    every rewrite of one and almost never of the other, and no finite ε holds. The audit must
    catch it (``tests/test_rewriter_dpprompt.py``).
"""

from __future__ import annotations

import string
from collections.abc import Sequence

import numpy as np

from dpcore.rewriter.catalog import REWRITERS
from dpcore.rewriter.dpmlm import DPMLMRewriter
from dpcore.rewriter.dpprompt import DPPromptRewriter
from dpcore.rewriter.interface import RewriterClaim

__all__ = ["DPMLMLineEpsilon", "DPMLMStopwordsVerbatim", "DPPromptKeepsLastWord"]


def _kept(token: str) -> bool:
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    t = token.lower()
    return t in ENGLISH_STOP_WORDS or (len(t) > 0 and all(c in string.punctuation for c in t))


@REWRITERS.register(
    "flawed:dp-mlm-stopwords",
    summary="DP-MLM as its authors' code runs by default: stopwords and punctuation kept verbatim",
    flawed=True,
    citation="FLAWED: Meisenbacher et al. 2024's published dpmlm_rewrite keeps stopwords verbatim",
    tags=("kind:flawed",),
    display="the flawed DP-MLM that keeps stopwords",
)
class DPMLMStopwordsVerbatim(DPMLMRewriter):
    """DP-MLM keeping stopwords and punctuation verbatim (FLAWED: module docstring)."""

    name = "flawed:dp-mlm-stopwords"
    flawed = True

    def rewrite(self, texts: Sequence[str], rng: np.random.Generator) -> list[str]:
        tokens, out = self._draw_ids(texts, rng)
        lines = []
        for t, line in zip(tokens, out, strict=True):
            keep = np.fromiter((_kept(w) for w in t), dtype=bool, count=len(t))
            line[keep] = np.asarray(t, dtype=object)[keep]
            lines.append(" ".join(map(str, line)))
        return lines


@REWRITERS.register(
    "flawed:dp-mlm-line-epsilon",
    summary="DP-MLM reporting its per-token ε as the line's (n·ε is spent)",
    flawed=True,
    citation="FLAWED accounting: DP-MLM's per-token ε reported as the line's",
    tags=("kind:flawed",),
    display="the flawed DP-MLM that reports its per-token ε as the line's",
)
class DPMLMLineEpsilon(DPMLMRewriter):
    """DP-MLM whose per-token ε is reported as the line's (FLAWED: module docstring)."""

    name = "flawed:dp-mlm-line-epsilon"
    flawed = True

    def _claim(self) -> RewriterClaim:
        return RewriterClaim(
            self.epsilon,
            unit="document",
            same_length=True,
            citation="FLAWED accounting: DP-MLM's per-token ε reported as the line's",
        )


@REWRITERS.register(
    "flawed:dp-prompt-keeps-last-word",
    summary="DP-Prompt appending the input's last word verbatim (a planted leak)",
    flawed=True,
    citation="FLAWED (planted): post-processing that reads the input",
    tags=("kind:flawed", "needs-torch"),
    display="the flawed DP-Prompt that keeps the input's last word",
)
class DPPromptKeepsLastWord(DPPromptRewriter):
    """DP-Prompt appending the input's last word verbatim (FLAWED, a planted leak: module docstring)."""

    name = "flawed:dp-prompt-keeps-last-word"
    flawed = True

    def rewrite(self, texts: Sequence[str], rng: np.random.Generator) -> list[str]:
        out = super().rewrite(texts, rng)
        last = [(str(t).split() or [""])[-1] for t in texts]
        return [f"{o} {w}".strip() for o, w in zip(out, last, strict=True)]
