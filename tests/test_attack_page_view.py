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
from dpcore.cli import main
from dpcore.models.masked_lm import default_mlm_available

ROOT = Path(__file__).resolve().parents[1]
PAGE = str(ROOT / "pages" / "attack.py")
needs_mlm = pytest.mark.skipif(
    not default_mlm_available(), reason="the shipped masked-LM attacker is not installed"
)


def _shipped(name: str = "default") -> dict:
    return json.loads(pv.shipped_path(name).read_text(encoding="utf-8"))


@pytest.mark.parametrize("name", pv.SHIPPED_VIEWS)
def test_shipped_files_name_the_attacker_on_disk_the_view_and_the_vocabulary(name: str) -> None:
    doc = _shipped(name)
    view = pv.shipped_view(name)
    assert doc["name"] == name
    assert doc["attacker"]["sha256"] == hashlib.sha256(pv.ATTACKER_GRAPH.read_bytes()).hexdigest()
    assert doc["parameters"] == view.to_dict()
    assert doc["seed"] == view.seed and doc["dpcore_version"]
    # the vocabulary the units used is the one the page builds now (offensive words left out)
    labels = pv.vocabulary_labels(pv.Resources(), view)
    assert doc["results"]["vocabulary"] == labels and all(labels.values()), labels
    shipped = pv.load_shipped_set(vocabulary_label=lambda vs, e: pv.Resources().get_vocab(vs, e).label)
    assert shipped.named(view) is not None
    if name == "default":
        assert pv.shipped_for(view) is not None
        assert doc["results"]["comparison_ceiling"]
    elif name == "paper-fig4":  # its masked-LM units over BERT, and its utility
        assert len(doc["results"]["attack_units"]) == 6 and len(doc["results"]["utility_units"]) == 6
        assert all(u["attacks"] == ["mlm"] for u in doc["results"]["attack_units"])
    else:  # the grid: every unit within its mechanisms × ε, DP-MLM (the slowest) at every ε, and
        # every unit of the default view the same numbers (a unit is a function of its parameters)
        units = doc["results"]["attack_units"]
        grid = {(m, e) for m in view.mechanisms for e in view.epsilons}
        assert {(u["mechanism"], u["epsilon"]) for u in units} <= grid
        assert {u["epsilon"] for u in units if u["mechanism"] == "dp-mlm"} == set(view.epsilons)
        assert view.epsilons == tuple(sorted(float(e) for e in pv.EPSILON_GRID))
        grid_view = pv.load_shipped(pv.shipped_path(name))
        default = pv.load_shipped(pv.shipped_path("default"))
        assert grid_view is not None and default is not None
        for u in default.document["results"]["attack_units"]:
            got = grid_view.attack(u["mechanism"], u["epsilon"], u["attacks"])
            assert got is not None and pv.compare_documents(u["result"], got) == []
        for u in default.document["results"]["utility_units"]:
            assert pv.compare_documents(u["row"], grid_view.utility(u["mechanism"], u["epsilon"])) == []


def test_a_shipped_view_over_another_vocabulary_is_never_used() -> None:
    view = pv.default_view()
    prm = dict(view.parameters)["santext+"]
    args = ("santext+", 3.0, prm, "tweets", 20, ("mlm",), 5_000, 0)
    right = pv.load_shipped_set(vocabulary_label=lambda vs, e: pv.Resources().get_vocab(vs, e).label)
    assert right.attack_unit(*args) is not None and right.baselines_unit("tweets", 5_000, 1_000, 500, 0)
    # the full vocabulary (or an older list of offensive words) has another label
    other = pv.load_shipped_set(vocabulary_label=lambda vs, e: "GloVe 6B, full vocabulary")
    assert other.attack_unit(*args) is None and other.named(view) is None
    assert other.baselines_unit("tweets", 5_000, 1_000, 500, 0) is None


