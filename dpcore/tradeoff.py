"""What a privacy claim means for an observer: trade-off curves and TPR at a low FPR.

An observer who sees one release and must say whether it came from x (the *null*, e.g. the word
*hiv*, or D = 0ⁿ) or from x′ (the *alternative*, *flu* or D′ = 1ⁿ) runs a test. Its false
positive rate (FPR, α) is how often it names x′ when the input was x; its true positive rate
(TPR, 1 − β) how often it names x′ when the input was x′.

The claim's region (Kairouz, Oh & Viswanath 2015, *ICML*, Thm 2.1; Dong, Roth & Su 2022,
*JRSS-B* 84(1), §2, the trade-off function f_{ε,δ})
    An (ε, δ)-DP mechanism allows, for every test, FPR + e^ε·(1 − TPR) ≥ 1 − δ and
    e^ε·FPR + (1 − TPR) ≥ 1 − δ; equivalently β ≥ f_{ε,δ}(α) with

        f_{ε,δ}(α) = max(0, 1 − δ − e^ε·α, e^(−ε)·(1 − δ − α)).

    :func:`claim_tradeoff` is f; :func:`tpr_ceiling` is 1 − f(α), the highest TPR any test can
    reach at FPR α while the claim holds, and :func:`tpr_floor` its mirror image (the test that
    answers the other way round). A metric-DP claim ε·d + ε₀ (ε₀ = 0 except for UMLDP, e.g.
    SanText+) is pure DP at ε_pair = ε·d(x, x′) + ε₀ for that pair (:func:`pair_epsilon`).

    The two terms are two branches. The steep one, TPR ≤ e^ε·FPR + δ, is the claim applied to
    the test's event S (Pr[M(x′) ∈ S] ≤ e^ε·Pr[M(x) ∈ S] + δ): the *event branch*. The shallow
    one, 1 − TPR ≥ e^(−ε)·(1 − δ − FPR), is the claim applied to the complement Ω∖S: the
    *complement branch*. The floor mirrors both.

Rényi-DP claims (``order=α``)
    A claim D_α(M(x) ‖ M(x′)) ≤ ε for Rényi order α > 1 (Mironov 2017, *CSF*, Def. 4) allows a
    test exactly the (FPR, TPR) whose two Bernoulli laws keep it: D_α(Bern(TPR) ‖ Bern(FPR)) ≤ ε
    and D_α(Bern(FPR) ‖ Bern(TPR)) ≤ ε (data processing; :func:`dpcore.stats.bernoulli_renyi`).
    The ceiling is that set's upper edge, found by bisection (both divergences grow as TPR moves
    away from FPR), and the floor its mirror 1 − ceiling(1 − FPR). No δ enters: converting to
    (ε′, δ) would only widen the region. It is always weaker than the pure claim at the same ε
    (e.g. Mironov's Prop. 10, Pr[S] ≤ (e^ε·Pr′[S])^((α−1)/α), follows from it).

Claims that cover only some outputs (``covers="events"``)
    SanText+'s UMLDP bounds the ratio only on outputs in its sensitive set V_P, and a sanitizer
    with ``protected_ids`` only on those. An event S made of covered outputs is still bound by
    TPR ≤ e^ε·FPR + δ and FPR ≤ e^ε·TPR + δ, but Ω∖S holds uncovered outputs, so the complement
    branch is not part of the claim: such pairs are tested against the event branch only
    (:data:`TESTED`), and their tests are not answered the other way round (that would use Ω∖S).

Numerics
    Every e^ε·x is computed as exp(min(0, ε + ln x)) (0 at x = 0), never e^ε alone, so curves,
    ceilings and box tests are finite and warning-free at any ε ≥ 0 up to the largest float
    (e^ε overflows above ε ≈ 709.78, and ∞·0 is NaN); ε = ∞ means no claim.

What was measured
    Each event S of an audit is a test ("name x′ when the output is in S"): its FPR is
    Pr[M(x) ∈ S] and its TPR Pr[M(x′) ∈ S]. Where both are exact (a closed-form channel),
    :func:`roc_from_logpmfs` gives the whole optimal curve by Neyman–Pearson (outcomes in order
    of decreasing likelihood ratio; randomising between neighbours fills the segments). Where
    they are estimated, each event is a :class:`Box`: Clopper–Pearson intervals on both rates.
    A box lies in the forbidden region with all of its area (:func:`box_outside`) exactly when
    its worst corner does, which is a violation at the box's confidence;
    :func:`box_violation` also says which branch it is beyond ("event" or "complement").

TPR at a fixed FPR (as in jax_privacy's auditing module)
    Randomising between tests reaches every point of their upper concave hull
    (:func:`concave_hull`), so the best TPR at FPR ≤ α of a family of tests is the hull at α
    (:func:`tpr_at`). For estimated events, the hull of the boxes' pessimistic corners
    (largest FPR, smallest TPR) is a lower bound on the family's best TPR at α and the hull of
    the optimistic corners an upper bound, both holding when every box does
    (:func:`tpr_at_fpr_entry`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from dpcore.formatting import percent

__all__ = [
    "COVERS",
    "DEFINITIONS",
    "FPR_LEVELS",
    "RENYI_TESTED",
    "TESTED",
    "Box",
    "TradeoffPair",
    "box_outside",
    "box_violation",
    "claim_curve",
    "claim_tradeoff",
    "concave_hull",
    "pair_epsilon",
    "roc_from_logpmfs",
    "tpr_at",
    "tpr_at_fpr_entry",
    "tpr_ceiling",
    "tpr_floor",
]

#: The false positive rates every audit reports the TPR at.
FPR_LEVELS: tuple[float, ...] = (0.01, 0.05)

#: What a claim covers: ``"all"`` outputs (the usual DP / LDP / metric-DP claim) or only some
#: (``"events"``: SanText+'s UMLDP on V_P, a sanitizer's ``protected_ids``), so that only events
#: made of covered outputs are constrained and their complements are not.
COVERS: tuple[str, ...] = ("all", "events")

#: Which constraints a box is tested against, per coverage (``tested`` in the JSON).
TESTED: dict[str, str] = {
    "all": (
        "the whole trade-off curve 1 − f_ε,δ: the event branch TPR ≤ e^ε·FPR + δ (with its mirror "
        "FPR ≤ e^ε·TPR + δ) and the complement branch 1 − TPR ≥ e^(−ε)·(1 − δ − FPR) (with its mirror), "
        "the claim applied to the event S and to the outputs outside it"
    ),
    "events": (
        "the event branch only: TPR ≤ e^ε·FPR + δ and FPR ≤ e^ε·TPR + δ, the claim applied to the "
        "event S, whose outputs it covers; the complement branch is not tested, because the outputs "
        "outside S include outputs the claim does not cover"
    ),
}

#: What a box is tested against under a Rényi-DP claim (``tested`` in the JSON).
RENYI_TESTED = (
    "the Rényi claim's region: D_α(Bern(TPR) ‖ Bern(FPR)) ≤ ε and D_α(Bern(FPR) ‖ Bern(TPR)) ≤ ε, the "
    "claim applied to the event S and its complement at once (data processing)"
)

#: Slack of the box tests (rates are in [0, 1]).
_TOL = 1e-12


def _check_eps_delta(epsilon: float, delta: float) -> tuple[float, float]:
    eps = float(epsilon)
    if math.isnan(eps) or eps < 0.0:
        raise ValueError(f"epsilon must be ≥ 0 (∞ allowed), got {epsilon!r}")
    d = float(delta)
    if not 0.0 <= d <= 1.0:
        raise ValueError(f"delta must be in [0, 1], got {delta!r}")
    return eps, d


def _check_covers(covers: str) -> str:
    if covers not in COVERS:
        raise ValueError(f"covers must be one of {COVERS}, got {covers!r}")
    return covers


def _check_order(order: float | None, delta: float, covers: str) -> float | None:
    from dpcore.stats import renyi_order

    if order is None:
        return None
    o = renyi_order(order)
    if delta != 0.0 or covers != "all":
        raise ValueError("a Rényi claim has no δ and covers every output")
    return o


def _renyi_ceiling(fpr: np.ndarray, epsilon: float, order: float) -> np.ndarray:
    """The largest TPR ≥ FPR whose Bernoulli pair keeps both Rényi divergences ≤ ε (module docstring),
    by 60 steps of bisection on every FPR at once."""
    from dpcore.stats import bernoulli_renyi

    q = np.clip(np.asarray(fpr, dtype=np.float64), 0.0, 1.0)
    if math.isinf(epsilon):
        return np.ones_like(q)
    lo, hi = q.copy(), np.ones_like(q)
    ok = bernoulli_renyi(hi, q, order) <= epsilon
    lo = np.where(ok, hi, lo)
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        inside = bernoulli_renyi(mid, q, order) <= epsilon
        lo, hi = np.where(inside, mid, lo), np.where(inside, hi, mid)
    return lo


def _exp_times(x: np.ndarray | float, epsilon: float) -> np.ndarray:
    """min(1, e^ε·x) for x ≥ 0 without overflow at any ε ≥ 0 (∞ included).

    Computed as exp(min(0, ε + ln x)), 0 where x = 0: e^ε alone overflows above ε ≈ 709.78, and
    ∞·0 is NaN, while the product capped at 1 is what every curve and ceiling uses.
    """
    x = np.clip(np.asarray(x, dtype=np.float64), 0.0, None)
    pos = x > 0.0
    val = np.exp(np.minimum(0.0, float(epsilon) + np.log(np.where(pos, x, 1.0))))
    return np.where(pos, val, 0.0)


def claim_tradeoff(
    alpha: np.ndarray | float,
    epsilon: float,
    delta: float = 0.0,
    *,
    covers: str = "all",
    order: float | None = None,
) -> np.ndarray:
    """f_{ε,δ}(α) = max(0, 1 − δ − e^ε·α, e^(−ε)·(1 − δ − α)): the smallest type-II error β a
    test with type-I error α can have under an (ε, δ)-DP claim (module docstring; Kairouz, Oh &
    Viswanath 2015, Thm 2.1; Dong, Roth & Su 2022, §2).

    With ``covers="events"`` (a claim on some outputs only, module docstring) the last term, the
    claim applied to the complement of the test's event, is left out: max(0, 1 − δ − e^ε·α).
    Overflow-safe at any ε (e^ε·α is evaluated as exp(min(0, ε + ln α))).

    Examples
    --------
    >>> float(claim_tradeoff(0.0, 1.0)), round(float(claim_tradeoff(0.1, 1.0)), 4)
    (1.0, 0.7282)
    >>> float(claim_tradeoff(0.5, math.inf)), float(claim_tradeoff(0.5, 1000.0))
    (0.0, 0.0)
    >>> round(float(claim_tradeoff(0.5, 1.0, covers="events")), 4)
    0.0

    With ``order``, a Rényi-DP claim of that order: 1 − :func:`tpr_ceiling` (module docstring).
    """
    eps, d = _check_eps_delta(epsilon, delta)
    _check_covers(covers)
    if _check_order(order, d, covers) is not None:
        return 1.0 - tpr_ceiling(alpha, eps, order=order)
    a = np.clip(np.asarray(alpha, dtype=np.float64), 0.0, 1.0)
    if math.isinf(eps):
        # No claim: any test is allowed.
        return np.zeros_like(a)
    out = np.maximum(0.0, 1.0 - d - _exp_times(a, eps))
    if covers == "all":
        out = np.maximum(out, math.exp(-eps) * (1.0 - d - a))
    return out


def tpr_ceiling(
    fpr: np.ndarray | float,
    epsilon: float,
    delta: float = 0.0,
    *,
    covers: str = "all",
    order: float | None = None,
) -> np.ndarray:
    """1 − f_{ε,δ}(FPR) = min(1, e^ε·FPR + δ, 1 − e^(−ε)·(1 − δ − FPR)): the highest TPR any
    test can reach at this FPR while the claim holds (Kairouz, Oh & Viswanath 2015, Thm 2.1).

    ``covers="events"``: min(1, e^ε·FPR + δ), the steep branch only (:func:`claim_tradeoff`).
    Overflow-safe at any ε: at ε = 10³⁰⁰ it is 1 wherever FPR > 0 and δ at FPR = 0.

    Examples
    --------
    >>> round(float(tpr_ceiling(0.01, 1.0)), 5)
    0.02718
    >>> float(tpr_ceiling(0.0, 1e300)), float(tpr_ceiling(1e-9, 1e300))
    (0.0, 1.0)

    With ``order``, the ceiling of a Rényi-DP claim of that order (module docstring):

    >>> round(float(tpr_ceiling(0.2, 1.1787, order=2.0)), 3)
    0.8
    """
    eps, d = _check_eps_delta(epsilon, delta)
    _check_covers(covers)
    o = _check_order(order, d, covers)
    if o is not None:
        return _renyi_ceiling(np.asarray(fpr, dtype=np.float64), eps, o)
    a = np.clip(np.asarray(fpr, dtype=np.float64), 0.0, 1.0)
    if math.isinf(eps):
        return np.ones_like(a)
    out = np.minimum(1.0, d + _exp_times(a, eps))
    if covers == "all":
        out = np.minimum(out, 1.0 - math.exp(-eps) * (1.0 - d - a))
    return out


def tpr_floor(
    fpr: np.ndarray | float,
    epsilon: float,
    delta: float = 0.0,
    *,
    covers: str = "all",
    order: float | None = None,
) -> np.ndarray:
    """The lowest TPR allowed at this FPR (a test far below the diagonal, answered the other way
    round, is far above it).

    ``covers="all"``: 1 − ceiling(1 − FPR) = max(0, 1 − δ − e^ε·(1 − FPR), e^(−ε)·(FPR − δ)), the
    mirror of :func:`tpr_ceiling`. ``covers="events"``: max(0, e^(−ε)·(FPR − δ)), i.e.
    FPR ≤ e^ε·TPR + δ, the claim on the same event with the two inputs exchanged. With ``order``
    (a Rényi claim): 1 − ceiling(1 − FPR), the region being symmetric under (FPR, TPR) ↦
    (1 − FPR, 1 − TPR).
    """
    eps, d = _check_eps_delta(epsilon, delta)
    _check_covers(covers)
    o = _check_order(order, d, covers)
    a = np.clip(np.asarray(fpr, dtype=np.float64), 0.0, 1.0)
    if o is not None:
        return 1.0 - _renyi_ceiling(1.0 - a, eps, o)
    if math.isinf(eps):
        return np.zeros_like(a)
    out = np.maximum(0.0, math.exp(-eps) * (a - d))
    if covers == "all":
        out = np.maximum(out, 1.0 - d - _exp_times(1.0 - a, eps))
    return out


def claim_curve(
    epsilon: float, delta: float = 0.0, points: int = 201, *, covers: str = "all", order: float | None = None
) -> dict[str, Any]:
    """The claim's boundary sampled for a figure or a download: ``fpr``, ``tpr_ceiling`` and
    ``tpr_floor`` (``points`` values, denser near FPR = 0 where the curve bends), with ``covers``
    and ``tested`` (:data:`TESTED`: which constraints the curve is; :data:`RENYI_TESTED` for a
    Rényi claim, whose ``order`` is then given)."""
    u = np.linspace(0.0, 1.0, int(points))
    fpr = np.unique(np.concatenate([u**3, u]))
    out: dict[str, Any] = {
        "fpr": fpr.tolist(),
        "tpr_ceiling": tpr_ceiling(fpr, epsilon, delta, covers=covers, order=order).tolist(),
        "tpr_floor": tpr_floor(fpr, epsilon, delta, covers=covers, order=order).tolist(),
        "covers": covers,
        "tested": TESTED[covers] if order is None else RENYI_TESTED,
    }
    if order is not None:
        out["order"] = float(order)
    return out


def pair_epsilon(epsilon: float, distance: float = 1.0, epsilon0: float = 0.0) -> float:
    """The pure-DP parameter a metric claim gives one pair: ε·d(x, x′) + ε₀ (d = 1 for LDP)."""
    eps = float(epsilon) * float(distance) + float(epsilon0)
    if math.isnan(eps) or eps < 0.0:
        raise ValueError(f"the pair's ε must be ≥ 0, got {eps!r}")
    return eps


def roc_from_logpmfs(log_null: np.ndarray, log_alt: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The optimal (Neyman–Pearson) ROC between two exact distributions on the same outcomes.

    Outcomes are taken in order of decreasing likelihood ratio Pr[alt]/Pr[null]; the cumulative
    sums are the vertices (FPR, TPR) of the most powerful tests, from (0, 0) to (1, 1).
    Randomising between neighbouring vertices reaches every point of the segments between them.

    Parameters
    ----------
    log_null, log_alt
        ``ln Pr[outcome]`` under the null (x, D) and the alternative (x′, D′); ``-inf`` allowed.

    Returns
    -------
    (fpr, tpr)
        Vertices, both nondecreasing, concave as a curve.

    Examples
    --------
    >>> f, t = roc_from_logpmfs(np.log([0.75, 0.25]), np.log([0.25, 0.75]))
    >>> f.tolist(), t.tolist()
    ([0.0, 0.25, 1.0], [0.0, 0.75, 1.0])
    """
    a = np.asarray(log_null, dtype=np.float64).ravel()
    b = np.asarray(log_alt, dtype=np.float64).ravel()
    if a.shape != b.shape:
        raise ValueError("the two distributions must be over the same outcomes")
    keep = ~(np.isneginf(a) & np.isneginf(b))
    a, b = a[keep], b[keep]
    with np.errstate(invalid="ignore"):
        llr = np.where(np.isneginf(a), np.inf, b - a)
    order = np.argsort(-llr, kind="stable")
    pa, pb = np.exp(a[order]), np.exp(b[order])
    fpr = np.concatenate([[0.0], np.cumsum(pa)])
    tpr = np.concatenate([[0.0], np.cumsum(pb)])
    # Both totals are 1 up to rounding: close exactly at (1, 1). Ties in the ratio lie on one
    # segment; the hull keeps only its ends.
    fpr[-1] = tpr[-1] = 1.0
    return concave_hull(np.minimum(fpr, 1.0), np.minimum(tpr, 1.0))


