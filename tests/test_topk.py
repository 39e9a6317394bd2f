"""dpcore.topk: the k smallest or largest entries, ties broken by position (on every processor)."""

from __future__ import annotations

import doctest

import numpy as np
import pytest

import dpcore.topk
from dpcore.topk import largest_k, smallest_k


def _reference_smallest(v: np.ndarray, k: int) -> np.ndarray:
    """The first k of a stable sort (value, then position), back in order of position."""
    return np.sort(np.argsort(v, kind="stable")[:k])


@pytest.mark.parametrize("dtype", [np.int64, np.float64, np.float32, np.uint16])
def test_one_row_is_the_stable_sort_s_first_k(dtype: type) -> None:
    rng = np.random.default_rng(0)
    for _ in range(300):
        n = int(rng.integers(1, 60))
        v = rng.integers(0, int(rng.integers(1, 6)), n).astype(dtype)  # few values: ties everywhere
        for k in {0, 1, n // 2, n - 1, n}:
            k = max(k, 0)
            assert np.array_equal(smallest_k(v, k), _reference_smallest(v, k)), (v, k)
            if dtype is not np.uint16:
                want = _reference_smallest(-v, k)
            else:
                want = np.sort(np.lexsort((np.arange(n), -v.astype(np.int64)))[:k])
            assert np.array_equal(largest_k(v, k), want), (v, k)


def test_rows_are_searched_each_on_its_own() -> None:
    rng = np.random.default_rng(1)
    d = rng.integers(0, 3, (40, 25)).astype(np.float64)
    d[3] = 7.0  # a row that is all one tie
    d[5, :4] = np.inf
    for k in (1, 4, 24, 25, 30):
        got = smallest_k(d, k)
        assert got.shape == (40, min(k, 25))
        for r in range(40):
            assert np.array_equal(got[r], _reference_smallest(d[r], k)), (r, k)
    assert np.array_equal(smallest_k(d, 3)[3], [0, 1, 2])


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64, np.uint16])
def test_wide_rows_take_the_block_path_with_the_same_indices(dtype: type) -> None:
    """Rows of 1,024 columns or more (nearest neighbours over a vocabulary) are searched through
    their blocks' minima (``_smallest_rows_by_blocks``): the stable sort's first k, row by row,
    with ties everywhere, infinities, NaNs (never taken while k numbers remain), -0.0 against 0.0,
    and ties so wide that the block path gives the rows back to the general one."""
    rng = np.random.default_rng(7)
    taken = given_back = 0
    for trial in range(40):
        n = int(rng.choice([1024, 1500, 3000, 3001, 15_000]))
        rows = int(rng.integers(1, 9))
        levels = int(rng.choice([3, 50, 10**6]))
        d = rng.integers(0, levels, (rows, n)).astype(dtype)
        if np.dtype(dtype).kind == "f":
            d[0, rng.integers(0, n, 5)] = np.inf
            if rows > 1:
                d[1, rng.integers(0, n, 40)] = np.nan  # in some blocks, never needed
                d[1, rng.integers(0, n, 3)] = -np.inf
            d[-1, :7] = [0.0, -0.0, 0.0, -0.0, 0.0, -0.0, 0.0]
        if trial == 0:
            d[:] = 3  # one tie over every row: the general path
        for k in (1, 2, 5, int(rng.integers(1, n // dpcore.topk._BLOCK // 2))):
            fast = dpcore.topk._smallest_rows_by_blocks(d, k)
            taken += fast is not None
            given_back += fast is None
            got = smallest_k(d, k)
            assert got.shape == (rows, k)
            for r in range(rows):
                assert np.array_equal(got[r], _reference_smallest(d[r], k)), (trial, r, k)
            if fast is not None:
                assert np.array_equal(fast, got)
    assert taken >= 40 and given_back >= 4  # both paths ran
    # a row that must take a NaN is refused on the wide path too
    w = np.full((2, 2048), np.nan)
    w[0] = 1.0
    w[1, :3] = 0.0
    with pytest.raises(ValueError, match="NaN"):
        smallest_k(w, 4)
    assert np.array_equal(smallest_k(w, 3), [[0, 1, 2], [0, 1, 2]])


def test_infinities_are_values_and_a_chosen_nan_is_refused() -> None:
    v = np.array([np.inf, 1.0, -np.inf, np.inf, 2.0])
    assert np.array_equal(largest_k(v, 2), [0, 3])
    assert np.array_equal(smallest_k(v, 2), [1, 2])
    w = np.array([1.0, np.nan, 0.0])  # NaN is larger than every number, as in np.sort
    assert np.array_equal(smallest_k(w, 2), [0, 2])
    for call in (lambda: smallest_k(w, 3), lambda: largest_k(w, 1), lambda: largest_k(np.stack([w, w]), 2)):
        with pytest.raises(ValueError, match="NaN"):
            call()
    with pytest.raises(ValueError, match="at least 0"):
        smallest_k(np.arange(3), -1)
    with pytest.raises(ValueError, match="1-D or 2-D"):
        smallest_k(np.zeros((2, 2, 2)), 1)


def test_the_selection_does_not_depend_on_the_input_s_kernel_order() -> None:
    """What numpy's own partition leaves to its kernel, the position decides here: shuffling the
    tied entries among themselves changes nothing but their positions."""
    v = np.array([5, 3, 3, 3, 3, 1, 3, 3], dtype=np.int64)
    assert np.array_equal(smallest_k(v, 3), [1, 2, 5])
    assert np.array_equal(largest_k(v, 3), [0, 1, 2])


def test_docstring_examples() -> None:
    assert doctest.testmod(dpcore.topk, raise_on_error=True).attempted >= 3


@pytest.mark.parametrize("n", [2048, 2048 + 17])
def test_a_block_holding_a_nan_is_still_searched(n: int) -> None:
    """Only blocks whose minimum is at most the bound are looked into; a block with a NaN has a
    NaN minimum, and its numbers can still be the smallest. A block holds every nb-th column
    (nb = ⌊n / block⌋); each column past nb·block is a block of its own."""
    nb = n // dpcore.topk._BLOCK
    d = 100.0 + np.arange(n, dtype=np.float64)[None, :]
    d[0, 5], d[0, 5 + nb] = 0.0, np.nan  # the smallest value and a NaN in the same block
    d[0, 1500], d[0, 1500 - nb] = 1.0, np.nan
    assert dpcore.topk._block_columns(n)[5, 1] == 5 + nb  # (the same block indeed)
    assert dpcore.topk._smallest_rows_by_blocks(d, 2) is not None  # the block path decides
    assert np.array_equal(smallest_k(d, 2), [[5, 1500]])
    assert np.array_equal(smallest_k(d.astype(np.float32), 3), [[0, 5, 1500]])
    if n % dpcore.topk._BLOCK:  # a column of the tail, a block of its own, is a candidate too
        d[0, -1] = -1.0
        assert np.array_equal(smallest_k(d, 2), [[5, n - 1]])
