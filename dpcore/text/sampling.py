"""Chunked, exact sampling from exponential-mechanism rows without a |V|×|V| matrix.

SanText (Yue et al. 2021, eq. 1) samples y with Pr[M(x)=y] = C_x·exp(−½·ε·d(x, y)). The paper
precomputes the full |V|×|V| matrix (§4.2); here only the rows of the *distinct* inputs present
are computed, a chunk of rows at a time so that memory stays below ``max_elements`` float64
values per chunk (plus a few temporaries of the same size).

Sampling is exact for the stated distribution up to float64 rounding:

1. log-weights ``−½·ε·d`` in float64, shifted by the row maximum (so the largest weight is
   exactly 1 and nothing underflows to an all-zero row, even at ε = 1000);
2. cumulative sums of the weights per row;
3. for each occurrence, a uniform u ∈ [0, 1) from the caller's generator, and the first column
   whose cumulative weight exceeds ``u·total``, found by a vectorised binary search over all
   occurrences of the chunk at once (``ceil(log2 |C|)`` numpy passes, no Python loop over
   tokens). Columns of zero probability are never returned.

The uniforms are drawn by the caller, one per token *position*, so results do not depend on the
chunk size.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

__all__ = [
    "DEFAULT_MAX_ELEMENTS",
    "distances",
    "first_exceeding",
    "iter_chunks",
    "log_weight_rows",
]

#: Default bound on float64 values in one chunk of rows (32 MiB).
DEFAULT_MAX_ELEMENTS = 1 << 22


def distances(
    vectors: np.ndarray,
    sq_norms: np.ndarray,
    rows: np.ndarray,
    cols: np.ndarray,
) -> np.ndarray:
    """Euclidean distances d(x, y) = ‖φ(x) − φ(y)‖₂ between ``rows`` and ``cols`` (ids), float64.

    Uses ‖a‖² + ‖b‖² − 2a·b (one matrix product), clipped at 0; entries where the row id equals
    the column id are set to exactly 0 (the diagonal of eq. 1).
    """
    a = vectors[rows]
    b = vectors[cols]
    d = a @ b.T
    d *= -2.0
    d += sq_norms[rows][:, None]
    d += sq_norms[cols][None, :]
    np.maximum(d, 0.0, out=d)
    np.sqrt(d, out=d)
    # exact zeros on the diagonal (x = y): locate each row id among the sorted column ids
    order = np.argsort(cols, kind="stable")
    pos = np.searchsorted(cols[order], rows)
    pos = np.minimum(pos, len(cols) - 1)
    hit = cols[order][pos] == rows
    if hit.any():
        d[np.flatnonzero(hit), order[pos[hit]]] = 0.0
    return d


def log_weight_rows(
    vectors: np.ndarray,
    sq_norms: np.ndarray,
    rows: np.ndarray,
    cols: np.ndarray,
    epsilon: float,
) -> np.ndarray:
    """Unnormalised log-weights ``−½·ε·d(x, y)`` of eq. (1) for ``rows`` × ``cols`` (float64)."""
    d = distances(vectors, sq_norms, rows, cols)
    d *= -0.5 * epsilon
    return d


def iter_chunks(n_rows: int, n_cols: int, max_elements: int = DEFAULT_MAX_ELEMENTS) -> Iterator[slice]:
    """Slices of ``range(n_rows)`` such that each chunk holds at most ``max_elements`` values."""
    step = max(1, int(max_elements) // max(1, n_cols))
    for start in range(0, n_rows, step):
        yield slice(start, min(n_rows, start + step))


def first_exceeding(cdf: np.ndarray, row: np.ndarray, target: np.ndarray) -> np.ndarray:
    """For each k, the first column j with ``cdf[row[k], j] > target[k]`` (vectorised).

    ``cdf`` rows must be non-decreasing and ``target[k] < cdf[row[k], -1]``. A binary search run
    in lock-step over all k: ``ceil(log2(n_cols)) + 1`` passes of numpy fancy indexing.
    """
    n_cols = cdf.shape[1]
    lo = np.zeros(len(row), dtype=np.int64)
    hi = np.full(len(row), n_cols - 1, dtype=np.int64)
    for _ in range(int(np.ceil(np.log2(max(n_cols, 2)))) + 1):
        active = lo < hi
        if not active.any():
            break
        mid = (lo + hi) // 2
        right = cdf[row, mid] <= target
        lo = np.where(active & right, mid + 1, lo)
        hi = np.where(active & ~right, mid, hi)
    return lo
