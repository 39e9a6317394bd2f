"""Monte-Carlo audit for any (black-box) mechanism, chunked so memory stays bounded.

Every trial is counted (the published code kept only its last chunk for n > 16).

- Real-sampler (black-box) path, the default: full output vectors are drawn through the
  mechanism's own ``mechanism.sample`` in chunks of at most :data:`CHUNK_ELEMENTS` values,
  thresholded, and the number of ones K per trial is histogrammed. This is the only path that can
  catch a sampler bug (the point of Habernal 2022's check).
- Model-based path (``model_based=True``, mechanisms declaring
  :class:`dpcore.mechanisms.IIDAuditable` only): K is drawn from ``Binomial(n, p)`` with the
  mechanism's *declared* per-coordinate probability p — the histogram of T trials is exactly
  ``Multinomial(T, Binomial(n, p) pmf)``, one O(n) step. It agrees with the exact value by
  construction, so it shows nothing about the sampler; :func:`check_declared_probabilities` draws
  real coordinates first and the audit refuses the shortcut when they disagree with p.

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
from dpcore.validation import DPCoreError

__all__ = [
    "CROSSCHECK_ALPHA",
    "CROSSCHECK_DRAWS",
    "MCCounts",
    "check_declared_probabilities",
    "declared_model_check",
    "lr_from_counts",
    "majority_from_counts",
    "sample_counts",
]

ProgressFn = Callable[[int, int], None]

#: Elements per chunk in real-sampler sampling (256K float64 = 2 MiB per array: small enough to
#: stay in cache, which measured 1.5–3× faster than 32 MiB chunks on the benchmark machine).
CHUNK_ELEMENTS = 1 << 18
#: Real single-coordinate draws per input for the model-based cross-check.
CROSSCHECK_DRAWS = 1_000_000
#: Family-wise error of the cross-check (both inputs together): a correct mechanism is refused
#: the model-based shortcut with probability at most this.
CROSSCHECK_ALPHA = 1e-6


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
    model_based: bool,
    threshold: float,
    tick: Callable[[int], None],
) -> np.ndarray:
    n = mech.dim
    hist = np.zeros(n + 1, dtype=np.int64)
    if model_based:
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
        if z.shape != (m, n):
            raise DPCoreError(f"{mech!r}.sample returned shape {z.shape}, expected {(m, n)}")
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
    model_based: bool = False,
    threshold: float = 0.5,
    progress: ProgressFn | None = None,
) -> MCCounts:
    """Run ``trials`` trials on each of 0ⁿ and 1ⁿ and return the count histograms.

    By default every trial runs the mechanism's real sampler (``mech.sample``), chunked. With
    ``model_based=True`` (only for :class:`IIDAuditable` mechanisms) K is drawn from the declared
    Binomial instead; callers should run :func:`check_declared_probabilities` first.

    Four independent streams are spawned from ``seed`` (two inputs × two halves), so the result
    is reproducible and independent of chunking.
    """
    from dpcore.rng import spawn_rngs

    if model_based and not isinstance(mech, IIDAuditable):
        raise DPCoreError("model-based sampling needs a mechanism that declares i.i.d. coordinates")
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
                model_based=model_based,
                threshold=threshold,
                tick=tick,
            )
    return MCCounts(hist=hist, trials=trials)


def _agreement(
    declared_logp: np.ndarray, ones: np.ndarray, draws: int, alpha: float
) -> dict[str, object]:
    """Two-sided Clopper–Pearson test of observed ones against the declared P(z_i ≥ t), per input.

    Each input is tested at ``alpha/2`` (Bonferroni), so a mechanism whose sampler matches its
    declaration fails with probability at most ``alpha``.
    """
    a = alpha / 4.0  # two sides × two inputs
    declared = np.exp(np.asarray(declared_logp, dtype=np.float64))
    ones = np.asarray(ones, dtype=np.float64)
    lo = cp_lower(ones, draws, a)
    hi = cp_upper(ones, draws, a)
    ok = (declared >= lo - 1e-15) & (declared <= hi + 1e-15)
    return {
        "draws_per_input": int(draws),
        "declared": [float(v) for v in declared],
        "observed": [float(v) for v in ones / draws],
        "interval": [[float(lo[i]), float(hi[i])] for i in range(2)],
        "alpha": float(alpha),
        "agrees": bool(np.all(ok)),
    }


def check_declared_probabilities(
    mech: VectorMechanism,
    seed: int | np.random.SeedSequence,
    *,
    draws: int = CROSSCHECK_DRAWS,
    threshold: float = 0.5,
    alpha: float = CROSSCHECK_ALPHA,
) -> dict[str, object]:
    """Draw real coordinates from ``mech.sample`` and test them against the declared probabilities.

    For each input ``bⁿ`` (b ∈ {0, 1}) at least ``draws`` single coordinates are drawn through the
    real sampler (``⌈draws/n⌉`` output vectors, every coordinate used), the fraction at or above
    ``threshold`` is compared with the declared ``P(z_i ≥ threshold)`` by a two-sided exact
    (Clopper–Pearson) test, and ``agrees`` is False when a declared value lies outside the
    interval. Returns the declared and observed fractions, the intervals and ``alpha``.
    """
    if not isinstance(mech, IIDAuditable):
        raise DPCoreError("the cross-check needs a mechanism that declares i.i.d. coordinates")
    from dpcore.rng import spawn_rngs

    n = int(mech.dim)
    rows = -(-int(draws) // n)
    total = rows * n
    rngs = spawn_rngs(seed, 2)
    ones = np.zeros(2, dtype=np.int64)
    step = max(1, CHUNK_ELEMENTS // n)
    for b in (0, 1):
        x = np.full(n, float(b))
        done = 0
        while done < rows:
            m = min(step, rows - done)
            ones[b] += int(np.count_nonzero(mech.sample(x, m, rngs[b]) >= threshold))
            done += m
    lp = mech.threshold_logprobs(threshold)
    out = _agreement(lp[:, 1], ones, total, alpha)
    out["source"] = "cross-check draws of the real sampler"
    return out


def declared_model_check(
    mech: VectorMechanism, counts: MCCounts, *, alpha: float = CROSSCHECK_ALPHA
) -> dict[str, object] | None:
    """From a real-sampler run's histograms, test the pooled coordinates against the declaration.

    Under a correct i.i.d. declaration the total number of ones over T trials of n coordinates
    is Binomial(T·n, p) exactly, so this costs nothing extra. None for mechanisms that declare
    nothing.
    """
    if not isinstance(mech, IIDAuditable):
        return None
    n = counts.hist.shape[-1] - 1
    ones = (counts.total * np.arange(n + 1)).sum(axis=1)
    lp = mech.threshold_logprobs(0.5)
    out = _agreement(lp[:, 1], ones, counts.trials * n, alpha)
    out["source"] = "the audit's own real-sampler draws"
    return out


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
