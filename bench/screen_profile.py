"""Profile the text audit's screen (stage 1) on one worker (prints cProfile's summary; not a test).

    python bench/screen_profile.py --vocab-size 15000 --screen-budget 22500000
    python bench/screen_profile.py --vocab-size 50000 --screen-budget 50000000

SanText ε = 1 over GloVe, the whole-vocabulary screen with ``screen_budget // |V|`` draws per
word, a small confirmation (``--samples``, ``--pairs``) so that the screen dominates. Prints the
run's stage seconds, then cProfile's top functions of the whole ``audit_text`` call (the screen
is its first stage: sampling, counting, ``reduce_draws``, ``summarize``, ``pair_lower_bounds``;
then the proposals and pooled tests on its draws) by cumulative and by own time.
"""

from __future__ import annotations

import os

# one worker, one core (before numpy starts BLAS's threads), as bench/audit_text.py's scale runs
if hasattr(os, "sched_setaffinity"):  # Linux
    os.sched_setaffinity(0, sorted(os.sched_getaffinity(0))[:1])

import argparse
import cProfile
import io
import pstats
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a fresh clone

from dpcore.text import create_text_mechanism
from dpcore.text.vocab import build_vocabulary
from dpcore.textaudit import DpcoreSanitizer, audit_text


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--vocab-size", type=int, default=15_000)
    ap.add_argument("--screen-budget", type=int, default=22_500_000)
    ap.add_argument("--samples", type=int, default=2_000, help="confirmation draws per word (small)")
    ap.add_argument("--pairs", type=int, default=5)
    ap.add_argument("--top", type=int, default=30)
    ap.add_argument("--save", default=None, help="also write cProfile's raw stats to this file (pstats)")
    args = ap.parse_args()
    vocab = build_vocabulary("glove", size=args.vocab_size)
    san = DpcoreSanitizer(create_text_mechanism("santext", vocab=vocab, epsilon=1.0))
    print(
        f"# python bench/screen_profile.py --vocab-size {args.vocab_size} --screen-budget "
        f"{args.screen_budget} --samples {args.samples} --pairs {args.pairs}"
    )
    load, cores = os.getloadavg()[0], os.cpu_count()
    print(f"# SanText eps = 1, |V| = {len(vocab):,}, 1 worker on 1 core; load average {load:.2f} ({cores} cores)")  # noqa: E501
    prof = cProfile.Profile()
    prof.enable()
    res = audit_text(
        san, vocab=vocab, seed=0, workers=1, screen_budget=args.screen_budget, samples=args.samples,
        pairs=args.pairs,
    )  # fmt: skip
    prof.disable()
    if args.save:
        prof.dump_stats(args.save)
    ex = res.execution
    m = res.screen["draws_per_word"]
    total = ex["elapsed_seconds"]
    print(f"# m = {m:,} draws per word, {res.screen['draws']:,} screen draws; {total:.1f} s in all")
    for stage, st in ex["stages"].items():
        rate = st["draws_per_second"]
        print(f"#   {stage:<28} {st['seconds']:8.2f} s  {st['draws']:>12,} draws  {rate:>12,.0f}/s")
    for title, sort in (("cumulative time", "cumulative"), ("own time", "tottime")):
        buf = io.StringIO()
        pstats.Stats(prof, stream=buf).strip_dirs().sort_stats(sort).print_stats(args.top)
        text = buf.getvalue()
        body = text[text.index("   ncalls") :] if "   ncalls" in text else text
        print(f"\n## top functions by {title} (cProfile, the whole audit_text call; the screen is stage 1)")
        print(body.rstrip())


if __name__ == "__main__":
    main()
