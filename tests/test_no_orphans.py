"""Processes a run starts end with it (issue 30, item 4 "No orphans"; see dpcore.lifeline).

Each test starts a CLI run (or a small script) in its own session, records every process it
starts as they appear (children of the run, their descendants, and any process left in its
session), signals the run's *parent process only* — as a scheduler, ``timeout`` or a stopped
notebook does — and asserts that none of the recorded processes is alive 10 s later. Whatever
happens, each test kills what it recorded (and any process of a local Ray carrying the run's
token) before it ends.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc (Linux)")

ROOT = Path(__file__).resolve().parents[1]
AUDIT = ["audit-text", "--mechanism", "santext", "--epsilon", "1", "--vocab-size", "2000"]
AUDIT += ["--screen-budget", "20000000", "--workers", "2", "--seed", "0"]
#: How long the processes may take to end after their parent was signalled: a bound on waiting
#: for that state (the watch returns as soon as none is left), not a speed requirement. 10 s was
#: too short once for a SIGINT'd audit beside three busy test workers (`ci-like`, 2026-12-06),
#: which had ended within 2 s alone.
GRACE = 30.0
#: How long a run may take to start what is to be signalled: a bound on waiting for that state
#: (a run that ends first fails at once), not a speed requirement. A fresh local Ray beside a
#: busy core took over 40 s to reach its first task (`ci-like --load 1`, 2026-12-02).
START = 180.0


def _table() -> dict[int, tuple[int, int, int, str]]:
    """``pid -> (parent pid, session, start time, command line)`` of the live processes."""
    out = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as fh:
                stat = fh.read()
            with open(f"/proc/{name}/cmdline", "rb") as fh:
                cmd = fh.read().replace(b"\0", b" ").decode(errors="replace").strip()
        except OSError:
            continue
        f = stat[stat.rindex(b")") + 2 :].split()
        if f[0] not in (b"Z", b"X"):  # zombies are dead
            out[int(name)] = (int(f[1]), int(f[3]), int(f[19]), cmd)
    return out


def _has_env(pid: int, prefix: bytes) -> bool:
    try:
        with open(f"/proc/{pid}/environ", "rb") as fh:
            return any(e.startswith(prefix) for e in fh.read().split(b"\0"))
    except OSError:
        return False


class Run:
    """A process in its own session and every process it starts, recorded as they appear."""

    def __init__(self, argv: list[str], cwd: Path) -> None:
        env = {**os.environ, "PYTHONPATH": str(ROOT), "RAY_USAGE_STATS_ENABLED": "0"}
        self.err = cwd / "stderr.txt"
        with open(self.err, "w") as err:
            self.proc = subprocess.Popen(
                argv, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=err, start_new_session=True
            )
        self.pid = self.proc.pid
        self.seen: dict[int, tuple[int, str]] = {}  # pid -> (start time, first command line)

    def scan(self) -> dict[int, tuple[int, int, int, str]]:
        table = _table()
        for pid, (ppid, sid, start, cmd) in sorted(table.items(), key=lambda kv: kv[1][2]):
            if (
                pid != self.pid
                and pid not in self.seen
                and (ppid == self.pid or ppid in self.seen or sid == self.pid)
            ):
                self.seen[pid] = (start, cmd)
        return table

    def alive(self, table: dict[int, tuple[int, int, int, str]] | None = None) -> dict[int, str]:
        table = _table() if table is None else table
        return {p: table[p][3] for p, (start, _) in self.seen.items() if p in table and table[p][2] == start}

    def children(self, table: dict[int, tuple[int, int, int, str]]) -> list[int]:
        return [p for p in self.alive(table) if table[p][0] == self.pid]

    def wait_for(self, ready: Callable[[dict], bool], what: str) -> None:
        deadline = time.monotonic() + START
        while time.monotonic() < deadline:
            table = self.scan()
            if self.proc.poll() is not None:
                pytest.fail(f"the run ended (status {self.proc.returncode}) before {what}: {self.stderr()}")
            if ready(table):
                return
            time.sleep(0.03)
        pytest.fail(f"no {what} within {START:.0f} s")

    def signal_parent_and_watch(self, sig: signal.Signals) -> dict[int, str]:
        """Signal the parent only; return what is still alive after :data:`GRACE` (empty: none)."""
        os.kill(self.pid, sig)
        deadline = time.monotonic() + GRACE
        left = self.alive(self.scan())
        while left and time.monotonic() < deadline:
            time.sleep(0.1)
            left = self.alive(self.scan())
        try:
            self.proc.wait(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            left[self.pid] = "the parent itself"
        return left

    def stderr(self) -> str:
        return self.err.read_text(errors="replace")[-2000:]

    def kill_all(self) -> None:
        """Whatever happened: kill the parent, everything recorded, and the run's Ray."""
        table = self.scan()
        token = f"DPCORE_RUN_TOKEN={self.pid}-".encode()
        doomed = set(self.alive(table)) | {p for p in table if _has_env(p, token)}
        if self.proc.poll() is None:  # once reaped, its pid may be another process's
            self.proc.kill()
        for pid in sorted(doomed):
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        try:
            os.killpg(self.pid, signal.SIGKILL)
        except OSError:
            pass
        self.proc.wait(timeout=30)


