"""The k smallest or largest entries of an array, with ties broken by position, on every machine.

``np.argpartition`` and ``np.argsort`` (its default, unstable kind) leave the order of equal
values to the sorting kernel, and numpy picks the kernel from the processor's instructions: on a
processor with AVX-512 the same call returns other indices among ties than on one with AVX2 only.
Counts of draws tie all the time, so an audit that keeps "the top 64 outputs" that way picks
other outputs, other pairs and other numbers on another processor, for the same seed. These
functions choose among equal values by position (the lowest index first), so the selection is a
function of the values alone: the same on every machine, at ``np.partition``'s cost (linear, not
a full sort).

Both return the chosen indices in increasing order of position, not sorted by value: callers
that need them ranked sort the few chosen with ``np.lexsort`` or a stable ``np.argsort``.
"""

from __future__ import annotations

import functools

import numpy as np

__all__ = ["largest_k", "smallest_k"]


def smallest_k(values: np.ndarray, k: int) -> np.ndarray:
    """Indices of the ``k`` smallest entries of ``values`` along its last axis, ties by position.

    Parameters
    ----------
    values
        A 1-D array, or a 2-D array whose rows are each searched. NaN counts as larger than every
        number (as in ``np.sort``); a selection that would have to take a NaN is refused.
    k
        How many to keep per row, ``0 ≤ k``; all of them when ``k`` is the row's length or more.

    Returns
    -------
    numpy.ndarray
        Integer indices, shape ``(k,)`` or ``(rows, k)``, increasing along the last axis: every
        entry below the k-th smallest value, then the lowest-placed entries equal to it.

    Raises
    ------
    ValueError
        ``values`` is not 1-D or 2-D, ``k`` is negative, or a NaN would be among the chosen.

    Examples
    --------
    >>> smallest_k(np.array([3, 1, 2, 1, 1]), 2)
    array([1, 3])
    >>> smallest_k(np.array([[5.0, 4.0, 4.0], [0.0, 9.0, 0.0]]), 2)
    array([[1, 2],
           [0, 2]])
    """
    return _select(values, k, largest=False)


def largest_k(values: np.ndarray, k: int) -> np.ndarray:
    """Indices of the ``k`` largest entries of ``values`` along its last axis, ties by position.

    As :func:`smallest_k` with the order reversed; among equal values the lowest-placed come
    first. Infinities are values like any other; a NaN (larger than every number, as in
    ``np.sort``) would always be chosen, and is refused.

    Examples
    --------
    >>> largest_k(np.array([1, 7, 7, 3, 7]), 2)
    array([1, 2])
    """
    return _select(values, k, largest=True)


