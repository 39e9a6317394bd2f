"""Test-session set-up and the fixtures every test file shares (one home; no copies in files).

Threads
    Each pytest worker (``-n 2``: two of them on two cores) computes with one BLAS, OpenMP and
    onnxruntime thread, and so do the processes it starts (they inherit the environment): two
    workers with two threads each ran four busy threads on two cores. A test about threads sets
    its own (``threadpoolctl.threadpool_limits``). Results do not depend on the thread count:
    the golden audits and every shipped view's ``--check`` run under these settings.

Streamlit
    ``AppTest.run()`` scans the metadata of every installed distribution for custom component
    manifests on each run (about 0.3–0.8 s here, with ~650 packages installed), and the page
    tests make a few hundred runs. The installed packages cannot change during a test session,
    so the scan's result is computed once and reused; what each page script does is unchanged.

Fixtures
--------
``cli``
    Runs ``python -m dpcore ARGS`` in this process (``dpcore.cli.main``) and returns a
    :class:`CliRun` (exit status, stdout, stderr), with captured output cleared first.
``clear_page_caches``
    Empties Streamlit's ``st.cache_data`` before a page test, so the page computes what the test
    watches instead of reading an earlier test's result. Page-test files use it for every test
    with ``pytestmark = pytest.mark.usefixtures("clear_page_caches")``.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from typing import NamedTuple

import pytest

#: One compute thread per pytest worker (see the module's docstring). ``setdefault``: a run that
#: sets its own keeps it.
ONE_THREAD_ENV = {
    "OMP_NUM_THREADS": "1",
    "OPENBLAS_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "DPCORE_ORT_THREADS": "1",
}


def _one_thread_per_worker() -> None:
    for name, value in ONE_THREAD_ENV.items():
        os.environ.setdefault(name, value)
    try:  # a BLAS already loaded (by a plugin) read the environment before it was set
        from threadpoolctl import threadpool_limits
    except ImportError:
        return
    threadpool_limits(limits=int(os.environ["OPENBLAS_NUM_THREADS"]))


def _cache_component_scan() -> None:
    try:
        from streamlit.components.v2 import manifest_scanner
    except ImportError:  # another Streamlit version: nothing to cache
        return
    scan = getattr(manifest_scanner, "scan_component_manifests", None)
    if scan is None or hasattr(scan, "cache_info"):
        return
    manifest_scanner.scan_component_manifests = functools.cache(scan)


_one_thread_per_worker()
_cache_component_scan()


class CliRun(NamedTuple):
    """What one in-process ``python -m dpcore`` run gave: its exit status and its two streams."""

    code: int
    out: str
    err: str


#: The ``cli`` fixture's type, for a test's signature: ``def test_x(cli: Cli) -> None``.
Cli = Callable[..., CliRun]


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str]) -> Cli:
    """``cli("audit", "--mechanism", "krr", ...)`` or ``cli([...])``: ``dpcore.cli.main`` in this
    process, its captured stdout and stderr (what was printed before the call is dropped)."""
    from dpcore.cli import main

    def run(*argv: str | list[str]) -> CliRun:
        args = list(argv[0]) if len(argv) == 1 and isinstance(argv[0], list) else [str(a) for a in argv]
        capsys.readouterr()
        code = main(args)
        out, err = capsys.readouterr()
        return CliRun(code, out, err)

    return run


@pytest.fixture
def clear_page_caches() -> None:
    """Empty Streamlit's data cache before the test (see the module's docstring)."""
    import streamlit as st

    st.cache_data.clear()
