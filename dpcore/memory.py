"""Returning freed heap memory to the operating system.

glibc keeps memory that a program has freed inside its heaps (one per thread that allocated,
e.g. torch's worker threads) and gives it back only from the top of each heap. After a
masked-LM forward pass, hundreds of MB of freed activations can stay resident this way for the
life of a dashboard server. :func:`release_free_memory` calls glibc's ``malloc_trim(0)``, which
returns every free page of every heap; elsewhere (macOS, Windows, musl) it does nothing.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import sys
from collections.abc import Callable

__all__ = ["release_free_memory"]


@functools.lru_cache(maxsize=1)
def _malloc_trim() -> Callable[[int], int] | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        trim = libc.malloc_trim
    except (OSError, AttributeError):  # not glibc
        return None
    trim.argtypes = [ctypes.c_size_t]
    trim.restype = ctypes.c_int
    return trim


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
