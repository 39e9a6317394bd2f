"""BLAS threads where the parallel unit is above BLAS (words, shards, rows): one home.

dpcore's drawing processes, probes and searches each keep BLAS to one thread while they run
(a word's row, one matrix-vector product over the vocabulary, took 16 ms with OpenBLAS's threads
on a loaded 2-core machine and 0.6 ms with one; the per-element results are the same).

``threadpoolctl`` finds the loaded BLAS libraries by walking the process's shared objects, which
cost about 3 ms a time here: a third of a small audit's time when a fresh
``threadpool_limits`` was built for every block. :func:`blas_controller` keeps one
``ThreadpoolController`` per process and builds it again only when modules were imported since
(a new extension module may have loaded another BLAS) or in a forked child.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
from typing import Any

__all__ = ["blas_controller", "one_blas_thread"]

_LOCK = threading.Lock()
_STATE: dict[str, Any] = {"key": None, "controller": None}


def _after_fork_in_child() -> None:
    """A child forked while another thread held the lock gets a free one (its key differs anyway)."""
    global _LOCK
    _LOCK = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


def blas_controller() -> Any:
    """This process's ``threadpoolctl.ThreadpoolController`` (None without threadpoolctl).

    Built again when ``sys.modules`` has grown or the process id changed since it was built.
    """
    key = (os.getpid(), len(sys.modules))
    with _LOCK:
        if _STATE["key"] != key:
            try:
                from threadpoolctl import ThreadpoolController
            except ImportError:  # pragma: no cover - threadpoolctl comes with scikit-learn
                return None
            controller = ThreadpoolController()
            _STATE["controller"], _STATE["key"] = controller, key
        return _STATE["controller"]


def one_blas_thread() -> contextlib.AbstractContextManager[Any]:
    """A context in which BLAS uses one thread (its earlier limits come back at the end).

    Examples
    --------
    >>> from dpcore.blas import one_blas_thread
    >>> with one_blas_thread():
    ...     pass
    """
    controller = blas_controller()
    if controller is None:  # pragma: no cover - threadpoolctl comes with scikit-learn
        return contextlib.nullcontext()
    return controller.limit(limits=1, user_api="blas")
