"""Issue 39 (vector audit): trade-off curves and TPR at 1%/5% FPR for ``dpcore audit``.

The exact curve is checked against the closed form of the Laplace mechanism (binomial survival
functions from scipy); the Monte-Carlo boxes are checked for coverage of the exact rates of their
events, over many seeds, at the stated confidence.
"""

from __future__ import annotations

import math
import pickle
import re

import numpy as np
import pytest
from scipy import stats

from dpcore.audit import audit, audit_grid
from dpcore.mechanisms import VECTOR_MECHANISMS
from dpcore.tradeoff import FPR_LEVELS, concave_hull, tpr_ceiling
from tests.conftest import Cli


def _laplace_p(dim: int, eps: float) -> tuple[float, float]:
    """P(b + Lap(0, Δ₁/ε) ≥ ½) for b = 0, 1 in closed form (Δ₁ = dim on [0, 1]^dim)."""
    scale = dim / eps
    tail = 0.5 * math.exp(-0.5 / scale)  # P(Lap ≥ ½) = P(Lap ≤ −½)
    return tail, 1.0 - tail


def _laplace_roc(dim: int, eps: float) -> tuple[np.ndarray, np.ndarray]:
    """The ROC of the cuts {K ≥ k}, k = n+1..0, K ~ Bin(n, p_b): the likelihood ratio of two
    binomials with p_1 > p_0 increases with K, so these cuts are the Neyman–Pearson tests."""
    p0, p1 = _laplace_p(dim, eps)
    k = np.arange(dim + 1, -1, -1)
    return stats.binom.sf(k - 1, dim, p0), stats.binom.sf(k - 1, dim, p1)


@pytest.mark.parametrize("dim", [1, 2, 5, 8, 16])
@pytest.mark.parametrize("eps", [0.5, 1.0, 3.0])
def test_exact_laplace_curve_is_the_closed_form(dim: int, eps: float) -> None:
    mech = VECTOR_MECHANISMS.create("laplace", epsilon=eps, dim=dim)
    assert mech.scale == pytest.approx(dim / eps)  # the scale the closed form assumes
    r = audit("laplace", dim=dim, epsilon=eps, method="exact")
    d = r.to_dict()["tradeoff"]
    want_f, want_t = _laplace_roc(dim, eps)
    got_f, got_t = np.array(d["exact_curve"]["fpr"]), np.array(d["exact_curve"]["tpr"])
    assert got_f.shape == want_f.shape
    np.testing.assert_allclose(got_f, want_f, rtol=1e-9, atol=1e-15)
    np.testing.assert_allclose(got_t, want_t, rtol=1e-9, atol=1e-15)
    # The TPR at 1% and 5% FPR is the closed-form curve there.
    for entry, a in zip(r.to_dict()["tpr_at_fpr"], FPR_LEVELS, strict=True):
        assert entry["fpr"] == a and entry["how"] == "exact"
        assert entry["tpr"] == pytest.approx(float(np.interp(a, want_f, want_t)), rel=1e-9)
        ceiling = min(1.0, math.exp(eps) * a, 1.0 - math.exp(-eps) * (1.0 - a))
        assert entry["claim_ceiling"] == pytest.approx(ceiling, rel=1e-12)


@pytest.mark.parametrize("eps", [0.1, 1.0, 5.0])
@pytest.mark.parametrize("dim", [1, 8, 128, 4096])
def test_exact_laplace_curve_never_rises_above_the_claims_ceiling(dim: int, eps: float) -> None:
    pair = audit("laplace", dim=dim, epsilon=eps).tradeoff_pair
    f, t = pair.exact_curve
    assert not pair.exact_outside()
    # The ceiling is concave and the curve straight between vertices: checking dense points too.
    dense = np.linspace(0.0, 1.0, 20_001)
    assert np.all(t <= tpr_ceiling(f, eps) + 1e-12)
    assert np.all(np.interp(dense, f, t) <= tpr_ceiling(dense, eps) + 1e-12)
    assert not any(e["exceeds_claim"] for e in audit("laplace", dim=dim, epsilon=eps).to_dict()["tpr_at_fpr"])


