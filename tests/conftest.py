"""Test-session set-up and the fixtures every test file shares (one home; no copies in files).

Threads and worker processes
    Each pytest worker (``-n 3``: three of them on two cores, since the browser tests' worker
    and the tests that start library processes wait part of their time; docs/development.md)
    computes with one BLAS, OpenMP and onnxruntime thread, and so do the processes it starts
    (they inherit the environment): two workers with two threads each ran four busy threads on
    two cores. A test about threads sets
    its own (``threadpoolctl.threadpool_limits``). Likewise a command or page not given
    ``--workers`` runs one worker process (``DPCORE_WORKERS=1``, :mod:`dpcore.parallel`) instead of
    one per core: a test about worker processes passes its own count. Results do not depend on
    the thread or worker count: the golden audits and every shipped view's ``--check`` run under
    these settings.

Streamlit
    ``AppTest.run()`` scans the metadata of every installed distribution for custom component
    manifests on each run (about 0.3–0.8 s here, with ~650 packages installed), and the page
    tests make a few hundred runs. The installed packages cannot change during a test session,
    so the scan's result is computed once and reused; what each page script does is unchanged.

Missing prerequisites
    :func:`need` fails a test in CI and skips it elsewhere: CI installs everything the tests
    use, so a missing Chromium, Playwright or mkdocs there is a broken install step.

Fixtures
--------
``cli``
    Runs ``python -m dpcore ARGS`` in this process (``dpcore.cli.main``) and returns a
    :class:`CliRun` (exit status, stdout, stderr), with captured output cleared first.
    ``run.ok()`` is the stdout of a run that exited 0, ``run.json()`` the JSON it printed.
``clear_page_caches``
    Empties Streamlit's ``st.cache_data`` before a page test, so the page computes what the test
    watches instead of reading an earlier test's result. Page-test files use it for every test
    with ``pytestmark = pytest.mark.usefixtures("clear_page_caches")``.
``verdicts_check``
    ``verdicts --check --json`` on the shipped table, run once per worker: the check test of
    ``tests/test_verdicts_shipped.py`` and the flawed settings' default-audit tests
    (``tests/test_flawed_settings.py``), whose documented commands are the check's rows, read
    it. They are marked ``VERDICTS_GROUP`` so that one worker runs the check once.
``toy_lm``
    An exact toy causal LM in place of the shipped SmolLM2 for the ``lm`` distinguisher
    (:func:`dpcore.rewriter.lmscore.default_model` returns it): ln p(answer | prompt) sums
    ln 0.6 over the answer's words the prompt holds and ln 0.05 over the others, a model that
    copies what it reads. Its ``prompts_scored`` counts the prompts it was given. The shipped
    model runs the distinguisher from the CLI in ``tests/test_rewriter_dpprompt.py``.
``toy_reconstructor``
    An exact toy LLM attacker in place of the shipped SmolLM2 for the ``llm`` attack
    (:class:`MemoryReconstructor`; ``dpcore.commands.attack._reconstructor`` returns it): it has
    "memorised" the sentences it is given (``.memorise(texts)``, lower-cased) and replies with the
    memorised sentence sharing most words with the text it reads when that is at least half of
    them, else with the text itself (it copies). Its ``texts_read`` counts the texts it was
    given. The shipped model runs the attack from the CLI as docs/guides/attack-utility.md shows it
    (``tests/test_docs_commands.py``).
``ray_runtime``
    One local Ray (2 CPUs) for the pytest worker, started by the first test that asks for it and
    stopped after the last test of the run of tests that ask for it (idle, it takes about 5% of
    a core). dpcore's Ray engines reuse a Ray that is already running
    (``dpcore.executor.start_ray``), so every test that runs on Ray, directly or through
    the CLI, uses this one: starting Ray costs 8–15 s, and its worker processes stay warm. Mark
    such a test (or its file) ``RAY_GROUP`` as well, so that all of them run in the same worker.
    A test about starting or stopping Ray itself (``tests/test_no_orphans.py``) starts its own,
    in a process of its own.
"""

from __future__ import annotations

import functools
import json
import os
from collections.abc import Callable
from typing import Any, NamedTuple, NoReturn

import pytest

