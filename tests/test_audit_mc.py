"""Monte-Carlo audit: agreement with exact values, bounds, verdicts, counting, reproducibility."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

import dpcore.audit.montecarlo as mc
from dpcore.audit import audit, audit_grid
from dpcore.mechanisms import VECTOR_MECHANISMS, create_mechanism
from dpcore.stats import cp_lower, cp_upper
from dpcore.validation import DPCoreError

ALL = VECTOR_MECHANISMS.names()
CORRECT = [n for n in ALL if not VECTOR_MECHANISMS.get(n).flawed and n != "copy"]
FLAWED = [n for n in ALL if VECTOR_MECHANISMS.get(n).flawed]


def _inside(exact: float, lo: float, hi: float) -> bool:
    if math.isinf(exact):
        return math.isinf(hi)
    return lo - 1e-12 <= exact <= hi + 1e-12


@pytest.mark.parametrize("name", ALL)
@pytest.mark.parametrize(("dim", "eps"), [(1, 0.5), (4, 2.0), (16, 1.0)])
def test_exact_inside_blackbox_mc_interval(name: str, dim: int, eps: float) -> None:
    """Full-vector sampling (independent of the i.i.d. declaration) brackets the exact value."""
    ex = audit(name, dim=dim, epsilon=eps, method="exact")
    r = audit(
        name,
        dim=dim,
        epsilon=eps,
        method="mc",
        trials=100_000,
        seed=17,
        confidence=0.999,
        blackbox=True,
    )
    assert r.blackbox
    assert _inside(ex.empirical_epsilon, r.lower_bound, r.upper_bound), (ex, r)


@pytest.mark.parametrize("name", ALL)
@pytest.mark.parametrize(("dim", "eps"), [(2, 1.0), (128, 1.0), (4096, 5.0)])
def test_exact_inside_model_based_mc_interval(name: str, dim: int, eps: float) -> None:
    ex = audit(name, dim=dim, epsilon=eps, method="exact")
    r = audit(
        name, dim=dim, epsilon=eps, method="mc", trials=10_000_000, seed=3, confidence=0.999, model_based=True
    )
    assert not r.blackbox and r.sampler == "model-based" and r.sampler_check["agrees"]
    assert _inside(ex.empirical_epsilon, r.lower_bound, r.upper_bound), (ex, r)


@pytest.mark.parametrize("name", FLAWED)
@pytest.mark.parametrize("dim", [32, 128])
def test_flawed_mechanisms_flagged_at_95_percent(name: str, dim: int) -> None:
    r = audit(name, dim=dim, epsilon=1.0, method="mc", trials=1_000_000, seed=0, model_based=True)
    assert r.verdict == "violates"
    assert r.verdict_lower_bound > r.claimed_epsilon


@pytest.mark.parametrize("name", ["dptext", "dptext-resample"])
def test_dptext_flagged_even_at_n1_and_with_blackbox(name: str) -> None:
    assert audit(name, dim=1, epsilon=1.0, method="mc", trials=100_000, seed=1).verdict == "violates"
    r = audit(name, dim=8, epsilon=1.0, method="mc", trials=50_000, seed=1, blackbox=True)
    assert r.verdict == "violates" and r.sampler == "real"


@pytest.mark.parametrize("name", FLAWED)
def test_flawed_mechanisms_flagged_by_the_real_sampler(name: str) -> None:
    r = audit(name, dim=32, epsilon=1.0, method="mc", trials=100_000, seed=0)
    assert r.sampler == "real" and r.blackbox
    assert r.verdict == "violates" and r.verdict_lower_bound > r.claimed_epsilon


@pytest.mark.parametrize("name", CORRECT)
@pytest.mark.parametrize("dim", [1, 8, 128, 4096])
def test_correct_mechanisms_not_flagged(name: str, dim: int) -> None:
    for eps in (0.1, 1.0, 10.0):
        r = audit(name, dim=dim, epsilon=eps, method="mc", trials=1_000_000, seed=dim, model_based=True)
        assert r.verdict == "not-detected", r
        assert r.lower_bound <= r.claimed_epsilon + 1e-12


def test_every_trial_is_counted_across_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    """The published code kept only its last chunk; here every chunk accumulates."""
    monkeypatch.setattr(mc, "CHUNK_ELEMENTS", 64)  # 8 rows per chunk at n = 8
    mech = create_mechanism("laplace", epsilon=1.0, dim=8)
    counts = mc.sample_counts(mech, 1001, 5)
    assert counts.hist.sum(axis=(0, 2)).tolist() == [1001, 1001]
    assert counts.hist[0].sum() == 500 * 2 and counts.hist[1].sum() == 501 * 2


def test_chunking_does_not_change_the_distribution(monkeypatch: pytest.MonkeyPatch) -> None:
    mech = create_mechanism("adept", epsilon=1.0, dim=8)
    p = float(np.exp(mech.threshold_logprobs()[0, 1]))
    monkeypatch.setattr(mc, "CHUNK_ELEMENTS", 80)
    counts = mc.sample_counts(mech, 40_000, 9)
    hist = counts.total[0]
    expected = stats.binom.pmf(np.arange(9), 8, p) * hist.sum()
    keep = expected > 5
    chi2 = stats.chisquare(hist[keep], expected[keep] * hist[keep].sum() / expected[keep].sum())
    assert chi2.pvalue > 0.001


def test_reproducible_and_cell_independent() -> None:
    a = audit("adept", dim=32, epsilon=1.0, method="mc", trials=100_000, seed=42)
    b = audit("adept", dim=32, epsilon=1.0, method="mc", trials=100_000, seed=42)
    c = audit("adept", dim=32, epsilon=1.0, method="mc", trials=100_000, seed=43)
    assert a.empirical_epsilon == b.empirical_epsilon and a.guess1_d == b.guess1_d
    assert a.guess1_d != c.guess1_d
    grid = audit_grid(
        ["laplace", "adept"], dims=[8, 32], epsilons=[1.0], method="mc", trials=100_000, seed=42
    )
    cell = next(r for r in grid if r.mechanism == "adept" and r.dim == 32)
    assert cell.seed == 42 and cell.guess1_d == a.guess1_d


def test_unseeded_runs_record_their_seed() -> None:
    r = audit("laplace", dim=4, epsilon=1.0, method="mc", trials=1000)
    again = audit("laplace", dim=4, epsilon=1.0, method="mc", trials=1000, seed=r.seed)
    assert again.guess1_d == r.guess1_d and again.guess1_dprime == r.guess1_dprime


@pytest.mark.parametrize(("k", "n"), [(0, 10), (3, 10), (10, 10), (17, 1000), (999, 1000)])
def test_clopper_pearson_inverts_the_binomial_cdf(k: int, n: int) -> None:
    a = 0.025
    lo, hi = float(cp_lower(k, n, a)), float(cp_upper(k, n, a))
    if k > 0:
        assert stats.binom.sf(k - 1, n, lo) == pytest.approx(a, rel=1e-6)
    else:
        assert lo == 0.0
    if k < n:
        assert stats.binom.cdf(k, n, hi) == pytest.approx(a, rel=1e-6)
    else:
        assert hi == 1.0


def test_clopper_pearson_coverage() -> None:
    rng = np.random.default_rng(0)
    p, n, a = 0.07, 200, 0.05
    k = rng.binomial(n, p, size=4000)
    lo = cp_lower(k, n, a)
    cover = float(np.mean(lo <= p))
    assert cover >= 0.95 - 3 * math.sqrt(0.05 * 0.95 / 4000)


def test_bounds_bracket_point_estimate_and_random_gives_zero_lower_bound() -> None:
    r = audit("random", dim=16, epsilon=1.0, method="mc", trials=1_000_000, seed=2)
    assert r.lower_bound == 0.0 and r.lower_bound <= r.empirical_epsilon <= r.upper_bound


@pytest.mark.parametrize(
    "kwargs",
    [
        {"trials": 5},
        {"trials": 10**10},
        {"trials": 2.5},
        {"confidence": 0.4},
        {"confidence": 1.0},
        {"confidence": float("nan")},
        {"seed": -1},
        {"method": "bogus"},
    ],
)
def test_bad_mc_arguments(kwargs: dict) -> None:
    args = {"dim": 4, "epsilon": 1.0, "method": "mc", "trials": 1000} | kwargs
    with pytest.raises(DPCoreError):
        audit("laplace", **args)


def test_blackbox_work_cap() -> None:
    with pytest.raises(DPCoreError, match="black-box"):
        audit("laplace", dim=4096, epsilon=1.0, method="mc", trials=10**9, blackbox=True)
