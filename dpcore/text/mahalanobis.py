"""The regularised Mahalanobis mechanism (Xu, Aggarwal, Feyisetan and Teissier, PrivateNLP 2020).

"A Differentially Private Text Perturbation Method Using a Regularized Mahalanobis Metric":
with Σ the covariance of the (public) vocabulary embedding, scaled to mean variance 1
(Σ̃ = Σ·m/tr Σ), and λ ∈ [0, 1], the regularised covariance is

    Σ_λ = λ·Σ̃ + (1 − λ)·I_m,

and the output for x is the nearest word to φ(x) + Z, where Z has density ∝ exp(−ε‖Σ_λ^{-1/2} z‖₂):
Z = R·Σ_λ^{1/2}·U with U uniform on the unit sphere and R ~ Gamma(m, 1/ε) (the paper's sampling
algorithm; λ = 0 is the spherical noise of Feyisetan et al. 2020). The paper proves ε·d_R metric
DP with the regularised Mahalanobis distance d_R(x, x′) = ‖Σ_λ^{-1/2}(φ(x) − φ(x′))‖₂. (Equation
numbers of the paper were not re-checked this session.)

dpcore's text audit and listings measure distance in the Euclidean embedding metric, so
:attr:`Mahalanobis.privacy` states the equivalent *Euclidean* claim implied by the theorem:
d_R ≤ ‖Σ_λ^{-1/2}‖₂·d with ‖Σ_λ^{-1/2}‖₂ = 1/√λ_min(Σ_λ) ≤ 1/√(1 − λ), so the mechanism is
(ε/√λ_min(Σ_λ))·d metric DP. It never claims less noise than the paper's theorem gives. The output
distribution has no closed form: metrics are Monte-Carlo.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from dpcore.text.mechanisms import NOISY_NN_MAX_ELEMENTS, TextMechanism, TextPrivacy
from dpcore.text.registry import TEXT_MECHANISMS
from dpcore.text.sampling import iter_chunks
from dpcore.text.vocab import Vocabulary
from dpcore.validation import check_probability

__all__ = ["Mahalanobis", "regularised_covariance_root"]

_ROOT_CACHE: dict[tuple[int, float], tuple[Vocabulary, np.ndarray, float]] = {}


def regularised_covariance_root(vocab: Vocabulary, lam: float) -> tuple[np.ndarray, float]:
    """Σ_λ^{1/2} (symmetric, m×m) and λ_min(Σ_λ) from the vocabulary embedding; cached per vocabulary."""
    key = (id(vocab), lam)
    hit = _ROOT_CACHE.get(key)
    if hit is not None and hit[0] is vocab:
        return hit[1], hit[2]
    vec = vocab.vectors
    m = vec.shape[1]
    cov = np.cov(vec, rowvar=False, ddof=0)
    cov *= m / np.trace(cov)  # mean variance 1
    sig = lam * cov + (1.0 - lam) * np.eye(m)
    w, q = np.linalg.eigh(sig)
    w = np.maximum(w, 0.0)
    root = (q * np.sqrt(w)) @ q.T
    if len(_ROOT_CACHE) >= 8:
        _ROOT_CACHE.pop(next(iter(_ROOT_CACHE)))
    _ROOT_CACHE[key] = (vocab, root, float(w.min()))
    return root, float(w.min())


def nearest_ids(
    vocab: Vocabulary, points: np.ndarray, max_elements: int = NOISY_NN_MAX_ELEMENTS
) -> np.ndarray:
    """argmin_y ‖p − φ(y)‖ for each row of ``points`` (chunked; no |points|×|V| matrix beyond a chunk)."""
    vec, sq = vocab.vectors, vocab.sq_norms
    out = np.empty(len(points), dtype=np.int64)
    for sl in iter_chunks(len(points), len(vocab), max_elements):
        scores = points[sl] @ vec.T
        scores *= -2.0
        scores += sq[None, :]
        out[sl] = np.argmin(scores, axis=1)
    return out


@TEXT_MECHANISMS.register(
    "mahalanobis",
    summary="Regularised Mahalanobis noise (λ) on the embedding, then nearest word; ε·d_R metric DP.",
    citation="Xu et al. 2020 (PrivateNLP), regularized Mahalanobis mechanism",
    tags=("monte-carlo",),
)
class Mahalanobis(TextMechanism):
    """Xu et al. (2020): nearest word to φ(x) + R·Σ_λ^{1/2}·U (see the module docstring).

    Parameters
    ----------
    vocab:
        The public vocabulary (Σ is its embedding covariance).
    epsilon:
        ε > 0 per unit of the regularised Mahalanobis distance d_R.
    lam:
        λ ∈ [0, 1) (λ = 1 is excluded: Σ̃ may be singular; 0: spherical noise as Feyisetan
        et al.; default 0.5, not a value the paper recommends over others).
    """

    name = "mahalanobis"
    has_exact_distribution = False

    def __init__(self, *, vocab: Vocabulary, epsilon: float, lam: float = 0.5) -> None:
        super().__init__(vocab=vocab, epsilon=epsilon)
        self.lam = check_probability(lam, name="lam", open_low=False, open_high=True)
        self._root, self._lmin = regularised_covariance_root(vocab, self.lam)

    @property
    def euclidean_epsilon(self) -> float:
        """ε/√λ_min(Σ_λ): the Euclidean metric-DP parameter implied by ε·d_R."""
        return self.epsilon / math.sqrt(self._lmin)

    @property
    def privacy(self) -> TextPrivacy:
        return TextPrivacy(
            "metric DP",
            self.euclidean_epsilon,
            0.0,
            f"Euclidean {self.vocab.embedding} distance",
            "Xu et al. 2020",
            scope=(
                f"from ε = {self.epsilon:g} per unit of the regularised Mahalanobis distance"
                f" (λ = {self.lam:g})"
            ),
        )

    def params(self) -> dict[str, Any]:
        return super().params() | {"lam": self.lam, "euclidean_epsilon": self.euclidean_epsilon}

    def noise(self, n: int, rng: np.random.Generator) -> np.ndarray:
        """``n`` draws of Z = R·Σ_λ^{1/2}·U, density ∝ exp(−ε‖Σ_λ^{-1/2} z‖)."""
        m = self.vocab.dim
        radius = rng.gamma(shape=float(m), scale=1.0 / self.epsilon, size=n)
        z = rng.standard_normal((n, m))
        z *= (radius / np.linalg.norm(z, axis=1))[:, None]
        return z @ self._root  # root is symmetric

    def noisy_points(self, ids: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """φ(x) + Z for each id."""
        ids = self._check_ids(ids)
        return self.vocab.vectors[ids] + self.noise(ids.size, rng)

    def sample_ids(
        self, ids: np.ndarray, rng: np.random.Generator, *, max_elements: int = NOISY_NN_MAX_ELEMENTS
    ) -> np.ndarray:
        """Noisy nearest neighbour per position, in chunks of positions."""
        ids = self._check_ids(ids)
        out = np.empty(ids.size, dtype=np.int64)
        for sl in iter_chunks(ids.size, len(self.vocab), max_elements):
            out[sl] = nearest_ids(self.vocab, self.noisy_points(ids[sl], rng), max_elements)
        return out
