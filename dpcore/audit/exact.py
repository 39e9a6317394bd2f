"""Exact audit for mechanisms with i.i.d. coordinates (closed form, log space).

When every coordinate of ``M(bⁿ)`` is i.i.d., the number K of coordinates thresholded to 1 is
``Binomial(n, p_b)`` with ``p_b = P(z_i ≥ 1/2 | x = bⁿ)``. Everything the attacks need is then a
tail of a binomial, computed here from the log-pmf

    ln P(K = k) = ln C(n, k) + k ln p + (n − k) ln(1 − p)

with ``ln C`` from log-gamma and tails by log-sum-exp, so the values stay finite and accurate at
n = 4096 even where the probabilities are below 1e-300.
"""

from __future__ import annotations

import numpy as np
from scipy.special import gammaln

from dpcore.audit.loss import decision_loss, ratio_loss
from dpcore.logspace import logsumexp

__all__ = [
    "binomial_logpmf",
    "count_tail_logprobs",
    "exact_lr_loss",
    "exact_majority_loss",
    "majority_logprobs",
]


def binomial_logpmf(n: int, log_p: float, log_q: float) -> np.ndarray:
    """``ln P(K = k)`` for ``k = 0..n``, ``K ~ Bin(n, p)``, given ``ln p`` and ``ln(1 − p)``."""
    k = np.arange(n + 1, dtype=np.float64)
    log_choose = gammaln(n + 1.0) - gammaln(k + 1.0) - gammaln(n - k + 1.0)
    with np.errstate(invalid="ignore"):
        t1 = np.where(k > 0, k * log_p, 0.0)
        t2 = np.where(n - k > 0, (n - k) * log_q, 0.0)
    return log_choose + t1 + t2


def majority_logprobs(logpmf: np.ndarray) -> np.ndarray:
    """``[ln P(guess 0), ln P(guess 1)]`` for the majority vote: guess 1 iff K > n/2 (tie → 0)."""
    n = logpmf.size - 1
    m = n // 2
    return np.array([logsumexp(logpmf[: m + 1]), logsumexp(logpmf[m + 1 :])])


def count_tail_logprobs(logpmf: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Upper and lower tails for every cut k = 0..n+1.

    Returns ``(log P(K ≥ k), log P(K < k))``, each of length n + 2.
    """
    n1 = logpmf.size
    upper = np.full(n1 + 1, -np.inf)
    upper[:n1] = np.logaddexp.accumulate(logpmf[::-1])[::-1]
    lower = np.full(n1 + 1, -np.inf)
    lower[1:] = np.logaddexp.accumulate(logpmf)
    return upper, lower


def exact_majority_loss(logpmf_d: np.ndarray, logpmf_dp: np.ndarray, delta: float = 0.0) -> float:
    """Exact empirical loss of Habernal's majority-vote attack."""
    return decision_loss(majority_logprobs(logpmf_d), majority_logprobs(logpmf_dp), delta)


def exact_lr_loss(logpmf_d: np.ndarray, logpmf_dp: np.ndarray, delta: float = 0.0) -> tuple[float, int]:
    """Exact loss of the optimal likelihood-ratio attack on the thresholded output.

    The binomial family has a monotone likelihood ratio in K, so by Neyman–Pearson the most
    powerful tests between D and D' that see the thresholded bits are the cuts ``{K ≥ k}`` and
    their complements. The loss is the largest over all cuts (the majority vote is one of them).

    Returns
    -------
    (loss, k)
        The loss and the cut ``k`` attaining it.
    """
    up_d, lo_d = count_tail_logprobs(logpmf_d)
    up_p, lo_p = count_tail_logprobs(logpmf_dp)
    per_cut = np.max(
        np.stack(
            [
                ratio_loss(up_d, up_p, delta),
                ratio_loss(up_p, up_d, delta),
                ratio_loss(lo_d, lo_p, delta),
                ratio_loss(lo_p, lo_d, delta),
            ]
        ),
        axis=0,
    )
    k = int(np.argmax(per_cut))
    return float(per_cut[k]), k
