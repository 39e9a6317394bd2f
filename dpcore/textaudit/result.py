"""Results of a text audit, as dataclasses serialised one way (:meth:`TextAuditResult.to_dict`)."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any

import pandas as pd

from dpcore import __version__

__all__ = ["PairResult", "TextAuditResult", "lower_bound_ratio"]


def lower_bound_ratio(lower_bound: float, claimed_bound: float) -> float:
    """Lower bound / claimed bound (∞ when the claim is 0 and the bound is positive)."""
    if claimed_bound > 0:
        return lower_bound / claimed_bound
    return math.inf if lower_bound > 0 else 0.0


@dataclass(frozen=True)
class PairResult:
    """One pair (x, x′): the claimed bound, the empirical loss and its lower confidence bound.

    Attributes
    ----------
    distance:
        Euclidean distance d(x, x′) in the audit's embedding.
    claimed_bound:
        ε (LDP) or ε·d(x, x′) (metric), or the sanitizer's own ``claimed_bound``.
    empirical_epsilon:
        ln Pr̂[M(x) ∈ S] − ln Pr̂[M(x′) ∈ S] on the evaluation half (the larger direction; ∞ when
        the event never occurred from the other word).
    lower_bound:
        One-sided Clopper–Pearson lower bound on the same loss (Bonferroni-corrected).
    violates:
        ``lower_bound`` > ``claimed_bound``.
    direction:
        ``"x>x'"`` when the event favours x, else ``"x'>x"``.
    event_size, count_x, count_x_prime:
        |S| and how often each word's evaluation samples fell in S.
    exact_epsilon, exact_violates:
        The exact worst-case loss and whether it exceeds the claim (sanitizers with exact rows).
    """

    x: str
    x_prime: str
    distance: float
    claimed_bound: float
    empirical_epsilon: float
    lower_bound: float
    violates: bool
    direction: str
    event_size: int
    count_x: int
    count_x_prime: int
    exact_epsilon: float | None = None
    exact_violates: bool | None = None
    error: str | None = None
    #: The smallest violation this pair's test flags with probability ≥ 0.9, on an event of the
    #: probability its own event had (:mod:`dpcore.textaudit.power`).
    detectable_violation: dict[str, Any] | None = None

    @property
    def ratio(self) -> float:
        if self.error is not None:
            return math.nan
        return lower_bound_ratio(self.lower_bound, self.claimed_bound)


@dataclass(frozen=True)
class TextAuditResult:
    """The outcome of :func:`~dpcore.textaudit.runner.audit_text`."""

    mechanism: str
    epsilon: float
    guarantee: str
    embedding: str
    vocab_size: int
    samples: int
    pilot_samples: int
    candidates: int
    strategy: str
    seed: int
    confidence: float
    alpha_per_test: float
    max_detectable_loss: float
    verdict: str
    verdict_text: str
    max_lower_bound_ratio: float
    exact_verdict: str | None
    samples_drawn: int
    elapsed_seconds: float
    pairs: list[PairResult] = field(default_factory=list)
    pairs_tested: int = 0
    sanitizer: dict[str, Any] = field(default_factory=dict)
    failures: dict[str, str] = field(default_factory=dict)
    #: What the run could have caught (:mod:`dpcore.textaudit.power`).
    detectable_violation: dict[str, Any] = field(default_factory=dict)
    #: The screen's stage 1 (``strategy="screen"``): words, draws per word, candidates, failures.
    screen: dict[str, Any] | None = None
    #: How the run was executed (engine, workers, per-stage seconds): the only part that may differ
    #: between two runs of the same seed.
    execution: dict[str, Any] = field(default_factory=dict)
    #: Per screened word, the best pilot score (pilot lower bound − claim) of its candidate pairs.
    word_scores: Any = field(default=None, repr=False, compare=False)
    #: Vocabulary ids of the screened words (same order as ``word_scores``).
    screened_ids: Any = field(default=None, repr=False, compare=False)
    #: The screened words themselves (same order).
    screened_words: Any = field(default=None, repr=False, compare=False)
    dpcore_version: str = __version__
    test: str = (
        "best-prefix output event chosen on half the samples, loss bounded on the other half with "
        "one-sided Clopper–Pearson bounds, Bonferroni over pairs and directions"
    )

    @classmethod
    def build(
        cls,
        *,
        sanitizer: Any,
        vocab: Any,
        pairs: list[PairResult],
        samples: int,
        pilot_samples: int,
        candidates: int,
        strategy: str,
        seed: int,
        confidence: float,
        alpha: float,
        max_detectable: float,
        samples_drawn: int,
        elapsed: float,
        failures: dict[str, str] | None = None,
        detectable: dict[str, Any] | None = None,
        screen: dict[str, Any] | None = None,
        execution: dict[str, Any] | None = None,
        word_scores: Any = None,
        screened_ids: Any = None,
        screened_words: Any = None,
    ) -> TextAuditResult:
        failures = dict(failures or {})
        tested = [p for p in pairs if p.error is None]
        n = len(tested)
        viol = [p for p in tested if p.violates]
        ratios = [p.ratio for p in tested]
        max_ratio = max(ratios) if ratios else 0.0
        conf = f"{100 * confidence:g}%"
        size = (
            f"ε = {float(sanitizer.epsilon):g}, {n} pair(s), {samples:,} samples per word, "
            f"confidence {conf} family-wise"
        )
        if viol:
            worst = max(viol, key=lambda p: (p.ratio, p.lower_bound))
            text = (
                f"violates its claim: for ({worst.x!r}, {worst.x_prime!r}) the privacy loss is ≥ "
                f"{worst.lower_bound:.3g} at {conf} confidence, above the claimed {worst.claimed_bound:.3g}; "
                f"{len(viol)} of {n} pair(s) flagged ({size})"
            )
            verdict = "violates"
        elif n == 0:
            text = "no pair could be tested, so nothing was shown"
            verdict = "not-detected"
        else:
            unreachable = sum(1 for p in tested if p.claimed_bound >= max_detectable)
            text = f"no violation detected by this test ({size}); this does not show the mechanism is private"
            if unreachable:
                text += (
                    f". {unreachable} of the {n} claimed bounds are ≥ {max_detectable:.3g}, the largest loss "
                    f"{samples:,} samples per word can show: raise the samples to test them"
                )
            verdict = "not-detected"
        det = dict(detectable or {})
        if det.get("text"):
            text += f". Power: {det['text']}"
        if screen is not None:
            p_s = screen.get("detectable_output_probability", math.inf)
            m, n_w = screen["draws_per_word"], screen["words_screened"]
            text += (
                f". The screen drew {m:,} outputs of each of {n_w:,} words and confirmed its "
                f"{screen['proposed']} most suspicious pairs"
            )
            if math.isfinite(p_s):
                text += (
                    f"; a word producing one output with probability ≥ {p_s:.3g} that its partner almost "
                    "never produces would have been proposed with probability ≥ 0.95"
                )
        if failures:
            msg = next(iter(failures.values()))
            text += (
                f". The sanitizer's sample() failed on {len(failures)} word(s), so {len(pairs) - n} pair(s) "
                f"were not tested (first: {msg})"
            )
        exact = [p.exact_violates for p in tested if p.exact_violates is not None]
        exact_verdict = None if not exact else ("violates" if any(exact) else "within-claim")
        describe = getattr(sanitizer, "describe", None)
        info: dict[str, Any] = describe() if callable(describe) else {"type": type(sanitizer).__name__}
        return cls(
            mechanism=str(sanitizer.name),
            epsilon=float(sanitizer.epsilon),
            guarantee=str(sanitizer.guarantee),
            embedding=str(vocab.embedding),
            vocab_size=len(vocab),
            samples=samples,
            pilot_samples=pilot_samples,
            candidates=candidates,
            strategy=strategy,
            seed=seed,
            confidence=confidence,
            alpha_per_test=alpha,
            max_detectable_loss=max_detectable,
            verdict=verdict,
            verdict_text=text,
            max_lower_bound_ratio=float(max_ratio),
            exact_verdict=exact_verdict,
            samples_drawn=samples_drawn,
            elapsed_seconds=elapsed,
            pairs=pairs,
            pairs_tested=n,
            sanitizer=info,
            failures=failures,
            detectable_violation=det,
            screen=screen,
            execution=dict(execution or {}),
            word_scores=word_scores,
            screened_ids=screened_ids,
            screened_words=screened_words,
        )

    @property
    def violations(self) -> int:
        return sum(p.violates for p in self.pairs)

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out.pop("word_scores", None)
        out.pop("screened_ids", None)
        out.pop("screened_words", None)
        return out

    def to_frame(self) -> pd.DataFrame:
        """One row per pair."""
        rows = [asdict(p) | {"ratio": p.ratio} for p in self.pairs]
        return pd.DataFrame(rows)
