"""Benchmark the black-box text audit (prints measured figures; not a test).

    python bench/audit_text.py                 # every part below, one run
    python bench/audit_text.py --only screen   # one part: basic, screen, floor, ray or memory
    python bench/audit_text.py --only screen --vocab-size 500 --screen-budget 500000   # a smoke run
    python bench/audit_text.py --only scale --vocab-size 50000 --old-tree /tmp/old   # stage 1 in workers

From one run, on SanText over GloVe at |V| = 15,000, ε = 1:

1. 10⁶ draws of M(x) for one word, through the id fast path of dpcore's own mechanisms and
   through the generic black-box path (strings in, strings out, as any third-party sanitizer);
   samples per second of each and their ratio;
2. a 50-pair adaptive audit at 10⁵ samples per word (pilot included): seconds, draws, peak RSS;
3. a naive reference in the style of the published samplers (one ``rng.choice(p=row)`` per
   draw), timed on fewer draws and scaled, and the speed ratio against (1).

4. the default whole-vocabulary screen plus confirmation (``audit-text`` without ``--words``):
   seconds and draws per second of each stage (the screen, the proposals and pooled tests, the
   confirmation, the power statements), total; target under 3 minutes. The pooled tests draw
   nothing: they run on the screen's draws, so their draw count is the screen's (reused) and their
   rate is the screen's draws processed per second;
5. the sampler's own floor: for ``santext`` and ``vickrey-cmp``, the time of the mechanism's
   ``sample_ids`` alone for exactly the run's draws (same words, same chunks), the audit around
   it with one worker, their ratio, and the audit with two workers (speed-up over one);
6. the Ray engine with 1 and 2 CPUs on the same audit (the result is identical; speed-up), with
   the screen, pooled-test and confirmation stages;
7. memory: peak RSS of a fresh process auditing SanText at T = 10⁷ draws per word (two words),
   beside one at T = 10⁵: draws are counted chunk by chunk, so memory does not grow with T.

8. ``--only scale``: stage 1 (the screen) of SanText ε = 1 over the whole vocabulary, m draws per
   word (``--screen-budget``, default 1,000 per word), in a fresh process per run held to as
   many cores as it has workers (``os.sched_setaffinity`` before numpy starts, so one worker is
   one core, BLAS's threads and the pairings' neighbour search included: per core): the screen
   stage's seconds and draws per second (its drawing, ``draw_words``, apart: the stage also
   builds the pairings) for 1, 2, 4, … workers up to the machine's cores, the speed-up over one
   worker, and whether the result is the same. With ``--old-tree PATH`` (a checkout of older
   code: ``git archive <commit> dpcore | tar -x -C PATH``) the same runs of that tree, interleaved,
   and this tree's speed over it. Then the floor: the same blocks' distances, exp, cumulative
   sums and searches in plain numpy on one core, for 8,192 words.

Targets (issue "Audit any text sanitizer"): (1) under 2 s, (2) under 60 s on this 2-core machine.
Issue 30: at |V| = 50,000, one worker, stage 1 at least 2× the old code's draws per second; on
2 cores, 2 workers at least 1.7× one. Issue 63 keeps that budget against f244609 (the code before
the blocks), in the same run:

    rm -rf /tmp/old && mkdir /tmp/old && git archive f244609 dpcore | tar -x -C /tmp/old
    python bench/audit_text.py --only scale --vocab-size 50000 --old-tree /tmp/old --reps 2
``--vocab-size`` and ``--screen-budget`` shrink parts 4 and 6 for a quick check of the script
(the figures above are for the defaults).
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a fresh clone

from dpcore.text import create_text_mechanism
from dpcore.text.vocab import build_vocabulary
from dpcore.textaudit import DpcoreSanitizer, audit_text
from dpcore.textaudit.loaders import load_sanitizer
from dpcore.textaudit.sampling import FAST_CHUNK, OutputCodebook, draw_counts


class _BlackBox:
    """The same mechanism seen only through ``sample(words, rng)`` (no id fast path)."""

    def __init__(self, inner: DpcoreSanitizer) -> None:
        self.inner, self.name, self.epsilon, self.guarantee = (
            inner,
            inner.name,
            inner.epsilon,
            inner.guarantee,
        )

    def sample(self, words, rng):  # type: ignore[no-untyped-def]
        return self.inner.sample(words, rng)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", choices=("basic", "screen", "floor", "ray", "memory", "scale"), default=None)
    ap.add_argument(
        "--vocab-size",
        type=int,
        default=15_000,
        help="GloVe |V| of every part (default 15000; smaller: a smoke run)",
    )
    ap.add_argument(
        "--screen-budget",
        type=int,
        default=None,
        help="screen draws of parts 4 and 6 (default: the audit's default in 4, 3e7 in 6)",
    )
    ap.add_argument(
        "--old-tree",
        default=None,
        help="part 8: a checkout of older code (a folder holding its dpcore/) timed beside this tree",
    )
    ap.add_argument("--reps", type=int, default=1, help="part 8: runs per row (the best is shown)")
    args = ap.parse_args()
    print(f"load average: {os.getloadavg()[0]:.2f} ({os.cpu_count()} cores; figures scale with contention)")
    vocab = build_vocabulary("glove", size=args.vocab_size)
    budget = {} if args.screen_budget is None else {"screen_budget": args.screen_budget}
    parts = {
        "basic": _basic,
        "screen": lambda v: _screen(v, **budget),
        "floor": _floor,
        "ray": lambda v: _ray(v, **budget),
        "memory": _memory,
        "scale": lambda v: _scale(v, args.screen_budget, args.old_tree, args.reps),
    }
    for name, fn in parts.items():
        if args.only in (None, name):
            fn(vocab)
            print(f"   (load average now {os.getloadavg()[0]:.2f})", flush=True)


def _comparable(res) -> dict:  # type: ignore[no-untyped-def]
    d = res.to_dict()
    d.pop("execution")
    d.pop("elapsed_seconds")
    # the rng contract checks forked workers only when there are some: compare its status
    d["rng_contract"] = (d.get("rng_contract") or {}).get("status")
    return d


#: The stage of the pooled tests in ``execution["stages"]``: it draws nothing of its own.
POOLED_STAGE = "proposals and pooled tests"


def _stage_lines(stages: dict) -> list[str]:  # type: ignore[type-arg]
    """One line per stage: seconds, draws, draws per second. The pooled tests run on the screen's
    draws, so their line shows the screen's draw count (reused, not drawn again) and the rate at
    which those draws were processed."""
    width = max([8, *map(len, stages)])
    screen_draws = stages.get("screen", {}).get("draws", 0)
    out = []
    for stage, st in stages.items():
        draws, rate, note = st["draws"], st["draws_per_second"], ""
        if stage == POOLED_STAGE and screen_draws:
            draws = screen_draws
            rate = draws / st["seconds"] if st["seconds"] > 0 else float("inf")
            note = "  (the screen's draws, reused: nothing drawn)"
        out.append(f"   {stage:<{width}} {st['seconds']:7.1f} s  {draws:>12,} draws  {rate:>12,.0f}/s{note}")
    return out


def _pooled_summary(res) -> str:  # type: ignore[no-untyped-def]
    """The pooled tests' verdicts in one line (``family/pairing: verdict``)."""
    if not res.pooled:
        return "no pooled test"
    parts = [
        f"{t['family']}/{t['pairing']} "
        + (
            "no pair"
            if not t["terms"]
            else f"rejects (≥ {t['excess_lower_bound']:.2g} nats)"
            if t["rejects"]
            else "ok"
        )
        for t in res.pooled
    ]
    return f"{sum(bool(t['rejects']) for t in res.pooled)} of {len(res.pooled)} reject: " + ", ".join(parts)


