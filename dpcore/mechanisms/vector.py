"""Correct mechanisms (and the two baselines) on real vectors in ``[0, 1]^dim``.

Each class cites the equation it implements. The flawed reproductions of published mechanisms
live in :mod:`dpcore.flawed`, never here.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import log_ndtr

from dpcore.mechanisms.base import (
    MAX_DIM,
    AdditiveNoiseMechanism,
    LaplaceNoiseMechanism,
    check_batch,
    check_buffers,
)
from dpcore.mechanisms.gaussian_calibration import analytic_gaussian_sigma
from dpcore.mechanisms.registry import VECTOR_MECHANISMS
from dpcore.validation import (
    DPCoreError,
    check_epsilon,
    check_finite_float,
    check_int,
    check_probability,
)

__all__ = ["ADePTCorrected", "Copy", "Gaussian", "Laplace", "RandomBits"]

_LOG_HALF = math.log(0.5)


@VECTOR_MECHANISMS.register(
    "copy",
    display="Copy",
    summary="Baseline: releases the input unchanged (no privacy; infinite loss).",
    citation="Habernal 2022, §5 and Fig. 2 (left)",
    tags=("paper-fig2", "baseline"),
)
class Copy:
    """The identity: ``z = x``. It claims no privacy (claimed and true ε are ∞).

    Baseline of Habernal (2022), §5, Fig. 2. ``epsilon`` is accepted for a uniform interface and
    ignored.
    """

    name = "copy"

    def __init__(self, *, epsilon: float, dim: int) -> None:
        self.epsilon = check_epsilon(epsilon)
        self.dim = check_int(dim, name="dim", min_value=1, max_value=MAX_DIM)

    claimed_epsilon = math.inf
    true_epsilon = math.inf
    delta = 0.0

    def sample(self, x: np.ndarray, size: int, rng: np.random.Generator) -> np.ndarray:
        arr = check_batch(x, size, self.dim)
        return np.broadcast_to(arr, (size, self.dim)).copy()

    def sample_into(
        self, x: np.ndarray, out: np.ndarray, rng: np.random.Generator, work: np.ndarray | None = None
    ) -> np.ndarray:
        """:meth:`sample` written into ``out`` (:class:`dpcore.mechanisms.BufferedSampler`)."""
        out[...] = check_batch(x, check_buffers(out, work, self.dim), self.dim)
        return out

    def threshold_logprobs(self, threshold: float = 0.5) -> np.ndarray:
        out = np.empty((2, 2))
        for b in (0, 1):
            above = float(b) >= threshold
            out[b, 1] = 0.0 if above else -math.inf
            out[b, 0] = -math.inf if above else 0.0
        return out


@VECTOR_MECHANISMS.register(
    "random",
    display="Random",
    summary="Baseline: fair coin flips regardless of the input (perfect privacy; zero loss).",
    citation="Habernal 2022, §5 and Fig. 2 (left)",
    tags=("paper-fig2", "baseline"),
)
class RandomBits:
    """Output independent of the input: each coordinate is a fair Bernoulli bit.

    Baseline of Habernal (2022), §5 (as in the paper's code). It is 0-DP: the output
    distribution is the same for every input, so claimed and true ε are 0.
    """

    name = "random"

    def __init__(self, *, epsilon: float, dim: int) -> None:
        self.epsilon = check_epsilon(epsilon)
        self.dim = check_int(dim, name="dim", min_value=1, max_value=MAX_DIM)

    claimed_epsilon = 0.0
    true_epsilon = 0.0
    delta = 0.0

    def sample(self, x: np.ndarray, size: int, rng: np.random.Generator) -> np.ndarray:
        check_batch(x, size, self.dim)
        return rng.integers(0, 2, size=(size, self.dim)).astype(np.float64)

    def sample_into(
        self, x: np.ndarray, out: np.ndarray, rng: np.random.Generator, work: np.ndarray | None = None
    ) -> np.ndarray:
        """:meth:`sample` written into ``out`` (:class:`dpcore.mechanisms.BufferedSampler`)."""
        check_batch(x, check_buffers(out, work, self.dim), self.dim)
        out[...] = rng.integers(0, 2, size=out.shape)  # the same int64 draws as `sample`
        return out

    def threshold_logprobs(self, threshold: float = 0.5) -> np.ndarray:
        if not 0.0 < threshold <= 1.0:
            raise DPCoreError("the random baseline is audited with a threshold in (0, 1]")
        return np.full((2, 2), _LOG_HALF)


@VECTOR_MECHANISMS.register(
    "laplace",
    display="Laplace",
    summary="Laplace mechanism, b = Δ₁/ε with Δ₁ = dim on [0,1]^dim (ε-DP).",
    citation="Dwork & Roth 2014, Def. 3.3; Habernal 2021, eqs. 4–5",
    tags=("paper-fig2",),
)
class Laplace(LaplaceNoiseMechanism):
    """The Laplace mechanism: ``z = x + Y``, ``Y_i ~ Lap(0, b)`` i.i.d., ``b = Δ₁/ε``.

    Habernal (2021) eqs. (4)–(5); Dwork & Roth (2014) Def. 3.3. On ``[0, 1]^dim`` the identity
    query has L1 sensitivity ``Δ₁ = dim``, so ``b = dim/ε`` (as in Habernal 2022, Fig. 2). It is
    ε-DP. Noise is drawn with the inverse CDF of Habernal (2022) eq. (7).
    """

    name = "laplace"

    def __init__(self, *, epsilon: float, dim: int) -> None:
        super().__init__(epsilon=epsilon, dim=dim)
        self.sensitivity = float(self.dim)
        self.scale = self.sensitivity / self.epsilon


@VECTOR_MECHANISMS.register(
    "gaussian",
    display="Gaussian",
    summary="Gaussian mechanism, analytic calibration to (ε, δ) with Δ₂ = √dim.",
    citation="Balle & Wang 2018, Thm. 8",
)
class Gaussian(AdditiveNoiseMechanism):
    """The analytic Gaussian mechanism: ``z = x + N(0, σ² I)``.

    σ is the smallest value satisfying Balle & Wang (2018) Theorem 8 for the L2 sensitivity
    ``Δ₂ = sqrt(dim)`` of the identity on ``[0, 1]^dim``. It is (ε, δ)-DP and the calibration is
    tight (the condition is necessary and sufficient).

    Parameters
    ----------
    epsilon:
        Privacy parameter ε > 0.
    dim:
        Dimension n.
    delta:
        δ in (0, 1); default 1e-5.
    """

    name = "gaussian"

    def __init__(self, *, epsilon: float, dim: int, delta: float = 1e-5) -> None:
        super().__init__(epsilon=epsilon, dim=dim)
        self._delta = check_probability(delta, name="delta", open_low=True, open_high=True)
        self.sensitivity = math.sqrt(self.dim)
        self.sigma = analytic_gaussian_sigma(
            epsilon=self.epsilon, delta=self._delta, sensitivity=self.sensitivity
        )

    @property
    def delta(self) -> float:
        return self._delta

    def noise(self, shape: tuple[int, ...], rng: np.random.Generator) -> np.ndarray:
        return rng.normal(0.0, self.sigma, size=shape)

    def noise_into(self, out: np.ndarray, rng: np.random.Generator, work: np.ndarray | None = None) -> None:
        # numpy's normal(0, σ) is 0 + σ·z with z from the same standard-normal draws, so filling
        # z in place and scaling gives the same values (up to the sign of an exact zero).
        rng.standard_normal(out=out)
        out *= self.sigma

    def noise_log_sf(self, t: float) -> float:
        return float(log_ndtr(-t / self.sigma))

    def noise_log_cdf(self, t: float) -> float:
        return float(log_ndtr(t / self.sigma))


@VECTOR_MECHANISMS.register(
    "adept-corrected",
    display="corrected ADePT",
    summary="ADePT with its true L1 sensitivity: clip₂ to C, then Lap(2C√n/ε) (ε-DP).",
    citation="Habernal 2021, Thm. 5.1 and §5 (corrected ADePT)",
)
class ADePTCorrected(LaplaceNoiseMechanism):
    """ADePT with the correct sensitivity: ``z = clip₂(x, C) + Y``, ``Y_i ~ Lap(0, 2C√n/ε)``.

    Habernal (2021) Theorem 5.1: the L1 sensitivity of L2 clipping at radius C in n dimensions
    is ``2C√n`` (not the L2 diameter 2C that ADePT used). With that scale the mechanism is ε-DP
    on every input. The default ``C = 1/2`` makes ADePT's claimed 2C equal to Fig. 2's Δ = 1
    (:class:`dpcore.flawed.mechanisms.ADePTFig2`). Clipping shrinks 1ⁿ to ``C/√n`` per
    coordinate, so the audit's attack sees less signal than with unclipped data.
    """

    name = "adept-corrected"

    def __init__(self, *, epsilon: float, dim: int, clip: float = 0.5) -> None:
        super().__init__(epsilon=epsilon, dim=dim)
        self.clip = check_finite_float(clip, name="clip", min_value=0.0, min_inclusive=False)
        self.sensitivity = 2.0 * self.clip * math.sqrt(self.dim)
        self.scale = self.sensitivity / self.epsilon

    def preprocess(self, x: np.ndarray) -> np.ndarray:
        norm = float(np.linalg.norm(x))
        return x if norm <= self.clip else x * (self.clip / norm)
