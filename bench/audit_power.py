"""Does the text audit's power statement hold for the whole pipeline? And its false-alarm rate?

Part 1 (power): the statement of a run on a correct k-RR gives, per class, the size of a flaw
the pipeline flags with probability ≥ 0.9. Plant flaws of exactly that size and let the whole
pipeline (screen, pooled tests, proposals, confirmation) find them, over many seeds:

- ``uniform``: a k-RR sampled at ε + Δ (every word's loss on {x} is its claim + Δ);
- ``single-output``: one word (drawn by the seed) outputs one other word with the stated
  probability p, every other word outputs it with probability p·e^{−(ε + 1)}.

Part 2 (false alarms): correct k-RR and SanText at |V| = 15,000, repeated seeds, smallest screen.

Prints the flag rates with a 95% Clopper–Pearson interval, and the command that reproduces it::

    python bench/audit_power.py [--runs 100] [--vocab-size 1000] [--false-alarm-runs 20]
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np

from dpcore.stats import cp_lower, cp_upper
from dpcore.text.vocab import build_vocabulary
from dpcore.textaudit import KaryRandomizedResponse, audit_text
from dpcore.textaudit.loaders import load_sanitizer


def _ci(k: int, n: int) -> str:
    lo, hi = float(cp_lower(k, n, 0.025)), float(cp_upper(k, n, 0.025))
    return f"{k}/{n} = {k / n:.3f} (95% CI {lo:.3f}–{hi:.3f})"


def power(runs: int, size: int) -> None:
    vocab = build_vocabulary("glove", size=size)
    kw_u = dict(vocab=vocab, screen_budget=200 * size, samples=2_000, pairs=5)
    base = audit_text(KaryRandomizedResponse(epsilon=1.0, words=vocab.words), seed=0, **kw_u)
    delta = min(s["excess"] for s in base.power["statements"] if s["class"] == "uniform")

    class Uniform(KaryRandomizedResponse):
        exact = False

        @property
        def sampling_epsilon(self) -> float:
            return self.epsilon + delta

    t0 = time.perf_counter()
    hits = sum(
        audit_text(Uniform(epsilon=1.0, words=vocab.words), seed=1000 + s, **kw_u).verdict == "violates"
        for s in range(runs)
    )
    print(
        f"uniform, |V| = {size:,}, m = 200, stated Δ = {delta:.3g} nats: flagged {_ci(hits, runs)} "
        f"[{time.perf_counter() - t0:.0f} s]"
    )

    kw_s = dict(vocab=vocab, screen_budget=400 * size, samples=4_000, pairs=5)
    base = audit_text(KaryRandomizedResponse(epsilon=1.0, words=vocab.words), seed=0, **kw_s)
    (single,) = [s for s in base.power["statements"] if s["class"] == "single-output"]
    p_star = single["output_probability"]
    q = p_star * math.exp(-(1.0 + single["excess"]))
    t0 = time.perf_counter()
    hits = 0
    for s in range(runs):
        rng = np.random.default_rng(5000 + s)
        src, hot = (int(v) for v in rng.choice(size, size=2, replace=False))

        class Single(KaryRandomizedResponse):
            exact = False

            def _draw(self, ids, rng, src=src, hot=hot):
                out = super()._draw(ids, rng)
                rate = np.where(ids == src, p_star, q)
                return np.where(rng.random(ids.size) < rate, hot, out)

        res = audit_text(Single(epsilon=1.0, words=vocab.words), seed=2000 + s, **kw_s)
        hits += any(p.violates and vocab.words[src] in (p.x, p.x_prime) for p in res.pairs)
    print(
        f"single-output, |V| = {size:,}, m = 400, T = 4,000, stated p = {p_star:.3g} at claim 1 (+1 nat): "
        f"flagged {_ci(hits, runs)} [{time.perf_counter() - t0:.0f} s]"
    )


def false_alarms(runs: int) -> None:
    vocab = build_vocabulary("glove", size=15_000)
    for name in ("krr", "santext"):
        san = load_sanitizer(name, epsilon=1.0, vocab=vocab)
        t0 = time.perf_counter()
        flags = sum(
            audit_text(
                san, vocab=vocab, seed=s, confidence=0.8, screen_budget=200 * 15_000, samples=2_000, pairs=10
            ).verdict
            == "violates"
            for s in range(runs)
        )
        print(
            f"false alarms, {name}, |V| = 15,000, confidence 0.8 (allowed 0.2): {_ci(flags, runs)} "
            f"[{time.perf_counter() - t0:.0f} s]"
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=100)
    ap.add_argument("--vocab-size", type=int, default=1000)
    ap.add_argument("--false-alarm-runs", type=int, default=20)
    args = ap.parse_args()
    print(
        f"# python bench/audit_power.py --runs {args.runs} --vocab-size {args.vocab_size} "
        f"--false-alarm-runs {args.false_alarm_runs}"
    )
    power(args.runs, args.vocab_size)
    if args.false_alarm_runs:
        false_alarms(args.false_alarm_runs)


if __name__ == "__main__":
    main()
