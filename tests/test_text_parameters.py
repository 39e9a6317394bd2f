"""The parameter schema is the constructors' own: same names and defaults, bounds accepted,
values outside refused (through the API and the CLI)."""

from __future__ import annotations

import math

import pytest

from dpcore.cli import main
from dpcore.parameters import check_parameter
from dpcore.text import TEXT_MECHANISMS, create_text_mechanism
from dpcore.text.mechanisms import mechanism_parameters
from dpcore.text.parameters import mechanism_parameter_specs
from dpcore.text.registry import required_embedding
from dpcore.text.vocab import build_vocabulary
from dpcore.validation import DPCoreError

NAMES = TEXT_MECHANISMS.names()


@pytest.fixture(scope="module")
def vocabs() -> dict:
    return {"glove": build_vocabulary("glove", size=300), "bert": build_vocabulary("bert")}


@pytest.mark.parametrize("name", NAMES)
def test_specs_match_the_constructor(name: str) -> None:
    specs = mechanism_parameter_specs(name)
    assert {s.name: s.default for s in specs} == mechanism_parameters(name)
    for s in specs:
        assert s.kind in {"float", "int"} and s.low < s.high and s.help
        lo, hi = s.widget_range
        assert s.low <= lo < hi <= s.high
        assert check_parameter(s, s.default) == s.default


@pytest.mark.parametrize("name", [n for n in NAMES if mechanism_parameter_specs(n) and n != "dp-mlm"])
def test_bounds_are_accepted_and_values_outside_refused(name: str, vocabs: dict) -> None:
    vocab = vocabs[required_embedding(name) or "glove"]
    eps = 3.0
    for s in mechanism_parameter_specs(name):
        lo = s.low + 1e-3 if s.open_low else s.low
        hi = min(s.high - 1e-3 if s.open_high else s.high, len(vocab) if s.kind == "int" else math.inf)
        others = {o.name: o.default for o in mechanism_parameter_specs(name) if o.name != s.name}
        if name == "santext+" and s.name == "w":
            lo = 1 / len(vocab)  # the smallest w that marks one word sensitive
        for v in (lo, hi):
            m = create_text_mechanism(name, vocab=vocab, epsilon=eps, **others, **{s.name: v})
            assert m.params()[s.name] == pytest.approx(v)
        below = s.low if s.open_low else s.low - (1 if s.kind == "int" else 1e-3)
        above = s.high if s.open_high else s.high + (1 if s.kind == "int" else 1e-3)
        for v in (below, above, math.nan):
            with pytest.raises(DPCoreError, match=s.name):
                create_text_mechanism(name, vocab=vocab, epsilon=eps, **others, **{s.name: v})


def test_cli_param_is_checked_against_the_schema(capsys, tmp_path) -> None:
    src = tmp_path / "in.txt"
    src.write_text("the cat sat\n", encoding="utf-8")
    out = tmp_path / "out.txt"
    args = ["sanitize", "--mechanism", "custext", "--epsilon", "3", "--input", str(src), "--output", str(out)]
    args += ["--vocab-size", "2000", "--seed", "0"]
    assert main([*args, "--param", "k=2.5"]) == 2
    assert "k must be a whole number" in capsys.readouterr().err
    assert main([*args, "--param", "k=0"]) == 2
    err = capsys.readouterr().err
    assert "out of range" in err and "Chen et al. 2023" in err
    assert not out.exists()  # a refused parameter writes nothing
    assert main([*args, "--param", "k=5"]) == 0 and out.read_text(encoding="utf-8").strip()


def test_list_json_carries_the_schema(capsys) -> None:
    import json

    assert main(["list", "--json"]) == 0
    rows = {r["name"]: r for r in json.loads(capsys.readouterr().out) if r["family"] == "text"}
    p = rows["santext+"]["parameter_specs"][0]
    assert (p["name"], p["default"], p["low"], p["high"]) == ("p", 0.3, 0.0, 1.0)
    assert "Algorithm 2" in p["help"]
    assert rows["santext"]["parameter_specs"] == []
