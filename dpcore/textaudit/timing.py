"""A default that fits: the screen's budget and the confirmation's T chosen for a time budget.

Without an explicit ``screen_budget``, :func:`~dpcore.textaudit.runner.audit_text` (and the CLI
without ``--screen-budget``) probes how fast the sanitizer draws and chooses

- m, the screen's draws per word, so that stage 1 takes about ``screen_minutes``, at most the
  fixed default of 2·10⁷ draws in all (so fast sanitizers are audited exactly as before) and at
  least :data:`~dpcore.textaudit.screen.MIN_SCREEN_DRAWS` per word when that fits; below it the
  plan says so (single outputs of probability below a few percent can then not stand out; the
  pooled tests still count every draw);
- T, the confirmation's draws per word (when not given), so that stage 2 takes about as long.

The estimate is printed before anything is drawn and recorded in the result
(``execution["plan"]``). A run whose smallest plan would take more than
:data:`MAX_DEFAULT_MINUTES` is refused with the numbers instead of running for hours.
"""

from __future__ import annotations

import math
import time
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from dpcore.rng import cell_seed_sequence
from dpcore.textaudit.sampling import OutputCodebook, SanitizerRaised, draw_counts
from dpcore.validation import DPCoreError

__all__ = ["DEFAULT_SCREEN_MINUTES", "MAX_DEFAULT_MINUTES", "Plan", "Speed", "fit_plan", "probe_speed"]

#: The default time budget of each stage (screen, confirmation) without an explicit budget.
DEFAULT_SCREEN_MINUTES = 3.0
#: A default plan that would take longer than this is refused (name a budget to run it anyway).
MAX_DEFAULT_MINUTES = 60.0
#: Fewest draws per word a fitted screen will take (below it, it says so in the plan).
MIN_FITTED_DRAWS = 20
#: Fewest confirmation draws per word a fitted plan will take.
MIN_FITTED_SAMPLES = 500
#: Work per screened word besides its draws (summary, pair score), seconds.
SCREEN_WORD_OVERHEAD = 4e-4
#: Parallel efficiency of extra local workers (measured ×1.7–1.85 on 2 workers).
WORKER_EFFICIENCY = 0.85


@dataclass(frozen=True)
class Speed:
    """Seconds per word and per draw of the sanitizer in one process (t(n) ≈ a + b·n)."""

    per_word: float
    per_draw: float
    probe_seconds: float

    def seconds(self, words: int, draws_per_word: int) -> float:
        return words * (self.per_word + self.per_draw * draws_per_word)


def probe_speed(sanitizer: Any, words: np.ndarray, ids: np.ndarray, seed: int) -> Speed:
    """Time the sanitizer's own draw path on a few words, small then larger (about 1 s in all).

    The draws come from a stream of their own (``"speed-probe"``) and are discarded.
    """
    from dpcore.textaudit.engine import _BaseOnly

    t_start = time.perf_counter()
    ids = np.asarray(ids, dtype=np.int64)[:3]
    fast = callable(getattr(sanitizer, "sample_ids", None))

    def timed(wid: int, n: int) -> float:
        rng = np.random.default_rng(cell_seed_sequence(seed, "text-audit", "speed-probe", int(wid), n))
        cb = _BaseOnly(len(words)) if fast else OutputCodebook(words)
        t0 = time.perf_counter()
        try:
            draw_counts(sanitizer, str(words[wid]), int(wid), n, rng, cb)  # type: ignore[arg-type]
        except SanitizerRaised:
            return math.nan
        return time.perf_counter() - t0

    small, big = [], []
    n1 = 16
    for wid in ids:
        t1 = timed(int(wid), n1)
        if math.isnan(t1):
            continue
        small.append(t1)
        # a larger call sized to take about 0.25 s at the small call's rate
        n2 = int(min(200_000, max(4 * n1, 0.25 * n1 / max(t1, 1e-6))))
        t2 = timed(int(wid), n2)
        if not math.isnan(t2):
            big.append((n2, t2))
        if time.perf_counter() - t_start > 3.0:
            break
    if not big:
        raise DPCoreError("the sanitizer's sample() failed on every word probed for its speed")
    n2 = float(np.median([n for n, _ in big]))
    t2 = float(np.median([t for _, t in big]))
    t1 = float(np.median(small))
    per_draw = max((t2 - t1) / max(n2 - n1, 1.0), t2 / n2 * 0.5, 1e-9)
    per_word = max(t1 - per_draw * n1, 0.0)
    return Speed(per_word, per_draw, time.perf_counter() - t_start)


