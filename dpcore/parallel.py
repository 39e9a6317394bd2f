"""How many workers a parallel computation uses: the machine's cores by default, validated.

The default is the CPUs this process may use, or the whole number in the environment variable
``DPCORE_WORKERS`` when it is set: a shared server, or a test suite that already runs one
process per core (dpcore's sets 1 in each pytest worker), keeps every command and page that is
not given ``--workers`` to that many. Results never depend on the number of workers.

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

from dpcore.validation import check_int, env_whole_number

__all__ = ["MAX_WORKERS", "WORKERS_ENV", "default_workers", "resolve_workers"]

#: Largest number of workers accepted.
MAX_WORKERS = 64


#: The environment variable that sets the default number of workers (unset: the CPUs).
WORKERS_ENV = "DPCORE_WORKERS"


def default_workers() -> int:
    """``DPCORE_WORKERS`` when set, else the CPUs this process may use (``os.sched_getaffinity``
    where available), at most 64.

    Raises
    ------
    DPCoreError
        When ``DPCORE_WORKERS`` is set to anything but a whole number from 1 to 64.
    """
    n = env_whole_number(WORKERS_ENV, min_value=1, max_value=MAX_WORKERS)
    if n is not None:
        return n
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
