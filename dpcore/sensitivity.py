"""Sensitivity geometry of ADePT (Habernal 2021): why L2 clipping gives L1 sensitivity 2C√n.

ADePT (Krishna et al. 2021) clips an encoder output ``r ∈ ℝⁿ`` to L2 norm C (Habernal 2021,
eq. 9/13) and adds Laplace noise calibrated to a claimed L1 sensitivity of 2C (their
Theorem 3.2). The Laplace mechanism needs the *L1* sensitivity (Habernal 2021, eqs. 26–35), and
the largest L1 distance between two points of the L2 ball of radius C is 2C√n (Theorem 5.1,
Appendix B). This module holds

- the closed forms (:func:`l1_sensitivity_l2_clip`, :func:`l1_sensitivity_l1_clip`,
  :func:`extreme_pair`, :func:`adept_true_epsilon`, :func:`sensitivity_report`);
- the violation simulation of Habernal (2021) §6, Fig. 1 (:func:`adept_violation_fractions`):
  the fraction of random clipped pairs whose L1 distance exceeds the claimed 2C.

The simulation is vectorised and chunked over pairs (memory stays bounded for 10⁶ pairs and
n = 4096). Its random numbers come from one stream per (seed, distribution, block of pairs,
block of coordinates), and dimension n uses the first n coordinates of each vector, so the
result for a given n depends on (seed, distribution, C, spread or σ, pairs, n) only — never on
which other dimensions were asked for. Most pairs are decided by exact norm inequalities computed
from prefix sums; the rest are computed coordinate by coordinate (see :func:`_count_violations`).
"""

from __future__ import annotations

import math
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dpcore.limits import MAX_DIM as _MAX_DIM
from dpcore.rng import cell_seed_sequence, resolve_seed
from dpcore.validation import DPCoreError, check_epsilon, check_finite_float, check_int

__all__ = [
    "DISTRIBUTIONS",
    "MAX_DIM",
    "MAX_PAIRS",
    "SensitivityReport",
    "ViolationResult",
    "adept_pair_samples",
    "adept_true_epsilon",
    "adept_violation_fractions",
    "clip_l1",
    "clip_l2",
    "dimension_grid",
    "extreme_pair",
    "l1_sensitivity_l1_clip",
    "l1_sensitivity_l2_clip",
    "l2_sensitivity_l2_clip",
    "parse_dims",
    "sensitivity_report",
]

#: Largest dimension n accepted (the dashboard's and the CLI's cap).
MAX_DIM = _MAX_DIM
#: Largest number of pairs per dimension in the violation simulation.
MAX_PAIRS = 1_000_000
#: Total work cap of one simulation (values drawn) and the measured rate used in its message
#: (`python -m dpcore adept-sim --dims 1-4096 --pairs 1e4`: 8.2e7 draws in about 5.5 s).
MAX_SIM_DRAWS = 1_000_000_000
SIM_DRAWS_PER_S = 1.5e7
#: Largest clipping constant; larger values are almost surely a typo.
MAX_CLIP = 1e6
#: Unclipped-output distributions of the simulation (Habernal 2021, §6).
DISTRIBUTIONS: tuple[str, ...] = ("uniform", "normal")

_PAIR_BLOCK = 512
# Coordinate blocks [0,16), [16,32), [32,64), …, [2048,4096): at most 2× the coordinates needed.
_COORD_EDGES: tuple[int, ...] = (0, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096)
# Relative margin of the screening bounds; pairs within it are computed coordinate by coordinate.
_SCREEN_TOL = 1e-7
_RANGE = re.compile(r"(\d+)\s*-\s*(\d+)")


# --------------------------------------------------------------------------------------------
# Validation helpers
# --------------------------------------------------------------------------------------------
def _check_clip(clip: object) -> float:
    return check_finite_float(clip, name="clip C", min_value=0.0, min_inclusive=False, max_value=MAX_CLIP)


def _check_dim(dim: object, name: str = "dimension n") -> int:
    return check_int(dim, name=name, min_value=1, max_value=MAX_DIM)


