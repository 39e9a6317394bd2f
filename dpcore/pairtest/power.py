"""The power core of a pair test: the chance its Clopper–Pearson test flags a violation.

The test of one direction of a pair (:mod:`dpcore.pairtest.estimator`; every audit's pair test:
the word audit's stage 2, the rewriter audit's held-out half) counts a = #{M(x) ∈ S} and
b = #{M(x′) ∈ S} among n draws each and flags the pair when

    ln CP⁻(a; n, α/2) − ln CP⁺(b; n, α/2) > c,

c the pair's claimed bound. Suppose the claim is violated on the test's event S by Δ nats:
Pr[M(x) ∈ S] = p and Pr[M(x′) ∈ S] = q = p·e^{−(c + Δ)}. Then a ~ Bin(n, p), b ~ Bin(n, q) are
independent and the chance of a flag is exactly

    power(Δ) = Σ_b Pr[b] · Pr[a ≥ a*(b)],   a*(b) = min{a : ln CP⁻(a) − ln CP⁺(b) > c},

which grows with Δ (:func:`flag_probability`). The **detectable violation** at event probability
p is the smallest Δ with power(Δ) ≥ 0.9 (:func:`detectable_excess`; ∞ when even q = 0 does not
reach it: no violation on an event that rare can be shown with n draws). It is a statement about
the test's own event S: a violation on an event the selection did not choose, or on a pair that
was not tested, is not covered. What each audit's *pipeline* would have caught builds on it
(:mod:`dpcore.textaudit.power`, :mod:`dpcore.rewriter.power`).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
from scipy.special import bdtrc, gammaln

from dpcore.stats import cp_log_ratio_den, cp_log_ratio_num

__all__ = ["DEFAULT_POWER", "Detectable", "detectable_excess", "flag_probability"]

#: The probability with which a reported violation would have been flagged.
DEFAULT_POWER = 0.9
#: Relative tolerance of the claim comparison (as the runner's).
_TOL = 1e-9
#: Binomial tails beyond this many standard deviations are ignored (mass < 1e-8, counted as no
#: flag, so the stated power is never overstated).
_SPAN = 6.0


@dataclass(frozen=True)
class Detectable:
    """The smallest violation a test flags with probability ≥ ``power``.

    Attributes
    ----------
    power:
        The flag probability the figure is for (0.9).
    event_probability:
        p = Pr[M(x) ∈ S] of the event it is stated for.
    excess:
        Δ: a loss above claim + Δ on such an event is flagged with probability ≥ power (∞: none is).
    claim:
        The claimed bound c it is stated against.
    loss:
        c + Δ.
    samples:
        Draws per word that bound the event.
    """

    power: float
    event_probability: float
    excess: float
    claim: float
    loss: float
    samples: int

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def text(self) -> str:
        if not math.isfinite(self.excess):
            return (
                f"no violation on an event of probability {self.event_probability:.3g} can be flagged "
                f"with {self.samples:,} draws per word"
            )
        return (
            f"a loss above {self.loss:.3g} (claim {self.claim:.3g} + {self.excess:.3g}) on an event of "
            f"probability ≥ {self.event_probability:.3g} under M(x) would have been flagged with "
            f"probability ≥ {self.power:g}"
        )


def _range(n: int, p: float) -> tuple[int, int]:
    sd = math.sqrt(max(n * p * (1 - p), 1.0))
    return max(0, math.floor(n * p - _SPAN * sd)), min(n, math.ceil(n * p + _SPAN * sd))


#: ln CP⁺(b; n, α/2) for b = 0, 1, … per (n, α), grown on demand: every test of an audit starts its
#: b at 0 with the same (n, α), and these bounds are most of the statements' cost.
_UPPER_PREFIXES: dict[tuple[int, float], np.ndarray] = {}


def _log_upper_prefix(n: int, alpha: float, size: int) -> np.ndarray:
    """``cp_log_ratio_den(np.arange(size), n, alpha)``, element by element the same values (each
    bound is computed on its own), read from a per-(n, α) array that is only ever extended."""
    key = (int(n), float(alpha))
    have = _UPPER_PREFIXES.get(key)
    if have is None or have.size < size:
        old = 0 if have is None else have.size
        grow = min(n + 1, max(size, 2 * old))
        more = np.asarray(cp_log_ratio_den(np.arange(old, grow), n, alpha), dtype=np.float64)
        have = more if have is None else np.concatenate([have, more])
        have.flags.writeable = False
        if len(_UPPER_PREFIXES) >= 64:
            _UPPER_PREFIXES.clear()
        _UPPER_PREFIXES[key] = have
    return have[:size]


class _Test:
    """One direction's flag rule at (n, α, c), tabulated over the counts that matter."""

    def __init__(self, n: int, alpha: float, claim: float, p: float) -> None:
        self.n, self.p, self.claim = n, p, claim
        a_lo, a_hi = _range(n, p)
        # b never exceeds its Δ = 0 range (q ≤ p·e^{−c}), and only b < a can flag
        q0 = p * math.exp(-claim) if math.isfinite(claim) else 0.0
        self.b = np.arange(0, min(_range(n, q0)[1], a_hi) + 1)
        log_hi = _log_upper_prefix(n, alpha, self.b.size)
        need = log_hi + claim * (1 + _TOL) + _TOL  # flag iff ln CP⁻(a) > need[b]
        # a*(b): the first a in [a_lo, a_hi] that flags (a_hi + 1: none); ln CP⁻ grows with a
        if 12 * self.b.size < a_hi - a_lo + 1:  # few b: bisect each (≈ 11 bounds per b)
            lo = np.full(self.b.size, a_lo - 1)
            hi = np.full(self.b.size, a_hi + 1)
            while True:
                act = np.flatnonzero(hi - lo > 1)
                if act.size == 0:
                    break
                mid = (lo[act] + hi[act]) // 2
                ok = cp_log_ratio_num(mid, n, alpha) > need[act]
                hi[act] = np.where(ok, mid, hi[act])
                lo[act] = np.where(ok, lo[act], mid)
            a_star = hi
        else:  # many b: tabulate every a once
            log_lo = cp_log_ratio_num(np.arange(a_lo, a_hi + 1), n, alpha)
            a_star = a_lo + np.searchsorted(log_lo, need, side="right")
        # Pr[a ≥ a*(b)] under Bin(n, p); below the range counts as the range's start (< 1e-8 lost)
        self.pa = np.where(a_star > a_hi, 0.0, bdtrc(a_star - 1, n, p))
        self._log_binom = gammaln(n + 1.0) - gammaln(self.b + 1.0) - gammaln(n - self.b + 1.0)
        # b and n − b as floats once (power() is called ~20 times per test; the same products)
        self._bf = self.b.astype(np.float64)
        self._nbf = (n - self.b).astype(np.float64)

    def power(self, excess: float) -> float:
        q = self.p * math.exp(-(self.claim + excess)) if math.isfinite(excess) else 0.0
        if q <= 0:
            return float(self.pa[0])
        if q >= 1:  # a claim of 0 on an event of probability 1 (the 0-LDP baseline): b = n surely
            hit = np.flatnonzero(self.b == self.n)
            return float(self.pa[hit[0]]) if hit.size else 0.0
        with np.errstate(divide="ignore", under="ignore"):
            pb = self._bf * math.log(q)
            pb += self._log_binom  # the same sum as log_binom + b·ln q + (n − b)·ln(1 − q)
            pb += self._nbf * math.log1p(-q)
            np.exp(pb, out=pb)
        return float(np.clip(np.dot(pb, self.pa), 0.0, 1.0))


