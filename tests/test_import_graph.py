"""No import circles among dpcore's modules, read from the source with ``ast`` (nothing imported).

Every import of a ``dpcore`` module counts, wherever it stands: at module level, inside a
function (a function-level import only delays a circle, it does not remove it) or under
``if TYPE_CHECKING:`` (a type-only import never runs, but it still ties the two modules: a type
that two stages share lives on a floor below both, issue 60).

How an import names a module:

- ``import dpcore.a.b`` → ``dpcore.a.b``.
- ``from dpcore.a import b`` → ``dpcore.a.b`` when ``dpcore/a/b.py`` or ``dpcore/a/b/__init__.py``
  exists, otherwise ``dpcore.a`` (the package's ``__init__``); relative imports are resolved
  against the importing module's package first.
- Importing ``dpcore.a.b`` also runs ``dpcore/a/__init__.py``; that implicit parent edge is
  ignored. An explicit ``from dpcore.a import X`` (``X`` not a submodule) inside a submodule of
  ``dpcore.a`` is a real edge to the package's ``__init__`` and counts.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# TEMPORARY: circles that run through modules another change is rewriting (issue 37). Each entry
# is the exact set of modules of one strongly connected component. The test fails on any other
# circle AND on an entry here that no longer exists, so this list can only shrink; empty it as
# the circles are removed.
KNOWN_CYCLES: frozenset[frozenset[str]] = frozenset()


@dataclass(frozen=True)
class ImportEdge:
    """One import of a ``dpcore`` module by another.

    Attributes
    ----------
    source:
        The importing module (dotted name).
    target:
        The module the import names (dotted name).
    line:
        Line number of the import statement in ``source``.
    text:
        The import statement as written.
    """

    source: str
    target: str
    line: int
    text: str

    def describe(self, root: Path, top: str) -> str:
        """Return ``path:line: statement  (source -> target)`` for a failure message."""
        where = f"{_module_path(root, top, self.source)}:{self.line}"
        return f"{where}: {self.text}  ({self.source} -> {self.target})"


def _module_name(path: Path, root: Path) -> str:
    """Return the dotted module name of ``path`` relative to the directory holding the package."""
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _module_path(root: Path, top: str, module: str) -> str:
    """Return the source file of ``module`` relative to ``root``, as text (for messages)."""
    base = root.joinpath(*module.split("."))
    if (base / "__init__.py").is_file():
        return str((base / "__init__.py").relative_to(root))
    return str(base.with_suffix(".py").relative_to(root))


def _imports(tree: ast.AST) -> Iterator[ast.Import | ast.ImportFrom]:
    """Yield every import statement in ``tree`` at any depth, ``if TYPE_CHECKING:`` included."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node


def _package_of(module: str, is_package: bool) -> str:
    """Return the package a relative import in ``module`` is resolved against."""
    return module if is_package else module.rpartition(".")[0]


def import_edges(root: Path, top: str = "dpcore") -> list[ImportEdge]:
    """Return every import of a ``top`` module by a ``top`` module, read from source.

    Parameters
    ----------
    root:
        Directory holding the package directory ``top``.
    top:
        Name of the top-level package.

    Returns
    -------
    list of ImportEdge
        One edge per (statement, named module); imports of a module by itself are left out.
    """
    files = sorted((root / top).rglob("*.py"))
    modules = {_module_name(p, root) for p in files}
    edges: list[ImportEdge] = []
    for path in files:
        source = _module_name(path, root)
        is_package = path.name == "__init__.py"
        text = path.read_text(encoding="utf-8")
        lines = text.splitlines()
        for node in _imports(ast.parse(text, filename=str(path))):
            written = lines[node.lineno - 1 : node.end_lineno or node.lineno]
            statement = " ".join(line.strip() for line in written)
            targets: list[str] = []
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name == top or alias.name.startswith(top + "."):
                        targets.append(_longest_module(alias.name, modules))
            else:
                if node.level:
                    base = _package_of(source, is_package)
                    for _ in range(node.level - 1):
                        base = base.rpartition(".")[0]
                    named = f"{base}.{node.module}" if node.module else base
                else:
                    named = node.module or ""
                if named != top and not named.startswith(top + "."):
                    continue
                for alias in node.names:
                    sub = f"{named}.{alias.name}"
                    targets.append(sub if sub in modules else _longest_module(named, modules))
            for target in dict.fromkeys(targets):
                if target != source:
                    edges.append(ImportEdge(source, target, node.lineno, statement))
    return edges


