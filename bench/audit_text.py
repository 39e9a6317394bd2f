"""Benchmark the black-box text audit (prints measured figures; not a test).

    python bench/audit_text.py

From one run, on SanText over GloVe at |V| = 15,000, ε = 1:

1. 10⁶ draws of M(x) for one word, through the id fast path of dpcore's own mechanisms and
   through the generic black-box path (strings in, strings out, as any third-party sanitizer);
   samples per second of each and their ratio;
2. a 50-pair adaptive audit at 10⁵ samples per word (pilot included): seconds, draws, peak RSS;
3. a naive reference in the style of the published samplers (one ``rng.choice(p=row)`` per
   draw), timed on fewer draws and scaled, and the speed ratio against (1).

Targets (issue "Audit any text sanitizer"): (1) under 2 s, (2) under 60 s on this 2-core machine.
"""

from __future__ import annotations

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
from dpcore.textaudit.sampling import OutputCodebook, draw_counts


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
    print(f"load average: {os.getloadavg()[0]:.2f} (2 cores; figures scale with contention)")
    vocab = build_vocabulary("glove", size=15_000)
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
    res = audit_text(fast, vocab=vocab, pairs=50, samples=100_000, seed=0)
    t_audit = time.perf_counter() - t0
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print("2. 50-pair adaptive audit, 10^5 samples per word (pilot 10^4 per candidate word):")
    print(
        f"   {t_audit:.1f} s, {res.samples_drawn:,} draws ({res.samples_drawn / t_audit:,.0f}/s), "
        f"peak RSS {rss:.0f} MiB; verdict {res.verdict}, exact {res.exact_verdict}  target < 60 s"
    )


if __name__ == "__main__":
    main()
