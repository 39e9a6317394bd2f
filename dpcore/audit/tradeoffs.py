"""The vector audit's tests as a trade-off pair: what an observer of the thresholded output can do.

The audit tells D = 0ⁿ (the null) from D′ = 1ⁿ (the alternative) by thresholding every coordinate
at ½ and looking at the count K of ones. Any test on K is post-processing of the release, so the
claim's trade-off function f_{ε,δ} (:mod:`dpcore.tradeoff`) bounds it: at FPR α no test on K has
a TPR above 1 − f_{ε,δ}(α).

Exact (``method="exact"``, mechanisms declaring i.i.d. coordinates)
    K ~ Binomial(n, p_b) under bⁿ. The optimal ROC between the two binomials
    (:func:`dpcore.tradeoff.roc_from_logpmfs`) is the best any observer of the *thresholded*
    output can do (K is sufficient for the bits, which are exchangeable); an observer of the raw
    real-valued output may do better. The majority vote and the likelihood-ratio cut are exact
    points on or under it.

Monte-Carlo (``method="mc"``)
    Each event is a :class:`~dpcore.tradeoff.Box` of Clopper–Pearson intervals from the trial
    counts, and all boxes hold together with probability ≥ ``confidence`` (union bound over a
    family fixed before the data, α = 1 − confidence):

    - the majority vote {K > n/2}, from all trials, at α/4;
    - the likelihood-ratio cut {K ≥ k}, *chosen* on the selection half of the trials and counted
      on the evaluation half only (as ``lr_lower_bound``), at α/4: the choice does not bias it;
    - the empirical ROC: every cut {K ≥ k}, k = 1..n, from all trials, each at α/(2n)
      (Bonferroni over all n cuts, whichever are shown). Only cuts with distinct counts are
      kept, and cuts that no trial or every trial passed under both inputs are left out (a
      subset of boxes that hold together still holds together).

    The TPR at 1% and 5% FPR is read from these boxes (the hulls of their corners,
    :func:`dpcore.tradeoff.tpr_at_fpr_entry`), so its ``lower`` and ``upper`` hold at
    ``confidence`` too. When the mechanism declares i.i.d. coordinates, the exact curve of its
    declared probabilities is drawn beside the boxes and each entry carries its ``exact_tpr``; the
    boxes measure the real sampler, the curve the declaration.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dpcore.formatting import percent
from dpcore.pairtest.budget import per_test
from dpcore.tradeoff import Box, TradeoffPair, roc_from_logpmfs

__all__ = [
    "ALT",
    "NULL",
    "UNIT",
    "exact_pair",
    "mc_pair",
    "observer_line",
    "observer_record",
]

NULL = "0ⁿ"
ALT = "1ⁿ"
#: What the observer sees, for the sentences.
UNIT = "one thresholded release (its count of ones)"

_EXACT_NOTE = (
    "Exact rates. The curve is the optimal (Neyman–Pearson) ROC between K ~ Binomial(n, p_0) and "
    "K ~ Binomial(n, p_1), K the number of coordinates ≥ ½: the best any observer of the "
    "thresholded output can do (an observer of the raw output may do better). The majority vote "
    "and the likelihood-ratio cut are points of it or under it."
)


def _tail(logpmf: np.ndarray, k: int) -> float:
    """P(K ≥ k) from ``ln P(K = ·)`` (0 beyond n)."""
    if k > logpmf.size - 1:
        return 0.0
    return float(np.exp(logpmf[max(k, 0) :]).sum())


def exact_pair(
    logpmf_null: np.ndarray,
    logpmf_alt: np.ndarray,
    *,
    epsilon: float,
    delta: float,
    lr_cut: int,
) -> TradeoffPair:
    """The exact audit as a :class:`~dpcore.tradeoff.TradeoffPair`: the optimal ROC between the
    two count distributions, and the majority vote and the LR cut ``{K ≥ lr_cut}`` as exact points.

    ``epsilon``/``delta`` are the claim (for 0ⁿ and 1ⁿ, which are neighbours of the audit).
    """
    n = logpmf_null.size - 1
    m = n // 2 + 1  # majority vote: guess 1ⁿ iff K > n/2
    fpr, tpr = roc_from_logpmfs(logpmf_null, logpmf_alt)
    boxes = (
        Box.exact(_tail(logpmf_null, m), _tail(logpmf_alt, m), f"majority vote: K ≥ {m}"),
        Box.exact(
            _tail(logpmf_null, lr_cut), _tail(logpmf_alt, lr_cut), f"likelihood-ratio cut: K ≥ {lr_cut}"
        ),
    )
    return TradeoffPair(
        null=NULL,
        alt=ALT,
        epsilon=float(epsilon),
        delta=float(delta),
        boxes=boxes,
        exact_fpr=tuple(fpr.tolist()),
        exact_tpr=tuple(tpr.tolist()),
        unit=UNIT,
        note=_EXACT_NOTE,
    )


def _at_least(hist: np.ndarray) -> np.ndarray:
    """For a (2, n + 1) histogram of K: counts of ``K ≥ k`` for k = 0..n + 1, shape (2, n + 2)."""
    up = np.zeros((2, hist.shape[1] + 1), dtype=np.int64)
    up[:, :-1] = np.cumsum(hist[:, ::-1], axis=1)[:, ::-1]
    return up


def mc_pair(
    hist: np.ndarray,
    trials: int,
    *,
    epsilon: float,
    delta: float,
    confidence: float,
    lr_cut: int,
    exact: tuple[np.ndarray, np.ndarray] | None = None,
) -> TradeoffPair:
    """The Monte-Carlo audit as a :class:`~dpcore.tradeoff.TradeoffPair` (module docstring).

    Parameters
    ----------
    hist
        ``MCCounts.hist``: shape (2 halves, 2 inputs, n + 1), the histograms of K.
    trials
        Trials per input (both halves).
    confidence
        All boxes hold together with at least this probability.
    lr_cut
        The cut chosen on the selection half (``hist[0]``); its box counts ``hist[1]`` only.
    exact
        ``(ln P(K = ·) under 0ⁿ, under 1ⁿ)`` from declared probabilities, or None.
    """
    alpha = 1.0 - float(confidence)
    hist = np.asarray(hist, dtype=np.int64)
    n = hist.shape[-1] - 1
    t_eval = trials - trials // 2
    total = _at_least(hist.sum(axis=0))
    evaluation = _at_least(hist[1])
    m = n // 2 + 1
    boxes = Box.many_from_counts(
        total[0, [m]],
        trials,
        total[1, [m]],
        trials,
        alpha=per_test(alpha, 4),
        labels=[f"majority vote: K ≥ {m}"],
    )
    boxes += Box.many_from_counts(
        evaluation[0, [lr_cut]],
        t_eval,
        evaluation[1, [lr_cut]],
        t_eval,
        alpha=per_test(alpha, 4),
        labels=[f"likelihood-ratio cut: K ≥ {lr_cut} (chosen on one half, counted on the other)"],
    )
    ks = np.arange(1, n + 1)
    pairs = np.stack([total[0, ks], total[1, ks]], axis=1)
    _, first = np.unique(pairs, axis=0, return_index=True)
    keep = [
        int(k) for k in ks[np.sort(first)] if not (total[0, k] == total[1, k] and total[0, k] in (0, trials))
    ]
    if keep:
        boxes += Box.many_from_counts(
            total[0, keep],
            trials,
            total[1, keep],
            trials,
            alpha=per_test(alpha, 2 * n),
            labels=[f"cut K ≥ {k}" for k in keep],
        )
    note = (
        f"Clopper–Pearson boxes, all holding together with probability ≥ {confidence:g} (union "
        "bound): the majority vote (all trials) and the likelihood-ratio cut (chosen on one half "
        f"of the trials, counted on the other) each fail with probability ≤ {per_test(alpha, 4):.3g}; "
        f"every cut K ≥ k, k = 1..{n}, with ≤ {per_test(alpha, 2 * n):.3g} (shown: the {len(keep)} "
        "with distinct counts that some but not all trials passed)."
    )
    exact_fpr = exact_tpr = None
    if exact is not None:
        f, t = roc_from_logpmfs(exact[0], exact[1])
        exact_fpr, exact_tpr = tuple(f.tolist()), tuple(t.tolist())
        note += (
            " The curve is the exact optimal ROC of the mechanism's declared probabilities; the "
            "boxes measure its real sampler (or, model-based, draws from the declaration)."
        )
    return TradeoffPair(
        null=NULL,
        alt=ALT,
        epsilon=float(epsilon),
        delta=float(delta),
        boxes=tuple(boxes),
        exact_fpr=exact_fpr,
        exact_tpr=exact_tpr,
        unit=UNIT,
        note=note,
    )


def observer_record(pair: TradeoffPair, *, measured: bool) -> dict[str, Any]:
    """``{"tpr_at_fpr": [...], "tradeoff": {...}}`` for one audit cell's JSON.

    ``tpr_at_fpr`` has one entry per FPR level (:data:`~dpcore.tradeoff.FPR_LEVELS`):
    :func:`~dpcore.tradeoff.tpr_at_fpr_entry` read from the boxes when ``measured`` (Monte-Carlo),
    else from the exact curve, plus ``exact_tpr`` (the exact curve's TPR there, None without one).
    ``tradeoff`` is :meth:`TradeoffPair.to_dict` with the same ``tpr_at_fpr``.
    """
    tradeoff = pair.to_dict(exact=not measured)
    entries = tradeoff["tpr_at_fpr"]
    curve = pair.exact_curve
    for e in entries:
        e["exact_tpr"] = None if curve is None else float(np.interp(e["fpr"], curve[0], curve[1]))
    return {"tpr_at_fpr": entries, "tradeoff": tradeoff}


def observer_line(entry: dict[str, Any], *, confidence: float | None = None) -> str:
    """One short line for the CLI's text output from a ``tpr_at_fpr`` entry, e.g. ``observer at
    1% false positives: names 1ⁿ correctly 100% of the time (the claim allows at most 2.7%;
    exceeded)``.

    An estimated entry (Monte-Carlo) states its lower bound first and its value as what it is,
    the best of many measured tests, a point estimate biased upward by that choice:
    ``names 1ⁿ correctly at least 3.1% of the time with confidence 0.95 (measured best 3.5%, …)``.
    """
    text = f"observer at {percent(entry['fpr'])} false positives: names {ALT} correctly "
    extra = []
    if entry["how"] != "exact":
        text += f"at least {percent(entry['lower'])} of the time"
        if confidence is not None:
            text += f" with confidence {confidence:g}"
        best = percent(entry["tpr"])
        extra.append(f"measured best {best}, a point estimate biased upward by the choice of test")
    else:
        text += f"{percent(entry['tpr'])} of the time"
    ceiling = float(entry["claim_ceiling"])
    extra.append(
        "the claim allows any rate" if ceiling >= 1.0 else f"the claim allows at most {percent(ceiling)}"
    )
    if entry["exceeds_claim"]:
        extra.append("exceeded")
    return text + " (" + "; ".join(extra) + ")"
