"""dpcore's side of the worker protocol: start the worker script, frame messages, detect death.

:mod:`dpcore.textaudit._subprocess_worker` is the other side (standard library only, run by path
with another environment's interpreter); its docstring describes the messages. This module holds
what both users of a worker share, and imports nothing of theirs:

- :mod:`dpcore.textaudit.subprocess_adapter` samples a sanitizer through a :class:`WorkerProcess`;
- :mod:`dpcore.textaudit.envs` starts one in a freshly installed environment to check that the
  library imports (``hello``).

Framing: ``b"DPCW"``, a 4-byte big-endian length, then that many bytes of UTF-8 JSON.
"""

from __future__ import annotations

import os
import select
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from dpcore.validation import DPCoreError

__all__ = [
    "MAGIC",
    "PROTOCOL",
    "START_SECONDS",
    "WORKER_DEFAULT_ENV",
    "WORKER_SCRIPT",
    "WorkerDied",
    "WorkerProcess",
]

#: The worker script, run by path with the other environment's interpreter.
WORKER_SCRIPT = Path(__file__).with_name("_subprocess_worker.py")
#: First bytes of every frame, and the protocol version the worker announces in ``ready``; both
#: must match :mod:`dpcore.textaudit._subprocess_worker`.
MAGIC = b"DPCW"
PROTOCOL = 1
#: Seconds the worker may take to start and answer ``ready`` (a cold interpreter, a slow disk).
START_SECONDS = 120.0
#: Environment variables set for the worker unless the user set them: one thread per library
#: (BLAS, OpenMP, numba; the audit runs its own processes), and a fixed string hash seed, so
#: that a library iterating a ``set`` draws the same outputs in every process for one seed.
WORKER_DEFAULT_ENV = {
    "PYTHONHASHSEED": "0",
    "OMP_NUM_THREADS": "1",
    "OPENBLAS_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "NUMBA_NUM_THREADS": "1",
    "PYTHONIOENCODING": "utf-8",
}


class WorkerDied(RuntimeError):
    """The worker process ended, or broke the protocol, during a call."""


def _tail(fh: Any, limit: int = 4000) -> str:
    """The last meaningful line the worker wrote on its stderr ('' when captured nothing)."""
    if fh is None:
        return ""
    try:
        fh.flush()
        size = fh.seek(0, os.SEEK_END)
        fh.seek(max(0, size - limit))
        text = fh.read().decode("utf-8", "replace")
    except (OSError, ValueError):
        return ""
    lines = [ln.strip() for ln in text.splitlines() if any(c.isalnum() for c in ln)]
    return lines[-1][:300] if lines else ""


