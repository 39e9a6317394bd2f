"""The mechanism comparison: every mechanism on the same sentences and split, ε scales marked."""

from __future__ import annotations

import pytest

from dpcore.attack.comparison import compare_mechanisms
from dpcore.validation import DPCoreError
from dpcore.viz.comparison_figure import comparison_figure, comparison_table


@pytest.fixture(scope="module")
def result() -> dict:
    return compare_mechanisms(
        ["santext", "feyisetan", "random"],
        [1.0, 30.0],
        sentences=8,
        n_train=200,
        n_test=100,
        vocab_size=2000,
        attacks=("bayes-unigram", "mlm"),
        seed=0,
    )


def test_every_mechanism_at_every_epsilon_on_shared_data(result: dict) -> None:
    rows = result["rows"]
    assert [(r["mechanism"], r["epsilon"]) for r in rows] == [
        ("santext", 1.0), ("santext", 30.0), ("feyisetan", 1.0), ("feyisetan", 30.0),
        ("random", 1.0), ("random", 30.0),
    ]  # fmt: skip
    p = result["parameters"]
    assert p["sentences"] == 8 and p["n_train"] == 200 and p["seed"] == 0 and "equal ε" in p["note"]
    by = {(r["mechanism"], r["epsilon"]): r for r in rows}
    # Feyisetan has no closed form: no Bayesian number, never a made-up one.
    assert by["feyisetan", 1.0]["defense_bayes"] is None and by["feyisetan", 1.0]["defense_mlm"] is not None
    # SanText gets stronger attacks at large ε; random replacement defends at any ε.
    assert by["santext", 30.0]["defense_bayes"] < by["santext", 1.0]["defense_bayes"]
    assert by["random", 30.0]["defense_bayes"] > 0.9
    assert by["santext", 1.0]["epsilon_scale"].startswith("ε per unit of")
    assert by["random", 1.0]["epsilon_scale"].startswith("ε-LDP")


def test_figure_marks_the_two_epsilon_scales(result: dict) -> None:
    fig = comparison_figure(result["rows"])
    names = [t.name for t in fig.data]
    assert any(n.startswith("santext (ε·d") for n in names)
    assert any(n.startswith("random (ε-LDP)") for n in names)
    dashes = {t.name.split(" (")[0]: t.line.dash for t in fig.data}
    assert dashes["random"] == "dash" and dashes["santext"] == "solid"
    assert not any("feyisetan" in n and "Bayesian" in n for n in names)
    table = comparison_table(result["rows"])
    assert table[0]["defense rate, Bayesian (%)"] is not None
    assert {"ε scale", "accuracy (%)"} <= set(table[0])


def test_bad_arguments_are_clear() -> None:
    with pytest.raises(DPCoreError, match=r"unknown|not registered"):
        compare_mechanisms(["no-such"], [1.0])
    with pytest.raises(DPCoreError, match="attacks"):
        compare_mechanisms(["santext"], [1.0], attacks=("bayes-mlm",))


def test_attack_page_compares_mechanisms_live() -> None:
    """The Attack page's comparison section runs the chosen mechanisms and charts them."""
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file("../pages/attack.py", default_timeout=600)
    at.query_params["attacks"] = "bayes-unigram"  # keep the page's own sweep small
    at.run()
    assert not at.exception
    at.multiselect(key="cmp_mechs").set_value(["santext", "random"])
    at.multiselect(key="cmp_eps").set_value(["3"])
    at.button(key="cmp_run").click()
    at.run()
    assert not at.exception and not at.error
    tables = [t.value for t in at.dataframe if "ε scale" in t.value.columns]
    assert tables, "no comparison table"
    assert set(tables[-1]["mechanism"]) == {"santext", "random"}
    assert any("equal ε" in c.value for c in at.caption)
