"""Sampler inspector (Habernal 2022, §3, Fig. 3): DPText's "Laplace" sampler against correct ones.

Draws from the correct inverse-CDF samplers (eqs. 4/5 and eq. 7, :mod:`dpcore.mechanisms.samplers`)
and from DPText's sampler (eqs. 8–9, :mod:`dpcore.flawed.samplers`, NaN → 0 or NaN discarded),
histograms them against the true Laplace density, tests each with Kolmogorov–Smirnov, and works
out the infinite privacy loss of eq. (11): with z = 0.1, P(M(0) = z) > 0 but P(M(1) = z) = 0.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import stats

from dpcore.flawed.samplers import dptext_noise, dptext_noise_resample
from dpcore.mechanisms.samplers import laplace_logpdf, laplace_sample_eq5, laplace_sample_eq7
from dpcore.rng import cell_seed_sequence, resolve_seed
from dpcore.validation import DPCoreError, check_finite_float, check_int

__all__ = [
    "MAX_SAMPLES",
    "SAMPLERS",
    "InfiniteLossExample",
    "SamplerInfo",
    "SamplerInspection",
    "draw",
    "infinite_loss_example",
    "inspect_samplers",
    "noise_logpdf",
]

#: Largest number of draws per sampler.
MAX_SAMPLES = 5_000_000
MAX_SCALE = 1e6


@dataclass(frozen=True)
class SamplerInfo:
    name: str
    label: str
    flawed: bool
    citation: str
    sample: Callable[[float, int, np.random.Generator], np.ndarray]


#: The samplers shown side by side, in display order.
SAMPLERS: dict[str, SamplerInfo] = {
    s.name: s
    for s in (
        SamplerInfo(
            "eq5",
            "Laplace, eqs. 4/5 (u ~ Uni(0, 1))",
            False,
            "Habernal (2022), eqs. (4)–(5)",
            laplace_sample_eq5,
        ),
        SamplerInfo(
            "eq7",
            "Laplace, eq. 7 (v ~ Uni(−½, ½))",
            False,
            "Habernal (2022), eqs. (6)–(7)",
            laplace_sample_eq7,
        ),
        SamplerInfo(
            "dptext-nan0",
            "DPText, NaN → 0 (flawed)",
            True,
            "Habernal (2022), eqs. (8)–(9), Theorem 3.1",
            dptext_noise,
        ),
        SamplerInfo(
            "dptext-resample",
            "DPText, NaN discarded (flawed)",
            True,
            "Habernal (2022), eqs. (8)–(9), Theorem 3.1",
            dptext_noise_resample,
        ),
    )
}


def _check_scale(scale: object) -> float:
    return check_finite_float(scale, name="scale b", min_value=0.0, min_inclusive=False, max_value=MAX_SCALE)


def _check_sampler(name: str) -> SamplerInfo:
    try:
        return SAMPLERS[name]
    except (KeyError, TypeError):
        raise DPCoreError(f"unknown sampler {name!r}; choose one of: {', '.join(SAMPLERS)}") from None


def draw(name: str, scale: float, size: int, seed: int, *, stream: str = "noise") -> np.ndarray:
    """``size`` draws of sampler ``name`` with scale b, from the stream (seed, name, stream).

    Each sampler has its own stream, so its draws do not depend on which others are shown.
    """
    info = _check_sampler(name)
    b = _check_scale(scale)
    n = check_int(size, name="sample size", min_value=1, max_value=MAX_SAMPLES)
    rng = np.random.default_rng(cell_seed_sequence(seed, "sampler", name, stream))
    return np.asarray(info.sample(b, n, rng), dtype=np.float64)


def noise_logpdf(name: str, t: np.ndarray | float, scale: float) -> np.ndarray:
    """Log density of the noise a sampler produces, at ``t`` (−∞ where it is zero).

    - ``eq5``, ``eq7``: Lap(0, b), ``−|t|/b − ln 2b`` (Habernal 2022, eqs. 4–7).
    - ``dptext-resample``: Exponential(b), ``−t/b − ln b`` for t > 0 (from eqs. 8–9: for
      v < ½, 1 − 2v ~ Uni(0, 1] so −b ln(1 − 2v) is exponential; v ≥ ½ gives NaN).
    - ``dptext-nan0``: an atom of mass ½ at 0 plus ½·Exponential(b); this is the log density
      of the continuous part, ``ln ½ − t/b − ln b`` for t > 0 (the atom is not a density).
    """
    info = _check_sampler(name)
    b = _check_scale(scale)
    t = np.asarray(t, dtype=np.float64)
    if not info.flawed:
        return laplace_logpdf(t, b)
    base = -t / b - math.log(b)
    if name == "dptext-nan0":
        base = base + math.log(0.5)
    return np.where(t > 0, base, -np.inf)


@dataclass(frozen=True)
class SamplerSummary:
    """Statistics of one sampler's draws, with the KS test against Lap(0, b)."""

    name: str
    label: str
    flawed: bool
    citation: str
    fraction_negative: float
    fraction_zero: float
    mean: float
    std: float
    ks_statistic: float
    ks_pvalue: float
    fraction_outside: float
    density: list[float]


