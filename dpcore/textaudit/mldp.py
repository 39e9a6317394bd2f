"""mldp-text 0.1.2's mechanisms, run as shipped in their own environment, for the text audit.

mldp-text (Meisenbacher et al., LREC-COLING 2024; PyPI ``mldp-text``, GitHub sjmeis/MLDP) pins
``numpy<2`` and ``scipy<1.13``, so it cannot share dpcore's environment.
``python -m dpcore adapters install mldp`` builds its own virtualenv under the cache folder
(:mod:`dpcore.textaudit.envs`) and ``mldp:<Mechanism>`` audits each mechanism there through
:class:`~dpcore.textaudit.subprocess_adapter.SubprocessSanitizer`:

- ``mldp:CMP``: ``MultivariateCalibrated``; ε·d_euc (Feyisetan et al. 2020, WSDM);
- ``mldp:Mahalanobis``: ``Mahalanobis``; ε·d_R (Xu et al. 2020, PrivateNLP, Thm 1);
- ``mldp:Vickrey``: ``VickreyMechanism``; ε·d_euc (Xu et al. 2021, PrivateNLP);
- ``mldp:TEM``: ``TEM``; ε·d_euc (Carvalho et al. 2023, SDM);
- ``mldp:TruncatedGumbel``: ``TruncatedGumbel``; ε·d_euc (Carvalho, Vasiloudis, Feyisetan 2021);
- ``mldp:SynTF``: ``SynTF``; ε-LDP (Weggenmann & Kerschbaum 2018, SIGIR).

The library reads dpcore's vocabulary (words and vectors, as a word2vec text file), so d is the
distance of the very vectors it perturbs. d_R is the regularized Mahalanobis distance
‖Σ_λ^{-1/2}(φ(x) − φ(x′))‖ with the Σ_λ = λ·Cov(V)/Var(V) + (1 − λ)·I mldp-text builds its noise
from (λ = ``lambd``, 0.2 by default; Var over every entry of the embedding matrix).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpcore.text.vocab import Vocabulary
from dpcore.textaudit.claims import mldp_claim
from dpcore.textaudit.envs import env_python, factory_target, installed_env, require_env
from dpcore.textaudit.subprocess_adapter import SubprocessSanitizer
from dpcore.validation import DPCoreError

__all__ = ["MLDP_MECHANISMS", "MldpSanitizer", "mldp_installed"]


@dataclass(frozen=True)
class _Spec:
    cls: str
    guarantee: str
    distance: str  # "euclidean" or "mahalanobis" (metric claims)
    citation: str
    params: tuple[str, ...] = ()


_FAISS = "use_faiss"

#: dpcore's name → mldp-text's class, the claimed guarantee, its source, and the keyword arguments
#: ``--param`` may pass to the class (every other argument is the library's default).
MLDP_MECHANISMS: dict[str, _Spec] = {
    "CMP": _Spec(
        "MultivariateCalibrated",
        "metric",
        "euclidean",
        "Feyisetan et al. 2020 (WSDM): ε·d_euc metric DP (noise ∝ exp(−ε‖z‖), nearest word)",
        (_FAISS,),
    ),
    "Mahalanobis": _Spec(
        "Mahalanobis",
        "metric",
        "mahalanobis",
        "Xu et al. 2020 (PrivateNLP), Thm 1: ε·d_R, the regularized Mahalanobis distance (λ = lambd)",
        ("lambd", _FAISS),
    ),
    "Vickrey": _Spec(
        "VickreyMechanism",
        "metric",
        "euclidean",
        "Xu et al. 2021 (PrivateNLP): post-processing of CMP's noisy vector, ε·d_euc metric DP",
        ("k", _FAISS),
    ),
    "TEM": _Spec(
        "TEM",
        "metric",
        "euclidean",
        "Carvalho et al. 2023 (SDM), Algorithm 1: ε·d_euc metric DP",
    ),
    "TruncatedGumbel": _Spec(
        "TruncatedGumbel",
        "metric",
        "euclidean",
        "Carvalho, Vasiloudis, Feyisetan 2021 (FLAIRS-34): ε·d_euc metric DP (refuted in general: "
        "docs/mechanisms/truncated-gumbel.md)",
        ("min_inter_dist", "max_inter_dist", _FAISS),
    ),
    "SynTF": _Spec(
        "SynTF",
        "ldp",
        "euclidean",
        "Weggenmann & Kerschbaum 2018 (SIGIR): exponential mechanism, sensitivity 1: ε-LDP per word",
    ),
}


def mldp_installed() -> bool:
    """True when ``python -m dpcore adapters install mldp`` has built the environment."""
    return installed_env("mldp") is not None


def _param(name: str, value: Any) -> Any:
    try:
        if name == _FAISS:
            if isinstance(value, str):
                if value.lower() not in ("0", "1", "true", "false"):
                    raise ValueError
                return value.lower() in ("1", "true")
            return bool(int(value))
        if name == "k":
            f = float(value)
            if not f.is_integer() or not 1 <= f <= 1000:
                raise ValueError
            return int(f)
        v = float(value)
    except (TypeError, ValueError):
        raise DPCoreError(f"mldp: bad value for {name}: {value!r}") from None
    if not math.isfinite(v):
        raise DPCoreError(f"mldp: {name} must be finite")
    if name == "lambd" and not 0.0 <= v <= 1.0:
        raise DPCoreError("mldp: lambd must lie in [0, 1]")
    if name in ("min_inter_dist", "max_inter_dist") and v <= 0:
        raise DPCoreError(f"mldp: {name} must be > 0")
    return v


class MldpSanitizer(SubprocessSanitizer):
    """One mldp-text mechanism, as shipped, in mldp-text's own environment.

    Parameters
    ----------
    kind:
        A key of :data:`MLDP_MECHANISMS` (``CMP``, ``Mahalanobis``, ``Vickrey``, ``TEM``,
        ``TruncatedGumbel``, ``SynTF``).
    epsilon:
        ε passed to the class and claimed.
    vocab:
        dpcore's vocabulary (the library loads its words and vectors).
    **params:
        Keyword arguments of the class that dpcore lets through (see :data:`MLDP_MECHANISMS`).

    Raises
    ------
    DPCoreError
        The environment is not installed, an unknown mechanism or parameter, or the library fails
        to build the mechanism (one line naming its exception).
    """

    def __init__(self, *, kind: str, epsilon: float, vocab: Vocabulary, **params: Any) -> None:
        if kind not in MLDP_MECHANISMS:
            raise DPCoreError(f"unknown mldp mechanism {kind!r}; choose one of: {', '.join(MLDP_MECHANISMS)}")
        spec = MLDP_MECHANISMS[kind]
        unknown = sorted(set(params) - set(spec.params))
        if unknown:
            raise DPCoreError(
                f"mldp:{kind} takes {', '.join(spec.params) or 'no parameters'}, not {', '.join(unknown)}"
            )
        require_env("mldp")
        self.kind = kind
        self.spec = spec
        checked = {k: _param(k, v) for k, v in params.items()}
        try:
            super().__init__(
                python=str(env_python("mldp")),
                target=factory_target("mldp"),
                epsilon=epsilon,
                vocab=vocab,
                params={"kind": kind, "guarantee": spec.guarantee, **checked},
                name=f"mldp:{kind}",
                guarantee=spec.guarantee,
                citation=spec.citation,
                label=f"mldp:{kind}",
                isolated=True,
            )
        except DPCoreError as exc:
            raise DPCoreError(f"{exc}{_hint(kind, str(exc))}") from None
        self.mldp_params = checked
        self.claim = mldp_claim(
            kind,
            epsilon=float(epsilon),
            vocab=vocab,
            lam=float(checked.get("lambd", 0.2)),
            guarantee=spec.guarantee,
            citation=spec.citation,
        )

    def _own_bounds(self, x: np.ndarray, y: np.ndarray, d: np.ndarray) -> np.ndarray:
        return self.claim.bounds(x, y, d)

    def describe(self) -> dict[str, Any]:
        return {
            **super().describe(),
            "adapter": "dpcore.textaudit.mldp (mldp-text run as shipped in its own environment)",
            "mechanism": self.name,
            "class": self.spec.cls,
            "claim": self.spec.citation,
            **self.mldp_params,
        }


def _hint(kind: str, message: str) -> str:
    """What the user can do about a known failure of mldp-text 0.1.2 as shipped."""
    if kind == "TruncatedGumbel" and "Population must be a sequence" in message:
        return (
            " (mldp-text 0.1.2 calls random.sample() on dict keys to pick its calibration word, which "
            "Python >= 3.11 refuses; --param min_inter_dist=D --param max_inter_dist=D skips that step)"
        )
    if kind == "SynTF" and "wordnet" in message.lower():
        return (
            " (SynTF reads NLTK's WordNet corpus, which NLTK downloads from GitHub, not from the package "
            f"index: {env_python('mldp')} -m nltk.downloader wordnet, where that is allowed)"
        )
    return ""


def mldp_choice_rows() -> list[dict[str, Any]]:
    """``list`` rows for every mldp mechanism (``available`` False when not installed)."""
    ok = mldp_installed()
    rows = []
    for k, spec in MLDP_MECHANISMS.items():
        claim = f"mldp-text 0.1.2 {spec.cls} as shipped, in its own environment; claim: {spec.citation}"
        if not ok:
            claim = f"not installed (python -m dpcore adapters install mldp); {claim}"
        rows.append({"name": f"mldp:{k}", "summary": claim, "available": ok})
    return rows
