"""FENCED: published vector mechanisms whose privacy claims are false.

All four register with ``flawed=True``. Their ``claimed_epsilon`` is what the authors claimed;
their ``true_epsilon`` is what they really give on the audit domain ``[0, 1]^dim``.
"""

from __future__ import annotations

import math

import numpy as np

from dpcore.flawed.samplers import dptext_noise, dptext_noise_resample
from dpcore.mechanisms.base import AdditiveNoiseMechanism, LaplaceNoiseMechanism
from dpcore.mechanisms.registry import VECTOR_MECHANISMS
from dpcore.validation import check_finite_float

__all__ = ["DPNR", "ADePTFig2", "DPText", "DPTextResample"]


class _UnitScaleLaplace(LaplaceNoiseMechanism):
    """Lap(0, 1/ε) per coordinate whatever the dimension (sensitivity taken as 1)."""

    @property
    def scale(self) -> float:
        return 1.0 / self.epsilon

    @property
    def true_epsilon(self) -> float:
        # The identity on [0,1]^n has L1 sensitivity n; noise calibrated to 1 gives n·ε.
        return self.dim * self.epsilon


@VECTOR_MECHANISMS.register(
    "adept",
    display="ADePT",
    summary="ADePT as re-implemented in Habernal 2022 Fig. 2 — Lap(1/ε), Δ = 2C = 1 for every n.",
    flawed=True,
    citation="Krishna et al. 2021; Habernal 2021 Thm. 5.1; Habernal 2022 Fig. 2",
    tags=("paper-fig2",),
)
class ADePTFig2(_UnitScaleLaplace):
    """ADePT (Krishna et al. 2021) as re-implemented in Habernal (2022), Fig. 2.

    ``z = x + Y``, ``Y_i ~ Lap(0, 2C/ε)`` with the claimed sensitivity ``2C = 1`` whatever the
    dimension (Habernal 2021, eq. 6 with Δ = 2C). 2C is the L2 diameter of the clipping ball; the
    true L1 sensitivity of L2 clipping is ``2C√n`` (Habernal 2021, Thm. 5.1), and on the audit
    domain ``[0, 1]^n`` (L1 diameter n, no clipping in the Fig. 2 code) the mechanism is only
    ``n·ε``-DP. Not private.
    """

    name = "adept"


@VECTOR_MECHANISMS.register(
    "dpnr",
    display="DPNR",
    summary="DPNR (Lyu et al. 2020a) — per-coordinate Lap(1/ε) after min-max scaling; true cost k·ε.",
    flawed=True,
    citation="Lyu et al. 2020a, Thm. 1; corrected in Lai et al. 2022 (appendix), Thm. 1",
)
class DPNR(_UnitScaleLaplace):
    """DPNR (Lyu et al. 2020a): min-max normalise each of the k coordinates to [0, 1], then add
    ``Lap(0, 1/ε)`` to each.

    Lyu et al. claim ε-DP per word (their Thm. 1); each coordinate has sensitivity 1, so the
    k-dimensional release costs ``k·ε`` (corrected Thm. 1 in the appendix of Lai et al. 2022).
    Normalisation uses the known data domain ``[lo, hi] = [0, 1]`` per coordinate (min-max over a
    constant vector would divide by zero), so it is the identity on the audit's inputs. Not private
    at the claimed ε.
    """

    name = "dpnr"

    def __init__(self, *, epsilon: float, dim: int, lo: float = 0.0, hi: float = 1.0) -> None:
        super().__init__(epsilon=epsilon, dim=dim)
        self.lo = check_finite_float(lo, name="lo")
        self.hi = check_finite_float(hi, name="hi", min_value=self.lo, min_inclusive=False)

    def preprocess(self, x: np.ndarray) -> np.ndarray:
        return np.clip((x - self.lo) / (self.hi - self.lo), 0.0, 1.0)


class _DPTextBase(AdditiveNoiseMechanism):
    """DPText (Beigi et al. 2019): ``z = x + noise`` with ``b = Δ₁/ε = n/ε`` (Habernal 2022 §3)."""

    def __init__(self, *, epsilon: float, dim: int) -> None:
        super().__init__(epsilon=epsilon, dim=dim)
        self.scale = self.dim / self.epsilon

    @property
    def true_epsilon(self) -> float:
        return math.inf  # Habernal 2022, Theorem 3.2


@VECTOR_MECHANISMS.register(
    "dptext",
    display="DPText",
    summary="DPText's inverse-CDF sampler (NaN→0): noise never negative; infinite loss.",
    flawed=True,
    citation="Beigi et al. 2019; Habernal 2022 eqs. 8–9, Thms. 3.1–3.2",
    tags=("paper-fig2",),
)
class DPText(_DPTextBase):
    """DPText with NaN → 0: noise is 0 w.p. 1/2, else Exponential(b); b = n/ε.

    Habernal (2022) eqs. (8)–(9); Theorem 3.2 proves the privacy loss is infinite: an output
    below 1 in any coordinate is impossible under 1ⁿ. Not private.
    """

    name = "dptext"

    def noise(self, shape: tuple[int, ...], rng: np.random.Generator) -> np.ndarray:
        return dptext_noise(self.scale, shape, rng)

    def noise_into(self, out: np.ndarray, rng: np.random.Generator, work: np.ndarray | None = None) -> None:
        dptext_noise(self.scale, out.shape, rng, out=out)

    def noise_log_sf(self, t: float) -> float:
        # P(Y ≥ t) = 1/2·[t ≤ 0] + 1/2·P(Exp ≥ t)
        if t <= 0:
            return 0.0
        return math.log(0.5) - t / self.scale

    def noise_log_cdf(self, t: float) -> float:
        # P(Y < t) = 1 - P(Y ≥ t) = 1 - 1/2·e^{-t/b} for t > 0
        if t <= 0:
            return -math.inf
        return math.log1p(-0.5 * math.exp(-t / self.scale))


@VECTOR_MECHANISMS.register(
    "dptext-resample",
    display="resampled DPText",
    summary="DPText's sampler with NaNs discarded: Exponential noise; infinite loss.",
    flawed=True,
    citation="Beigi et al. 2019; Habernal 2022 §3.3 and Fig. 3",
)
class DPTextResample(_DPTextBase):
    """DPText with NaN draws discarded: the noise is Exponential(b), b = n/ε, never negative.

    Habernal (2022) §3.3 (second reading of the unreleased code). Infinite privacy loss
    (Theorem 3.2). Not private.
    """

    name = "dptext-resample"

    def noise(self, shape: tuple[int, ...], rng: np.random.Generator) -> np.ndarray:
        return dptext_noise_resample(self.scale, shape, rng)

    def noise_into(self, out: np.ndarray, rng: np.random.Generator, work: np.ndarray | None = None) -> None:
        dptext_noise_resample(self.scale, out.shape, rng, out=out)

    def noise_log_sf(self, t: float) -> float:
        return 0.0 if t <= 0 else -t / self.scale

    def noise_log_cdf(self, t: float) -> float:
        return -math.inf if t <= 0 else math.log(-math.expm1(-t / self.scale))