def test_exact_adept_curve_rises_above_the_ceiling_and_its_tpr_exceeds_it() -> None:
    r = audit("adept", dim=128, epsilon=1.0)
    pair = r.tradeoff_pair
    f, t = pair.exact_curve
    assert pair.exact_outside() and np.any(t > tpr_ceiling(f, 1.0) + 1e-6)
    entries = r.to_dict()["tpr_at_fpr"]
    assert [e["fpr"] for e in entries] == list(FPR_LEVELS)
    for e in entries:
        assert e["tpr"] > e["claim_ceiling"] and e["exceeds_claim"]
        assert e["claim_ceiling"] == pytest.approx(math.e * e["fpr"])
        assert "more than the claim allows" in e["meaning"]
    # The majority vote, an exact point, lies in the forbidden region (Habernal's 13.74).
    assert any(o["label"].startswith("majority vote") for o in pair.outside())


@pytest.mark.parametrize("name", ["laplace", "gaussian", "adept", "dptext", "copy", "random", "dpnr"])
def test_exact_events_lie_on_or_under_the_optimal_curve(name: str) -> None:
    pair = audit(name, dim=32, epsilon=1.0).tradeoff_pair
    f, t = pair.exact_curve
    assert f[0] == 0.0 and f[-1] == t[-1] == 1.0 and np.all(np.diff(f) >= 0) and np.all(np.diff(t) >= 0)
    for b in pair.boxes:
        assert b.fpr == b.fpr_low == b.fpr_high and b.confidence is None
        assert b.tpr <= float(np.interp(b.fpr, f, t)) + 1e-12


def test_gaussian_uses_the_eps_delta_curve() -> None:
    r = audit("gaussian", dim=64, epsilon=1.0, options={"delta": 1e-3})
    d = r.to_dict()
    assert d["tradeoff"]["delta"] == 1e-3
    e1 = d["tpr_at_fpr"][0]
    assert e1["claim_ceiling"] == pytest.approx(math.e * 0.01 + 1e-3)
    f, t = r.tradeoff_pair.exact_curve
    assert np.all(t <= tpr_ceiling(f, 1.0, 1e-3) + 1e-12)


def _exact_rates(label: str, dim: int, p0: float, p1: float) -> tuple[float, float]:
    """The exact (FPR, TPR) of the event named by a box's label ("… K ≥ k …")."""
    k = int(re.search(r"K ≥ (\d+)", label).group(1))
    return float(stats.binom.sf(k - 1, dim, p0)), float(stats.binom.sf(k - 1, dim, p1))


def _family_best(boxes, rates, alpha: float) -> float:
    """The best TPR at FPR α of the boxes' events, from their exact rates."""
    hf, ht = concave_hull([r[0] for r in rates], [r[1] for r in rates])
    return float(np.interp(alpha, hf, ht))


def test_monte_carlo_boxes_cover_the_exact_rates_at_the_stated_confidence() -> None:
    """400 independent Laplace audits (real sampler, seeds 0..399) at confidence 0.8: all boxes of
    a run must hold together with probability ≥ 0.8, so the runs in which some box misses its
    event's exact rates are at most Binomial(400, 0.2); the test fails when their number is above
    that distribution's 99.9% quantile (a one-sided test of coverage ≥ 0.8 at level 0.001). Where
    the boxes hold, the TPR bounds must bracket the family's exact best TPR (a deterministic
    consequence)."""
    dim, eps, trials, conf, runs = 8, 1.0, 2_000, 0.8, 400
    p0, p1 = _laplace_p(dim, eps)
    failures = 0
    for seed in range(runs):
        r = audit(
            "laplace", dim=dim, epsilon=eps, method="mc", trials=trials, seed=seed, confidence=conf, workers=1
        )
        boxes = r.tradeoff_pair.boxes
        assert len(boxes) >= 3  # majority vote, the LR cut and the empirical cuts
        rates = [_exact_rates(b.label, dim, p0, p1) for b in boxes]
        held = all(
            b.fpr_low - 1e-12 <= f <= b.fpr_high + 1e-12 and b.tpr_low - 1e-12 <= t <= b.tpr_high + 1e-12
            for b, (f, t) in zip(boxes, rates, strict=True)
        )
        failures += not held
        if held:
            for e in r.to_dict()["tpr_at_fpr"]:
                best = _family_best(boxes, rates, e["fpr"])
                assert e["lower"] - 1e-12 <= best <= e["upper"] + 1e-12
                assert e["lower"] <= e["exact_tpr"] + 1e-12  # the family is never above the optimum
    assert failures <= stats.binom.ppf(0.999, runs, 1.0 - conf), failures


