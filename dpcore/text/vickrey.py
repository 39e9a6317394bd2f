"""Vickrey mechanisms (Xu, Aggarwal, Feyisetan and Teissier, PrivateNLP 2021, "On a Utilitarian
Approach to Privacy Preserving Text Generation").

After the noise step of CMP (Feyisetan et al. 2020: spherical noise) or of the Mahalanobis
mechanism (Xu et al. 2020: elliptical noise), the noisy point ψ = φ(x) + Z is decoded to its
nearest word w₁ *or* its second-nearest word w₂. With d₁ ≤ d₂ the Euclidean distances from ψ to
them and a threshold t ∈ [0, 1], w₁ is chosen with probability

    p₁ = (1 − t)·d₂ / (t·d₁ + (1 − t)·d₂)        (§3, Algorithm 1, the Vickrey choice),

and w₂ otherwise: t = 0 is the plain nearest neighbour, t = 1 always takes the second, and
t = ½ weighs the two by their distances.

**Guarantee.** The choice depends only on ψ, V and fresh randomness, so it is post-processing of
the noise step: Vickrey-CMP keeps CMP's ε·d metric LDP (Euclidean distance) and
Vickrey-Mahalanobis keeps the ε·d_RM guarantee of the Mahalanobis mechanism (§3, Theorem 1 of
each paper). This holds only if the input is never looked at after the noise. sjmeis/MLDP's
``VickreyMechanism.replace_word`` removes the input word from the candidates when it is the
nearest: that version is fenced as ``flawed:vickrey-drops-input`` (:mod:`dpcore.flawed.text`) and
is not offered here.

Distributions are Monte-Carlo only. ``tests/test_vickrey.py`` checks the choice frequencies
against p₁ and that the mechanism's output never depends on the input beyond ψ.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dpcore.parameters import ParameterSpec
from dpcore.text.mahalanobis import DEFAULT_LAMBDA, Mahalanobis
from dpcore.text.mechanisms import NOISY_NN_MAX_ELEMENTS, Feyisetan, TextPrivacy
from dpcore.text.nearest import decode_in_chunks, nearest_two
from dpcore.text.registry import TEXT_MECHANISMS
from dpcore.text.vocab import Vocabulary
from dpcore.validation import check_finite_float

__all__ = ["VickreyCMP", "VickreyMahalanobis", "vickrey_choice", "vickrey_first_probability"]

#: dpcore's default threshold (the paper tunes t per task, §4).
DEFAULT_T = 0.5


def vickrey_first_probability(d1: np.ndarray, d2: np.ndarray, t: float) -> np.ndarray:
    """p₁ = (1 − t)·d₂ / (t·d₁ + (1 − t)·d₂) (Xu et al. 2021, Algorithm 1); 1 where d₁ = d₂ = 0."""
    num = (1.0 - t) * d2
    den = t * d1 + num
    with np.errstate(invalid="ignore", divide="ignore"):
        p = np.where(den > 0, num / np.where(den > 0, den, 1.0), 1.0)
    return np.clip(p, 0.0, 1.0)


def vickrey_choice(points: np.ndarray, vocab: Vocabulary, t: float, rng: np.random.Generator) -> np.ndarray:
    """Decode noisy points ψ: the nearest word w.p. p₁, else the second-nearest."""
    first, second, d1, d2 = nearest_two(points, vocab)
    take_first = rng.random(points.shape[0]) < vickrey_first_probability(d1, d2, t)
    return np.where(take_first, first, second)


_T_SPEC = ParameterSpec(
    "t", DEFAULT_T, "float", 0.0, 1.0,
    "threshold t of the Vickrey choice: 0 = nearest word, 1 = always the second (Xu et al. 2021, Alg. 1)",
    step=0.05,
)  # fmt: skip


def _check_t(t: float) -> float:
    return check_finite_float(t, name="t", min_value=0.0, max_value=1.0)


@TEXT_MECHANISMS.register(
    "vickrey-cmp",
    display="Vickrey-CMP",
    summary="Vickrey-CMP: spherical noise, then the nearest or 2nd-nearest word; ε·d metric LDP.",
    citation="Xu et al. 2021 (PrivateNLP), Vickrey mechanism, Algorithm 1; noise of Feyisetan et al. 2020",
)
class VickreyCMP(Feyisetan):
    """Vickrey-CMP (Xu et al. 2021, Algorithm 1 over CMP's noise); Monte-Carlo distribution.

    Parameters
    ----------
    vocab, epsilon
        As :class:`~dpcore.text.mechanisms.Feyisetan` (ε per unit of Euclidean distance).
    t
        Threshold t ∈ [0, 1] (default 0.5).
    """

    PARAMETERS = (_T_SPEC,)

    name = "vickrey-cmp"

    def __init__(self, *, vocab: Vocabulary, epsilon: float, t: float = DEFAULT_T) -> None:
        super().__init__(vocab=vocab, epsilon=epsilon)
        self.t = _check_t(t)

    @property
    def privacy(self) -> TextPrivacy:
        base = super().privacy
        return TextPrivacy(
            base.notion, base.epsilon, 0.0, base.metric, "Xu et al. 2021; Feyisetan et al. 2020"
        )

    def params(self) -> dict[str, Any]:
        return super().params() | {"t": self.t}

    def noisy_points(self, ids: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """φ(x) + Z with density of Z ∝ exp(−ε‖Z‖₂) (uniform direction, Gamma(m, 1/ε) radius)."""
        ids = self._check_ids(ids)
        m = self.vocab.dim
        u = rng.standard_normal((ids.size, m))
        u /= np.linalg.norm(u, axis=1)[:, None]
        r = rng.gamma(shape=float(m), scale=1.0 / self.epsilon, size=ids.size)
        return self.vocab.vectors[ids].astype(np.float64) + u * r[:, None]

    def sample_ids(
        self, ids: np.ndarray, rng: np.random.Generator, *, max_elements: int = NOISY_NN_MAX_ELEMENTS
    ) -> np.ndarray:
        """Decode φ(x) + Z with the Vickrey choice,
        :data:`~dpcore.text.nearest.POSITION_CHUNK` positions at a time."""
        return decode_in_chunks(self._check_ids(ids), self.noisy_points, self.decode, rng)

    def decode(self, points: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """Noisy points → the nearest word w.p. p₁, else the second-nearest (Algorithm 1)."""
        return vickrey_choice(points, self.vocab, self.t, rng)


@TEXT_MECHANISMS.register(
    "vickrey-mahalanobis",
    display="Vickrey-Mahalanobis",
    summary="Vickrey-Mahalanobis: elliptical noise, then the nearest or 2nd-nearest word; ε·d_RM metric LDP.",
    citation="Xu et al. 2021 (PrivateNLP), Vickrey mechanism, Algorithm 1; noise of Xu et al. 2020",
)
class VickreyMahalanobis(Mahalanobis):
    """Vickrey-Mahalanobis (Xu et al. 2021 over the noise of Xu et al. 2020); Monte-Carlo.

    Parameters
    ----------
    vocab, epsilon, lam
        As :class:`~dpcore.text.mahalanobis.Mahalanobis`.
    t
        Threshold t ∈ [0, 1] (default 0.5).
    """

    PARAMETERS = (*Mahalanobis.PARAMETERS, _T_SPEC)

    name = "vickrey-mahalanobis"

    def __init__(
        self, *, vocab: Vocabulary, epsilon: float, lam: float = DEFAULT_LAMBDA, t: float = DEFAULT_T
    ) -> None:
        super().__init__(vocab=vocab, epsilon=epsilon, lam=lam)
        self.t = _check_t(t)

    @property
    def privacy(self) -> TextPrivacy:
        base = super().privacy
        return TextPrivacy(
            base.notion, base.epsilon, 0.0, base.metric, "Xu et al. 2021; Xu et al. 2020, Theorem 1"
        )

    def params(self) -> dict[str, Any]:
        return super().params() | {"t": self.t}

    def decode(self, points: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """Noisy points → the nearest word w.p. p₁, else the second-nearest (Algorithm 1)."""
        return vickrey_choice(points, self.vocab, self.t, rng)
