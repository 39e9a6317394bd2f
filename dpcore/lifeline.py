"""Processes started for a run end with the process that started them.

A scheduler's time-out, ``timeout``, ``kill`` or a stopped notebook kernel ends the dpcore process
with SIGTERM or SIGKILL; the processes it started for the run have no use after that and must not
keep a core busy (two forked workers once ran on for 31 minutes after a time-out).

Forked workers and probe processes (:func:`worker_init`, :func:`die_with_parent`)
    On Linux each one asks the kernel for SIGKILL when its parent ends
    (``prctl(PR_SET_PDEATHSIG, SIGKILL)``), then checks that its parent is still the process that
    started it (the parent may have ended before the request was made). The signal follows the
    *thread* that forked the child (a pool whose first ``submit`` ran in a thread that then ended
    lost its workers: ``BrokenProcessPool``). With the fork context a ``ProcessPoolExecutor``
    forks all its workers in the thread of its first ``submit`` (its management thread forks only
    with ``max_tasks_per_child``, unused here), and dpcore creates, uses and shuts down each pool
    and probe in one call of one thread, which so outlives them. Where ``prctl`` is not available,
    a daemon thread in the child checks ``os.getppid()`` every second (:data:`POLL_SECONDS`) and
    ends the child when the parent has changed (on Windows, where a parent's death does not
    change it, this does nothing).
A pool that is given up (:func:`kill_workers`)
    When the run is interrupted (Ctrl-C) or fails, the pool's workers are killed at once instead
    of finishing the shards they hold: their results would be thrown away.
A local Ray started for the run (:func:`start_sweeper`)
    Ray ties its own GCS server, raylet and monitors to the driver (the same ``PR_SET_PDEATHSIG``),
    and its workers exit about 2.5 s after their raylet; but its dashboard agent and runtime-env
    agent outlived a SIGKILLed driver by about 60 s (they exit only after failing to report the
    raylet's death to the GCS, which died too). Every process of that Ray inherits an environment
    variable with a token of the run (:data:`TOKEN_VARIABLE`); a small sweeper process, started
    before Ray, records every :data:`SCAN_SECONDS` the processes of the driver's tree that carry
    the token and their descendants (an agent overwrites its environment with its title), and
    when its pipe from the driver closes (the driver ended, however, or stopped Ray) kills those
    still alive and anything else carrying the token (Linux ``/proc``; elsewhere Ray's own reaper
    is all there is).

``python -m pytest tests/test_no_orphans.py`` checks all three against the real CLI.
"""

from __future__ import annotations

import os
import secrets
import signal
import subprocess
import sys
import threading
import time
from typing import Any

__all__ = [
    "POLL_SECONDS",
    "TOKEN_VARIABLE",
    "Sweeper",
    "die_with_parent",
    "kill_workers",
    "start_sweeper",
    "worker_init",
]

#: How often a child without ``prctl`` checks that its parent is still there (seconds).
POLL_SECONDS = 1.0
#: Environment variable that marks every process of a local Ray started for one run.
TOKEN_VARIABLE = "DPCORE_RUN_TOKEN"
#: How often the sweeper records the processes of the run's Ray while the driver lives (seconds).
SCAN_SECONDS = 0.5
#: Longest time the sweeper keeps looking for marked processes after the driver ended (seconds).
SWEEP_SECONDS = 10.0

_PR_SET_PDEATHSIG = 1


def _set_pdeathsig() -> bool:
    """``prctl(PR_SET_PDEATHSIG, SIGKILL)`` in this process; False where it is not available."""
    if not sys.platform.startswith("linux"):
        return False
    import ctypes

    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return False
    prctl.restype = ctypes.c_int
    prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]
    return prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) == 0


def _watch_parent(parent: int) -> None:
    while True:
        time.sleep(POLL_SECONDS)
        if os.getppid() != parent:
            os._exit(1)