def _longest_module(name: str, modules: set[str]) -> str:
    """Return ``name`` or its longest prefix that is a module of the tree."""
    while name not in modules and "." in name:
        name = name.rpartition(".")[0]
    return name


def strongly_connected(edges: list[ImportEdge]) -> list[frozenset[str]]:
    """Return the strongly connected components with more than one module (Tarjan, iterative)."""
    graph: dict[str, set[str]] = {}
    for edge in edges:
        graph.setdefault(edge.source, set()).add(edge.target)
        graph.setdefault(edge.target, set())
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    components: list[frozenset[str]] = []
    counter = 0
    for start in sorted(graph):
        if start in index:
            continue
        work: list[tuple[str, Iterator[str]]] = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            advanced = False
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                    advanced = True
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            if advanced:
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                members: set[str] = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    members.add(member)
                    if member == node:
                        break
                if len(members) > 1:
                    components.append(frozenset(members))
    return components


def describe_cycles(root: Path, top: str = "dpcore") -> dict[frozenset[str], str]:
    """Map each import circle of ``top`` to a report: its modules and the imports that form it."""
    edges = import_edges(root, top)
    report: dict[frozenset[str], str] = {}
    for component in strongly_connected(edges):
        inside = sorted(
            {e for e in edges if e.source in component and e.target in component},
            key=lambda e: (e.source, e.line, e.target),
        )
        lines = [f"import circle among {len(component)} modules: {', '.join(sorted(component))}"]
        lines += [f"    {e.describe(root, top)}" for e in inside]
        report[component] = "\n".join(lines)
    return report


def against_allowlist(
    found: dict[frozenset[str], str], known: frozenset[frozenset[str]]
) -> tuple[list[str], list[list[str]]]:
    """Split the circles found against an allowlist.

    Returns
    -------
    tuple
        ``(new, stale)``: the reports of the circles not in ``known``, and the allowlisted circles
        that no longer exist (each as its sorted modules).
    """
    new = [text for cycle, text in found.items() if cycle not in known]
    stale = sorted(sorted(cycle) for cycle in known if cycle not in found)
    return new, stale


def test_dpcore_has_no_import_circle() -> None:
    """Every circle is reported with its import lines; only KNOWN_CYCLES may remain, and must."""
    new, stale = against_allowlist(describe_cycles(ROOT), KNOWN_CYCLES)
    assert not new, "dpcore has import circles; move the shared code down:\n" + "\n\n".join(new)
    assert not stale, f"these KNOWN_CYCLES no longer exist; delete them from the list: {stale}"


def _write(root: Path, rel: str, text: str) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def test_checker_finds_a_circle_in_a_synthetic_package(tmp_path: Path) -> None:
    """A circle held by a function-level import, through a package ``__init__``, is found."""
    _write(tmp_path, "pkg/__init__.py", "")
    _write(tmp_path, "pkg/sub/__init__.py", "from pkg.sub.low import helper\n")
    _write(tmp_path, "pkg/sub/low.py", "def helper():\n    from pkg.high import run\n    return run\n")
    _write(tmp_path, "pkg/high.py", "from pkg import sub\n\ndef run():\n    return sub\n")
    _write(
        tmp_path,
        "pkg/typed.py",
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg.ok import x\n",
    )
    _write(tmp_path, "pkg/ok.py", "from . import typed\n")
    found = describe_cycles(tmp_path, "pkg")
    typed = frozenset({"pkg.ok", "pkg.typed"})  # a type-only import counts
    assert set(found) == {frozenset({"pkg.sub", "pkg.sub.low", "pkg.high"}), typed}
    assert "pkg/typed.py:3: from pkg.ok import x" in found[typed]
    found.pop(typed)
    report = next(iter(found.values()))
    assert "pkg/sub/low.py:2: from pkg.high import run" in report
    assert "pkg/high.py:1: from pkg import sub" in report
    # the allowlist: a listed circle passes; a listed circle that is gone is reported as stale
    assert against_allowlist(found, frozenset(found)) == ([], [])
    assert against_allowlist(found, frozenset())[0] == [report]
    gone = frozenset({"pkg.gone", "pkg.typed"})
    assert against_allowlist(found, frozenset({*found, gone})) == ([], [["pkg.gone", "pkg.typed"]])


