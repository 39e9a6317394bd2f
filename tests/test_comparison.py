"""The mechanism comparison: every mechanism on the same sentences and split, ε scales marked."""

from __future__ import annotations

import pytest

from dpcore.attack.comparison import SHIPPED_COMPARISON, compare_mechanisms
from dpcore.validation import DPCoreError
from dpcore.viz.comparison_figure import comparison_figure, comparison_table

# One pytest-xdist worker runs this module, so its comparison (the module fixture) is computed once.
pytestmark = pytest.mark.xdist_group("comparison")


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
    # the share each sanitizer kept: SanText keeps more at larger ε, random replacement almost none
    assert 0 <= by["santext", 1.0]["kept_share"] < by["santext", 30.0]["kept_share"] <= 1
    assert by["random", 30.0]["kept_share"] < 0.05 and by["feyisetan", 1.0]["kept_share"] is not None


def test_figure_marks_the_two_epsilon_scales(result: dict) -> None:
    fig = comparison_figure(result["rows"])
    names = [t.name for t in fig.data]
    assert any(n.startswith("santext (ε·d") for n in names)
    assert any(n.startswith("random (ε-LDP)") for n in names)
    dashes = {t.name.split(" (")[0]: t.line.dash for t in fig.data}
    assert dashes["random"] == "dash" and dashes["santext"] == "solid"
    assert not any("feyisetan" in n and "Bayesian" in n for n in names)
    table = comparison_table(result["rows"])
    assert table[0]["Bayesian defense (%)"] is not None
    assert {"ε scale", "accuracy (%)", "kept (%)"} <= set(table[0])


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
    # the shipped chart says how to regenerate it, appended runs (dp-mlm) included
    import json

    shipped = SHIPPED_COMPARISON
    params = json.loads(shipped.read_text(encoding="utf-8"))["parameters"]
    captions = " ".join(c.value for c in at.caption)
    for run in params.get("appended_runs", []):
        assert f"--mechanisms {','.join(run['mechanisms'])} --append" in captions
    at.multiselect(key="cmp_mechs").set_value(["santext", "random"])
    at.multiselect(key="cmp_eps").set_value(["3"])
    at.button(key="cmp_run").click()
    at.run()
    assert not at.exception and not at.error
    tables = [t.value for t in at.dataframe if "ε scale" in t.value.columns]
    assert tables, "no comparison table"
    assert set(tables[-1]["mechanism"]) == {"santext", "random"}
    assert any("equal ε" in c.value for c in at.caption)


def test_epsilon_below_a_mechanisms_floor_is_marked_undefined_and_refuted_claims_flagged() -> None:
    res = compare_mechanisms(
        ["truncated-gumbel", "custext"],
        [3.0, 1000.0],
        sentences=5,
        n_train=200,
        n_test=100,
        vocab_size=2000,
        attacks=("bayes-unigram", "mlm"),
        seed=0,
    )
    by = {(r["mechanism"], r["epsilon"]): r for r in res["rows"]}
    low, high = by["truncated-gumbel", 3.0], by["truncated-gumbel", 1000.0]
    assert low["accuracy"] is None and low["defense_mlm"] is None and "needs ε >" in low["note"]
    assert high["accuracy"] is not None and high["note"] == "" and high["claim_refuted"]
    assert high["defense_bayes"] is None  # Monte-Carlo: no Bayesian number
    # CusText is exact: the Bayesian attacker now has its channel
    assert by["custext", 3.0]["defense_bayes"] is not None and not by["custext", 3.0]["claim_refuted"]
    names = [t.name for t in comparison_figure(res["rows"]).data]
    assert any(n.startswith("truncated-gumbel") and "claim refuted" in n for n in names)
    notes = {r["mechanism"]: r["note"] for r in comparison_table(res["rows"]) if r["ε"] == 3.0}
    assert notes["truncated-gumbel"].startswith("claim refuted; undefined")


def test_shipped_results_name_the_model_never_a_path() -> None:
    import json
    from pathlib import Path

    from dpcore.attack.comparison import _model_label
    from dpcore.models.masked_lm import DEFAULT_MLM_DIR

    class M:
        name = str(DEFAULT_MLM_DIR)

    assert _model_label(M()) == "shipped minilm-mlm (dpcore/attack/models/minilm-mlm)"
    results = Path(__file__).resolve().parents[1] / "bench" / "results"
    for f in results.glob("*.json"):
        text = f.read_text(encoding="utf-8")
        assert str(DEFAULT_MLM_DIR.parent) not in text and "/home/" not in text, f.name
        json.loads(text)


