"""Monte-Carlo audit for any (black-box) mechanism, chunked so memory stays bounded.

Every trial is counted (the published code kept only its last chunk for n > 16).

- Black-box path (any mechanism, or ``blackbox=True``): full output vectors are drawn through
  ``mechanism.sample`` in chunks of at most :data:`CHUNK_ELEMENTS` values, thresholded, and the
  number of ones K per trial is histogrammed.
- i.i.d. path (mechanisms declaring :class:`dpcore.mechanisms.IIDAuditable`): K is exactly
  ``Binomial(n, p)`` per trial — the sufficient statistic of the attacks — so the histogram of T
  trials is exactly ``Multinomial(T, Binomial(n, p) pmf)`` and is drawn in one O(n) step. This is
  the same distribution as running the T trials one by one.

Statistics
----------
- Majority vote (Habernal 2022 §4): point estimate from the counts, and a simultaneous
  Clopper–Pearson box for the two binomial proportions (each side at ``α/4``), which gives a
  lower and an upper bound on ε holding together with confidence ``1 − α`` whichever of the four
  ratios is largest.
- Likelihood-ratio attack: the cut ``{K ≥ k}`` (or its complement) and direction are *chosen* on
  one half of the trials, and the loss is *estimated* on the other half (one-sided bounds at
  ``α/2`` each), so selection does not bias the bound.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from dpcore.audit.bounds import cp_lower, cp_upper
from dpcore.audit.exact import binomial_logpmf
from dpcore.audit.loss import decision_loss, ratio_loss
from dpcore.mechanisms.base import IIDAuditable, VectorMechanism

__all__ = ["MCCounts", "lr_from_counts", "majority_from_counts", "sample_counts"]

ProgressFn = Callable[[int, int], None]

#: Elements per chunk in black-box sampling (4M float64 = 32 MiB per array).
CHUNK_ELEMENTS = 1 << 22


@dataclass(frozen=True)
class MCCounts:
    """Histograms of K (ones after thresholding) for the two halves of the trials.

    ``hist[h][b]`` is the histogram (length n + 1) for input ``bⁿ`` in half ``h``
    (0 = selection, 1 = evaluation).
    """

    hist: np.ndarray  # shape (2, 2, n + 1), int64
    trials: int

    @property
    def total(self) -> np.ndarray:
        """Histograms over all trials, shape (2, n + 1)."""
        return self.hist.sum(axis=0)


def _histogram_one(
    mech: VectorMechanism,
    bit: int,
    trials: int,
    rng: np.random.Generator,
    *,
    blackbox: bool,
    threshold: float,
    tick: Callable[[int], None],
) -> np.ndarray:
    n = mech.dim
    hist = np.zeros(n + 1, dtype=np.int64)
    if not blackbox and isinstance(mech, IIDAuditable):
        # The histogram of `trials` i.i.d. Binomial(n, p) counts is exactly
        # Multinomial(trials, pmf): one O(n) draw replaces `trials` binomial draws.
        lp = mech.threshold_logprobs(threshold)
        pmf = np.exp(binomial_logpmf(n, lp[bit, 1], lp[bit, 0]))
        pmf /= pmf.sum()
        hist = rng.multinomial(trials, pmf).astype(np.int64)
        tick(trials)
        return hist
    x = np.full(n, float(bit))
    rows = max(1, CHUNK_ELEMENTS // n)
    done = 0
    while done < trials:
        m = min(rows, trials - done)
        z = mech.sample(x, m, rng)
        k = np.count_nonzero(z >= threshold, axis=1)
        hist += np.bincount(k, minlength=n + 1)
        done += m
        tick(m)
    return hist


def sample_counts(
    mech: VectorMechanism,
    trials: int,
    seed: int | np.random.SeedSequence,
    *,
    blackbox: bool = False,
    threshold: float = 0.5,
    progress: ProgressFn | None = None,
) -> MCCounts:
    """Run ``trials`` trials on each of 0ⁿ and 1ⁿ and return the count histograms.

    Four independent streams are spawned from ``seed`` (two inputs × two halves), so the result
    is reproducible and independent of chunking.
    """
    from dpcore.rng import spawn_rngs

    rngs = spawn_rngs(seed, 4)
    halves = (trials // 2, trials - trials // 2)
    total_work = 2 * trials
    state = {"done": 0}

    def tick(m: int) -> None:
        state["done"] += m
        if progress is not None:
            progress(state["done"], total_work)

    hist = np.zeros((2, 2, mech.dim + 1), dtype=np.int64)
    for h in (0, 1):
        for b in (0, 1):
            hist[h, b] = _histogram_one(
                mech,
                b,
                halves[h],
                rngs[2 * h + b],
                blackbox=blackbox,
                threshold=threshold,
                tick=tick,
            )
    return MCCounts(hist=hist, trials=trials)


def _log(x: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore"):
        return np.log(x)


def majority_from_counts(
    total: np.ndarray, trials: int, *, confidence: float, delta: float = 0.0
) -> dict[str, float]:
    """Point estimate and simultaneous Clopper–Pearson bounds for the majority-vote loss."""
    n = total.shape[1] - 1
    m = n // 2
    c = total[:, m + 1 :].sum(axis=1).astype(np.float64)  # guess-1 counts under D, D'
    p1 = c / trials
    point = decision_loss(_log(np.array([1 - p1[0], p1[0]])), _log(np.array([1 - p1[1], p1[1]])), delta)
    a = (1.0 - confidence) / 4.0
    lo1, hi1 = cp_lower(c, trials, a), cp_upper(c, trials, a)
    lo0, hi0 = 1.0 - hi1, 1.0 - lo1  # bounds on P(guess 0)
    lower = max(
        float(ratio_loss(_log(lo1[0]), _log(hi1[1]), delta)),
        float(ratio_loss(_log(lo1[1]), _log(hi1[0]), delta)),
        float(ratio_loss(_log(lo0[0]), _log(hi0[1]), delta)),
        float(ratio_loss(_log(lo0[1]), _log(hi0[0]), delta)),
    )
    upper = max(
        float(ratio_loss(_log(hi1[0]), _log(lo1[1]), delta)),
        float(ratio_loss(_log(hi1[1]), _log(lo1[0]), delta)),
        float(ratio_loss(_log(hi0[0]), _log(lo0[1]), delta)),
        float(ratio_loss(_log(hi0[1]), _log(lo0[0]), delta)),
    )
    return {
        "point": point,
        "lower": lower,
        "upper": max(upper, point),
        "guess1_d": int(c[0]),
        "guess1_dprime": int(c[1]),
    }


def _cut_counts(hist: np.ndarray) -> np.ndarray:
    """For a (2, n+1) histogram: counts of ``K ≥ k`` for k = 0..n+1, shape (2, n+2)."""
    up = np.zeros((2, hist.shape[1] + 1), dtype=np.int64)
    up[:, :-1] = np.cumsum(hist[:, ::-1], axis=1)[:, ::-1]
    return up


def _event_counts(hist: np.ndarray, half_trials: int) -> np.ndarray:
    """Counts for the four (numerator, denominator) event pairs at every cut: (4, 2, n+2)."""
    up = _cut_counts(hist)
    lo = half_trials - up
    return np.stack(
        [
            np.stack([up[0], up[1]]),  # P(K≥k | D)  / P(K≥k | D')
            np.stack([up[1], up[0]]),  # P(K≥k | D') / P(K≥k | D)
            np.stack([lo[0], lo[1]]),  # P(K<k | D)  / P(K<k | D')
            np.stack([lo[1], lo[0]]),  # P(K<k | D') / P(K<k | D)
        ]
    )


def lr_from_counts(counts: MCCounts, *, confidence: float, delta: float = 0.0) -> dict[str, float]:
    """Likelihood-ratio attack with a selection/evaluation split of the trials."""
    alpha = (1.0 - confidence) / 2.0
    t_sel, t_eval = counts.trials // 2, counts.trials - counts.trials // 2
    sel = _event_counts(counts.hist[0], t_sel).astype(np.float64)
    lb_sel = ratio_loss(
        _log(cp_lower(sel[:, 0], t_sel, alpha)), _log(cp_upper(sel[:, 1], t_sel, alpha)), delta
    )
    pair, cut = np.unravel_index(int(np.argmax(lb_sel)), lb_sel.shape)
    ev = _event_counts(counts.hist[1], t_eval)[pair, :, cut].astype(np.float64)
    point = float(ratio_loss(_log(ev[0] / t_eval), _log(ev[1] / t_eval), delta))
    lower = float(
        ratio_loss(_log(cp_lower(ev[0], t_eval, alpha)), _log(cp_upper(ev[1], t_eval, alpha)), delta)
    )
    return {"point": point, "lower": lower, "cut": int(cut)}
