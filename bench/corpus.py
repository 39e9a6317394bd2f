"""Benchmark ``sanitize-corpus``: 10⁷ tokens with SanText at |V| = 15,000 under three engines.

The corpus is the offline corpora (tweets + Lee sentences, :mod:`dpcore.text.corpora`) repeated
until it holds ``--tokens`` GloVe tokens, written once as one Parquet file (columns id, text,
label). Each configuration runs ``python -m dpcore sanitize-corpus`` in its own process tree:

- local, 1 worker (in-process);
- local, 2 worker processes;
- Ray Data, 2 sanitizer actors (a local Ray started for the run).

Throughput is taken from the run's own clock (the manifest's ``run.seconds``: reading,
sanitizing and writing; the start-up and vocabulary loading before it are reported apart as
wall time). Peak memory per process is each process's VmHWM (peak resident set, from
``/proc``), polled every 0.2 s over the whole process tree; forked workers share the
vocabulary copy-on-write, so their resident sets overlap. The load average before each run is
printed: other jobs on the machine share its cores.

Usage::

    python bench/corpus.py                 # 10⁷ tokens, about 5 minutes on 2 cores
    python bench/corpus.py --tokens 1e6    # a quick look
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def make_corpus(path: Path, tokens: int) -> tuple[int, int]:
    """Write the repeated corpus to ``path``; return (rows, tokens)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from dpcore.text.corpora import load_corpus
    from dpcore.text.tokenize import GloveTokenizer

    base = list(load_corpus("tweets")) + list(load_corpus("lee"))
    tok = GloveTokenizer()
    lengths = [len(tok.tokenize(s)) for s in base]
    per_pass = sum(lengths)
    texts: list[str] = []
    n = 0
    while n < tokens:
        for s, k in zip(base, lengths, strict=True):
            texts.append(s)
            n += k
            if n >= tokens:
                break
    table = pa.table(
        {
            "id": pa.array(range(len(texts)), type=pa.int64()),
            "text": pa.array(texts, type=pa.string()),
            "label": pa.array([i % 3 for i in range(len(texts))], type=pa.int8()),
        }
    )
    pq.write_table(table, path, row_group_size=100_000)
    print(f"corpus: {len(texts):,} rows, {n:,} tokens ({len(base):,} base lines, {per_pass:,} tokens a pass)")
    return len(texts), n