def test_checker_resolves_relative_and_package_imports(tmp_path: Path) -> None:
    """``from .. import X`` of a name in a package ``__init__`` is an edge to that ``__init__``."""
    _write(tmp_path, "pkg/__init__.py", "from pkg.a.b import VALUE\n")
    _write(tmp_path, "pkg/a/__init__.py", "")
    _write(tmp_path, "pkg/a/b.py", "from .. import other\nVALUE = 1\n")
    _write(tmp_path, "pkg/other.py", "from . import VALUE\n")
    targets = {(e.source, e.target) for e in import_edges(tmp_path, "pkg")}
    assert targets == {("pkg", "pkg.a.b"), ("pkg.a.b", "pkg.other"), ("pkg.other", "pkg")}
    assert set(describe_cycles(tmp_path, "pkg")) == {frozenset({"pkg", "pkg.a.b", "pkg.other"})}


def test_known_cycles_name_existing_modules() -> None:
    """Every allowlisted module exists, so a rename cannot silently keep an entry alive."""
    modules = {m for cycle in KNOWN_CYCLES for m in cycle}
    assert sorted(m for m in modules if not (ROOT / _module_path(ROOT, "dpcore", m)).is_file()) == []


def test_correct_mechanisms_never_import_the_flawed_ones() -> None:
    """:mod:`dpcore.flawed` registers itself into :mod:`dpcore.mechanisms`' registry, never the reverse."""
    wrong = [
        e.describe(ROOT, "dpcore")
        for e in import_edges(ROOT)
        if (e.source == "dpcore.mechanisms" or e.source.startswith("dpcore.mechanisms."))
        and (e.target == "dpcore.flawed" or e.target.startswith("dpcore.flawed."))
    ]
    assert wrong == []


@pytest.mark.parametrize(
    "setup",
    [
        "from dpcore.audit import audit\nfrom dpcore.mechanisms import VECTOR_MECHANISMS\n"
        "names = VECTOR_MECHANISMS.names()",
        "from dpcore.commands.listing import rows\n"
        "names = [r['name'] for r in rows() if r['family'] == 'vector']",
        "import dpcore\ndpcore.create_mechanism('dptext', epsilon=1.0, dim=2)\n"
        "names = dpcore.mechanisms.VECTOR_MECHANISMS.names()",
    ],
    ids=["audit", "cli-list", "create_mechanism"],
)
def test_flawed_mechanisms_are_registered_where_they_are_listed(setup: str) -> None:
    """In a fresh interpreter, the audit, ``list`` and ``dpcore.create_mechanism`` see the flawed
    reproductions after the correct mechanisms, as when :mod:`dpcore.mechanisms` imported them."""
    code = f"{setup}\nprint(','.join(names))"
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120, check=False
    )
    assert proc.returncode == 0, proc.stderr
    names = proc.stdout.strip().split(",")
    assert names[-4:] == ["adept", "dpnr", "dptext", "dptext-resample"], names
    assert "laplace" in names[:-4]


def test_the_pair_test_floor_imports_no_audit() -> None:
    """``dpcore.pairtest`` sits below every audit (issue 60): it imports none of them, and the
    rewriter audit reaches the pair test without loading the text audit."""
    audits = ("dpcore.audit", "dpcore.textaudit", "dpcore.rewriter", "dpcore.verdicts")
    up = [
        e.describe(ROOT, "dpcore")
        for e in import_edges(ROOT)
        if e.source.startswith("dpcore.pairtest") and e.target.startswith(audits)
    ]
    assert up == []
    code = "import sys, dpcore.rewriter.audit; print(sorted(m for m in sys.modules if 'dpcore.' in m))"
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    loaded = out.stdout.strip()
    assert out.returncode == 0 and "dpcore.pairtest.estimator" in loaded and "dpcore.textaudit" not in loaded


def test_no_mechanism_imports_the_attack_room_for_a_model() -> None:
    """Models and devices live in :mod:`dpcore.models` (issue 60): the mechanisms (vector and
    text), the rewriters, the audits and the pair test import nothing of :mod:`dpcore.attack`,
    and :mod:`dpcore.models` imports no mechanism, attack or audit."""
    rooms = ("dpcore.mechanisms", "dpcore.text", "dpcore.rewriter", "dpcore.textaudit", "dpcore.pairtest")
    edges = import_edges(ROOT)
    wrong = [
        e.describe(ROOT, "dpcore")
        for e in edges
        if e.source.startswith(rooms) and e.target.split(".")[:2] == ["dpcore", "attack"]
    ]
    assert wrong == []
    above = ("dpcore.attack", "dpcore.text", "dpcore.rewriter", "dpcore.audit", "dpcore.mechanisms")
    up = [
        e.describe(ROOT, "dpcore")
        for e in edges
        if e.source.startswith("dpcore.models") and e.target.startswith(above)
    ]
    assert up == []
