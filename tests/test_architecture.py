"""Structural rules: dpcore never imports Streamlit; heavy libraries load lazily."""

from __future__ import annotations

import ast
import pkgutil
import subprocess
import sys
from pathlib import Path

import dpcore

ROOT = Path(__file__).resolve().parents[1]
HEAVY = ("streamlit", "torch", "transformers")


def _all_modules() -> list[str]:
    return [m.name for m in pkgutil.walk_packages(dpcore.__path__, "dpcore.")]


def test_dpcore_source_never_mentions_streamlit_imports() -> None:
    offenders = [
        str(p.relative_to(ROOT))
        for p in (ROOT / "dpcore").rglob("*.py")
        if "import streamlit" in p.read_text(encoding="utf-8")
        or "from streamlit" in p.read_text(encoding="utf-8")
    ]
    assert offenders == []


def _heavy_modules_after(setup: str) -> str:
    """Run ``setup`` in a fresh interpreter; return the heavy libraries it left imported."""
    report = "import sys\nprint(','.join(k for k in HEAVY if k in sys.modules))"
    code = f"HEAVY = {HEAVY!r}\n{setup}\n{report}\n"
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120, check=False
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.strip()


def test_importing_every_dpcore_module_loads_neither_streamlit_nor_torch() -> None:
    setup = f"import importlib\nfor m in {_all_modules()!r}:\n    importlib.import_module(m)"
    heavy = _heavy_modules_after(setup)
    assert heavy == "", f"imported at module level: {heavy}"


def test_cli_starts_without_heavy_imports() -> None:
    assert _heavy_modules_after("from dpcore.cli import build_parser\nbuild_parser()") == ""


def test_every_page_is_listed_and_guards_navigation() -> None:
    """Each page calls ensure_navigation() (Streamlit's legacy pages/ mode) and is in PAGES."""
    from pages._shared import PAGES

    listed = {p.path for p in PAGES}
    for path in sorted((ROOT / "pages").glob("*.py")):
        if path.name.startswith("_"):
            continue
        rel = f"pages/{path.name}"
        assert rel in listed, f"{rel} is not in pages._shared.PAGES"
        assert "ensure_navigation()" in path.read_text(encoding="utf-8"), rel


def _keyword_true(call: ast.Call, name: str) -> bool:
    return any(
        k.arg == name and isinstance(k.value, ast.Constant) and k.value.value is True for k in call.keywords
    )


def test_every_model_load_stays_offline() -> None:
    # no network at run time: every from_pretrained in dpcore reads local files only
    calls, offenders = 0, []
    for path in sorted((ROOT / "dpcore").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "from_pretrained":
                calls += 1
                if not _keyword_true(node, "local_files_only"):
                    offenders.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert calls >= 9 and offenders == []
