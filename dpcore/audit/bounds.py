"""Clopper–Pearson bounds for binomial proportions (vectorised).

As in DP-Sniper's ``binomial_cdf.py``: the exact (conservative) interval obtained by inverting
the binomial CDF, expressed through Beta quantiles. The quantile is the regularised incomplete
beta function's inverse, ``scipy.special.betaincinv(a, b, q)`` (what ``scipy.stats.beta.ppf``
calls): importing ``scipy.stats`` costs about 0.8 s, which every page and command that audits would
pay on its first use.
"""

from __future__ import annotations

import numpy as np
from scipy.special import betaincinv

__all__ = ["cp_lower", "cp_upper"]


def cp_lower(k: np.ndarray | int, n: int, alpha: float) -> np.ndarray:
    """One-sided lower bound: ``P(p ≥ bound) ≥ 1 − α`` for ``k`` successes in ``n`` trials."""
    k = np.asarray(k, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        out = betaincinv(k, n - k + 1.0, alpha)
    return np.where(k <= 0, 0.0, out)


def cp_upper(k: np.ndarray | int, n: int, alpha: float) -> np.ndarray:
    """One-sided upper bound: ``P(p ≤ bound) ≥ 1 − α`` for ``k`` successes in ``n`` trials."""
    k = np.asarray(k, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        out = betaincinv(k + 1.0, n - k, 1.0 - alpha)
    return np.where(k >= n, 1.0, out)
