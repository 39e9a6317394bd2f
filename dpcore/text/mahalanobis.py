"""The Mahalanobis mechanism (Xu, Aggarwal, Feyisetan and Teissier, PrivateNLP 2020).

Feyisetan et al.'s mechanism adds spherical noise to φ(x) and outputs the nearest word; in sparse
regions of the embedding that noise rarely moves a word. Xu et al. (2020) shape the noise by the
embedding's covariance instead:

- Σ is the covariance of the vocabulary's vectors, scaled to unit mean variance (tr Σ = m), and
  Σ_λ = λ·Σ + (1 − λ)·I for λ ∈ [0, 1] (the *regularized* Mahalanobis metric, §3, Def. 2:
  ‖z‖_RM = √(zᵀ Σ_λ⁻¹ z));
- the noise Z has density ∝ exp(−ε‖Z‖_RM); it is sampled as Z = R · Σ_λ^{1/2} · U with U uniform
  on the unit sphere and R ~ Gamma(m, 1/ε) (§3, Algorithm 1);
- the output is the word nearest (Euclidean) to φ(x) + Z.

**Guarantee** (§3, Theorem 1): ε·d_RM metric LDP, with d_RM(x, x′) = ‖φ(x) − φ(x′)‖_RM: the noise
density changes by at most e^{ε·d_RM(x, x′)} when the centre moves from φ(x) to φ(x′), and the
nearest-word step is post-processing. The claim is in the regularized Mahalanobis distance, not
the Euclidean one: :meth:`Mahalanobis.privacy_distance` gives it, and the text audit and the
bound checks use it. λ = 0 is Feyisetan et al.'s mechanism (d_RM = Euclidean).

The output distribution has no closed form: metrics are Monte-Carlo, and ``tests/test_mahalanobis.py``
tests the noise itself against its density (the whitened noise is isotropic with a
Gamma(m, 1/ε) norm).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dpcore.parameters import ParameterSpec
from dpcore.text.mechanisms import NOISY_NN_MAX_ELEMENTS, TextMechanism, TextPrivacy
from dpcore.text.nearest import decode_in_chunks, nearest
from dpcore.text.registry import TEXT_MECHANISMS
from dpcore.text.vocab import Vocabulary
from dpcore.validation import DPCoreError, check_finite_float

__all__ = [
    "DEFAULT_LAMBDA",
    "Mahalanobis",
    "regularized_covariance",
]

#: dpcore's default λ (the paper sweeps λ; 0 is the spherical mechanism).
DEFAULT_LAMBDA = 0.5


_COV: dict[tuple[int, float], tuple[Any, np.ndarray, np.ndarray, np.ndarray]] = {}


def regularized_covariance(vocab: Vocabulary, lam: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(Σ_λ, Σ_λ^{1/2}, Σ_λ^{-1/2}) for the vocabulary's vectors (cached per vocabulary and λ).

    Σ is the population covariance of V's vectors divided by its mean diagonal (unit mean
    variance); Σ_λ = λΣ + (1 − λ)I (Xu et al. 2020, Def. 2). Square roots come from the
    eigendecomposition (Σ_λ is symmetric positive definite for λ < 1; for λ = 1 a floor of
    1e-12 on the eigenvalues keeps it invertible).
    """
    key = (id(vocab), float(lam))
    hit = _COV.get(key)
    if hit is not None and hit[0] is vocab:
        return hit[1], hit[2], hit[3]
    x = np.asarray(vocab.vectors, dtype=np.float64)
    cov = np.cov(x, rowvar=False, ddof=0)
    cov /= float(np.mean(np.diag(cov)))
    sig = lam * cov + (1.0 - lam) * np.eye(cov.shape[0])
    w, v = np.linalg.eigh(sig)
    w = np.maximum(w, 1e-12)
    half = (v * np.sqrt(w)) @ v.T
    inv_half = (v / np.sqrt(w)) @ v.T
    if len(_COV) > 8:
        _COV.clear()
    _COV[key] = (vocab, sig, half, inv_half)
    return sig, half, inv_half