def test_a_unit_from_the_grid_checks_only_its_own_vocabulary() -> None:
    """The grid holds units over GloVe and (DP-MLM's) over BERT's WordPieces: a GloVe unit is
    used once GloVe's label is checked, without building the BERT vocabulary to check its own."""
    asked: list[str] = []

    def label(vs: int, e: str) -> str | None:
        asked.append(e)
        return pv.Resources().get_vocab(vs, e).label

    shipped = pv.load_shipped_set(vocabulary_label=label)
    prm = pv.default_parameters("random")
    unit = shipped.attack_unit("random", 2.0, prm, "tweets", 20, ("bayes-unigram",), 5_000, 0)
    assert unit is not None and asked == ["glove"]
    assert shipped.utility_unit("random", 2.0, prm, "tweets", 5_000, 1_000, 500, 0) is not None
    assert asked == ["glove"]  # checked once per file and embedding


def test_the_shipped_grid_equals_a_recomputation_of_its_units() -> None:
    """A spot check of the grid file (its whole --check takes 3 minutes): a Bayesian unit and a
    utility unit of a mechanism outside the default view, at an ε outside it, recomputed."""
    view = pv.grid_view()
    shipped = pv.load_shipped(pv.shipped_path("grid"))
    assert shipped is not None and shipped.view == view
    res = pv.Resources()
    sents = pv.sentences_unit(view.dataset, view.sentences, view.seed)
    group = ("bayes-unigram",)
    ref = pv.reference_unit(res, sents, group, view.vocab_size, view.embedding)
    prm = dict(view.parameters)["custext"]
    unit = pv.attack_unit(res, "custext", 6.0, prm, sents, ref, group, view.vocab_size, view.seed)
    assert pv.compare_documents(shipped.attack("custext", 6.0, group), pv._jsonable(unit)) == []
    split = pv.split_unit(view.dataset, view.n_train, view.n_test)
    row = pv.utility_unit(res, split, "custext", 6.0, prm, view.vocab_size, view.seed)
    assert pv.compare_documents(shipped.utility("custext", 6.0), pv._jsonable(row)) == []


@needs_mlm
def test_the_shipped_fig4_view_equals_a_recomputation_of_its_units() -> None:
    """A spot check of the Fig. 4 file (its whole --check takes minutes over BERT): the baselines,
    one masked-LM unit and one utility unit recomputed equal the shipped ones."""
    view = pv.paper_view()
    shipped = pv.load_shipped(pv.shipped_path("paper-fig4"))
    assert shipped is not None and shipped.view == view
    res = pv.Resources()
    split = pv.split_unit(view.dataset, view.n_train, view.n_test)
    base = pv.baselines_unit(res, split, view.vocab_size, view.seed, view.embedding)
    assert pv.compare_documents(shipped.baselines, pv._jsonable(base)) == []
    sents = pv.sentences_unit(view.dataset, view.sentences, view.seed)
    ref = pv.reference_unit(res, sents, ("mlm",), view.vocab_size, "bert")
    prm = dict(view.parameters)["santext+"]
    unit = pv.attack_unit(
        res, "santext+", 14.0, prm, sents, ref, ("mlm",), view.vocab_size, view.seed, emb="bert"
    )
    assert pv.compare_documents(shipped.attack("santext+", 14.0, ("mlm",)), pv._jsonable(unit)) == []
    row = pv.utility_unit(res, split, "santext", 16.0, (), view.vocab_size, view.seed, "bert")
    assert pv.compare_documents(shipped.utility("santext", 16.0), pv._jsonable(row)) == []


