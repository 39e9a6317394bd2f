"""Confidence bounds shared by every audit: the one place where they are written.

Binomial proportions
    :func:`cp_lower`, :func:`cp_upper` — exact (conservative) Clopper–Pearson bounds (Clopper
    and Pearson 1934, *Biometrika* 26(4), 404–413), as in DP-Sniper's ``binomial_cdf.py``;
    :func:`log_cp_lower`, :func:`log_cp_upper` their logarithms; :func:`wilson_lower`,
    :func:`wilson_upper` — Wilson's score bounds (Wilson 1927, *JASA* 22(158), 209–212), a cheap
    approximation used only to rank candidates.
Ratios of two proportions
    :func:`cp_log_ratio_lower` — ln CP⁻(a; α/2) − ln CP⁺(b; α/2), a lower bound on
    ln(p_a / p_b) that holds with probability ≥ 1 − α by the union bound; its two terms
    (:func:`cp_log_ratio_num`, :func:`cp_log_ratio_den`), its largest value
    (:func:`cp_max_log_ratio`), a two-count interval (:func:`cp_log_ratio_interval`) and the
    Wilson stand-in (:func:`wilson_log_ratio_lower`).
Poisson tails
    :func:`chernoff_lower`, :func:`chernoff_upper` (and ``_many``) — conservative bounds on the
    mean of a (weighted) sum of negatively associated counts from the Chernoff bound on a Poisson
    tail; :func:`chernoff_ratio_bounds` pairs them for a ratio; :func:`poisson_log_tail` bounds
    ln Pr[k ≥ m] for k ~ Poisson(μ).

Convention: a function that bounds a **ratio** takes the level α of its statement and splits it
over its two counts itself (α/2 each); the one-count bounds take their own one-sided α. Callers
never write ``alpha / 2``.

The Beta quantile is the regularised incomplete beta function's inverse,
``scipy.special.betaincinv(a, b, q)`` (what ``scipy.stats.beta.ppf`` calls): importing
``scipy.stats`` costs about 0.8 s, which every page and command that audits would pay on its
first use, so only :func:`poisson_log_tail` imports it, when called.
"""

from __future__ import annotations

import functools
import math

import numpy as np
from scipy.special import betaincinv, ndtri

__all__ = [
    "bernoulli_renyi",
    "chernoff_lower",
    "chernoff_lower_many",
    "chernoff_ratio_bounds",
    "chernoff_ratio_bounds_many",
    "chernoff_ratio_upper_many",
    "chernoff_upper",
    "chernoff_upper_many",
    "counts_in_table",
    "cp_log_ratio_den",
    "cp_log_ratio_interval",
    "cp_log_ratio_lower",
    "cp_log_ratio_num",
    "cp_lower",
    "cp_max_log_ratio",
    "cp_max_renyi",
    "cp_renyi_lower",
    "cp_upper",
    "log_cp_lower",
    "log_cp_tables",
    "log_cp_upper",
    "log_wilson_tables",
    "poisson_log_tail",
    "renyi_order",
    "wilson_log_ratio_lower",
    "wilson_lower",
    "wilson_upper",
]


