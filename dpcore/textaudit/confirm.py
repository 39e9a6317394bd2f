"""Stage 2, the confirmation: fresh draws of every word of the chosen pairs, one test per direction.

Every word of the chosen pairs gets ``samples`` *fresh* draws, split into a selection half and
an evaluation half; each pair is tested in both directions with Clopper–Pearson bounds at the
level its :class:`~dpcore.pairtest.budget.AlphaBudget` gives (Bonferroni over every test), and
the pair *violates* when a lower bound exceeds its claimed bound. Every pair is tested on the
event selected from its own draws; a pair the screen proposed for one output also tests that
output on all draws; and an exact sanitizer whose sampler passed the declaration test also gets,
*in addition*, events planned from its declared rows and bounded on all draws
(:func:`planned_event`). A declaration therefore adds tests and never hides the data-driven ones:
a sampler that departs from its declaration in a way the declaration test missed is still judged
on its own draws. When the rows are known, each pair's exact worst-case loss
max_y |ln Pr[M(x)=y] − ln Pr[M(x′)=y]| is reported beside.

The adaptive **pilot** (:func:`run_pilot`) uses the same test on draws of its own to rank the
candidate pairs; it decides nothing.

A word's draws are shared by every pair it belongs to (the union bound needs no independence).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dpcore.pairtest.budget import AlphaBudget
from dpcore.pairtest.estimator import (
    MAX_EVENT_CANDIDATES,
    best_prefix,
    best_prefix_event,
    estimate_direction,
)
from dpcore.pairtest.power import DEFAULT_POWER, detectable_excess
from dpcore.stats import cp_max_log_ratio
from dpcore.text.sampling import pair_distances
from dpcore.text.vocab import Vocabulary
from dpcore.textaudit.declaration import exact_rows, pad_log
from dpcore.textaudit.engine import DrawPlan, WordDraws
from dpcore.textaudit.plan import AuditPlan
from dpcore.textaudit.result import PairResult
from dpcore.textaudit.sampling import OutputCodebook, eligible_outputs
from dpcore.topk import largest_k

__all__ = [
    "ConfirmOutcome",
    "Counts",
    "PilotOutcome",
    "SampleFailed",
    "max_detectable_loss",
    "planned_event",
    "run",
    "run_pilot",
    "test_pair",
]

#: Relative slack when comparing a bound with a claim (float64 rounding of ε·d).
_TOL = 1e-9

Draw = Callable[[np.ndarray, DrawPlan], list[WordDraws]]
Claims = Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray]
#: One direction's test: (estimate, lower bound, |S|, a, b, samples, direction, event source).
PairTest = tuple[float, float, int, int, int, int, str, str]


def max_detectable_loss(samples_per_half: int, alpha: float) -> float:
    """The largest lower bound this test can ever give: all of one side in S, none of the other."""

    return cp_max_log_ratio(samples_per_half, alpha)


def _pad(a: np.ndarray, n: int) -> np.ndarray:
    return a if a.size >= n else np.pad(a, (0, n - a.size))


class SampleFailed(Exception):
    """The sanitizer's ``sample`` raised for a word of this pair."""


class Counts:
    """One stage's draws per word, merged in word order (so independent of the engine)."""

    def __init__(
        self, draws: list[WordDraws], words: np.ndarray, codebook: OutputCodebook, n_sel: int, n_eval: int
    ) -> None:
        self.cb, self.n_sel, self.n_eval = codebook, n_sel, n_eval
        self.halves: dict[int, tuple[np.ndarray, ...]] = {}
        #: Words whose ``sample`` raised, with the message (their pairs are not tested).
        self.failures: dict[str, str] = {}
        for wd in draws:
            if wd.error is not None:
                self.failures[str(words[wd.wid])] = wd.error
                continue
            halves = []
            for c, extra in zip(wd.counts, wd.extras, strict=True):
                codes = [codebook.code(label) for label in sorted(extra)]
                full = np.zeros(len(codebook), dtype=np.int64)
                full[: c.size] = c
                for code, label in zip(codes, sorted(extra), strict=True):
                    full[code] = extra[label]
                halves.append(full)
            self.halves[wd.wid] = tuple(halves)

    def get(self, wid: int) -> tuple[np.ndarray, ...]:
        if wid not in self.halves:
            raise SampleFailed(self.failures.get(str(self.cb.label(wid)), "not drawn"))
        return self.halves[wid]