def concave_hull(
    fpr: np.ndarray | Sequence[float], tpr: np.ndarray | Sequence[float], *, mirror: bool = True
) -> tuple[np.ndarray, np.ndarray]:
    """The upper concave hull of test points together with (0, 0) and (1, 1).

    Every point on it is reached by randomising between at most two of the tests, so it is the
    best TPR at each FPR that the family reaches. With ``mirror`` each test also counts answered
    the other way round, (1 − FPR, 1 − TPR), so a point far below the diagonal counts as its
    mirror image above it; pass ``mirror=False`` when the caller adds the mirrored points itself
    (for bounds, where the mirror of a pessimistic corner is another corner).
    """
    f = np.asarray(fpr, dtype=np.float64).ravel()
    t = np.asarray(tpr, dtype=np.float64).ravel()
    if f.shape != t.shape:
        raise ValueError("fpr and tpr must have the same length")
    ok = np.isfinite(f) & np.isfinite(t)
    f, t = np.clip(f[ok], 0.0, 1.0), np.clip(t[ok], 0.0, 1.0)
    if mirror:
        f, t = np.concatenate([f, 1.0 - f]), np.concatenate([t, 1.0 - t])
    f, t = np.concatenate([f, [0.0, 1.0]]), np.concatenate([t, [0.0, 1.0]])
    order = np.lexsort((-t, f))
    f, t = f[order], t[order]
    # Monotone chain (upper hull), a loop over the hull's vertices only after a sort; on Python
    # floats (the same IEEE double arithmetic as NumPy's float64 scalars, several times faster to
    # index one at a time)
    fl, tl = f.tolist(), t.tolist()
    hull: list[int] = []
    for i in range(len(fl)):
        if hull and fl[i] == fl[hull[-1]]:
            continue  # same FPR: the first (highest TPR) is kept
        while len(hull) >= 2:
            j, k = hull[-2], hull[-1]
            cross = (fl[k] - fl[j]) * (tl[i] - tl[j]) - (tl[k] - tl[j]) * (fl[i] - fl[j])
            if cross >= 0.0:
                hull.pop()
            else:
                break
        hull.append(i)
    return f[hull], t[hull]


