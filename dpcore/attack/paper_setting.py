"""The paper's own mask-token inference setting: Yue et al. (2021), §5.3, Fig. 4 and Table 3.

SanText's Fig. 4 plots the defense rate of the mask-token inference attack against accuracy for
SanText "with the BERT embedding" (§5.3: "From now on, we adopt the BERT embedding"), with the
unsanitized text as the ε = ∞ point; its Table 3 gives the ε of that setting: 12, 14 and 16.
SanText+ is run at the paper's parameters p = 0.3, w = 0.9 (§5.2). ``python -m dpcore attack
--paper-setting`` and the Attack & utility page's "Paper's Fig. 4 setting" run exactly this.

What differs from the paper, and why (:data:`DIFFERENCES`): dpcore cannot install bert-base or
SST-2 offline, so it uses what it ships, and says so wherever the setting is offered.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

__all__ = [
    "DIFFERENCES",
    "PAPER_EMBEDDING",
    "PAPER_EPSILONS",
    "PAPER_MECHANISMS",
    "PAPER_SANTEXT_PLUS",
    "PAPER_SOURCE",
    "is_paper_setting",
]

#: Where the setting comes from.
PAPER_SOURCE = "Yue et al. (2021), §5.3, Fig. 4 (ε of Table 3)"
#: The embedding of Fig. 4 (§5.3).
PAPER_EMBEDDING = "bert"
#: The ε values of the BERT-embedding setting (Table 3, which reports Fig. 4's runs).
PAPER_EPSILONS: tuple[float, ...] = (12.0, 14.0, 16.0)
#: The mechanisms the setting is defined for.
PAPER_MECHANISMS = ("santext", "santext+")
#: SanText+'s parameters in the paper's experiments (§5.2).
PAPER_SANTEXT_PLUS = {"p": 0.3, "w": 0.9}

#: What differs from the paper's Fig. 4, and why (Markdown, one item each).
DIFFERENCES: tuple[str, ...] = (
    "**Attacker**: the paper's is pretrained BERT-base (110M parameters, trained on English "
    "Wikipedia and books); dpcore's is its own 6-layer MiniLM trained on public tweets (no "
    "masked-LM head installs offline), which knows the tweets' domain and little else.",
    "**Data**: the paper attacks SST-2 and QNLI; dpcore attacks tweets of its evaluation pool, "
    "which the attacker never trained on (SST-2 does not install offline).",
    "**Embedding**: the paper's BERT embedding is bert-base's 768-dimensional input embedding "
    "over WordPieces; dpcore's `bert` is the 384-dimensional input embedding of all-MiniLM-L6-v2 "
    "over the same vocabulary's whole words. Distances differ, so the same ε replaces a "
    "different share of words: compare by the share kept, not by ε alone.",
    "**Scoring**: whole words, one `[MASK]` each; a word that is not one WordPiece counts as "
    "defended (reported apart), where the paper masks WordPieces.",
)


def is_paper_setting(
    mechanisms: Sequence[str],
    epsilons: Sequence[float],
    embedding: str,
    parameters: Mapping[str, Mapping[str, float]] | None = None,
) -> bool:
    """Whether a run is the paper's Fig. 4 setting: only its mechanisms (SanText+ at its p, w),
    exactly its ε, over its embedding."""
    params = parameters or {}
    return (
        bool(mechanisms)
        and set(mechanisms) <= set(PAPER_MECHANISMS)
        and tuple(sorted(float(e) for e in epsilons)) == PAPER_EPSILONS
        and embedding == PAPER_EMBEDDING
        and all(float(params.get("santext+", {}).get(k, v)) == v for k, v in PAPER_SANTEXT_PLUS.items())
    )
