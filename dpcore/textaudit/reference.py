"""k-ary randomized response over a word list: the reference ε-LDP word mechanism.

Warner (1965); k-ary form as in Kairouz, Oh and Viswanath (2016, "Extremal mechanisms for local
differential privacy", eq. 8): a word x of a list of k words is kept with probability
e^ε / (e^ε + k − 1) and otherwise replaced by one of the other k − 1 words uniformly, so every
output has probability e^ε/(e^ε + k − 1) or 1/(e^ε + k − 1) and the worst-case loss is exactly ε.
It is the audit's known-correct (and tight) reference.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from dpcore.text.vocab import index_positions
from dpcore.validation import DPCoreError, check_epsilon

__all__ = ["KaryRandomizedResponse"]


class KaryRandomizedResponse:
    """k-ary randomized response over ``words`` (ε-LDP; Kairouz et al. 2016, eq. 8).

    Parameters
    ----------
    epsilon:
        ε > 0, the claimed and (here) the real guarantee.
    words:
        The k ≥ 2 distinct words of the output space.
    """

    guarantee = "ldp"
    exact = True

    def __init__(self, *, epsilon: float, words: Sequence[str]) -> None:
        self.epsilon = check_epsilon(epsilon)
        wl = list(dict.fromkeys(str(w) for w in words))
        if len(wl) < 2:
            raise DPCoreError("randomized response needs at least 2 distinct words")
        self.words = np.asarray(wl, dtype=object)
        self._index = pd.Index(self.words)
        self.name = "krr"

    @property
    def k(self) -> int:
        return len(self.words)

    @property
    def sampling_epsilon(self) -> float:
        """The ε the keep probability is computed from (equal to the claim here)."""
        return self.epsilon

    @property
    def keep_probability(self) -> float:
        """e^ε / (e^ε + k − 1), computed stably as 1 / (1 + (k − 1)·e^{−ε})."""
        return 1.0 / (1.0 + (self.k - 1) * math.exp(-self.sampling_epsilon))

    def _ids(self, words: Sequence[str]) -> np.ndarray:
        ids = index_positions(self._index, np.asarray(words, dtype=object))
        if ids.size and ids.min() < 0:
            bad = [w for w, i in zip(words, ids, strict=True) if i < 0][:3]
            raise DPCoreError(f"not in the randomized-response word list: {bad}")
        return ids.astype(np.int64)

    def sample_ids(self, word_id: int, n: int, rng: np.random.Generator) -> np.ndarray:
        """``n`` draws of M(word) as indices into ``words``."""
        return self._draw(np.full(n, word_id, dtype=np.int64), rng)

    def _draw(self, ids: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        keep = rng.random(ids.size) < self.keep_probability
        other = rng.integers(0, self.k - 1, size=ids.size)
        other += other >= ids  # uniform over the k − 1 words ≠ x
        return np.where(keep, ids, other)

    def sample(self, words: Sequence[str], rng: np.random.Generator) -> np.ndarray:
        """One draw per word (vectorised)."""
        return self.words[self._draw(self._ids(words), rng)]

    def log_prob_row(self, word: str) -> tuple[np.ndarray, np.ndarray]:
        """Exact log-probabilities of every output."""
        wid = int(self._ids([word])[0])
        p = self.keep_probability
        row = np.full(self.k, math.log1p(-p) - math.log(self.k - 1))
        row[wid] = math.log(p)
        return self.words, row

    def describe(self) -> dict[str, Any]:
        return {
            "adapter": "dpcore.textaudit.reference",
            "mechanism": self.name,
            "k": self.k,
            "epsilon": self.epsilon,
            "keep_probability": self.keep_probability,
        }