def test_pair(
    counter: Counts,
    i: int,
    j: int,
    alpha: float,
    eligible_fn: Callable[[int], np.ndarray | None],
    rows: dict[int, np.ndarray] | None = None,
    screen_event: tuple[int, int] | None = None,
    record: list[PairTest] | None = None,
) -> PairTest:
    """(estimate, lower bound, event size, a, b, samples, direction, event source) of the strongest test.

    Every test runs at ``alpha``; the caller counts them all in its Bonferroni correction
    (:meth:`~dpcore.pairtest.budget.AlphaBudget.confirmation_tests`). In each direction:

    - ``selected``: the event chosen on the selection half, bounded on the evaluation half
      (always made);
    - ``screen``: a pair the screen proposed for one output y also tests {y} in the screen's
      direction on all draws (``screen_event`` = (favoured word id, output code)): that event
      was fixed before stage 2;
    - ``declared``: with ``rows`` (exact sanitizers whose sampler passed the declaration test),
      the event planned from the declaration and bounded on all draws (:func:`planned_event`),
      in addition to the two above.

    The returned test is the one with the largest lower bound (then estimate); its source says
    which event it was. ``record``, when given, receives every test made (in the order made), for
    the pair's trade-off boxes (:mod:`dpcore.textaudit.tradeoffs`).
    """
    si, ei = counter.get(i)
    sj, ej = counter.get(j)
    size = len(counter.cb)
    si, ei, sj, ej = (_pad(a, size) for a in (si, ei, sj, ej))
    elig = eligible_fn(size)
    planned = rows is not None and i in rows and j in rows
    n_all = counter.n_sel + counter.n_eval
    best: PairTest | None = None

    def keep(d: Any, label: str, source: str) -> None:
        nonlocal best
        cand = (d.estimate, d.lower_bound, d.event_size, d.count_x, d.count_x_prime, d.samples, label, source)
        if record is not None:
            record.append(cand)
        if best is None or (cand[1], cand[0]) > (best[1], best[0]):
            best = cand

    for a_, b_, sel_a, ev_a, sel_b, ev_b, label in (
        (i, j, si, ei, sj, ej, "x>x'"),
        (j, i, sj, ej, si, ei, "x'>x"),
    ):
        event = best_prefix_event(sel_a, sel_b, counter.n_sel, alpha, elig)
        keep(estimate_direction(event, ev_a, ev_b, counter.n_eval, alpha), label, "selected")
        if screen_event is not None and screen_event[0] == a_ and 0 <= screen_event[1] < size:
            ev = np.array([screen_event[1]], dtype=np.int64)
            keep(estimate_direction(ev, sel_a + ev_a, sel_b + ev_b, n_all, alpha), label, "screen")
        if planned:
            assert rows is not None
            la, lb = pad_log(rows[a_], size), pad_log(rows[b_], size)
            event = planned_event(la, lb, n_all, alpha, elig)
            keep(estimate_direction(event, sel_a + ev_a, sel_b + ev_b, n_all, alpha), label, "declared")
    assert best is not None
    return best


def exact_losses(
    rows: dict[int, np.ndarray] | None, pairs: np.ndarray, elig: np.ndarray | None
) -> np.ndarray:
    """max_y |ln p_x(y) − ln p_x′(y)| per pair over protected outputs (nan when not exact)."""
    if rows is None or not len(pairs):
        return np.full(len(pairs), np.nan)
    size = max(r.size for r in rows.values())
    out = np.empty(len(pairs))
    for k, (i, j) in enumerate(pairs):
        a, b = pad_log(rows[int(i)], size), pad_log(rows[int(j)], size)
        if elig is not None:
            m = _pad(elig, size).astype(bool)
            a, b = a[m], b[m]
        both = np.isfinite(a) & np.isfinite(b)
        one = np.isfinite(a) ^ np.isfinite(b)
        out[k] = np.inf if one.any() else (float(np.max(np.abs(a[both] - b[both]))) if both.any() else 0.0)
    return out


def planned_event(
    la: np.ndarray, lb: np.ndarray, n: int, alpha: float, elig: np.ndarray | None
) -> np.ndarray:
    """The event S fixed in advance from the *declared* distribution (no sample is looked at).

    Outputs are sorted by the declared ratio ln p_x(y) − ln p_x′(y); the prefix maximising the
    lower bound expected at n draws per side is chosen. Because S does not depend on the draws,
    every draw of both halves can be used to bound its loss (twice the evaluation samples), and
    a sampler that departs from its declared distribution is still judged on its own draws.
    """
    ok = np.isfinite(la)
    if elig is not None:
        ok &= elig
    cand = np.flatnonzero(ok)
    if cand.size == 0:
        return cand
    ratio = la[cand] - lb[cand]  # +inf where x′ cannot produce y
    if cand.size > MAX_EVENT_CANDIDATES:
        top = largest_k(ratio, MAX_EVENT_CANDIDATES)
        cand, ratio = cand[top], ratio[top]
    order = np.argsort(-ratio, kind="stable")
    cand = cand[order]
    pa = np.cumsum(np.exp(la[cand]))
    pb = np.cumsum(np.exp(lb[cand]))
    k = best_prefix(np.minimum(n * pa, n), np.minimum(n * pb, n), n, alpha)
    return cand[: k + 1]