def _power_summary(res) -> str:  # type: ignore[no-untyped-def]
    """The power statements in one line: the uniform Δ, the single-output probability per claim."""
    sts = res.power.get("statements", [])
    unif = [s for s in sts if s["class"] == "uniform"]
    out = []
    if unif:
        b = min(unif, key=lambda s: s["excess"])
        out.append(f"shared flaw caught for Δ ≥ {b['excess']:.3g} nats ({b['pairing']} pairs)")
    singles = [s for s in sts if s["class"] == "single-output"]
    if singles:
        out.append(
            "one output 1 nat over its claim caught at p ≥ "
            + ", ".join(f"{s['output_probability']:.2g} (claim {s['claim']:.3g})" for s in singles)
        )
    return "; ".join(out) or "none stated"


def _screen(vocab, **kw) -> None:  # type: ignore[no-untyped-def]
    fast = DpcoreSanitizer(create_text_mechanism("santext", vocab=vocab, epsilon=1.0))
    res = audit_text(fast, vocab=vocab, seed=0, workers=1, **kw)
    ex = res.execution
    print(
        f"4. default screen + confirmation, SanText ε = 1, |V| = {len(vocab):,} (1 worker): "
        f"{ex['elapsed_seconds']:.1f} s in all (target < 180 s); verdict {res.verdict}"
    )
    for line in _stage_lines(ex["stages"]):
        print(line)
    sc = res.screen
    print(
        f"   screen: {sc['words_screened']:,} words × {sc['draws_per_word']:,} draws, "
        f"{sc['candidates_scored']:,} candidates, {sc['proposed']} confirmed"
    )
    print(f"   power (whole pipeline): {_power_summary(res)}")
    print(f"   pooled tests: {_pooled_summary(res)}")
    t0 = time.perf_counter()
    two = audit_text(fast, vocab=vocab, seed=0, workers=2, **kw)
    t2 = time.perf_counter() - t0
    same = _comparable(two) == _comparable(res)
    print(f"   2 workers: {t2:.1f} s (×{ex['elapsed_seconds'] / t2:.2f}); same result: {same}")