@dataclass(frozen=True)
class Plan:
    """The fitted plan: draws per screened word, the screen budget, T, and the estimate."""

    minutes: float
    draws_per_word: int
    budget: int
    samples: int
    screen_seconds: float
    confirm_seconds: float
    estimate_seconds: float
    below_floor: bool
    draws_per_second: float
    workers: int

    def to_dict(self) -> dict[str, Any]:
        return asdict(self) | {"text": self.text()}

    def text(self) -> str:
        t = (
            f"the screen will draw m = {self.draws_per_word:,} outputs of each word "
            f"(budget {self.budget:,}), then T = {self.samples:,} draws per confirmed word; at the probed "
            f"{self.draws_per_second:,.0f} "
            f"draws/s on {self.workers} worker(s) that is about {_minutes(self.estimate_seconds)} in all "
            f"(screen {_minutes(self.screen_seconds)}, confirmation {_minutes(self.confirm_seconds)}; "
            f"fitted to {self.minutes:g} min per stage: name --screen-budget and --samples to choose)"
        )
        if self.below_floor:
            t += (
                "; m is below the 200 draws per word at which single outputs stand out, so the screen's "
                "single-output statement is weak (the pooled tests still use every draw)"
            )
        return t


def _minutes(s: float) -> str:
    return f"{s:.0f} s" if s < 90 else f"{s / 60:.1f} min"


def fit_plan(
    speed: Speed,
    *,
    screen_words: int,
    confirm_words: int,
    minutes: float,
    workers: int,
    max_budget: int,
    samples: int | None,
    max_samples: int,
    extra_seconds: float = 0.0,
) -> Plan:
    """Choose m (and T when ``samples`` is None) so that each stage takes about ``minutes``."""
    from dpcore.textaudit.screen import MAX_SCREEN_DRAWS, MIN_SCREEN_DRAWS

    eff = 1.0 if workers <= 1 else workers * WORKER_EFFICIENCY
    secs = 60.0 * minutes
    per_word = speed.per_word + SCREEN_WORD_OVERHEAD
    m_fit = (secs * eff / max(screen_words, 1) - per_word) / speed.per_draw
    m_cap = min(MAX_SCREEN_DRAWS, max_budget // max(screen_words, 1))
    m = int(max(MIN_FITTED_DRAWS, min(m_cap, math.floor(m_fit)))) if math.isfinite(m_fit) else m_cap
    if m >= MIN_SCREEN_DRAWS > m_fit:
        m = MIN_SCREEN_DRAWS
    below = m < MIN_SCREEN_DRAWS
    if samples is None:
        t_fit = (secs * eff / max(confirm_words, 1) - speed.per_word) / speed.per_draw
        samples = int(max(MIN_FITTED_SAMPLES, min(max_samples, math.floor(t_fit))))
    screen_s = screen_words * (per_word + speed.per_draw * m) / eff
    confirm_s = confirm_words * (speed.per_word + speed.per_draw * samples) / eff
    fixed = 1.0 + 2e-4 * screen_words + extra_seconds  # proposals, pooled tests, power statements
    total = screen_s + confirm_s + fixed
    plan = Plan(
        minutes=float(minutes),
        draws_per_word=int(m),
        budget=int(m * screen_words),
        samples=int(samples),
        screen_seconds=float(screen_s),
        confirm_seconds=float(confirm_s),
        estimate_seconds=float(total),
        below_floor=bool(below),
        draws_per_second=float(eff / speed.per_draw),
        workers=int(workers),
    )
    if total > 60.0 * MAX_DEFAULT_MINUTES:
        raise DPCoreError(
            f"even the smallest default plan would take about {_minutes(total)} at the probed "
            f"{plan.draws_per_second:,.0f} draws/s ({m:,} draws for each of {screen_words:,} words, then "
            f"T = {samples:,}); screen fewer words (--vocab-size, --screen-words) or name --screen-budget "
            "and --samples to run it anyway"
        )
    return plan
