"""The claim's trade-off curve, optimal ROCs, boxes and TPR at a fixed FPR (dpcore.tradeoff)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from dpcore.tradeoff import (
    Box,
    TradeoffPair,
    box_outside,
    claim_curve,
    claim_tradeoff,
    concave_hull,
    roc_from_logpmfs,
    tpr_at,
    tpr_at_fpr_entry,
    tpr_ceiling,
    tpr_floor,
)
from dpcore.viz.tradeoff_figure import tradeoff_figure


def _rr(eps: float, k: int) -> tuple[np.ndarray, np.ndarray]:
    """k-ary randomized response's rows for x = 0 and x′ = 1 (log space)."""
    keep = math.exp(eps) / (math.exp(eps) + k - 1)
    other = (1 - keep) / (k - 1)
    p0 = np.full(k, other)
    p1 = np.full(k, other)
    p0[0] = keep
    p1[1] = keep
    return np.log(p0), np.log(p1)


@pytest.mark.parametrize(("eps", "delta"), [(0.5, 0.0), (1.0, 0.0), (2.0, 1e-3), (0.1, 0.05)])
def test_claim_tradeoff_is_the_kairouz_region(eps: float, delta: float) -> None:
    """β ≥ f(α) exactly when both of Kairouz et al.'s inequalities hold (and β ≥ 0)."""
    rng = np.random.default_rng(0)
    a, b = rng.random(20_000), rng.random(20_000)
    inside = (a + math.exp(eps) * b >= 1 - delta) & (math.exp(eps) * a + b >= 1 - delta)
    f = claim_tradeoff(a, eps, delta)
    margin = np.abs(b - f) > 1e-12
    assert np.array_equal((b >= f)[margin], inside[margin])
    assert np.allclose(tpr_ceiling(a, eps, delta), 1 - f)
    # symmetric: the floor is the mirror of the ceiling, and lies under the diagonal
    assert np.allclose(tpr_floor(a, eps, delta), 1 - tpr_ceiling(1 - a, eps, delta))
    assert np.all(tpr_floor(a, eps, delta) <= a + 1e-12) and np.all(tpr_ceiling(a, eps, delta) >= a - 1e-12)


def test_no_claim_allows_every_test_and_zero_allows_none() -> None:
    a = np.linspace(0, 1, 11)
    assert np.all(tpr_ceiling(a, math.inf) == 1.0)
    assert np.allclose(tpr_ceiling(a, 0.0), a)
    curve = claim_curve(1.0, points=11)
    assert curve["fpr"][0] == 0.0 and curve["fpr"][-1] == 1.0
    with pytest.raises(ValueError):
        claim_tradeoff(0.1, -1.0)
    with pytest.raises(ValueError):
        claim_tradeoff(0.1, 1.0, delta=1.5)


@pytest.mark.parametrize("eps", [0.3, 1.0, 3.0])
def test_randomized_response_touches_the_ceiling_and_never_crosses_it(eps: float) -> None:
    """Binary RR is the tight ε-DP mechanism: its one non-trivial vertex lies on the ceiling."""
    f, t = roc_from_logpmfs(*_rr(eps, 2))
    assert f.tolist()[0] == 0.0 and f[-1] == 1.0 and t[-1] == 1.0
    q = 1 / (1 + math.exp(eps))
    assert np.allclose(f, [0.0, q, 1.0]) and np.allclose(t, [0.0, 1 - q, 1.0])
    assert np.allclose(t, tpr_ceiling(f, eps))
    # k-ary RR at ε: under the ceiling everywhere, at 3ε: above it
    f, t = roc_from_logpmfs(*_rr(eps, 50))
    assert np.all(t <= tpr_ceiling(f, eps) + 1e-12)
    f, t = roc_from_logpmfs(*_rr(3 * eps, 50))
    assert np.any(t > tpr_ceiling(f, eps) + 1e-6)


def test_optimal_roc_is_the_hull_of_every_deterministic_test() -> None:
    """Neyman–Pearson: the ROC from sorting by likelihood ratio is the concave hull of the
    (FPR, TPR) of all 2⁶ subsets of outcomes."""
    rng = np.random.default_rng(1)
    for _ in range(5):
        p0, p1 = rng.dirichlet(np.ones(6)), rng.dirichlet(np.ones(6))
        p0[2] = 0.0  # an outcome impossible under the null
        p0 /= p0.sum()
        with np.errstate(divide="ignore"):
            f, t = roc_from_logpmfs(np.log(p0), np.log(p1))
        pts = [
            (p0[list(s)].sum(), p1[list(s)].sum())
            for r in range(7)
            for s in itertools.combinations(range(6), r)
        ]
        hf, ht = concave_hull([p[0] for p in pts], [p[1] for p in pts])
        for a in np.linspace(0, 1, 41):
            assert math.isclose(float(np.interp(a, f, t)), float(np.interp(a, hf, ht)), abs_tol=1e-12)


def test_tpr_at_randomises_between_tests_and_mirrors_tests_below_the_diagonal() -> None:
    assert tpr_at([0.1], [0.5], 0.05) == pytest.approx(0.25)
    assert tpr_at([0.1], [0.5], 0.55) == pytest.approx(0.75)
    # a test far below the diagonal, answered the other way round, is far above it
    assert tpr_at([0.9], [0.1], 0.1) == pytest.approx(0.9)
    assert tpr_at([0.9], [0.1], 0.1) == tpr_at([0.1], [0.9], 0.1)