# --------------------------------------------------------------------------------------------
# Closed forms
# --------------------------------------------------------------------------------------------
def clip_l2(x: np.ndarray, clip: float) -> np.ndarray:
    """Clip each row of ``x`` to L2 norm at most C: ``r · min(1, C/‖r‖₂)``.

    Habernal (2021), eq. (9)/(13) (ADePT's clipping, Krishna et al. 2021). Rows are the last
    axis; a zero row stays zero.

    Parameters
    ----------
    x : numpy.ndarray
        Array of shape ``(..., n)``.
    clip : float
        The clipping constant C > 0.

    Returns
    -------
    numpy.ndarray
        Float64 array of the same shape.
    """
    c = _check_clip(clip)
    x = np.asarray(x, dtype=np.float64)
    norm = np.sqrt(np.sum(x * x, axis=-1, keepdims=True))
    return x * (c / np.maximum(norm, c))


def clip_l1(x: np.ndarray, clip: float) -> np.ndarray:
    """Clip each row of ``x`` to L1 norm at most C: ``r · min(1, C/‖r‖₁)``.

    The first remedy of Habernal (2021), §7: with L1 clipping the claimed L1 sensitivity 2C is
    correct (triangle inequality, Corollary A.1, eq. 26).
    """
    c = _check_clip(clip)
    x = np.asarray(x, dtype=np.float64)
    norm = np.sum(np.abs(x), axis=-1, keepdims=True)
    return x * (c / np.maximum(norm, c))


def l1_sensitivity_l2_clip(clip: float, dim: int) -> float:
    """Exact L1 sensitivity of L2 clipping at radius C in n dimensions: ``2C√n``.

    Habernal (2021), Theorem 5.1 (proof in Appendix B): the maximum of ‖x − x′‖₁ over
    ‖x‖₂, ‖x′‖₂ ≤ C is attained at ``x = (C/√n)·1``, ``x′ = −x`` (:func:`extreme_pair`).

    Parameters
    ----------
    clip : float
        The clipping constant C > 0.
    dim : int
        The dimension n (1..4096).
    """
    c = _check_clip(clip)
    n = _check_dim(dim)
    return 2.0 * c * math.sqrt(n)


def l1_sensitivity_l1_clip(clip: float) -> float:
    """Exact L1 sensitivity of L1 clipping at radius C, in any dimension: ``2C``.

    Triangle inequality ‖x − x′‖₁ ≤ ‖x‖₁ + ‖x′‖₁ ≤ 2C, attained by ``x = C·e₁``, ``x′ = −x``
    (Habernal 2021, §7, first remedy; Corollary A.1, eq. 26).
    """
    return 2.0 * _check_clip(clip)


def l2_sensitivity_l2_clip(clip: float) -> float:
    """L2 sensitivity (diameter) of L2 clipping at radius C: ``2C``.

    This is the value ADePT claims as its sensitivity (Krishna et al. 2021, Theorem 3.2 as
    quoted in Habernal 2021, §3); it is the right quantity for the Gaussian mechanism, not for
    the Laplace mechanism used (Habernal 2021, eqs. 10–12).
    """
    return 2.0 * _check_clip(clip)


def extreme_pair(clip: float, dim: int) -> tuple[np.ndarray, np.ndarray]:
    """The pair of the L2 ball of radius C at maximal L1 distance ``2C√n``.

    Habernal (2021), Appendix B (Lagrange multipliers): ``x = (C/√n)·1`` and ``x′ = −x``; both
    have L2 norm C (so clipping leaves them unchanged) and ‖x − x′‖₁ = 2C√n.
    """
    c = _check_clip(clip)
    n = _check_dim(dim)
    x = np.full(n, c / math.sqrt(n), dtype=np.float64)
    return x, -x


def adept_true_epsilon(epsilon: float, dim: int) -> float:
    """The ε ADePT really provides when it claims ε: ``ε·√n``.

    ADePT adds Lap(2C/ε) (Habernal 2021, eqs. 10–12 with Δ = 2C from the false Theorem 3.2).
    The Laplace mechanism with scale b is (Δ₁/b)-DP (eqs. 27–35), and Δ₁ = 2C√n (Theorem 5.1),
    so the guarantee is 2C√n / (2C/ε) = ε√n; it equals the claim only for n = 1 (Corollary 5.1).
    """
    eps = check_epsilon(epsilon)
    n = _check_dim(dim)
    return eps * math.sqrt(n)


