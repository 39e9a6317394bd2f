"""The text audit's shape (issue 37): small functions, and α split in one place.

Read with ``ast`` (nothing is imported):

- no function in ``dpcore/textaudit/`` has a body (its code after the docstring) over
  :data:`MAX_BODY_LINES` lines;
- no module of any audit (``dpcore/audit/``, ``dpcore/textaudit/``, ``dpcore/rewriter/``,
  ``dpcore/verdicts/``, ``dpcore/pairtest/``) but ``dpcore/pairtest/budget.py`` divides α (or
  1 − confidence): every test's level comes from :mod:`dpcore.pairtest.budget`, and the
  two-sided bounds split their α inside :mod:`dpcore.stats` (issue 60);
- no module of ``dpcore/`` but ``dpcore/executor.py`` starts a pool of worker processes or a
  Ray task (issue 60: one executor, so every pool's workers die with their parent and every
  broken pool is recovered the same way). Thread pools inside one process (BLAS work) are not
  process pools: they end with their process.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "dpcore" / "textaudit"
MAX_BODY_LINES = 120
ALPHA_NAMES = ("alpha", "confidence")


def _body_lines(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    body = fn.body
    first = body[0]
    is_doc = (
        isinstance(first, ast.Expr)
        and isinstance(first.value, ast.Constant)
        and isinstance(first.value.value, str)
    )
    if is_doc and len(body) == 1:
        return 0
    start = body[1].lineno if is_doc else first.lineno
    return int(fn.end_lineno or start) - start + 1


def long_functions(source: str, limit: int = MAX_BODY_LINES) -> list[tuple[str, int, int]]:
    """(name, line, body lines) of every function whose body is longer than ``limit``."""
    out = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            n = _body_lines(node)
            if n > limit:
                out.append((node.name, node.lineno, n))
    return out


def alpha_divisions(source: str) -> list[tuple[int, str]]:
    """(line, expression) of every division whose dividend names α or the confidence."""
    out = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
            left = ast.unparse(node.left).lower()
            if any(name in left for name in ALPHA_NAMES):
                out.append((node.lineno, ast.unparse(node)))
        if isinstance(node, ast.AugAssign) and isinstance(node.op, ast.Div):
            target = ast.unparse(node.target).lower()
            if any(name in target for name in ALPHA_NAMES):
                out.append((node.lineno, ast.unparse(node)))
    return sorted(out)


MODULES = sorted(PACKAGE.glob("*.py"))


@pytest.mark.parametrize("path", MODULES, ids=lambda p: p.name)
def test_no_function_in_the_audit_is_longer_than_the_limit(path):
    assert long_functions(path.read_text(encoding="utf-8")) == []


DPCORE = PACKAGE.parent
BUDGET = DPCORE / "pairtest" / "budget.py"
AUDITS = sorted(
    p
    for pkg in ("audit", "textaudit", "rewriter", "verdicts", "pairtest")
    for p in (DPCORE / pkg).rglob("*.py")
)


@pytest.mark.parametrize("path", [p for p in AUDITS if p != BUDGET], ids=lambda p: str(p.relative_to(DPCORE)))
def test_alpha_is_divided_only_in_the_budget_module(path):
    assert alpha_divisions(path.read_text(encoding="utf-8")) == []


def test_the_budget_module_is_where_alpha_is_divided():
    assert len(AUDITS) > 60 and alpha_divisions(BUDGET.read_text(encoding="utf-8"))


def test_the_checks_find_what_they_look_for():
    long_fn = "def f(x):\n    '''doc'''\n" + "    x += 1\n" * 121 + "    return x\n"
    assert long_functions(long_fn) == [("f", 1, 122)]
    short = "def f(x):\n    '''" + "doc\n" * 200 + "'''\n    return x\n"
    assert long_functions(short) == []
    src = "a = alpha / 2\nb = (1.0 - confidence) / (2 * k)\nc = 1.0 / alpha\nalpha_x /= 3\nd = n / 2\n"
    assert [line for line, _ in alpha_divisions(src)] == [1, 2, 4]


def test_audit_text_is_wiring():
    """``audit_text`` validates a plan and starts the engine; the stages run in ``_audit``."""
    tree = ast.parse((PACKAGE / "runner.py").read_text(encoding="utf-8"))
    fns = {n.name: n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)}
    assert _body_lines(fns["audit_text"]) <= 40


def test_the_development_map_names_every_module_of_the_audit():
    """docs/development.md lists every module of ``dpcore/textaudit/`` (one line each) under a
    Mermaid diagram of the stages, which the site renders with a local copy of Mermaid."""
    root = PACKAGE.parents[1]
    doc = (root / "docs" / "development.md").read_text(encoding="utf-8")
    section = doc[doc.index("## The text audit's stages") :]
    listed = {line.split("`")[1] for line in section.splitlines() if line.startswith("| `")}
    assert listed == {p.name for p in MODULES}
    assert "```mermaid\nflowchart" in section
    for stage in ("plan.py", "budget.py", "contract.py", "screen.py", "pooled.py", "declaration.py"):
        assert stage in section.split("```mermaid")[1].split("```")[0]
    site = (root / "mkdocs.yml").read_text(encoding="utf-8")
    assert "name: mermaid" in site and "assets/mermaid/mermaid.min.js" in site
    assert (root / "docs" / "assets" / "mermaid" / "mermaid.min.js").stat().st_size > 1_000_000


#: What starts worker processes: a process pool, ``multiprocessing``'s ``Pool``, a Ray task or Ray.
POOL_NAMES = ("ProcessPoolExecutor", "Pool")
RAY_CALLS = ("ray.remote", "ray.init")
EXECUTOR = DPCORE / "executor.py"


def pool_starts(source: str) -> list[tuple[int, str]]:
    """(line, what) of every use of a process-pool class or of ``ray.remote`` / ``ray.init``."""
    out = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Name) and node.id == "ProcessPoolExecutor":
            out.append((node.lineno, node.id))
        elif isinstance(node, ast.Attribute) and (node.attr in POOL_NAMES or ast.unparse(node) in RAY_CALLS):
            out.append((node.lineno, ast.unparse(node)))
        elif isinstance(node, ast.ImportFrom) and any(a.name in POOL_NAMES for a in node.names):
            out.append((node.lineno, f"from {node.module} import ..."))
    return sorted(set(out))


@pytest.mark.parametrize(
    "path",
    [p for p in sorted(DPCORE.rglob("*.py")) if p != EXECUTOR],
    ids=lambda p: str(p.relative_to(DPCORE)),
)
def test_workers_are_started_only_by_the_executor(path):
    assert pool_starts(path.read_text(encoding="utf-8")) == []


def test_the_executor_is_where_workers_start():
    found = {what for _, what in pool_starts(EXECUTOR.read_text(encoding="utf-8"))}
    assert {"ProcessPoolExecutor", "ray.remote"} <= found


def test_the_pool_check_finds_what_it_looks_for():
    src = (
        "from concurrent.futures import ProcessPoolExecutor\n"
        "import multiprocessing as mp\n"
        "p = mp.Pool(2)\n"
        "f = ray.remote(g)\n"
        "ray.init()\n"
        "x = pool.submit(f)\n"
        "class M:\n    Pool = InProcess\n"
        "from concurrent.futures import ThreadPoolExecutor\n"
    )
    assert [line for line, _ in pool_starts(src)] == [1, 3, 4, 5]
