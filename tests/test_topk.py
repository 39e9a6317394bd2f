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
