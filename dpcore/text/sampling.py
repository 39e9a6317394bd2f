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

The text audit, which draws thousands of outputs of every word of V, computes its rows a block
of words at a time instead (:class:`dpcore.text.mechanisms.RowBlocks`): one product of a fixed
height (:func:`product_rows`) per block, each row then finished by :func:`weight_row` (the
same steps as above on one row, up to the weights) and searched in two levels: the running
totals of its blocks of :data:`SEARCH_BLOCK` columns (:func:`block_ends`), then the running sums
inside the one block each draw falls in (:func:`search_blocks`), so that no row is summed in
full for a thousand draws.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

__all__ = [
    "DEFAULT_MAX_ELEMENTS",
    "PRODUCT_BYTES",
    "PRODUCT_MAX_ROWS",
    "SEARCH_BLOCK",
    "Candidates",
    "block_ends",
    "cumulative_weights",
    "distances",
    "first_exceeding",
    "iter_chunks",
    "log_weight_rows",
    "pair_distances",
    "product_rows",
    "search_blocks",
    "weight_row",
]

#: Default bound on float64 values in one chunk of rows (8 MiB; a few temporaries of that size
#: live at once). Larger chunks measured no faster for the exponential mechanism.
DEFAULT_MAX_ELEMENTS = 1 << 20


def distances(
    row_vecs: np.ndarray,
    row_sq: np.ndarray,
    cand_vecs: np.ndarray,
    cand_sq: np.ndarray,
    diag_col: np.ndarray,
) -> np.ndarray:
    """Euclidean distances d(x, y) = ‖φ(x) − φ(y)‖₂ between rows and candidates, float64.

    Uses ‖a‖² + ‖b‖² − 2a·b (one matrix product), clipped at 0. ``diag_col[i]`` is the column of
    row i's own word among the candidates (−1 if absent); that entry is set to exactly 0 (the
    diagonal of eq. 1, so Pr[M(x)=x] carries the largest weight exactly).
    """
    d = row_vecs @ cand_vecs.T
    d *= -2.0
    d += row_sq[:, None]
    d += cand_sq[None, :]
    np.maximum(d, 0.0, out=d)
    np.sqrt(d, out=d)
    hit = np.flatnonzero(diag_col >= 0)
    if hit.size:
        d[hit, diag_col[hit]] = 0.0
    return d


@dataclass(frozen=True, eq=False)
class Candidates:
    """The output set C of an exponential mechanism, prepared once: ids, vectors, squared norms
    and, for every word of V, its column in C (−1 if absent)."""

    ids: np.ndarray
    vecs: np.ndarray
    sq: np.ndarray
    column_of: np.ndarray

    @classmethod
    def build(cls, vectors: np.ndarray, sq_norms: np.ndarray, ids: np.ndarray) -> Candidates:
        ids = np.asarray(ids, dtype=np.int64)
        full = ids.size == vectors.shape[0] and np.array_equal(ids, np.arange(ids.size))
        vecs = vectors if full else vectors[ids]  # no copy when C = V
        sq = sq_norms if full else sq_norms[ids]
        column_of = np.full(vectors.shape[0], -1, dtype=np.int64)
        column_of[ids] = np.arange(ids.size)
        return cls(ids, vecs, sq, column_of)


def log_weight_rows(
    vectors: np.ndarray,
    sq_norms: np.ndarray,
    rows: np.ndarray,
    cand: Candidates,
    epsilon: float,
    truncate: float = np.inf,
) -> np.ndarray:
    """Unnormalised log-weights ``−½·ε·min(d(x, y), truncate)`` for ``rows`` (ids) × C (float64).

    ``truncate = ∞`` is eq. (1) of Yue et al. (2021); a finite ``truncate = γ`` gives the
    Truncated Exponential Mechanism's distribution (:mod:`dpcore.text.tem`).
    """
    d = distances(vectors[rows], sq_norms[rows], cand.vecs, cand.sq, cand.column_of[rows])
    if np.isfinite(truncate):
        np.minimum(d, truncate, out=d)
    d *= -0.5 * epsilon
    return d


#: Memory cap of one fixed-height distance product (:func:`product_rows` rows × |C| float64).
PRODUCT_BYTES = 64 << 20
#: Most rows of one fixed-height product (per row, a product of 64 rows was as fast as of more).
PRODUCT_MAX_ROWS = 64


