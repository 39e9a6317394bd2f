"""One formatter writes every percentage and ε (issue 60 item 8): :mod:`dpcore.formatting`.

The rules are held here, and an AST scan of ``dpcore/``, ``pages/`` and ``app.py`` keeps every
other module from writing a percentage itself (``{100 * x:.0f}%``, ``{x:.1%}``, a Plotly
``tickformat`` in percent) or an ε after "ε =" with its own format (``ε = {eps:g}``). Progress
lines are left out: a bar's fixed-width percentage of work done is not a rate dpcore reports.
"""

from __future__ import annotations

import ast
import math
import re
from pathlib import Path

import pytest

from dpcore.formatting import MISSING, epsilon_text, percent, percent_value

ROOT = Path(__file__).resolve().parents[1]
#: Progress lines: the share of work done, padded to a fixed width so the line does not jump.
PROGRESS = {("dpcore/commands/train_attacker.py", "frac"), ("pages/attack.py", "d / max(t, 1)")}


@pytest.mark.parametrize(
    ("rate", "text"),
    [
        (0.0, "0%"),
        (1e-6, "0.0001%"),
        (1e-3, "0.1%"),
        (0.0025, "0.25%"),
        (0.01, "1%"),
        (0.094, "9.4%"),
        (0.1, "10%"),
        (0.123456, "12%"),
        (0.5, "50%"),
        (0.994, "99%"),
        (0.997, "99.7%"),
        (0.99996, "99.996%"),
        (1.0, "100%"),
        (None, MISSING),
        (math.nan, MISSING),
    ],
)
def test_a_rate_has_two_significant_digits_in_plain_decimals(rate, text) -> None:
    assert percent(rate) == text


@pytest.mark.parametrize("rate", [1e-15, 3e-9, 0.004999, 0.995, 0.999999, 1 - 1e-8])
def test_a_rate_is_never_written_as_zero_or_one_hundred_percent_it_is_not(rate: float) -> None:
    text = percent(rate)
    assert text not in ("0%", "100%") and "e" not in text
    shown = float(text.rstrip("%").replace(",", "")) / 100
    assert 0.0 < shown < 1.0 and shown == pytest.approx(rate, rel=0.06)


def test_one_computed_in_floating_point_is_one_hundred_percent() -> None:
    assert percent(1 - 2e-12) == "100%" and percent(1 - 1e-8) == "99.999999%"


@pytest.mark.parametrize(("level", "text"), [(0.95, "95%"), (0.975, "97.5%"), (0.999, "99.9%"), (0.9, "90%")])
def test_a_level_someone_set_is_written_as_given(level: float, text: str) -> None:
    assert percent(level, exact=True) == text
    assert percent(0.975) == "98%"  # the same number as a measured rate: two digits


def test_a_table_column_in_percent_holds_one_decimal() -> None:
    assert percent_value(0.9375) == 93.8 and percent_value(None) is None and percent_value(1) == 100.0


def percent_writes(source: str) -> list[tuple[int, str]]:
    """(line, expression) of every percentage an f-string or a Plotly axis writes by itself."""
    out = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.JoinedStr):
            parts = node.values
            for i, v in enumerate(parts):
                if not isinstance(v, ast.FormattedValue):
                    continue
                spec = ast.unparse(v.format_spec) if v.format_spec is not None else ""
                after = parts[i + 1] if i + 1 < len(parts) else None
                times_100 = "100" in ast.unparse(v.value)
                if spec.rstrip("'\"").endswith("%") or (
                    times_100 and isinstance(after, ast.Constant) and str(after.value).startswith("%")
                ):
                    out.append((node.lineno, ast.unparse(v.value)))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.endswith("%"):
            if node.value.startswith((".", ",")) and node.value[1:-1].isdigit():  # a d3 tickformat
                out.append((node.lineno, node.value))
    return sorted(dict(out).items())  # one entry per line (a format spec is also a string)


SOURCES = [*sorted((ROOT / "dpcore").rglob("*.py")), *sorted((ROOT / "pages").glob("*.py")), ROOT / "app.py"]


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_module_but_the_home_writes_a_percentage(path: Path) -> None:
    rel = str(path.relative_to(ROOT))
    found = [
        (line, what)
        for line, what in percent_writes(path.read_text(encoding="utf-8"))
        if not any(rel == f and what.startswith(f"100 * {w}") for f, w in PROGRESS)
    ]
    assert found == [], "write it with dpcore.formatting.percent"


def test_the_percentage_check_finds_what_it_looks_for() -> None:
    src = (
        'a = f"{100 * x:.0f}% of words"\n'
        'b = f"{share:.1%}"\n'
        'c = {"tickformat": ".0%"}\n'
        'd = f"{100 * conf:g}% confidence"\n'
        'e = f"{percent(x)} of words"\n'
        'f = f"{n:,} words (50%)"\n'
    )
    assert [line for line, _ in percent_writes(src)] == [1, 2, 3, 4]


@pytest.mark.parametrize(
    ("value", "digits", "text"),
    [(1, None, "1"), (0.5, None, "0.5"), (2.5e-05, None, "2.5e-05"), (22.627417, 4, "22.63"),
     (math.inf, None, "∞"), (None, None, MISSING), (math.nan, 3, MISSING)],
)  # fmt: skip
def test_an_epsilon_is_written_as_given_or_to_its_digits(value, digits, text) -> None:
    assert epsilon_text(value, digits=digits) == text


_AFTER_EPSILON = re.compile(r"ε₀?\s*(=|≤|≥|<|>)?\s*$")


def epsilon_writes(source: str) -> list[tuple[int, str]]:
    """(line, expression) of every value an f-string writes right after "ε =" with its own format."""
    out = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.JoinedStr):
            for before, v in zip(node.values, node.values[1:], strict=False):
                if (
                    isinstance(v, ast.FormattedValue)
                    and v.format_spec is not None
                    and isinstance(before, ast.Constant)
                    and _AFTER_EPSILON.search(str(before.value))
                ):
                    out.append((node.lineno, ast.unparse(v.value)))
    return sorted(out)


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_module_but_the_home_writes_an_epsilon(path: Path) -> None:
    found = epsilon_writes(path.read_text(encoding="utf-8"))
    assert found == [], "write it with dpcore.formatting.epsilon_text"


def test_the_epsilon_check_finds_what_it_looks_for() -> None:
    src = (
        'a = f"ε = {eps:g} per word"\n'
        'b = f"nominal ε = "\n'
        'c = (f"claim ε ≤ " f"{e0:.4g}")\n'
        'd = f"ε = {epsilon_text(eps)}"\n'
        'e = f"n = {n:,}"\n'
    )
    assert [line for line, _ in epsilon_writes(src)] == [1, 3]
