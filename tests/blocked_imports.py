"""Run a Python snippet in a child process where some top-level packages cannot be imported."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def blocker_prelude(blocked: Sequence[str], *, absent: bool = False) -> str:
    """Code that makes importing any of ``blocked`` raise ImportError (a meta-path finder, not
    ``sys.modules[name] = None``, which scipy's array-API checks trip over). ``absent=True``
    also makes ``importlib.util.find_spec`` return None for them, as if they were not installed."""
    code = (
        "import sys, importlib.abc, importlib.util\n"
        f"BLOCKED = {tuple(blocked)!r}\n"
        "class _Block(importlib.abc.MetaPathFinder):\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name.split('.')[0] in BLOCKED:\n"
        "            raise ImportError(f'{name} is blocked by the test')\n"
        "        return None\n"
        "sys.meta_path.insert(0, _Block())\n"
    )
    if absent:
        code += (
            "_orig = importlib.util.find_spec\n"
            "importlib.util.find_spec = (\n"
            "    lambda n, p=None: None if n.split('.')[0] in BLOCKED else _orig(n, p)\n"
            ")\n"
        )
    return code


def run_blocked(
    code: str, blocked: Sequence[str], *, absent: bool = False, timeout: float = 300
) -> subprocess.CompletedProcess:
    """Run ``code`` (dedented) from the repository root with ``blocked`` unimportable."""
    return subprocess.run(
        [sys.executable, "-c", blocker_prelude(blocked, absent=absent) + textwrap.dedent(code)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=timeout,
    )
