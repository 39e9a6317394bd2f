"""Analytic Gaussian mechanism calibration (Balle and Wang, ICML 2018).

Theorem 8 of Balle & Wang (2018): ``f(x) + N(0, σ² I)`` with global L2 sensitivity Δ is
(ε, δ)-DP **if and only if**

    Φ(Δ/(2σ) − εσ/Δ) − e^ε Φ(−Δ/(2σ) − εσ/Δ) ≤ δ.

The left side decreases in σ, so the smallest such σ is found by bisection (their Algorithm 1
solves the same equation). The e^ε term is evaluated in log space, so ε up to 1000 is safe.
"""

from __future__ import annotations

import math

from scipy.special import log_ndtr, ndtr

from dpcore.validation import check_epsilon, check_finite_float, check_probability

__all__ = ["analytic_gaussian_delta", "analytic_gaussian_sigma"]


def analytic_gaussian_delta(sigma: float, *, epsilon: float, sensitivity: float) -> float:
    """The smallest δ for which ``N(0, σ²)`` noise is (ε, δ)-DP at L2 sensitivity Δ (Thm 8)."""
    a = sensitivity / (2.0 * sigma)
    c = epsilon * sigma / sensitivity
    first = float(ndtr(a - c))
    second = math.exp(epsilon + float(log_ndtr(-a - c)))
    return max(first - second, 0.0)


def analytic_gaussian_sigma(*, epsilon: float, delta: float, sensitivity: float) -> float:
    """The smallest σ making the Gaussian mechanism (ε, δ)-DP (Balle & Wang 2018, Thm 8).

    Parameters
    ----------
    epsilon, delta:
        Target privacy; ``0 < ε ≤ 1000``, ``0 < δ < 1``.
    sensitivity:
        Global L2 sensitivity Δ₂ > 0.

    Returns
    -------
    float
        σ with ``analytic_gaussian_delta(σ) ≤ δ`` and relative slack below 1e-12.
    """
    eps = check_epsilon(epsilon)
    dlt = check_probability(delta, name="delta", open_low=True, open_high=True)
    sens = check_finite_float(sensitivity, name="sensitivity", min_value=0.0, min_inclusive=False)
    lo, hi = 1e-12 * sens, sens
    while analytic_gaussian_delta(hi, epsilon=eps, sensitivity=sens) > dlt:
        hi *= 2.0
    for _ in range(200):  # bisection in log σ
        mid = math.sqrt(lo * hi)
        if analytic_gaussian_delta(mid, epsilon=eps, sensitivity=sens) > dlt:
            lo = mid
        else:
            hi = mid
        if hi / lo - 1.0 < 1e-13:
            break
    return hi
