"""dpcore.logspace.logsumexp against scipy.special.logsumexp (the reference), edge cases included."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import logsumexp as scipy_logsumexp

from dpcore.logspace import logsumexp


@pytest.mark.parametrize("axis", [None, 0, 1, -1])
@pytest.mark.parametrize("keepdims", [False, True])
def test_matches_scipy_on_wide_rows(axis: int | None, keepdims: bool) -> None:
    rng = np.random.default_rng(7)
    a = rng.normal(scale=300.0, size=(40, 3000))  # exp alone would overflow and underflow
    a[3, :] = -np.inf  # a row with no mass
    a[5, ::2] = -np.inf
    got = logsumexp(a, axis=axis, keepdims=keepdims)
    want = scipy_logsumexp(a, axis=axis, keepdims=keepdims)
    assert got.shape == np.shape(want)
    assert np.array_equal(np.isneginf(got), np.isneginf(want))
    fin = np.isfinite(want)
    np.testing.assert_allclose(got[fin], np.asarray(want)[fin], rtol=1e-13, atol=1e-12)


def test_edge_values() -> None:
    assert logsumexp(np.array([-np.inf, -np.inf])) == -np.inf
    assert logsumexp(np.array([0.0, np.inf])) == np.inf
    assert np.isnan(logsumexp(np.array([0.0, np.nan])))
    assert float(logsumexp(np.log([1.0, 2.0, 3.0]))) == pytest.approx(np.log(6.0), rel=1e-15)
    assert float(logsumexp(np.array([1000.0, 1000.0]))) == pytest.approx(1000.0 + np.log(2.0), rel=1e-15)
    with pytest.raises(ValueError):
        logsumexp(np.array([]))


def test_overwrite_reuses_the_input_and_gives_the_same_values() -> None:
    rng = np.random.default_rng(3)
    a = rng.normal(size=(8, 50))
    want = logsumexp(a.copy(), axis=1)
    b = a.copy()
    got = logsumexp(b, axis=1, overwrite=True)
    np.testing.assert_array_equal(got, want)
    assert not np.array_equal(b, a)  # the scratch space was used
    c = a.copy()
    logsumexp(c, axis=1)
    np.testing.assert_array_equal(c, a)  # without overwrite the input is untouched
