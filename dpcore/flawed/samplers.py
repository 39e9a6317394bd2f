"""FENCED: DPText's inverse-CDF "Laplace" sampler, which never produces negative noise.

Habernal (2022), §3.3, eqs. (8)–(9): DPText draws ``v ~ Uni(0, 1)`` (eq. 8) but applies the
transform meant for ``v ~ Uni(-1/2, 1/2)`` (eq. 9 = eq. 7): ``-b sgn(v) ln(1 - 2|v|)``. For
``v ≥ 1/2`` the logarithm's argument is ≤ 0, giving NaN (or +∞ at exactly 1/2); for ``v < 1/2``
the value is ``-b ln(U')`` with ``U' = 1 - 2v ~ Uni(0, 1]``, i.e. Exponential with scale b.
So the "noise" is never negative (Theorem 3.1), whatever is done with the NaNs.

Not private. Use only to demonstrate the failure.
"""

from __future__ import annotations

import numpy as np

from dpcore.validation import DPCoreError, check_finite_float

__all__ = ["dptext_noise", "dptext_noise_raw", "dptext_noise_resample"]


def dptext_noise_raw(scale: float, shape: int | tuple[int, ...], rng: np.random.Generator) -> np.ndarray:
    """The transform of eq. (9) applied to ``v ~ Uni[0, 1)`` (eq. 8), NaNs left in place."""
    b = check_finite_float(scale, name="scale", min_value=0.0, min_inclusive=False)
    v = rng.random(shape)
    with np.errstate(invalid="ignore", divide="ignore"):
        out = -b * np.sign(v) * np.log(1.0 - 2.0 * np.abs(v))
    out[~np.isfinite(out)] = np.nan  # v == 1/2 gives +inf: as undefined as the NaNs
    return out


def dptext_noise(
    scale: float, shape: int | tuple[int, ...], rng: np.random.Generator, *, out: np.ndarray | None = None
) -> np.ndarray:
    """DPText's sampler with NaN replaced by 0 (as in Habernal 2022's reproduction).

    Distribution: an atom of mass 1/2 at 0 plus (1/2)·Exponential(scale b).

    With ``out`` (float64, C-contiguous, of ``shape``) the draws are made in place, with no
    temporary: the same values as :func:`dptext_noise_raw` with NaN (and the +∞ of v = 1/2) → 0.
    """
    if out is None:
        z = dptext_noise_raw(scale, shape, rng)
        z[np.isnan(z)] = 0.0
        return z
    b = check_finite_float(scale, name="scale", min_value=0.0, min_inclusive=False)
    want = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
    if out.dtype != np.float64 or out.shape != want or not out.flags.c_contiguous:
        raise DPCoreError(f"out must be a C-contiguous float64 array of shape {want}")
    v = rng.random(out=out)  # eq. (8): v ~ Uni[0, 1), so |v| = v
    with np.errstate(invalid="ignore", divide="ignore"):
        v *= -2.0
        v += 1.0  # 1 − 2|v|
        np.log(v, out=v)
        v *= -b  # −b·sgn(v)·ln(1 − 2|v|); sgn(v) = 1 except at v = 0, where ln 1 = 0 anyway
    np.fmax(v, 0.0, out=v)  # NaN (v > 1/2) → 0; every other value is ≥ 0
    if v.size and v.max() == np.inf:  # v = 1/2 exactly (probability 2⁻⁵³ per draw): +∞ → 0
        v[np.isinf(v)] = 0.0
    return v


def dptext_noise_resample(
    scale: float, shape: int | tuple[int, ...], rng: np.random.Generator, *, out: np.ndarray | None = None
) -> np.ndarray:
    """DPText's sampler with NaN draws discarded and redrawn until enough remain.

    Distribution: Exponential with scale b (every value > 0). Vectorised: each round draws all
    missing values at once; about half are kept per round.

    A draw of eq. (8) is finite exactly when ``v < 1/2`` (``v = 1/2`` gives +∞, treated as NaN),
    so each round keeps those ``v`` and transforms only them: the same values, from the same
    draws, as transforming every draw and dropping the NaNs. ``out`` (float64, C-contiguous, of
    ``shape``) receives them in place.
    """
    b = check_finite_float(scale, name="scale", min_value=0.0, min_inclusive=False)
    want = (int(shape),) if isinstance(shape, (int, np.integer)) else tuple(int(d) for d in shape)
    if out is None:
        out = np.empty(want)
    elif out.dtype != np.float64 or out.shape != want or not out.flags.c_contiguous:
        raise DPCoreError(f"out must be a C-contiguous float64 array of shape {want}")
    flat = out.reshape(-1)
    total = flat.size
    filled = 0
    while filled < total:
        need = total - filled
        v = rng.random(max(2 * need, 16))
        keep = v[v < 0.5][:need]
        # −b·sgn(v)·ln(1 − 2|v|) with v ≥ 0 (at v = 0 both give −0.0)
        keep *= -2.0
        keep += 1.0
        np.log(keep, out=keep)
        keep *= -b
        flat[filled : filled + keep.size] = keep
        filled += keep.size
    return out
