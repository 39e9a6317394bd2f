"""Benchmark: dpcore.logspace.logsumexp against scipy.special.logsumexp, in one run.

Both reduce the same float64 blocks of exponential-mechanism scores (rows × |V|, the shape every
``log_prob`` normalises); the values agree to rounding (``tests/test_logspace.py``). Also times
the Sanitize page's per-token metrics (``token_metrics``: 25 words, santext+ over GloVe
|V| = 15,000, ε = 2, S_y* over 2,000 inputs) with each implementation.

Run: ``python bench/logsumexp.py`` (about 20 s).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
from scipy.special import logsumexp as scipy_logsumexp

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a fresh clone

import dpcore.text.mechanisms as mechanisms
from dpcore.logspace import logsumexp


def _best(fn: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def main() -> None:
    rng = np.random.default_rng(0)
    print("| block (rows × |V|) | scipy | dpcore | scipy / dpcore |")
    print("|---|---|---|---|")
    for rows, cols in [(100, 15_000), (25, 30_522), (2_000, 400)]:
        a = -rng.gamma(2.0, 5.0, size=(rows, cols))
        ts = _best(lambda a=a: scipy_logsumexp(a, axis=1), 10)
        td = _best(lambda a=a: logsumexp(a, axis=1), 10)
        print(f"| {rows} × {cols:,} | {1e3 * ts:.1f} ms | {1e3 * td:.1f} ms | {ts / td:.2f} |")

    from dpcore.text import create_text_mechanism
    from dpcore.text.metrics import token_metrics
    from dpcore.text.vocab import build_vocabulary

    vocab = build_vocabulary("glove", size=15_000)
    mech = create_text_mechanism("santext+", vocab=vocab, epsilon=2.0)
    words = list(vocab.words[100:125])

    def metrics() -> object:
        return token_metrics(mech, words, seed=0, population=2000)

    metrics()  # warm-up (candidate tables)
    td = _best(metrics, 3)

    def scipy_reduction(a, axis=None, *, keepdims=False, overwrite=False):  # type: ignore[no-untyped-def]
        return scipy_logsumexp(a, axis=axis, keepdims=keepdims)

    mechanisms.logsumexp = scipy_reduction  # the same code path with SciPy's reduction
    try:
        ts = _best(metrics, 3)
    finally:
        mechanisms.logsumexp = logsumexp
    print(f"\ntoken_metrics (Sanitize page, 25 words, |V| = 15,000): scipy {ts:.2f} s, dpcore {td:.2f} s, "
          f"ratio {ts / td:.2f}")


if __name__ == "__main__":
    main()
