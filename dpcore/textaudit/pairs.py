"""Which pairs of words to test.

Metric guarantees are tightest where words are close, so the nearest neighbours in the
embedding come first; random pairs cover the rest of the space. The adaptive strategy of
:func:`dpcore.textaudit.runner.audit_text` ranks a larger pool of both kinds on a cheap pilot
pass and confirms the most promising on fresh samples.
"""

from __future__ import annotations

import hashlib
import weakref
from typing import Any

import numpy as np

from dpcore.text.sampling import iter_chunks
from dpcore.text.vocab import Vocabulary
from dpcore.topk import smallest_k

__all__ = ["STRATEGIES", "candidate_pairs", "nearest_neighbors", "random_pairs", "unique_pairs"]

STRATEGIES = ("screen", "adaptive", "neighbors", "random")


def nearest_neighbors(
    vocab: Vocabulary,
    ids: np.ndarray,
    k: int,
    *,
    among: np.ndarray | None = None,
    max_elements: int = 1 << 22,
    workers: int = 1,
) -> np.ndarray:
    """The ``k`` nearest other words of each id (Euclidean), shape ``(len(ids), k)``, chunked over ids.

    ``among`` restricts the neighbours to those ids (default: the whole vocabulary). Candidates
    come from a float32 GEMM (half the time of float64 at |V| = 50,000), the k + 4 best of each
    row are then ranked by their exact float64 distances (ties: the smaller position in ``among``).
    ``workers`` threads share the chunks (NumPy's GEMM and partition release the GIL; BLAS is
    kept to one thread each). The result does not depend on ``workers`` or the chunking.
    """
    ids = np.asarray(ids, dtype=np.int64)
    pool = np.arange(len(vocab)) if among is None else np.asarray(among, dtype=np.int64)
    k = min(k, len(pool) - 1)
    out = np.empty((len(ids), k), dtype=np.int64)
    if k <= 0:
        return out
    vec = vocab.vectors
    key = _cache_key(vec, ids, among, k)
    if key is not None and key in _NN_CACHE:
        ref, cached = _NN_CACHE[key]
        if ref() is vec:
            return cached.copy()
    pv = vec if among is None else vec[pool]
    pv32 = pv.astype(np.float32)
    m2 = np.ascontiguousarray(-2.0 * pv32.T)  # ranking per row needs ‖p‖² − 2 r·p only
    psq32 = np.einsum("ij,ij->i", pv32, pv32)
    pos_in_pool = np.full(len(vocab), -1, dtype=np.int64)
    pos_in_pool[pool] = np.arange(len(pool))
    kk = min(k + 4, len(pool))

    def one(sl: slice) -> None:
        rows = ids[sl]
        d = vec[rows].astype(np.float32) @ m2
        d += psq32[None, :]
        own = pos_in_pool[rows]
        has = np.flatnonzero(own >= 0)
        d[has, own[has]] = np.inf  # never pair a word with itself
        part = smallest_k(d, kk)  # ties by position: the same on every processor
        del d
        diff = vec[rows][:, None, :] - pv[part]
        exact = np.einsum("ijk,ijk->ij", diff, diff)
        exact[pool[part] == rows[:, None]] = np.inf
        order = np.lexsort((part, exact), axis=1)[:, :k]
        out[sl] = pool[np.take_along_axis(part, order, axis=1)]

    chunks = list(iter_chunks(len(ids), len(pool), max_elements))
    if workers <= 1 or len(chunks) == 1:
        for sl in chunks:
            one(sl)
    else:
        from concurrent.futures import ThreadPoolExecutor

        from dpcore.blas import one_blas_thread

        with one_blas_thread(), ThreadPoolExecutor(max_workers=workers) as pool_ex:
            list(pool_ex.map(one, chunks))
    if key is not None:
        while len(_NN_CACHE) >= _NN_CACHE_SIZE:
            _NN_CACHE.pop(next(iter(_NN_CACHE)))
        _NN_CACHE[key] = (weakref.ref(vec), out.copy())
    return out


#: Recent :func:`nearest_neighbors` results (an audit asks the same ones again for every seed,
#: and the dashboard on every rerun): key → (weak reference to the vectors, neighbours).
_NN_CACHE: dict[tuple[Any, ...], tuple[weakref.ref, np.ndarray]] = {}
_NN_CACHE_SIZE = 8


def _cache_key(vec: np.ndarray, ids: np.ndarray, among: np.ndarray | None, k: int) -> tuple[Any, ...] | None:
    """A key for read-only vectors (their identity, checked through a weak reference on use) and
    the exact ids, pool and k; None (no caching) when the vectors can still change."""
    if vec.flags.writeable:
        return None
    h = hashlib.blake2b(np.ascontiguousarray(ids).tobytes(), digest_size=16)
    h.update(b"|" if among is None else np.ascontiguousarray(among, dtype=np.int64).tobytes())
    return (id(vec), vec.shape, len(ids), k, h.hexdigest())


def unique_pairs(pairs: np.ndarray) -> np.ndarray:
    """Unordered pairs without repeats or self-pairs, first occurrence order kept."""
    pairs = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
    pairs = pairs[pairs[:, 0] != pairs[:, 1]]
    key = np.sort(pairs, axis=1)
    _, first = np.unique(key, axis=0, return_index=True)
    return pairs[np.sort(first)]


def random_pairs(n_vocab: int, n: int, rng: np.random.Generator) -> np.ndarray:
    """``n`` uniform pairs of distinct ids."""
    x = rng.integers(0, n_vocab, size=n)
    y = (x + rng.integers(1, n_vocab, size=n)) % n_vocab
    return np.stack([x, y], axis=1)


def candidate_pairs(
    vocab: Vocabulary,
    *,
    strategy: str,
    n_pairs: int,
    rng: np.random.Generator,
    word_ids: np.ndarray | None = None,
    neighbors: int = 2,
) -> np.ndarray:
    """Candidate pairs (ids) for a strategy.

    With ``word_ids``: every pair among them (up to ``4·n_pairs``) and each with its
    ``neighbors`` nearest words. Without: ``n_pairs`` random words with their nearest neighbours
    (``neighbors``) and/or ``n_pairs`` random pairs, by strategy (``adaptive`` takes both).
    """
    parts: list[np.ndarray] = []
    if word_ids is not None:
        w = np.asarray(word_ids, dtype=np.int64)
        if len(w) >= 2:
            i, j = np.triu_indices(len(w), k=1)
            parts.append(np.stack([w[i], w[j]], axis=1)[: 4 * n_pairs])
        if neighbors > 0:
            nn = nearest_neighbors(vocab, w, neighbors)
            parts.append(np.stack([np.repeat(w, nn.shape[1]), nn.ravel()], axis=1))
    else:
        if strategy in ("adaptive", "neighbors"):
            base = rng.choice(len(vocab), size=min(n_pairs, len(vocab)), replace=False)
            nn = nearest_neighbors(vocab, base, max(1, neighbors))
            parts.append(np.stack([np.repeat(base, nn.shape[1]), nn.ravel()], axis=1))
        if strategy in ("adaptive", "random"):
            parts.append(random_pairs(len(vocab), n_pairs, rng))
    return unique_pairs(np.concatenate(parts) if parts else np.zeros((0, 2), dtype=np.int64))
