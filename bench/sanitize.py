"""Benchmark: SanText on ~600k real tokens with |V| = 15k GloVe words, and |V| = 400k.

Prints measured numbers only:

1. ``sanitize_lines`` (tokenize → ids → sample → detokenize) on about 600k tokens of the tweets and
   Lee corpora, repeated to size, with santext and santext+ (|V| = 15,000, ε = 3): wall time and
   peak memory (tracemalloc peak of the call; the process's max RSS from getrusage).
2. The paper's approach on a slice of the same token stream: the dense |V|×|V| probability
   matrix (only the rows the slice needs are built; the full matrix's size and build time are
   extrapolated from them, never allocated) and one ``np.random.choice(|V|, p=row)`` per token.
   Per-token time ratio against dpcore's chunked sampler on the same slice.
3. |V| = 400,000 (all of GloVe 6B): sanitize a few thousand tokens without a |V|² matrix.

Run: ``python bench/sanitize.py`` (about a minute on 2 cores).
"""

from __future__ import annotations

import resource
import sys
import time
import tracemalloc
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from dpcore.text import SanText, SanTextPlus
from dpcore.text.corpora import load_corpus
from dpcore.text.embeddings import load_tokenizer
from dpcore.text.sanitize import sanitize_lines
from dpcore.text.vocab import build_vocabulary

TARGET_TOKENS = 600_000
EPS = 3.0


def corpus_lines(target: int) -> list[str]:
    """Lines of the Lee and tweets corpora, repeated until they hold ``target`` GloVe tokens."""
    tok = load_tokenizer("glove")
    base = list(load_corpus("lee")) + list(load_corpus("tweets"))
    counts = np.array([len(tok.tokenize(x)) for x in base])
    reps = int(np.ceil(target / counts.sum()))
    lines = base * reps
    cum = np.cumsum(np.tile(counts, reps))
    return lines[: int(np.searchsorted(cum, target)) + 1]


def measure(fn, *args, **kwargs):
    tracemalloc.start()
    t0 = time.perf_counter()
    out = fn(*args, **kwargs)
    dt = time.perf_counter() - t0
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return out, dt, peak


def dense_reference(
    mech: SanText, ids: np.ndarray, rng: np.random.Generator
) -> tuple[np.ndarray, float, float]:
    """The paper's method (§4.2): dense probability rows, then np.random.choice per token."""
    vec = mech.vocab.vectors
    uniq = np.unique(ids)
    t0 = time.perf_counter()
    rows = {}
    for x in uniq:  # one row of the |V|×|V| matrix per distinct token of the slice
        d = np.linalg.norm(vec - vec[x], axis=1)
        w = np.exp(-0.5 * mech.epsilon * d)
        rows[int(x)] = w / w.sum()
    t_rows = time.perf_counter() - t0
    n_v = len(mech.vocab)
    t0 = time.perf_counter()
    out = np.array([rng.choice(n_v, p=rows[int(x)]) for x in ids])
    t_sample = time.perf_counter() - t0
    return out, t_rows / len(uniq), t_sample


def main() -> None:
    print(f"python {sys.version.split()[0]}, numpy {np.__version__}")
    t0 = time.perf_counter()
    vocab = build_vocabulary("glove", size=15_000)
    print(f"load GloVe + build |V| = {len(vocab):,}: {time.perf_counter() - t0:.2f} s")
    lines = corpus_lines(TARGET_TOKENS)

    print(f"\n1. sanitize_lines, ε = {EPS:g}, |V| = {len(vocab):,}")
    for mech in (SanText(vocab=vocab, epsilon=EPS), SanTextPlus(vocab=vocab, epsilon=EPS, p=0.3, w=0.9)):
        sanitize_lines(lines[:200], mech, seed=0)  # warm-up
        t0 = time.perf_counter()
        res = sanitize_lines(lines, mech, seed=0)
        dt = time.perf_counter() - t0
        _, _, peak = measure(sanitize_lines, lines, mech, seed=0)
        s = res.summary()
        print(
            f"   {mech.name:<9} {s['tokens']:,} tokens in {len(lines):,} lines: {dt:.2f} s "
            f"({1e6 * dt / s['tokens']:.2f} µs/token), replaced {s['replaced'] / s['tokens']:.1%}, "
            f"OOV {s['oov']:,}; tracemalloc peak {peak / 2**20:.0f} MiB"
        )
    tok = load_tokenizer("glove")
    ids_all = vocab.ids([t for line in lines for t in tok.tokenize(line)])
    ids_all = ids_all[ids_all >= 0]
    mech = SanText(vocab=vocab, epsilon=EPS)
    _, dt, peak = measure(mech.sample_ids, ids_all, np.random.default_rng(1))
    print(
        f"   sample_ids alone: {ids_all.size:,} in-vocabulary tokens, {np.unique(ids_all).size:,} distinct: "
        f"{dt:.2f} s, tracemalloc peak {peak / 2**20:.0f} MiB"
    )

    print("\n2. dense |V|×|V| matrix + np.random.choice per token (the paper's method), on a slice")
    sl = ids_all[:5_000]
    t0 = time.perf_counter()
    mech.sample_ids(sl, np.random.default_rng(2))
    ours = time.perf_counter() - t0
    _, per_row, t_choice = dense_reference(mech, sl, np.random.default_rng(2))
    n_v = len(vocab)
    full_per_tok = dt / ids_all.size
    print(f"   slice: {sl.size:,} tokens, {np.unique(sl).size:,} distinct")
    print(
        f"   dpcore on the slice (rows included): {ours:.3f} s ({1e6 * ours / sl.size:.1f} µs/token); "
        f"on the full run: {1e6 * full_per_tok:.2f} µs/token (rows included)"
    )
    print(
        f"   dense: np.random.choice loop {t_choice:.3f} s ({1e6 * t_choice / sl.size:.1f} µs/token, "
        "matrix rows excluded)"
    )
    print(
        f"   per-token ratio dense/dpcore: {t_choice / ours:.1f}× on the slice, "
        f"{t_choice / sl.size / full_per_tok:.1f}× against the full run"
    )
    print(
        f"   full dense matrix for |V| = {n_v:,}: {n_v * n_v * 8 / 2**30:.2f} GiB float64, "
        f"build ≈ {per_row * n_v:.1f} s (measured {1e3 * per_row:.2f} ms/row) — not allocated here"
    )
    print(
        f"   dense sampling of all {ids_all.size:,} tokens ≈ {t_choice / sl.size * ids_all.size:.0f} s "
        f"(extrapolated from the slice)"
    )

    print("\n3. |V| = all of GloVe 6B, no |V|² matrix")
    t0 = time.perf_counter()
    big = build_vocabulary("glove")
    print(f"   build |V| = {len(big):,}: {time.perf_counter() - t0:.2f} s")
    few = lines[:150]
    res, dt, peak = measure(sanitize_lines, few, SanText(vocab=big, epsilon=EPS), seed=0)
    s = res.summary()
    n_distinct = len({t for ts in res.original_tokens for t in ts})
    print(
        f"   santext: {s['tokens']:,} tokens ({n_distinct:,} distinct) in {dt:.2f} s, "
        f"tracemalloc peak {peak / 2**20:.0f} MiB "
        f"(a dense matrix would need {len(big) ** 2 * 8 / 2**40:.2f} TiB)"
    )
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**10
    print(f"\nprocess max RSS (everything above, embeddings included): {rss:.0f} MiB")


if __name__ == "__main__":
    main()
