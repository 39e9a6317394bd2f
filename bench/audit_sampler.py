"""The vector Monte-Carlo audit against its own sampler (issue 24). Prints measured figures; not a test.

    python bench/audit_sampler.py            # full run (~6 min on 2 quiet cores)
    python bench/audit_sampler.py --quick    # 10x fewer trials, no 1e8-trial run
    PYTHONPATH=/path/to/old/tree python bench/audit_sampler.py --before   # the code before (no 1e8 run)

Reports, from one run (best of 3 for every timing; the load average is printed because other
work on a shared machine inflates the seconds):

1. ``laplace`` n = 32, 10^7 trials per neighbour (6.4e8 noise values): the mechanism's sampler
   alone for exactly the draws of the audit (same four streams, same chunks, same buffers, one
   thread), the audit around it with one worker, their ratio, the audit with two workers and the
   1-vs-2-worker speed-up, and whether the two results are identical;
2. the same for every registered vector mechanism (dpcore's and the flawed reproductions) at
   n = 32, 10^6 trials, and for ``laplace`` at other shapes of the fused count;
3. the whole ``python -m dpcore audit ... --trials 10000000`` process (default workers) against
   numpy's one-core ``Generator.laplace`` for the same 320 million values (trials x n, as the issue
   counts them) and for the 640 million the audit really draws (both neighbours);
4. peak RSS of whole audit processes at 10^6, 10^7 and 10^8 trials (``os.wait4`` per child);
5. the dashboard's draw cap: seconds per 10^8 real-sampler draws for each mechanism with the
   page's workers, and the cap that keeps the slowest mechanism's request time at the old cap's.

``--before`` runs what exists in the older tree (no workers, no ``sample_into``): the sampler is
timed through ``mech.sample``, as that audit called it.
"""

from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

if "PYTHONPATH" not in os.environ:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a fresh clone

import dpcore
from dpcore.audit import audit
from dpcore.audit.montecarlo import CHUNK_ELEMENTS
from dpcore.mechanisms import VECTOR_MECHANISMS, create_mechanism
from dpcore.rng import cell_seed_sequence, spawn_rngs

try:  # this tree: the audit draws through sample_into with reused buffers
    from dpcore.audit.montecarlo import chunk_buffers, draw_chunk
    from dpcore.limits import AUDIT_PAGE_MAX_DRAWS, AUDIT_PAGE_WORKERS

    NEW = True
except ImportError:  # the tree before issue 24
    NEW = False
    AUDIT_PAGE_MAX_DRAWS, AUDIT_PAGE_WORKERS = 300_000_000, 1

OLD_PAGE_CAP = 300_000_000  # noise values per request before issue 24
SEED = 0
EPS = 1.0


def load() -> str:
    return "load average " + ", ".join(f"{v:.2f}" for v in os.getloadavg())


def best(fn: Callable[[], object], reps: int = 3) -> tuple[float, object]:
    """Best wall time of ``reps`` calls, and the last result."""
    times, out = [], None
    for _ in range(reps):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return min(times), out


