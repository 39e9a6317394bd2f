"""Correct Laplace samplers by inverse CDF (Habernal 2022, §3.2).

These are the references the flawed DPText sampler (:mod:`dpcore.flawed.samplers`) is compared
with. They are floating-point samplers: they are exact in distribution up to double-precision
rounding but are *not* hardened against Mironov's (2012) floating-point attack on the low-order
bits; dpcore uses them for auditing and teaching, not to protect a production data release.
"""

from __future__ import annotations

import numpy as np

from dpcore.validation import check_finite_float

__all__ = [
    "laplace_log_cdf",
    "laplace_log_sf",
    "laplace_logpdf",
    "laplace_sample_eq5",
    "laplace_sample_eq7",
    "open_uniform",
]

_TWO53 = 2**53


def open_uniform(shape: int | tuple[int, ...], rng: np.random.Generator) -> np.ndarray:
    """Uniform draws on the *open* interval (0, 1): ``(k + 1/2) / 2**53``, ``k`` uniform.

    The grid is symmetric about 1/2 and excludes both end points, so ``log(u)``, ``log(1-u)`` and
    ``log(1 - 2|u - 1/2|)`` are always finite.
    """
    k = rng.integers(0, _TWO53, size=shape, dtype=np.int64)
    return (k.astype(np.float64) + 0.5) / _TWO53


def laplace_sample_eq5(scale: float, shape: int | tuple[int, ...], rng: np.random.Generator) -> np.ndarray:
    """Lap(0, b) by Habernal 2022 eq. (5): ``b ln(2u)`` if ``u < 1/2`` else ``-b ln(2(1-u))``.

    ``u ~ Uni(0, 1)`` (eq. 4 in its piecewise form, as in Li et al. 2019).
    """
    b = check_finite_float(scale, name="scale", min_value=0.0, min_inclusive=False)
    u = open_uniform(shape, rng)
    return np.where(u < 0.5, b * np.log(2.0 * u), -b * np.log(2.0 * (1.0 - u)))


def laplace_sample_eq7(scale: float, shape: int | tuple[int, ...], rng: np.random.Generator) -> np.ndarray:
    """Lap(0, b) by Habernal 2022 eqs. (6)–(7): ``v ~ Uni(-1/2, 1/2)``, ``-b sgn(v) ln(1 - 2|v|)``."""
    b = check_finite_float(scale, name="scale", min_value=0.0, min_inclusive=False)
    v = open_uniform(shape, rng)
    v -= 0.5
    # In place (the audit's hot path): the same values, bit for bit, as
    # -b * sgn(v) * log1p(-2|v|), since multiplying by sgn(v) = ±1 is exact.
    sgn = np.sign(v)
    np.abs(v, out=v)
    v *= -2.0
    np.log1p(v, out=v)
    v *= sgn
    v *= -b
    return v


def laplace_logpdf(x: np.ndarray, scale: float) -> np.ndarray:
    """Log density of Lap(0, b): ``-|x|/b - ln(2b)``."""
    return -np.abs(np.asarray(x, dtype=np.float64)) / scale - np.log(2.0 * scale)


def laplace_log_sf(t: float, scale: float) -> float:
    """``log P(Y ≥ t)`` for ``Y ~ Lap(0, b)``, accurate in both tails."""
    if t >= 0:
        return float(np.log(0.5) - t / scale)
    return float(np.log1p(-0.5 * np.exp(t / scale)))


def laplace_log_cdf(t: float, scale: float) -> float:
    """``log P(Y < t)`` for ``Y ~ Lap(0, b)``."""
    return laplace_log_sf(-t, scale)
