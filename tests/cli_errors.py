"""The CLI's error report on stderr, in either output mode (``dpcore.cli``).

Without ``--json`` an error is one line ``dpcore: error: MESSAGE``; with ``--json`` it is one JSON
object ``{"error": MESSAGE, "type": ..., "exit_code": N}``. :func:`error_lines` returns the
reports found in ``err`` as ``dpcore: error: MESSAGE`` lines (other ``dpcore:`` lines, such as
``dpcore: interrupted``, as they are), checking the JSON form where it is used.
"""

from __future__ import annotations

import json


def error_lines(err: str) -> list[str]:
    """Every error report of ``err`` as a ``dpcore: ...`` line (JSON objects checked and decoded)."""
    out: list[str] = []
    for ln in err.splitlines():
        if ln.startswith("dpcore:"):
            out.append(ln)
        elif ln.startswith("{") and '"error"' in ln:
            obj = json.loads(ln)
            assert set(obj) == {"error", "type", "exit_code"}, obj
            assert obj["type"] in ("usage", "invalid-input", "interrupted", "terminated"), obj
            prefix = "dpcore: error: " if obj["type"] in ("usage", "invalid-input") else "dpcore: "
            out.append(prefix + obj["error"])
    return out


def json_error(err: str) -> dict:
    """The one JSON error object of a ``--json`` run's stderr (nothing else on it but blank lines)."""
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1, err[-2000:]
    obj = json.loads(lines[0])
    assert set(obj) == {"error", "type", "exit_code"}, obj
    return obj
