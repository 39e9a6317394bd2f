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

from dpcore.validation import check_finite_float

__all__ = ["dptext_noise", "dptext_noise_raw", "dptext_noise_resample"]


def dptext_noise_raw(scale: float, shape: int | tuple[int, ...], rng: np.random.Generator) -> np.ndarray:
    """The transform of eq. (9) applied to ``v ~ Uni[0, 1)`` (eq. 8), NaNs left in place."""
    b = check_finite_float(scale, name="scale", min_value=0.0, min_inclusive=False)
    v = rng.random(shape)
    with np.errstate(invalid="ignore", divide="ignore"):
        out = -b * np.sign(v) * np.log(1.0 - 2.0 * np.abs(v))
    out[~np.isfinite(out)] = np.nan  # v == 1/2 gives +inf: as undefined as the NaNs
    return out


def dptext_noise(scale: float, shape: int | tuple[int, ...], rng: np.random.Generator) -> np.ndarray:
    """DPText's sampler with NaN replaced by 0 (as in Habernal 2022's reproduction).

    Distribution: an atom of mass 1/2 at 0 plus (1/2)·Exponential(scale b).
    """
    out = dptext_noise_raw(scale, shape, rng)
    out[np.isnan(out)] = 0.0
    return out


def dptext_noise_resample(scale: float, shape: int | tuple[int, ...], rng: np.random.Generator) -> np.ndarray:
    """DPText's sampler with NaN draws discarded and redrawn until enough remain.

    Distribution: Exponential with scale b (every value > 0). Vectorised: each round draws all
    missing values at once; about half are kept per round.
    """
    total = int(np.prod(shape))
    out = np.empty(total)
    filled = 0
    while filled < total:
        need = total - filled
        draw = dptext_noise_raw(scale, max(2 * need, 16), rng)
        keep = draw[~np.isnan(draw)][:need]
        out[filled : filled + keep.size] = keep
        filled += keep.size
    return out.reshape(shape)