# --- Clopper–Pearson -------------------------------------------------------------------------
def cp_lower(k: np.ndarray | int, n: int, alpha: float) -> np.ndarray:
    """One-sided Clopper–Pearson lower bound on a binomial proportion.

    The bound is the ``alpha`` quantile of Beta(k, n − k + 1) (0 when k = 0), so that
    ``P(p ≥ bound) ≥ 1 − α`` for ``k`` successes in ``n`` trials (Clopper and Pearson 1934).

    Parameters
    ----------
    k : array_like of int or float
        Successes (elementwise).
    n : int
        Trials.
    alpha : float
        One-sided error level.

    Returns
    -------
    numpy.ndarray
        The bounds, float64, the shape of ``k`` (0-d for a scalar).
    """
    k = np.asarray(k, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        out = betaincinv(k, n - k + 1.0, alpha)
    return np.where(k <= 0, 0.0, out)


def cp_upper(k: np.ndarray | int, n: int, alpha: float) -> np.ndarray:
    """One-sided Clopper–Pearson upper bound on a binomial proportion.

    The bound is the ``1 − alpha`` quantile of Beta(k + 1, n − k) (1 when k = n), so that
    ``P(p ≤ bound) ≥ 1 − α`` for ``k`` successes in ``n`` trials (Clopper and Pearson 1934).

    Parameters
    ----------
    k : array_like of int or float
        Successes (elementwise).
    n : int
        Trials.
    alpha : float
        One-sided error level.

    Returns
    -------
    numpy.ndarray
        The bounds, float64, the shape of ``k`` (0-d for a scalar).
    """
    k = np.asarray(k, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        out = betaincinv(k + 1.0, n - k, 1.0 - alpha)
    return np.where(k >= n, 1.0, out)


def _log(p: np.ndarray) -> np.ndarray:
    """``np.log`` without the divide-by-zero warning (ln 0 = −∞ is meant)."""
    with np.errstate(divide="ignore"):
        return np.log(np.asarray(p, dtype=np.float64))


def log_cp_lower(k: np.ndarray | int, n: int, alpha: float) -> np.ndarray:
    """ln :func:`cp_lower` ``(k, n, alpha)`` (−∞ where k = 0), one-sided at ``alpha``.

    Parameters
    ----------
    k : array_like
        Successes.
    n : int
        Trials.
    alpha : float
        One-sided error level.

    Returns
    -------
    numpy.ndarray
        ``np.log`` of the bounds.
    """
    return _log(cp_lower(k, n, alpha))


def log_cp_upper(k: np.ndarray | int, n: int, alpha: float) -> np.ndarray:
    """ln :func:`cp_upper` ``(k, n, alpha)``, one-sided at ``alpha``.

    Parameters
    ----------
    k : array_like
        Successes.
    n : int
        Trials.
    alpha : float
        One-sided error level.

    Returns
    -------
    numpy.ndarray
        ``np.log`` of the bounds.
    """
    return _log(cp_upper(k, n, alpha))


#: Ratio bounds over many integer counts at one (n, α) read a table of ln CP⁻ and ln CP⁺ over
#: 0..n, computed once (the same values, element by element, as computing them each time): the
#: screen and the confirmation score thousands of prefixes at the same n and α.
TABLE_MAX_TRIALS = 65_536
#: Fewest counts in one call for which the table is used.
TABLE_MIN_COUNTS = 16


def counts_in_table(k: np.ndarray | int, n: int) -> bool:
    """Whether ``k`` is an integer array of counts in 0..n, with n ≤ :data:`TABLE_MAX_TRIALS`
    (so that :func:`log_cp_tables` ``(n, ·)`` can be indexed with it)."""
    if not isinstance(k, np.ndarray) or k.dtype.kind not in "iu":  # integer counts
        return False
    if int(n) != n or not 0 < n <= TABLE_MAX_TRIALS:
        return False
    return bool(k.size == 0 or (k.min() >= 0 and k.max() <= n))


#: A single integer count at one (n, α) reads the table once that (n, α) has been asked
#: :data:`SCALAR_TABLE_AFTER` times with n ≤ :data:`SCALAR_TABLE_MAX_TRIALS` (the screen bounds
#: one event per word and pair, 15,000 or more scalar bounds at the same n and α).
SCALAR_TABLE_AFTER = 8
#: Largest n whose table a run of single counts builds (2·(n + 1) evaluations, a few ms).
SCALAR_TABLE_MAX_TRIALS = 4_096
_SCALAR_ASKS: dict[tuple[int, float], int] = {}


def _table_for(k: np.ndarray | int, n: int, alpha: float) -> bool:
    """Whether a ratio bound over ``k`` reads the table at ``(n, alpha)``: an integer array of at
    least :data:`TABLE_MIN_COUNTS` counts in 0..n, or one integer count in 0..n at an (n, α)
    asked for single counts often enough (:data:`SCALAR_TABLE_AFTER`)."""
    if isinstance(k, np.ndarray):
        return k.size >= TABLE_MIN_COUNTS and counts_in_table(k, n)
    if isinstance(k, bool) or not isinstance(k, int | np.integer):
        return False
    if int(n) != n or not 0 < n <= SCALAR_TABLE_MAX_TRIALS or not 0 <= k <= n:
        return False
    key = (int(n), float(alpha))
    asked = _SCALAR_ASKS.get(key, 0)
    if asked >= SCALAR_TABLE_AFTER:
        return True
    if len(_SCALAR_ASKS) >= 4_096:  # many distinct (n, α), each asked rarely: start counting again
        _SCALAR_ASKS.clear()
    _SCALAR_ASKS[key] = asked + 1
    return False


@functools.lru_cache(maxsize=32)
def log_cp_tables(n: int, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """(:func:`log_cp_lower`, :func:`log_cp_upper`) at one-sided ``alpha`` for k = 0..n (read-only,
    computed once per (n, α); n ≤ :data:`TABLE_MAX_TRIALS`).

    Indexing them with integer counts gives, element by element, the values the two functions
    compute.
    """
    if int(n) != n or not 0 < n <= TABLE_MAX_TRIALS:
        raise ValueError(f"tables are kept for 1 ≤ n ≤ {TABLE_MAX_TRIALS:,} trials, got {n}")
    k = np.arange(n + 1, dtype=np.float64)
    lo, hi = log_cp_lower(k, n, alpha), log_cp_upper(k, n, alpha)
    lo.flags.writeable = False
    hi.flags.writeable = False
    return lo, hi


def cp_log_ratio_num(a: np.ndarray | int, n: int, alpha: float, *, in_table: bool = False) -> np.ndarray:
    """The first term of :func:`cp_log_ratio_lower`: ln CP⁻(a; n, α/2).

    Parameters
    ----------
    a : array_like
        Numerator counts.
    n : int
        Trials per count.
    alpha : float
        Error level of the **ratio** bound (this term takes half of it).

    Returns
    -------
    numpy.ndarray
        ln CP⁻(a; n, α/2) (−∞ where a = 0).
    """
    if in_table or _table_for(a, n, alpha):
        return log_cp_tables(int(n), float(alpha) / 2)[0][a]
    return log_cp_lower(a, n, alpha / 2)


def cp_log_ratio_den(b: np.ndarray | int, n: int, alpha: float, *, in_table: bool = False) -> np.ndarray:
    """The second term of :func:`cp_log_ratio_lower`: ln CP⁺(b; n, α/2).

    Parameters
    ----------
    b : array_like
        Denominator counts.
    n : int
        Trials per count.
    alpha : float
        Error level of the **ratio** bound (this term takes half of it).

    Returns
    -------
    numpy.ndarray
        ln CP⁺(b; n, α/2).
    """
    if in_table or _table_for(b, n, alpha):
        return log_cp_tables(int(n), float(alpha) / 2)[1][b]
    return log_cp_upper(b, n, alpha / 2)


def cp_log_ratio_lower(
    a: np.ndarray | int, b: np.ndarray | int, n: int, alpha: float, *, in_table: bool = False
) -> np.ndarray:
    """Lower confidence bound on ln(p_a / p_b) from two independent binomial counts.

    ln CP⁻(a; n, α/2) − ln CP⁺(b; n, α/2) with Clopper–Pearson bounds (Clopper and Pearson
    1934): each side fails with probability ≤ α/2, so by the union bound
    ``P(ln(p_a / p_b) ≥ bound) ≥ 1 − α``. −∞ where a = 0.

    Parameters
    ----------
    a, b : array_like
        Successes of the numerator and the denominator (broadcast together).
    n : int
        Trials behind each count.
    alpha : float
        Error level of the bound (split α/2 per count here).
    in_table : bool
        The caller has checked that ``a`` and ``b`` are integer arrays of counts in 0..n with
        n ≤ :data:`TABLE_MAX_TRIALS`: the bounds are read from :func:`log_cp_tables` without
        checking them again (the same values).

    Returns
    -------
    numpy.ndarray
        The bounds, float64.
    """
    return cp_log_ratio_num(a, n, alpha, in_table=in_table) - cp_log_ratio_den(b, n, alpha, in_table=in_table)


def cp_max_log_ratio(n: int, alpha: float) -> float:
    """The largest value :func:`cp_log_ratio_lower` can take at ``n`` trials: a = n, b = 0.

    ln CP⁻(n; n, α/2) − ln CP⁺(0; n, α/2) = ln (α/2)^{1/n} − ln(1 − (α/2)^{1/n}): no
    count of ``n`` draws per side can show a larger loss at level α.

    Parameters
    ----------
    n : int
        Trials per side.
    alpha : float
        Error level of the ratio bound.

    Returns
    -------
    float
        The bound.
    """
    return float(cp_log_ratio_lower(n, 0, n, alpha))


# --- Rényi divergence between two Bernoulli laws ---------------------------------------------
def renyi_order(order: float) -> float:
    """``order`` as a float, checked to be a Rényi order: finite and > 1 (ValueError otherwise)."""
    o = float(order)
    if not (math.isfinite(o) and o > 1.0):
        raise ValueError(f"the Rényi order must be finite and > 1, got {order!r}")
    return o


def bernoulli_renyi(p: np.ndarray | float, q: np.ndarray | float, order: float) -> np.ndarray:
    """max(D_α(Bern(p) ‖ Bern(q)), D_α(Bern(q) ‖ Bern(p))) for Rényi order α = ``order`` > 1.

    D_α(P ‖ Q) = ln(Σ P^α Q^(1−α)) / (α − 1) (Rényi 1961; Mironov 2017, *CSF*, Def. 3), here over
    the two outcomes of one event. By data processing, an event S with Pr[M(x) ∈ S] = p and
    Pr[M(x′) ∈ S] = q shows D_α(M(x) ‖ M(x′)) ≥ D_α(Bern(p) ‖ Bern(q)), and its mirror; a
    Rényi-DP claim of order α bounds both by its ε. Computed in log space (float64); +∞ where one
    law gives an outcome probability 0 that the other does not.

    Examples
    --------
    >>> round(float(bernoulli_renyi(0.5, 0.5, 2.0)), 12)
    0.0
    >>> round(float(bernoulli_renyi(0.8, 0.2, 2.0)), 4)  # ln(0.64/0.2 + 0.04/0.8)
    1.1787
    """
    o = renyi_order(order)
    p = np.clip(np.asarray(p, dtype=np.float64), 0.0, 1.0)
    q = np.clip(np.asarray(q, dtype=np.float64), 0.0, 1.0)

    def one(u: np.ndarray, v: np.ndarray) -> np.ndarray:
        with np.errstate(divide="ignore", invalid="ignore"):
            terms = []
            for a, b in ((u, v), (1.0 - u, 1.0 - v)):
                t = o * np.log(a) + (1.0 - o) * np.log(b)
                terms.append(np.where(a == 0.0, -np.inf, np.where(b == 0.0, np.inf, t)))
            return np.maximum(np.logaddexp(terms[0], terms[1]) / (o - 1.0), 0.0)

    return np.maximum(one(p, q), one(q, p))


def cp_renyi_lower(
    a: np.ndarray | int, b: np.ndarray | int, n: int, alpha: float, order: float
) -> np.ndarray:
    """Lower confidence bound on the Rényi divergence of order ``order`` between two output laws,
    from one event's counts: a of n draws of the first input, b of n of the second.

    With p ≥ CP⁻(a; n, α/2) and q ≤ CP⁺(b; n, α/2) (together with probability ≥ 1 − α), the
    divergence is at least :func:`bernoulli_renyi` at that corner when CP⁻ > CP⁺: it grows as p
    and q move apart, so the corner is the least of it over the confidence box. 0 where the
    intervals meet, −∞ where a = 0 (as :func:`cp_log_ratio_lower`, the pure-DP bound, whose
    corner this is).
    """
    a = np.asarray(a)
    lo = np.asarray(cp_lower(a, n, float(alpha) / 2.0), dtype=np.float64)
    hi = np.asarray(cp_upper(np.asarray(b), n, float(alpha) / 2.0), dtype=np.float64)
    d = np.where(lo > hi, bernoulli_renyi(lo, hi, order), 0.0)
    return np.where(a > 0, d, -np.inf)


def cp_max_renyi(n: int, alpha: float, order: float) -> float:
    """The largest value :func:`cp_renyi_lower` can take at ``n`` trials (a = n, b = 0)."""
    return float(cp_renyi_lower(n, 0, n, alpha, order))


def cp_log_ratio_interval(a: int, n_a: int, b: int, n_b: int, alpha: float) -> tuple[float, float]:
    """Clopper–Pearson bounds on ln(p_a / p_b) for two counts of different sizes (scalars).

    Lower: ln CP⁻(a; n_a, α/2) − ln CP⁺(b; n_b, α/2) (−∞ when a = 0); upper:
    ln CP⁺(a; n_a, α/2) − ln CP⁻(b; n_b, α/2) (+∞ when b = 0). Each end holds with
    probability ≥ 1 − α (union bound over its two counts), the pair of them with probability
    ≥ 1 − 2α. The logarithms are ``math.log`` of the bounds as floats.

    Parameters
    ----------
    a, n_a : int
        Successes and trials of the numerator.
    b, n_b : int
        Successes and trials of the denominator.
    alpha : float
        Error level of each end (split α/2 per count here).

    Returns
    -------
    (float, float)
        The lower and the upper bound.
    """
    side = alpha / 2
    lo = (
        math.log(float(cp_lower(a, n_a, side))) - math.log(float(cp_upper(b, n_b, side)))
        if a > 0
        else -math.inf
    )
    hi = (
        math.log(float(cp_upper(a, n_a, side))) - math.log(float(cp_lower(b, n_b, side)))
        if b > 0
        else math.inf
    )
    return lo, hi


# --- Wilson ----------------------------------------------------------------------------------
def _wilson(k: np.ndarray, n: int, alpha: float, upper: bool) -> np.ndarray:
    z = float(ndtri(1.0 - alpha))
    p = np.asarray(k, dtype=np.float64) / n
    centre = p + z * z / (2 * n)
    half = z * np.sqrt(np.maximum(p * (1 - p), 0.0) / n + z * z / (4.0 * n * n))
    return np.clip((centre + half if upper else centre - half) / (1 + z * z / n), 0.0, 1.0)


def wilson_lower(k: np.ndarray | int, n: int, alpha: float) -> np.ndarray:
    """One-sided Wilson score lower bound on a binomial proportion (Wilson 1927).

    With p̂ = k/n and z = Φ⁻¹(1 − α):
    (p̂ + z²/2n − z·√(p̂(1 − p̂)/n + z²/4n²)) / (1 + z²/n), clipped to [0, 1]. An
    approximation (not a guaranteed bound): used only to rank candidates.

    Parameters
    ----------
    k : array_like
        Successes.
    n : int
        Trials.
    alpha : float
        One-sided error level.

    Returns
    -------
    numpy.ndarray
        The bounds, float64.
    """
    return _wilson(k, n, alpha, False)


def wilson_upper(k: np.ndarray | int, n: int, alpha: float) -> np.ndarray:
    """One-sided Wilson score upper bound on a binomial proportion (Wilson 1927).

    With p̂ = k/n and z = Φ⁻¹(1 − α):
    (p̂ + z²/2n + z·√(p̂(1 − p̂)/n + z²/4n²)) / (1 + z²/n), clipped to [0, 1].

    Parameters
    ----------
    k : array_like
        Successes.
    n : int
        Trials.
    alpha : float
        One-sided error level.

    Returns
    -------
    numpy.ndarray
        The bounds, float64.
    """
    return _wilson(k, n, alpha, True)


def wilson_log_ratio_lower(
    a: np.ndarray | int, b: np.ndarray | int, n: int, alpha: float, *, in_table: bool = False
) -> np.ndarray:
    """The Wilson stand-in for :func:`cp_log_ratio_lower`: ln W⁻(a; α/2) − ln W⁺(b; α/2).

    Parameters
    ----------
    a, b : array_like
        Successes of the numerator and the denominator.
    n : int
        Trials behind each count.
    alpha : float
        Error level of the ratio (split α/2 per count here).
    in_table : bool
        As for :func:`cp_log_ratio_lower` (read from :func:`log_wilson_tables` unchecked).

    Returns
    -------
    numpy.ndarray
        The approximate bounds (−∞ where the lower Wilson bound is 0).
    """
    if in_table or (_table_for(a, n, alpha) and _table_for(b, n, alpha)):  # the same values, from a table
        lo, hi = log_wilson_tables(int(n), float(alpha) / 2)
        return lo[a] - hi[b]
    with np.errstate(divide="ignore"):
        return _log(wilson_lower(a, n, alpha / 2)) - _log(wilson_upper(b, n, alpha / 2))


@functools.lru_cache(maxsize=32)
def log_wilson_tables(n: int, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """(ln :func:`wilson_lower`, ln :func:`wilson_upper`) at one-sided ``alpha`` for k = 0..n
    (read-only, computed once per (n, α), as :func:`log_cp_tables`): the screen ranks the
    prefixes of tens of thousands of pairs at the same n and α."""
    if int(n) != n or not 0 < n <= TABLE_MAX_TRIALS:
        raise ValueError(f"tables are kept for 1 ≤ n ≤ {TABLE_MAX_TRIALS:,} trials, got {n}")
    k = np.arange(n + 1, dtype=np.float64)
    lo, hi = _log(wilson_lower(k, n, alpha)), _log(wilson_upper(k, n, alpha))
    lo.flags.writeable = False
    hi.flags.writeable = False
    return lo, hi


# --- Poisson tails (Chernoff) ----------------------------------------------------------------
def _h(u: np.ndarray) -> np.ndarray:
    """h(u) = u·ln u − u + 1 (1 at u = 0), the Poisson tail's rate function."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(u > 0, u * np.log(np.where(u > 0, u, 1.0)) - u + 1.0, 1.0)


def chernoff_lower_many(x: np.ndarray, alpha: float) -> np.ndarray:
    """Vectorised :func:`chernoff_lower` (bisection to 1e-12 relative).

    Parameters
    ----------
    x : array_like
        Observed sums.
    alpha : float
        One-sided error level.

    Returns
    -------
    numpy.ndarray
        The lower bounds on the means.
    """
    x = np.asarray(x, dtype=np.float64)
    target = math.log(1.0 / alpha)
    lo, hi = np.zeros_like(x), x.copy()
    for _ in range(64):  # μ·h(x/μ) decreases in μ on (0, x]: find where it crosses the target
        mid = 0.5 * (lo + hi)
        ratio = np.divide(x, mid, out=np.full_like(x, np.inf), where=mid > 0)
        val = np.where(mid > 0, mid * _h(ratio), x)
        big = val > target
        lo, hi = np.where(big, mid, lo), np.where(big, hi, mid)
    return np.where(x > target, hi, 0.0)


def chernoff_lower_exceeds(x: np.ndarray, bound: np.ndarray, alpha: float) -> np.ndarray:
    """``chernoff_lower_many(x, alpha) > bound``, decided without the bisection.

    μ·h(x/μ) decreases in μ on (0, x], so the lower bound exceeds ``bound`` exactly when
    ``bound`` is still excluded: ``bound < 0``, or ``0 ≤ bound < x`` with bound·h(x/bound) above
    ln(1/α) (at ``bound = 0`` the rate is +∞). Where x ≤ ln(1/α) the lower bound is 0. One
    evaluation of the rate function instead of 64 bisection steps (the pooled test's power
    simulation asks only for the comparison, thousands of times an audit).

    Parameters
    ----------
    x : array_like
        Observed sums.
    bound : array_like
        Values to compare the lower bounds with (broadcast against ``x``).
    alpha : float
        One-sided error level.

    Returns
    -------
    numpy.ndarray
        Boolean, True where the lower bound on the mean exceeds ``bound``.
    """
    x = np.asarray(x, dtype=np.float64)
    bound = np.broadcast_to(np.asarray(bound, dtype=np.float64), x.shape)
    target = math.log(1.0 / alpha)
    inside = (bound > 0) & (bound < x)
    safe = np.where(inside, bound, 1.0)
    rate = np.where(inside, safe * _h(np.where(inside, x, 1.0) / safe), np.inf)
    excluded = np.where(bound >= x, False, np.where(bound <= 0, True, rate > target))
    return np.where(x > target, excluded, bound < 0)


def chernoff_upper_many(y: np.ndarray, alpha: float) -> np.ndarray:
    """Vectorised :func:`chernoff_upper` (bisection to 1e-12 relative).

    Parameters
    ----------
    y : array_like
        Observed sums (negative values count as 0).
    alpha : float
        One-sided error level.

    Returns
    -------
    numpy.ndarray
        The upper bounds on the means.
    """
    y = np.maximum(np.asarray(y, dtype=np.float64), 0.0)
    target = math.log(1.0 / alpha)
    lo = y.copy()
    hi = y + 4.0 * target + 4.0 * np.sqrt(y * target) + 1.0  # ν·h(y/ν) ≥ target there
    for _ in range(64):
        mid = 0.5 * (lo + hi)
        small = mid * _h(np.divide(y, mid, out=np.zeros_like(y), where=mid > 0)) < target
        lo, hi = np.where(small, mid, lo), np.where(small, hi, mid)
    return lo


def chernoff_lower(x: float, alpha: float) -> float:
    """The smallest mean μ ≤ x with exp(−μ·h(x/μ)) ≥ α: a conservative lower confidence bound.

    Chernoff's bound on a Poisson tail, Pr[X ≥ x] ≤ exp(−μ·h(x/μ)) for x ≥ μ with
    h(u) = u·ln u − u + 1, holds for any weighted sum X of negatively associated binomial counts
    with weights in [0, 1] and mean μ (:mod:`dpcore.textaudit.pooled`): Pr[bound > E[X]] ≤ α.
    0 when x ≤ ln(1/α) (no positive mean excluded).

    Parameters
    ----------
    x : float
        The observed sum.
    alpha : float
        One-sided error level.

    Returns
    -------
    float
        The bound.
    """
    return float(chernoff_lower_many(np.array([x]), alpha)[0])


def chernoff_upper(y: float, alpha: float) -> float:
    """The largest mean ν ≥ y with exp(−ν·h(y/ν)) ≥ α: a conservative upper confidence bound.

    Chernoff's bound on a Poisson tail, Pr[Y ≤ y] ≤ exp(−ν·h(y/ν)) for y ≤ ν, holds for any sum
    Y of negatively associated binomial counts of mean ν: Pr[bound < E[Y]] ≤ α.

    Parameters
    ----------
    y : float
        The observed sum.
    alpha : float
        One-sided error level.

    Returns
    -------
    float
        The bound.
    """
    return float(chernoff_upper_many(np.array([y]), alpha)[0])


def chernoff_ratio_bounds(x: float, y: float, alpha: float) -> tuple[float, float]:
    """Lower bound L on E[X] and upper bound U on E[Y], each at α/2.

    With probability ≥ 1 − α both hold, so L > U shows E[X] > E[Y] and ln(L/U) is a lower bound
    on ln(E[X]/E[Y]).

    Parameters
    ----------
    x, y : float
        The observed sums (:func:`chernoff_lower`, :func:`chernoff_upper`).
    alpha : float
        Error level of the comparison (split α/2 per sum here).

    Returns
    -------
    (float, float)
        ``(chernoff_lower(x, α/2), chernoff_upper(y, α/2))``.
    """
    return chernoff_lower(x, alpha / 2), chernoff_upper(y, alpha / 2)


def chernoff_ratio_bounds_many(
    x: np.ndarray, y: np.ndarray, alpha: float, *, y_upper: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Vectorised :func:`chernoff_ratio_bounds`.

    Parameters
    ----------
    x, y : array_like
        The observed sums.
    alpha : float
        Error level of each comparison (split α/2 per sum here).
    y_upper : array_like, optional
        ``chernoff_ratio_upper_many(y, alpha)``, when the caller has it already (the same Y
        compared with many X); returned as given.

    Returns
    -------
    (numpy.ndarray, numpy.ndarray)
        ``(chernoff_lower_many(x, α/2), chernoff_upper_many(y, α/2))``.
    """
    up = chernoff_ratio_upper_many(y, alpha) if y_upper is None else np.asarray(y_upper, dtype=np.float64)
    return chernoff_lower_many(x, alpha / 2), up


def chernoff_ratio_lower_exceeds(x: np.ndarray, y_upper: np.ndarray, alpha: float) -> np.ndarray:
    """The comparison of :func:`chernoff_ratio_bounds_many`'s bounds: lower bound on E[X] (at
    α/2) > ``y_upper``, by :func:`chernoff_lower_exceeds`, without computing the lower bounds.

    Parameters
    ----------
    x : array_like
        The observed sums of X.
    y_upper : array_like
        The upper bounds on E[Y] (``chernoff_ratio_upper_many(y, alpha)``).
    alpha : float
        Error level of each comparison (split α/2 per sum here).

    Returns
    -------
    numpy.ndarray
        Boolean, True where ``chernoff_lower_many(x, α/2) > y_upper``.
    """
    return chernoff_lower_exceeds(x, y_upper, alpha / 2)


def chernoff_ratio_upper_many(y: np.ndarray, alpha: float) -> np.ndarray:
    """The upper bounds of :func:`chernoff_ratio_bounds_many`: ``chernoff_upper_many(y, α/2)``.

    Parameters
    ----------
    y : array_like
        The observed sums.
    alpha : float
        Error level of each comparison (α/2 for the sum here).

    Returns
    -------
    numpy.ndarray
        The upper bounds on the means.
    """
    return chernoff_upper_many(y, alpha / 2)


def poisson_log_tail(m: np.ndarray, mu: float) -> np.ndarray:
    """An upper bound on ln Pr[k ≥ m] for k ~ Poisson(mu), exact where it does not underflow.

    For m > mu − 1, Pr[k ≥ m] ≤ pmf(m)·(m + 1)/(m + 1 − mu) (the ratios of successive terms,
    mu/(j + 1) for j ≥ m, are at most mu/(m + 1): a geometric series); ``scipy.stats``'
    ``poisson.logsf`` is used where it is finite and above −700, the bound elsewhere.

    Parameters
    ----------
    m : array_like
        Thresholds.
    mu : float
        The Poisson mean.

    Returns
    -------
    numpy.ndarray
        The bounds on ln Pr[k ≥ m], float64.
    """
    from scipy.stats import poisson  # scipy.stats costs 0.3 s: only when needed

    m = np.asarray(m, dtype=np.float64)
    exact = poisson.logsf(m - 1, mu)
    with np.errstate(divide="ignore", invalid="ignore"):
        bound = poisson.logpmf(m, mu) + np.log((m + 1) / np.maximum(m + 1 - mu, 1e-300))
    return np.where(np.isfinite(exact) & (exact > -700), exact, np.where(m + 1 > mu, bound, exact))