def product_rows(n_cols: int, max_bytes: int = PRODUCT_BYTES) -> int:
    """Height G of every distance product over ``n_cols`` candidates: a multiple of 8 in
    [8, :data:`PRODUCT_MAX_ROWS`], the largest with G·n_cols·8 bytes ≤ ``max_bytes`` when one is.

    A function of the candidate count only, so a word's row never depends on how many words are
    drawn with it (BLAS kernels round the edge rows of a product, and a matrix-vector product,
    differently from the full tiles: the height is fixed and a multiple of the tile heights).
    """
    g = (int(max_bytes) // (8 * max(1, int(n_cols)))) // 8 * 8
    return int(min(PRODUCT_MAX_ROWS, max(8, g)))


def weight_row(
    row: np.ndarray,
    row_sq: float,
    cand: Candidates,
    diag_col: int,
    epsilon: float,
    truncate: float = np.inf,
    *,
    zeros: np.ndarray | None = None,
    doubled: bool = False,
) -> np.ndarray:
    """One row of φ(x)·φ(C)ᵀ → its exponential-mechanism weights over C, in place (float64).

    The arithmetic of :func:`distances`, :func:`log_weight_rows` and the exponential
    mechanism's one-word sampler, step for step on one row: d = ‖x‖² − 2x·y + ‖y‖² clipped at 0,
    √, 0 on the word's own column, truncated, times −½·ε, shifted by the row maximum (skipped
    when it is 0: subtracting ±0 changes no weight), exp. A row of the block's product stays
    in cache from the first step to the last.

    ``zeros`` (|C| zeros, never written) is a buffer a caller that finishes many rows allocates
    once; without it one is allocated here. Clipping against an array of zeros gives the same
    values as against the scalar 0 in a third of the time (numpy's scalar-operand path of
    ``maximum`` is not vectorised). ``doubled``: the row holds (−2·φ(x))·φ(C)ᵀ already, the
    same values as −2·(φ(x)·φ(C)ᵀ) (scaling by −2 is exact in every term and every sum), so
    that step is skipped. With the word's own column the maximum is that column's 0 (every
    other value is ≤ 0), so no maximum is taken.
    """
    n = row.size
    if not doubled:
        row *= -2.0
    row += row_sq
    row += cand.sq
    np.maximum(row, zeros if zeros is not None and zeros.size == n else np.zeros(n), out=row)
    np.sqrt(row, out=row)
    if diag_col >= 0:
        row[diag_col] = 0.0
    if np.isfinite(truncate):
        np.minimum(row, truncate, out=row)
    row *= -0.5 * epsilon
    top = 0.0 if diag_col >= 0 else row.max()
    if top != 0.0:
        row -= top
    np.exp(row, out=row)
    return row


#: Columns per block of the two-level search (:func:`block_ends`, :func:`search_blocks`).
SEARCH_BLOCK = 16
_ONES_COLUMN = np.ones((SEARCH_BLOCK, 1))  # (SEARCH_BLOCK: a multiple of 8, see search_blocks)
#: Column j sums a block's columns 0…j (as :data:`_PREFIX_MATRIX`, for the search's blocks).
_SEARCH_TRIANGLE = np.triu(np.ones((SEARCH_BLOCK, SEARCH_BLOCK)))
#: Each uint64 of a row of 8 booleans → how many are True (a byte sum by one multiplication).
_BYTE_SUM = np.uint64(0x0101010101010101)


def block_ends(w: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """The running totals of a weight row's blocks of :data:`SEARCH_BLOCK` columns (the last
    block holds what is left), after a leading 0: E[0] = 0, E[b + 1] the total of blocks 0…b,
    non-decreasing (:func:`cumulative_weights`); E[-1] is the row's total. ``out``: room for at
    least one more float64 value than there are blocks.

    Each block's total comes from one matrix product by a column of ones (one pass over the
    row); the running totals of a few thousand blocks cost what the row's own running sums
    would cost over as many values.
    """
    n = w.size
    m = n - n % SEARCH_BLOCK
    k = m // SEARCH_BLOCK
    n_blocks = k + (m < n)
    e = np.empty(n_blocks + 1) if out is None or out.size <= n_blocks else out[: n_blocks + 1]
    e[0] = 0.0
    if k:
        np.matmul(w[:m].reshape(k, SEARCH_BLOCK), _ONES_COLUMN, out=e[1 : k + 1, None])
    if m < n:
        e[-1] = w[m:].sum()
    cumulative_weights(e[1:])
    return e


def search_blocks(w: np.ndarray, ends: np.ndarray, targets: np.ndarray) -> np.ndarray:
    """The column of each target t ∈ [0, E[-1]) under the weights ``w`` and their block totals
    ``ends`` (:func:`block_ends`): a draw by inverse CDF, searched in two levels.

    The CDF is F(j) = E_{b−1} + S_b(j) for column j of block b (S_b: the running sums of the
    block's weights in order, one small matrix product by a triangle of ones; E_{−1} = 0), and
    F = E_b at a block's last column: non-decreasing, and each column's step is its weight up
    to float64 rounding (a relative 10⁻¹⁵; the blocks' totals and running sums are added in
    another order than one running sum over the row). A target's block is the first with
    E_b > t (one binary search over the blocks' totals, a few thousand values that stay in
    cache), its column the first j with F(j) > t: the number of F ≤ t among the block's first
    :data:`SEARCH_BLOCK` − 1 values (where E_{b−1} + S_b(j) passes E_b by rounding it passes t
    too). A column of weight 0 is never returned (rounding at a block's last column, F = E_b,
    could otherwise give one a step of an ulp: the draw goes to the last column of positive
    weight before it). Targets in increasing order (or in a few increasing runs) search
    fastest; any order gives the same columns.
    """
    n = w.size
    m = n - n % SEARCH_BLOCK
    k = m // SEARCH_BLOCK
    b = np.searchsorted(ends[1:], targets, side="right")
    tail = m < n and b.size > 0 and int(b.max()) >= k  # some targets in the last, shorter block
    main = b < k if tail else None
    bm, tm = (b, targets) if main is None else (b[main], targets[main])
    f = w[:m].reshape(k, SEARCH_BLOCK)[bm] @ _SEARCH_TRIANGLE
    f += ends[bm][:, None]  # E_{b−1}
    below = (f <= tm[:, None]).view(np.uint64)  # rows of 16 booleans: two uint64 each
    below *= _BYTE_SUM  # each uint64's byte sum in its top byte
    below >>= np.uint64(56)
    cols = below[:, 0] + below[:, 1]
    np.minimum(cols, SEARCH_BLOCK - 1, out=cols)  # F = E_b > t at the last column
    cols = cols.astype(np.int64)
    cols += bm * SEARCH_BLOCK
    if main is None:
        out = cols
    else:  # targets in the last, shorter block
        out = np.empty(targets.size, dtype=np.int64)
        out[main] = cols
        last = np.cumsum(w[m:])
        last += ends[k]
        last[-1] = ends[-1]
        out[~main] = m + np.minimum(np.searchsorted(last, targets[~main], side="right"), n - m - 1)
    for i in np.flatnonzero(w[out] == 0.0):  # rare: a rounding step at a block's last column
        start = int(out[i]) - int(out[i]) % SEARCH_BLOCK
        before = np.flatnonzero(w[start : out[i]] > 0.0)
        if before.size:
            out[i] = start + int(before[-1])
    return out


#: Columns per block of :func:`cumulative_weights`.
PREFIX_BLOCK = 16
#: Its matrix: column j sums rows 0…j.
_PREFIX_MATRIX = np.triu(np.ones((PREFIX_BLOCK, PREFIX_BLOCK)))


def cumulative_weights(w: np.ndarray, work: np.ndarray | None = None) -> np.ndarray:
    """Running sums of a 1-D float64 array of finite weights ≥ 0, in place; returns ``w``.

    ``np.cumsum`` adds one value at a time (about 3 ns a value here; the screen's rows sum the
    totals of their blocks with this, :func:`block_ends`). This forms the running sums of each block
    of :data:`PREFIX_BLOCK` values with one matrix product by an upper-triangular matrix of ones
    (each column's sum runs over the block in order: multiplying by 1 and adding 0 are exact, so
    each value is the block's sequential sum), then adds the running total of the blocks before, and
    finishes a last partial block with ``np.cumsum``: about 2.2× faster at 50,000 values. The sums
    are non-decreasing, as a search needs (each block starts from the total it adds to), and differ
    from ``np.cumsum``'s in the last bits only (another order of additions: a relative 10⁻¹⁴ at
    50,000 values), so a draw by inverse CDF moves only when its uniform falls within those bits of
    a boundary.

    ``work`` is scratch of at least ``w.size`` float64 values (allocated when None). BLAS's
    thread count does not matter: a product's value at (i, j) is summed over the block in
    order whatever the threads.

    Examples
    --------
    >>> w = np.arange(40.0)
    >>> bool(np.array_equal(cumulative_weights(w.copy()), np.cumsum(w)))  # integers: exact
    True
    """
    n = w.size
    m = n - n % PREFIX_BLOCK
    if m < 4 * PREFIX_BLOCK:
        return np.cumsum(w, out=w)
    work = np.empty(m) if work is None or work.size < m else work
    blocks = w[:m].reshape(-1, PREFIX_BLOCK)
    part = work[:m].reshape(-1, PREFIX_BLOCK)
    np.matmul(blocks, _PREFIX_MATRIX, out=part)
    ends = np.cumsum(part[:, -1])  # the running total at each block's end
    blocks[0] = part[0]
    np.add(part[1:], ends[:-1, None], out=blocks[1:])
    if m < n:
        tail = w[m:]
        np.cumsum(tail, out=tail)
        tail += ends[-1]
    return w


def pair_distances(
    vectors: np.ndarray, x: np.ndarray, y: np.ndarray, *, max_elements: int = DEFAULT_MAX_ELEMENTS
) -> np.ndarray:
    """d(x_k, y_k) = ‖φ(x_k) − φ(y_k)‖₂ for paired ids, float64, a chunk of pairs at a time.

    Computed from the difference vectors (exact 0 when x_k = y_k); each chunk gathers at most
    about ``max_elements`` values, so memory stays bounded for any number of pairs.
    """
    out = np.empty(len(x), dtype=np.float64)
    for sl in iter_chunks(len(x), vectors.shape[1], max_elements):
        diff = vectors[x[sl]] - vectors[y[sl]]
        out[sl] = np.sqrt(np.einsum("ij,ij->i", diff, diff))
    return out


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