@pytest.fixture
def run(tmp_path: Path) -> Iterator[Callable[[list[str]], Run]]:
    runs: list[Run] = []

    def start(argv: list[str]) -> Run:
        runs.append(Run(argv, tmp_path))
        return runs[-1]

    yield start
    for r in runs:
        r.kill_all()


def _pool_workers(r: Run) -> Callable[[dict], bool]:
    """Two live forked children, after the first two (the rng-contract probes come first)."""
    return lambda table: len(r.children(table)) >= 2 and len(r.seen) >= 4


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL, signal.SIGINT], ids=lambda s: s.name)
def test_local_pool_workers_die_with_the_audit(run: Callable[[list[str]], Run], sig: signal.Signals) -> None:
    r = run([sys.executable, "-m", "dpcore", *AUDIT])
    r.wait_for(_pool_workers(r), "the pool's two workers")
    left = r.signal_parent_and_watch(sig)
    assert left == {}, f"still alive {GRACE:.0f} s after {sig.name} to the parent: {left}"


def _spawned(r: Run, table: dict) -> list[int]:
    return [p for p in r.children(table) if "spawn_main" in table[p][3]]


def test_rewriter_audit_workers_die_with_it(run: Callable[[list[str]], Run]) -> None:
    argv = [sys.executable, "-m", "dpcore", "audit-rewriter", "--rewriter", "planted:copy", "--epsilon", "1"]
    argv += ["--x", "the storm hit the coast", "--x-prime", "the storm hit the town", "--rewrites", "1000000"]
    argv += ["--distinguishers", "exact", "--workers", "2"]
    r = run(argv)
    r.wait_for(lambda table: len(_spawned(r, table)) >= 2, "the rewriter pool's two workers")
    left = r.signal_parent_and_watch(signal.SIGKILL)
    assert left == {}, f"still alive {GRACE:.0f} s after SIGKILL to the parent: {left}"


PROBES = """
import time
from dpcore.textaudit.contract import in_forks
in_forks([(time.sleep, (120,)), (time.sleep, (120,))])
"""


def test_rng_contract_probe_processes_die_with_their_parent(run: Callable[[list[str]], Run]) -> None:
    r = run([sys.executable, "-c", PROBES])
    r.wait_for(lambda table: len(r.children(table)) >= 2, "the two probe processes")
    left = r.signal_parent_and_watch(signal.SIGKILL)
    assert left == {}, f"still alive {GRACE:.0f} s after SIGKILL to the parent: {left}"