#: One compute thread per pytest worker (see the module's docstring). ``setdefault``: a run that
#: sets its own keeps it.
ONE_THREAD_ENV = {
    "OMP_NUM_THREADS": "1",
    "OPENBLAS_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "DPCORE_ORT_THREADS": "1",
    "DPCORE_WORKERS": "1",
    # a worker runs every model and vocabulary of the suite: one load each, as before the memory
    # budget (dpcore.models.resident; tests/test_resident.py sets its own)
    "DPCORE_RESIDENT_MIB": "1024",
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

    def ok(self) -> str:
        """The run's stdout, once it exited 0 (else the assertion shows the end of its stderr)."""
        assert self.code == 0, self.err[-2000:]
        return self.out

    def json(self) -> Any:
        """The JSON the run printed (``--json``), once it exited 0."""
        return json.loads(self.ok())


def need(reason: str) -> NoReturn:
    """A prerequisite that CI installs is missing: fail in CI (``CI`` set), skip elsewhere.

    ``reason`` says what is missing and how to install it.
    """
    if os.environ.get("CI"):
        pytest.fail(f"missing in CI, whose .ci/run installs it: {reason}")
    pytest.skip(reason)


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


#: The xdist group of the tests that read ``verdicts_check``: they run in one worker, which runs
#: the check once.
VERDICTS_GROUP = pytest.mark.xdist_group("verdicts-shipped")


@pytest.fixture(scope="session")
def verdicts_check() -> CliRun:
    """``python -m dpcore verdicts --check --json`` on the shipped table, run once per pytest
    worker (what CI checks; about 2 minutes alone here, 5 in the suite). Its report
    (``.json()``) names each rerun row's verdict (``check_now``); the rows' plans are the shipped
    file's (``check.plan`` of each row). Mark the tests that read it ``VERDICTS_GROUP``."""
    import contextlib
    import io

    from dpcore.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["verdicts", "--check", "--json"])
    return CliRun(code, out.getvalue(), err.getvalue())


class ToyScoringLM:
    """The ``toy_lm`` fixture's model (see the module's docstring)."""

    name = "toy"

    def __init__(self) -> None:
        self.prompts_scored = 0

    def prompt_ids(self, prompt: str) -> Any:
        import numpy as np

        return np.asarray([hash(w) % 10_000 for w in prompt.split()], dtype=np.int64)

    def answer_ids(self, text: str) -> Any:
        return self.prompt_ids(text)

    def log_likelihoods(self, prompts: Any, answers: Any) -> Any:
        import math

        import numpy as np

        self.prompts_scored += len(prompts)
        return np.asarray(
            [
                [
                    sum(math.log(0.6 if a in set(p.tolist()) else 0.05) for a in answer.tolist())
                    for answer in answers
                ]
                for p in prompts
            ]
        )


@pytest.fixture
def toy_lm(monkeypatch: pytest.MonkeyPatch) -> ToyScoringLM:
    """The ``lm`` distinguisher's model replaced by :class:`ToyScoringLM` (see the module's docstring)."""
    from dpcore.rewriter import lmscore

    toy = ToyScoringLM()
    monkeypatch.setattr(lmscore, "default_model", lambda: toy)
    return toy


class MemoryReconstructor:
    """The ``toy_reconstructor`` fixture's attacker (see the module's docstring)."""

    name = "toy-memory"

    def __init__(self) -> None:
        self.memory: list[str] = []
        self.texts_read = 0

    def memorise(self, texts: Any) -> MemoryReconstructor:
        self.memory = [" ".join(str(t).lower().split()) for t in texts]
        return self

    def reconstruct(self, texts: Any, *, progress: Any = None) -> list[str]:
        out = []
        for t in texts:
            words = str(t).split()
            self.texts_read += 1
            best = max(self.memory, key=lambda m: len(set(m.split()) & set(words)), default="")
            shared = len(set(best.split()) & set(words))
            out.append(best if words and shared >= len(set(words)) / 2 else str(t))
        if progress is not None:
            progress(len(out), len(out))
        return out


@pytest.fixture
def toy_reconstructor(monkeypatch: pytest.MonkeyPatch) -> MemoryReconstructor:
    """The ``llm`` attack's model replaced by :class:`MemoryReconstructor` (see the module's docstring)."""
    from dpcore.commands import attack

    toy = MemoryReconstructor()
    monkeypatch.setattr(attack, "_reconstructor", lambda: toy)
    return toy


#: The xdist group of the tests that use ``ray_runtime``: they run in one worker, on one Ray.
RAY_GROUP = pytest.mark.xdist_group("ray")


class _RayRuntime:
    """The worker's one local Ray: its stopper while it runs, None while none does."""

    stop: Callable[[], None] | None = None


_RAY = _RayRuntime()


@pytest.fixture
def ray_runtime() -> None:
    """One local Ray for this pytest worker (see the module's docstring); skips without Ray."""
    pytest.importorskip("ray")
    if _RAY.stop is None:
        from dpcore.executor import start_ray

        _RAY.stop = start_ray(None, 2)


def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> None:
    """Stop the worker's Ray after the last test of a run of tests that use it.

    Idle, a local Ray's processes use about 5% of a core (0.047 s a second, measured
    2026-12-04); kept until the session's end, that was about 40 s of CPU taken from the other
    tests. The ``RAY_GROUP`` tests run one after another in one worker, so Ray starts once; a
    later test that asks for it again starts it again.
    """
    wanted = nextitem is not None and "ray_runtime" in getattr(nextitem, "fixturenames", ())
    if _RAY.stop is not None and not wanted:
        stop, _RAY.stop = _RAY.stop, None
        stop()