def test_monte_carlo_fixed_seed_boxes_contain_the_exact_curves_rates_and_adept_exceeds() -> None:
    r = audit("laplace", dim=16, epsilon=1.0, method="mc", trials=100_000, seed=0, workers=1)
    p0, p1 = _laplace_p(16, 1.0)
    d = r.to_dict()
    assert d["tradeoff"]["exact_curve"] is not None  # laplace declares i.i.d. coordinates
    for b in d["tradeoff"]["boxes"]:
        f, t = _exact_rates(b["label"], 16, p0, p1)
        assert b["fpr_low"] <= f <= b["fpr_high"] and b["tpr_low"] <= t <= b["tpr_high"], b["label"]
    for e in d["tpr_at_fpr"]:
        assert e["how"] == "estimated" and e["lower"] <= e["tpr"] <= e["upper"]
        assert e["lower"] <= e["exact_tpr"] and not e["exceeds_claim"]
    assert "0.95" in d["tradeoff"]["note"] and "union bound" in d["tradeoff"]["note"]

    a = audit("adept", dim=128, epsilon=1.0, method="mc", trials=10_000, seed=0, workers=1).to_dict()
    assert all(e["exceeds_claim"] and e["lower"] > e["claim_ceiling"] for e in a["tpr_at_fpr"])
    assert any(o["label"].startswith("majority vote") for o in a["tradeoff"]["outside"])


def test_result_equality_rows_and_pickling_are_unchanged() -> None:
    a = audit("laplace", dim=8, epsilon=1.0)
    b = audit("laplace", dim=8, epsilon=1.0)
    assert a.tradeoff_pair is not None
    assert "tradeoff_pair" not in a.to_row() and "tpr_at_fpr" not in a.to_row()
    assert pickle.loads(pickle.dumps(a)).to_dict()["tpr_at_fpr"] == a.to_dict()["tpr_at_fpr"]
    from dataclasses import replace

    assert replace(a, elapsed_s=0.0) == replace(b, elapsed_s=0.0)


def test_grid_cells_each_carry_their_tradeoff() -> None:
    for r in audit_grid(["laplace", "gaussian"], dims=[1, 4], epsilons=[1.0]):
        d = r.to_dict()
        assert len(d["tpr_at_fpr"]) == 2 and d["tradeoff"]["tpr_at_fpr"] == d["tpr_at_fpr"]
        assert d["tradeoff"]["delta"] == r.delta


def test_cli_json_has_tpr_at_fpr_and_tradeoff_in_every_cell(cli: Cli) -> None:
    d = cli("audit", "--mechanism", "adept", "--dim", "128", "--epsilon", "1", "--json").json()
    for e in d["tpr_at_fpr"]:
        assert set(e) >= {"fpr", "tpr", "lower", "upper", "claim_ceiling", "meaning", "exact_tpr"}
        assert e["tpr"] > e["claim_ceiling"]
    t = d["tradeoff"]
    assert set(t) >= {"claim_curve", "boxes", "exact_curve", "outside", "exact_outside", "definitions"}
    assert t["exact_outside"] is True
    argv = ["audit", "--mechanism", "laplace", "--dims", "1,8", "--epsilon", "1", "--method", "mc"]
    rows = cli(*argv, "--trials", "1000", "--seed", "0", "--json").json()
    assert [len(r["tpr_at_fpr"]) for r in rows] == [2, 2]
    assert all(r["tradeoff"]["boxes"] for r in rows)


def test_cli_text_prints_one_observer_line_per_cell(cli: Cli) -> None:
    out = cli("audit", "--mechanism", "adept", "--dims", "1,128", "--epsilon", "1").ok()
    lines = [ln.strip() for ln in out.splitlines() if ln.strip().startswith("observer")]
    assert len(lines) == 2
    assert lines[1] == (
        "observer at 1% false positives: names 1ⁿ correctly 100% of the time "
        "(the claim allows at most 2.7%; exceeded)"
    )
    assert "exceeded" not in lines[0]
    argv = ["audit", "--mechanism", "laplace", "--dim", "8", "--epsilon", "1", "--method", "mc"]
    out = cli(*argv, "--trials", "10000", "--seed", "0").ok()
    (line,) = [ln for ln in out.splitlines() if "observer" in ln]
    assert "with confidence 0.95" in line and "exceeded" not in line