@dataclass(frozen=True, eq=False)
class PilotOutcome:
    """The pilot's choice: the K best candidate pairs (in candidate order) and failed words."""

    pairs: np.ndarray
    failures: dict[str, str]
    draws: int


def run_pilot(
    plan: AuditPlan,
    draw: Draw,
    *,
    sanitizer: Any,
    vocab: Vocabulary,
    codebook: OutputCodebook,
    claims: Claims,
    budget: AlphaBudget,
) -> PilotOutcome:
    """Rank the plan's candidate pairs on pilot draws and keep the K best (adaptive strategy).

    Each candidate word gets ``plan.pilot`` draws; each pair's score is its lower bound minus its
    claim (ties broken by the point estimate's excess), at the budget's pilot level.
    """
    cand = plan.candidates
    pw = np.unique(cand)
    half = plan.pilot // 2
    pc = Counts(
        draw(pw, DrawPlan("pilot", (half, plan.pilot - half))), vocab.words, codebook, half, plan.pilot - half
    )
    alpha_p = budget.per_pilot_test(len(cand))
    d_c = pair_distances(vocab.vectors, cand[:, 0], cand[:, 1])
    b_c = claims(cand[:, 0], cand[:, 1], d_c)
    score = np.empty(len(cand))
    for k, (i, j) in enumerate(cand):
        try:
            est, lb, *_ = test_pair(
                pc, int(i), int(j), alpha_p, lambda size: eligible_outputs(sanitizer, size)
            )
        except SampleFailed:
            score[k] = -np.inf
            continue
        bound = float(b_c[k])
        # rank by excess over the claim; break ties by the point estimate's excess
        score[k] = (lb - bound) + 1e-6 * np.tanh(est - bound if math.isfinite(est) else 50.0)
    order = np.argsort(-score, kind="stable")[: plan.pairs]
    return PilotOutcome(cand[np.sort(order)], dict(pc.failures), len(pw) * plan.pilot)


@dataclass(frozen=True, eq=False)
class ConfirmOutcome:
    """Stage 2's results.

    Attributes
    ----------
    results:
        One :class:`~dpcore.textaudit.result.PairResult` per pair (an ``error`` where a word failed).
    failures:
        Words whose ``sample`` raised in stage 2, with the message.
    alpha:
        Each test's level; ``n_tests`` tests were made.
    n_bound:
        Draws that bound an event, for :attr:`max_detectable`: all T when declared rows planned
        events (tested besides the selected ones), else T/2 (a selected event is bounded on the
        evaluation half).
    draws:
        Draws made.
    counts:
        Every drawn word's counts per half (:class:`Counts`), for the sentence-call stage
        (:mod:`dpcore.textaudit.users_calls`); not part of the result.
    events:
        Per result (same order), every test made for its pair (:data:`PairTest`, empty where a
        word failed), for the trade-off boxes (:mod:`dpcore.textaudit.tradeoffs`).
    rows:
        The declared rows used for planned events (None when none were used).
    """

    results: list[PairResult]
    failures: dict[str, str]
    alpha: float
    n_tests: int
    n_bound: int
    draws: int
    counts: Counts | None = None
    events: list[list[PairTest]] = field(default_factory=list)
    rows: dict[int, np.ndarray] | None = None

    @property
    def max_detectable(self) -> float:
        """The largest loss these tests can show (a planned event on all T, a selected one on T/2)."""
        return max_detectable_loss(self.n_bound, self.alpha)


