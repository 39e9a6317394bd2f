"""Shared-server safety: every Streamlit cache in the dashboard is bounded.

A cache without ``max_entries`` grows with every distinct input a visitor can type, so one visitor
could exhaust the server's memory. This static check parses ``app.py`` and ``pages/*.py`` and
requires an explicit, modest ``max_entries`` on every ``st.cache_data`` and ``st.cache_resource``
(resources such as embeddings are large, so their bound is small), and a ``max_size`` on every
``st.cache_data``.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SOURCES = [ROOT / "app.py", *sorted((ROOT / "pages").glob("*.py"))]
LIMITS = {"cache_data": 4096, "cache_resource": 8}


def _cache_decorators(tree: ast.AST) -> list[tuple[str, int, str, ast.expr]]:
    """(function name, line, cache kind, decorator node) for every st.cache_* decorator."""
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        for dec in node.decorator_list:
            target = dec.func if isinstance(dec, ast.Call) else dec
            if isinstance(target, ast.Attribute) and target.attr.startswith("cache"):
                found.append((node.name, dec.lineno, target.attr, dec))
    return found


def _all_decorators() -> list[tuple[str, str, int, str, ast.expr]]:
    out = []
    for path in SOURCES:
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for name, line, kind, dec in _cache_decorators(tree):
            out.append((path.relative_to(ROOT).as_posix(), name, line, kind, dec))
    return out


def test_the_pages_use_caches_at_all() -> None:
    kinds = {kind for *_, kind, _ in _all_decorators()}
    assert {"cache_data", "cache_resource"} <= kinds, kinds


@pytest.mark.parametrize(
    "where,kind,dec",
    [(f"{path}:{line} {name}", kind, dec) for path, name, line, kind, dec in _all_decorators()],
    ids=lambda v: v if isinstance(v, str) else "",
)
def test_every_cache_has_a_bounded_max_entries(where: str, kind: str, dec: ast.expr) -> None:
    assert kind in LIMITS, f"{where}: use st.cache_data or st.cache_resource, not st.{kind}"
    assert isinstance(dec, ast.Call), f"{where}: bare @st.{kind} has no max_entries"
    kw = {k.arg: k.value for k in dec.keywords}
    assert "max_entries" in kw, f"{where}: @st.{kind} needs max_entries"
    value = kw["max_entries"]
    assert isinstance(value, ast.Constant) and isinstance(value.value, int), (
        f"{where}: max_entries must be an integer literal"
    )
    assert 1 <= value.value <= LIMITS[kind], f"{where}: max_entries={value.value} is not a modest bound"


@pytest.mark.parametrize(
    "where,dec",
    [
        (f"{path}:{line} {name}", dec)
        for path, name, line, kind, dec in _all_decorators()
        if kind == "cache_data"
    ],
    ids=lambda v: v if isinstance(v, str) else "",
)
def test_every_data_cache_is_bounded_by_size_too(where: str, dec: ast.expr) -> None:
    """Entries alone do not bound memory (one entry can be large); max_size does."""
    assert isinstance(dec, ast.Call)
    kw = {k.arg: k.value for k in dec.keywords}
    assert "max_size" in kw, f"{where}: @st.cache_data needs max_size"
    value = kw["max_size"]
    assert isinstance(value, ast.Constant) and str(value.value).endswith("MB"), where
    assert int(str(value.value)[:-2]) <= 64, f"{where}: at most 64MB per cache"
