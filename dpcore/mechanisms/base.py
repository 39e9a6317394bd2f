"""The vector-mechanism interface shared by the audit, the CLI and the dashboard.

Design:

- keyword-only constructors, as in diffprivlib (``Laplace(epsilon=1.0, dim=8)``);
- each mechanism knows its *privacy map*, as in OpenDP: the ε it claims
  (:attr:`VectorMechanism.claimed_epsilon`) and, where known, the ε it really gives
  (:attr:`VectorMechanism.true_epsilon`);
- vectorised batch sampling, as in DP-Sniper: ``sample(x, size, rng)`` draws ``size`` outputs at
  once.

The audit domain
----------------
All vector mechanisms here release a vector in the data domain ``[0, 1]^dim`` (the unit box of
Habernal 2022, §4). The identity query on that domain has L1 sensitivity ``dim`` and L2
sensitivity ``sqrt(dim)``. "True ε" is always stated for this domain.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Protocol, runtime_checkable

import numpy as np

from dpcore.limits import MAX_DIM as _MAX_DIM
from dpcore.mechanisms.samplers import laplace_log_cdf, laplace_log_sf, laplace_sample_eq7
from dpcore.validation import DPCoreError, check_epsilon, check_int

__all__ = [
    "MAX_DIM",
    "AdditiveNoiseMechanism",
    "IIDAuditable",
    "LaplaceNoiseMechanism",
    "VectorMechanism",
    "check_batch",
]

#: Largest dimension any vector mechanism accepts.
MAX_DIM = _MAX_DIM


@runtime_checkable
class VectorMechanism(Protocol):
    """What the audit needs from any (black-box) mechanism on real vectors."""

    name: str
    epsilon: float
    dim: int

    @property
    def claimed_epsilon(self) -> float:
        """The ε the mechanism's authors claim (``inf`` if it claims no privacy)."""
        ...

    @property
    def true_epsilon(self) -> float | None:
        """The ε it really satisfies on ``[0, 1]^dim`` (None where unknown)."""
        ...

    @property
    def delta(self) -> float:
        """The δ of an (ε, δ) claim; 0 for pure ε-DP."""
        ...

    def sample(self, x: np.ndarray, size: int, rng: np.random.Generator) -> np.ndarray:
        """Draw ``size`` independent outputs for input ``x``; returns shape ``(size, dim)``."""
        ...


@runtime_checkable
class IIDAuditable(Protocol):
    """A mechanism whose outputs on the constant inputs 0ⁿ and 1ⁿ have i.i.d. coordinates.

    For such mechanisms the audit's count of thresholded ones is exactly Binomial(n, p), so the
    audit is exact and Monte-Carlo needs only one binomial draw per trial.
    """

    def threshold_logprobs(self, threshold: float = 0.5) -> np.ndarray:
        """Return ``L`` (2×2) with ``L[b, 1] = log P(z_i ≥ t | x = bⁿ)``, ``L[b, 0] = log P(z_i < t)``."""
        ...


def check_batch(x: np.ndarray, size: int, dim: int) -> np.ndarray:
    """Validate one input vector and a batch size; return ``x`` as float64."""
    arr = np.asarray(x, dtype=np.float64)
    if arr.shape != (dim,):
        raise DPCoreError(f"input must have shape ({dim},), got {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise DPCoreError("input must be finite")
    check_int(size, name="size", min_value=0, max_value=2**40)
    return arr


class AdditiveNoiseMechanism(ABC):
    """``z = f(x) + Y`` with ``Y`` i.i.d. per coordinate, ``f`` a deterministic pre-processing.

    Subclasses provide the noise sampler and its log survival/CDF functions; the i.i.d. audit
    probabilities then follow exactly (:meth:`threshold_logprobs`).
    """

    name: str = "additive"

    def __init__(self, *, epsilon: float, dim: int) -> None:
        self.epsilon = check_epsilon(epsilon)
        self.dim = check_int(dim, name="dim", min_value=1, max_value=MAX_DIM)

    # --- privacy map -------------------------------------------------------------------------
    @property
    def claimed_epsilon(self) -> float:
        return self.epsilon

    @property
    def true_epsilon(self) -> float | None:
        return self.epsilon

    @property
    def delta(self) -> float:
        return 0.0

    # --- noise -------------------------------------------------------------------------------
    @abstractmethod
    def noise(self, shape: tuple[int, ...], rng: np.random.Generator) -> np.ndarray:
        """Draw i.i.d. noise of the given shape."""

    @abstractmethod
    def noise_log_sf(self, t: float) -> float:
        """``log P(Y ≥ t)``."""

    @abstractmethod
    def noise_log_cdf(self, t: float) -> float:
        """``log P(Y < t)``."""

    def preprocess(self, x: np.ndarray) -> np.ndarray:
        """Deterministic map applied before the noise (identity by default)."""
        return x

    def preprocess_constant(self, b: int) -> float:
        """The value every coordinate of ``preprocess(bⁿ)`` takes, for ``b`` in {0, 1}."""
        return float(self.preprocess(np.full(self.dim, float(b)))[0])

    # --- sampling ----------------------------------------------------------------------------
    def sample(self, x: np.ndarray, size: int, rng: np.random.Generator) -> np.ndarray:
        arr = check_batch(x, size, self.dim)
        return self.preprocess(arr)[None, :] + self.noise((size, self.dim), rng)

    def threshold_logprobs(self, threshold: float = 0.5) -> np.ndarray:
        out = np.empty((2, 2))
        for b in (0, 1):
            shift = threshold - self.preprocess_constant(b)
            out[b, 1] = self.noise_log_sf(shift)
            out[b, 0] = self.noise_log_cdf(shift)
        return out

    def __repr__(self) -> str:
        return f"{type(self).__name__}(epsilon={self.epsilon:g}, dim={self.dim})"


class LaplaceNoiseMechanism(AdditiveNoiseMechanism):
    """Additive Lap(0, b) noise with ``b = self.scale``, drawn by Habernal 2022 eq. (7)."""

    scale: float

    def noise(self, shape: tuple[int, ...], rng: np.random.Generator) -> np.ndarray:
        return laplace_sample_eq7(self.scale, shape, rng)

    def noise_log_sf(self, t: float) -> float:
        return laplace_log_sf(t, self.scale)

    def noise_log_cdf(self, t: float) -> float:
        return laplace_log_cdf(t, self.scale)
