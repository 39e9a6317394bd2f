"""Small fixtures the text-audit tests share."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from dpcore.text.vocab import Vocabulary
from dpcore.textaudit.reference import KaryRandomizedResponse


def word_vocab(words: Sequence[str], dim: int = 4) -> Vocabulary:
    """A vocabulary of ``words`` with seeded random vectors in ``dim`` dimensions (frequency order)."""
    rng = np.random.default_rng(0)
    n = len(words)
    return Vocabulary.create(
        embedding="test",
        words=list(words),
        vectors=rng.standard_normal((n, dim)),
        frequency=np.arange(n, 0, -1.0),
        frequency_source="test",
    )


class ThinFlawKrr(KaryRandomizedResponse):
    """k-RR, correct except one word ``src``: ``mass`` of its mass uniform over ``support`` (the
    *thin* flaw of docs/audit-text.md). Declares no rows (``exact = False``); a subclass with
    ``exact = True`` keeps k-RR's declaration and so departs from it."""

    exact = False

    def __init__(
        self, *, epsilon: float, words: Sequence[str], src: int, support: np.ndarray, mass: float = 0.95
    ) -> None:
        super().__init__(epsilon=epsilon, words=words)
        self.src, self.support, self.mass = src, np.asarray(support), mass

    def _draw(self, ids: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        out = super()._draw(ids, rng)
        hit = (ids == self.src) & (rng.random(ids.size) < self.mass)
        pick = self.support[rng.integers(0, self.support.size, size=ids.size)]
        return np.where(hit, pick, out)
