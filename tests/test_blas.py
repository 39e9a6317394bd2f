"""dpcore.blas: one BLAS thread inside the block, the process's controller kept and rebuilt."""

from __future__ import annotations

import doctest
import os
import sys
import types

import numpy as np  # loads the BLAS the limits act on
import pytest

import dpcore.blas
from dpcore.blas import blas_controller, one_blas_thread

threadpoolctl = pytest.importorskip("threadpoolctl")


def _blas_threads() -> list[int]:
    return [int(i["num_threads"]) for i in threadpoolctl.threadpool_info() if i.get("user_api") == "blas"]


def test_one_blas_thread_inside_and_the_earlier_limit_after() -> None:
    assert _blas_threads(), f"NumPy's BLAS is not visible to threadpoolctl (NumPy {np.__version__})"
    with threadpoolctl.threadpool_limits(limits=2, user_api="blas"):
        assert set(_blas_threads()) == {2}
        with one_blas_thread():
            assert set(_blas_threads()) == {1}
        assert set(_blas_threads()) == {2}


def test_the_controller_is_kept_until_modules_are_imported(monkeypatch: pytest.MonkeyPatch) -> None:
    first = blas_controller()
    assert first is not None and blas_controller() is first
    monkeypatch.setitem(sys.modules, "dpcore_test_blas_new_module", types.ModuleType("x"))
    again = blas_controller()
    assert again is not first  # a module imported since: the libraries are looked up again
    assert blas_controller() is again


def test_docstring_examples_run() -> None:
    assert doctest.testmod(dpcore.blas).failed == 0


def _child_reads_the_controller() -> None:
    os._exit(0 if blas_controller() is not None else 3)


@pytest.mark.skipif(not hasattr(os, "register_at_fork"), reason="fork (POSIX)")
def test_a_child_forked_while_the_lock_is_held_gets_a_free_one() -> None:
    """A process forked while another thread builds the controller must not wait for ever."""
    import multiprocessing as mp

    with dpcore.blas._LOCK:  # as if another thread were building the controller at the fork
        child = mp.get_context("fork").Process(target=_child_reads_the_controller)
        child.start()
        child.join(120)  # a bound on waiting for the state (the child ends), not a speed requirement
        if child.exitcode is None:
            child.kill()
            child.join()
    assert child.exitcode == 0