def test_sanitize_corpus_workers_die_with_it(run: Callable[[list[str]], Run], tmp_path: Path) -> None:
    rows = [f"{i},the patient was diagnosed with cancer in boston row {i}\n" for i in range(40_000)]
    (tmp_path / "in.csv").write_text("id,text\n" + "".join(rows))
    argv = [sys.executable, "-m", "dpcore", "sanitize-corpus", "--mechanism", "santext", "--epsilon", "2"]
    argv += ["--vocab-size", "2000", "--no-progress", "--input", "in.csv", "--output", "out"]
    argv += ["--text-column", "text", "--batch-size", "200", "--workers", "2"]
    r = run(argv)
    r.wait_for(lambda table: len(r.children(table)) >= 2, "the pool's two workers")
    left = r.signal_parent_and_watch(signal.SIGKILL)
    assert left == {}, f"still alive {GRACE:.0f} s after SIGKILL to the parent: {left}"


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM], ids=lambda s: s.name)
def test_local_ray_started_for_the_run_dies_with_it(
    run: Callable[[list[str]], Run], sig: signal.Signals
) -> None:
    """Ray's raylet, GCS, agents, workers and dpcore's sweeper: none outlives the driver."""
    pytest.importorskip("ray")
    r = run([sys.executable, "-m", "dpcore", *AUDIT, "--engine", "ray"])
    r.wait_for(
        lambda table: any("ray::_shard_task" in cmd for cmd in r.alive(table).values()),
        "Ray task drawing words",
    )
    left = r.signal_parent_and_watch(sig)
    assert left == {}, f"still alive {GRACE:.0f} s after {sig.name} to the driver: {left}"


def test_a_child_whose_parent_is_already_gone_exits_at_once() -> None:
    import multiprocessing as mp

    from dpcore.lifeline import die_with_parent

    ctx = mp.get_context("fork")
    for use_prctl in (True, False):
        p = ctx.Process(target=die_with_parent, args=(1,), kwargs={"use_prctl": use_prctl})  # not its parent
        p.start()
        p.join(10)
        assert p.exitcode == 1


POLLING_CHILD = """
import multiprocessing as mp, os, sys, time
from dpcore.lifeline import die_with_parent

def child(parent):
    print(die_with_parent(parent, use_prctl=False), flush=True)
    time.sleep(120)

if __name__ == "__main__":
    mp.get_context("fork").Process(target=child, args=(os.getpid(),)).start()
    time.sleep(120)
"""


def test_the_polling_fallback_ends_the_child_too(run: Callable[[list[str]], Run]) -> None:
    r = run([sys.executable, "-c", POLLING_CHILD])
    r.wait_for(lambda table: len(r.children(table)) >= 1, "the child")
    time.sleep(0.5)  # the child has started its watching thread
    left = r.signal_parent_and_watch(signal.SIGKILL)
    assert left == {}, f"still alive {GRACE:.0f} s after SIGKILL to the parent: {left}"


def test_kill_workers_gives_up_a_pool_at_once() -> None:
    """What an interrupted audit does with its pool: no waiting for the shards in flight."""
    import multiprocessing as mp
    from concurrent.futures import ProcessPoolExecutor

    from dpcore.lifeline import kill_workers, worker_init

    ctx = mp.get_context("fork")
    pool = ProcessPoolExecutor(2, mp_context=ctx, initializer=worker_init, initargs=(os.getpid(),))
    futures = [pool.submit(time.sleep, 3600) for _ in range(4)]
    time.sleep(0.5)
    pids = list(pool._processes)
    kill_workers(pool)
    pool.shutdown(wait=True, cancel_futures=True)
    # Given up, not waited for: no future ran to its end (an hour's sleep); each was cancelled or
    # broken by the killed pool. A state, not a clock.
    assert all(f.done() and (f.cancelled() or f.exception() is not None) for f in futures)
    assert not any(pid in _table() for pid in pids)