def flag_probability(n: int, alpha: float, claim: float, p: float, excess: float) -> float:
    """Exact chance that the test flags a violation of ``excess`` nats on an event of probability p."""
    if not (0 < p <= 1) or not math.isfinite(claim):
        return 0.0
    return _Test(n, alpha, claim, p).power(excess)


def detectable_excess(
    n: int, alpha: float, claim: float, p: float, *, power: float = DEFAULT_POWER
) -> Detectable:
    """The smallest Δ ≥ 0 whose violation the test flags with probability ≥ ``power``.

    Parameters
    ----------
    n:
        Draws per word that bound the event (T/2 for a selected event, T for a planned one).
    alpha:
        The test's per-test level (its one-sided bounds are at α/2 each).
    claim:
        The pair's claimed bound c.
    p:
        Pr[M(x) ∈ S] of the event.
    power:
        The flag probability asked for.
    """
    if not (0 < p <= 1) or not math.isfinite(claim):
        return Detectable(power, float(p), math.inf, float(claim), math.inf, int(n))
    test = _Test(n, alpha, claim, p)
    if test.power(math.inf) < power:
        return Detectable(power, float(p), math.inf, float(claim), math.inf, int(n))
    if test.power(0.0) >= power:
        return Detectable(power, float(p), 0.0, float(claim), float(claim), int(n))
    lo, hi = 0.0, 1.0
    while test.power(hi) < power:
        lo, hi = hi, 2 * hi
        if hi > 1e4:
            return Detectable(power, float(p), math.inf, float(claim), math.inf, int(n))
    for _ in range(40):
        mid = 0.5 * (lo + hi)
        if test.power(mid) >= power:
            hi = mid
        else:
            lo = mid
        if hi - lo < 1e-4:
            break
    return Detectable(power, float(p), float(hi), float(claim), float(claim + hi), int(n))