def test_append_merges_a_separate_run_only_on_the_same_data() -> None:
    import importlib.util
    from pathlib import Path

    spec = importlib.util.spec_from_file_location(
        "compare_bench", Path(__file__).resolve().parents[1] / "bench" / "compare_mechanisms.py"
    )
    mod = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(mod)  # type: ignore[union-attr]
    same = {k: 1 for k in mod.SHARED}
    base = {
        "parameters": {**same, "mechanisms": ["santext", "dp-mlm"], "not_in_this_run": {"dp-mlm": "slow"}},
        "rows": [{"mechanism": "santext", "epsilon": 1.0}, {"mechanism": "dp-mlm", "epsilon": 9.0}],
    }
    extra = {
        "parameters": {**same, "mechanisms": ["dp-mlm"], "seconds": 5.0, "load_average": 1.0},
        "rows": [{"mechanism": "dp-mlm", "epsilon": 1.0}],
    }
    out = mod.merge_runs(base, extra)
    assert [(r["mechanism"], r["epsilon"]) for r in out["rows"]] == [("santext", 1.0), ("dp-mlm", 1.0)]
    assert "not_in_this_run" not in out["parameters"]
    runs = out["parameters"]["appended_runs"]
    assert runs == [{"mechanisms": ["dp-mlm"], "seconds": 5.0, "load_average": 1.0}]
    with pytest.raises(SystemExit, match="seed"):
        mod.merge_runs(base, {**extra, "parameters": {**extra["parameters"], "seed": 2}})


def test_append_refuses_before_running(tmp_path, monkeypatch) -> None:
    """A mismatched or missing existing run is refused before any (long) comparison starts."""
    import importlib.util
    import sys
    from pathlib import Path

    import dpcore.attack.comparison as comparison

    spec = importlib.util.spec_from_file_location(
        "compare_bench2", Path(__file__).resolve().parents[1] / "bench" / "compare_mechanisms.py"
    )
    mod = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(mod)  # type: ignore[union-attr]

    def never(*a, **k):  # type: ignore[no-untyped-def]
        raise AssertionError("the comparison ran before the settings were checked")

    monkeypatch.setattr(comparison, "compare_mechanisms", never)
    argv = ["compare_mechanisms.py", "--mechanisms", "dp-mlm", "--append", "--out", str(tmp_path)]
    monkeypatch.setattr(sys, "argv", argv)
    with pytest.raises(SystemExit, match="no existing run"):
        mod.main()
    shipped = SHIPPED_COMPARISON
    (tmp_path / "mechanism_comparison.json").write_text(shipped.read_text(encoding="utf-8"), encoding="utf-8")
    monkeypatch.setattr(sys, "argv", [*argv, "--epsilons", "1,2"])
    with pytest.raises(SystemExit, match="epsilons"):
        mod.main()


def test_the_caption_names_every_run_that_made_the_comparison_and_what_it_left_out(tmp_path) -> None:
    import doctest

    import dpcore.attack.comparison as comparison
    from dpcore.attack.comparison import claim_epsilons, comparison_caption, load_comparison

    assert doctest.testmod(comparison).failed == 0
    params = {
        "mechanisms": ["santext", "dp-mlm"],
        "epsilons": [1.0, 3.0],
        "sentences": 40,
        "n_train": 2_000,
        "n_test": 500,
        "seed": 0,
        "appended_runs": [{"mechanisms": ["dp-mlm"], "seconds": 60.0}],
        "not_in_this_run": {"custext": "slow"},
    }
    caption = comparison_caption(params)
    assert "ε ∈ {1, 3}" in caption and "2,000/500 train/test" in caption
    assert caption.index("`python bench/compare_mechanisms.py`") < caption.index(
        "`python bench/compare_mechanisms.py --mechanisms dp-mlm --append`"
    )
    assert caption.endswith(" Not in this run: custext (slow).")
    rows = [
        {"mechanism": "custext", "epsilon": 1.0, "note": "below its floor"},
        {"mechanism": "custext", "epsilon": 3.0},
        {"mechanism": "santext", "epsilon": 1.0},
    ]
    assert claim_epsilons(("custext", "santext", "random"), rows) == {"custext": 3.0, "santext": 1.0}
    assert load_comparison(tmp_path / "none.json") is None
    shipped = load_comparison()
    assert shipped is not None and set(shipped) >= {"parameters", "rows"}
