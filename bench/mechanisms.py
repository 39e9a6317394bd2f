"""Benchmark: tokens/s and peak memory of every registered text mechanism, in one run.

The token stream is bench/sanitize.py's: the Lee and tweets corpora repeated to ~600k GloVe
tokens, mapped to ids of the |V| = 15,000 GloVe vocabulary (OOV tokens dropped; the mapping
itself is not timed). Each mechanism runs in a fresh subprocess (so its peak RSS, from
``getrusage``, is its own: embedding + vocabulary + mechanism), which reports

- ``build_s``: constructing the mechanism (CusText's grouping, Mahalanobis' Σ_λ^{1/2}, …);
- ``sample_s`` and tokens/s of ``sample_ids`` on the stream (ε = 3, default parameters);
- ``peak_rss_mb`` of the subprocess and the tracemalloc peak of the sampling call.

The noisy-nearest-neighbour mechanisms (feyisetan, mahalanobis, vickrey-*) do a |V|-wide
matrix product per token; they run on the first ``--mc-tokens`` tokens of the same stream
(default 60,000) and the table says so. The machine is shared: ``os.getloadavg()`` is recorded
before and after. Output: a table on stdout and in ``bench/results/mechanisms.txt``.

Run: ``nice -n 10 python bench/mechanisms.py``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

VOCAB = 15_000
EPS = 3.0


def _child(name: str, ids_path: str, n: int) -> None:
    from dpcore.text import TEXT_MECHANISMS
    from dpcore.text.vocab import build_vocabulary

    ids = np.load(ids_path)[:n]
    vocab = build_vocabulary("glove", size=VOCAB)
    kw = {"vocab": vocab} if name == "random" else {"vocab": vocab, "epsilon": EPS}
    t0 = time.perf_counter()
    mech = TEXT_MECHANISMS.create(name, **kw)
    build = time.perf_counter() - t0
    rng = np.random.default_rng(0)
    tracemalloc.start()
    t0 = time.perf_counter()
    out = mech.sample_ids(ids, rng)
    dt = time.perf_counter() - t0
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert out.shape == ids.shape
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(
        json.dumps(
            {
                "name": name,
                "tokens": int(ids.size),
                "build_s": build,
                "sample_s": dt,
                "tokens_per_s": ids.size / dt,
                "trace_peak_mb": peak / 2**20,
                "peak_rss_mb": rss,
            }
        )
    )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--one", help=argparse.SUPPRESS)
    ap.add_argument("--ids", help=argparse.SUPPRESS)
    ap.add_argument("--n", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--mc-tokens", type=int, default=60_000)
    args = ap.parse_args()
    if args.one:
        _child(args.one, args.ids, args.n)
        return
    from bench.sanitize import TARGET_TOKENS, corpus_lines
    from dpcore.text import TEXT_MECHANISMS
    from dpcore.text.embeddings import load_tokenizer
    from dpcore.text.vocab import build_vocabulary

    load0 = os.getloadavg()
    tok = load_tokenizer("glove")
    vocab = build_vocabulary("glove", size=VOCAB)
    toks = [t for line in corpus_lines(TARGET_TOKENS) for t in tok.tokenize(line)]
    ids = vocab.ids(toks)
    ids = ids[ids >= 0].astype(np.int64)
    names = TEXT_MECHANISMS.names(include_flawed=False)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "ids.npy")
        np.save(path, ids)
        for name in names:
            exact = TEXT_MECHANISMS.get(name).tags and "exact" in TEXT_MECHANISMS.get(name).tags
            n = ids.size if exact else min(ids.size, args.mc_tokens)
            res = subprocess.run(
                [sys.executable, __file__, "--one", name, "--ids", path, "--n", str(n)],
                capture_output=True,
                text=True,
                cwd=ROOT,
                check=False,
            )
            if res.returncode != 0:
                rows.append({"name": name, "error": res.stderr.strip().splitlines()[-1]})
            else:
                rows.append(json.loads(res.stdout.strip().splitlines()[-1]))
            print(rows[-1], file=sys.stderr, flush=True)
    load1 = os.getloadavg()
    lines = [
        f"bench/mechanisms.py: GloVe |V| = {VOCAB:,}, ε = {EPS:g}, default parameters; "
        f"{ids.size:,} in-vocabulary tokens of the ~{TARGET_TOKENS:,}-token stream "
        f"(noisy-NN mechanisms on the first {args.mc_tokens:,}); one fresh process per mechanism",
        f"load average (1, 5, 15 min) before: {load0[0]:.2f} {load0[1]:.2f} {load0[2]:.2f}; "
        f"after: {load1[0]:.2f} {load1[1]:.2f} {load1[2]:.2f} (2 shared cores)",
        "",
        f"{'mechanism':<22}{'tokens':>10}{'build s':>10}{'sample s':>10}{'tokens/s':>12}"
        f"{'peak RSS MB':>13}{'sample peak MB':>16}",
    ]
    for r in rows:
        if "error" in r:
            lines.append(f"{r['name']:<22}ERROR {r['error']}")
            continue
        lines.append(
            f"{r['name']:<22}{r['tokens']:>10,}{r['build_s']:>10.2f}{r['sample_s']:>10.2f}"
            f"{r['tokens_per_s']:>12,.0f}{r['peak_rss_mb']:>13,.0f}{r['trace_peak_mb']:>16,.1f}"
        )
    text = "\n".join(lines) + "\n"
    print(text)
    out = ROOT / "bench" / "results" / "mechanisms.txt"
    out.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