def _select(values: np.ndarray, k: int, *, largest: bool) -> np.ndarray:
    v = np.asarray(values)
    if v.ndim not in (1, 2):
        raise ValueError(f"values must be 1-D or 2-D, not {v.ndim}-D")
    k = int(k)
    if k < 0:
        raise ValueError(f"k must be at least 0, not {k}")
    n = v.shape[-1]
    if k >= n:
        if v.dtype.kind in "fc" and np.isnan(v).any():
            raise ValueError("values must not contain NaN where it would be chosen")
        return np.broadcast_to(np.arange(n), v.shape).copy()
    if k == 0:
        return np.empty((*v.shape[:-1], 0), dtype=np.intp)
    at = n - k if largest else k - 1  # the k-th value's place in ascending order
    if v.ndim == 2 and not largest:
        fast = _smallest_rows_by_blocks(v, k)
        if fast is not None:
            return fast
    if v.ndim == 1:  # the common case, kept lean
        # the k-th value: numpy sorts a few thousand integers faster than it partitions them
        # when many are equal (counts of draws), the same value either way
        small_ints = v.dtype.kind in "iub" and n <= _SORT_BELOW
        kth = (np.sort(v) if small_ints else np.partition(v, at))[at]
        idx = np.flatnonzero(v > kth if largest else v < kth)  # (a NaN k-th value: none)
        if idx.size < k:  # then the lowest-placed entries equal to it
            idx = np.concatenate([idx, np.flatnonzero(v == kth)[: k - idx.size]])
            idx.sort()
    else:
        kth = np.partition(v, at, axis=1)[:, at : at + 1]
        beyond = v > kth if largest else v < kth
        equal = v == kth
        keep = beyond | equal
        room = k - beyond.sum(axis=1)  # how many of the equal ones fit, ≥ 1
        over = np.flatnonzero(equal.sum(axis=1) > room)  # rows tied across the k-th place
        if over.size:
            first = np.cumsum(equal[over], axis=1) <= room[over, None]
            keep[over] = beyond[over] | (equal[over] & first)
        idx = np.nonzero(keep)[1]  # row-major: each row's k, in increasing position
    if idx.size != k * (v.size // n):  # a NaN at the k-th place equals nothing
        raise ValueError("values must not contain NaN where it would be chosen")
    return idx.reshape(*v.shape[:-1], k)


#: Longest integer array whose k-th value :func:`largest_k` and :func:`smallest_k` take from a sort.
_SORT_BELOW = 4096
#: Columns per block of :func:`_smallest_rows_by_blocks`, and the rows it takes: wide enough that
#: the blocks' minima are far fewer than the values.
_BLOCK = 32
_MIN_COLUMNS = 1024


def _smallest_rows_by_blocks(v: np.ndarray, k: int) -> np.ndarray | None:
    """:func:`smallest_k` of the rows of a wide 2-D ``v`` (``0 < k < n``), or None to take the
    general path: the same indices, about four times faster at 15,000 columns.

    Each row's values are cut into blocks: with nb = ⌊n / :data:`_BLOCK`⌋, block j < nb holds
    the :data:`_BLOCK` columns j, j + nb, j + 2·nb, … (a stride, so that all blocks' minima come
    from :data:`_BLOCK` elementwise minima of contiguous slices, vectorised), and each of the last
    n mod :data:`_BLOCK` columns is a block of its own. The k-th smallest of the blocks' minima,
    T, bounds the row's k-th smallest value from above (k blocks each hold a value ≤ T, and those
    are k different entries), so every entry the selection can take is ≤ T: the partition and
    the tie rule run on those candidates only, put in the order of their positions. A NaN makes
    its block's minimum NaN (np.minimum), so it is never a candidate, as NaN is never taken
    while k numbers remain; T is NaN only when fewer than k blocks are free of NaN, and then the
    general path decides. None as well when the candidates are many (ties over a quarter of a
    row): the general path needs no more memory than ``v``.
    """
    n_rows, n = v.shape
    nb = n // _BLOCK
    tail = n - nb * _BLOCK
    n_blocks = nb + tail
    if v.dtype.kind not in "fiu" or n < _MIN_COLUMNS or n_blocks <= 2 * k or n_rows == 0:
        return None
    # a fresh array, then the tail joined to it (numpy's reduction into a slice's out= is
    # several times slower)
    block_min = v[:, : nb * _BLOCK].reshape(n_rows, _BLOCK, nb).min(axis=1)
    if tail:
        block_min = np.concatenate([block_min, v[:, nb * _BLOCK :]], axis=1)
    bound = np.partition(block_min, k - 1, axis=1)[:, k - 1 : k]
    if v.dtype.kind == "f" and np.isnan(bound).any():
        return None
    # only blocks whose minimum is ≤ T can hold a candidate (a block with a NaN: looked into)
    open_ = block_min <= bound
    if v.dtype.kind == "f":
        open_ |= np.isnan(block_min)
    b_rows, b_ids = np.nonzero(open_)  # row-major
    table = _block_columns(n)
    cols = table[b_ids]
    inside = cols >= 0
    vals = v[b_rows[:, None], np.maximum(cols, 0)]
    p, o = np.nonzero((vals <= bound[b_rows]) & inside)
    rows, cols = b_rows[p], cols[p, o]
    order = np.argsort(rows * n + cols)  # each row's candidates in increasing position
    rows, cols = rows[order], cols[order]
    counts = np.bincount(rows, minlength=n_rows)
    width = int(counts.max())
    if width > n // 4:
        return None
    # the candidates of each row, left-aligned in position order; the rest of a row is padding
    rank = np.arange(rows.size) - (np.cumsum(counts) - counts)[rows]
    pad = np.inf if v.dtype.kind == "f" else np.iinfo(v.dtype).max
    cand = np.full((n_rows, width), pad, dtype=v.dtype)
    cand[rows, rank] = v[rows, cols]
    where = np.zeros((n_rows, width), dtype=np.int64)
    where[rows, rank] = cols
    real = np.arange(width)[None, :] < counts[:, None]
    kth = np.partition(cand, k - 1, axis=1)[:, k - 1 : k]  # padding is never below a candidate
    below = (cand < kth) & real
    equal = (cand == kth) & real
    room = k - below.sum(axis=1)
    keep = below | (equal & (np.cumsum(equal, axis=1) <= room[:, None]))
    return where[keep].reshape(n_rows, k)


@functools.lru_cache(maxsize=16)
def _block_columns(n: int) -> np.ndarray:
    """The columns of each block of :func:`_smallest_rows_by_blocks` over ``n`` columns, shape
    (blocks, :data:`_BLOCK`), −1 past a block's end (read-only, made once per n)."""
    nb = n // _BLOCK
    tail = n - nb * _BLOCK
    table = np.full((nb + tail, _BLOCK), -1, dtype=np.int64)
    table[:nb] = np.arange(nb)[:, None] + nb * np.arange(_BLOCK)[None, :]
    table[nb:, 0] = nb * _BLOCK + np.arange(tail)
    table.flags.writeable = False
    return table
