"""Benchmark the privacy-loss audit (prints measured figures; not a test).

    python bench/audit.py            # full run (~1 min on 2 cores)
    python bench/audit.py --quick    # smaller naive reference

Reports, from one run:
1. the default Monte-Carlo path, the mechanisms' REAL samplers (black-box, chunked, on the
   default workers = this machine's cores; `bench/audit_sampler.py` compares it with the sampler
   alone and 1 with 2 workers): trials per second per neighbour pair at n = 1, 32 and 128 for
   the paper's five mechanisms, and the time a 10M-trial cell takes at that rate (measured on
   10M trials at n = 1, fewer at larger n);
2. the labelled model-based option (Binomial shortcut from the declared probabilities, after a
   1e6-draw cross-check): time and peak traced memory of 10M-trial cells at n = 1, 32, 128;
3. the full exact grid: 5 paper mechanisms × ε ∈ {0.1, 0.5, 1, 2, 5, 10} × n ∈ {1, 2, 8, 32, 64, 128};
4. a naive full-sampling implementation in the style of the published code (materialise the
   whole trials × n noise matrix, threshold, vote), timed on fewer trials and scaled per trial,
   and the speed ratio against dpcore.
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
import tracemalloc
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a fresh clone

from dpcore.audit import audit
from dpcore.mechanisms import PAPER_FIG2, create_mechanism

TRIALS = 10_000_000
EPSILONS = (0.1, 0.5, 1.0, 2.0, 5.0, 10.0)
GRID_DIMS = (1, 2, 8, 32, 64, 128)


def measure(fn):  # type: ignore[no-untyped-def]
    tracemalloc.start()
    t0 = time.perf_counter()
    out = fn()
    dt = time.perf_counter() - t0
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return out, dt, peak / 2**20


def naive_cell(name: str, dim: int, eps: float, trials: int, seed: int) -> float:
    """Published-code style: full matrices for D and D', threshold, mean-round vote."""
    rng = np.random.default_rng(seed)
    mech = create_mechanism(name, epsilon=eps, dim=dim)
    counts = np.zeros((2, 2))
    for b in (0, 1):
        z = mech.sample(np.full(dim, float(b)), trials, rng)
        bits = np.where(z < 0.5, 0, 1)
        guess = np.round(bits.mean(axis=1)).astype(int)
        counts[b, 1] = guess.sum()
        counts[b, 0] = trials - counts[b, 1]
    with np.errstate(divide="ignore"):
        r = np.abs(np.log(counts[0]) - np.log(counts[1]))
    return float(np.nanmax(r))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    naive_trials = {1: 1_000_000, 32: 200_000, 128: 50_000}
    if args.quick:
        naive_trials = {k: v // 10 for k, v in naive_trials.items()}

    print("== 1. Monte-Carlo default: real samplers (black-box, chunked), ε = 1 ==")
    real_trials = {1: TRIALS, 32: 1_000_000, 128: 250_000}
    if args.quick:
        real_trials = {k: v // 10 for k, v in real_trials.items()}
    blackbox: dict[int, float] = {}  # seconds per trial, laplace (compared with the naive code)
    for dim, trials in real_trials.items():
        slowest = 0.0
        for name in PAPER_FIG2:
            res, dt, peak = measure(
                lambda name=name, dim=dim, trials=trials: audit(
                    name, dim=dim, epsilon=1.0, method="mc", trials=trials, seed=0
                )
            )
            assert res.sampler == "real"
            rate = trials / dt
            slowest = max(slowest, dt / trials)
            if name == "laplace":
                blackbox[dim] = dt / trials
            print(
                f"  {name:8s} n={dim:4d}: {trials:>10,} trials in {dt:6.2f} s = {rate:>12,.0f} trials/s "
                # a trial = one output on each neighbour, so 2·n noise values
                f"({rate * dim * 2 / 1e6:6.1f} M draws/s)  peak {peak:5.1f} MiB  {res.verdict}"
            )
        print(
            f"  -> n={dim}: slowest {1 / slowest:,.0f} trials/s; a 10M-trial cell ≈ "
            f"{slowest * TRIALS:.1f} s"
        )

    print("== 2. Monte-Carlo --model-based (declared probabilities, cross-checked), 10M trials ==")
    ours: dict[int, float] = {}
    for dim in (1, 32, 128):
        worst = 0.0
        peak_max = 0.0
        for name in PAPER_FIG2:
            res, dt, peak = measure(
                lambda name=name, dim=dim: audit(
                    name, dim=dim, epsilon=1.0, method="mc", trials=TRIALS, seed=0, model_based=True
                )
            )
            worst, peak_max = max(worst, dt), max(peak_max, peak)
            print(
                f"  {name:8s} n={dim:4d}: {dt * 1e3:8.2f} ms  peak {peak:6.1f} MiB  "
                f"ε̂={res.empirical_epsilon:.4g}  lower={res.lower_bound:.4g}  {res.verdict}"
            )
        ours[dim] = worst
        print(f"  -> slowest cell at n={dim}: {worst * 1e3:.2f} ms (includes the 2e6-draw cross-check)")

    print("== 3. Exact grid: 5 mechanisms × 6 ε × 6 n = 180 cells ==")

    def grid() -> int:
        cells = 0
        for name in PAPER_FIG2:
            for eps in EPSILONS:
                for dim in GRID_DIMS:
                    audit(name, dim=dim, epsilon=eps, method="exact")
                    cells += 1
        return cells

    cells, dt, peak = measure(grid)
    print(f"  {cells} cells: {dt:.3f} s  peak {peak:.1f} MiB (target < 2 s, < 300 MiB)")

    print("== 4. Naive full-sampling reference (published-code style), laplace, ε = 1 ==")
    for dim, trials in naive_trials.items():
        _, dt, peak = measure(lambda dim=dim, trials=trials: naive_cell("laplace", dim, 1.0, trials, 0))
        per10m = dt / trials * TRIALS
        mem10m = peak / trials * TRIALS / 1024
        print(
            f"  n={dim:4d}: {trials:,} trials in {dt:.2f} s, peak {peak:.0f} MiB  → "
            f"10M trials ≈ {per10m:.1f} s and ≈ {mem10m:.1f} GiB unchunked"
        )
        print(
            f"         speed ratio naive/dpcore model-based (10M trials): {per10m / ours[dim]:,.0f}×"
            f"; naive/dpcore real sampler (laplace, chunked): {per10m / (blackbox[dim] * TRIALS):.1f}×"
        )
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"process max RSS (includes the naive reference): {rss:.0f} MiB")


if __name__ == "__main__":
    main()
