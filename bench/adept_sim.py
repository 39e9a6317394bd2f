"""Benchmark the ADePT violation simulation (Habernal 2021, §6, Fig. 1); prints measured figures.

    python bench/adept_sim.py

One run, n = 1..255, 10,000 pairs per n, C = 10, both distributions (uniform on (−C, C)ⁿ and
N(0, (0.1·C)²)):

1. dpcore's :func:`dpcore.sensitivity.adept_violation_fractions` (chunked, prefix-sum screening
   bounds, exact fallback), target < 3 s;
2. the same with the screening switched off (every pair computed coordinate by coordinate);
3. a naive implementation in the style of the published code: for each n, materialise a
   (pairs, 2, n) array, take norms, clip, subtract, take L1 norms — and the speed ratio.

The two implementations use different random streams, so their fractions agree up to
Monte-Carlo error (the largest gap is printed next to a 4-standard-error yardstick).
"""

from __future__ import annotations

import math
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a fresh clone

import dpcore.sensitivity as sens
from dpcore.sensitivity import adept_violation_fractions

DIMS = list(range(1, 256))
PAIRS = 10_000
CLIP = 10.0
SEED = 123456


def naive_reference(dist: str, seed: int) -> list[float]:
    """Per-n loop that materialises every pair, as in the paper's released script."""
    rng = np.random.default_rng(seed)
    out: list[float] = []
    for n in DIMS:
        if dist == "uniform":
            pts = rng.uniform(low=-CLIP, high=CLIP, size=(PAIRS, 2, n))
        else:
            pts = rng.normal(loc=0.0, scale=0.1 * CLIP, size=(PAIRS, 2, n))
        l2 = np.linalg.norm(pts, ord=None, axis=-1, keepdims=True)
        factor = np.minimum(np.ones_like(l2), CLIP / l2)
        clipped = pts * factor
        diff = clipped[:, 0, :] - clipped[:, 1, :]
        l1 = np.linalg.norm(diff, ord=1, axis=1, keepdims=True)
        larger = np.where(l1 > 2 * CLIP, 1.0, 0.0)
        out.append(float(larger.sum() / len(larger)))
    return out


def ours(seed: int) -> dict[str, list[float]]:
    return {
        d: adept_violation_fractions(DIMS, clip=CLIP, dist=d, pairs=PAIRS, seed=seed).fractions
        for d in ("uniform", "normal")
    }


def timed(fn):  # type: ignore[no-untyped-def]
    t0 = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t0


def main() -> None:
    print(f"ADePT violation simulation: n = 1..255, {PAIRS:,} pairs per n, C = {CLIP:g}, both distributions")
    ours(0)  # warm-up (imports, page faults)
    fast, t_fast = timed(lambda: ours(SEED))
    print(f"dpcore (screening + exact fallback): {t_fast:.3f} s")
    tol = sens._SCREEN_TOL
    sens._SCREEN_TOL = 1e9  # every pair undecided → coordinate-by-coordinate path
    try:
        direct, t_direct = timed(lambda: ours(SEED))
    finally:
        sens._SCREEN_TOL = tol
    same = all(fast[d] == direct[d] for d in fast)
    print(f"dpcore without screening:            {t_direct:.3f} s  (identical counts: {same})")
    naive, t_naive = timed(lambda: {d: naive_reference(d, SEED) for d in ("uniform", "normal")})
    print(f"naive reference-style loop:          {t_naive:.3f} s")
    print(f"speed ratio naive / dpcore:          {t_naive / t_fast:.1f}×")
    yardstick = 4 * math.sqrt(0.25 / PAIRS)
    for d in ("uniform", "normal"):
        gap = max(abs(a - b) for a, b in zip(fast[d], naive[d], strict=True))
        at = {n: fast[d][n - 1] for n in (2, 8, 16, 32, 64)}
        shown = ", ".join(f"n={n}: {100 * f:.1f}%" for n, f in at.items())
        print(f"  {d:8s} {shown}; max |dpcore − naive| = {gap:.4f} (4 s.e. ≤ {yardstick:.4f})")
    print(f"target < 3 s: {'met' if t_fast < 3 else 'MISSED'}")


if __name__ == "__main__":
    main()
