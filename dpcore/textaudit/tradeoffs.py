"""What the tested pairs mean for an observer: trade-off curves, event boxes and TPR at 1%/5% FPR.

An observer sees one sanitized word and must say whether it came from x or from x′. Each event S
that stage 2 tested (:mod:`dpcore.textaudit.confirm`) is such a test ("name the pair's second word
when the output is in S"), and its counts under both words give a :class:`~dpcore.tradeoff.Box`:
Clopper–Pearson intervals on its false and true positive rates. The pair's claim (its
``claimed_bound``, the same ε, ε·d(x, x′) + ε₀ (ε₀ = 0 except UMLDP) or the sanitizer's own bound
the verdict used) is pure DP for that pair, so its trade-off curve
(:func:`dpcore.tradeoff.claim_tradeoff`; Kairouz, Oh & Viswanath 2015, Thm 2.1) says how far any
test may go; a box wholly beyond the tested part of it is a violation at the box's confidence.

What is tested
    When the claim covers every output, each box is tested against the whole curve: its event
    branch TPR ≤ e^ε·FPR (the claim on S) and its complement branch
    1 − TPR ≥ e^(−ε)·(1 − FPR) (the claim on Ω∖S), with their mirrors. When it covers only some
    outputs (SanText+'s UMLDP on V_P, a sanitizer's ``protected_ids``: the ``eligible`` outputs,
    of which every event is made), Ω∖S holds outputs the claim says nothing of, so only the event
    branch is tested (``covers="events"``, :data:`dpcore.tradeoff.TESTED`).

Confidence, and what a box says about the verdict
    Each box is built at the verdict's per-test level α (the confirmation's share of
    1 − confidence over its Bonferroni count of tests), split over its four one-sided bounds by
    :meth:`~dpcore.tradeoff.Box.from_counts` (α/4 each): it holds with probability ≥ 1 − α. The
    verdict's own test bounds the same counts one-sided at α/2 per rate, which is tighter. So a
    box beyond the *event* branch on the side of the word its test was made for (TPR_low >
    e^ε·FPR_high for a test of the pair's direction, the mirror FPR_low > e^ε·TPR_high for a
    test of the other; every box whose label does not say "chosen for") implies that the
    verdict's ratio bound on S exceeds the claim too. A box beyond
    only the *complement* branch does not: it is a test of Ω∖S, certified at the box's confidence
    when the claim covers every output, which the verdict's ratio test of S does not count (at
    ε = 1, ``Box.from_counts(5000, 10000, 9900, 10000, alpha=0.005625)`` lies above the complement
    branch while the ratio bound on the same counts is 0.653 < 1).
    There is one box per test the Bonferroni count holds, so all boxes of all pairs hold together
    with probability ≥ 1 − (the confirmation's share of α).

Exact curves
    When the declared rows passed the declaration test and the claim covers every output, the
    pair's optimal ROC from those rows (:func:`dpcore.tradeoff.roc_from_logpmfs`) is drawn
    beside the boxes; it describes the declaration, the boxes describe the draws.

What the pairs built here say in the JSON and the CLI's text (``tpr_at_fpr``, ``tradeoff``, the
observer line) is :mod:`dpcore.textaudit.observer`'s, which the result reads without this stage.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from dpcore.textaudit.declaration import pad_log
from dpcore.textaudit.observer import UNIT
from dpcore.tradeoff import (
    FPR_LEVELS,
    Box,
    TradeoffPair,
    roc_from_logpmfs,
    tpr_ceiling,
)

if TYPE_CHECKING:
    from dpcore.textaudit.confirm import PairTest
    from dpcore.textaudit.result import PairResult

__all__ = ["build", "strongest_first", "thin_curve"]

#: Vertices an exact curve keeps at most (besides those at the FPR levels and the worst excess).
EXACT_VERTICES = 160


def strongest_first(results: Sequence[PairResult]) -> list[int]:
    """Indices of the tested pairs, the verdict's worst pair first: violating pairs before the
    others, then by lower bound / claim and lower bound (the order the verdict picks its worst by)."""
    tested = [k for k, r in enumerate(results) if r.error is None and not math.isnan(r.claimed_bound)]
    return sorted(
        tested,
        key=lambda k: (not results[k].violates, -results[k].ratio, -results[k].lower_bound, k),
    )


def _box(result: PairResult, test: PairTest, alpha: float) -> Box:
    """One test as a box: the test names the pair's alternative (the word the verdict's reported
    event favours); a test made for the other word is the same counts swapped (below the
    diagonal when its event does favour that word).

    The label names the word the event's counts favour. A test's ``direction`` names the word
    its event was chosen for, and the counts can favour the other word: an event chosen on the
    selection half or from the declaration, counted on other draws, or the best event over a
    partial cover when none there favours the word (SanText+, a word outside V_P). Then the label
    says so.
    """
    _est, _lb, size, a, b, n, direction, source = test
    alt_hits, null_hits = (a, b) if direction == result.direction else (b, a)
    chosen = result.x if direction == "x>x'" else result.x_prime
    other = result.x_prime if direction == "x>x'" else result.x
    # a: the count under the word the test was made for, b: under the other word
    favours = f"favours {chosen!r}" if a > b else (f"favours {other!r}" if b > a else "favours neither word")
    if b > a:
        favours += f" (chosen for {chosen!r})"
    label = f"{source} event, |S| = {size:,}, {favours}, {n:,} draws per word"
    return Box.from_counts(null_hits, n, alt_hits, n, alpha=alpha, label=label)


def thin_curve(
    fpr: np.ndarray, tpr: np.ndarray, epsilon: float, keep: int = EXACT_VERTICES
) -> tuple[np.ndarray, np.ndarray]:
    """At most about ``keep`` vertices of an exact (concave) ROC, for the JSON and the figure.

    Kept: both ends, the two vertices around each FPR level (so the TPR read there stays exact),
    the vertex furthest above the claim's ceiling (so an exceedance stays visible) and a
    geometric grid over the rest. Between kept vertices the straight segments are chords of the
    curve: tests reached by randomising between two kept ones, never above the exact curve.
    """
    n = fpr.size
    if n <= keep:
        return fpr, tpr
    idx = {0, n - 1}
    for a in FPR_LEVELS:
        k = int(np.searchsorted(fpr, a, side="right"))
        idx |= {max(0, k - 1), min(n - 1, k)}
    excess = tpr - tpr_ceiling(fpr, epsilon)
    if float(excess.max()) > 1e-9:
        idx.add(int(np.argmax(excess)))
    idx |= set((np.unique(np.geomspace(1, n, keep).astype(np.int64)) - 1).tolist())
    sel = np.array(sorted(idx), dtype=np.int64)
    return fpr[sel], tpr[sel]


def _note(alpha: float, n_tests: int, family_alpha: float, exact: str, covers: str) -> str:
    tested = (
        "Each box is tested against the claim's whole curve: the event branch TPR ≤ e^ε·FPR (the "
        "claim on the event S, and its mirror) and the complement branch 1 − TPR ≥ e^(−ε)·(1 − FPR) "
        "(the claim on the outputs outside S, and its mirror). "
        if covers == "all"
        else "The claim covers only some outputs and every event is made of covered ones, so each box "
        "is tested against the event branch only: TPR ≤ e^ε·FPR and FPR ≤ e^ε·TPR (the claim on S); "
        "the complement branch is not tested, because the outputs outside S include uncovered ones. "
    )
    return (
        "Each box: Clopper–Pearson intervals on both rates, at the verdict's per-test level "
        f"α = {alpha:.3g} shared between the box's four one-sided bounds, so each box holds with "
        f"probability ≥ 1 − α. Stage 2's Bonferroni count holds all its {n_tests:,} tests, so every box "
        f"of every pair holds together with probability ≥ {1.0 - family_alpha:.4g}. "
        + tested
        + "The verdict's own test bounds the same counts one-sided with half of α per rate, so a box "
        "beyond the event branch on the side of the word its test was made for means the verdict's "
        "ratio bound on S exceeds the claim too; a box "
        "beyond only the complement branch is a test of the outputs outside S, which the verdict's "
        "ratio test of S does not count. Selected events are counted on the evaluation half of the "
        "draws, the screen's and declared events on all of them. " + exact
    )


def build(
    results: Sequence[PairResult],
    events: Sequence[Sequence[PairTest]],
    pairs: np.ndarray,
    *,
    rows: dict[int, np.ndarray] | None,
    eligible: np.ndarray | None,
    alpha: float,
    n_tests: int,
    family_alpha: float,
) -> tuple[TradeoffPair, ...]:
    """One :class:`~dpcore.tradeoff.TradeoffPair` per tested pair, the strongest evidence first.

    Parameters
    ----------
    results, events, pairs
        Stage 2's pair results, every test made per pair (same order) and the pairs' word ids.
    rows
        Declared rows that passed the declaration test (word id → ln Pr over the output codes), or
        None: then no exact curve.
    eligible
        Outputs the claim covers (None: all). With a partial cover (any mask: the sanitizer names
        a protected set, and outputs outside it or its vocabulary are not covered) the pairs are
        tested against the event branch only (``covers="events"``: every event is made of
        covered outputs, their complements are not) and no exact curve is drawn (the claim says
        nothing of tests that use the other outputs).
    alpha, n_tests, family_alpha
        The per-test level, the number of tests and the confirmation's share of α.
    """
    # A sanitizer that names a protected set covers only it: outputs outside its vocabulary are
    # never protected (eligible_outputs), seen or not, so even an all-True mask is a partial cover.
    covers = "all" if eligible is None else "events"
    out = []
    for k in strongest_first(results):
        r, tests = results[k], events[k] if k < len(events) else ()
        if not tests:
            continue
        i, j = int(pairs[k][0]), int(pairs[k][1])
        null, alt = (r.x_prime, r.x) if r.direction == "x>x'" else (r.x, r.x_prime)
        null_id, alt_id = (j, i) if r.direction == "x>x'" else (i, j)
        curve = None
        if rows is not None and covers == "all" and null_id in rows and alt_id in rows:
            size = max(rows[null_id].size, rows[alt_id].size)
            full = roc_from_logpmfs(pad_log(rows[null_id], size), pad_log(rows[alt_id], size))
            curve = thin_curve(*full, float(r.claimed_bound))
            exact = (
                "The exact curve is the optimal ROC of the declared distribution (which the declaration "
                f"test did not reject): {curve[0].size:,} of its {full[0].size:,} vertices, those at the FPR "
                "levels and the furthest above the claim kept, so its TPR at each level is exact."
            )
        elif rows is not None:
            exact = "No exact curve: the claim covers only some outputs."
        else:
            exact = "No exact curve: no declared distribution was checked and used."
        out.append(
            TradeoffPair(
                null=null,
                alt=alt,
                epsilon=float(r.claimed_bound),
                boxes=tuple(_box(r, t, alpha) for t in tests),
                exact_fpr=None if curve is None else tuple(curve[0].tolist()),
                exact_tpr=None if curve is None else tuple(curve[1].tolist()),
                unit=UNIT,
                note=_note(alpha, n_tests, family_alpha, exact, covers),
                covers=covers,
            )
        )
    return tuple(out)
