"""A verdict row's plan: the vocabulary size and budget that fit its minutes and reach its power.

Moved here from ``bench/audit_text_libraries.py --screen`` so that ``python -m dpcore verdicts``
and the bench script fit rows the same way. The row's *stated class* is the uniform one: a flaw
shared by the vocabulary of Δ ≤ :data:`TARGET_DELTA` nat, caught with probability ≥ 0.9
(``result.power``'s ``uniform`` statement); where a run yields no uniform statement, the
single-output class at p ≤ :data:`TARGET_P` (median claim level). The sanitizer's speed is probed
once (:func:`dpcore.textaudit.timing.probe_speed`), a pilot audit at |V| = 300 and a small budget
(:func:`pilot_minutes`) measures its partner rate, and for |V| in :data:`CANDIDATE_SIZES`
(largest first) the plan is the largest size predicted both to fit the minutes and to reach the class
(:func:`dpcore.textaudit.pooled.uniform_power`), its speed probed again at that |V| before it is
chosen; the smallest when none does, and the plan says so.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, replace
from typing import Any

import numpy as np

#: Candidate GloVe sizes for a row, largest first.
CANDIDATE_SIZES: tuple[int, ...] = (15_000, 5_000, 2_000, 1_000, 500, 300)
CONFIRM_K = 50  # pairs confirmed in stage 2
CONFIRM_T_MAX = 10_000  # at most this many draws per confirmed word
#: The row's stated class: a uniform flaw of Δ ≤ 1 nat; fallback: one output of probability ≤ 0.05.
TARGET_DELTA = 1.0
TARGET_P = 0.05
PILOT_MINUTES = 0.1  # the pilot's screen, at the smallest size and budget (at most the row's minutes)


@dataclass(frozen=True)
class RowPlan:
    """What a row runs: |V|, the screen's budget, T, and the power it was predicted to reach."""

    vocab_size: int
    screen_budget: int
    draws_per_word: int
    samples: int
    pairs: int
    stated_class: str  # "uniform" or "single-output"
    predicted: float  # Δ (uniform) or p (single-output) predicted at this size
    reaches_class: bool  # False: no size passes both; the smallest is run
    estimate_seconds: float
    minutes: float
    #: Audit over the full vocabulary, offensive words included (``--full-vocabulary``).
    full_vocabulary: bool = False

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def fit_size(speed: Any, size: int, minutes: float, workers: int) -> Any:
    """m (screen draws per word) and T for a run over ``size`` words in about ``minutes``
    (a :class:`dpcore.textaudit.timing.Plan`): half the time for the confirmation at T ≤
    :data:`CONFIRM_T_MAX`, the rest for the screen, never under the screen's floor of draws."""
    from dpcore.textaudit.screen import MAX_SCREEN_DRAWS, MIN_SCREEN_DRAWS
    from dpcore.textaudit.timing import WORKER_EFFICIENCY, fit_plan

    cap = min(size * MAX_SCREEN_DRAWS, 1_000_000_000)
    common = dict(screen_words=size, confirm_words=2 * CONFIRM_K, workers=workers, max_budget=cap)
    half = fit_plan(speed, minutes=minutes / 2, samples=None, max_samples=CONFIRM_T_MAX, **common)
    left = 60 * minutes - half.confirm_seconds - 1.0 - 2e-4 * size  # what the screen may use
    plan = fit_plan(
        speed, minutes=max(left, 1.0) / 60, samples=half.samples, max_samples=CONFIRM_T_MAX, **common
    )
    if plan.draws_per_word < MIN_SCREEN_DRAWS:  # the screen's floor: the estimate grows to match
        eff = 1.0 if workers <= 1 else workers * WORKER_EFFICIENCY
        more = size * speed.per_draw * (MIN_SCREEN_DRAWS - plan.draws_per_word) / eff
        plan = replace(
            plan,
            draws_per_word=MIN_SCREEN_DRAWS,
            budget=MIN_SCREEN_DRAWS * size,
            screen_seconds=plan.screen_seconds + more,
            estimate_seconds=plan.estimate_seconds + more,
        )
    return plan


