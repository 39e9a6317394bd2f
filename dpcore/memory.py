"""Returning freed heap memory to the operating system.

glibc keeps memory that a program has freed inside its heaps (one per thread that allocated,
e.g. torch's worker threads) and gives it back only from the top of each heap. After a
masked-LM forward pass, hundreds of MB of freed activations can stay resident this way for the
life of a dashboard server. :func:`release_free_memory` calls glibc's ``malloc_trim(0)``, which
returns every free page of every heap; elsewhere (macOS, Windows, musl) it does nothing.

A loop of forward passes trims once, at its end (:func:`trim_after`): trimming after each pass
handed the pages back only for the next pass to fault them in again. DP-MLM over 9,815 tokens
(607 passes of the adversarial test LM) took 4.9 s that way and 2.6 s with one trim at the end
(2026-12-04, one thread, the same draws); the memory a loop keeps between its passes is one
pass's, as before.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import functools
import sys
import threading
from collections.abc import Callable, Iterator
from typing import Any

__all__ = ["limit_malloc_arenas", "release_after_pass", "release_free_memory", "trim_after"]

_LOOP = threading.local()


@functools.lru_cache(maxsize=4)
def _glibc(name: str, argtypes: tuple[Any, ...]) -> Callable[..., int] | None:
    """glibc's function ``name`` with these argument types (returning int), or None elsewhere."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        fn = getattr(ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6"), name)
    except (OSError, AttributeError):  # not glibc
        return None
    fn.argtypes = list(argtypes)
    fn.restype = ctypes.c_int
    return fn


def _malloc_trim() -> Callable[[int], int] | None:
    return _glibc("malloc_trim", (ctypes.c_size_t,))


#: glibc's ``mallopt`` parameter number of ``M_ARENA_MAX``.
_M_ARENA_MAX = -8


def limit_malloc_arenas(arenas: int = 2) -> bool:
    """Let glibc's malloc use at most ``arenas`` heaps, shared by all threads from now on.

    glibc gives each thread that allocates under contention a heap of its own (up to 8 per
    core); a Streamlit server runs every page in a new thread, so freed memory ends up spread
    over many heaps that are never handed back. Two heaps held the issue-60 visitor walk
    (``bench/app_memory.py --visitor``) at 617 MiB instead of 661 (one run each, 2 cores), the
    same as ``MALLOC_ARENA_MAX=2`` in the environment. Threads that already have a heap keep it.

    Returns
    -------
    bool
        Whether the C library took the setting (glibc); ``False`` elsewhere, where it does
        nothing.
    """
    mallopt = _glibc("mallopt", (ctypes.c_int, ctypes.c_int))
    return mallopt is not None and bool(mallopt(_M_ARENA_MAX, max(1, int(arenas))))


def release_free_memory() -> bool:
    """Give free heap pages back to the operating system (glibc ``malloc_trim(0)``).

    Returns
    -------
    bool
        Whether the C library supports it (glibc); ``False`` means nothing was done.
    """
    trim = _malloc_trim()
    if trim is None:
        return False
    trim(0)
    return True


@contextlib.contextmanager
def trim_after() -> Iterator[None]:
    """Within the block, :func:`release_after_pass` calls wait for one trim at the block's end.

    For a loop of forward passes (a DP-MLM sanitization, a mask-token attack): the pages freed
    after one pass are reused by the next instead of being handed back and faulted in again.
    Blocks nest (the outermost one trims) and are per thread (a dashboard session's script
    thread does not delay another's trim).
    """
    _LOOP.depth = getattr(_LOOP, "depth", 0) + 1
    try:
        yield
    finally:
        _LOOP.depth -= 1
        if _LOOP.depth == 0 and getattr(_LOOP, "pending", False):
            _LOOP.pending = False
            release_free_memory()


def release_after_pass() -> None:
    """:func:`release_free_memory` now, or at the end of the enclosing :func:`trim_after` block."""
    if getattr(_LOOP, "depth", 0):
        _LOOP.pending = True
    else:
        release_free_memory()