class WorkerProcess:
    """One running worker process, owned by the process that started it.

    Starting it waits for the worker's ``ready`` message and checks its protocol version.

    Parameters
    ----------
    python:
        The interpreter that runs :data:`WORKER_SCRIPT`.
    env:
        The worker's whole environment.
    label:
        How error messages name the worker's user (a sanitizer, "the new environment").
    capture:
        Keep the worker's stderr in a temporary file, and quote its last line when it dies;
        otherwise it goes to this process's stderr.

    Raises
    ------
    DPCoreError
        The interpreter cannot be started.
    WorkerDied
        The worker ended, or did not speak the protocol, before it was ready.
    """

    def __init__(self, python: str, env: dict[str, str], label: str, capture: bool) -> None:
        self.label = label
        self.python = python
        self.log = tempfile.TemporaryFile(prefix="dpcore-worker-") if capture else None
        try:
            self.proc = subprocess.Popen(
                [python, str(WORKER_SCRIPT)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=self.log if capture else None,
                env=env,
                close_fds=True,
            )
        except OSError as exc:
            self._close_log()
            raise DPCoreError(f"{label}: cannot start {python}: {exc.strerror or exc}") from None
        self.pid = os.getpid()
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.wfd = self.proc.stdin.fileno()
        self.rfd = self.proc.stdout.fileno()
        self.ready = self.recv(START_SECONDS, "starting")
        if self.ready.get("op") != "ready" or self.ready.get("protocol") != PROTOCOL:
            self.kill()
            raise WorkerDied(
                f"{label}: the worker answered {str(self.ready)[:120]!r} instead of its protocol"
            )

    # -- io
    def _died(self, doing: str) -> WorkerDied:
        code = self.proc.poll()
        if code is None:
            self.kill()
            code = self.proc.returncode
        how = (
            f"was killed by signal {-code}" if code is not None and code < 0 else f"exited with status {code}"
        )
        last = _tail(self.log)
        return WorkerDied(
            f"{self.label}: the worker process ({self.python}) {how} while {doing}"
            + (f"; its last line on stderr: {last}" if last else "")
        )

    def send(self, msg: dict[str, Any], doing: str) -> None:
        """Write one frame; ``doing`` names the call in the error if the worker is gone."""
        import json

        body = json.dumps(msg, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
        view = memoryview(MAGIC + len(body).to_bytes(4, "big") + body)
        try:
            while view:
                n = os.write(self.wfd, view)
                view = view[n:]
        except (BrokenPipeError, ConnectionResetError, OSError):
            raise self._died(doing) from None

    def _read(self, n: int, deadline: float | None, doing: str) -> bytes:
        chunks: list[bytes] = []
        while n > 0:
            wait = 1.0 if deadline is None else max(0.0, min(1.0, deadline - time.monotonic()))
            ready, _, _ = select.select([self.rfd], [], [], wait)
            if not ready:
                if deadline is not None and time.monotonic() >= deadline:
                    self.kill()
                    raise WorkerDied(
                        f"{self.label}: the worker did not answer within the time allowed for {doing}"
                    )
                if self.proc.poll() is not None:  # dead, its pipe held open by a grandchild
                    raise self._died(doing)
                continue
            b = os.read(self.rfd, min(n, 1 << 20))
            if not b:
                raise self._died(doing)
            chunks.append(b)
            n -= len(b)
        return b"".join(chunks)

    def recv(self, timeout: float | None, doing: str) -> dict[str, Any]:
        """Read one frame within ``timeout`` seconds (``None``: wait while the worker lives)."""
        import json

        deadline = None if timeout is None else time.monotonic() + timeout
        head = self._read(8, deadline, doing)
        if head[:4] != MAGIC:
            try:  # show what it sent (a little more if it is there at once)
                more = os.read(self.rfd, 120) if select.select([self.rfd], [], [], 0.2)[0] else b""
            except OSError:
                more = b""
            self.kill()
            raise WorkerDied(
                f"{self.label}: the worker wrote something that is not dpcore's protocol while {doing}: "
                f"{(head + more)[:120]!r}"
            )
        body = self._read(int.from_bytes(head[4:], "big"), deadline, doing)
        try:
            msg = json.loads(body.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            self.kill()
            raise WorkerDied(
                f"{self.label}: the worker sent a frame that is not JSON while {doing}"
            ) from None
        if not isinstance(msg, dict):
            self.kill()
            raise WorkerDied(f"{self.label}: the worker sent {type(msg).__name__} instead of an object")
        return msg

    def request(self, msg: dict[str, Any], timeout: float | None, doing: str) -> dict[str, Any]:
        """Send ``msg`` and return the worker's reply."""
        self.send(msg, doing)
        return self.recv(timeout, doing)

    @property
    def alive(self) -> bool:
        """True while the worker process runs."""
        return self.proc.poll() is None

    # -- ending
    def _close_log(self) -> None:
        if self.log is not None:
            try:
                self.log.close()
            except OSError:
                pass

    def kill(self) -> None:
        """Kill it now (this process must own it)."""
        if self.pid != os.getpid():
            return
        try:
            self.proc.kill()
        except OSError:
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:  # pragma: no cover
            pass

    def close(self) -> None:
        """End of input (it exits), a short wait, then SIGKILL; close the pipes."""
        if self.pid != os.getpid():
            self.forget()
            return
        for f in (self.proc.stdin,):
            try:
                if f is not None:
                    f.close()
            except OSError:
                pass
        try:
            self.proc.wait(timeout=2.0)
        except subprocess.TimeoutExpired:
            self.kill()
        try:
            if self.proc.stdout is not None:
                self.proc.stdout.close()
        except OSError:
            pass
        self._close_log()

    def forget(self) -> None:
        """In a forked child: close the inherited copies of the pipes; leave the worker alone."""
        for f in (self.proc.stdin, self.proc.stdout):  # this process's copies only
            try:
                if f is not None:
                    f.close()  # nothing buffered: requests go out with os.write
            except (OSError, ValueError):
                pass
        self.proc.returncode = 0  # never wait for, or kill, the parent's child
        self.proc.stdin = self.proc.stdout = None
        self._close_log()
