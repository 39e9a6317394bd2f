"""Laplace samplers (Habernal 2022, eqs. 4–7) against DPText's sampler (eqs. 8–9), and the
infinite privacy loss of eq. (11)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from dpcore.flawed.samplers import dptext_noise, dptext_noise_resample
from dpcore.mechanisms.samplers import laplace_sample_eq5, laplace_sample_eq7
from dpcore.samplers_inspect import (
    SAMPLERS,
    draw,
    infinite_loss_example,
    inspect_samplers,
    noise_logpdf,
)
from dpcore.validation import DPCoreError

N = 200_000


@pytest.mark.parametrize("sampler", [dptext_noise, dptext_noise_resample])
@pytest.mark.parametrize("scale", [0.1, 1.0, 7.0])
def test_dptext_is_never_negative(sampler, scale: float) -> None:  # type: ignore[no-untyped-def]
    z = sampler(scale, 1_000_000, np.random.default_rng(1))
    assert np.all(np.isfinite(z))
    assert z.min() >= 0.0


@pytest.mark.parametrize("sampler", [laplace_sample_eq5, laplace_sample_eq7])
@pytest.mark.parametrize(("scale", "seed"), [(1.0, 0), (0.3, 1), (12.0, 2)])
def test_correct_samplers_pass_ks(sampler, scale: float, seed: int) -> None:  # type: ignore[no-untyped-def]
    z = sampler(scale, N, np.random.default_rng(seed))
    assert stats.kstest(z, "laplace", args=(0.0, scale)).pvalue > 0.01


@pytest.mark.parametrize("sampler", [dptext_noise, dptext_noise_resample])
def test_dptext_fails_ks(sampler) -> None:  # type: ignore[no-untyped-def]
    z = sampler(1.0, 20_000, np.random.default_rng(0))
    assert stats.kstest(z, "laplace", args=(0.0, 1.0)).pvalue < 1e-12


def test_dptext_distribution_is_as_documented() -> None:
    """Theorem 3.1 made concrete: resampled DPText is Exponential(b); NaN → 0 is ½ atom + ½ Exp(b)."""
    b = 2.0
    z = dptext_noise_resample(b, N, np.random.default_rng(4))
    assert stats.kstest(z, "expon", args=(0.0, b)).pvalue > 0.01
    z0 = dptext_noise(b, N, np.random.default_rng(5))
    zeros = np.count_nonzero(z0 == 0)
    sd = math.sqrt(N * 0.25)
    assert abs(zeros - N / 2) < 4 * sd
    assert stats.kstest(z0[z0 > 0], "expon", args=(0.0, b)).pvalue > 0.01


def test_inspector_summaries() -> None:
    ins = inspect_samplers(1.5, N, seed=3)
    assert [s.name for s in ins.summaries] == list(SAMPLERS)
    by = {s.name: s for s in ins.summaries}
    sd = math.sqrt(0.25 / N)
    for name in ("eq5", "eq7"):
        assert abs(by[name].fraction_negative - 0.5) < 4 * sd
        assert by[name].ks_pvalue > 0.01
        assert by[name].std == pytest.approx(1.5 * math.sqrt(2), rel=0.02)
    for name in ("dptext-nan0", "dptext-resample"):
        assert by[name].fraction_negative == 0.0
        assert by[name].ks_pvalue < 1e-12
    assert abs(by["dptext-nan0"].fraction_zero - 0.5) < 4 * sd
    # densities integrate to the mass inside the histogram range
    widths = np.diff(ins.edges)
    for s in ins.summaries:
        assert float(np.sum(np.asarray(s.density) * widths)) == pytest.approx(
            1 - s.fraction_outside, abs=1e-9
        )
    # the overlay is the Laplace density: 1/(2b) at 0
    mid = len(ins.grid) // 2
    assert ins.grid[mid] == pytest.approx(0.0, abs=1e-12)
    assert ins.laplace_density[mid] == pytest.approx(1 / 3.0)


def test_inspector_histogram_matches_laplace_for_eq7() -> None:
    """Chi-square goodness of fit of the eq. 7 histogram against Laplace bin probabilities."""
    b = 1.0
    ins = inspect_samplers(b, N, seed=8, samplers=["eq7"], bins=40, half_range=5.0)
    edges = np.asarray(ins.edges)
    counts = np.asarray(ins.summaries[0].density) * np.diff(edges) * N
    probs = np.diff(stats.laplace.cdf(edges, 0.0, b))
    inside = probs.sum()
    expected = probs / inside * counts.sum()
    chi2 = stats.chisquare(np.round(counts), expected)
    assert chi2.pvalue > 0.01


def test_draws_are_reproducible_and_per_sampler() -> None:
    a = draw("eq5", 1.0, 1000, 42)
    b = draw("eq5", 1.0, 1000, 42)
    c = draw("eq5", 1.0, 1000, 43)
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)
    only = inspect_samplers(1.0, 5000, seed=42, samplers=["eq7"]).summaries[0]
    both = inspect_samplers(1.0, 5000, seed=42).summaries[1]
    assert only.name == both.name == "eq7" and only.density == both.density


def test_noise_logpdf() -> None:
    t = np.array([-1.0, 0.5])
    np.testing.assert_allclose(noise_logpdf("eq5", t, 2.0), [-0.5 - math.log(4), -0.25 - math.log(4)])
    r = noise_logpdf("dptext-resample", t, 2.0)
    assert r[0] == -np.inf and r[1] == pytest.approx(-0.25 - math.log(2))
    h = noise_logpdf("dptext-nan0", t, 2.0)
    assert h[0] == -np.inf and h[1] == pytest.approx(math.log(0.5) - 0.25 - math.log(2))


def test_infinite_loss_worked_example() -> None:
    b = 1.0  # ε = 1/b = 1 for the identity query on {0, 1}
    ex = infinite_loss_example(b, z=0.1, size=100_000, seed=0, window=0.01)
    rows = {r["sampler"]: r for r in ex.rows}
    assert ex.epsilon == 1.0 and ex.seed == 0
    for name in ("eq5", "eq7"):
        # (|0.1 − 1| − |0.1|)/b = 0.8 ≤ ε
        assert rows[name]["log_ratio"] == pytest.approx(0.8)
        assert rows[name]["count_d"] > 0 and rows[name]["count_dprime"] > 0
    for name in ("dptext-nan0", "dptext-resample"):
        r = rows[name]
        assert r["density_d"] > 0 and r["density_dprime"] == 0.0
        assert r["log_ratio"] == math.inf
        assert r["count_d"] > 0 and r["count_dprime"] == 0
        assert r["min_output_dprime"] >= 1.0
    # p_{M(0)}(0.1) for DPText NaN → 0: ½ · (1/b) e^{−0.1/b}
    assert rows["dptext-nan0"]["density_d"] == pytest.approx(0.5 * math.exp(-0.1))


@pytest.mark.parametrize(
    "kw",
    [
        {"scale": 0},
        {"scale": float("nan")},
        {"size": 0},
        {"size": 10**9},
        {"samplers": ["gauss"]},
        {"samplers": []},
    ],
)
def test_inspector_bad_input(kw: dict) -> None:
    args = {"scale": 1.0, "size": 100, "seed": 0, **kw}
    with pytest.raises(DPCoreError):
        inspect_samplers(args.pop("scale"), args.pop("size"), **args)
