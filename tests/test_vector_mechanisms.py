"""Distribution tests for the vector mechanisms (fixed seeds, real thresholds)."""

from __future__ import annotations

import math
import zlib

import numpy as np
import pytest
from scipy import integrate, stats

from dpcore.flawed.samplers import dptext_noise, dptext_noise_resample
from dpcore.mechanisms import VECTOR_MECHANISMS, IIDAuditable, create_mechanism
from dpcore.mechanisms.gaussian_calibration import analytic_gaussian_delta, analytic_gaussian_sigma
from dpcore.mechanisms.samplers import laplace_sample_eq5, laplace_sample_eq7
from dpcore.stats import cp_lower, cp_upper
from dpcore.validation import DPCoreError

KS_P = 0.01  # reject "right distribution" below this p-value (fixed seeds: deterministic)


@pytest.mark.parametrize(("eps", "dim"), [(0.5, 1), (1.0, 8), (5.0, 64)])
def test_laplace_noise_is_laplace_with_scale_dim_over_eps(eps: float, dim: int) -> None:
    mech = create_mechanism("laplace", epsilon=eps, dim=dim)
    z = mech.sample(np.zeros(dim), 20_000 // dim + 1, np.random.default_rng(11)).ravel()
    assert stats.kstest(z, stats.laplace(scale=dim / eps).cdf).pvalue > KS_P
    # and not Laplace with the ADePT scale 1/ε (the test has power)
    if dim > 1:
        assert stats.kstest(z, stats.laplace(scale=1 / eps).cdf).pvalue < 1e-6


@pytest.mark.parametrize("sampler", [laplace_sample_eq5, laplace_sample_eq7])
def test_inverse_cdf_samplers_match_laplace(sampler) -> None:  # type: ignore[no-untyped-def]
    x = sampler(2.5, 50_000, np.random.default_rng(5))
    assert stats.kstest(x, stats.laplace(scale=2.5).cdf).pvalue > KS_P
    assert np.all(np.isfinite(x))


def test_shifted_inputs_add_noise_around_the_input() -> None:
    mech = create_mechanism("laplace", epsilon=2.0, dim=4)
    z = mech.sample(np.ones(4), 50_000, np.random.default_rng(2))
    assert stats.kstest(z.ravel() - 1.0, stats.laplace(scale=2.0).cdf).pvalue > KS_P


def test_gaussian_noise_and_tight_analytic_calibration() -> None:
    mech = create_mechanism("gaussian", epsilon=1.0, dim=16, delta=1e-5)
    z = mech.sample(np.zeros(16), 4000, np.random.default_rng(3)).ravel()
    assert stats.kstest(z, stats.norm(scale=mech.sigma).cdf).pvalue > KS_P
    # Independent check of Balle & Wang's condition: integrate the hockey-stick divergence
    # ∫ max(0, p(z) − e^ε q(z)) dz between N(0, σ²) and N(Δ, σ²) numerically.
    sens, sigma, eps = mech.sensitivity, mech.sigma, 1.0

    def hockey(s: float) -> float:
        f = lambda x: max(0.0, stats.norm.pdf(x, 0, s) - math.exp(eps) * stats.norm.pdf(x, sens, s))  # noqa: E731
        return integrate.quad(f, -50 * s, 50 * s, points=[0.0, sens], limit=400)[0]

    assert hockey(sigma) <= 1e-5 * (1 + 1e-4)
    assert hockey(sigma * 0.97) > 1e-5  # 3% less noise breaks (ε, δ): the calibration is tight
    # Smaller than the classical σ = Δ √(2 ln(1.25/δ)) / ε (Dwork & Roth Thm A.1).
    assert sigma < sens * math.sqrt(2 * math.log(1.25 / 1e-5))


def test_analytic_gaussian_large_epsilon_is_stable() -> None:
    s = analytic_gaussian_sigma(epsilon=500.0, delta=1e-9, sensitivity=1.0)
    assert 0 < s < 1 and math.isfinite(s)
    assert analytic_gaussian_delta(s, epsilon=500.0, sensitivity=1.0) <= 1e-9


def test_adept_corrected_clips_and_uses_true_sensitivity() -> None:
    mech = create_mechanism("adept-corrected", epsilon=1.0, dim=16, clip=0.5)
    assert mech.scale == pytest.approx(2 * 0.5 * 4 / 1.0)
    assert np.linalg.norm(mech.preprocess(np.ones(16))) == pytest.approx(0.5)
    z = mech.sample(np.ones(16), 3000, np.random.default_rng(4))
    noise = (z - mech.preprocess(np.ones(16))).ravel()
    assert stats.kstest(noise, stats.laplace(scale=mech.scale).cdf).pvalue > KS_P


def test_random_baseline_is_fair_and_ignores_input() -> None:
    mech = create_mechanism("random", epsilon=1.0, dim=8)
    rng = np.random.default_rng(6)
    for x in (np.zeros(8), np.ones(8)):
        ones = int(mech.sample(x, 10_000, rng).sum())
        total = 80_000
        assert cp_lower(ones, total, 0.0005) <= 0.5 <= cp_upper(ones, total, 0.0005)


def test_copy_is_identity() -> None:
    x = np.array([0.0, 1.0, 0.25])
    z = create_mechanism("copy", epsilon=1.0, dim=3).sample(x, 5, np.random.default_rng(0))
    assert np.array_equal(z, np.tile(x, (5, 1)))


def test_dptext_noise_is_never_negative_and_half_zero() -> None:
    x = dptext_noise(3.0, 100_000, np.random.default_rng(7))
    assert x.min() >= 0.0
    zeros = int(np.count_nonzero(x == 0.0))
    assert cp_lower(zeros, x.size, 0.0005) <= 0.5 <= cp_upper(zeros, x.size, 0.0005)
    pos = x[x > 0]
    assert stats.kstest(pos, stats.expon(scale=3.0).cdf).pvalue > KS_P
    # It is not Laplace: the KS test rejects it decisively.
    assert stats.kstest(x, stats.laplace(scale=3.0).cdf).pvalue < 1e-10


def test_dptext_resample_is_exponential() -> None:
    x = dptext_noise_resample(2.0, (300, 100), np.random.default_rng(8))
    assert x.shape == (300, 100) and x.min() > 0.0
    assert stats.kstest(x.ravel(), stats.expon(scale=2.0).cdf).pvalue > KS_P


@pytest.mark.parametrize("name", VECTOR_MECHANISMS.names())
def test_declared_threshold_probabilities_match_the_sampler(name: str) -> None:
    """The i.i.d. declaration behind the exact audit agrees with black-box sampling."""
    eps, dim = 1.5, 4
    mech = create_mechanism(name, epsilon=eps, dim=dim)
    assert isinstance(mech, IIDAuditable)
    p_declared = np.exp(mech.threshold_logprobs(0.5)[:, 1])
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    for b in (0, 1):
        z = mech.sample(np.full(dim, float(b)), 25_000, rng)
        ones = int(np.count_nonzero(z >= 0.5))
        total = z.size
        lo, hi = cp_lower(ones, total, 0.0005), cp_upper(ones, total, 0.0005)
        assert lo <= p_declared[b] <= hi, (name, b, p_declared[b], lo, hi)


def test_registry_fences_flawed_mechanisms() -> None:
    flawed = {e.name for e in VECTOR_MECHANISMS if e.flawed}
    assert flawed == {"adept", "dpnr", "dptext", "dptext-resample"}
    for e in VECTOR_MECHANISMS:
        assert e.factory.__module__.startswith("dpcore.flawed") == e.flawed
        assert e.citation, e.name
    for name in VECTOR_MECHANISMS.names():
        m = create_mechanism(name, epsilon=1.0, dim=32)
        if name in flawed:
            assert m.true_epsilon > m.claimed_epsilon


@pytest.mark.parametrize(
    "kwargs",
    [
        {"epsilon": 0, "dim": 4},
        {"epsilon": -1, "dim": 4},
        {"epsilon": float("nan"), "dim": 4},
        {"epsilon": float("inf"), "dim": 4},
        {"epsilon": 1e308, "dim": 4},
        {"epsilon": 1.0, "dim": 0},
        {"epsilon": 1.0, "dim": 5000},
        {"epsilon": 1.0, "dim": 2.5},
        {"epsilon": "abc", "dim": 4},
    ],
)
def test_bad_parameters_raise_clear_errors(kwargs: dict) -> None:
    with pytest.raises(DPCoreError):
        create_mechanism("laplace", **kwargs)


def test_unknown_mechanism_lists_valid_names() -> None:
    with pytest.raises(DPCoreError, match="laplace"):
        create_mechanism("lapalce", epsilon=1.0, dim=2)
