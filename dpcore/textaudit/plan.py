"""The audit's plan: every argument validated once, the pairs or words to draw, and the draws it costs.

:func:`~dpcore.textaudit.runner.audit_text` makes one :class:`AuditPlan` before anything is
drawn; its stages read their sizes from it. Callers that must refuse or price an audit before
running it (the CLI, the dashboard, a batch of verdicts) make the same plan with
:meth:`AuditPlan.create` and read :attr:`AuditPlan.estimated_draws` and
:meth:`AuditPlan.estimated_seconds`, so no one estimates an audit's size on their own.

A plan whose screen is fitted to a time budget (``screen_budget=None``) is sized again once the
sanitizer's speed is known (:meth:`AuditPlan.fit`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from dpcore.parallel import resolve_workers
from dpcore.rng import cell_seed_sequence, resolve_seed
from dpcore.text.vocab import Vocabulary
from dpcore.textaudit.engine import ENGINES
from dpcore.textaudit.pairs import STRATEGIES, candidate_pairs
from dpcore.textaudit.screen import DEFAULT_SCREEN_BUDGET, POOLED_CONFIRM, draws_per_word
from dpcore.textaudit.timing import DEFAULT_SCREEN_MINUTES, Plan, Speed, fit_plan
from dpcore.validation import DPCoreError, check_finite_float, check_int

__all__ = [
    "CONFIRM_WORDS_PER_PAIR",
    "MAX_COUNT_CELLS",
    "MAX_PAIRS",
    "MAX_SAMPLES",
    "MAX_TOTAL_SAMPLES",
    "AuditPlan",
]

MAX_SAMPLES = 10_000_000
MAX_PAIRS = 500
#: Draws in one audit (pilot and confirmation) for the API and the CLI.
MAX_TOTAL_SAMPLES = 2_000_000_000
#: Count cells held at once (distinct words × 2 halves × outputs), about 400 MB of int64.
MAX_COUNT_CELLS = 50_000_000
#: Distinct words per confirmed pair, for the time estimate (proposed pairs share words: 50
#: pairs of pyPANTERA CMP at |V| = 2,000 drew 58 words, not 100).
CONFIRM_WORDS_PER_PAIR = 1.25


@dataclass(frozen=True, eq=False)
class AuditPlan:
    """One audit's sizes, validated (made by :meth:`create`; frozen).

    Attributes
    ----------
    strategy:
        ``screen``, ``adaptive``, ``neighbors`` or ``random``.
    words_given:
        Whether the caller named the words (the result's strategy reads ``words (…)``).
    pairs, neighbors, samples, pilot:
        K, nearest neighbours per word, T (confirmation draws per word), pilot draws per word.
    screen_budget, screen_minutes, fitted, fit_samples:
        The screen's total draws; with ``fitted`` they (and with ``fit_samples`` T too) are
        fitted to ``screen_minutes`` per stage once the speed is probed.
    confidence, seed, engine, workers, address, max_total_samples:
        As given to :func:`~dpcore.textaudit.runner.audit_text` (workers resolved, seed drawn).
    word_ids, screen_ids:
        The named words' ids; the screened words' ids (None when not screening).
    m_screen:
        The screen's draws per word (for a fitted plan before :meth:`fit`: the largest it can be).
    candidates:
        Candidate pairs of a strategy over the vocabulary or named words, shape (k, 2) (empty for
        the screen, whose candidates come from its draws).
    n_candidates:
        Candidate pairs before the pilot kept K of them.
    use_pilot:
        Whether the adaptive pilot runs (more candidates than K).
    estimated_draws:
        Draws of the whole audit as planned (screen or pilot, and confirmation).
    """

    strategy: str
    words_given: bool
    pairs: int
    neighbors: int
    samples: int
    pilot: int
    screen_budget: int
    screen_minutes: float
    fitted: bool
    fit_samples: bool
    confidence: float
    seed: int
    engine: str
    workers: int
    address: str | None
    max_total_samples: int
    vocab_size: int
    word_ids: np.ndarray | None
    screen_ids: np.ndarray | None
    m_screen: int
    candidates: np.ndarray
    n_candidates: int
    use_pilot: bool
    estimated_draws: int

    @classmethod
    def create(
        cls,
        *,
        vocab: Vocabulary,
        words: Sequence[str] | None = None,
        pairs: int = 50,
        strategy: str | None = None,
        neighbors: int = 2,
        samples: int | None = 100_000,
        pilot_samples: int | None = None,
        screen_budget: int | None = DEFAULT_SCREEN_BUDGET,
        screen_words: Sequence[str] | None = None,
        screen_minutes: float = DEFAULT_SCREEN_MINUTES,
        seed: int | None = None,
        confidence: float = 0.95,
        max_total_samples: int = MAX_TOTAL_SAMPLES,
        engine: str = "local",
        workers: int | None = 1,
        address: str | None = None,
    ) -> AuditPlan:
        """Validate an audit's arguments (those of :func:`~dpcore.textaudit.runner.audit_text`).

        Raises
        ------
        DPCoreError
            One line per bad argument, or an audit over :data:`MAX_TOTAL_SAMPLES` draws or
            :data:`MAX_COUNT_CELLS` counts held at once.
        """
        if not isinstance(vocab, Vocabulary):
            raise DPCoreError("vocab must be a dpcore.text.vocab.Vocabulary")
        if strategy is None:
            strategy = "screen" if words is None else "adaptive"
        if strategy not in STRATEGIES:
            raise DPCoreError(f"unknown pair strategy {strategy!r}; choose one of: {', '.join(STRATEGIES)}")
        if strategy == "screen" and words is not None:
            raise DPCoreError("the screen covers the vocabulary; name words with screen_words, not words")
        pairs = check_int(pairs, name="pairs", min_value=1, max_value=MAX_PAIRS)
        neighbors = check_int(neighbors, name="neighbors", min_value=0, max_value=20)
        fitted = screen_budget is None and (strategy == "screen")
        fit_samples = samples is None
        if fit_samples and not fitted:
            raise DPCoreError(
                "samples=None (fitted to the time budget) needs the screen with screen_budget=None"
            )
        samples = check_int(
            100_000 if samples is None else samples, name="samples", min_value=100, max_value=MAX_SAMPLES
        )
        pilot = max(1_000, samples // 10) if pilot_samples is None else pilot_samples
        pilot = check_int(pilot, name="pilot samples", min_value=100, max_value=MAX_SAMPLES)
        screen_budget = check_int(
            DEFAULT_SCREEN_BUDGET if screen_budget is None else screen_budget,
            name="screen budget",
            min_value=1,
            max_value=max_total_samples,
        )
        screen_minutes = check_finite_float(
            screen_minutes, name="screen minutes", min_value=0.05, max_value=600.0
        )
        confidence = check_finite_float(confidence, name="confidence", min_value=0.5, max_value=0.999999)
        if confidence >= 1.0:
            raise DPCoreError("confidence must be < 1")
        if engine not in ENGINES:
            raise DPCoreError(f"unknown engine {engine!r}; choose one of: {', '.join(ENGINES)}")
        n_workers = resolve_workers(workers)
        if address is not None and engine != "ray":
            raise DPCoreError("address is for engine='ray'")
        seed = resolve_seed(seed)
        word_ids = None
        if words is not None:
            word_ids = word_ids_of(vocab, words, limit=200, what="audit")
            if len(word_ids) == 1 and neighbors == 0:
                raise DPCoreError("one word needs neighbours to pair with (neighbors ≥ 1) or a second word")
        plan = cls(
            strategy=strategy,
            words_given=words is not None,
            pairs=pairs,
            neighbors=neighbors,
            samples=samples,
            pilot=pilot,
            screen_budget=screen_budget,
            screen_minutes=screen_minutes,
            fitted=fitted,
            fit_samples=fit_samples,
            confidence=confidence,
            seed=seed,
            engine=engine,
            workers=n_workers,
            address=address,
            max_total_samples=max_total_samples,
            vocab_size=len(vocab),
            word_ids=word_ids,
            screen_ids=None,
            m_screen=0,
            candidates=np.zeros((0, 2), dtype=np.int64),
            n_candidates=0,
            use_pilot=False,
            estimated_draws=0,
        )
        plan = plan._screened(vocab, screen_words) if strategy == "screen" else plan._paired(vocab)
        plan._check_size()
        return plan

    def _screened(self, vocab: Vocabulary, screen_words: Sequence[str] | None) -> AuditPlan:
        ids = (
            np.arange(len(vocab), dtype=np.int64)
            if screen_words is None
            else word_ids_of(vocab, screen_words, limit=len(vocab), what="screen")
        )
        if len(ids) < 2:
            raise DPCoreError("the screen needs at least two words")
        if self.fitted:  # the real m comes from the speed probe; check the largest it can be
            m = max(1, min(self.screen_budget // len(ids), 1_000_000))
        else:
            m = draws_per_word(len(ids), self.screen_budget)
        total = len(ids) * m + min(len(ids), 2 * self.pairs) * self.samples
        return replace(self, screen_ids=ids, m_screen=m, estimated_draws=total)

    def _paired(self, vocab: Vocabulary) -> AuditPlan:
        cand = candidate_pairs(
            vocab,
            strategy=self.strategy,
            n_pairs=self.pairs,
            rng=self.pairs_rng(),
            word_ids=self.word_ids,
            neighbors=self.neighbors,
        )
        n_candidates = len(cand)
        use_pilot = n_candidates > self.pairs and self.strategy == "adaptive"
        if not use_pilot:
            cand = cand[: self.pairs]
        n_pilot_words = len(np.unique(cand)) if use_pilot else 0
        total = n_pilot_words * self.pilot + min(len(np.unique(cand)), 2 * self.pairs) * self.samples
        return replace(
            self, candidates=cand, n_candidates=n_candidates, use_pilot=use_pilot, estimated_draws=total
        )

    def _check_size(self) -> None:
        if self.estimated_draws > self.max_total_samples:
            raise DPCoreError(
                f"this audit would draw about {self.estimated_draws:,.0f} samples; the limit is "
                f"{self.max_total_samples:,} (lower samples, pilot samples, the screen budget or pairs)"
            )
        cand = self.candidates
        held = (
            min(len(np.unique(cand)) if len(cand) else 2 * self.pairs, 2 * self.pairs)
            if not self.use_pilot
            else len(np.unique(cand))
        )
        cells = max(held, 1) * 2 * (self.vocab_size + 16)
        if cells > MAX_COUNT_CELLS:
            raise DPCoreError(
                f"this audit would hold {cells:,} output counts at once (words × 2 × |V|); the limit is "
                f"{MAX_COUNT_CELLS:,}: use a smaller vocabulary or fewer pairs"
            )

    def pairs_rng(self) -> np.random.Generator:
        """The stream that chooses candidate pairs (random pairs, the screen's random partners)."""
        return np.random.default_rng(cell_seed_sequence(self.seed, "text-audit", "pairs"))

    @property
    def screen_draws(self) -> int:
        """Draws of the screen (stage 1): screened words × m."""
        return 0 if self.screen_ids is None else len(self.screen_ids) * self.m_screen

    @property
    def probe_ids(self) -> np.ndarray:
        """The words the rng contract and the speed probe look at: screened or candidate words."""
        ids = self.screen_ids if self.screen_ids is not None else np.unique(self.candidates)
        return ids.astype(np.int64)

    @property
    def strategy_label(self) -> str:
        """The strategy as a result records it (``words (adaptive)`` for named words)."""
        return f"words ({self.strategy})" if self.words_given else self.strategy

    def confirm_words(self) -> int:
        """Distinct words stage 2 is expected to draw (for the fitted plan)."""
        assert self.screen_ids is not None
        return min(len(self.screen_ids), round(CONFIRM_WORDS_PER_PAIR * self.pairs) + POOLED_CONFIRM)

    def fit(self, speed: Speed) -> tuple[AuditPlan, Plan]:
        """This plan sized for ``speed`` (a fitted screen): m, the budget and T; and the fit's record."""
        if not self.fitted or self.screen_ids is None:
            raise DPCoreError("only a screen with screen_budget=None is fitted to a time budget")
        fit = fit_plan(
            speed,
            screen_words=len(self.screen_ids),
            confirm_words=self.confirm_words(),
            minutes=self.screen_minutes,
            workers=self.workers,
            max_budget=DEFAULT_SCREEN_BUDGET,
            samples=None if self.fit_samples else self.samples,
            max_samples=100_000,
        )
        n = len(self.screen_ids)
        total = n * fit.draws_per_word + min(n, 2 * self.pairs) * fit.samples
        plan = replace(
            self,
            m_screen=fit.draws_per_word,
            screen_budget=fit.budget,
            samples=fit.samples,
            estimated_draws=total,
        )
        return plan, fit

    def estimated_seconds(self, speed: Speed) -> float:
        """Seconds the planned draws take at ``speed`` on one worker (the engine's overhead aside).

        Words: the screened words, or the pilot's candidate words, and about 2·K confirmed ones.
        """
        words = len(self.screen_ids) if self.screen_ids is not None else len(np.unique(self.candidates))
        return float(words * speed.per_word + self.estimated_draws * speed.per_draw)

    def to_dict(self) -> dict[str, Any]:
        """The plan's sizes (no arrays)."""
        return {
            "strategy": self.strategy_label,
            "pairs": self.pairs,
            "neighbors": self.neighbors,
            "samples": self.samples,
            "pilot_samples": self.pilot if self.use_pilot else 0,
            "screen_budget": self.screen_budget if self.strategy == "screen" else 0,
            "screen_draws_per_word": self.m_screen,
            "screened_words": 0 if self.screen_ids is None else len(self.screen_ids),
            "candidates": self.n_candidates,
            "confidence": self.confidence,
            "seed": self.seed,
            "estimated_draws": self.estimated_draws,
        }


def word_ids_of(vocab: Vocabulary, words: Sequence[str], *, limit: int, what: str) -> np.ndarray:
    """Vocabulary ids of ``words`` (deduplicated, stripped), with one clear error for bad ones."""
    wl = list(dict.fromkeys(str(w).strip() for w in words if str(w).strip()))
    if not wl:
        raise DPCoreError(f"give at least one word to {what}")
    if len(wl) > limit:
        raise DPCoreError(f"at most {limit:,} words to {what} at once, got {len(wl):,}")
    ids = vocab.ids(wl)
    missing = [w for w, i in zip(wl, ids, strict=True) if i < 0]
    if missing:
        shown = ", ".join(repr(m) for m in missing[:5])
        raise DPCoreError(f"{len(missing)} word(s) are not in the {len(vocab):,}-word vocabulary: {shown}")
    return ids
