"""The nearest-word step of the noise-plus-nearest-word mechanisms, exact in float64.

Every mechanism of this family ends with "output the word nearest to the noisy point ψ"
(Feyisetan et al. 2020, §3; Xu et al. 2020, Algorithm 1) or "the nearest or the second-nearest"
(Xu et al. 2021, Algorithm 1). That search is one matrix product per block of points. It runs in
float32, which is twice as fast as float64 on BLAS, and every decision is then certified or
redone in float64 (:func:`nearest_k`): the ids are exactly those of :func:`nearest_reference`.

Users: :class:`~dpcore.text.mechanisms.Feyisetan`, :class:`~dpcore.text.mahalanobis.Mahalanobis`,
the Vickrey mechanisms (:mod:`dpcore.text.vickrey`) and the fenced reproductions in
:mod:`dpcore.flawed.text`. :func:`decode_in_chunks` draws and decodes :data:`POSITION_CHUNK`
positions at a time, so that memory is bounded and the draws do not depend on batching.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpcore.text.vocab import Vocabulary
from dpcore.validation import DPCoreError

__all__ = [
    "NEAREST_BLOCK_ELEMENTS",
    "NEAREST_MAX_WORKERS",
    "POSITION_CHUNK",
    "decode_in_chunks",
    "exact_sq_distances",
    "nearest",
    "nearest_k",
    "nearest_reference",
    "nearest_two",
    "nearest_workers",
]

#: Positions whose noisy points are drawn and decoded at a time (bounds memory for any input
#: length; fixed, so results do not depend on how the input is batched).
POSITION_CHUNK = 1 << 15


def decode_in_chunks(
    ids: np.ndarray,
    noisy_points: Callable[[np.ndarray, np.random.Generator], np.ndarray],
    decode: Callable[[np.ndarray, np.random.Generator], np.ndarray],
    rng: np.random.Generator,
) -> np.ndarray:
    """``decode(noisy_points(ids))`` over :data:`POSITION_CHUNK` positions at a time (bounded
    memory; a fixed chunk, so the draws do not depend on how callers batch their input)."""
    out = np.empty(ids.size, dtype=np.int64)
    for start in range(0, ids.size, POSITION_CHUNK):
        part = ids[start : start + POSITION_CHUNK]
        out[start : start + part.size] = decode(noisy_points(part, rng), rng)
    return out


#: float32 scores per block of the nearest-word search (8 MiB per worker thread; 139 rows of
#: GloVe |V| = 15,000). Measured on 2 cores (feyisetan and vickrey-cmp, |V| = 15,000): 2¹⁹ was
#: 7–25 % slower (Python work per block), 2²² no faster.
NEAREST_BLOCK_ELEMENTS = 1 << 21

#: At most this many worker threads decode blocks at once (each with single-threaded BLAS).
NEAREST_MAX_WORKERS = 8

#: Unit roundoffs of float32 and float64 (Higham 2002, §2.1).
_U32 = 2.0**-24
_U64 = 2.0**-53

#: Candidate (point, word) pairs re-checked in float64 at once for the uncertified rows of a block;
#: rows beyond it (points equidistant from thousands of words) go to :func:`nearest_reference`.
_MAX_RECHECK_PAIRS = 1 << 16


def _gamma(n: int, u: float) -> float:
    """γ_n = n·u / (1 − n·u) (Higham 2002, eq. 3.8)."""
    return n * u / (1.0 - n * u)


@dataclass(frozen=True, eq=False)
class _Decoder:
    """A vocabulary prepared for the float32 search: the (m + 1) × |V| matrix whose column j is
    (−2·φ(v_j), ‖φ(v_j)‖²), so that [ψ, 1] · column j = ‖v_j‖² − 2ψ·v_j = ‖ψ − v_j‖² − ‖ψ‖² in one
    product; and max ‖v‖, max ‖v‖² for the error bound."""

    vocab: Vocabulary
    cols32: np.ndarray
    vmax: float
    sqmax: float


_DECODERS: dict[int, _Decoder] = {}


def _decoder(vocab: Vocabulary) -> _Decoder:
    hit = _DECODERS.get(id(vocab))
    if hit is not None and hit.vocab is vocab:
        return hit
    v = np.asarray(vocab.vectors, dtype=np.float64)
    m = v.shape[1]
    sq = np.einsum("ij,ij->i", v, v)
    cols = np.empty((m + 1, v.shape[0]), dtype=np.float32)
    cols[:m] = (-2.0 * v).T  # ×(−2) is exact: rounding to float32 is the only error here
    cols[m] = sq
    # upper bounds on max ‖v‖ and max ‖v‖² (the 1e-12 covers float64 rounding of the norms)
    dec = _Decoder(vocab, cols, float(np.sqrt(sq.max())) * (1 + 1e-12), float(sq.max()) * (1 + 1e-12))
    if len(_DECODERS) > 8:
        _DECODERS.clear()
    _DECODERS[id(vocab)] = dec
    return dec


#: Rows of :func:`exact_sq_distances` summed at a time (2,048 × 50 float64 = 800 KiB: the
#: transposed block stays in cache; one pass over all rows was 2–4× slower from 30,000 rows on).
_EXACT_ROWS = 2048


def exact_sq_distances(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """‖a_i − b_i‖² for paired rows, float64, as Σ_k (a_ik − b_ik)² summed in order of k.

    Every operation is one correctly rounded float64 ``−``, ``×`` or ``+`` in a fixed order, so a
    pair's value does not depend on which other pairs are computed with it (unlike a BLAS
    product, whose blocking may differ with the shape). This is the float64 distance that
    :func:`nearest_k` and :func:`nearest_reference` decide on.
    """
    a, b = np.broadcast_arrays(np.asarray(a), np.asarray(b))
    out = np.empty(a.shape[0], dtype=np.float64)
    for s in range(0, a.shape[0], _EXACT_ROWS):  # blocks of rows that stay in cache
        d = np.subtract(a[s : s + _EXACT_ROWS], b[s : s + _EXACT_ROWS], dtype=np.float64)
        d *= d
        dt = np.ascontiguousarray(d.T)
        acc = out[s : s + dt.shape[1]]
        acc[:] = dt[0]
        for k in range(1, dt.shape[0]):  # over the m embedding dimensions, not tokens
            acc += dt[k]
    return out


def _order_rows(ids: np.ndarray, d2: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Sort each row of (ids, d2) by (d2, id)."""
    if ids.shape[1] == 1:
        return ids, d2
    o = np.argsort(ids, axis=1)
    ids, d2 = np.take_along_axis(ids, o, axis=1), np.take_along_axis(d2, o, axis=1)
    o = np.argsort(d2, axis=1, kind="stable")
    return np.take_along_axis(ids, o, axis=1), np.take_along_axis(d2, o, axis=1)