def _children() -> dict[int, int]:
    """pid → parent pid for every process."""
    out = {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open(f"/proc/{d}/stat") as fh:
                    s = fh.read()
                out[int(d)] = int(s[s.rindex(")") + 2 :].split()[1])
            except (OSError, ValueError, IndexError):
                pass
    return out


def _tree(root: int) -> set[int]:
    parents = _children()
    tree = {root}
    changed = True
    while changed:
        changed = False
        for pid, ppid in parents.items():
            if ppid in tree and pid not in tree:
                tree.add(pid)
                changed = True
    return tree


def _hwm(pid: int) -> tuple[str, int] | None:
    try:
        with open(f"/proc/{pid}/status") as fh:
            status = fh.read()
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            cmd = fh.read().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        return None
    for line in status.splitlines():
        if line.startswith("VmHWM:"):
            return cmd, int(line.split()[1]) * 1024
    return None


def run_config(name: str, args: list[str]) -> dict:
    load = os.getloadavg()
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-m", "dpcore", "sanitize-corpus", *args, "--json", "--no-progress"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    peaks: dict[int, tuple[str, int]] = {}
    while proc.poll() is None:
        for pid in _tree(proc.pid):
            h = _hwm(pid)
            if h is not None and h[1] > peaks.get(pid, ("", 0))[1]:
                peaks[pid] = h
        time.sleep(0.2)
    out, err = proc.communicate()
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        raise SystemExit(f"{name} failed ({proc.returncode}): {err.strip()[-2000:]}")
    m = json.loads(out)
    sec = m["run"]["seconds"]
    c = m["counts"]
    return {
        "name": name,
        "rows": c["rows"],
        "tokens": c["tokens"],
        "seconds": sec,
        "wall_seconds": wall,
        "rows_per_s": c["rows"] / sec,
        "tokens_per_s": c["tokens"] / sec,
        "load_before": load,
        "after_first_tokens_per_s": (c["tokens"] - m["run"]["first_batch_tokens"])
        / max(sec - m["run"]["first_batch_seconds"], 1e-9),
        "first_batch_seconds": m["run"]["first_batch_seconds"],
        "peaks": peaks,
        "root": proc.pid,
    }


def _label(pid: int, cmd: str, root: int) -> str:
    if "sanitize-corpus" in cmd:
        return "driver" if pid == root else "worker (forked)"
    if cmd.startswith("ray::"):
        return cmd.split()[0][:48]  # a Ray worker, named by what it runs (IDLE between tasks)
    for key in ("raylet", "gcs_server", "dashboard", "log_monitor", "monitor.py", "runtime_env"):
        if key in cmd:
            return f"Ray's {key}"
    return cmd.split()[0].rsplit("/", 1)[-1][:24] if cmd else "?"


def report(r: dict) -> None:
    print(
        f"\n{r['name']}: {r['rows']:,} rows, {r['tokens']:,} tokens in {r['seconds']:.1f} s "
        f"(wall {r['wall_seconds']:.1f} s with start-up): {r['rows_per_s']:,.0f} rows/s, "
        f"{r['tokens_per_s']:,.0f} tokens/s; after the first batch ({r['first_batch_seconds']:.1f} s): "
        f"{r['after_first_tokens_per_s']:,.0f} tokens/s; load average before: "
        + ", ".join(f"{x:.2f}" for x in r["load_before"])
    )
    peaks = sorted(r["peaks"].items(), key=lambda x: -x[1][1])
    shown = 0
    for pid, (cmd, hwm) in peaks:
        if hwm < 50 * 2**20 and shown >= 3:
            continue
        print(f"    peak RSS {hwm / 2**20:7.0f} MiB  {_label(pid, cmd, r['root'])}")
        shown += 1
        if shown >= 8:
            break


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tokens", type=float, default=1e7)
    ap.add_argument("--batch-size", type=int, default=20_000)
    ap.add_argument("--only", default="local1,local2,ray2")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="dpcore-bench-") as tmp:
        src = Path(tmp) / "corpus.parquet"
        make_corpus(src, int(a.tokens))
        common = [
            "--mechanism",
            "santext",
            "--epsilon",
            "3",
            "--vocab-size",
            "15000",
            "--text-column",
            "text",
        ]
        common += ["--input", str(src), "--seed", "1", "--batch-size", str(a.batch_size)]
        configs = {
            "local1": ("local, 1 worker", ["--engine", "local", "--workers", "1"]),
            "local2": ("local, 2 workers", ["--engine", "local", "--workers", "2"]),
            "ray2": ("ray, 2 workers", ["--engine", "ray", "--workers", "2"]),
        }
        results = {}
        outs = {}
        for key in a.only.split(","):
            name, extra = configs[key]
            out = Path(tmp) / f"out-{key}"
            results[key] = run_config(name, [*common, "--output", str(out), *extra])
            report(results[key])
            outs[key] = out
        import pyarrow.parquet as pq

        texts = {k: pq.read_table(o, columns=["text"]).column("text") for k, o in outs.items()}
        first = next(iter(texts.values()))
        same = all(t.equals(first) for t in texts.values())
        print(f"\nidentical output across runs: {same}")
        if "local1" in results:
            base = results["local1"]["tokens_per_s"]
            for k, r in results.items():
                if k != "local1":
                    print(f"speed-up of {r['name']} over local, 1 worker: {r['tokens_per_s'] / base:.2f}×")
        print(f"cores: {os.cpu_count()}; load average now: " + ", ".join(f"{x:.2f}" for x in os.getloadavg()))


if __name__ == "__main__":
    main()
