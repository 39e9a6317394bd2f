"""dp-diffractor 0.2.1 (1-Diffractor) run as shipped in its own environment, for the text audit.

1-Diffractor (Meisenbacher, Chevli, Matthes, IWSPA 2024; PyPI ``dp-diffractor``, GitHub
sjmeis/Diffractor) orders the vocabulary into a one-dimensional list (a greedy nearest-neighbour
walk through the embedding) and releases, for a word at index i, the word at index
clip(i + G₁ − G₂) with G₁, G₂ geometric of parameter p = 1 − e^(−ε/Δ): ε·|i − i′|/Δ metric DP
on the list's index (Δ = ``sensitivity``, 1 by default).

``python -m dpcore adapters install diffractor`` builds its environment
(:mod:`dpcore.textaudit.envs`); ``diffractor:geometric`` audits the package's
``Diffractor.rewrite`` with its defaults there, through
:class:`~dpcore.textaudit.subprocess_adapter.SubprocessSanitizer`
(:mod:`dpcore.textaudit._diffractor_factory` says exactly what is run). The claimed bound of a
pair is computed by the package's own list (the worker's ``claim``). Substitutes: dpcore's GloVe
vectors of the audited vocabulary for the package's five downloaded embedding files, and NLTK's
data (:mod:`dpcore.textaudit.substitutes`).
"""

from __future__ import annotations

from typing import Any

from dpcore.text.vocab import Vocabulary
from dpcore.textaudit.envs import env_python, factory_target, installed_env, require_env, worker_env
from dpcore.textaudit.subprocess_adapter import SubprocessSanitizer
from dpcore.validation import DPCoreError

__all__ = ["CITATION", "DIFFRACTOR_MECHANISMS", "DiffractorSanitizer", "diffractor_installed"]

CITATION = (
    "Meisenbacher et al. 2024 (IWSPA), 1-Diffractor: geometric mechanism on the sorted list, "
    "ε·|i − i′| metric DP (i: the word's index)"
)
#: dpcore's name → what the package runs (its default method).
DIFFRACTOR_MECHANISMS: dict[str, str] = {
    "geometric": "Diffractor.rewrite with its defaults (geometric, ε per word, sensitivity 1, stopwords kept)"
}
#: What the package downloads and dpcore hands it instead.
SUBSTITUTES = ("embeddings", "nltk-data")


def diffractor_installed() -> bool:
    """True when ``python -m dpcore adapters install diffractor`` has built the environment."""
    return installed_env("diffractor") is not None


class DiffractorSanitizer(SubprocessSanitizer):
    """1-Diffractor as shipped, in its own environment (module docstring).

    Parameters
    ----------
    kind:
        ``"geometric"`` (the package's default method).
    epsilon:
        ε per word, passed to the package's ``DiffractorConfig``.
    vocab:
        dpcore's vocabulary: the package builds its sorted list from these words and vectors.

    Raises
    ------
    DPCoreError
        The environment is not installed, an unknown kind, or the package fails to build.
    """

    def __init__(self, *, kind: str, epsilon: float, vocab: Vocabulary, **params: Any) -> None:
        if kind not in DIFFRACTOR_MECHANISMS:
            raise DPCoreError(
                f"unknown diffractor mechanism {kind!r}; choose one of: {', '.join(DIFFRACTOR_MECHANISMS)}"
            )
        if params:
            raise DPCoreError(f"diffractor:{kind} takes no parameters (it runs the package's defaults)")
        require_env("diffractor")
        self.kind = kind
        super().__init__(
            python=str(env_python("diffractor")),
            target=factory_target("diffractor"),
            epsilon=epsilon,
            vocab=vocab,
            name=f"diffractor:{kind}",
            citation=CITATION,
            label=f"diffractor:{kind}",
            isolated=True,
            extra_env=worker_env("diffractor"),
        )

    def describe(self) -> dict[str, Any]:
        return {
            **super().describe(),
            "adapter": "dpcore.textaudit.diffractor (dp-diffractor run as shipped in its own environment)",
            "mechanism": self.name,
            "claim": CITATION,
            "substitutes": list(SUBSTITUTES),
        }
