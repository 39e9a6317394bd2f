"""Privacy loss of a binary decision between the neighbours D = 0ⁿ and D' = 1ⁿ.

Habernal (2022) §4, eq. (12): with equal priors, the attacker's precision for guess y estimates
``P(D | y)``, and the empirical loss is ``max_y |ln P(D | y) − ln P(D' | y)|``. Since
``P(D | y) / P(D' | y) = P(y | D) / P(y | D')``, this is the loss of the post-processed binary
release; for an ε-DP mechanism it is ≤ ε for every decision rule (post-processing).

For an (ε, δ) claim the comparable quantity is the smallest ε' with
``P(S | A) ≤ e^{ε'} P(S | B) + δ`` for the events used: ``ln((P(S|A) − δ) / P(S|B))``.
"""

from __future__ import annotations

import numpy as np

__all__ = ["decision_loss", "ratio_loss"]


def ratio_loss(log_num: np.ndarray, log_den: np.ndarray, delta: float = 0.0) -> np.ndarray:
    """``ln((P_num − δ)/P_den)`` from log-probabilities, elementwise, floored at 0.

    Conventions: 0 when ``P_num ≤ δ`` (including both zero); ``+inf`` when ``P_num > δ`` and
    ``P_den = 0``.
    """
    log_num = np.asarray(log_num, dtype=np.float64)
    log_den = np.asarray(log_den, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        if delta > 0.0:
            num = np.exp(log_num)
            excess = num - delta
            log_excess = np.where(excess > 0, np.log(np.where(excess > 0, excess, 1.0)), -np.inf)
        else:
            log_excess = log_num
        out = np.where(
            np.isneginf(log_excess),
            0.0,
            np.where(np.isneginf(log_den), np.inf, log_excess - log_den),
        )
    return np.maximum(out, 0.0)


def decision_loss(log_p_d: np.ndarray, log_p_dprime: np.ndarray, delta: float = 0.0) -> float:
    """Loss of a decision with outcome log-probabilities ``log_p_d[y]`` (under D), ``[y]`` (D').

    Returns ``max_y max(ratio_loss(D→D'), ratio_loss(D'→D))``.
    """
    a = np.asarray(log_p_d, dtype=np.float64)
    b = np.asarray(log_p_dprime, dtype=np.float64)
    return float(max(np.max(ratio_loss(a, b, delta)), np.max(ratio_loss(b, a, delta))))
