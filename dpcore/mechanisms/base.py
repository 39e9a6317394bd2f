"""The vector-mechanism interface shared by the audit, the CLI and the dashboard.

Design:

- keyword-only constructors, as in diffprivlib (``Laplace(epsilon=1.0, dim=8)``);
- each mechanism knows its *privacy map*, as in OpenDP: the ε it claims
  (:attr:`VectorMechanism.claimed_epsilon`) and, where known, the ε it really gives
  (:attr:`VectorMechanism.true_epsilon`);
- vectorised batch sampling, as in DP-Sniper: ``sample(x, size, rng)`` draws ``size`` outputs at
  once; dpcore's own mechanisms also offer ``sample_into(x, out, rng, work)``
  (:class:`BufferedSampler`), the same values written into arrays the caller owns, which the
  Monte-Carlo audit reuses chunk after chunk.

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
    "BufferedSampler",
    "IIDAuditable",
    "LaplaceNoiseMechanism",
    "VectorMechanism",
    "check_batch",
    "check_buffers",
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


@runtime_checkable
class BufferedSampler(Protocol):
    """Optional fast path: a mechanism that writes a batch of outputs into caller-owned arrays.

    ``sample_into(x, out, rng, work)`` fills ``out`` (float64, C-contiguous, shape
    ``(size, dim)``) with exactly the values ``sample(x, size, rng)`` returns from the same
    generator state, and returns ``out``. ``work`` is optional scratch of the same shape and dtype
    that the mechanism may clobber. The Monte-Carlo audit calls it with the same two arrays for
    every chunk, so a chunk allocates nothing; a mechanism without it is audited through
    ``sample``.
    """

    def sample_into(
        self, x: np.ndarray, out: np.ndarray, rng: np.random.Generator, work: np.ndarray | None = None
    ) -> np.ndarray:
        """Fill ``out`` with ``len(out)`` independent outputs for input ``x``; return ``out``."""
        ...


def check_buffers(out: np.ndarray, work: np.ndarray | None, dim: int) -> int:
    """Validate the arrays of :meth:`BufferedSampler.sample_into`; return the batch size."""
    for name, arr in (("out", out), ("work", work)):
        if arr is None and name == "work":
            continue
        if (
            not isinstance(arr, np.ndarray)
            or arr.dtype != np.float64
            or arr.ndim != 2
            or arr.shape[1] != dim
            or not arr.flags.c_contiguous
            or not arr.flags.writeable
        ):
            raise DPCoreError(f"{name} must be a writable C-contiguous float64 array of shape (size, {dim})")
    if work is not None and work.shape != out.shape:
        raise DPCoreError(f"work must have the shape of out, {out.shape}, got {work.shape}")
    return int(out.shape[0])


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

    def noise_into(self, out: np.ndarray, rng: np.random.Generator, work: np.ndarray | None = None) -> None:
        """Fill ``out`` with :meth:`noise` of its shape (subclasses may draw in place instead).

        A subclass that defines its own :meth:`noise` gets this generic version back, so an
        inherited in-place fast path never bypasses the noise it declares
        (see :meth:`__init_subclass__`).
        """
        out[...] = self.noise(out.shape, rng)

    def __init_subclass__(cls, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        # Whatever a subclass redefines (its noise, or its whole sample) is what it is audited
        # with: an in-place fast path inherited from a parent would bypass the new code.
        if "noise" in cls.__dict__ and "noise_into" not in cls.__dict__:
            cls.noise_into = AdditiveNoiseMechanism.noise_into  # type: ignore[method-assign]
        if "sample" in cls.__dict__ and "sample_into" not in cls.__dict__:
            cls.sample_into = _sample_into_via_sample  # type: ignore[method-assign]

    # --- sampling ----------------------------------------------------------------------------
    def sample(self, x: np.ndarray, size: int, rng: np.random.Generator) -> np.ndarray:
        arr = check_batch(x, size, self.dim)
        return self._fill(arr, np.empty((size, self.dim)), rng, None)

    def sample_into(
        self, x: np.ndarray, out: np.ndarray, rng: np.random.Generator, work: np.ndarray | None = None
    ) -> np.ndarray:
        """:meth:`sample` written into ``out`` (see :class:`BufferedSampler`)."""
        size = check_buffers(out, work, self.dim)
        arr = check_batch(x, size, self.dim)
        return self._fill(arr, out, rng, work)

    def _fill(
        self, arr: np.ndarray, out: np.ndarray, rng: np.random.Generator, work: np.ndarray | None
    ) -> np.ndarray:
        # z = f(x) + Y: the noise is drawn into `out` and f(x) added in place. Addition commutes,
        # so these are the values of f(x)[None, :] + Y; adding f(x) = 0 is skipped (it could
        # only turn a noise value of -0.0 into +0.0, which compares equal).
        self.noise_into(out, rng, work)
        pre = self.preprocess(arr)
        if np.any(pre):
            out += pre
        return out

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

    def noise_into(self, out: np.ndarray, rng: np.random.Generator, work: np.ndarray | None = None) -> None:
        laplace_sample_eq7(self.scale, out.shape, rng, out=out, work=work)

    def noise_log_sf(self, t: float) -> float:
        return laplace_log_sf(t, self.scale)

    def noise_log_cdf(self, t: float) -> float:
        return laplace_log_cdf(t, self.scale)


def _sample_into_via_sample(
    self: VectorMechanism,
    x: np.ndarray,
    out: np.ndarray,
    rng: np.random.Generator,
    work: np.ndarray | None = None,
) -> np.ndarray:
    """``sample_into`` for a subclass that redefined ``sample``: run it, copy the result."""
    size = check_buffers(out, work, self.dim)
    z = np.asarray(self.sample(x, size, rng), dtype=np.float64)
    if z.shape != out.shape:
        raise DPCoreError(f"{self!r}.sample returned shape {z.shape}, expected {out.shape}")
    out[...] = z
    return out
