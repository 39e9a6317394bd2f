"""Rewriters in the one registry (issue 60 item 5): :data:`dpcore.rewriter.catalog.REWRITERS`.

Every rewriter registers where it is defined, with its options as ``ParameterSpec`` (as text
mechanisms do); ``load_rewriter``, the CLI (``--param``, its shorthands, ``list``) and the page's
widgets read them, and a user's factory is loaded the one way a user's sanitizer is.
"""

from __future__ import annotations

import inspect
import json
import math

import pytest

from dpcore.cli import main
from dpcore.registry import Registry
from dpcore.reproduce import audit_rewriter_command
from dpcore.rewriter.catalog import KINDS, MODULES, REWRITERS
from dpcore.rewriter.registry import (
    available_rewriters,
    check_options,
    load_rewriter,
    rewriter_parameter_specs,
    rewriters,
)
from dpcore.rewriter.views import compute_view, find_view, shipped_view
from dpcore.validation import DPCoreError

NAMES = [c.name for c in available_rewriters()]
PAIR = {"x": "the storm hit the coast", "x_prime": "the storm hit the town"}


def test_the_registry_is_the_one_table() -> None:
    table = rewriters()
    assert isinstance(table, Registry) and table is REWRITERS and sorted(NAMES) == sorted(table.names())
    assert NAMES[:3] == ["dp-mlm", "dp-prompt", "santext-words"]
    packages = ["dpmlm:rewrite", "preempt:money", "preempt:age", "dp-fusion:generate"]
    assert NAMES[-4:] == packages  # the packages, last
    assert {"dp-mlm", "dp-prompt", "santext-words", "planted:copy", "planted:leak-word"} <= set(NAMES)
    for e in table:
        kinds = [t.split(":", 1)[1] for t in e.tags if t.startswith("kind:")]
        assert kinds in ([k] for k in KINDS), e.name
        assert (kinds == ["flawed"]) == e.flawed == e.name.startswith("flawed:"), e.name
        assert e.factory.__module__ in MODULES
        assert e.flawed == e.factory.__module__.startswith("dpcore.flawed"), e.name  # fenced
        assert e.citation and e.display, e.name
    torch_free = [c.name for c in available_rewriters(torch=False)]
    assert torch_free == [n for n in NAMES if not {"needs-torch", "needs-env"} & set(table.get(n).tags)]
    assert "dpmlm:rewrite" not in torch_free  # a package in its own environment: the CLI's, not the page's


@pytest.mark.parametrize("name", NAMES)
def test_options_match_the_factory(name: str) -> None:
    """Every option is a keyword of the factory, with the factory's default."""
    params = inspect.signature(REWRITERS.get(name).factory).parameters
    for sp in rewriter_parameter_specs(name):
        assert sp.name in params, (name, sp.name)
        assert params[sp.name].default == sp.default, (name, sp.name)
        assert sp.kind in ("float", "int", "bool") and sp.help


@pytest.mark.parametrize("name", NAMES)
def test_option_bounds_are_accepted_and_values_outside_refused(name: str) -> None:
    for sp in rewriter_parameter_specs(name):
        if sp.kind == "bool":
            assert check_options(name, {sp.name: "true"}) == {sp.name: True}
            with pytest.raises(DPCoreError, match="is a switch"):
                check_options(name, {sp.name: "maybe"})
            continue
        step = 1 if sp.kind == "int" else 1e-3
        lo = sp.low + step if sp.open_low else sp.low
        hi = sp.high - step if sp.open_high else sp.high
        for ok in (lo, hi, sp.default):
            assert check_options(name, {sp.name: str(ok)})[sp.name] == pytest.approx(ok)
        below = sp.low if sp.open_low else sp.low - step
        above = sp.high if sp.open_high else sp.high + step
        for bad in (below, above):
            with pytest.raises(DPCoreError, match="out of range"):
                check_options(name, {sp.name: bad})
        with pytest.raises(DPCoreError, match="must be a number"):
            check_options(name, {sp.name: "many"})


def test_an_option_another_rewriter_takes_is_refused_by_name() -> None:
    with pytest.raises(DPCoreError, match=r"dp-mlm takes no option q \(its options: full_vocabulary\)"):
        load_rewriter("dp-mlm", epsilon=1.0, q=0.3)
    with pytest.raises(DPCoreError, match=r"its options: max_new_tokens, device"):
        check_options("dp-prompt", {"full_vocabulary": True})
    assert check_options("my_file.py:make", {"anything": "1"}) == {"anything": "1"}  # user code: as given


def test_an_option_changes_what_is_built() -> None:
    assert load_rewriter("planted:copy", epsilon=1.0).q == 0.5
    assert load_rewriter("planted:copy", epsilon=1.0, q="0.25").q == 0.25
    assert load_rewriter("dp-mlm", epsilon=1.0, full_vocabulary="on").full_vocabulary is True


def _audit_json(argv: list[str], capsys: pytest.CaptureFixture[str]) -> dict:
    assert main([*argv, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    out.pop("seconds")
    return out


def test_param_and_its_shorthand_are_one_option(capsys: pytest.CaptureFixture[str]) -> None:
    base = ["audit-rewriter", "--rewriter", "planted:copy", "--epsilon", "1", "--x", PAIR["x"]]
    base += ["--x-prime", PAIR["x_prime"], "--rewrites", "100", "--distinguishers", "exact"]
    short = _audit_json([*base, "--q", "0.2"], capsys)
    param = _audit_json([*base, "--param", "q=0.2"], capsys)
    assert short == param and short != _audit_json(base, capsys)
    assert main([*base, "--q", "0.2", "--param", "q=0.3"]) == 2
    assert "q is given twice" in capsys.readouterr().err


def test_a_view_with_options_has_its_command_and_is_never_a_shipped_view(capsys) -> None:
    settings = {
        "rewriter": "planted:copy", "epsilon": 1.0, **PAIR, "rewrites": 100, "seed": 0,
        "distinguishers": ["exact"], "confidence": 0.95, "options": {"q": 0.2},
    }  # fmt: skip
    cmd = audit_rewriter_command(**settings)
    assert cmd[cmd.index("--param") + 1] == "q=0.2"
    computed = compute_view(settings)
    assert _audit_json(cmd[3:], capsys) == computed
    assert find_view(settings) is None and shipped_view(settings) is None
    switch = {**settings, "rewriter": "dp-mlm", "options": {"full_vocabulary": True}}
    assert "full_vocabulary=true" in audit_rewriter_command(**switch)


def test_list_carries_every_rewriters_options(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["list", "--json"]) == 0
    rows = {r["name"]: r for r in json.loads(capsys.readouterr().out) if r["family"] == "rewriter"}
    assert list(rows) == NAMES
    for name, row in rows.items():
        specs = rewriter_parameter_specs(name)
        assert [s["name"] for s in row["parameter_specs"]] == [sp.name for sp in specs]
        assert row["parameters"] == {sp.name: sp.default for sp in specs} and row["citation"]
    assert rows["planted:copy"]["parameter_specs"][0]["open_high"] is True
    assert main(["list"]) == 0
    assert "copies its input with probability q. Options: q=0.5." in capsys.readouterr().out
    assert not math.isnan(rows["dp-prompt"]["parameter_specs"][0]["high"])