def run(
    plan: AuditPlan,
    draw: Draw,
    pairs: np.ndarray,
    *,
    sanitizer: Any,
    vocab: Vocabulary,
    codebook: OutputCodebook,
    claims: Claims,
    budget: AlphaBudget,
    use_rows: bool,
    screen_events: dict[tuple[int, int], tuple[int, int]],
) -> ConfirmOutcome:
    """Draw T fresh outputs of every word of ``pairs`` and test each pair in both directions.

    ``use_rows``: the sanitizer's declared rows passed the declaration test, so events planned
    from them are tested *besides* the selected events and the screen's outputs (never instead).
    ``screen_events``: per proposed pair, the screen's (favoured word, output). The number of
    tests, and so their level, is fixed before any draw (:meth:`AlphaBudget.confirmation_tests`).
    """
    cand = pairs
    n_screen = sum(1 for i, j in cand if (int(i), int(j)) in screen_events)
    n_tests = budget.confirmation_tests(len(cand), n_screen, declared_events=use_rows)
    alpha = budget.per_confirmation_test(n_tests)
    samples = plan.samples
    n_sel = samples // 2
    words = vocab.words
    cw = np.unique(cand) if len(cand) else np.zeros(0, dtype=np.int64)
    counter = Counts(
        draw(cw, DrawPlan("confirm", (n_sel, samples - n_sel))), words, codebook, n_sel, samples - n_sel
    )
    dist = pair_distances(vocab.vectors, cand[:, 0], cand[:, 1])
    bounds = claims(cand[:, 0], cand[:, 1], dist) if len(cand) else np.zeros(0)
    rows = exact_rows(sanitizer, words, cand, codebook) if use_rows else None
    exact = exact_losses(rows, cand, eligible_outputs(sanitizer, len(codebook)))
    results: list[PairResult] = []
    events: list[list[PairTest]] = []
    for k, (i, j) in enumerate(cand):
        x, xp = str(words[i]), str(words[j])
        bound = float(bounds[k])
        events.append([])
        try:
            test = test_pair(
                counter,
                int(i),
                int(j),
                alpha,
                lambda size: eligible_outputs(sanitizer, size),
                rows,
                screen_events.get((int(i), int(j))),
                record=events[-1],
            )
        except SampleFailed as exc:
            results.append(
                PairResult(
                    x, xp, float(dist[k]), bound, math.nan, math.nan, False, "", 0, 0, 0, error=str(exc)
                )
            )
            continue
        results.append(_pair_result(x, xp, float(dist[k]), bound, test, float(exact[k]), alpha))
    # a planned event is bounded on all T draws, a selected one on the evaluation half
    n_bound = samples if rows is not None else samples - n_sel
    return ConfirmOutcome(
        results, dict(counter.failures), alpha, n_tests, n_bound, len(cw) * samples, counter, events, rows
    )


def _pair_result(
    x: str, xp: str, dist: float, bound: float, test: PairTest, exact: float, alpha: float
) -> PairResult:
    est, lb, size, a, b, n_used, direction, source = test
    lb = max(0.0, lb)
    est = max(0.0, est)
    ex = None if math.isnan(exact) else float(exact)
    det = detectable_excess(n_used, alpha, bound, a / n_used if n_used else 0.0)
    return PairResult(
        x=x,
        x_prime=xp,
        distance=dist,
        claimed_bound=bound,
        empirical_epsilon=est,
        lower_bound=lb,
        violates=bool(lb > bound * (1 + _TOL) + _TOL),
        direction=direction,
        event_size=size,
        count_x=a,
        count_x_prime=b,
        exact_epsilon=ex,
        exact_violates=None if ex is None else bool(ex > bound * (1 + 1e-7) + 1e-9),
        detectable_violation=det.to_dict(),
        event_source=source,
    )


def detectable_on_own_events(results: list[PairResult], n: int, alpha: float) -> dict[str, Any]:
    """One statement for the tested pairs' own events, at the median event probability of the tests.

    This is the per-test statement (the events the tests used); the whole pipeline's statement
    is :func:`dpcore.textaudit.power.pipeline_statements`. Each reported event's probability is
    its count over the draws that bounded it (``detectable_violation["samples"]``: T/2 for a
    selected event, T for one fixed before stage 2; ``n`` where a result does not say), and the
    statement is made at the fewest of those draws, the weakest of the tests.
    """
    tested = [r for r in results if r.error is None and math.isfinite(r.claimed_bound)]
    used = [int((r.detectable_violation or {}).get("samples") or n) for r in tested]
    probs = [r.count_x / m for r, m in zip(tested, used, strict=True) if r.count_x > 0]
    n = min(used, default=n)
    out: dict[str, Any] = {"power": DEFAULT_POWER, "samples": int(n)}
    if not tested or not probs:
        return out | {"event_probability": None, "excess": math.inf, "text": "no tested event"}
    p = float(np.median(probs))
    # Δ grows with the claim at a fixed p: the smallest, median and largest claims stand for all
    claims = np.sort([r.claimed_bound for r in tested])
    levels = {float(claims[0]), float(claims[len(claims) // 2]), float(claims[-1])}
    excess = max(detectable_excess(n, alpha, c, p).excess for c in levels)
    out |= {"event_probability": p, "excess": excess}
    if math.isfinite(excess):
        out["text"] = (
            f"on the tests' own events, every tested pair would have been flagged with probability ≥ "
            f"{DEFAULT_POWER:g} had its loss exceeded its claim by {excess:.3g} on such an event of "
            f"probability ≥ {p:.3g} under M(x)"
        )
    else:
        out["text"] = (
            f"at events of probability {p:.3g} (the tests' median) some tested pair could not flag any "
            f"violation with {n:,} draws per word"
        )
    return out
