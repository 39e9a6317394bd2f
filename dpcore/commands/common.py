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


def stderr_progress(label: str, *, enabled: bool) -> Callable[[int, int], None] | None:
    """A ``progress(done, total)`` callback printing a percentage on stderr (rate-limited)."""
    if not enabled:
        return None
    state = {"last": 0.0}

    def report(done: int, total: int) -> None:
        now = time.monotonic()
        if done < total and now - state["last"] < 0.5:
            return
        state["last"] = now
        pct = 100.0 * done / max(total, 1)
        end = "\n" if done >= total else ""
        print(f"\r{label}: {pct:5.1f}%", end=end, file=sys.stderr, flush=True)

    return report