@dataclass(frozen=True)
class SamplerInspection:
    """Histograms of several samplers on common bins, and the Laplace density on a grid."""

    scale: float
    size: int
    seed: int
    edges: list[float]
    grid: list[float]
    laplace_density: list[float]
    summaries: list[SamplerSummary]
    citation: str = "Habernal (2022), §3, Fig. 3"

    def parameters(self) -> dict[str, Any]:
        return {"scale": self.scale, "size": self.size, "seed": self.seed, "citation": self.citation}

    def rows(self) -> list[dict[str, Any]]:
        """One dict per (sampler, bin): bin edges, empirical density, Laplace density at centre."""
        out: list[dict[str, Any]] = []
        edges = np.asarray(self.edges)
        centres = 0.5 * (edges[:-1] + edges[1:])
        lap = np.exp(laplace_logpdf(centres, self.scale))
        for s in self.summaries:
            for lo, hi, d, ld in zip(edges[:-1], edges[1:], s.density, lap, strict=True):
                out.append(
                    {
                        "sampler": s.name,
                        "bin_low": float(lo),
                        "bin_high": float(hi),
                        "density": d,
                        "laplace_density": float(ld),
                    }
                )
        return out

    def summary_rows(self) -> list[dict[str, Any]]:
        return [
            {
                "sampler": s.name,
                "label": s.label,
                "flawed": s.flawed,
                "fraction_negative": s.fraction_negative,
                "fraction_zero": s.fraction_zero,
                "mean": s.mean,
                "std": s.std,
                "ks_statistic": s.ks_statistic,
                "ks_pvalue": s.ks_pvalue,
                "citation": s.citation,
            }
            for s in self.summaries
        ]

    def to_dict(self) -> dict[str, Any]:
        return {**self.parameters(), "summaries": self.summary_rows()}


def inspect_samplers(
    scale: float,
    size: int,
    *,
    seed: int | None = None,
    samplers: Sequence[str] | None = None,
    bins: int = 80,
    half_range: float = 6.0,
) -> SamplerInspection:
    """Histogram each sampler (Habernal 2022, Fig. 3) and test it against Lap(0, b).

    Parameters
    ----------
    scale : float
        Laplace scale b > 0.
    size : int
        Draws per sampler (1..5·10⁶).
    seed : int or None
        Seed (None: fresh, recorded).
    samplers : sequence of str, optional
        Names from :data:`SAMPLERS` (default: all).
    bins : int
        Histogram bins on ``[−half_range·b, half_range·b]``.
    half_range : float
        Half-width of the histogram range, in units of b.

    Returns
    -------
    SamplerInspection
        Densities per bin (mass outside the range is reported as ``fraction_outside``), and
        for each sampler the fraction of negative draws, of exact zeros and the two-sided KS
        test of its draws against Lap(0, b) (scipy.stats.kstest).
    """
    b = _check_scale(scale)
    n = check_int(size, name="sample size", min_value=1, max_value=MAX_SAMPLES)
    k = check_int(bins, name="bins", min_value=2, max_value=1000)
    h = check_finite_float(half_range, name="half range", min_value=0.0, min_inclusive=False, max_value=100)
    s = resolve_seed(seed)
    names = list(SAMPLERS) if samplers is None else list(dict.fromkeys(samplers))
    if not names:
        raise DPCoreError("choose at least one sampler")
    edges = np.linspace(-h * b, h * b, k + 1)
    grid = np.linspace(-h * b, h * b, 401)
    summaries: list[SamplerSummary] = []
    for name in names:
        info = _check_sampler(name)
        z = draw(name, b, n, s)
        counts, _ = np.histogram(z, bins=edges)
        density = counts / (n * np.diff(edges))
        ks = stats.kstest(z, "laplace", args=(0.0, b))
        summaries.append(
            SamplerSummary(
                name=name,
                label=info.label,
                flawed=info.flawed,
                citation=info.citation,
                fraction_negative=float(np.count_nonzero(z < 0) / n),
                fraction_zero=float(np.count_nonzero(z == 0) / n),
                mean=float(z.mean()),
                std=float(z.std()),
                ks_statistic=float(ks.statistic),
                ks_pvalue=float(ks.pvalue),
                fraction_outside=float(1.0 - counts.sum() / n),
                density=density.tolist(),
            )
        )
    return SamplerInspection(
        scale=b,
        size=n,
        seed=s,
        edges=edges.tolist(),
        grid=grid.tolist(),
        laplace_density=np.exp(laplace_logpdf(grid, b)).tolist(),
        summaries=summaries,
    )