def nearest_reference(points: np.ndarray, vocab: Vocabulary, k: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """The k nearest words to each point by :func:`exact_sq_distances` over all of V (ties to
    the lower id): ``(ids, squared distances)``, each of shape (n, k).

    The definition :func:`nearest_k` must match exactly; used by the tests and for the rare
    points the fast search cannot certify cheaply. One point at a time (chunks of V bound memory),
    so slow: not for hot paths.
    """
    points = np.asarray(points, dtype=np.float64)
    v = np.asarray(vocab.vectors, dtype=np.float64)
    n_v, m = v.shape
    step = max(1, (1 << 20) // max(1, m))
    ids = np.empty((points.shape[0], k), dtype=np.int64)
    d2 = np.empty((points.shape[0], k))
    for i, p in enumerate(points):  # reference path: one point at a time
        d = np.concatenate(
            [
                exact_sq_distances(np.broadcast_to(p, (min(step, n_v - s), m)), v[s : s + step])
                for s in range(0, n_v, step)
            ]
        )
        top = np.lexsort((np.arange(n_v), d))[:k]
        ids[i], d2[i] = top, d[top]
    return ids, d2


_BLAS_LOCK = threading.Lock()
_BLAS_STATE: dict[str, Any] = {"users": 0, "limiter": None, "controller": None}


def nearest_workers() -> int:
    """Worker threads for the search: as many as BLAS would use threads (so a process limited
    to one BLAS thread stays on one core), at most :data:`NEAREST_MAX_WORKERS`; 1 without
    threadpoolctl."""
    ctl = _BLAS_STATE["controller"]
    if ctl is None:
        from dpcore.blas import blas_controller

        whole = blas_controller()
        if whole is None:  # pragma: no cover - threadpoolctl comes with scikit-learn
            return 1
        ctl = _BLAS_STATE["controller"] = whole.select(user_api="blas")
    with _BLAS_LOCK:
        if _BLAS_STATE["users"]:  # another search is running: BLAS shows its limit of 1
            return int(_BLAS_STATE["workers"])
        threads = [int(i.get("num_threads") or 1) for i in ctl.info()]
    return max(1, min(NEAREST_MAX_WORKERS, max(threads, default=1)))


@contextmanager
def _single_threaded_blas(workers: int) -> Iterator[None]:
    """BLAS limited to one thread while the search's own workers run (process-wide; counted, so
    that concurrent searches restore the original limits only when the last one ends).

    OpenBLAS's own threads synchronise on every product; on a loaded machine one descheduled
    thread stalls each small product by a scheduler time slice (measured on 2 shared cores:
    8–26× slower). Each worker running single-threaded products on its own blocks has no such
    barrier.
    """
    with _BLAS_LOCK:
        if _BLAS_STATE["users"] == 0:
            _BLAS_STATE["limiter"] = _BLAS_STATE["controller"].limit(limits=1)
            _BLAS_STATE["workers"] = workers
        _BLAS_STATE["users"] += 1
    try:
        yield
    finally:
        with _BLAS_LOCK:
            _BLAS_STATE["users"] -= 1
            if _BLAS_STATE["users"] == 0:
                _BLAS_STATE["limiter"].restore_original_limits()
                _BLAS_STATE["limiter"] = None


def nearest_k(
    points: np.ndarray, vocab: Vocabulary, k: int = 1, *, max_elements: int = NEAREST_BLOCK_ELEMENTS
) -> tuple[np.ndarray, np.ndarray]:
    """The k nearest words to each point (Euclidean), exactly as :func:`nearest_reference`.

    Returns ``(ids, d2)`` of shape (n, k): ids sorted by float64 squared distance
    (:func:`exact_sq_distances`), ties to the lower id, and those squared distances.

    **Search.** Per block of points one float32 product [ψ, 1] · (−2φ(v), ‖φ(v)‖²)ᵀ gives
    s_j = ‖v_j‖² − 2ψ·v_j = ‖ψ − v_j‖² − ‖ψ‖² for every word, then k + 1 ``argmin`` passes give
    the k smallest and the (k + 1)-th smallest score (the guard). No |V|-sized temporary beyond
    the block; blocks run on worker threads, each with single-threaded BLAS.

    **Certification.** By the standard inner-product bound (Higham 2002, *Accuracy and Stability
    of Numerical Algorithms*, §3.1, eq. 3.5: |fl(xᵀy) − xᵀy| ≤ γ_n·|x|ᵀ|y|), plus the rounding of
    ψ, φ(v) and ‖φ(v)‖² to float32, every float32 score is within
    E₃₂ = γ_{m+8}(u₃₂)·(2‖ψ‖·max‖v‖ + max‖v‖²) of the exact s_j; every float64 distance of
    :func:`exact_sq_distances` is within E₆₄ = γ_{m+8}(u₆₄)·(‖ψ‖ + max‖v‖)² of the exact one
    (both with a 1 % margin). A word among the reference's k nearest then has a float32 score
    ≤ (k-th smallest) + 2E₃₂ + 2E₆₄. If the guard exceeds the k-th smallest by more than that,
    the float32 top k *is* the reference's top k (only their order is left, taken from float64
    distances). Otherwise (about 0.1 % of GloVe points) every word within that margin is
    re-ranked by its float64 distance, which gives the reference's answer again.

    Parameters
    ----------
    points
        (n, m) noisy points ψ.
    vocab
        The vocabulary V (|V| ≥ k).
    k
        How many nearest words (1 for Feyisetan et al. and Xu et al. 2020, 2 for Vickrey).
    max_elements
        float32 scores per block (one block per worker thread at a time).
    """
    points = np.asarray(points, dtype=np.float64)
    n, m = points.shape
    dec = _decoder(vocab)
    vec = np.asarray(vocab.vectors, dtype=np.float64)
    n_v = vec.shape[0]
    if not 1 <= k <= n_v:
        raise DPCoreError(f"k must lie in [1, |V|] = [1, {n_v}]")
    ids = np.empty((n, k), dtype=np.int64)
    d2 = np.empty((n, k))
    if n == 0:
        return ids, d2
    pn = np.sqrt(np.einsum("ij,ij->i", points, points)) * (1 + 1e-12)
    e32 = _gamma(m + 8, _U32) * (2.0 * pn * dec.vmax + dec.sqmax) * 1.01
    e64 = _gamma(m + 8, _U64) * (pn + dec.vmax) ** 2 * 1.01
    # the absolute term covers float32 underflow (inputs below 2⁻¹²⁶ flushed to zero)
    tol = 2.0 * (e32 + e64) + 1e-30 * (1.0 + dec.vmax + dec.sqmax)
    # outside float32's safe range (not reached for ε ≥ 1e-6 and real embeddings): the reference
    hopeless = ~np.isfinite(pn) | (pn * dec.vmax > 1e30) | (dec.sqmax > 1e30)
    # a block never holds more rows than there are points (a few points need no 8 MiB buffers)
    rows = min(n, max(1, min(int(max_elements), NEAREST_BLOCK_ELEMENTS) // n_v))
    blocks = iter(range(0, n, rows))

    def search() -> None:
        pa = np.ones((rows, m + 1), dtype=np.float32)
        scores = np.empty((rows, n_v), dtype=np.float32)
        for s in blocks:  # blocks are shared by the workers (next() is atomic under the GIL)
            b = min(rows, n - s)
            pa[:b, :m] = points[s : s + b]
            sc = np.matmul(pa[:b], dec.cols32, out=scores[:b])
            r = np.arange(b)
            cols = np.empty((b, k), dtype=np.int64)
            vals = np.empty((b, k), dtype=np.float32)
            for i in range(k):  # k + 1 argmin passes, no |V|-sized temporary
                j = sc.argmin(axis=1)
                cols[:, i], vals[:, i] = j, sc[r, j]
                sc[r, j] = np.inf
            guard = sc.min(axis=1).astype(np.float64) if n_v > k else np.full(b, np.inf)
            ids[s : s + b] = cols
            bad = ~(guard - vals[:, k - 1] > tol[s : s + b]) | hopeless[s : s + b]
            if bad.any():
                for i in range(k):
                    sc[r, cols[:, i]] = vals[:, i]
                _recheck(s, np.flatnonzero(bad), sc, vals[:, k - 1])
            # float64 distances of the k chosen words, then their order by (distance, id)
            got = ids[s : s + b]
            dist = exact_sq_distances(np.repeat(points[s : s + b], k, axis=0), vec[got.ravel()])
            ids[s : s + b], d2[s : s + b] = _order_rows(got, dist.reshape(b, k))

    def _recheck(s: int, bi: np.ndarray, sc: np.ndarray, kth: np.ndarray) -> None:
        """Re-rank every word within 2E₃₂ + 2E₆₄ of the k-th score by float64 distance."""
        ok = ~hopeless[s + bi]
        thr = kth[bi].astype(np.float64) + tol[s + bi]
        within = (sc[bi] <= thr[:, None]) & ok[:, None]
        counts = within.sum(axis=1)
        slow = ~ok | (np.cumsum(counts) > _MAX_RECHECK_PAIRS)
        if slow.any():
            ids[s + bi[slow]] = nearest_reference(points[s + bi[slow]], vocab, k)[0]
        fast = np.flatnonzero(~slow)
        if fast.size:
            rr, cc = np.nonzero(within[fast])
            d = exact_sq_distances(points[s + bi[fast[rr]]], vec[cc])
            o = np.lexsort((cc, d, rr))
            first = np.searchsorted(rr[o], np.arange(fast.size))
            ids[s + bi[fast]] = cc[o][first[:, None] + np.arange(k)]

    workers = min(nearest_workers(), -(-n // rows))
    if workers > 1:
        with _single_threaded_blas(workers), ThreadPoolExecutor(workers) as pool:
            for f in [pool.submit(search) for _ in range(workers)]:
                f.result()
    else:
        search()
    return ids, d2


def nearest(points: np.ndarray, vocab: Vocabulary) -> np.ndarray:
    """Id of the nearest word (Euclidean) to each point; ties to the lower id (:func:`nearest_k`)."""
    return nearest_k(points, vocab, 1)[0][:, 0]


def nearest_two(
    points: np.ndarray, vocab: Vocabulary
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Ids and Euclidean distances of the nearest and second-nearest words to each point.

    Returns ``(first, second, d_first, d_second)`` (:func:`nearest_k` with k = 2; float64
    distances).
    """
    ids, d2 = nearest_k(points, vocab, 2)
    dist = np.sqrt(d2)
    return ids[:, 0], ids[:, 1], dist[:, 0], dist[:, 1]
