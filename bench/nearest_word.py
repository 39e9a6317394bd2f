"""Benchmark: draws/s of the noise-plus-nearest-word mechanisms against a GEMM floor, in one run.

Mechanisms: ``feyisetan`` (Feyisetan et al. 2020), ``mahalanobis`` (Xu et al. 2020),
``vickrey-cmp`` and ``vickrey-mahalanobis`` (Xu et al. 2021), and the fenced
``flawed:vickrey-drops-input``, over GloVe |V| = 15,000, built as the text audit builds them
(:func:`dpcore.textaudit.loaders.load_sanitizer`). Two batch shapes:

- **same word**: ``sanitizer.sample_ids(word_id, n, rng)``, n draws of one input word per call,
  the call the text audit makes (``dpcore.textaudit.sampling.draw_counts``);
- **mixed**: ``mechanism.sample_ids(ids, rng)`` with n ids drawn from the vocabulary's public
  word frequencies (Zipf-like, as running text), the call of the Sanitize page and the CLI. The
  flawed reproduction is audit-only (never offered for sanitizing), so it has no mixed row.

The **GEMM floor** is the distance computation alone, done as BLAS matrix products in the same
process: n points (m = 50) times the (m × |V|) vocabulary matrix, in float64 and in float32,
blocks of rows written into one preallocated output (the fastest of a few block heights is
kept), with no noise, no argmin and no Python work. ``ratio`` = mechanism draws/s ÷ float64
floor draws/s (1.0 = as fast as the float64 product alone; above 1 is possible for a
mechanism that does its products in float32).

Every timing is the best of ``--repeat`` (default 3) runs, interleaved round by round so that
load from other users of the machine hits all rows alike; the load average is printed before
and after. Output: a table on stdout and in ``--out`` (default bench/results/nearest_word.txt).

    python bench/nearest_word.py                    # ~3 minutes on 2 cores
    python bench/nearest_word.py --n 1048576        # the audit's own call size (FAST_CHUNK)
    python bench/nearest_word.py --mechanisms feyisetan --eps 1 --out /tmp/x.txt
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]

MECHANISMS = ("feyisetan", "mahalanobis", "vickrey-cmp", "vickrey-mahalanobis", "flawed:vickrey-drops-input")
#: Block heights tried for the GEMM floor (the fastest is reported).
FLOOR_BLOCKS = (64, 256, 1024)


def _time(fn: Callable[[int], object], n: int) -> float:
    t = time.perf_counter()
    fn(n)
    return time.perf_counter() - t


def _floor(points: np.ndarray, vt: np.ndarray, block: int) -> Callable[[int], None]:
    """``points[:k] @ vt`` in blocks of ``block`` rows into one reused output (the floor)."""
    buf = np.empty((block, vt.shape[1]), dtype=vt.dtype)

    def run(k: int) -> None:
        for s in range(0, k, block):
            p = points[s : s + block]
            np.matmul(p, vt, out=buf[: p.shape[0]])

    return run


def _floor_workers(points: np.ndarray, vt: np.ndarray, block: int, workers: int) -> Callable[[int], None]:
    """The same product as :func:`_floor`, arranged as the search runs it: ``workers`` threads,
    each with single-threaded BLAS and its own output block."""
    from concurrent.futures import ThreadPoolExecutor

    from threadpoolctl import threadpool_limits

    def run(k: int) -> None:
        blocks = iter(range(0, k, block))

        def work() -> None:
            buf = np.empty((block, vt.shape[1]), dtype=vt.dtype)
            for s in blocks:
                p = points[s : s + block]
                np.matmul(p, vt, out=buf[: p.shape[0]])

        with threadpool_limits(1, user_api="blas"), ThreadPoolExecutor(workers) as pool:
            for f in [pool.submit(work) for _ in range(workers)]:
                f.result()

    return run


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mechanisms", default=",".join(MECHANISMS), help="comma-separated")
    ap.add_argument("--eps", default="1,10", help="comma-separated ε values")
    ap.add_argument("--size", type=int, default=15_000, help="GloVe vocabulary size")
    ap.add_argument("--n", type=int, default=1 << 16, help="draws per timed call")
    ap.add_argument("--word", default="privacy", help="input word of the same-word batches")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default=str(ROOT / "bench" / "results" / "nearest_word.txt"))
    ap.add_argument(
        "--root",
        default=str(ROOT),
        help="the checkout whose dpcore is timed (e.g. `git archive` of an older commit, for before/after)",
    )
    args = ap.parse_args()
    sys.path.insert(0, args.root)

    from threadpoolctl import threadpool_info

    import dpcore
    from dpcore.text.vocab import build_vocabulary
    from dpcore.textaudit.loaders import load_sanitizer

    try:
        from dpcore.text.nearest import NEAREST_BLOCK_ELEMENTS, nearest_workers
    except ImportError:  # a checkout from before dpcore.text.nearest held the search
        try:
            from dpcore.text.mahalanobis import NEAREST_BLOCK_ELEMENTS, nearest_workers
        except ImportError:  # a checkout from before the float32 search: the same floor arrangement
            NEAREST_BLOCK_ELEMENTS, nearest_workers = 1 << 21, lambda: 2
    workers, block_elements = nearest_workers(), NEAREST_BLOCK_ELEMENTS

    load0 = os.getloadavg()
    vocab = build_vocabulary("glove", size=args.size)
    n, m = args.n, vocab.dim
    word_id = int(vocab.ids([args.word])[0])
    rng = np.random.default_rng(args.seed)
    freq = np.asarray(vocab.frequency, dtype=np.float64)
    mixed_ids = rng.choice(len(vocab), size=n, p=freq / freq.sum())

    # the floor: the same number of points as one timed call, float64 and float32
    pts64 = vocab.vectors[mixed_ids] + rng.standard_normal((n, m))
    vt64 = np.ascontiguousarray(vocab.vectors.T)
    pts32, vt32 = pts64.astype(np.float32), vt64.astype(np.float32)
    jobs: dict[tuple[str, ...], Callable[[int], object]] = {}
    for b in FLOOR_BLOCKS:
        jobs[("floor64", str(b))] = _floor(pts64, vt64, b)
        jobs[("floor32", str(b))] = _floor(pts32, vt32, b)
    rows = max(1, block_elements // len(vocab))
    jobs[("floor32w", str(rows))] = _floor_workers(pts32, vt32, rows, workers)
    for eps in (float(e) for e in args.eps.split(",")):
        for name in args.mechanisms.split(","):
            san = load_sanitizer(name, epsilon=eps, vocab=vocab)
            g = np.random.default_rng(args.seed)
            jobs[(name, f"{eps:g}", "same")] = lambda k, san=san, g=g: san.sample_ids(word_id, k, g)
            mech = getattr(san, "mechanism", None)
            if mech is not None:  # a registered mechanism: the Sanitize page's mixed-word call
                key = (name, f"{eps:g}", "mixed")
                jobs[key] = lambda k, mech=mech, g=g: mech.sample_ids(mixed_ids[:k], g)
    for fn in jobs.values():  # warm-up: caches (covariance, float32 copies), page faults
        fn(min(n, 4096))
    print(f"{len(jobs)} timings × {args.repeat} rounds …", file=sys.stderr, flush=True)
    best = dict.fromkeys(jobs, np.inf)
    for _ in range(args.repeat):
        for key, fn in jobs.items():
            best[key] = min(best[key], _time(fn, n))
    load1 = os.getloadavg()

    f64 = n / min(best[("floor64", str(b))] for b in FLOOR_BLOCKS)
    f32 = n / min(best[("floor32", str(b))] for b in FLOOR_BLOCKS)
    f32w = n / best[("floor32w", str(rows))]
    blas = "; ".join(
        f"{i.get('internal_api')} {i.get('version')} ({i.get('num_threads')} threads)"
        for i in threadpool_info()
        if i.get("user_api") == "blas"
    )
    lines = [
        f"noise + nearest word, GloVe |V| = {len(vocab):,}, m = {m}, {n:,} draws per call, best of "
        f"{args.repeat}; same word = {args.word!r}; dpcore from {Path(dpcore.__file__).parent}",
        f"load average before {load0[0]:.2f} {load0[1]:.2f} {load0[2]:.2f}, "
        f"after {load1[0]:.2f} {load1[1]:.2f} {load1[2]:.2f}; BLAS: {blas}",
        f"GEMM floor (n × {m}) @ ({m} × {len(vocab):,}), BLAS's own threads, best block of "
        + ", ".join(map(str, FLOOR_BLOCKS))
        + f" rows: float64 {f64:,.0f} draws/s, float32 {f32:,.0f} draws/s",
        f"float32 GEMM as the search runs it ({workers} workers × 1 BLAS thread, blocks of {rows} rows): "
        f"{f32w:,.0f} draws/s",
        "ratio64 = draws/s ÷ float64 floor; ratio32w = draws/s ÷ float32 floor as the search runs it",
        "",
        f"{'mechanism':28s} {'ε':>4s} {'batch':>6s} {'draws/s':>10s} {'floor64/s':>10s} {'ratio64':>8s} "
        f"{'ratio32w':>9s}",
    ]
    for key, t in best.items():
        if key[0].startswith("floor"):
            continue
        name, eps, batch = key
        rate = n / t
        lines.append(
            f"{name:28s} {eps:>4s} {batch:>6s} {rate:10,.0f} {f64:10,.0f} {rate / f64:8.2f} "
            f"{rate / f32w:9.2f}"
        )
    text = "\n".join(lines)
    print(text)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(text + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