@dataclass(frozen=True)
class InfiniteLossExample:
    """Eq. (11) of Habernal (2022) with numbers, for each sampler.

    ``log_density_d`` and ``log_density_dprime`` are ln of the output densities of M(0) and M(1)
    at z; ``log_ratio`` their difference (the privacy loss at z; +∞ when only M(0) can output
    z). ``count_d``/``count_dprime`` count draws of M(0) and M(1) in ``[z − w, z + w]``.
    """

    z: float
    x: float
    x_prime: float
    scale: float
    epsilon: float
    window: float
    size: int
    seed: int
    rows: list[dict[str, Any]]
    citation: str = "Habernal (2022), Theorem 3.2, eqs. (10)–(11)"

    def to_dict(self) -> dict[str, Any]:
        return {
            "z": self.z,
            "x": self.x,
            "x_prime": self.x_prime,
            "scale": self.scale,
            "epsilon": self.epsilon,
            "window": self.window,
            "size": self.size,
            "seed": self.seed,
            "rows": self.rows,
            "citation": self.citation,
        }


def infinite_loss_example(
    scale: float,
    *,
    z: float = 0.1,
    size: int = 100_000,
    seed: int | None = None,
    window: float = 0.01,
    samplers: Sequence[str] | None = None,
) -> InfiniteLossExample:
    """Habernal (2022) eq. (11): the privacy loss at output z of M(X) = X + noise, X ∈ {0, 1}.

    The query is the identity on neighbours X = 0 and X′ = 1 (sensitivity 1), so Lap(0, b) is
    ε-DP with ε = 1/b (eq. 10). For each sampler the loss at z is
    ln p_{M(0)}(z) − ln p_{M(1)}(z) = ln p_noise(z) − ln p_noise(z − 1)
    (:func:`noise_logpdf`). For Laplace it is (|z − 1| − |z|)/b ≤ 1/b; for DPText at z ∈ (0, 1)
    it is +∞ because its noise is never negative (Theorem 3.1), so M(1) ≥ 1 always.

    Also counts draws of M(0) and M(1) in the window [z − w, z + w] (separate streams for the
    two inputs), so the zero count is visible in data, not only in the formula.
    """
    b = _check_scale(scale)
    zz = check_finite_float(z, name="z", min_value=-1e6, max_value=1e6)
    w = check_finite_float(window, name="window", min_value=0.0, min_inclusive=False, max_value=1e3)
    n = check_int(size, name="sample size", min_value=1, max_value=MAX_SAMPLES)
    s = resolve_seed(seed)
    names = list(SAMPLERS) if samplers is None else list(dict.fromkeys(samplers))
    rows: list[dict[str, Any]] = []
    for name in names:
        info = _check_sampler(name)
        ld = float(noise_logpdf(name, zz - 0.0, b))
        ldp = float(noise_logpdf(name, zz - 1.0, b))
        if math.isinf(ld) and math.isinf(ldp):
            ratio = float("nan")
        else:
            ratio = ld - ldp
        m0 = 0.0 + draw(name, b, n, s, stream="x=0")
        m1 = 1.0 + draw(name, b, n, s, stream="x=1")
        rows.append(
            {
                "sampler": name,
                "label": info.label,
                "flawed": info.flawed,
                "log_density_d": ld,
                "log_density_dprime": ldp,
                "density_d": math.exp(ld),
                "density_dprime": math.exp(ldp),
                "log_ratio": ratio,
                "count_d": int(np.count_nonzero(np.abs(m0 - zz) <= w)),
                "count_dprime": int(np.count_nonzero(np.abs(m1 - zz) <= w)),
                "min_output_dprime": float(m1.min()),
            }
        )
    return InfiniteLossExample(
        z=zz, x=0.0, x_prime=1.0, scale=b, epsilon=1.0 / b, window=w, size=n, seed=s, rows=rows
    )
