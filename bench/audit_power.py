"""Does the text audit's power statement hold for the whole pipeline? And its false-alarm rate?

Part 1 (power): the statement of a run on a correct k-RR gives, per class, the size of a flaw
the pipeline flags with probability ≥ 0.9. Plant flaws of exactly that size and let the whole
pipeline (screen, pooled tests, proposals, confirmation) find them, over many seeds:

- ``uniform``: a k-RR sampled at ε + Δ (every word's loss on {x} is its claim + Δ);
- ``single-output``: one word (drawn by the seed) outputs one other word with the stated
  probability p, every other word outputs it with probability p·e^{−(ε + 1)}.
- ``metric``: SanText (ε = 1, |V| = 500, the audit's default sizes) with one nearest-neighbour
  pair (x, x′) whose claim is near the statement's 10%, 50% or 90% claim level (the seed picks
  one of the 10 nearest) made to exceed its own claim c by 1 nat on one output y (drawn by the
  seed): Pr[M(x) = y] = p, the value the statement gives at that level, Pr[M(x′) = y] =
  p·e^{−(c + 1)}, every other output in proportion to SanText's own. A run counts when the audit
  flags the pair (x, x′) itself.

Each rate is judged by a one-sided binomial test: "power ≥ 0.9" is rejected when
Pr[Bin(runs, 0.9) ≤ flagged] < 0.05.

Part 2 (false alarms): correct k-RR and SanText at |V| = 15,000, repeated seeds, smallest screen.

Prints the flag rates with a 95% Clopper–Pearson interval, and the command that reproduces it::

    python bench/audit_power.py [--runs 100] [--vocab-size 1000] [--metric-runs 30]
        [--false-alarm-runs 20] [--workers 2]
"""

from __future__ import annotations

import argparse
import math
import time
from collections.abc import Sequence
from multiprocessing import Pool
from typing import Any

import numpy as np
from scipy.stats import binom

from dpcore.stats import cp_lower, cp_upper
from dpcore.text import create_text_mechanism
from dpcore.text.sampling import pair_distances
from dpcore.text.vocab import build_vocabulary
from dpcore.textaudit import DpcoreSanitizer, KaryRandomizedResponse, audit_text
from dpcore.textaudit.loaders import load_sanitizer
from dpcore.textaudit.pairs import nearest_neighbors

#: The metric part: SanText at ε = 1 over this many GloVe words, the audit's default sizes.
METRIC_SIZE = 500
METRIC_KW: dict[str, Any] = {"screen_budget": 20_000_000, "samples": 100_000, "pairs": 50}


def _ci(k: int, n: int) -> str:
    lo, hi = float(cp_lower(k, n, 0.025)), float(cp_upper(k, n, 0.025))
    return f"{k}/{n} = {k / n:.3f} (95% CI {lo:.3f}–{hi:.3f})"


def _judge(k: int, n: int, power: float = 0.9) -> str:
    """One-sided binomial test of "flag rate ≥ power": rejected when Pr[Bin(n, power) ≤ k] < 0.05."""
    pv = float(binom.cdf(k, n, power))
    return f"binomial p = {pv:.3g}: " + (
        "REJECTED (power < 0.9)" if pv < 0.05 else "power ≥ 0.9 not rejected"
    )