def tpr_at(fpr: np.ndarray | Sequence[float], tpr: np.ndarray | Sequence[float], alpha: float) -> float:
    """The best TPR at FPR ≤ ``alpha`` that randomising between these tests reaches.

    Examples
    --------
    >>> round(tpr_at([0.1], [0.5], 0.05), 6)
    0.25
    """
    hf, ht = concave_hull(fpr, tpr)
    return float(np.interp(float(alpha), hf, ht))


@dataclass(frozen=True)
class Box:
    """One event's measured (FPR, TPR) with its confidence intervals.

    ``confidence`` is the probability that both intervals hold together (for the whole figure,
    see the caller's note on how the events share it).
    """

    fpr: float
    tpr: float
    fpr_low: float
    fpr_high: float
    tpr_low: float
    tpr_high: float
    confidence: float | None = None
    label: str = ""

    @classmethod
    def exact(cls, fpr: float, tpr: float, label: str = "") -> Box:
        """A point whose rates are exact (a box of no width)."""
        return cls(fpr, tpr, fpr, fpr, tpr, tpr, None, label)

    @classmethod
    def from_counts(
        cls, hits_null: int, n_null: int, hits_alt: int, n_alt: int, *, alpha: float, label: str = ""
    ) -> Box:
        """Clopper–Pearson intervals on both rates, each two-sided at α/2, so that the box holds
        with probability ≥ 1 − α (union bound)."""
        return cls.many_from_counts([hits_null], n_null, [hits_alt], n_alt, alpha=alpha, labels=[label])[0]

    @classmethod
    def many_from_counts(
        cls,
        hits_null: Sequence[int] | np.ndarray,
        n_null: int,
        hits_alt: Sequence[int] | np.ndarray,
        n_alt: int,
        *,
        alpha: float,
        labels: Sequence[str],
    ) -> list[Box]:
        """:meth:`from_counts` for many events at once (one vectorised Clopper–Pearson call per
        bound), each box at level ``alpha``."""
        from dpcore.stats import cp_lower, cp_upper

        a = float(alpha) / 4.0  # two rates, two sides each
        hn = np.atleast_1d(np.asarray(hits_null, dtype=np.float64))
        ha = np.atleast_1d(np.asarray(hits_alt, dtype=np.float64))
        fl, fh = np.atleast_1d(cp_lower(hn, n_null, a)), np.atleast_1d(cp_upper(hn, n_null, a))
        tl, th = np.atleast_1d(cp_lower(ha, n_alt, a)), np.atleast_1d(cp_upper(ha, n_alt, a))
        return [
            cls(
                fpr=float(hn[i] / n_null),
                tpr=float(ha[i] / n_alt),
                fpr_low=float(fl[i]),
                fpr_high=float(fh[i]),
                tpr_low=float(tl[i]),
                tpr_high=float(th[i]),
                confidence=1.0 - float(alpha),
                label=labels[i],
            )
            for i in range(hn.size)
        ]

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def box_violation(
    box: Box, epsilon: float, delta: float = 0.0, *, covers: str = "all", order: float | None = None
) -> tuple[str, str] | None:
    """Where the whole box lies outside the claim's region, and which branch of the curve it is
    beyond: ``(where, branch)`` or None.

    ``where`` is ``"above"`` (every point of the box has a TPR above the ceiling) or ``"below"``
    (below the floor). ``branch`` says which constraint of f_{ε,δ} (Kairouz, Oh & Viswanath 2015,
    Thm 2.1) the box certifies broken, at the box's confidence:

    ``"event"``
        The claim applied to the event S itself: TPR_low > e^ε·FPR_high + δ (above), or
        FPR_low > e^ε·TPR_high + δ (below). With δ = 0 this says the likelihood ratio of S
        exceeds e^ε, which is what a ratio test of S (the text audit's verdict) bounds.
    ``"complement"``
        Only the claim applied to the complement Ω∖S: 1 − FPR_high > e^ε·(1 − TPR_low) + δ
        (above, the shallow branch 1 − TPR ≥ e^(−ε)·(1 − δ − FPR)), or its mirror (below). Tested
        only with ``covers="all"``: a claim that covers some outputs says nothing of Ω∖S.

    ``"renyi"``
        With ``order`` (a Rényi claim): the worst corner's Bernoulli pair has a Rényi divergence
        above ε, which is the claim broken on S and Ω∖S at once (module docstring).

    Each test uses the box's worst corner for it, so the box is wholly outside exactly when that
    corner is. The event branch is reported first when both hold. Overflow-safe at any ε.
    """
    eps, d = _check_eps_delta(epsilon, delta)
    _check_covers(covers)
    o = _check_order(order, d, covers)
    if math.isinf(eps):
        return None
    fl, fh = float(box.fpr_low), float(box.fpr_high)
    tl, th = float(box.tpr_low), float(box.tpr_high)
    if o is not None:
        if tl > float(tpr_ceiling(fh, eps, order=o)) + _TOL:
            return "above", "renyi"
        if th < float(tpr_floor(fl, eps, order=o)) - _TOL:
            return "below", "renyi"
        return None
    # P > min(1, δ + e^ε·Q) for the four (P, Q): the claim Pr[M(·) ∈ E] ≤ e^ε·Pr[M(·′) ∈ E] + δ
    # on E = S or Ω∖S, in either order of the inputs.
    p = np.array([tl, fl, 1.0 - fh, 1.0 - th])
    q = np.array([fh, th, 1.0 - tl, 1.0 - fl])
    broken = p > np.minimum(1.0, d + _exp_times(q, eps)) + _TOL
    if broken[0]:
        return "above", "event"
    if broken[1]:
        return "below", "event"
    if covers == "all" and broken[2]:
        return "above", "complement"
    if covers == "all" and broken[3]:
        return "below", "complement"
    return None


