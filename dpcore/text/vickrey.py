"""The Vickrey mechanisms (Xu, Aggarwal, Feyisetan and Teissier, PrivateNLP 2021).

"On a Utilitarian Approach to Privacy Preserving Text Generation": add the noise of a metric-DP
mechanism to φ(x) — spherical (CMP, Feyisetan et al. 2020) or regularised Mahalanobis (Xu et al.
2020) — then find the nearest word w₁ and the second-nearest word w₂ *to the noisy vector* ẑ,
with distances d₁ ≤ d₂, and output w₁ with probability

    p₁ = (1 − t)·d₂ / (t·d₁ + (1 − t)·d₂),     else w₂,

with the threshold t ∈ [0, 1] (t = 0: always the nearest, the plain noisy-NN mechanism; t = 0.5:
inverse-distance weighting; t = 1: always the second-nearest). This is the paper's selection
rule (equation numbers were not re-checked this session).

The selection only looks at ẑ and the public vocabulary, never at x: it is post-processing of the
noise mechanism's release, so the guarantee is exactly that of the noise (ε·d for CMP; the
Mahalanobis claim of :mod:`dpcore.text.mahalanobis`). The published code (MLDP) drops the input
word when it is the nearest: that inspects x after the noise and is reproduced, labelled, as
``flawed:vickrey-drops-input`` in :mod:`dpcore.flawed.text` — not here.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dpcore.text.mahalanobis import Mahalanobis
from dpcore.text.mechanisms import NOISY_NN_MAX_ELEMENTS, Feyisetan
from dpcore.text.registry import TEXT_MECHANISMS
from dpcore.text.sampling import iter_chunks
from dpcore.text.vocab import Vocabulary
from dpcore.validation import check_probability

__all__ = ["VickreyCMP", "VickreyMahalanobis", "first_choice_probability", "two_nearest"]


def two_nearest(
    vocab: Vocabulary, points: np.ndarray, max_elements: int = NOISY_NN_MAX_ELEMENTS
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(w₁, w₂, d₁, d₂): the nearest and second-nearest words to each point and their distances."""
    vec, sq = vocab.vectors, vocab.sq_norms
    n = len(points)
    w1, w2 = np.empty(n, dtype=np.int64), np.empty(n, dtype=np.int64)
    d1, d2 = np.empty(n), np.empty(n)
    for sl in iter_chunks(n, len(vocab), max_elements):
        p = points[sl]
        scores = p @ vec.T
        scores *= -2.0
        scores += sq[None, :]
        two = np.argpartition(scores, 1, axis=1)[:, :2]
        s2 = np.take_along_axis(scores, two, axis=1)
        swap = s2[:, 1] < s2[:, 0]
        two[swap] = two[swap][:, ::-1]
        s2[swap] = s2[swap][:, ::-1]
        pn = np.einsum("ij,ij->i", p, p)[:, None]
        d = np.sqrt(np.maximum(s2 + pn, 0.0))
        w1[sl], w2[sl], d1[sl], d2[sl] = two[:, 0], two[:, 1], d[:, 0], d[:, 1]
    return w1, w2, d1, d2


def first_choice_probability(d1: np.ndarray, d2: np.ndarray, t: float) -> np.ndarray:
    """p₁ = (1 − t)·d₂ / (t·d₁ + (1 − t)·d₂); 1 where the denominator is 0 (d₁ = d₂ = 0 or t, d₂ = 0)."""
    num = (1.0 - t) * d2
    den = t * d1 + num
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1.0), 1.0)


class _Vickrey:
    """Selection between the two nearest words to the noisy point (mixin over a noise mechanism)."""

    t: float
    vocab: Vocabulary

    def _noisy(self, ids: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        raise NotImplementedError

    def sample_ids(
        self, ids: np.ndarray, rng: np.random.Generator, *, max_elements: int = NOISY_NN_MAX_ELEMENTS
    ) -> np.ndarray:
        """Noise, then w₁ w.p. p₁ else w₂ (never looks at the input after the noise)."""
        ids = self._check_ids(ids)  # type: ignore[attr-defined]
        out = np.empty(ids.size, dtype=np.int64)
        for sl in iter_chunks(ids.size, len(self.vocab), max_elements):
            pts = self._noisy(ids[sl], rng)
            w1, w2, d1, d2 = two_nearest(self.vocab, pts, max_elements)
            first = rng.random(pts.shape[0]) < first_choice_probability(d1, d2, self.t)
            out[sl] = np.where(first, w1, w2)
        return out


@TEXT_MECHANISMS.register(
    "vickrey-cmp",
    summary="Vickrey over CMP noise: nearest or 2nd-nearest to the noisy point (t); ε·d metric DP.",
    citation="Xu et al. 2021 (PrivateNLP), Vickrey mechanism; noise of Feyisetan et al. 2020",
    tags=("monte-carlo",),
)
class VickreyCMP(_Vickrey, Feyisetan):
    """Vickrey (Xu et al. 2021) over the CMP noise of Feyisetan et al. (2020): ε·d metric DP.

    Parameters
    ----------
    vocab:
        The vocabulary V.
    epsilon:
        ε > 0 per unit of Euclidean distance.
    t:
        Threshold t ∈ [0, 1] (default 0.5; the paper tunes t per task).
    """

    name = "vickrey-cmp"

    def __init__(self, *, vocab: Vocabulary, epsilon: float, t: float = 0.5) -> None:
        super().__init__(vocab=vocab, epsilon=epsilon)
        self.t = check_probability(t, name="t")

    def _noisy(self, ids: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        m = self.vocab.dim
        radius = rng.gamma(shape=float(m), scale=1.0 / self.epsilon, size=ids.size)
        z = rng.standard_normal((ids.size, m))
        z *= (radius / np.linalg.norm(z, axis=1))[:, None]
        return z + self.vocab.vectors[ids]

    def params(self) -> dict[str, Any]:
        return super().params() | {"t": self.t}


@TEXT_MECHANISMS.register(
    "vickrey-mahalanobis",
    summary="Vickrey over regularised Mahalanobis noise (λ, t); the Mahalanobis mechanism's guarantee.",
    citation="Xu et al. 2021 (PrivateNLP), Vickrey mechanism; noise of Xu et al. 2020",
    tags=("monte-carlo",),
)
class VickreyMahalanobis(_Vickrey, Mahalanobis):
    """Vickrey (Xu et al. 2021) over the regularised Mahalanobis noise (Xu et al. 2020).

    Parameters
    ----------
    vocab, epsilon, lam:
        As :class:`~dpcore.text.mahalanobis.Mahalanobis`.
    t:
        Threshold t ∈ [0, 1] (default 0.5).
    """

    name = "vickrey-mahalanobis"

    def __init__(self, *, vocab: Vocabulary, epsilon: float, lam: float = 0.5, t: float = 0.5) -> None:
        super().__init__(vocab=vocab, epsilon=epsilon, lam=lam)
        self.t = check_probability(t, name="t")

    def _noisy(self, ids: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        return self.noisy_points(ids, rng)

    def params(self) -> dict[str, Any]:
        return super().params() | {"t": self.t}