def die_with_parent(parent: int, *, use_prctl: bool = True) -> str:
    """In a child process: end it when the process ``parent`` (its parent's pid) ends.

    Returns how: ``"pdeathsig"`` (the kernel sends SIGKILL) or ``"poll"`` (a daemon thread checks
    every :data:`POLL_SECONDS`; also with ``use_prctl=False``). Ends this process at once when
    its parent is already gone. Call it only in a process forked or started by a thread that
    outlives it (see the module docstring).
    """
    how = "pdeathsig" if use_prctl and _set_pdeathsig() else "poll"
    if os.getppid() != parent:  # the parent ended before the request: nobody waits for this one
        os._exit(1)
    if how == "poll":
        watch = threading.Thread(target=_watch_parent, args=(parent,), name="dpcore-parent", daemon=True)
        watch.start()
    return how


def worker_init(parent: int) -> None:
    """Initializer of a pool worker: die with ``parent``, leave Ctrl-C to it, end on SIGTERM.

    The parent handles Ctrl-C (and stops the pool); SIGTERM is reset to its default because a
    worker forked while the parent turns SIGTERM into an exception would otherwise survive
    ``Process.terminate``.
    """
    die_with_parent(parent)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


def kill_workers(pool: Any) -> None:
    """Kill a :class:`~concurrent.futures.ProcessPoolExecutor`'s worker processes now.

    The work they hold is lost (their futures fail with ``BrokenProcessPool``); follow with
    ``pool.shutdown``. Does nothing for a pool without processes (a thread pool).
    """
    kill = getattr(pool, "kill_workers", None)  # Python >= 3.14
    if callable(kill):
        kill()
        return
    try:
        procs = list((getattr(pool, "_processes", None) or {}).values())
    except RuntimeError:  # pragma: no cover - the dict changed while it was copied
        procs = []
    for proc in procs:
        try:
            proc.kill()
        except (OSError, ValueError, AttributeError):  # already gone or closed
            pass
    # A worker killed while it wrote a large result (a corpus batch) leaves half a message in the
    # result pipe, and the pool's manager thread waits for the rest for ever: this process holds
    # a write end of that pipe too, so the reader never sees its end. Closing this process's
    # write end (the workers never use it here) lets the read end once the killed workers' ends
    # are gone: the manager sees a broken pool and ``shutdown`` returns.
    writer = getattr(getattr(pool, "_result_queue", None), "_writer", None)
    if writer is not None:
        try:
            writer.close()
        except OSError:  # pragma: no cover - already closed
            pass


# --- the sweeper of a local Ray ------------------------------------------------------------------


def _table() -> dict[int, tuple[int, int]]:
    """``pid -> (parent pid, start time)`` of every live process (Linux ``/proc``; no zombies)."""
    out = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as fh:
                stat = fh.read()
            fields = stat[stat.rindex(b")") + 2 :].split()
            if fields[0] not in (b"Z", b"X"):  # a dead process not yet reaped: nothing to kill
                out[int(name)] = (int(fields[1]), int(fields[19]))
        except (OSError, ValueError, IndexError):  # gone meanwhile
            continue
    return out


def _marked(pid: int, token: str) -> bool:
    """Whether the process's environment holds ``TOKEN_VARIABLE=token``."""
    try:
        with open(f"/proc/{pid}/environ", "rb") as fh:
            env = fh.read()
    except OSError:  # gone, or another user's
        return False
    return f"\0{TOKEN_VARIABLE}={token}\0".encode() in b"\0" + env + b"\0"