@needs_mlm
@pytest.mark.xdist_group("attack-page-view")  # with the docs page that runs the command (one computation)
def test_check_recomputes_every_unit_and_finds_the_shipped_file_current(capsys) -> None:  # type: ignore[no-untyped-def]
    """All units, the masked-LM ones included, recomputed and compared (about 12 s on 2 cores)."""
    rc = main(["precompute-attack-page", "--view", "default", "--check", "--json"])
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
    # what the attacker is, from its training record: the two GPU runs on the tweets told once
    rec = json.loads(pv.TRAINING_RECORD.read_text(encoding="utf-8"))
    assert captions.count(f"{rec['corpus']['sources']['tweets']:,} public tweets") == 1
    assert "stage(s)" not in captions and "thread(s)" not in captions
    assert f"it names {100 * rec['heldout_top1']:.0f}% at its first guess" in captions
    assert f"{100 * rec['heldout_top5']:.0f}% within five guesses" in captions
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
    # the attacker's strength in the caption under the chart and in its description is the
    # chart's ε = ∞ marker (its top-1 on these sentences), and the description says why the
    # training record's held-out top-1 differs
    marker = f"{100 * mlm10['attacker_top1_unsanitized']:.0f}%"
    assert f"the masked-LM attacker {marker}" in captions
    assert f"On the chart it names {marker} of the original words" in captions
    # the first screen: the headline (bold, first), then the chart, its caption and the vocabulary
    assert at.markdown[0].value.startswith("**From ε = 1 to 10, SanText's sanitized text")
    assert "Vocabulary: GloVe" in captions and "offensive words left out" in captions
    # one ε removed: every remaining result is a shipped unit with the same parameters
    at.multiselect(key="eps").set_value(["1", "3"]).run()
    assert not at.exception and not calls
    # 2 mechanisms × 2 ε × (Bayesian, masked-LM, utility)
    assert "All 12 results shown are shipped, precomputed" in " ".join(c.value for c in at.caption)
    # a mechanism and an ε added on stage (issue 63): the shipped grid holds every mechanism at
    # every ε with the other settings at their defaults, so nothing is computed
    at.multiselect(key="mechs").set_value(["santext", "santext+", "dp-mlm"])
    at.multiselect(key="eps").set_value(["1", "3", "2"]).run()
    assert not at.exception and not calls
    captions = " ".join(c.value for c in at.caption)
    assert "results shown are shipped, precomputed for the default settings" in captions
    assert "every mechanism at every ε with the other settings at their defaults" in captions
    # fewer sentences (with the Bayesian attacker only, to stay quick): the attacks are computed,
    # the utility, which does not depend on the sentences, is shipped
    allow["compute"] = True
    at.multiselect(key="attacks").set_value(["bayes-unigram"])
    at.multiselect(key="mechs").set_value(["santext", "santext+", "random"])
    at.multiselect(key="eps").set_value(["1", "3"])
    at.number_input(key="n").set_value(10).run()
    assert not at.exception and set(calls) == {"attack_unit", "reference_unit"}
    # 3 mechanisms × 2 ε × (Bayesian, utility): the 6 utility rows shipped
    assert "6 of 12 results shown are shipped, precomputed" in " ".join(c.value for c in at.caption)
    calls.clear()
    allow["compute"] = False
    # another seed shares no unit: everything is computed (here: refused by the stub)
    at.number_input(key="seed").set_value(1).run()
    assert calls
    assert "shipped" not in " ".join(c.value for c in at.caption)