def _sampler_alone(sanitizer, words: list[int], halves: tuple[int, ...]) -> float:  # type: ignore[no-untyped-def]
    """``sample_ids`` for exactly the audit's draws: per word, per half, in FAST_CHUNK calls."""
    rng = np.random.default_rng(0)
    t0 = time.perf_counter()
    for wid in words:
        for n in halves:
            done = 0
            while done < n:
                m = min(FAST_CHUNK, n - done)
                sanitizer.sample_ids(wid, m, rng)
                done += m
    return time.perf_counter() - t0


def _floor(vocab) -> None:  # type: ignore[no-untyped-def]
    print("5. the sampler's own floor (words of, it, was, this, world, money + 1 neighbour each):")
    print(
        f"   {'mechanism':<12} {'T':>10} {'sampler s':>10} {'audit s':>9} {'ratio':>6} "
        f"{'2 workers s':>12} {'speed-up':>9}"
    )
    words = ["of", "it", "was", "this", "world", "money"]
    for name, samples in (("santext", 2_000_000), ("vickrey-cmp", 20_000)):
        s = load_sanitizer(name, epsilon=1.0, vocab=vocab)
        kw = dict(vocab=vocab, words=words, neighbors=1, samples=samples, seed=0)
        t0 = time.perf_counter()
        one = audit_text(s, workers=1, **kw)
        t_one = time.perf_counter() - t0
        ids = sorted({int(i) for p in one.pairs for i in vocab.ids([p.x, p.x_prime])})
        t_s = _sampler_alone(s, ids, (samples // 2, samples - samples // 2))
        t0 = time.perf_counter()
        two = audit_text(s, workers=2, **kw)
        t_two = time.perf_counter() - t0
        assert _comparable(one) == _comparable(two)
        print(
            f"   {name:<12} {samples:>10,} {t_s:>10.2f} {t_one:>9.2f} {t_one / t_s:>6.2f} {t_two:>12.2f} "
            f"{t_one / t_two:>8.2f}×",
            flush=True,
        )


def _ray(vocab, screen_budget: int = 30_000_000) -> None:  # type: ignore[no-untyped-def]
    try:
        import ray
    except ImportError:
        print("6. Ray: not installed (pip install -r requirements-dev.txt)")
        return
    fast = DpcoreSanitizer(create_text_mechanism("santext", vocab=vocab, epsilon=1.0))
    kw = dict(vocab=vocab, seed=0, samples=100_000, screen_budget=screen_budget)
    print(
        f"6. Ray engine, default screen + confirmation, SanText, |V| = {len(vocab):,}, budget "
        f"{screen_budget:,} (local Ray, started once):"
    )
    runs = {}
    for w in (1, 2):
        t0 = time.perf_counter()
        runs[w] = audit_text(fast, engine="ray", workers=w, **kw)
        dt = time.perf_counter() - t0
        st = runs[w].execution["stages"]
        pooled = st.get(POOLED_STAGE, {"seconds": 0.0})
        print(
            f"   {w} CPU(s): {dt:6.1f} s in all (screen {st['screen']['seconds']:.1f} s, "
            f"{st['screen']['draws']:,} draws; proposals and pooled tests {pooled['seconds']:.1f} s on "
            f"the screen's {st['screen']['draws']:,} draws, none of their own; "
            f"confirm {st['confirm']['seconds']:.1f} s, {st['confirm']['draws']:,} draws; "
            "the rest the power statements and Ray's start and stop)",
            flush=True,
        )
        ray.shutdown()
    t1 = runs[1].execution["elapsed_seconds"]
    t2 = runs[2].execution["elapsed_seconds"]
    print(
        f"   speed-up 2 over 1: ×{t1 / t2:.2f}; same result: {_comparable(runs[1]) == _comparable(runs[2])}"
    )


_MEMORY_CHILD = """
import resource, sys, time
sys.path.insert(0, {root!r})
from dpcore.text.vocab import build_vocabulary
from dpcore.textaudit import audit_text
from dpcore.textaudit.loaders import load_sanitizer
v = build_vocabulary("glove", size=15000)
s = load_sanitizer("santext", epsilon=1.0, vocab=v)
t = time.perf_counter()
r = audit_text(s, vocab=v, words=["of", "money"], neighbors=0, samples={T}, seed=0, workers=1)
dt = time.perf_counter() - t
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, dt, r.samples_drawn)
"""


def _memory(vocab) -> None:  # type: ignore[no-untyped-def]
    import subprocess

    root = str(Path(__file__).resolve().parents[1])
    print("7. peak RSS of a fresh process, SanText |V| = 15,000, two words, one worker:")
    for t in (100_000, 10_000_000):
        out = subprocess.run(
            [sys.executable, "-c", _MEMORY_CHILD.format(root=root, T=t)],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.split()
        rss, dt, drawn = float(out[0]), float(out[1]), int(out[2])
        print(f"   T = {t:>12,} per word: {drawn:>12,} draws in {dt:6.1f} s, peak RSS {rss:6.0f} MiB")


_SCALE_CHILD = """
import os
# per core: the run is held to as many processors as it has workers (before numpy starts BLAS,
# which then starts as many threads), so a 1-worker run uses one core, its neighbour search too
if hasattr(os, "sched_setaffinity"):  # Linux
    os.sched_setaffinity(0, sorted(os.sched_getaffinity(0))[:{workers}])
import json, sys, time
from dpcore.jsonutil import dumps
from dpcore.text import create_text_mechanism
from dpcore.text.vocab import build_vocabulary
from dpcore.textaudit import DpcoreSanitizer, audit_text
import dpcore.textaudit.runner as runner
size, budget, workers, dump = {size}, {budget}, {workers}, {dump!r}
v = build_vocabulary("glove", size=size)
s = DpcoreSanitizer(create_text_mechanism("santext", vocab=v, epsilon=1.0))
timed = {{}}
draw = runner.draw_words
def timed_draw(sanitizer, words, wids, seed, plan, **kw):
    t = time.perf_counter()
    out = draw(sanitizer, words, wids, seed, plan, **kw)
    timed.setdefault(plan.stage, time.perf_counter() - t)
    return out
runner.draw_words = timed_draw
r = audit_text(s, vocab=v, seed=0, workers=workers, screen_budget=budget, samples=2000, pairs=5)
d = r.to_dict()
d.pop("execution"); d.pop("elapsed_seconds")
st = r.execution["stages"]["screen"]
with open(dump, "w") as f:
    f.write(dumps(d))
print(json.dumps({{"screen_s": st["seconds"], "draws": st["draws"], "draw_s": timed["screen"]}}))
"""


def _scale_run(root: str, cwd: str, size: int, budget: int, workers: int) -> dict:  # type: ignore[type-arg]
    """One audit in a fresh process with dpcore from ``root``: the screen's seconds and draws, and
    the result (``to_dict()`` without ``execution`` and ``elapsed_seconds``) under ``"result"``."""
    import json
    import subprocess
    import tempfile

    env = {**os.environ, "PYTHONPATH": root}
    with tempfile.TemporaryDirectory() as tmp:
        dump = str(Path(tmp) / "result.json")
        code = _SCALE_CHILD.format(size=size, budget=budget, workers=workers, dump=dump)
        out = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=False, cwd=cwd, env=env
        )
        if out.returncode != 0:
            raise SystemExit(f"the run with dpcore from {root} failed:\n{out.stderr[-2000:]}")
        got = json.loads(out.stdout.strip().splitlines()[-1])
        got["result"] = json.loads(Path(dump).read_text())
    return got


def _differences(a: object, b: object, path: str = "") -> tuple[list[str], list[str]]:
    """Paths where two results differ, and keys only one of them has (another tree's fields)."""
    if isinstance(a, dict) and isinstance(b, dict):
        diff: list[str] = []
        only = [f"{path}/{k}" for k in set(a) ^ set(b)]
        for k in sorted(set(a) & set(b)):
            d, o = _differences(a[k], b[k], f"{path}/{k}")
            diff += d
            only += o
        return diff, only
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        diff, only = [], []
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            d, o = _differences(x, y, f"{path}[{i}]")
            diff += d
            only += o
        return diff, only
    return ([] if a == b else [path or "/"]), []


def _floor_blocks(vocab, m: int, n_words: int = 8192) -> tuple[float, int, int]:  # type: ignore[no-untyped-def]
    """Plain numpy, one core: the screen's blocks of 64 words (one product each), then each row's
    distances, max-shift, exp, cumulative sum and m searches (uniforms sorted first)."""
    from threadpoolctl import threadpool_limits

    vec, sq = vocab.vectors, vocab.sq_norms
    n = min(n_words, len(vocab))
    g = 64
    buf = np.empty((g, len(vocab)))
    rng = np.random.default_rng(0)
    eps = 1.0
    t0 = time.perf_counter()
    with threadpool_limits(limits=1, user_api="blas"):
        for start in range(0, n, g):
            ids = np.arange(start, start + g) % len(vocab)
            np.matmul(vec[ids], vec.T, out=buf)
            for i, wid in enumerate(ids[: min(g, n - start)]):
                row = buf[i]
                row *= -2.0
                row += sq[wid]
                row += sq
                np.maximum(row, 0.0, out=row)
                np.sqrt(row, out=row)
                row[wid] = 0.0
                row *= -0.5 * eps
                np.exp(row, out=row)
                np.cumsum(row, out=row)
                u = rng.random(2 * m)[m:]
                u.sort()
                np.searchsorted(row, u * row[-1], side="right")
    return time.perf_counter() - t0, n, n * m


def _scale(vocab, screen_budget: int | None, old_tree: str | None, reps: int) -> None:  # type: ignore[no-untyped-def]
    from dpcore.textaudit.engine import block_info

    root = str(Path(__file__).resolve().parents[1])
    size = len(vocab)
    budget = screen_budget if screen_budget is not None else 1000 * size
    m = budget // size
    cores = os.cpu_count() or 1
    counts = [1]
    while counts[-1] * 2 <= cores:
        counts.append(counts[-1] * 2)
    if counts[-1] != cores:
        counts.append(cores)
    info = block_info(DpcoreSanitizer(create_text_mechanism("santext", vocab=vocab, epsilon=1.0)))
    print(
        f"8. stage 1 (the screen), SanText ε = 1, |V| = {size:,}, m = {m:,} draws per word "
        f"({budget:,} draws), a fresh process per run held to as many cores as workers (per core: "
        f"its BLAS threads and neighbour search too), best of {reps}; this tree's blocks: "
        f"{info['block_words']} words, one product of {info['product_rows']} rows, "
        f"{info['block_bytes'] / 2**20:.1f} MiB per worker"
    )
    trees = [("this tree", root, root)]
    if old_tree:
        trees.append(("old tree", str(Path(old_tree).resolve()), "/"))
    print(
        f"   {'workers':>7}  {'tree':<9} {'stage 1 s':>9} {'draws/s':>11} {'×1 worker':>9}  "
        f"{'drawing s':>9} {'draws/s':>11} {'×1 worker':>9}  {'load':>4}  result"
    )
    best: dict[tuple[str, int], dict] = {}  # type: ignore[type-arg]
    for w in counts:
        for label, path, cwd in trees:
            runs = [_scale_run(path, cwd, size, budget, w) for _ in range(reps)]
            r = min(runs, key=lambda x: x["screen_s"])
            best[(label, w)] = r
            one = best[(label, 1)]
            diff, only = _differences(r["result"], best[("this tree", 1)]["result"])
            same = "same as this tree, 1 worker" if not diff else f"DIFFERENT at {', '.join(diff[:3])}"
            if only and not diff:
                same += f" (fields of one tree only: {', '.join(sorted(only)[:3])})"
            rate, rate_draw = r["draws"] / r["screen_s"], r["draws"] / r["draw_s"]
            up, up_draw = one["screen_s"] / r["screen_s"], one["draw_s"] / r["draw_s"]
            print(
                f"   {w:>7}  {label:<9} {r['screen_s']:9.1f} {rate:11,.0f} {up:8.2f}×  "
                f"{r['draw_s']:9.1f} {rate_draw:11,.0f} {up_draw:8.2f}×  "
                f"{os.getloadavg()[0]:4.1f}  {same}",
                flush=True,
            )
        if old_tree:
            new, old = best[("this tree", w)], best[("old tree", w)]
            print(
                f"   {w:>7}  this tree / old tree: stage 1 ×{old['screen_s'] / new['screen_s']:.2f}, "
                f"drawing ×{old['draw_s'] / new['draw_s']:.2f}"
            )
        if w == 1:  # the floor beside the one-worker runs
            t_floor, n_words, draws = min((_floor_blocks(vocab, m) for _ in range(reps)), key=lambda x: x[0])
            one = best[("this tree", 1)]
            rate_floor = draws / t_floor
            print(
                f"   floor: plain numpy on one core, the same blocks ({info['product_rows']} rows a product, "
                f"{n_words:,} words × {m:,}): {t_floor:.1f} s, {rate_floor:,.0f} draws/s; stage 1 (1 worker) "
                f"is {rate_floor / (one['draws'] / one['screen_s']):.2f}× slower, its drawing "
                f"{rate_floor / (one['draws'] / one['draw_s']):.2f}× (load {os.getloadavg()[0]:.1f})",
                flush=True,
            )
    print(
        "   stage 1 = the pairings (nearest neighbours, one process) + the drawing (draw_words: rows, draws, "
        "pair scores and summaries, in the workers)"
    )


def _basic(vocab) -> None:  # type: ignore[no-untyped-def]
    mech = create_text_mechanism("santext", vocab=vocab, epsilon=1.0)
    fast = DpcoreSanitizer(mech)
    word = "privacy"
    wid = int(vocab.ids([word])[0])
    n = 1_000_000

    t0 = time.perf_counter()
    counts = draw_counts(fast, word, wid, n, np.random.default_rng(0), OutputCodebook(vocab.words))
    t_fast = time.perf_counter() - t0
    assert counts.sum() == n
    t0 = time.perf_counter()
    counts = draw_counts(_BlackBox(fast), word, wid, n, np.random.default_rng(0), OutputCodebook(vocab.words))
    t_box = time.perf_counter() - t0
    assert counts.sum() == n
    print(f"1. 10^6 draws of one word, |V| = {len(vocab):,}:")
    print(f"   id fast path   {t_fast:6.2f} s  ({n / t_fast:,.0f} samples/s)  target < 2 s")
    print(f"   black-box path {t_box:6.2f} s  ({n / t_box:,.0f} samples/s)")

    # naive: one rng.choice with an explicit probability row per draw (the published pattern)
    _, lp = fast.log_prob_row(word)
    p = np.exp(lp)
    p /= p.sum()
    rng = np.random.default_rng(0)
    k = 2_000
    t0 = time.perf_counter()
    for _ in range(k):
        rng.choice(len(p), p=p)
    t_naive = (time.perf_counter() - t0) / k * n
    print(f"   naive per-draw rng.choice(p=row), scaled from {k:,} draws: {t_naive:6.1f} s")
    print(f"   speed-up of the fast path over naive: ×{t_naive / t_fast:,.0f}")

    t0 = time.perf_counter()
    res = audit_text(fast, vocab=vocab, pairs=50, strategy="adaptive", samples=100_000, seed=0)
    t_audit = time.perf_counter() - t0
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print("2. 50-pair adaptive audit, 10^5 samples per word (pilot 10^4 per candidate word):")
    print(
        f"   {t_audit:.1f} s, {res.samples_drawn:,} draws ({res.samples_drawn / t_audit:,.0f}/s), "
        f"peak RSS {rss:.0f} MiB; verdict {res.verdict}, exact {res.exact_verdict}  target < 60 s"
    )


if __name__ == "__main__":
    main()