def box_outside(
    box: Box, epsilon: float, delta: float = 0.0, *, covers: str = "all", order: float | None = None
) -> str | None:
    """Where the whole box lies outside the claim's region: ``"above"`` (every point of it has a
    TPR above the ceiling), ``"below"`` (below the floor) or None (:func:`box_violation`, which
    also says which branch).

    The ceiling rises with FPR, so the box is wholly above it exactly when its corner
    (largest FPR, smallest TPR) is; the floor's test is the mirror image. With
    ``covers="events"`` only the event branch is tested (:data:`TESTED`).
    """
    hit = box_violation(box, epsilon, delta, covers=covers, order=order)
    return None if hit is None else hit[0]


def tpr_at_fpr_entry(
    boxes: Sequence[Box],
    *,
    epsilon: float,
    delta: float = 0.0,
    alpha: float,
    exact_curve: tuple[np.ndarray, np.ndarray] | None = None,
    null: str = "x",
    alt: str = "x′",
    unit: str = "one release",
    covers: str = "all",
    order: float | None = None,
) -> dict[str, Any]:
    """The best TPR at FPR ≤ ``alpha`` of the audited tests, its bounds, the claim's ceiling and
    what it means in one sentence.

    With ``exact_curve`` (the optimal ROC from exact distributions) the value is exact and the
    bounds equal it. Otherwise ``tpr`` is the hull of the point estimates and ``lower``/``upper``
    the hulls of the boxes' pessimistic/optimistic corners, holding together with the boxes. The
    point estimate is the best of many measured tests, so it is biased upward by that choice; the
    sentence states the bound first and names the estimate as one.

    With ``covers="events"`` the tests are not answered the other way round (that test uses the
    complement of the event, which the claim does not cover) and the ceiling is the event branch
    min(1, e^ε·α + δ) (:data:`TESTED`); mixtures of tests that each respect it respect it too.
    """
    _check_covers(covers)
    ceiling = float(tpr_ceiling(alpha, epsilon, delta, covers=covers, order=order))
    mirror = covers == "all"
    if exact_curve is not None:
        value = float(np.interp(alpha, exact_curve[0], exact_curve[1]))
        lower = upper = value
        how = "exact"
    else:
        if not boxes:
            raise ValueError("no events to read a TPR from")
        hf, ht = concave_hull([b.fpr for b in boxes], [b.tpr for b in boxes], mirror=mirror)
        value = float(np.interp(float(alpha), hf, ht))
        # The worst corner of a box answered the other way round is (1 − fpr_low, 1 − tpr_high).
        wf, wt = [b.fpr_high for b in boxes], [b.tpr_low for b in boxes]
        bf, bt = [b.fpr_low for b in boxes], [b.tpr_high for b in boxes]
        if mirror:
            wf, wt = wf + [1.0 - b.fpr_low for b in boxes], wt + [1.0 - b.tpr_high for b in boxes]
            bf, bt = bf + [1.0 - b.fpr_high for b in boxes], bt + [1.0 - b.tpr_low for b in boxes]
        lower = float(np.interp(alpha, *concave_hull(wf, wt, mirror=False)))
        upper = float(np.interp(alpha, *concave_hull(bf, bt, mirror=False)))
        how = "estimated"
    over = lower > ceiling + _TOL
    one_in = round(1.0 / alpha)
    if how == "exact":
        rate = f"{percent(value)} of the time"
    else:
        n = len(boxes)
        best = f"the best of the {n:,} measured tests" if n > 1 else "the one measured test"
        rate = (
            f"at least {percent(lower)} of the time (stated confidence; {best} reached {percent(value)}, "
            + ("a point estimate biased upward by the choice)" if n > 1 else "a point estimate)")
        )
    scope = ", using only outputs the claim covers," if covers == "events" else ""
    meaning = (
        f"An observer who must tell from {unit} whether it came from {null} or from {alt}{scope} can "
        f"name {alt} correctly {rate} while wrongly naming it for 1 in {one_in} inputs that were {null}"
        + (
            f"; the claimed {'Rényi ' if order is not None else ''}ε allows at most {percent(ceiling)}."
            if math.isfinite(float(epsilon))
            else "; no ε is claimed, so nothing limits it."
        )
    )
    if over:
        meaning += " That is more than the claim allows."
    return {
        "fpr": float(alpha),
        "tpr": value,
        "lower": lower,
        "upper": upper,
        "how": how,
        "claim_ceiling": ceiling,
        "exceeds_claim": bool(over),
        "meaning": meaning,
    }


