"""Correct Laplace samplers by inverse CDF (Habernal 2022, §3.2).

These are the references the flawed DPText sampler (:mod:`dpcore.flawed.samplers`) is compared
with. They are floating-point samplers: they are exact in distribution up to double-precision
rounding but are *not* hardened against Mironov's (2012) floating-point attack on the low-order
bits; dpcore uses them for auditing and teaching, not to protect a production data release.
"""

from __future__ import annotations

import numpy as np

from dpcore.validation import DPCoreError, check_finite_float

__all__ = [
    "laplace_log_cdf",
    "laplace_log_sf",
    "laplace_logpdf",
    "laplace_sample_eq5",
    "laplace_sample_eq7",
    "open_uniform",
]

_HALF_ULP = 2.0**-54  # (k + 1/2) / 2**53 = k / 2**53 + 2**-54


def open_uniform(
    shape: int | tuple[int, ...], rng: np.random.Generator, *, out: np.ndarray | None = None
) -> np.ndarray:
    """Uniform draws on the *open* interval (0, 1): ``(k + 1/2) / 2**53``, ``k`` uniform.

    The grid is symmetric about 1/2 and excludes both end points, so ``log(u)``, ``log(1-u)`` and
    ``log(1 - 2|u - 1/2|)`` are always finite.

    ``k`` is the top 53 bits of one 64-bit draw, so ``k / 2**53`` is exactly
    ``rng.random()`` (numpy's ``integers(0, 2**53)`` takes the same bits: Lemire's method with a
    power-of-two range never rejects); adding ``2**-54`` then rounds exactly as ``(k + 1/2)`` did.
    Drawing that way fills ``out`` (float64, C-contiguous, of ``shape``) without a temporary; the
    values are bit for bit those of ``(rng.integers(0, 2**53) + 0.5) / 2**53``.
    """
    if out is None:
        u = rng.random(shape)
    else:
        u = rng.random(out=_check_out(out, shape))
    u += _HALF_ULP
    return u


def laplace_sample_eq5(scale: float, shape: int | tuple[int, ...], rng: np.random.Generator) -> np.ndarray:
    """Lap(0, b) by Habernal 2022 eq. (5): ``b ln(2u)`` if ``u < 1/2`` else ``-b ln(2(1-u))``.

    ``u ~ Uni(0, 1)`` (eq. 4 in its piecewise form, as in Li et al. 2019).
    """
    b = check_finite_float(scale, name="scale", min_value=0.0, min_inclusive=False)
    u = open_uniform(shape, rng)
    return np.where(u < 0.5, b * np.log(2.0 * u), -b * np.log(2.0 * (1.0 - u)))


def laplace_sample_eq7(
    scale: float,
    shape: int | tuple[int, ...],
    rng: np.random.Generator,
    *,
    out: np.ndarray | None = None,
    work: np.ndarray | None = None,
) -> np.ndarray:
    """Lap(0, b) by Habernal 2022 eqs. (6)–(7): ``v ~ Uni(-1/2, 1/2)``, ``-b sgn(v) ln(1 - 2|v|)``.

    ``out`` (the result) and ``work`` (scratch, clobbered) are optional float64 C-contiguous
    arrays of ``shape``; given both, nothing is allocated (the audit's hot path: allocating two
    2 MiB temporaries per chunk cost more than the arithmetic). The values are bit for bit
    ``-b * sgn(v) * log1p(-2|v|)``: ``copysign(b·log1p(-2|v|), v)`` differs from it only by
    multiplications with ±1, which are exact.
    """
    b = check_finite_float(scale, name="scale", min_value=0.0, min_inclusive=False)
    v = open_uniform(shape, rng, out=out)
    v -= 0.5
    w = np.abs(v) if work is None else np.abs(v, out=_check_out(work, v.shape))
    w *= -2.0
    np.log1p(w, out=w)
    w *= b
    # b·log1p(-2|v|) ≤ 0, so its sign flipped to sgn(v) is -b·sgn(v)·log1p(-2|v|); at v = 0 both
    # give +0.
    np.copysign(w, v, out=v)
    return v


def _check_out(out: np.ndarray, shape: int | tuple[int, ...]) -> np.ndarray:
    """``out`` if it is a writable C-contiguous float64 array of ``shape``, else a clear error."""
    want = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
    if (
        not isinstance(out, np.ndarray)
        or out.dtype != np.float64
        or out.shape != want
        or not out.flags.c_contiguous
        or not out.flags.writeable
    ):
        raise DPCoreError(f"out must be a writable C-contiguous float64 array of shape {want}")
    return out


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