def sampler_only(name: str, dim: int, trials: int) -> None:
    """Exactly the sampler calls of one real-sampler audit cell, nothing else, on one thread."""
    mech = create_mechanism(name, epsilon=EPS, dim=dim)
    rngs = spawn_rngs(cell_seed_sequence(SEED, name, dim, float(mech.epsilon)), 4)
    halves = (trials // 2, trials - trials // 2)
    for h in (0, 1):
        for b in (0, 1):
            x = np.full(dim, float(b))
            rng, todo = rngs[2 * h + b], halves[h]
            if NEW:
                rows, out, work = chunk_buffers(mech, todo)
            else:
                rows, out, work = max(1, CHUNK_ELEMENTS // dim), None, None
            done = 0
            while done < todo:
                m = min(rows, todo - done)
                if NEW:
                    draw_chunk(mech, x, m, rng, out, work)
                else:
                    mech.sample(x, m, rng)
                done += m


def audit_cell(name: str, dim: int, trials: int, workers: int) -> object:
    kw = {"workers": workers} if NEW else {}
    return audit(name, dim=dim, epsilon=EPS, method="mc", trials=trials, seed=SEED, **kw)


def same(a: object, b: object) -> bool:
    keys = ("guess1_d", "guess1_dprime", "empirical_epsilon", "lr_epsilon", "lr_lower_bound", "lr_cut")
    return all(getattr(a, k) == getattr(b, k) for k in keys)


def row(name: str, dim: int, trials: int, reps: int) -> dict[str, float]:
    """Sampler alone, audit on 1 worker and on 2, interleaved rep by rep (a burst of load from
    other work then hits all three alike); best of ``reps`` each."""
    values = 2 * trials * dim
    runs: dict[str, list[tuple[float, float]]] = {"sampler": [], "audit1": [], "audit2": []}
    results = {}
    for _ in range(reps):
        jobs = [
            ("sampler", lambda: sampler_only(name, dim, trials)),
            ("audit1", lambda: audit_cell(name, dim, trials, 1)),
        ]
        if NEW:
            jobs.append(("audit2", lambda: audit_cell(name, dim, trials, 2)))
        for key, fn in jobs:
            c0, t0 = os.times(), time.perf_counter()
            results[key] = fn()
            wall = time.perf_counter() - t0
            c1 = os.times()
            runs[key].append((wall, (c1.user - c0.user) + (c1.system - c0.system)))
    out = {k: min(v)[0] for k, v in runs.items() if v}
    out["values"] = values
    t_s, t_1 = out["sampler"], out["audit1"]
    ns = 1e9 / values
    line = (
        f"  {name:16s} n={dim:5d} {trials:>11,} trials: sampler {t_s:7.3f} s ({t_s * ns:5.2f} ns/value)"
        f"  audit(1 worker) {t_1:7.3f} s  ratio {t_1 / t_s:5.3f}  overhead {(t_1 - t_s) * ns:+5.2f} ns/value"
    )
    if NEW:
        t_2, cpu_2 = min(runs["audit2"])
        out["audit2"] = t_2
        line += (
            f"  audit(2 workers) {t_2:7.3f} s (cores busy {cpu_2 / t_2:4.2f})  speed-up {t_1 / t_2:4.2f}x"
            f"  identical: {same(results['audit1'], results['audit2'])}"
        )
    print(line, flush=True)
    return out


def child(
    argv: list[str], *, cwd: str | None = None, env: dict[str, str] | None = None
) -> tuple[float, float, float]:
    """Wall seconds, CPU seconds (user + system) and peak RSS (MiB) of one child process.

    ``os.wait4`` reports that child alone (``RUSAGE_CHILDREN`` would add up every child so far).
    """
    t0 = time.perf_counter()
    p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=cwd, env=env)
    _, status, usage = os.wait4(p.pid, 0)
    dt = time.perf_counter() - t0
    if status != 0:
        raise SystemExit(f"{' '.join(argv)} failed: {p.stderr.read().decode()[-500:] if p.stderr else ''}")
    return dt, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def child_rss(argv: list[str]) -> tuple[float, float]:
    """Wall seconds and peak RSS (MiB) of one child process."""
    dt, _, rss = child(argv)
    return dt, rss


def numpy_floor(values: int, reps: int) -> float:
    """One core, numpy's own Laplace sampler for ``values`` draws, in its fastest chunking here.

    The chunk size is picked on a 3.2e7-value pilot (the fastest of three), then timed in full.
    """
    rng = np.random.default_rng(0)

    def run(total: int, chunk: int) -> None:
        left = total
        while left > 0:
            rng.laplace(0.0, 32.0, size=min(chunk, left))
            left -= chunk

    pilot = {c: best(lambda c=c: run(32_000_000, c), 2)[0] for c in (1 << 16, 1 << 18, 1 << 20)}
    chunk = min(pilot, key=pilot.__getitem__)
    t, _ = best(lambda: run(values, chunk), reps)
    print(
        f"    numpy Generator.laplace(0, 32), {values:,} values in chunks of {chunk:,} (pilot: "
        + ", ".join(f"{c:,}: {v:.2f} s" for c, v in pilot.items())
        + f"): {t:.2f} s",
        flush=True,
    )
    return t


def cli(trials: int, *extra: str) -> list[str]:
    return [sys.executable, "-m", "dpcore", "audit", "--mechanism", "laplace", "--dim", "32", "--epsilon",
            "1", "--method", "mc", "--trials", str(trials), "--seed", "0", "--json", *extra]  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="10x fewer trials; no 1e8-trial run")
    ap.add_argument("--before", action="store_true", help="label the output as the older tree's")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument(
        "--old-tree",
        default=None,
        help="a checkout of the code before issue 24 (e.g. `git archive <commit> dpcore | tar -x -C DIR`): "
        "section 6 then times the page's worst request with it and with this tree, interleaved",
    )
    ap.add_argument("--sections", default="1,2,3,4,5,6", help="which sections to run, e.g. 1,3")
    args = ap.parse_args()
    want = {int(x) for x in args.sections.split(",")}
    scale = 10 if args.quick else 1
    reps = args.reps
    print(
        f"# bench/audit_sampler.py{' --quick' if args.quick else ''} — "
        f"{'BEFORE (older tree)' if args.before or not NEW else 'this tree'}: dpcore from "
        f"{Path(dpcore.__file__).parent}; numpy {np.__version__}; Python {platform.python_version()}; "
        f"{os.cpu_count()} cores; {load()}"
    )

    head: dict[str, float] = {}
    if 1 in want:
        print(f"== 1. laplace n = 32, {10_000_000 // scale:,} trials per neighbour, seed 0 ({load()}) ==")
        head = row("laplace", 32, 10_000_000 // scale, reps)

    per_mech = {}
    if 2 in want:
        print(
            f"== 2. every mechanism, n = 32, {1_000_000 // scale:,} trials; laplace at other n ({load()}) =="
        )
        for name in VECTOR_MECHANISMS.names():
            per_mech[name] = row(name, 32, 1_000_000 // scale, reps)
        for dim, trials in ((1, 10_000_000), (7, 2_000_000), (100, 500_000), (1024, 50_000), (4096, 10_000)):
            row("laplace", dim, trials // scale, reps)

    if 3 in want:
        whole_process(args, scale, reps)
    if 4 in want:
        peak_rss(args)
    if 5 in want and per_mech:
        page_cap(per_mech)
    if 6 in want and args.old_tree and NEW:
        old_vs_new(Path(args.old_tree), reps)
    if head:
        two = (
            f", audit(2) {head['audit2']:.2f} s, speed-up {head['audit1'] / head['audit2']:.2f}x"
            if NEW
            else ""
        )
        print(
            f"== done ({load()}); laplace n=32 headline: sampler {head['sampler']:.2f} s, audit(1) "
            f"{head['audit1']:.2f} s, ratio {head['audit1'] / head['sampler']:.3f}{two}"
        )


def whole_process(args: argparse.Namespace, scale: int, reps: int) -> None:
    trials = 10_000_000 // scale
    print(f"== 3. whole process vs numpy's one-core Generator.laplace, {trials:,} trials ({load()}) ==")
    if NEW:
        procs, procs1 = [], []
        for _ in range(reps):  # interleaved, so a burst of other work hits both alike
            procs.append(child_rss(cli(trials))[0])
            procs1.append(child_rss(cli(trials, "--workers", "1"))[0])
        runs = ", ".join(f"{t:.2f}" for t in procs)
        print(
            f"  whole `python -m dpcore audit ... --trials {trials}` (default workers = "
            f"{len(os.sched_getaffinity(0))}): best {min(procs):.2f} s of {runs}"
        )
        print(f"  the same with --workers 1: best {min(procs1):.2f} s")
    else:
        procs = [child_rss(cli(trials))[0] for _ in range(reps)]
        print(f"  whole process: best {min(procs):.2f} s of {', '.join(f'{t:.2f}' for t in procs)}")
    floor_320 = numpy_floor(trials * 32, reps)
    print(
        f"  numpy one-core floor, {trials * 32:,} values (trials x n): {floor_320:.2f} s  -> "
        f"whole audit / floor = {min(procs) / floor_320:.2f}"
    )
    floor_640 = numpy_floor(2 * trials * 32, 1)
    print(
        f"  numpy one-core floor, {2 * trials * 32:,} values (what the audit draws, both neighbours; one "
        f"timing per chunking): {floor_640:.2f} s  -> whole audit / floor = {min(procs) / floor_640:.2f}"
    )


def peak_rss(args: argparse.Namespace) -> None:
    print(f"== 4. peak RSS of whole audit processes (laplace n = 32, default workers) ({load()}) ==")
    for t in (10**6, 10**7) + (() if args.quick or args.before else (10**8,)):
        dt, rss = child_rss(cli(t))
        print(
            f"  {t:>11,} trials ({2 * t * 32:.2e} values): {dt:7.2f} s, peak RSS {rss:6.1f} MiB", flush=True
        )


def page_cap(per_mech: dict[str, dict[str, float]]) -> None:
    print(f"== 5. the dashboard's cap on real-sampler draws per request ({load()}) ==")
    col = "audit2" if NEW and AUDIT_PAGE_WORKERS >= 2 else "audit1"
    print(f"  seconds per 1e8 draws with the page's workers ({AUDIT_PAGE_WORKERS}), n = 32:")
    worst_name, worst = "", 0.0
    for name, r in per_mech.items():
        s = r[col] / r["values"] * 1e8
        print(f"    {name:16s} {s:6.2f} s")
        if s > worst:
            worst_name, worst = name, s
    t_old_cap = worst * OLD_PAGE_CAP / 1e8
    print(f"  slowest: {worst_name}; a request of {OLD_PAGE_CAP:.0e} draws takes {t_old_cap:.1f} s here")
    print(
        f"  this tree's page cap: {AUDIT_PAGE_MAX_DRAWS:.2e} draws -> "
        f"{worst * AUDIT_PAGE_MAX_DRAWS / 1e8:.1f} s for the slowest mechanism"
    )


def old_vs_new(old: Path, reps: int) -> None:
    """The page's request at the old cap on its slowest samplers, before and after, interleaved.

    CPU seconds are what a shared server spends per request (and suffer least from other work
    on the machine); wall seconds are what the visitor waits.
    """
    repo = str(Path(__file__).resolve().parents[1])
    env_old = {**os.environ, "PYTHONPATH": str(old)}
    env_new = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    dims = ",".join(str(2**k) for k in range(7))  # n = 1..64: 2 · 1e6 · 127 = 2.54e8 draws
    print(f"== 6. the old cap's worst request, before ({old}) and after, interleaved ({load()}) ==")
    worst_old_cpu, worst_new = 0.0, {}
    for name in ("dptext-resample", "gaussian", "dptext"):
        argv = [sys.executable, "-m", "dpcore", "audit", "--mechanism", name, "--dims", dims,
                "--epsilon", "1", "--method", "mc", "--trials", "1000000", "--seed", "5"]  # fmt: skip
        runs: dict[str, list[tuple[float, float, float]]] = {"before": [], "after 1": [], "after 2": []}
        for _ in range(reps):
            runs["before"].append(child(argv, cwd="/", env=env_old))
            runs["after 1"].append(child([*argv, "--workers", "1"], cwd=repo, env=env_new))
            runs["after 2"].append(child([*argv, "--workers", "2"], cwd=repo, env=env_new))
        best_runs = {k: min(v) for k, v in runs.items()}
        print(
            f"  {name:16s} 2.54e8 draws: "
            + "  ".join(f"{k}: {w:6.2f} s wall, {c:6.2f} s CPU" for k, (w, c, _) in best_runs.items())
        )
        worst_old_cpu = max(worst_old_cpu, min(c for _, c, _ in runs["before"]))
        for k in ("after 1", "after 2"):
            worst_new[k] = max(worst_new.get(k, 0.0), min(c for _, c, _ in runs[k]))
    for k, cpu in worst_new.items():
        print(
            f"  slowest mechanism: {worst_old_cpu:.2f} s CPU before, {cpu:.2f} s {k} -> the cap that keeps "
            f"the CPU time of the worst request: {OLD_PAGE_CAP * worst_old_cpu / cpu:.3g} draws"
        )


if __name__ == "__main__":
    main()