class _Tracker:
    """The processes of a run's Ray: those that carry the token, and their descendants.

    A process's environment as ``/proc`` shows it can be overwritten by the process itself (Ray's
    agents set their title over it), so a child of a marked process counts too: the tree is
    recorded while the driver lives, each process with its start time (against reused pids).
    """

    def __init__(self, token: str, driver: int) -> None:
        self.token, self.driver, self.me = token, driver, os.getpid()
        self.ours: dict[int, int] = {}  # pid -> start time

    def _mine(self, pid: int, ppid: int, start: int, table: dict[int, tuple[int, int]]) -> bool:
        if pid == self.me:
            return False
        if self.ours.get(pid) == start:
            return True
        parent = table.get(ppid)
        return (parent is not None and self.ours.get(ppid) == parent[1]) or _marked(pid, self.token)

    def record(self) -> None:
        """While the driver lives: add the marked processes of its tree and their descendants."""
        table = _table()
        children: dict[int, list[int]] = {}
        for pid, (ppid, _) in table.items():
            children.setdefault(ppid, []).append(pid)
        todo = list(children.get(self.driver, []))
        while todo:  # from the driver down: parents before children
            pid = todo.pop(0)
            ppid, start = table[pid]
            if self._mine(pid, ppid, start, table):
                self.ours[pid] = start
            todo.extend(children.get(pid, []))

    def targets(self) -> list[int]:
        """After the driver: recorded processes still alive, their descendants, anything marked."""
        table = _table()
        found = {pid for pid, start in self.ours.items() if table.get(pid, (0, -1))[1] == start}
        for pid, (ppid, start) in sorted(table.items(), key=lambda kv: kv[1][1]):  # by start time
            if pid not in found and pid != self.me and (ppid in found or _marked(pid, self.token)):
                found.add(pid)
                self.ours[pid] = start
        return sorted(found)


def _sweep(tracker: _Tracker, seconds: float = SWEEP_SECONDS) -> int:
    """SIGKILL the run's processes until none has been seen for 3 rounds; return how many."""
    killed: set[int] = set()
    deadline = time.monotonic() + seconds
    quiet = 0
    while quiet < 3 and time.monotonic() < deadline:
        pids = tracker.targets()
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
                killed.add(pid)
            except OSError:
                pass
        quiet = 0 if pids else quiet + 1
        time.sleep(0.2)
    return len(killed)


def _sweeper_main(token: str, driver: int) -> int:
    import select

    for name in ("SIGINT", "SIGHUP"):  # a terminal's Ctrl-C or hang-up ends the driver, not this
        if hasattr(signal, name):
            signal.signal(getattr(signal, name), signal.SIG_IGN)
    tracker = _Tracker(token, driver)
    fd = sys.stdin.fileno()
    while True:  # the driver never writes: the pipe closes when it ends or is done with Ray
        try:
            ready, _, _ = select.select([fd], [], [], SCAN_SECONDS)
            if ready and not os.read(fd, 4096):
                break
        except OSError:
            break
        tracker.record()
    _sweep(tracker)
    return 0


class Sweeper:
    """Handle on a running sweeper; :meth:`close` after the marked processes were stopped."""

    def __init__(self, token: str, proc: subprocess.Popen | None) -> None:
        self.token = token
        self.proc = proc

    @property
    def env(self) -> dict[str, str]:
        """The variable the processes to sweep must inherit."""
        return {TOKEN_VARIABLE: self.token}

    def close(self, timeout: float = SWEEP_SECONDS + 5.0) -> None:
        """Let the sweeper kill what is left of the marked processes, and wait for it."""
        proc, self.proc = self.proc, None
        if proc is None:
            return
        try:
            if proc.stdin is not None:
                proc.stdin.close()
            proc.wait(timeout=timeout)
        except (OSError, subprocess.TimeoutExpired):  # pragma: no cover
            proc.kill()
            proc.wait()


def start_sweeper() -> Sweeper:
    """Start a sweeper for the processes that will inherit ``Sweeper.env``.

    Where ``/proc`` is missing (not Linux) no process is started and :meth:`Sweeper.close` does
    nothing. The sweeper runs in its own session (a terminal's Ctrl-C or a signal to the
    driver's process group does not reach it) and ends once it has swept.
    """
    token = f"{os.getpid()}-{secrets.token_hex(8)}"
    if not sys.platform.startswith("linux") or not os.path.isdir("/proc"):
        return Sweeper(token, None)
    try:
        proc = subprocess.Popen(
            [sys.executable, "-I", os.path.abspath(__file__), "--sweep", token, str(os.getpid())],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
            close_fds=True,
        )
    except OSError:  # pragma: no cover - no process can be started: Ray's own fate-sharing only
        proc = None
    return Sweeper(token, proc)


if __name__ == "__main__":  # the sweeper: python lifeline.py --sweep TOKEN DRIVER_PID
    if len(sys.argv) == 4 and sys.argv[1] == "--sweep":
        sys.exit(_sweeper_main(sys.argv[2], int(sys.argv[3])))
    sys.exit(2)
