"""The Attack page's shipped default view (dpcore.attack.page_view, ``precompute-attack-page``),
the attacker's ceiling (ε = ∞) and the caption that says what the attacker is."""

from __future__ import annotations

import copy
import hashlib
import json
import math
from pathlib import Path

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from dpcore.attack import page_view as pv
from dpcore.attack.mlm import default_mlm_available
from dpcore.cli import main

ROOT = Path(__file__).resolve().parents[1]
PAGE = str(ROOT / "pages" / "attack.py")
needs_mlm = pytest.mark.skipif(
    not default_mlm_available(), reason="the shipped masked-LM attacker is not installed"
)


def _shipped() -> dict:
    return json.loads(pv.SHIPPED_PATH.read_text(encoding="utf-8"))


def test_shipped_file_names_the_attacker_on_disk_and_the_default_view() -> None:
    doc = _shipped()
    assert doc["attacker"]["sha256"] == hashlib.sha256(pv.ATTACKER_GRAPH.read_bytes()).hexdigest()
    assert doc["parameters"] == pv.default_view().to_dict()
    assert doc["seed"] == pv.default_view().seed and doc["dpcore_version"]
    assert pv.shipped_for(pv.default_view()) is not None


@needs_mlm
@pytest.mark.xdist_group("attack-page-view")  # with the docs page that runs the command (one computation)
def test_check_recomputes_every_unit_and_finds_the_shipped_file_current(capsys) -> None:  # type: ignore[no-untyped-def]
    """All units, the masked-LM ones included, recomputed and compared (about 12 s on 2 cores)."""
    rc = main(["precompute-attack-page", "--check", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert out["differences"] == [] and rc == 0 and out["current"] is True and not out["written"]
    assert out["attack_units"] == 12 and out["utility_units"] == 6  # 2 mechanisms × 3 ε × 2 groups


def test_the_page_at_its_defaults_shows_the_shipped_results_without_computing(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    calls: list[str] = []
    allow = {"compute": False}

    def watch(name: str):  # type: ignore[no-untyped-def]
        real = getattr(pv, name)

        def run(*args, **kwargs):  # type: ignore[no-untyped-def]
            calls.append(name)
            if not allow["compute"]:
                raise RuntimeError(f"{name} computed")
            return real(*args, **kwargs)

        return run

    for name in ("attack_unit", "utility_unit", "baselines_unit", "reference_unit"):
        monkeypatch.setattr(pv, name, watch(name))
    st.cache_data.clear()
    at = AppTest.from_file(PAGE, default_timeout=120).run()
    assert not at.exception and not calls  # the page's widget defaults are exactly the shipped view
    captions = " ".join(c.value for c in at.caption)
    assert "shipped results of the default settings" in captions
    # what the attacker is, from its training record
    rec = json.loads(pv.TRAINING_RECORD.read_text(encoding="utf-8"))
    assert f"{rec['corpus']['sources']['tweets']:,} public tweets" in captions
    assert f"{100 * rec['heldout_top1']:.0f}% of masked words of the tweets the attack" in captions
    assert f"{100 * rec['heldout_top5']:.0f}% within five guesses" in captions
    assert f"{rec['config']['epochs']:g} epochs" in captions  # each stage's epochs
    assert "not that no attacker could succeed" in captions
    # the defense table: shipped numbers, codes in words, and each attacker's ε = ∞ row
    table = next(t.value for t in at.dataframe if "Defense rate" in t.value.columns)
    shipped = pv.load_shipped()
    assert shipped is not None
    mlm10 = shipped.attack("santext", 10.0, ("mlm",))["rows"][0]  # type: ignore[index]
    mlm = table["Attacker"] == "masked-LM attacker"
    row = table[mlm & (table["Mechanism"] == "santext") & (table["ε"].astype(str) == "10")]
    assert row["Defense rate"].tolist() == [mlm10["defense_rate"]]
    inf = table[table["Mechanism"] == pv.UNSANITIZED]
    assert set(inf["ε"]) == {"∞"} and "masked-LM attacker" in set(inf["Attacker"])
    mlm_inf = inf[inf["Attacker"] == "masked-LM attacker"]["Defense rate"].iloc[0]
    assert mlm_inf == pytest.approx(1 - mlm10["attacker_top1_unsanitized"])
    # one ε removed: every remaining result is a shipped unit with the same parameters
    at.multiselect(key="eps").set_value(["1", "3"]).run()
    assert not at.exception and not calls
    # 2 mechanisms × 2 ε × (Bayesian, masked-LM, utility)
    assert "All 12 results shown are the shipped ones" in " ".join(c.value for c in at.caption)
    # one mechanism added (with the Bayesian attacker only, to stay quick): its results are
    # computed, the others' shipped
    allow["compute"] = True
    at.multiselect(key="attacks").set_value(["bayes-unigram"])
    at.multiselect(key="mechs").set_value(["santext", "santext+", "random"]).run()
    assert not at.exception and set(calls) == {"attack_unit", "utility_unit", "reference_unit"}
    assert "8 of 12 results shown are the shipped ones" in " ".join(c.value for c in at.caption)
    calls.clear()
    allow["compute"] = False
    # another seed shares no unit: everything is computed (here: refused by the stub)
    at.number_input(key="seed").set_value(1).run()
    assert calls
    assert "shipped" not in " ".join(c.value for c in at.caption)


def test_another_attacker_or_other_parameters_are_never_served_the_shipped_results(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    view = pv.default_view()
    other = pv.View.from_dict({**view.to_dict(), "seed": 1})
    assert pv.shipped_for(other) is None
    shipped = pv.load_shipped()
    assert shipped is not None
    prm = dict(view.parameters)["santext+"]
    args = ("santext+", 3.0, prm, "tweets", 20, ("mlm",), 5_000, 0)
    assert shipped.attack_unit(*args) == shipped.attack("santext+", 3.0, ("mlm",)) is not None
    assert shipped.attack_unit("santext+", 3.0, (("p", 0.5), ("w", 0.9)), *args[3:]) is None
    assert shipped.attack_unit(*args[:4], 25, *args[5:]) is None  # other sentences
    assert shipped.attack_unit(*args[:5], ("mlm", "bayes-mlm"), *args[6:]) is None  # other attack group
    assert shipped.attack_unit(*args[:6], 2_000, 0) is None  # other vocabulary
    assert shipped.utility_unit("santext", 1.0, (), "tweets", 5_000, 1_000, 200, 0) is None  # other split
    assert shipped.baselines_unit("tweets", 5_000, 1_000, 500, 0) == shipped.baselines
    assert shipped.baselines_unit("tweets", 5_000, 1_000, 500, 1) is None
    monkeypatch.setattr(pv, "attacker_sha256", lambda path=pv.ATTACKER_GRAPH: "0" * 64)
    assert pv.load_shipped() is None and pv.shipped_for(view) is None


def test_command_modes_and_a_stale_file(tmp_path: Path, monkeypatch, capsys) -> None:  # type: ignore[no-untyped-def]
    """Text, --json, --output and --check, with the computation replaced by the shipped results
    (the real recomputation is the test above)."""
    shipped = _shipped()
    monkeypatch.setattr(
        pv, "compute_view", lambda view, res=None, progress=None: copy.deepcopy(shipped["results"])
    )
    out = tmp_path / "view.json"
    assert main(["precompute-attack-page", "--output", str(out)]) == 0
    assert capsys.readouterr().out.startswith(f"wrote {out}")
    assert json.loads(out.read_text(encoding="utf-8")) == shipped  # the document is deterministic
    stamp = out.stat().st_mtime_ns
    assert main(["precompute-attack-page", "--output", str(out), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["current"] is True and summary["written"] is False and out.stat().st_mtime_ns == stamp
    assert main(["precompute-attack-page", "--output", str(out), "--check"]) == 0
    assert "is current" in capsys.readouterr().out
    # stale: one number changed
    doc = json.loads(out.read_text(encoding="utf-8"))
    doc["results"]["attack_units"][0]["result"]["rows"][0]["defense_rate"] += 0.01
    out.write_text(json.dumps(doc), encoding="utf-8")
    assert main(["precompute-attack-page", "--output", str(out), "--check"]) == 1
    lines = capsys.readouterr().out.strip().splitlines()
    assert len(lines) == 1 and "is stale" in lines[0] and "defense_rate" in lines[0]
    assert main(["precompute-attack-page", "--output", str(out), "--check", "--json"]) == 1
    summary = json.loads(capsys.readouterr().out)
    assert summary["current"] is False and summary["differences"]
    # stale: another attacker
    doc["attacker"]["sha256"] = "0" * 64
    out.write_text(json.dumps(doc), encoding="utf-8")
    assert main(["precompute-attack-page", "--output", str(out), "--check"]) == 1
    assert "SHA-256" in capsys.readouterr().out
    # writing replaces a stale file
    assert main(["precompute-attack-page", "--output", str(out), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["written"] is True
    assert json.loads(out.read_text(encoding="utf-8")) == shipped
    # a missing file is one clear error line
    assert main(["precompute-attack-page", "--output", str(tmp_path / "none.json"), "--check"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("dpcore: error: no such file")


def test_ceiling_rows_are_one_minus_the_top1_with_an_interval() -> None:
    rows = [
        {"attack": "mlm", "tokens": 200, "attacker_top1_unsanitized": 0.1, "epsilon": e} for e in (1.0, 3.0)
    ] + [{"attack": "bayes-unigram", "tokens": 200, "attacker_top1_unsanitized": 1.0, "epsilon": 1.0}]
    got = {r["attack"]: r for r in pv.ceiling_rows(rows)}
    assert set(got) == {"mlm", "bayes-unigram"}  # one per attacker, not per ε
    assert got["mlm"]["defense_rate"] == pytest.approx(0.9) and math.isinf(got["mlm"]["epsilon"])
    assert got["mlm"]["ci_low"] < 0.9 < got["mlm"]["ci_high"]
    assert got["bayes-unigram"]["defense_rate"] == 0.0


def test_comparison_ceiling_fills_only_matching_results() -> None:
    ceiling = {
        "parameters": dict(pv.COMPARISON_DEFAULTS),
        "embedding": "glove",
        "attacker_top1_unsanitized_bayes": 1.0,
        "attacker_top1_unsanitized_mlm": 0.1,
        "accuracy_unsanitized": 0.77,
    }
    rows = [{"mechanism": "santext", "embedding": "glove"}, {"mechanism": "dp-mlm", "embedding": "bert"}]
    params = {**pv.COMPARISON_DEFAULTS, "split_seed": 0}
    filled = pv.with_comparison_ceiling(rows, params, ceiling)
    assert filled[0]["attacker_top1_unsanitized_mlm"] == 0.1 and filled[0]["accuracy_unsanitized"] == 0.77
    assert "attacker_top1_unsanitized_mlm" not in filled[1]  # another vocabulary: not its ceiling
    assert pv.with_comparison_ceiling(rows, {**params, "sentences": 40}, ceiling) == rows


def test_every_mechanism_chart_is_small_multiples_without_inf() -> None:
    from dpcore.viz.comparison_figure import DEFAULT_SHOWN, comparison_figure

    res = json.loads((ROOT / "bench" / "results" / "mechanism_comparison.json").read_text(encoding="utf-8"))
    rows = pv.with_comparison_ceiling(
        res["rows"], res["parameters"], _shipped()["results"]["comparison_ceiling"]
    )
    fig = comparison_figure(rows, DEFAULT_SHOWN)
    series = [t for t in fig.data if t.x and t.x[0] is not None and not t.name.startswith(pv.UNSANITIZED)]
    assert 0 < len(series) <= 6
    assert {t.xaxis for t in series} == {"x", "x2", "x3"}  # one panel per mechanism
    assert any(t.name.startswith(pv.UNSANITIZED) for t in fig.data)  # the ε = ∞ point
    texts = [s for t in fig.data for s in (t.text or ())] + [a.text for a in fig.layout.annotations]
    assert "ε=∞" in texts and not any("inf" in str(s) for s in texts)
    full = comparison_figure(rows)
    assert len({t.xaxis for t in full.data}) == len({r["mechanism"] for r in rows})