def test_boxes_cover_the_true_rates_at_their_confidence() -> None:
    """Coverage of Box.from_counts by simulation: 4,000 boxes at confidence 0.9 around known
    rates, both intervals holding together in at least 90% (minus 3 standard errors)."""
    rng = np.random.default_rng(2)
    n, reps, p_f, p_t = 500, 4_000, 0.03, 0.4
    a = rng.binomial(n, p_f, reps)
    b = rng.binomial(n, p_t, reps)
    hit = 0
    for i in range(reps):
        box = Box.from_counts(int(a[i]), n, int(b[i]), n, alpha=0.1)
        hit += box.fpr_low <= p_f <= box.fpr_high and box.tpr_low <= p_t <= box.tpr_high
    assert hit / reps >= 0.9 - 3 * math.sqrt(0.9 * 0.1 / reps)


def test_a_box_is_outside_only_when_its_worst_corner_is() -> None:
    inside = Box(0.01, 0.03, 0.005, 0.02, 0.02, 0.04)
    assert box_outside(inside, 1.0) is None  # the point is above e·0.01 but its box is not
    above = Box(0.001, 0.05, 0.0005, 0.002, 0.04, 0.06)
    assert box_outside(above, 1.0) == "above"
    below = Box(0.95, 0.05, 0.93, 0.97, 0.03, 0.07)
    assert box_outside(below, 1.0) == "below"
    assert box_outside(above, math.inf) is None


def test_k_rr_overclaimed_is_caught_and_honest_k_rr_is_not() -> None:
    """Simulated events "output = x′" of k-RR at 3ε against a claim of ε are outside, box
    included; at ε they are outside in no more than the boxes' α of 200 repetitions."""
    rng = np.random.default_rng(3)
    k, eps, n = 200, 1.0, 50_000

    def box(true_eps: float) -> Box:
        keep = math.exp(true_eps) / (math.exp(true_eps) + k - 1)
        other = (1 - keep) / (k - 1)
        return Box.from_counts(int(rng.binomial(n, other)), n, int(rng.binomial(n, keep)), n, alpha=0.05)

    assert box_outside(box(3 * eps), eps) == "above"
    outside = sum(box_outside(box(eps), eps) is not None for _ in range(200))
    assert outside <= 10


def test_tpr_at_fpr_bounds_hold_and_say_what_they_mean() -> None:
    """The bounds from boxes bracket the family's true best TPR at 1% FPR in ≥ 95% of
    simulated audits; the exact entry is exact; the sentence names both words."""
    rng = np.random.default_rng(4)
    p_f = np.array([0.002, 0.01, 0.03])
    p_t = np.array([0.02, 0.05, 0.12])
    truth = tpr_at(p_f, p_t, 0.01)
    n, reps, ok = 20_000, 400, 0
    for _ in range(reps):
        a, b = rng.binomial(n, p_f), rng.binomial(n, p_t)
        boxes = [Box.from_counts(int(a[i]), n, int(b[i]), n, alpha=0.05 / 3) for i in range(3)]
        e = tpr_at_fpr_entry(boxes, epsilon=1.0, alpha=0.01, null="hiv", alt="flu")
        ok += e["lower"] <= truth <= e["upper"]
    assert ok / reps >= 0.95 - 3 * math.sqrt(0.05 * 0.95 / reps)
    f, t = roc_from_logpmfs(*_rr(1.0, 2))
    e = tpr_at_fpr_entry([], epsilon=1.0, alpha=0.05, exact_curve=(f, t), null="hiv", alt="flu")
    assert e["how"] == "exact" and e["lower"] == e["tpr"] == e["upper"]
    assert e["tpr"] == pytest.approx(0.05 * (1 - 1 / (1 + math.e)) / (1 / (1 + math.e)))
    assert "hiv" in e["meaning"] and "flu" in e["meaning"] and "1 in 20" in e["meaning"]
    assert not e["exceeds_claim"]
    with pytest.raises(ValueError):
        tpr_at_fpr_entry([], epsilon=1.0, alpha=0.05)


def test_pair_record_and_figure_show_the_violation() -> None:
    bad = Box.from_counts(50, 100_000, 995, 100_000, alpha=0.05, label="output = flu")
    fine = Box.from_counts(300, 1_000, 400, 1_000, alpha=0.05, label="output in S")
    f, t = roc_from_logpmfs(*_rr(1.0, 2))
    pair = TradeoffPair("hiv", "flu", 1.0, boxes=(bad, fine), exact_fpr=tuple(f), exact_tpr=tuple(t))
    d = pair.to_dict()
    assert [o["label"] for o in d["outside"]] == ["output = flu"]
    assert not d["exact_outside"] and len(d["tpr_at_fpr"]) == 2 and "fpr" in d["definitions"]
    fig = tradeoff_figure([pair])
    names = [tr.name or "" for tr in fig.data]
    assert any("violation" in n for n in names) and any("measured events" in n for n in names)
    assert any("exact optimal" in n for n in names) and any("claim's ceiling" in n for n in names)
    assert fig.layout.xaxis.type == "log"
    honest = TradeoffPair("hiv", "flu", 1.0, boxes=(fine,))
    assert not any("violation" in (tr.name or "") for tr in tradeoff_figure([honest], log_axes=False).data)
