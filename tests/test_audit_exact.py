"""The exact audit: closed form against independent computations."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import stats

from dpcore.audit import audit
from dpcore.audit.exact import binomial_logpmf, exact_lr_loss
from dpcore.mechanisms import VECTOR_MECHANISMS, create_mechanism

POW2 = [2**k for k in range(13)]


def _scipy_majority_loss(n: int, p0: float, p1: float) -> float:
    """Independent reference with scipy's binomial tails (fine where nothing underflows)."""
    m = n // 2
    lg1 = [stats.binom.logsf(m, n, p) for p in (p0, p1)]
    lg0 = [stats.binom.logcdf(m, n, p) for p in (p0, p1)]
    return max(abs(lg1[0] - lg1[1]), abs(lg0[0] - lg0[1]))


def test_adept_n128_eps1_matches_the_issue_value() -> None:
    r = audit("adept", dim=128, epsilon=1.0, method="exact")
    assert r.empirical_epsilon == pytest.approx(13.7432, abs=5e-4)
    # independent: -ln P(Bin(128, q) ≥ 65) + ln P(Bin(128, q) ≤ 63)... via scipy
    q = 0.5 * math.exp(-0.5)
    ref = -math.log(stats.binom.sf(64, 128, q)) + math.log(stats.binom.cdf(63, 128, q))
    assert r.empirical_epsilon == pytest.approx(ref, rel=1e-9)
    assert r.verdict == "violates"


@pytest.mark.parametrize("name", ["laplace", "gaussian", "adept", "adept-corrected", "dpnr"])
@pytest.mark.parametrize(("dim", "eps"), [(1, 0.5), (3, 1.0), (16, 2.0), (64, 0.1), (101, 5.0)])
def test_exact_majority_agrees_with_scipy(name: str, dim: int, eps: float) -> None:
    mech = create_mechanism(name, epsilon=eps, dim=dim)
    p = np.exp(mech.threshold_logprobs(0.5)[:, 1])
    ref = _scipy_majority_loss(dim, p[0], p[1])
    got = audit(name, dim=dim, epsilon=eps).empirical_epsilon
    if name == "gaussian":
        # (ε, δ): the audit subtracts δ; compare the δ = 0 value separately below
        assert got <= ref + 1e-12
    else:
        assert got == pytest.approx(ref, rel=1e-8, abs=1e-10)


@pytest.mark.parametrize("eps", [0.1, 0.5, 1.0, 2.0, 5.0, 10.0])
def test_laplace_exact_loss_never_exceeds_epsilon_up_to_4096(eps: float) -> None:
    for n in [*POW2, 3, 5, 7, 99, 1000, 4095]:
        r = audit("laplace", dim=n, epsilon=eps)
        assert math.isfinite(r.empirical_epsilon) and math.isfinite(r.lr_epsilon)
        assert 0.0 <= r.empirical_epsilon <= eps
        assert r.empirical_epsilon <= r.lr_epsilon <= eps * (1 + 1e-12)
        assert r.verdict == "within-claim"


def test_laplace_lr_attack_is_nearly_tight_and_closed_form() -> None:
    # On the bits, the strongest cut is K = n: n·ln(2e^{ε/2n} − 1), which tends to ε.
    for n, eps in [(1, 1.0), (8, 1.0), (4096, 2.0)]:
        r = audit("laplace", dim=n, epsilon=eps)
        assert r.lr_epsilon == pytest.approx(n * math.log(2 * math.exp(eps / (2 * n)) - 1), rel=1e-9)
    assert audit("laplace", dim=4096, epsilon=2.0).lr_epsilon > 1.99


def test_values_stay_finite_and_accurate_at_4096() -> None:
    r = audit("adept", dim=4096, epsilon=10.0)
    assert math.isfinite(r.empirical_epsilon) and r.empirical_epsilon > 1000
    # cross-check the far tail with an independent log-space sum
    q = 0.5 * math.exp(-5.0)
    k = np.arange(2049, 4097)
    logpmf = stats.binom.logpmf(k, 4096, q)
    log_tail = np.logaddexp.reduce(logpmf)
    log_other = np.logaddexp.reduce(stats.binom.logpmf(np.arange(0, 2048), 4096, q))
    assert r.empirical_epsilon == pytest.approx(log_other - log_tail, rel=1e-9)


def test_binomial_logpmf_sums_to_one_and_matches_scipy() -> None:
    for n, p in [(1, 0.3), (50, 0.01), (4096, 0.4999)]:
        lp = binomial_logpmf(n, math.log(p), math.log1p(-p))
        assert np.logaddexp.reduce(lp) == pytest.approx(0.0, abs=1e-10)
        assert np.allclose(lp, stats.binom.logpmf(np.arange(n + 1), n, p), rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("n", [1, 2, 3, 5, 6])
@pytest.mark.parametrize(("p0", "p1"), [(0.3, 0.7), (0.1, 0.45), (0.02, 0.6)])
def test_lr_attack_equals_brute_force_over_all_events(n: int, p0: float, p1: float) -> None:
    """Best over all 2^(n+1) events on K equals the best cut (Neyman–Pearson, MLR)."""
    pmf0 = stats.binom.pmf(np.arange(n + 1), n, p0)
    pmf1 = stats.binom.pmf(np.arange(n + 1), n, p1)
    best = 0.0
    for mask in itertools.product([False, True], repeat=n + 1):
        s = np.array(mask)
        a, b = pmf0[s].sum(), pmf1[s].sum()
        if a > 0 and b > 0:
            best = max(best, abs(math.log(a / b)))
    lr, _ = exact_lr_loss(
        binomial_logpmf(n, math.log(p0), math.log1p(-p0)),
        binomial_logpmf(n, math.log(p1), math.log1p(-p1)),
    )
    assert lr == pytest.approx(best, rel=1e-9)


def test_baselines_and_dptext() -> None:
    assert audit("random", dim=32, epsilon=1.0).empirical_epsilon == 0.0
    assert math.isinf(audit("copy", dim=32, epsilon=1.0).empirical_epsilon)
    assert audit("copy", dim=32, epsilon=1.0).verdict == "no-claim"
    for n in (1, 32, 4096):
        for name in ("dptext", "dptext-resample"):
            r = audit(name, dim=n, epsilon=1.0)
            assert math.isinf(r.lr_epsilon) and r.verdict == "violates"


@pytest.mark.parametrize("eps", [0.5, 1.0, 5.0])
def test_exact_verdicts_over_the_paper_grid(eps: float) -> None:
    for name in VECTOR_MECHANISMS.names():
        flawed = VECTOR_MECHANISMS.get(name).flawed
        for n in (8, 32, 128):
            r = audit(name, dim=n, epsilon=eps)
            if flawed:
                assert r.verdict == "violates", (name, n)
            elif name != "copy":
                assert r.verdict == "within-claim", (name, n, r.empirical_epsilon, r.lr_epsilon)


def test_gaussian_delta_adjusted_loss_is_within_claim() -> None:
    for n in (1, 16, 256, 4096):
        r = audit("gaussian", dim=n, epsilon=1.0)
        assert r.delta == 1e-5 and r.lr_epsilon <= 1.0 + 1e-9
