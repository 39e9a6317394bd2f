"""The record one audit cell produces: parameters, seed, estimates, bounds and a verdict."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field, replace
from typing import TYPE_CHECKING, Any

from dpcore.formatting import epsilon_text
from dpcore.jsonutil import to_jsonable
from dpcore.pairtest.verdicts import (
    NO_CLAIM,
    NOT_DETECTED,
    OUT_OF_REACH,
    VERDICTS,
    VIOLATES,
    WITHIN_CLAIM,
    decide,
)

if TYPE_CHECKING:
    from dpcore.tradeoff import TradeoffPair

__all__ = ["VERDICT_TEXT", "AuditResult"]

#: How the vector audit's verdict sentences start (its codes and their words are
#: :mod:`dpcore.pairtest.verdicts`').
VERDICT_TEXT: dict[str, str] = {
    VIOLATES: "violates its claimed ε",
    WITHIN_CLAIM: "no violation detected by this test (exact values)",
    NOT_DETECTED: VERDICTS[NOT_DETECTED].sentence,
    OUT_OF_REACH: VERDICTS[OUT_OF_REACH].sentence,
    NO_CLAIM: VERDICTS[NO_CLAIM].sentence,
}


@dataclass(frozen=True)
class AuditResult:
    """One (mechanism, n, ε) cell of the sanity check.

    ``empirical_epsilon`` is the majority-vote loss of Habernal (2022) §4 (exact value for
    ``method="exact"``, estimate for ``"mc"``); ``lr_epsilon`` the loss of the optimal
    likelihood-ratio attack on the same thresholded output. For ``"mc"`` each attack's bounds
    hold with probability ``confidence``.

    ``verdict`` is ``"violates"`` only when the exact loss of either attack (exact) or
    ``verdict_lower_bound`` (mc) exceeds the claim. ``verdict_lower_bound`` is the larger of the
    two attacks' Clopper–Pearson lower bounds, each taken at ``1 − (1 − confidence)/2``
    (Bonferroni), so it is a lower bound on the mechanism's true ε at ``confidence``.
    """

    mechanism: str
    flawed: bool
    dim: int
    epsilon: float
    delta: float
    method: str
    trials: int | None
    seed: int | None
    blackbox: bool
    confidence: float | None
    empirical_epsilon: float
    lower_bound: float | None
    upper_bound: float | None
    lr_epsilon: float
    lr_lower_bound: float | None
    lr_cut: int
    claimed_epsilon: float
    true_epsilon: float | None
    verdict_lower_bound: float | None
    verdict: str
    guess1_d: int | None
    guess1_dprime: int | None
    elapsed_s: float
    #: Monte-Carlo only: the largest loss a lower bound from ``trials`` trials can reach
    #: (about ln T); a claim above it cannot be refuted by this run.
    max_detectable_loss: float | None = None
    #: Monte-Carlo only: ``"real"`` (every trial ran the mechanism's own sampler, the default) or
    #: ``"model-based"`` (K drawn from the declared per-coordinate probabilities after a
    #: cross-check). None for exact values.
    sampler: str | None = None
    #: Monte-Carlo only, for mechanisms declaring i.i.d. coordinates: the test of real draws
    #: against the declared probabilities (``agrees``, declared/observed fractions, intervals).
    sampler_check: dict[str, Any] | None = None
    #: Monte-Carlo only: independent random streams the trials were drawn from, and how they
    #: derive from the seed (:data:`dpcore.audit.montecarlo.STREAM_SCHEME`). The same seed and
    #: scheme give the same result whatever ``workers`` was.
    streams: int | None = None
    stream_scheme: str | None = None
    #: Monte-Carlo only: threads that ran the streams (no influence on the result).
    workers: int | None = None
    #: The cell's tests as a :class:`~dpcore.tradeoff.TradeoffPair` (0ⁿ vs 1ⁿ): the exact optimal
    #: ROC of the thresholded output and the events as points (exact), or the events as
    #: Clopper–Pearson boxes (Monte-Carlo; :mod:`dpcore.audit.tradeoffs`). Not compared, not in
    #: :meth:`to_row`; :meth:`to_dict` writes it as ``tpr_at_fpr`` and ``tradeoff``.
    tradeoff_pair: TradeoffPair | None = field(default=None, repr=False, compare=False)

    @property
    def declaration_disagrees(self) -> bool:
        """True when real draws contradict the mechanism's declared probabilities."""
        return self.sampler_check is not None and not self.sampler_check.get("agrees", True)

    @property
    def claim_reachable(self) -> bool | None:
        """Monte-Carlo: could this many trials show a loss above the claim at all?"""
        if self.max_detectable_loss is None or math.isinf(self.claimed_epsilon):
            return None
        return self.claimed_epsilon < self.max_detectable_loss

    @property
    def test_description(self) -> str:
        """The test, its size and confidence, e.g. for a verdict."""
        size = f"n = {self.dim}, ε = {epsilon_text(self.epsilon)}"
        if self.method == "mc":
            how = (
                "from the real sampler"
                if self.sampler != "model-based"
                else "drawn from the declared probabilities (model-based)"
            )
            size += f", {self.trials:,} trials per neighbour {how}, confidence {self.confidence:g}"
        else:
            size += ", exact values"
        return size

    @property
    def verdict_text(self) -> str:
        """The verdict with the test, its size and confidence (never "private")."""
        size = self.test_description
        if self.verdict == VIOLATES:
            if self.method == "mc":
                text = (
                    f"violates its claimed ε: the loss is ≥ {self.verdict_lower_bound:.4g} with "
                    f"confidence {self.confidence:g}, above the claimed {self.claimed_epsilon:g} ({size})"
                )
            else:
                loss = max(self.empirical_epsilon, self.lr_epsilon)
                text = f"violates its claimed ε: exact loss {loss:.4g} > {self.claimed_epsilon:g} ({size})"
        elif self.verdict == WITHIN_CLAIM:
            loss = max(self.empirical_epsilon, self.lr_epsilon)
            text = (
                f"no violation detected by this test ({size}): the exact loss of both attacks on "
                f"0ⁿ and 1ⁿ is {loss:.4g} ≤ {self.claimed_epsilon:g}"
            )
        elif self.verdict == NO_CLAIM:
            text = VERDICT_TEXT[NO_CLAIM]
        elif self.verdict == OUT_OF_REACH:
            text = (
                f"out of reach: the claimed ε = {epsilon_text(self.claimed_epsilon)} is at or above "
                f"{self.max_detectable_loss:.3g}, the largest loss {self.trials:,} trials can show, so "
                f"this run could not have shown a violation ({size}). Nothing was shown either way"
            )
        else:
            text = f"no violation detected by this test ({size})"
        if self.declaration_disagrees:
            text += (
                "; the real sampler's draws disagree with the mechanism's declared per-coordinate "
                "probabilities, so its exact values describe the declaration, not the sampler"
            )
        return text

    def _fields(self) -> dict[str, Any]:
        d = asdict(replace(self, tradeoff_pair=None))
        del d["tradeoff_pair"]
        return d

    def observer(self) -> dict[str, Any] | None:
        """What the cell means for an observer of one thresholded release: ``tpr_at_fpr`` (at 1%
        and 5% FPR: the TPR, its bounds, the claim's ceiling and a sentence) and ``tradeoff`` (the
        claim's curve, the events, the exact curve); None when the cell has no trade-off pair."""
        if self.tradeoff_pair is None:
            return None
        from dpcore.audit.tradeoffs import observer_record

        return observer_record(self.tradeoff_pair, measured=self.method == "mc")

    def to_dict(self) -> dict[str, Any]:
        """Plain dict, JSON-safe: ±∞ become ``"inf"``/``"-inf"``. Besides the fields (less
        ``tradeoff_pair``): ``verdict_text``, ``claim_reachable``, ``declaration_disagrees`` and,
        when the cell has a trade-off pair, ``tpr_at_fpr`` and ``tradeoff`` (:meth:`observer`)."""
        d = self._fields()
        d["verdict_text"] = self.verdict_text
        d["claim_reachable"] = self.claim_reachable
        d["declaration_disagrees"] = self.declaration_disagrees
        obs = self.observer()
        if obs is not None:
            d.update(obs)
        return to_jsonable(d)

    def to_row(self) -> dict[str, Any]:
        """Flat dict with raw floats (∞ kept) for tables and CSV."""
        d = self._fields()
        d["verdict_text"] = self.verdict_text
        return d


def verdict_for(value: float | None, claimed: float, *, exact: bool, reach: float | None = None) -> str:
    """``violates`` if ``value`` exceeds the claim (with a float tolerance for exact values);
    otherwise ``within-claim`` for exact values, and for a Monte-Carlo bound ``out-of-reach`` when
    the claim is at or above ``reach`` (the largest loss the run's trials can show), else
    ``not-detected`` (the rule of :func:`dpcore.pairtest.verdicts.decide`)."""
    if math.isinf(claimed):
        return NO_CLAIM
    flagged = value is not None and value > claimed * (1.0 + 1e-9) + 1e-12
    if exact and not flagged:
        return WITHIN_CLAIM
    beyond = int(reach is not None and claimed >= reach)
    return decide(flagged=flagged, tested=1, beyond_reach=beyond)