class _PlantedSanText(DpcoreSanitizer):
    """SanText with Pr[M(x) = y] = p and Pr[M(x′) = y] = q; their other outputs in SanText's proportions."""

    def __init__(self, mechanism: Any, x: int, xp: int, y: int, p: float, q: float) -> None:
        super().__init__(mechanism)
        self._rate = np.zeros(len(mechanism.vocab))
        self._rate[[x, xp]] = [p, q]
        self._y = y

    @property
    def exact(self) -> bool:
        return False

    def _plant(self, ids: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        out = self.mechanism.sample_ids(ids, rng)
        rate = self._rate[ids]
        hit = rate > 0
        while True:  # the natural draws of y by x and x′ are redrawn: y comes only from the planted rate
            redo = np.flatnonzero(hit & (out == self._y))
            if redo.size == 0:
                break
            out[redo] = self.mechanism.sample_ids(ids[redo], rng)
        return np.where(hit & (rng.random(ids.size) < rate), self._y, out)

    def sample(self, words: Sequence[str], rng: np.random.Generator) -> np.ndarray:
        return self._words[self._plant(self.mechanism.vocab.ids(words), rng)]

    def sample_ids(self, word_id: int, n: int, rng: np.random.Generator) -> np.ndarray:
        return self._plant(np.full(n, word_id, dtype=np.int64), rng)


def _metric_run(job: tuple[int, float, int, int, int, float]) -> tuple[int, bool]:
    level, p, seed, x, xp, claim = job
    vocab = build_vocabulary("glove", size=METRIC_SIZE)
    mech = create_text_mechanism("santext", vocab=vocab, epsilon=1.0)
    rng = np.random.default_rng(7000 + 100 * level + seed)
    y = int(rng.choice(np.setdiff1d(np.arange(METRIC_SIZE), [x, xp])))
    san = _PlantedSanText(mech, x, xp, y, p, p * math.exp(-(claim + 1.0)))
    res = audit_text(san, vocab=vocab, seed=3000 + 100 * level + seed, **METRIC_KW)
    pair = {vocab.words[x], vocab.words[xp]}
    return level, any(r.violates and {r.x, r.x_prime} == pair for r in res.pairs)


def metric(runs: int, workers: int) -> None:
    """The single-output statement at the metric claim levels, SanText |V| = 500, ε = 1."""
    vocab = build_vocabulary("glove", size=METRIC_SIZE)
    base = audit_text(
        DpcoreSanitizer(create_text_mechanism("santext", vocab=vocab, epsilon=1.0)),
        vocab=vocab,
        seed=0,
        **METRIC_KW,
    )
    singles = [s for s in base.power["statements"] if s["class"] == "single-output"]
    ids = np.arange(METRIC_SIZE)
    nn = nearest_neighbors(vocab, ids, 1)[:, 0]
    claims = 1.0 * pair_distances(vocab.vectors, ids, nn)
    jobs, near = [], []
    for level, st in enumerate(singles):
        close = np.argsort(np.abs(claims - st["claim"]), kind="stable")[:10]
        near.append(close)
        if math.isfinite(st["output_probability"]):
            xs = close[np.arange(runs) % close.size]  # the seed's pair: one of the 10 nearest the level
            p = st["output_probability"]
            jobs += [(level, p, s, int(x), int(nn[x]), float(claims[x])) for s, x in enumerate(xs)]
    t0 = time.perf_counter()
    with Pool(workers) as pool:
        out = pool.map(_metric_run, jobs, chunksize=1)
    secs = time.perf_counter() - t0
    m, T, K = base.screen["draws_per_word"], METRIC_KW["samples"], METRIC_KW["pairs"]
    for level, (st, q) in enumerate(zip(singles, ("10%", "50%", "90%"), strict=False)):
        if not math.isfinite(st["output_probability"]):
            print(f"metric, {q} claim level {st['claim']:.3g}: nothing stated (p = ∞)")
            continue
        hits = sum(hit for lv, hit in out if lv == level)
        c = claims[near[level]]
        print(
            f"metric, SanText |V| = {METRIC_SIZE}, m = {m:,}, T = {T:,}, K = {K}, {q} claim level "
            f"{st['claim']:.3g} (pairs' claims {c.min():.3g}–{c.max():.3g}), stated p = "
            f"{st['output_probability']:.3g} (+1 nat): flagged {_ci(hits, runs)}; {_judge(hits, runs)}"
        )
    print(f"  metric: {len(jobs)} audits on {workers} processes [{secs:.0f} s]")


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
        f"uniform, |V| = {size:,}, m = 200, stated Δ = {delta:.3g} nats: flagged {_ci(hits, runs)}; "
        f"{_judge(hits, runs)} [{time.perf_counter() - t0:.0f} s]"
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
        f"flagged {_ci(hits, runs)}; {_judge(hits, runs)} [{time.perf_counter() - t0:.0f} s]"
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
    ap.add_argument("--metric-runs", type=int, default=30)
    ap.add_argument("--false-alarm-runs", type=int, default=20)
    ap.add_argument("--workers", type=int, default=2, help="processes for the metric runs")
    args = ap.parse_args()
    print(
        f"# python bench/audit_power.py --runs {args.runs} --vocab-size {args.vocab_size} "
        f"--metric-runs {args.metric_runs} --false-alarm-runs {args.false_alarm_runs} "
        f"--workers {args.workers}"
    )
    print(
        '# rule: "power ≥ 0.9" is rejected when the one-sided binomial p-value '
        "Pr[Bin(runs, 0.9) ≤ flagged] < 0.05"
    )
    if args.metric_runs:
        metric(args.metric_runs, args.workers)
    if args.runs:
        power(args.runs, args.vocab_size)
    if args.false_alarm_runs:
        false_alarms(args.false_alarm_runs)


if __name__ == "__main__":
    main()