@dataclass(frozen=True)
class TradeoffPair:
    """Everything measured between one pair of inputs, against what the claim allows for it.

    Attributes
    ----------
    null, alt
        The two inputs (x and x′, or "0ⁿ" and "1ⁿ"); a test names ``alt``.
    epsilon, delta
        The claim for this pair (for a metric claim, ε·d(x, x′) + ε₀: :func:`pair_epsilon`).
    boxes
        The audited events, each a :class:`Box`.
    exact_fpr, exact_tpr
        The optimal ROC from exact distributions (:func:`roc_from_logpmfs`), when dpcore has them.
    unit
        What the observer sees, for the sentence ("one sanitized word").
    note
        How the boxes share their confidence, or what the exact curve describes.
    covers
        ``"all"`` (default): the claim covers every output, so each box is tested against the
        whole curve; ``"events"``: it covers only some outputs (and every event is made of covered
        ones), so each box is tested against the event branch only (:data:`TESTED`).
    order
        None for an (ε, δ) claim; the Rényi order α for a Rényi-DP claim D_α ≤ ε (module
        docstring; then δ = 0 and ``covers="all"``).
    """

    null: str
    alt: str
    epsilon: float
    delta: float = 0.0
    boxes: tuple[Box, ...] = ()
    exact_fpr: tuple[float, ...] | None = None
    exact_tpr: tuple[float, ...] | None = None
    unit: str = "one release"
    note: str = ""
    covers: str = "all"
    order: float | None = None

    def __post_init__(self) -> None:
        _check_covers(self.covers)
        _check_order(self.order, float(self.delta), self.covers)

    @property
    def label(self) -> str:
        return f"{self.null} vs {self.alt}"

    @property
    def exact_curve(self) -> tuple[np.ndarray, np.ndarray] | None:
        if self.exact_fpr is None or self.exact_tpr is None:
            return None
        return np.asarray(self.exact_fpr), np.asarray(self.exact_tpr)

    def outside(self) -> list[dict[str, Any]]:
        """The boxes lying wholly outside the tested part of the claim's region
        (:func:`box_violation`): label, ``where`` ("above"/"below"), ``branch`` ("event": the
        claim on the event S itself; "complement": only the claim on Ω∖S) and the box's corners."""
        out = []
        for b in self.boxes:
            hit = box_violation(b, self.epsilon, self.delta, covers=self.covers, order=self.order)
            if hit is not None:
                out.append(
                    {
                        "label": b.label,
                        "where": hit[0],
                        "branch": hit[1],
                        "fpr_low": b.fpr_low,
                        "fpr_high": b.fpr_high,
                        "tpr_low": b.tpr_low,
                        "tpr_high": b.tpr_high,
                    }
                )
        return out

    def exact_outside(self) -> bool:
        """True when the exact curve passes above the claim's ceiling anywhere (None-safe)."""
        curve = self.exact_curve
        if curve is None:
            return False
        ceiling = tpr_ceiling(curve[0], self.epsilon, self.delta, covers=self.covers, order=self.order)
        return bool(np.any(curve[1] > ceiling + 1e-9))

    def tpr_at_fpr(self, levels: Sequence[float] = FPR_LEVELS, *, exact: bool = True) -> list[dict[str, Any]]:
        """:func:`tpr_at_fpr_entry` at each FPR level: from the exact curve where the pair has one
        (and ``exact``), else from its boxes."""
        return [
            tpr_at_fpr_entry(
                self.boxes,
                epsilon=self.epsilon,
                delta=self.delta,
                alpha=a,
                exact_curve=self.exact_curve if exact else None,
                null=self.null,
                alt=self.alt,
                unit=self.unit,
                covers=self.covers,
                order=self.order,
            )
            for a in levels
        ]

    def to_dict(
        self, *, levels: Sequence[float] = FPR_LEVELS, curve_points: int = 101, exact: bool = True
    ) -> dict[str, Any]:
        """JSON-ready: the claim's curve, the events' boxes, the exact curve, violations, and the
        TPRs at ``levels`` (from the exact curve where there is one and ``exact``, else from the
        boxes: :meth:`tpr_at_fpr`)."""
        curve = self.exact_curve
        return {
            "null": self.null,
            "alt": self.alt,
            "epsilon": self.epsilon,
            "delta": self.delta,
            "unit": self.unit,
            "note": self.note,
            "covers": self.covers,
            "order": self.order,
            "tested": TESTED[self.covers] if self.order is None else RENYI_TESTED,
            "claim_curve": claim_curve(
                self.epsilon, self.delta, curve_points, covers=self.covers, order=self.order
            ),
            "boxes": [b.to_dict() for b in self.boxes],
            "exact_curve": None if curve is None else {"fpr": curve[0].tolist(), "tpr": curve[1].tolist()},
            "outside": self.outside(),
            "exact_outside": self.exact_outside(),
            "tpr_at_fpr": self.tpr_at_fpr(levels, exact=exact),
            "definitions": DEFINITIONS,
        }