@dataclass(frozen=True)
class SensitivityReport:
    """The sensitivity numbers for one (C, n) and optionally a claimed ε."""

    clip: float
    dim: int
    l1_sensitivity_l2_clip: float
    l1_sensitivity_l1_clip: float
    claimed_sensitivity: float
    ratio: float
    extreme_x: list[float]
    extreme_x_prime: list[float]
    extreme_l1_distance: float
    epsilon: float | None = None
    true_epsilon: float | None = None
    citation: str = "Habernal (2021), Theorem 5.1 and Appendix B"

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (the CLI's ``--json`` output)."""
        return {
            "clip": self.clip,
            "dim": self.dim,
            "l1_sensitivity_l2_clip": self.l1_sensitivity_l2_clip,
            "l1_sensitivity_l1_clip": self.l1_sensitivity_l1_clip,
            "claimed_sensitivity": self.claimed_sensitivity,
            "ratio": self.ratio,
            "extreme_pair": {"x": self.extreme_x, "x_prime": self.extreme_x_prime},
            "extreme_l1_distance": self.extreme_l1_distance,
            "epsilon": self.epsilon,
            "true_epsilon": self.true_epsilon,
            "citation": self.citation,
        }


def sensitivity_report(clip: float, dim: int, epsilon: float | None = None) -> SensitivityReport:
    """Collect the closed forms of Habernal (2021) Theorem 5.1 for one (C, n, ε).

    ``ratio`` is 2C√n / 2C = √n, the factor by which ADePT understates its sensitivity.
    """
    c = _check_clip(clip)
    n = _check_dim(dim)
    x, xp = extreme_pair(c, n)
    true_eps = None if epsilon is None else adept_true_epsilon(epsilon, n)
    return SensitivityReport(
        clip=c,
        dim=n,
        l1_sensitivity_l2_clip=l1_sensitivity_l2_clip(c, n),
        l1_sensitivity_l1_clip=l1_sensitivity_l1_clip(c),
        claimed_sensitivity=l2_sensitivity_l2_clip(c),
        ratio=math.sqrt(n),
        extreme_x=x.tolist(),
        extreme_x_prime=xp.tolist(),
        extreme_l1_distance=float(np.sum(np.abs(x - xp))),
        epsilon=None if epsilon is None else check_epsilon(epsilon),
        true_epsilon=true_eps,
    )


# --------------------------------------------------------------------------------------------
# Dimension lists
# --------------------------------------------------------------------------------------------
def parse_dims(text: str, *, max_value: int = MAX_DIM, max_items: int = MAX_DIM) -> list[int]:
    """Parse ``"1,2,8"``, ``"1-255"`` or a mix (``"1-16,32,64"``) into sorted unique dimensions.

    Raises
    ------
    DPCoreError
        On anything that is not a comma-separated list of whole numbers or ``a-b`` ranges within
        1..``max_value``, or more than ``max_items`` values.
    """
    parts = [p.strip() for p in str(text).split(",") if p.strip()]
    if not parts:
        raise DPCoreError(f"dims must be a list like 1,2,8 or a range like 1-255, got {text!r}")
    out: set[int] = set()
    for p in parts:
        rng_match = _RANGE.fullmatch(p)
        if rng_match:
            lo = check_int(rng_match.group(1), name="dims", min_value=1, max_value=max_value)
            hi = check_int(rng_match.group(2), name="dims", min_value=1, max_value=max_value)
            if hi < lo:
                raise DPCoreError(f"dims range {p!r} is empty (start > end)")
            if hi - lo + 1 > max_items:
                raise DPCoreError(f"dims may hold at most {max_items} values")
            out.update(range(lo, hi + 1))
        else:
            out.add(check_int(p, name="dims", min_value=1, max_value=max_value))
        if len(out) > max_items:
            raise DPCoreError(f"dims may hold at most {max_items} values")
    return sorted(out)


def dimension_grid(n_max: int, spacing: str = "all", max_points: int = 256) -> list[int]:
    """Dimensions 1..``n_max``: every n (``"all"``, thinned evenly to ``max_points``) or
    about ``max_points`` log-spaced values (``"log"``). Always contains 1 and ``n_max``."""
    n = _check_dim(n_max, name="largest n")
    m = check_int(max_points, name="max_points", min_value=2, max_value=MAX_DIM)
    if spacing == "all":
        if n <= m:
            return list(range(1, n + 1))
        grid = np.unique(np.round(np.linspace(1, n, m)).astype(np.int64))
    elif spacing == "log":
        grid = np.unique(np.round(np.geomspace(1, n, m)).astype(np.int64))
    else:
        raise DPCoreError(f"spacing must be 'all' or 'log', got {spacing!r}")
    return [int(v) for v in grid]


# --------------------------------------------------------------------------------------------
# The violation simulation (Habernal 2021, §6, Fig. 1)
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class _SimSpec:
    dist: str
    clip: float
    scale: float  # uniform: half-width h of (−h, h); normal: standard deviation σ
    seed: int
    unit_scale: float = 1.0  # scale / C, computed without dividing (the simulation is scale-free)


def _resolve_spec(dist: str, clip: object, spread: object, std: object | None, seed: int | None) -> _SimSpec:
    if dist not in DISTRIBUTIONS:
        raise DPCoreError(f"unknown distribution {dist!r}; choose one of: {', '.join(DISTRIBUTIONS)}")
    c = _check_clip(clip)
    if dist == "uniform":
        s = check_finite_float(spread, name="spread", min_value=0.0, min_inclusive=False, max_value=1e3)
        scale, unit = s * c, s
    else:
        if std is None:
            scale, unit = 0.1 * c, 0.1
        else:
            scale = check_finite_float(
                std, name="std σ", min_value=0.0, min_inclusive=False, max_value=1e3 * c
            )
            unit = scale / c
    return _SimSpec(dist=dist, clip=c, scale=scale, seed=resolve_seed(seed), unit_scale=unit)


def _draw_block(spec: _SimSpec, block: int, n_pairs: int, n_cols: int) -> tuple[np.ndarray, np.ndarray]:
    """The unclipped vectors of pairs ``block·512 …`` in their first ``n_cols`` coordinates."""
    xs: list[np.ndarray] = []
    ys: list[np.ndarray] = []
    for j in range(len(_COORD_EDGES) - 1):
        lo, hi = _COORD_EDGES[j], _COORD_EDGES[j + 1]
        if lo >= n_cols:
            break
        rng = np.random.default_rng(cell_seed_sequence(spec.seed, "adept-sim", spec.dist, block, j))
        if spec.dist == "uniform":
            z = rng.uniform(-spec.scale, spec.scale, size=(2, n_pairs, hi - lo))
        else:
            z = rng.normal(0.0, spec.scale, size=(2, n_pairs, hi - lo))
        xs.append(z[0])
        ys.append(z[1])
    x = np.concatenate(xs, axis=1)[:, :n_cols]
    y = np.concatenate(ys, axis=1)[:, :n_cols]
    return np.ascontiguousarray(x), np.ascontiguousarray(y)


def adept_pair_samples(
    dim: int,
    *,
    clip: float,
    dist: str = "uniform",
    pairs: int = 10_000,
    seed: int | None = None,
    spread: float = 1.0,
    std: float | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """The unclipped pairs (x, x′), each of shape ``(pairs, n)``, that the simulation uses.

    Exactly the numbers :func:`adept_violation_fractions` draws for dimension ``dim`` with the
    same arguments (for checking it independently). Materialises everything: small cases only.
    """
    n = _check_dim(dim)
    p = check_int(pairs, name="pairs", min_value=1, max_value=MAX_PAIRS)
    if p * n > 20_000_000:
        raise DPCoreError("adept_pair_samples materialises all pairs; ask for pairs·n ≤ 2e7")
    spec = _resolve_spec(dist, clip, spread, std, seed)
    xs, ys = [], []
    for block, start in enumerate(range(0, p, _PAIR_BLOCK)):
        x, y = _draw_block(spec, block, min(_PAIR_BLOCK, p - start), n)
        xs.append(x)
        ys.append(y)
    return np.concatenate(xs), np.concatenate(ys)


def _count_violations(x: np.ndarray, y: np.ndarray, dims: np.ndarray, clip: float) -> np.ndarray:
    """Per dimension in ``dims``: how many pairs (rows of x, y) have ‖clip(x)−clip(y)‖₁ > 2C.

    Dimension n uses the first n columns. Exact decision, fast path first: with
    ``v = a·x − b·y`` (a, b the clipping factors of Habernal 2021, eq. 13),

    - ‖v‖₂² = a²‖x‖² + b²‖y‖² − 2ab⟨x, y⟩ comes from prefix sums over coordinates;
    - ‖v‖₁ ≤ √n·‖v‖₂ (Cauchy–Schwarz): a pair below 2C by this bound does not violate;
    - ‖v‖₁ ≥ ‖v‖₂² / ‖v‖∞ ≥ ‖v‖₂² / (a·max|xᵢ| + b·max|yᵢ|): a pair above 2C violates.

    Pairs within a relative margin of 10⁻⁷ of 2C under either bound are computed coordinate by
    coordinate, so the count equals that of the direct computation.
    """
    thr = 2.0 * clip
    cols = dims - 1
    sx = np.cumsum(x * x, axis=1)[:, cols]
    sy = np.cumsum(y * y, axis=1)[:, cols]
    sxy = np.cumsum(x * y, axis=1)[:, cols]
    mx = np.maximum.accumulate(np.abs(x), axis=1)[:, cols]
    my = np.maximum.accumulate(np.abs(y), axis=1)[:, cols]
    a = clip / np.maximum(np.sqrt(sx), clip)
    b = clip / np.maximum(np.sqrt(sy), clip)
    v2 = np.maximum(a * a * sx + b * b * sy - 2.0 * a * b * sxy, 0.0)
    upper = np.sqrt(dims * v2)
    den = a * mx + b * my
    lower = np.divide(v2, den, out=np.zeros_like(v2), where=den > 0)
    violates = lower > thr * (1.0 + _SCREEN_TOL)
    fine = upper < thr * (1.0 - _SCREEN_TOL)
    undecided = ~(violates | fine)
    counts = violates.sum(axis=0).astype(np.int64)
    for k in np.flatnonzero(undecided.any(axis=0)):
        rows = np.flatnonzero(undecided[:, k])
        n = int(dims[k])
        d = x[rows, :n] * a[rows, k, None]
        d -= y[rows, :n] * b[rows, k, None]
        np.abs(d, out=d)
        counts[k] += int(np.count_nonzero(d.sum(axis=1) > thr))
    return counts


@dataclass(frozen=True)
class ViolationResult:
    """Fractions of clipped pairs whose L1 distance exceeds ADePT's claimed sensitivity 2C.

    ``violations[i]`` of ``pairs`` pairs violate at dimension ``dims[i]``; ``theoretical_max``
    holds 2C√n (Theorem 5.1) and ``claimed`` is 2C.
    """

    dist: str
    clip: float
    scale: float
    scale_name: str
    pairs: int
    seed: int
    dims: list[int]
    violations: list[int]
    elapsed_s: float
    citation: str = "Habernal (2021), §6, Fig. 1; Theorem 5.1"
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def fractions(self) -> list[float]:
        return [v / self.pairs for v in self.violations]

    @property
    def claimed(self) -> float:
        return 2.0 * self.clip

    @property
    def theoretical_max(self) -> list[float]:
        return [2.0 * self.clip * math.sqrt(n) for n in self.dims]

    def parameters(self) -> dict[str, Any]:
        return {
            "dist": self.dist,
            "clip": self.clip,
            self.scale_name: self.scale,
            "pairs": self.pairs,
            "seed": self.seed,
            "claimed_sensitivity": self.claimed,
            "citation": self.citation,
        }

    def rows(self) -> list[dict[str, Any]]:
        """One dict per dimension: n, violations, fraction, and the theoretical (not observed) maximum
        L1 distance 2C√n of two clipped vectors (Habernal 2021, Thm. 5.1)."""
        return [
            {
                "dist": self.dist,
                "dim": n,
                "violations": v,
                "fraction": v / self.pairs,
                "theoretical_max_l1_distance": 2.0 * self.clip * math.sqrt(n),  # Thm 5.1, not observed
                "claimed_sensitivity": self.claimed,
            }
            for n, v in zip(self.dims, self.violations, strict=True)
        ]

    def to_dict(self) -> dict[str, Any]:
        return {**self.parameters(), "elapsed_s": self.elapsed_s, "results": self.rows()}


def adept_violation_fractions(
    dims: Sequence[int],
    *,
    clip: float,
    dist: str = "uniform",
    pairs: int = 10_000,
    seed: int | None = None,
    spread: float = 1.0,
    std: float | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> ViolationResult:
    """Habernal (2021) §6, Fig. 1: fraction of clipped pairs with L1 distance above 2C.

    ``pairs`` pairs of "unclipped encoder outputs" are drawn in n dimensions, each vector is
    clipped to L2 norm C (eq. 13) and a pair violates ADePT's claimed sensitivity when
    ‖clip(x) − clip(x′)‖₁ > 2C (Theorem 3.2 of Krishna et al., shown false by Theorem 5.1).

    Parameters
    ----------
    dims : sequence of int
        Dimensions n (1..4096).
    clip : float
        The clipping constant C > 0.
    dist : {"uniform", "normal"}
        ``uniform``: each coordinate uniform on (−spread·C, spread·C) (the paper: spread 1).
        ``normal``: each coordinate N(0, σ²); default σ = 0.1·C (the paper's released code;
        at its C = 10 this is the text's σ² = 0.1·C as well).
    pairs : int
        Pairs per dimension (1..10⁶).
    seed : int or None
        Seed (None: fresh, recorded in the result).
    spread, std : float
        Distribution parameters as above.
    progress : callable, optional
        ``progress(done_pairs, total_pairs)``.

    Returns
    -------
    ViolationResult
        Counts per n, with parameters and seed.
    """
    spec = _resolve_spec(dist, clip, spread, std, seed)
    p = check_int(pairs, name="pairs", min_value=1, max_value=MAX_PAIRS)
    dim_list = sorted({_check_dim(d) for d in dims})
    if not dim_list:
        raise DPCoreError("dims must hold at least one dimension")
    dim_arr = np.asarray(dim_list, dtype=np.int64)
    n_max = int(dim_arr[-1])
    draws = 2 * p * n_max  # every pair draws its largest dimension once; smaller n are prefixes
    if draws > MAX_SIM_DRAWS:
        raise DPCoreError(
            f"this simulation would draw {draws:.2g} values (about {draws / SIM_DRAWS_PER_S / 60:,.0f} min "
            f"on 2 cores); the limit is {MAX_SIM_DRAWS:.0e}: lower --pairs ({p:,}) or the largest n "
            f"({n_max:,})"
        )
    counts = np.zeros(dim_arr.size, dtype=np.int64)
    t0 = time.perf_counter()
    # Scale-free: clipping commutes with scaling, so the count is computed in units of C (draws
    # of scale/C, clipped at 1). A C of 1e-200 then gives the same answer as C = 10.
    unit = _SimSpec(dist=spec.dist, clip=1.0, scale=spec.unit_scale, seed=spec.seed)
    for block, start in enumerate(range(0, p, _PAIR_BLOCK)):
        m = min(_PAIR_BLOCK, p - start)
        x, y = _draw_block(unit, block, m, n_max)
        counts += _count_violations(x, y, dim_arr, 1.0)
        if progress is not None:
            progress(start + m, p)
    return ViolationResult(
        dist=spec.dist,
        clip=spec.clip,
        scale=spec.scale,
        scale_name="half_width" if spec.dist == "uniform" else "std",
        pairs=p,
        seed=spec.seed,
        dims=dim_list,
        violations=[int(c) for c in counts],
        elapsed_s=time.perf_counter() - t0,
    )
