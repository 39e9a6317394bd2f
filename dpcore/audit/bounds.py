"""Clopper–Pearson bounds for binomial proportions (vectorised).

As in DP-Sniper's ``binomial_cdf.py``: the exact (conservative) interval obtained by inverting
the binomial CDF, expressed through Beta quantiles.
"""

from __future__ import annotations

import numpy as np
from scipy.stats import beta

__all__ = ["cp_lower", "cp_upper"]


def cp_lower(k: np.ndarray | int, n: int, alpha: float) -> np.ndarray:
    """One-sided lower bound: ``P(p ≥ bound) ≥ 1 − α`` for ``k`` successes in ``n`` trials."""
    k = np.asarray(k, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        out = beta.ppf(alpha, k, n - k + 1.0)
    return np.where(k <= 0, 0.0, out)


def cp_upper(k: np.ndarray | int, n: int, alpha: float) -> np.ndarray:
    """One-sided upper bound: ``P(p ≤ bound) ≥ 1 − α`` for ``k`` successes in ``n`` trials."""
    k = np.asarray(k, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        out = beta.ppf(1.0 - alpha, k + 1.0, n - k)
    return np.where(k >= n, 1.0, out)
