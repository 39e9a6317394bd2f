"""Helpers shared by CLI commands: output, progress on stderr, argument types."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import Any

from dpcore.jsonutil import dumps

__all__ = ["emit_json", "stderr_progress"]


def emit_json(obj: Any) -> None:
    """Print ``obj`` as strict JSON (∞ as ``"inf"``) on stdout."""
    print(dumps(obj, indent=2))


def stderr_progress(label: str, *, enabled: bool = True) -> Callable[[int, int], None] | None:
    """A ``progress(done, total)`` callback that reports on stderr, rate-limited.

    On a terminal it redraws one percentage line (every 0.5 s). When stderr is a pipe or a file
    (``2>&1 | tee log``) it writes a plain line at most every 10 s, so long runs still show
    progress in logs and short runs print nothing.
    """
    if not enabled:
        return None
    tty = sys.stderr.isatty()
    interval = 0.5 if tty else 10.0
    state = {"last": time.monotonic(), "shown": False}

    def report(done: int, total: int) -> None:
        now = time.monotonic()
        finished = done >= total
        if not finished and now - state["last"] < interval:
            return
        if finished and not state["shown"] and not tty:
            return
        state["last"] = now
        state["shown"] = True
        pct = 100.0 * done / max(total, 1)
        if tty:
            end = "\n" if finished else ""
            print(f"\r{label}: {pct:5.1f}%", end=end, file=sys.stderr, flush=True)
        else:
            print(f"{label}: {pct:5.1f}% ({done:,} of {total:,})", file=sys.stderr, flush=True)

    return report