def predict(pilot: Any, size: int, m: int, samples: int) -> tuple[str, float]:
    """The stated class and its predicted figure at ``size`` words and m draws per word, from the
    pilot: the uniform Δ (:func:`~dpcore.textaudit.pooled.uniform_power` at the pilot's partner
    rate, its claims scaled to ``size`` terms), else the single-output p at the median claim level."""
    from dpcore.textaudit.pooled import uniform_power
    from dpcore.textaudit.power import single_output_probability

    best = math.inf
    for t in pilot.pooled:
        if t["family"] != "self" or t["terms"] == 0 or not t["claim_groups"]:
            continue
        q = t["y_sum"] / (t["draws_per_word"] * t["terms"])
        scale = size / pilot.screen["words_screened"]
        groups = [(c, max(1, round(k * scale))) for c, k in t["claim_groups"]]
        best = min(best, uniform_power(groups, q, m, t["alpha"], reps=400))
    if math.isfinite(best):
        return "uniform", best
    singles = [s for s in pilot.power.get("statements", []) if s["class"] == "single-output"]
    if not singles:
        return "single-output", math.inf
    c = singles[len(singles) // 2]["claim"]
    m0 = pilot.screen["draws_per_word"]
    p = single_output_probability(
        m=m,
        threshold=float(pilot.screen["kth_score"]),
        residual=float(pilot.screen["residual_median"]) * m / m0,
        samples=samples,
        alpha=float(pilot.alpha_accounting["per_confirmation_test"]),
        claim=c,
    )
    return "single-output", p


def measured(cls: str, power: dict[str, Any]) -> float:
    """The figure of the stated class that a run's ``power`` states (∞ when it states none)."""
    sts = power.get("statements", [])
    if cls == "uniform":
        return min((s["excess"] for s in sts if s["class"] == "uniform"), default=math.inf)
    singles = [s for s in sts if s["class"] == "single-output"]
    return singles[len(singles) // 2]["output_probability"] if singles else math.inf


def reaches(cls: str, value: float) -> bool:
    """Whether ``value`` (Δ or p) is within the stated class's target."""
    return value <= (TARGET_DELTA if cls == "uniform" else TARGET_P)


def plan_row(
    name: str,
    *,
    minutes: float,
    workers: int,
    epsilon: float = 1.0,
    embedding: str = "glove",
    full_vocabulary: bool = False,
) -> RowPlan:
    """Probe ``name``'s speed, run the pilot, and choose the row's |V| and budget (over the
    vocabulary without offensive words, or the full one with ``full_vocabulary``).

    The speed is probed at |V| = 300 first. A sanitizer's cost per draw may grow with |V| (a
    nearest-word search over V), so a size that fits at that speed is probed again at its own
    |V| and refitted before it is chosen; sizes that cannot fit even at the small speed are
    skipped unprobed. Raises whatever loading or auditing the sanitizer raises (the caller
    records it)."""
    from dpcore.text.vocab import build_vocabulary
    from dpcore.textaudit import audit_text
    from dpcore.textaudit.loaders import load_sanitizer

    lo = min(CANDIDATE_SIZES)
    small = build_vocabulary(embedding, size=lo, full=full_vocabulary)
    s0 = load_sanitizer(name, epsilon=epsilon, vocab=small)
    speed0 = _probe(s0, small)
    pplan = fit_size(speed0, lo, pilot_minutes(minutes), workers)
    pilot = audit_text(
        s0,
        vocab=small,
        pairs=CONFIRM_K,
        samples=pplan.samples,
        screen_budget=pplan.budget,
        seed=1,
        workers=workers,
    )
    limit = 60 * minutes * 1.1

    def fitted(speed: Any, size: int) -> tuple[Any, str, float] | None:
        """The plan at ``size`` with its class and prediction, or None when it misses the
        minutes or the class."""
        plan = fit_size(speed, size, minutes, workers)
        if plan.estimate_seconds > limit:
            return None
        cls, pred = predict(pilot, size, plan.draws_per_word, plan.samples)
        return (plan, cls, pred) if reaches(cls, pred) else None

    for size in sorted(CANDIDATE_SIZES, reverse=True):
        found = fitted(speed0, size)
        if found is not None and size != lo:  # the speed at this |V|, then the plan again
            vocab = build_vocabulary(embedding, size=size, full=full_vocabulary)
            found = fitted(_probe(load_sanitizer(name, epsilon=epsilon, vocab=vocab), vocab), size)
        if found is not None:
            return _row_plan(size, *found, True, minutes, full_vocabulary)
    plan = fit_size(speed0, lo, minutes, workers)  # nothing passes both: the smallest, and it says so
    cls, pred = predict(pilot, lo, plan.draws_per_word, plan.samples)
    return _row_plan(lo, plan, cls, pred, False, minutes, full_vocabulary)


def pilot_minutes(minutes: float) -> float:
    """The pilot's minutes for a row of ``minutes``: :data:`PILOT_MINUTES`, or the row's own
    minutes when they are fewer (a row asked to take 3 s does not spend 6 s on its pilot).

    Examples
    --------
    >>> pilot_minutes(10.0), pilot_minutes(0.05)
    (0.1, 0.05)
    """
    return min(PILOT_MINUTES, float(minutes))


#: Words whose speed a probe may try, three at a time, spread over V (a sanitizer may fail on many).
PROBE_WORDS = 30


def _probe(sanitizer: Any, vocab: Any) -> Any:
    """The sanitizer's speed on three words of V; the next three (spread over V) when its sample()
    fails on all of them (pyPANTERA's CusText raises on most frequent words), up to
    :data:`PROBE_WORDS` words."""
    from dpcore.textaudit.timing import probe_speed
    from dpcore.validation import DPCoreError

    n = len(vocab)
    ids = np.unique(np.linspace(0, n - 1, min(n, PROBE_WORDS)).astype(np.int64))
    order = np.concatenate([ids[i::10] for i in range(10)])  # each chunk spans V
    words = np.asarray(vocab.words)
    for start in range(0, order.size, 3):
        try:
            return probe_speed(sanitizer, words, order[start : start + 3], 0)
        except DPCoreError:
            if start + 3 >= order.size:
                raise
    raise DPCoreError("no word to probe")


def _row_plan(
    size: int, plan: Any, cls: str, pred: float, ok: bool, minutes: float, full_vocabulary: bool = False
) -> RowPlan:
    return RowPlan(
        vocab_size=int(size),
        screen_budget=int(plan.budget),
        draws_per_word=int(plan.draws_per_word),
        samples=int(plan.samples),
        pairs=CONFIRM_K,
        stated_class=cls,
        predicted=float(pred),
        reaches_class=bool(ok),
        estimate_seconds=float(plan.estimate_seconds),
        minutes=float(minutes),
        full_vocabulary=bool(full_vocabulary),
    )