@needs_mlm
def test_the_papers_fig4_setting_opens_from_its_shipped_view_without_computing(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Issue 50: the button took 65 s (first figure after 22 s); its view now ships precomputed."""
    calls: list[str] = []

    def refuse(name: str):  # type: ignore[no-untyped-def]
        def run(*args, **kwargs):  # type: ignore[no-untyped-def]
            calls.append(name)
            raise RuntimeError(f"{name} computed")

        return run

    for name in ("attack_unit", "utility_unit", "baselines_unit", "reference_unit"):
        monkeypatch.setattr(pv, name, refuse(name))
    st.cache_data.clear()
    at = AppTest.from_file(PAGE, default_timeout=120).run()
    assert not at.exception and not calls
    at.button(key="paper_fig4").click().run()
    assert not at.exception and not at.error and not calls
    assert at.query_params["emb"] == "bert" and at.multiselect(key="attacks").value == ["mlm"]
    captions = " ".join(c.value for c in at.caption)
    assert "shipped results of the paper's Fig. 4 setting" in captions
    doc = _shipped("paper-fig4")
    mlm_top1 = doc["results"]["attack_units"][0]["result"]["rows"][0]["attacker_top1_unsanitized"]
    # the caption points at no floor (none is drawn with the masked-LM attacker alone) and gives
    # the marker's number
    assert "No claim's floor is drawn" in captions and "black dashed" not in captions
    marker = f"{100 * mlm_top1:.0f}%"
    assert (
        f"the hollow circle is the masked-LM attacker on the original text (ε = ∞), where it names {marker}"
        in captions
    )
    assert at.markdown[0].value.startswith("**From ε = 12 to 16, SanText's sanitized text")
    assert "Vocabulary: BERT whole words" in captions and "offensive words left out" in captions
    trade = json.loads(next(c for c in at.get("plotly_chart") if "tradeoff-figure" in c.proto.id).proto.spec)
    assert not [t for t in trade["data"] if t["name"].startswith("the claim's floor")]


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
    docs = {name: _shipped(name) for name in pv.SHIPPED_VIEWS}
    by_view = {pv.shipped_view(name): doc["results"] for name, doc in docs.items()}
    monkeypatch.setattr(
        pv, "compute_view", lambda view, res=None, progress=None: copy.deepcopy(by_view[view])
    )
    shipped = docs["default"]
    out = tmp_path / "view.json"
    fig4 = tmp_path / "view_paper_fig4.json"  # every other view lies beside the default's file
    grid = tmp_path / "view_grid.json"
    assert main(["precompute-attack-page", "--output", str(out)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 3 and lines[0].startswith(f"wrote {out}") and lines[1].startswith(f"wrote {fig4}")
    assert lines[2].startswith(f"wrote {grid}")
    assert json.loads(out.read_text(encoding="utf-8")) == shipped  # the document is deterministic
    assert json.loads(fig4.read_text(encoding="utf-8")) == docs["paper-fig4"]
    assert json.loads(grid.read_text(encoding="utf-8")) == docs["grid"]
    stamp = out.stat().st_mtime_ns
    assert main(["precompute-attack-page", "--output", str(out), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["current"] is True and summary["written"] is False and out.stat().st_mtime_ns == stamp
    assert [v["view"] for v in summary["views"]] == list(pv.SHIPPED_VIEWS)
    assert main(["precompute-attack-page", "--output", str(out), "--check"]) == 0
    assert capsys.readouterr().out.count("is current") == 3
    # one view: the same summary as before there were several
    assert main(["precompute-attack-page", "--output", str(out), "--view", "paper-fig4", "--json"]) == 0
    one = json.loads(capsys.readouterr().out)
    assert one["view"] == "paper-fig4" and one["path"] == str(fig4) and one["current"] is True
    # stale: one number changed
    doc = json.loads(out.read_text(encoding="utf-8"))
    doc["results"]["attack_units"][0]["result"]["rows"][0]["defense_rate"] += 0.01
    out.write_text(json.dumps(doc), encoding="utf-8")
    assert main(["precompute-attack-page", "--output", str(out), "--check", "--view", "default"]) == 1
    lines = capsys.readouterr().out.strip().splitlines()
    assert len(lines) == 1 and "is stale" in lines[0] and "defense_rate" in lines[0]
    assert main(["precompute-attack-page", "--output", str(out), "--check"]) == 1  # one of the three is stale
    assert [("is stale" in x) for x in capsys.readouterr().out.strip().splitlines()] == [True, False, False]
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
    from dpcore.attack.comparison import load_comparison
    from dpcore.viz.comparison_figure import DEFAULT_SHOWN, comparison_figure

    res = load_comparison()
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


#: The Fig. 4 setting as a URL (what its button's widgets sync to).
FIG4_QUERY = {"mechs": "santext,santext+", "eps": "12,14,16", "emb": "bert", "attacks": "mlm"}


@pytest.mark.parametrize(
    ("query", "talk"),
    [({}, True), (FIG4_QUERY, False), (FIG4_QUERY, True)],
    ids=["talk", "fig4", "fig4-talk"],
)
def test_the_attack_pages_charts_are_legible_in_talk_mode_and_in_the_fig4_setting(
    query: dict[str, str], talk: bool
) -> None:
    """tests/test_figure_legibility.py's checks (≥ 14 px, 4.5 : 1, ≤ 6 legend entries, Streamlit's
    theme off, one colour per name) on the page's other first screens: talk mode and the shipped
    Fig. 4 setting."""
    from tests.test_figure_legibility import _charts, _check_page

    st.cache_data.clear()
    charts = _charts("attack.py", query, talk=talk)
    assert any("tradeoff-figure" in key for key, _, _ in charts)
    _check_page(charts, f"attack.py {query} talk={talk}")
