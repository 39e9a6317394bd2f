"""dpcore.stats against independent computations: Beta quantiles, the Wilson closed form, exact
binomial coverage and Poisson tails from scipy.stats."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from scipy.special import logsumexp
from scipy.stats import beta, binom, chi2, norm, poisson

from dpcore.stats import (
    chernoff_lower,
    chernoff_lower_exceeds,
    chernoff_lower_many,
    chernoff_ratio_bounds,
    chernoff_ratio_bounds_many,
    chernoff_ratio_lower_exceeds,
    chernoff_ratio_upper_many,
    chernoff_upper,
    chernoff_upper_many,
    cp_log_ratio_den,
    cp_log_ratio_interval,
    cp_log_ratio_lower,
    cp_log_ratio_num,
    cp_lower,
    cp_max_log_ratio,
    cp_upper,
    log_cp_lower,
    log_cp_upper,
    poisson_log_tail,
    wilson_log_ratio_lower,
    wilson_lower,
    wilson_upper,
)

# --- Clopper–Pearson ----------------------------------------------------------------------------


@pytest.mark.parametrize("n", [1, 2, 7, 50, 1000])
@pytest.mark.parametrize("alpha", [0.05, 0.001])
def test_cp_bounds_are_beta_quantiles(n, alpha):
    k = np.arange(n + 1)
    lo, hi = cp_lower(k, n, alpha), cp_upper(k, n, alpha)
    assert lo.shape == hi.shape == k.shape and lo.dtype == hi.dtype == np.float64
    # k = 0 and k = n: the bounds the quantiles leave undefined
    assert lo[0] == 0.0 and hi[-1] == 1.0
    inner = k[1:]
    np.testing.assert_allclose(lo[1:], beta.ppf(alpha, inner, n - inner + 1), rtol=1e-12, atol=1e-300)
    inner = k[:-1]
    np.testing.assert_allclose(hi[:-1], beta.ppf(1 - alpha, inner + 1, n - inner), rtol=1e-12)
    assert np.all(lo <= k / n) and np.all(k / n <= hi)
    assert np.all(np.diff(lo) > 0) and np.all(np.diff(hi) > 0)


def test_cp_closed_forms_at_the_ends():
    """k = n: CP⁻ = α^{1/n}; k = 0: CP⁺ = 1 − α^{1/n} (Beta(n, 1) and Beta(1, n))."""
    for n in (1, 10, 12345):
        assert float(cp_lower(n, n, 0.01)) == pytest.approx(0.01 ** (1 / n), rel=1e-13)
        assert float(cp_upper(0, n, 0.01)) == pytest.approx(1 - 0.01 ** (1 / n), rel=1e-12)


def test_cp_scalar_and_vector_inputs_agree():
    k = np.array([[0, 3], [17, 40]])
    lo = cp_lower(k, 40, 0.025)
    assert lo.shape == (2, 2)
    for (i, j), v in np.ndenumerate(k):
        assert lo[i, j] == cp_lower(int(v), 40, 0.025)
        assert cp_upper(k, 40, 0.025)[i, j] == cp_upper(float(v), 40, 0.025)
    assert cp_lower(3, 40, 0.025).shape == ()


@pytest.mark.parametrize("n", [15, 60])
def test_cp_exact_coverage(n):
    """P_p(CP⁻(K) > p) ≤ α and P_p(CP⁺(K) < p) ≤ α for every p (exact binomial sums)."""
    alpha = 0.05
    k = np.arange(n + 1)
    lo, hi = cp_lower(k, n, alpha), cp_upper(k, n, alpha)
    for p in np.linspace(0.001, 0.999, 199):
        pmf = binom.pmf(k, n, p)
        assert pmf[lo > p].sum() <= alpha + 1e-12
        assert pmf[hi < p].sum() <= alpha + 1e-12


def test_log_cp_bounds_are_logs_without_warnings():
    k = np.array([0, 1, 5, 20])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ll, lu = log_cp_lower(k, 20, 0.05), log_cp_upper(k, 20, 0.05)
    assert ll[0] == -math.inf and np.all(np.isfinite(ll[1:])) and lu[-1] == 0.0
    np.testing.assert_array_equal(ll[1:], np.log(cp_lower(k[1:], 20, 0.05)))
    np.testing.assert_array_equal(lu, np.log(cp_upper(k, 20, 0.05)))


# --- ratio bounds ----------------------------------------------------------------------------


def test_ratio_bound_splits_alpha_over_its_two_counts():
    a, b, n, alpha = np.array([0, 3, 50, 400]), np.array([0, 0, 20, 399]), 400, 0.01
    lb = cp_log_ratio_lower(a, b, n, alpha)
    # bit for bit the expression it replaced
    with np.errstate(divide="ignore"):
        ref = np.log(cp_lower(a, n, alpha / 2)) - np.log(cp_upper(b, n, alpha / 2))
    np.testing.assert_array_equal(lb, ref)
    np.testing.assert_array_equal(cp_log_ratio_num(a, n, alpha) - cp_log_ratio_den(b, n, alpha), lb)
    # against Beta quantiles at α/2 each
    inner = slice(1, None)
    q = np.log(beta.ppf(alpha / 2, a[inner], n - a[inner] + 1)) - np.log(
        beta.ppf(1 - alpha / 2, b[inner] + 1, n - b[inner])
    )
    np.testing.assert_allclose(lb[inner], q, rtol=1e-11)
    assert lb[0] == -math.inf
    assert cp_log_ratio_lower(7, 2, 100, 0.1).shape == ()


@pytest.mark.parametrize(("pa", "pb"), [(0.3, 0.3), (0.5, 0.1), (0.05, 0.2), (0.9, 0.02)])
def test_ratio_bound_exact_coverage(pa, pb):
    """P(lower bound > ln(p_a/p_b)) ≤ α, summed exactly over both binomial counts."""
    n, alpha = 40, 0.1
    k = np.arange(n + 1)
    lb = cp_log_ratio_lower(k[:, None], k[None, :], n, alpha)
    joint = binom.pmf(k, n, pa)[:, None] * binom.pmf(k, n, pb)[None, :]
    assert joint[lb > math.log(pa / pb)].sum() <= alpha  # α/2 per count, union bound


def test_max_log_ratio_closed_form_and_maximum():
    n, alpha = 1000, 0.05
    s = (alpha / 2) ** (1 / n)
    top = cp_max_log_ratio(n, alpha)
    assert isinstance(top, float)
    assert top == pytest.approx(math.log(s) - math.log(1 - s), rel=1e-12)
    k = np.arange(0, n + 1, 25)
    assert np.all(cp_log_ratio_lower(k[:, None], k[None, :], n, alpha) <= top)
    assert top == float(cp_log_ratio_lower(n, 0, n, alpha))


def test_log_ratio_interval():
    lo, hi = cp_log_ratio_interval(300, 1000, 100, 2000, 0.05)
    est = math.log(0.3) - math.log(0.05)
    assert lo < est < hi
    ref_lo = math.log(beta.ppf(0.025, 300, 701)) - math.log(beta.ppf(0.975, 101, 1900))
    ref_hi = math.log(beta.ppf(0.975, 301, 700)) - math.log(beta.ppf(0.025, 100, 1901))
    assert lo == pytest.approx(ref_lo, rel=1e-12) and hi == pytest.approx(ref_hi, rel=1e-12)
    # the same numbers as the one-n lower bound (up to math.log vs np.log rounding)
    lo2, _ = cp_log_ratio_interval(300, 1000, 50, 1000, 0.05)
    assert lo2 == pytest.approx(float(cp_log_ratio_lower(300, 50, 1000, 0.05)), rel=1e-14)
    assert cp_log_ratio_interval(0, 10, 5, 10, 0.05)[0] == -math.inf
    assert cp_log_ratio_interval(5, 10, 0, 10, 0.05)[1] == math.inf


# --- Wilson ------------------------------------------------------------------------------------


@pytest.mark.parametrize("n", [1, 10, 500])
@pytest.mark.parametrize("alpha", [0.05, 0.0025])
def test_wilson_closed_form(n, alpha):
    """Against Wilson's interval written as (k + z²/2)/(n + z²) ± z√n/(n + z²)·√(p̂q̂ + z²/4n)."""
    k = np.arange(n + 1)
    z = norm.ppf(1 - alpha)
    p = k / n
    centre = (k + z * z / 2) / (n + z * z)
    half = z * math.sqrt(n) / (n + z * z) * np.sqrt(p * (1 - p) + z * z / (4 * n))
    lo, hi = wilson_lower(k, n, alpha), wilson_upper(k, n, alpha)
    np.testing.assert_allclose(lo, np.clip(centre - half, 0, 1), rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(hi, np.clip(centre + half, 0, 1), rtol=1e-12, atol=1e-15)
    assert lo[0] == pytest.approx(0.0, abs=1e-15) and hi[-1] == pytest.approx(1.0, abs=1e-15)
    assert np.all(lo <= p + 1e-15) and np.all(p <= hi + 1e-15)
    assert wilson_lower(int(k[-1]), n, alpha).shape == ()


def test_wilson_ratio_tracks_clopper_pearson_at_large_counts():
    a, b, n, alpha = np.array([5_000, 20_000]), np.array([1_000, 19_000]), 100_000, 1e-4
    w = wilson_log_ratio_lower(a, b, n, alpha)
    c = cp_log_ratio_lower(a, b, n, alpha)
    np.testing.assert_allclose(w, c, atol=2e-3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert wilson_log_ratio_lower(0, 5, 100, 0.05) < -20  # ln of a lower bound at (or near) 0


# --- Poisson tails (Chernoff) ------------------------------------------------------------------


def _rate(mean: float, obs: float) -> float:
    """mean·h(obs/mean), h(u) = u ln u − u + 1, written as obs·ln(obs/mean) − obs + mean."""
    return (obs * math.log(obs / mean) if obs > 0 else 0.0) - obs + mean


@pytest.mark.parametrize("alpha", [0.05, 1e-4])
@pytest.mark.parametrize("x", [1, 3, 10, 50, 1000, 100_000])
def test_chernoff_bounds_solve_their_equation_and_bound_poisson_tails(alpha, x):
    target = math.log(1 / alpha)
    low, up = chernoff_lower(x, alpha), chernoff_upper(x, alpha)
    if x > target:
        assert 0 < low < x
        assert _rate(low, x) == pytest.approx(target, rel=1e-9)
        # Chernoff: Pr[X ≥ x] ≤ exp(−μ·h(x/μ)) = α at μ = low, so the exact tail is below α
        assert poisson.sf(x - 1, low) <= alpha
        # conservative, but not far from the exact (Garwood) bound
        garwood = chi2.ppf(alpha, 2 * x) / 2
        assert low <= garwood and low >= 0.5 * garwood
    else:
        assert low == 0.0
    assert up > x
    assert _rate(up, x) == pytest.approx(target, rel=1e-9)
    assert poisson.cdf(x, up) <= alpha
    garwood_up = chi2.ppf(1 - alpha, 2 * x + 2) / 2
    assert garwood_up <= up <= 2.0 * garwood_up


def test_chernoff_edges_and_vectorised_forms():
    alpha = 0.01
    target = math.log(1 / alpha)
    assert chernoff_lower(0.0, alpha) == 0.0 and chernoff_lower(target, alpha) == 0.0
    assert chernoff_upper(0.0, alpha) == pytest.approx(target, rel=1e-12)  # ν·h(0) = ν
    assert chernoff_upper(-3.0, alpha) == chernoff_upper(0.0, alpha)
    x = np.array([0.0, 2.5, 17.0, 4e4])
    y = np.array([0.0, 1.0, 30.0, 3.9e4])
    np.testing.assert_array_equal(chernoff_lower_many(x, alpha), [chernoff_lower(v, alpha) for v in x])
    np.testing.assert_array_equal(chernoff_upper_many(y, alpha), [chernoff_upper(v, alpha) for v in y])
    pair = (chernoff_lower(17.0, alpha / 2), chernoff_upper(30.0, alpha / 2))
    assert chernoff_ratio_bounds(17.0, 30.0, alpha) == pair
    lo, up = chernoff_ratio_bounds_many(x, y, alpha)
    np.testing.assert_array_equal(lo, chernoff_lower_many(x, alpha / 2))
    np.testing.assert_array_equal(up, chernoff_upper_many(y, alpha / 2))
    np.testing.assert_array_equal(chernoff_ratio_upper_many(y, alpha), up)
    # bounds the caller has already are used as given (the same Y against many X)
    kept = chernoff_ratio_upper_many(y, alpha)
    lo2, up2 = chernoff_ratio_bounds_many(x, y, alpha, y_upper=kept)
    np.testing.assert_array_equal(lo2, lo)
    np.testing.assert_array_equal(up2, up)
    _, given = chernoff_ratio_bounds_many(x, y, alpha, y_upper=up + 1.0)
    np.testing.assert_array_equal(given, up + 1.0)


def test_chernoff_lower_exceeds_is_the_bisections_comparison():
    """The pooled test's decision without the bound: the same answer as comparing the bisection's
    bound, on random sums and on bounds at, just above and just below it (and the edges)."""
    rng = np.random.default_rng(3)
    for alpha in (0.5, 0.05, 1e-3):
        for scale in (1.0, 30.0, 1e4, 1e7):
            x = rng.exponential(scale, size=20_000)
            x[:500] = 0.0
            x[500:1500] = np.round(x[500:1500])
            lo = chernoff_lower_many(x, alpha)
            others = (rng.exponential(scale, size=x.size), np.zeros_like(x), x, 2 * x, -np.ones_like(x))
            for bound in (lo, lo * (1 + 1e-12), lo * (1 - 1e-12), *others):
                np.testing.assert_array_equal(chernoff_lower_exceeds(x, bound, alpha), lo > bound)
    # the pooled test's form: the lower bound at α/2 against the upper bounds of Y
    x, y = rng.exponential(40.0, size=5_000), rng.exponential(20.0, size=5_000)
    lo, up = chernoff_ratio_bounds_many(x, y, 0.1)
    np.testing.assert_array_equal(chernoff_ratio_lower_exceeds(x, up, 0.1), lo > up)
    # a scalar bound broadcasts; the decision is not vacuous either way
    got = chernoff_lower_exceeds(np.array([0.0, 3.0, 50.0, 500.0]), 20.0, 0.05)
    assert got.tolist() == [False, False, True, True]


def test_poisson_log_tail_is_exact_then_an_upper_bound():
    mu = 5.0
    m = np.array([0, 1, 3, 10, 50, 100, 200, 300, 500, 2000])
    got = poisson_log_tail(m, mu)
    exact = np.array([logsumexp(poisson.logpmf(np.arange(v, v + 3000), mu)) for v in m])
    exact[0] = 0.0  # Pr[k ≥ 0] = 1
    # exact where scipy's logsf is finite, an upper bound within ln((m+1)/(m+1−μ)) beyond
    assert np.all(np.isfinite(got))
    assert np.all(got >= exact - 1e-9 * np.maximum(1.0, np.abs(exact)))
    far = m + 1 > mu
    slack = np.log((m[far] + 1) / (m[far] + 1 - mu))
    assert np.all(got[far] <= exact[far] + slack + 1e-9 * np.abs(exact[far]))
    np.testing.assert_allclose(got[:6], exact[:6], rtol=1e-12, atol=1e-12)


def test_ratio_bounds_read_from_the_table_equal_the_direct_ones_bit_for_bit():
    """Integer counts at one (n, α) read a table of ln CP± over 0..n; the values must be those
    computed directly (float counts take the direct path)."""
    from dpcore import stats
    from dpcore.stats import TABLE_MIN_COUNTS, counts_in_table, log_cp_tables

    rng = np.random.default_rng(3)
    for n in (1, 7, 100, 1_000, 50_000):
        a = rng.integers(0, n + 1, size=200)
        b = rng.integers(0, n + 1, size=200)
        assert counts_in_table(a, n)
        table = stats.cp_log_ratio_lower(a, b, n, 0.05)
        direct = stats.cp_log_ratio_lower(a.astype(np.float64), b.astype(np.float64), n, 0.05)
        assert np.array_equal(table, direct)  # -inf where a = 0 on both sides
        lo, hi = log_cp_tables(n, 0.025)
        assert np.array_equal(lo, stats.log_cp_lower(np.arange(n + 1.0), n, 0.025))
        assert np.array_equal(hi, stats.log_cp_upper(np.arange(n + 1.0), n, 0.025))
    few = np.arange(TABLE_MIN_COUNTS - 1)
    direct_few = stats.cp_log_ratio_lower(few * 1.0, few * 1.0, 50, 0.1)
    assert np.array_equal(stats.cp_log_ratio_lower(few, few, 50, 0.1), direct_few)
    assert not counts_in_table(np.array([0, 11]), 10)  # a count above n is not read from the table
    assert not counts_in_table(np.array([-1, 2]), 10)
    assert not counts_in_table(np.array([1.0, 2.0]), 10)
    with pytest.raises(ValueError):
        log_cp_tables(stats.TABLE_MAX_TRIALS + 1, 0.05)


def test_wilson_ratios_read_from_the_table_equal_the_direct_ones_bit_for_bit():
    """The Wilson stand-in that ranks prefixes reads a table of ln W± over 0..n for integer
    counts too; float counts (expected counts) take the direct path, with the same values."""
    from dpcore import stats

    rng = np.random.default_rng(5)
    for n in (1, 7, 500, 1_001, 50_000):
        for alpha in (0.1, 1e-6):
            a = rng.integers(0, n + 1, size=300)
            b = rng.integers(0, n + 1, size=300)
            table = stats.wilson_log_ratio_lower(a, b, n, alpha)
            direct = stats.wilson_log_ratio_lower(a.astype(np.float64), b.astype(np.float64), n, alpha)
            assert np.array_equal(table, direct)  # -inf where a = 0 on both sides
            lo, hi = stats.log_wilson_tables(n, alpha / 2)
            assert np.all(np.diff(lo) >= 0) and np.all(np.diff(hi) >= 0) and np.isneginf(lo[0])
    with pytest.raises(ValueError):
        stats.log_wilson_tables(stats.TABLE_MAX_TRIALS + 1, 0.05)


def test_single_counts_read_from_the_table_equal_the_direct_ones_bit_for_bit():
    """One integer count at a time (the screen bounds one event per word and pair): once an (n, α)
    has been asked often enough, the count is read from the table, with the direct value."""
    from dpcore import stats

    for n in (1, 100, 2_000, stats.SCALAR_TABLE_MAX_TRIALS):
        alpha = 0.1
        direct = [
            (stats.log_cp_lower(float(a), n, alpha / 2), stats.log_cp_upper(float(a), n, alpha / 2))
            for a in range(n + 1)
        ]
        for _ in range(2):  # the first asks count, the later ones read the table
            for a in range(n + 1):
                assert stats.cp_log_ratio_num(a, n, alpha) == direct[a][0] or (
                    np.isneginf(direct[a][0]) and np.isneginf(stats.cp_log_ratio_num(a, n, alpha))
                )
                assert stats.cp_log_ratio_den(np.int64(a), n, alpha) == direct[a][1]
        assert stats._SCALAR_ASKS.get((n, alpha), 0) >= stats.SCALAR_TABLE_AFTER
    # outside the table: a count above n, a float, a bool, a large n take the direct path
    assert not stats._table_for(2.0, 10, 0.1) and not stats._table_for(True, 10, 0.1)
    assert not stats._table_for(3, stats.SCALAR_TABLE_MAX_TRIALS + 1, 0.1)
    assert not stats._table_for(11, 10, 0.1) and not stats._table_for(-1, 10, 0.1)
