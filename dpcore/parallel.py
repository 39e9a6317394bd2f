"""How many workers a parallel computation uses: the machine's cores by default, validated.

The vector Monte-Carlo audit (:mod:`dpcore.audit.montecarlo`) runs its independent random
streams on a thread pool of this size; its results never depend on the number of workers.

>>> from dpcore.parallel import resolve_workers
>>> resolve_workers(2)
2
>>> resolve_workers(None) == default_workers()
True
"""

from __future__ import annotations

import os

from dpcore.validation import check_int

__all__ = ["MAX_WORKERS", "default_workers", "resolve_workers"]

#: Largest number of workers accepted.
MAX_WORKERS = 64


def default_workers() -> int:
    """The CPUs this process may use (``os.sched_getaffinity`` where available), at most 64."""
    try:
        n = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        n = os.cpu_count() or 1
    return max(1, min(n, MAX_WORKERS))


def resolve_workers(value: int | str | None) -> int:
    """``None`` → :func:`default_workers`; otherwise a whole number 1..:data:`MAX_WORKERS`.

    Raises
    ------
    DPCoreError
        For anything else, with a one-line message naming ``workers``.
    """
    if value is None:
        return default_workers()
    return check_int(value, name="workers", min_value=1, max_value=MAX_WORKERS)