#: One line per symbol, for downloads and "How to read this".
DEFINITIONS: dict[str, str] = {
    "fpr": "false positive rate α: how often the test names the second input when the first was used",
    "tpr": "true positive rate 1 − β: how often the test names the second input when it was used",
    "claim_curve": (
        "the highest TPR any test can reach at each FPR while the claim holds, "
        "1 − f_ε,δ(α) with f_ε,δ(α) = max(0, 1 − δ − e^ε·α, e^(−ε)·(1 − δ − α)) "
        "(Kairouz, Oh & Viswanath 2015, Thm 2.1; Dong, Roth & Su 2022, §2); tpr_floor is its mirror. "
        "The term 1 − δ − e^ε·α is the event branch (the claim on the event S), e^(−ε)·(1 − δ − α) the "
        "complement branch (the claim on the outputs outside S); when covers is 'events' the curve "
        "is the event branch only, min(1, e^ε·α + δ), with floor max(0, e^(−ε)·(α − δ))"
    ),
    "covers": (
        "'all': the claim covers every output, so each box is tested against the whole curve; "
        "'events': it covers only some outputs (every audited event is made of covered ones), so "
        "only the event branch is tested"
    ),
    "tested": "the constraints each box was tested against, in words",
    "order": (
        "null for an (ε, δ) claim; for a Rényi-DP claim of order α, α: the curve is then the edge of "
        "the region D_α(Bern(TPR) ‖ Bern(FPR)) ≤ ε and D_α(Bern(FPR) ‖ Bern(TPR)) ≤ ε"
    ),
    "boxes": "each audited event's measured (FPR, TPR) with Clopper–Pearson intervals on both rates",
    "exact_curve": "the optimal (Neyman–Pearson) ROC from the exact output distributions",
    "outside": (
        "events whose whole box lies above the tested ceiling (or below the floor), a violation at "
        "the box's confidence; branch 'event': beyond TPR ≤ e^ε·FPR + δ or its mirror (the claim on "
        "S itself), 'complement': beyond only the complement branch (the claim on the outputs "
        "outside S, tested only when covers is 'all')"
    ),
    "tpr_at_fpr": (
        "the best TPR at FPR ≤ α that randomising between the audited tests reaches (and, when "
        "covers is 'all', the same tests answered the other way round)"
    ),
}