def _check_lambda(lam: float) -> float:
    return check_finite_float(lam, name="lambda", min_value=0.0, max_value=1.0)


@TEXT_MECHANISMS.register(
    "mahalanobis",
    display="Mahalanobis",
    summary="Mahalanobis: φ(x) + elliptical noise ∝ exp(−ε‖z‖_RM), then the nearest word; ε·d_RM metric LDP.",
    citation="Xu et al. 2020 (PrivateNLP), regularized Mahalanobis metric, Def. 2, Algorithm 1, Theorem 1",
)
class Mahalanobis(TextMechanism):
    """Regularized Mahalanobis mechanism (Xu et al. 2020, Algorithm 1); Monte-Carlo distribution.

    Parameters
    ----------
    vocab
        The vocabulary V (its vectors give Σ).
    epsilon
        ε > 0 per unit of regularized Mahalanobis distance.
    lam
        λ ∈ [0, 1] (default 0.5): 0 is spherical noise (Feyisetan et al. 2020), 1 the full
        covariance.
    """

    PARAMETERS = (
        ParameterSpec(
            "lam", 0.5, "float", 0.0, 1.0,
            "λ of the regularized metric Σ_λ = λΣ + (1 − λ)I; 0 is the spherical mechanism "
            "(Xu et al. 2020, Def. 2)",
            step=0.05,
        ),
    )  # fmt: skip

    name = "mahalanobis"
    has_exact_distribution = False

    def __init__(self, *, vocab: Vocabulary, epsilon: float, lam: float = DEFAULT_LAMBDA) -> None:
        super().__init__(vocab=vocab, epsilon=epsilon)
        self.lam = _check_lambda(lam)
        if vocab.dim < 2:
            raise DPCoreError("the Mahalanobis mechanism needs embeddings of dimension ≥ 2")
        _, self._half, self._inv_half = regularized_covariance(vocab, self.lam)

    @property
    def privacy(self) -> TextPrivacy:
        return TextPrivacy(
            "metric DP",
            self.epsilon,
            0.0,
            f"regularized Mahalanobis {self.vocab.embedding} distance (λ = {self.lam:g})",
            "Xu et al. 2020, Theorem 1",
        )

    def params(self) -> dict[str, Any]:
        return super().params() | {"lam": self.lam}

    def privacy_distance(self, x: np.ndarray, x2: np.ndarray) -> np.ndarray:
        """d_RM(x, x′) = ‖Σ_λ^{-1/2}(φ(x) − φ(x′))‖ for paired ids: the metric of the claim."""
        x, x2 = self._check_ids(np.atleast_1d(x)), self._check_ids(np.atleast_1d(x2))
        diff = self.vocab.vectors[x].astype(np.float64) - self.vocab.vectors[x2]
        return np.linalg.norm(diff @ self._inv_half, axis=1)

    def noise(self, n: int, rng: np.random.Generator) -> np.ndarray:
        """``n`` draws of Z with density ∝ exp(−ε‖Z‖_RM): R·Σ_λ^{1/2}·U (Algorithm 1)."""
        m = self.vocab.dim
        u = rng.standard_normal((n, m))
        u /= np.linalg.norm(u, axis=1)[:, None]
        r = rng.gamma(shape=float(m), scale=1.0 / self.epsilon, size=n)
        return (u * r[:, None]) @ self._half

    def noisy_points(self, ids: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """φ(x) + Z for every id."""
        ids = self._check_ids(ids)
        return self.vocab.vectors[ids].astype(np.float64) + self.noise(ids.size, rng)

    def sample_ids(
        self, ids: np.ndarray, rng: np.random.Generator, *, max_elements: int = NOISY_NN_MAX_ELEMENTS
    ) -> np.ndarray:
        """Decode φ(x) + Z for each position,
        :data:`~dpcore.text.nearest.POSITION_CHUNK` positions at a time."""
        return decode_in_chunks(self._check_ids(ids), self.noisy_points, self.decode, rng)

    def decode(self, points: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """Noisy points → words: the nearest word (Algorithm 1, last step)."""
        return nearest(points, self.vocab)
