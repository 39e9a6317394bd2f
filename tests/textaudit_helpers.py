"""Small fixtures the text-audit tests share."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from dpcore.text.vocab import Vocabulary


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
