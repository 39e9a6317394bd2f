"""Benchmark: tokens per second and peak memory of every registered text mechanism, in one run.

Each mechanism runs in its own fresh process (so its peak RSS is its own) and sanitizes the same
~600k-token stream (the Lee and tweets corpora repeated to size, as ``bench/sanitize.py``) with
``sanitize_lines`` at ε = 3 (or 1.5 × a mechanism's own ε floor when 3 is below it:
truncated-gumbel) and its default parameters, over GloVe |V| = 15,000, or over the
embedding the mechanism needs (dp-mlm: the 29,523 BERT WordPieces). dp-mlm runs one masked-LM
forward pass per token, so it gets a prefix of the stream (``--lm-tokens``, default 3,000 tokens)
and its rate is measured on that prefix (printed). Prints a table and writes
``bench/results/mechanisms.txt``; the load average is printed since the 2 cores may be shared.

    python bench/mechanisms.py
    python bench/mechanisms.py --mechanisms santext,tem --tokens 100000
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CHILD = r"""
import json, resource, sys, time
sys.path.insert(0, sys.argv[1])
sys.path.insert(0, sys.argv[1] + "/bench")
from sanitize import corpus_lines
from dpcore.text import create_text_mechanism
from dpcore.text.registry import required_embedding
from dpcore.text.sanitize import sanitize_lines
from dpcore.text.vocab import build_vocabulary
name, tokens = sys.argv[2], int(sys.argv[3])
emb = required_embedding(name) or "glove"
lines = corpus_lines(tokens)
vocab = build_vocabulary(emb, size=15_000 if emb == "glove" else None)
from dpcore.text import TEXT_MECHANISMS
eps = max(3.0, 1.5 * TEXT_MECHANISMS.get(name).factory.minimum_epsilon(vocab))
mech = create_text_mechanism(name, vocab=vocab, epsilon=eps)
sanitize_lines(lines[:5], mech, seed=1)  # warm-up (model load, caches), not timed
t0 = time.perf_counter()
out = sanitize_lines(lines, mech, seed=0)
dt = time.perf_counter() - t0
n = sum(len(t) for t in out.original_tokens)
print(json.dumps({"mechanism": name, "embedding": emb, "vocab": len(vocab), "tokens": n, "seconds": dt,
                  "epsilon": eps,
                  "rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mechanisms", default=None, help="comma-separated (default: every registered one)")
    ap.add_argument("--tokens", type=int, default=600_000)
    ap.add_argument("--lm-tokens", type=int, default=3_000, help="tokens for masked-LM mechanisms")
    ap.add_argument("--out", default=str(ROOT / "bench" / "results" / "mechanisms.txt"))
    args = ap.parse_args()
    sys.path.insert(0, str(ROOT))
    from dpcore.text import TEXT_MECHANISMS
    from dpcore.text.registry import required_embedding

    names = args.mechanisms.split(",") if args.mechanisms else list(TEXT_MECHANISMS.names())
    rows = []
    load0 = os.getloadavg()[0]
    for name in names:
        tokens = args.lm_tokens if required_embedding(name) == "bert-wordpiece" else args.tokens
        res = subprocess.run(
            [sys.executable, "-c", CHILD, str(ROOT), name, str(tokens)], capture_output=True, text=True
        )
        if res.returncode != 0:
            print(f"{name}: failed: {res.stderr.strip().splitlines()[-1][:200]}", file=sys.stderr)
            continue
        row = json.loads(res.stdout.strip().splitlines()[-1])
        rows.append(row)
        print(f"  {name}: {row['tokens'] / row['seconds']:,.0f} tokens/s", file=sys.stderr, flush=True)
    lines = [
        f"text mechanisms, default parameters; load average {load0:.2f} → {os.getloadavg()[0]:.2f}",
        f"{'mechanism':22s} {'embedding, |V|':18s} {'ε':>6s} {'tokens':>9s} {'seconds':>8s} "
        f"{'tokens/s':>10s} {'peak RSS MiB':>13s}",
    ]
    for r in rows:
        lines.append(
            f"{r['mechanism']:22s} {r['embedding'] + ', ' + format(r['vocab'], ','):18s} "
            f"{r.get('epsilon', 3.0):6.3g} {r['tokens']:9,d} "
            f"{r['seconds']:8.1f} {r['tokens'] / r['seconds']:10,.0f} {r['rss_mib']:13,.0f}"
        )
    text = "\n".join(lines)
    print(text)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(text + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
