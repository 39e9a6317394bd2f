"""The README's "Using dpcore as a library" block runs as printed (with torch unimportable), and
the notebook entry points' docstring examples pass."""

from __future__ import annotations

import doctest
import importlib
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def library_block() -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    start = text.index("## Using dpcore as a library")
    begin = text.index("```python", start) + len("```python")
    return text[begin : text.index("```", begin)]


def test_readme_library_block_runs_without_torch() -> None:
    blocker = (
        "import sys, importlib.abc\n"
        "class _Block(importlib.abc.MetaPathFinder):\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name.split('.')[0] in ('torch', 'transformers'):\n"
        "            raise ImportError(name)\n"
        "sys.meta_path.insert(0, _Block())\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", blocker + library_block()],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    lines = out.stdout.splitlines()
    assert lines[0] == "violates 13.74"  # as the README's comment says
    assert "UMLDP with ε = 3" in lines[1]
    assert lines[-1].startswith(("not-detected ", "violates "))


def test_every_top_level_entry_point_has_a_docstring_example() -> None:
    import dpcore

    missing = [n for n in sorted(dpcore._LAZY) if ">>>" not in (getattr(dpcore, n).__doc__ or "")]
    assert missing == []


@pytest.mark.parametrize(
    "module",
    [
        "dpcore",
        "dpcore.api",
        "dpcore.audit",
        "dpcore.audit.runner",
        "dpcore.attack",
        "dpcore.attack.mask_inference",
        "dpcore.mechanisms",
        "dpcore.models.minilm",
    ],
)
def test_entry_point_docstring_examples(module: str) -> None:
    mod = importlib.import_module(module)
    finder = doctest.DocTestFinder(exclude_empty=True)
    tests = [t for t in finder.find(mod, module) if t.examples]
    assert tests, f"{module} has no docstring example"
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    for t in tests:
        runner.run(t)
    assert runner.failures == 0, f"{runner.failures} docstring example(s) of {module} failed"
