"""The audit's α budget: the only place where α = 1 − confidence is split among tests.

A text audit makes one family-wise statement at ``confidence``: the chance that *any* of its
tests flags a sanitizer that keeps its claim is at most α = 1 − confidence. α is spent in
shares (docs/audit-text.md, "What a result means"):

- the **declaration** test, when the sanitizer declares its distribution: 10 % of α;
- the **pooled** tests of the screen: 20 % of α, split evenly (Bonferroni) over their tests;
- the **confirmation** (stage 2): the rest, split evenly over every (pair, direction, event)
  test it makes (:meth:`AlphaBudget.confirmation_tests` counts them): per pair, both directions
  of the event selected on the first half of its draws, the screen's output where the screen
  proposed the pair for one, and both directions of the event planned from the declared rows
  when the declaration agreed (added to the others, never in their place).

The adaptive **pilot** ranks pairs and decides nothing; its bounds are computed at
α / (2 · candidates) so that its ranking favours the pairs the confirmation can flag.

Every other module takes its level from an :class:`AlphaBudget`; a test in the suite checks
that no module of :mod:`dpcore.textaudit` divides α itself.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["ALPHA_DECLARATION", "ALPHA_POOLED", "AlphaBudget", "per_test"]

#: Share of α spent on the declaration test (when rows are declared).
ALPHA_DECLARATION = 0.1
#: Share of α spent on the pooled tests (the screen).
ALPHA_POOLED = 0.2


def per_test(alpha: float, n_tests: int) -> float:
    """Bonferroni: each of ``n_tests`` tests at α / n_tests (the family's error stays ≤ α)."""
    return alpha / n_tests


@dataclass(frozen=True)
class AlphaBudget:
    """α = 1 − confidence in shares, made once per audit.

    Attributes
    ----------
    confidence:
        The family-wise confidence of the audit's verdicts.
    alpha:
        1 − confidence.
    declaration, pooled, confirmation:
        Each stage's share of α (0 for a stage the audit does not run); they sum to α.

    Examples
    --------
    >>> b = AlphaBudget.split(0.95, declared=False, screened=True)
    >>> round(b.pooled, 12), round(b.confirmation, 12)
    (0.01, 0.04)
    >>> round(b.per_confirmation_test(8), 12)
    0.005
    """

    confidence: float
    alpha: float
    declaration: float
    pooled: float
    confirmation: float

    @classmethod
    def split(cls, confidence: float, *, declared: bool, screened: bool) -> AlphaBudget:
        """The shares for an audit with (``declared``) a declaration test and (``screened``) a screen."""
        alpha = 1.0 - confidence
        a_decl = ALPHA_DECLARATION * alpha if declared else 0.0
        a_pool = ALPHA_POOLED * alpha if screened else 0.0
        return cls(confidence, alpha, a_decl, a_pool, alpha - a_decl - a_pool)

    @staticmethod
    def confirmation_tests(n_pairs: int, n_screen_events: int, *, declared_events: bool) -> int:
        """Stage 2's Bonferroni count: every (pair, direction, event) test it makes (at least 1).

        Parameters
        ----------
        n_pairs:
            Pairs tested; each gets both directions of its selected event.
        n_screen_events:
            Pairs the screen proposed for one output; each also tests that output (one direction).
        declared_events:
            The declaration agreed: each pair also gets both directions of its planned event.

        Examples
        --------
        >>> AlphaBudget.confirmation_tests(5, 2, declared_events=True)
        22
        """
        per_pair = 2 + (2 if declared_events else 0)
        return max(1, per_pair * int(n_pairs) + int(n_screen_events))

    def per_confirmation_test(self, n_tests: int) -> float:
        """The level of each of stage 2's ``n_tests`` tests."""
        return per_test(self.confirmation, max(1, int(n_tests)))

    def per_pooled_test(self, n_tests: int) -> float:
        """The level of each of the screen's ``n_tests`` pooled tests."""
        return per_test(self.pooled, n_tests)

    def per_pilot_test(self, n_candidates: int) -> float:
        """The pilot's ranking level: α over both directions of every candidate pair."""
        return per_test(self.alpha, 2 * n_candidates)

    def to_dict(self, *, pooled_per_test: float, confirmation_tests: int) -> dict[str, Any]:
        """The result's ``alpha_accounting`` record."""
        return {
            "confidence": self.confidence,
            "alpha": self.alpha,
            "declaration": self.declaration,
            "pooled": self.pooled,
            "pooled_per_test": pooled_per_test,
            "confirmation": self.confirmation,
            "confirmation_tests": int(confirmation_tests),
            "per_confirmation_test": self.per_confirmation_test(confirmation_tests),
        }
