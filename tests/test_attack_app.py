"""AppTest: the "Attack & utility" page renders, reacts to widgets, refuses bad URLs clearly.

The Bayesian (unigram) attack and the utility part always run; the masked-LM attacks run only
when the shipped attacker is installed (otherwise the page says it skips them).
"""

from __future__ import annotations

import base64
import json
from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from dpcore.models.masked_lm import default_mlm_available

ROOT = Path(__file__).resolve().parents[1]
PAGE = str(ROOT / "pages" / "attack.py")
SMALL = {"vsize": "2000", "n": "10", "ntrain": "500", "ntest": "200", "attacks": "bayes-unigram"}


pytestmark = pytest.mark.usefixtures("clear_page_caches")


#: Columns of the tables after the sweep's: the all-mechanism comparison's and the LLM
#: reconstruction's (its mechanisms' and its rewriters').
OTHER_TABLES = ("ε scale", "one-word ceiling", "words in the release")
#: Keys of the figures after the sweep's.
OTHER_CHARTS = ("comparison-figure", "reconstruction-figure")


def sweep_tables(at) -> list:  # type: ignore[no-untyped-def]
    """The sweep's tables (not the comparison's or the LLM reconstruction's at the end of the page)."""
    return [t for t in at.dataframe if not set(OTHER_TABLES) & set(t.value.columns)]


def sweep_charts(at) -> list:  # type: ignore[no-untyped-def]
    """The sweep's figures (not the comparison's or the LLM reconstruction's at the end of the page)."""
    return [c for c in at.get("plotly_chart") if getattr(c, "key", None) not in OTHER_CHARTS]


def _app(**query: str) -> AppTest:
    at = AppTest.from_file(PAGE, default_timeout=120)
    for k, v in {**SMALL, **query}.items():
        at.query_params[k] = v
    return at


def _values(x: object) -> list[float]:
    """Plotly's JSON holds arrays as a list or as base64 typed data."""
    if isinstance(x, dict):
        return np.frombuffer(base64.b64decode(x["bdata"]), dtype=x["dtype"]).tolist()
    return list(x)  # type: ignore[call-overload]


def test_small_config_renders_both_figures_and_tables() -> None:
    at = _app(mechs="santext", eps="1,10").run()
    assert not at.exception
    assert not at.error
    assert len(sweep_charts(at)) == 2
    trade = json.loads(sweep_charts(at)[0].proto.spec)
    labels = [t for tr in trade["data"] for t in (tr.get("text") or [])]
    assert "ε=1" in labels and "ε=10" in labels and "ε=∞" in labels
    assert len(sweep_tables(at)) == 2
    assert at.query_params["eps"] == "1,10"
    # the shipped LLM reconstruction study, after the sweep: its chart (a panel per mechanism and
    # sentence set), its headline, its table and its examples
    (rec,) = [c for c in at.get("plotly_chart") if getattr(c, "key", None) == "reconstruction-figure"]
    titles = [a["text"] for a in json.loads(rec.proto.spec)["layout"]["annotations"]]
    assert any(t.startswith("<b>santext</b> · unseen lines") for t in titles)
    assert any(t.startswith("<b>dp-mlm</b> · public lines") for t in titles)
    assert any("the LLM restored" in m.value for m in at.markdown)
    assert any("one-word ceiling" in t.value.columns for t in at.dataframe)
    (examples,) = [m.value for m in at.markdown if "→ released" in m.value]  # one list, a line per run
    assert len(examples.splitlines()) == 4  # SanText and DP-MLM, public and unseen lines
    assert any("dp-prompt: the LLM wrote" in m.value for m in at.markdown)


def test_widget_change_updates_the_figure() -> None:
    at = _app(mechs="santext", eps="1,10").run()
    before = json.loads(sweep_charts(at)[1].proto.spec)
    at.multiselect(key="eps").set_value(["1", "3", "10"]).run()
    assert not at.exception
    after = json.loads(sweep_charts(at)[1].proto.spec)
    assert before != after
    xs = next(tr["x"] for tr in after["data"] if tr["name"].startswith("accuracy"))
    assert _values(xs) == [1.0, 3.0, 10.0]
    assert at.query_params["eps"] == "1,3,10"


def test_bad_query_params_warn_and_fall_back(monkeypatch: pytest.MonkeyPatch) -> None:
    # The fallback attack list includes the masked-LM attacks: hide the model to keep this fast.
    monkeypatch.setattr("dpcore.models.masked_lm.default_mlm_available", lambda: False)
    at = _app(mechs="santext", eps="1,2,3,6,10,14,20", n="5000", data="imdb", attacks="nope").run()
    assert not at.exception
    text = " ".join(w.value for w in at.warning)
    for key in ("eps", "n", "data", "attacks"):
        assert f"`{key}`" in text
    assert at.number_input(key="n").value == 20  # the default (chosen for a first figure in seconds)


@pytest.mark.skipif(not default_mlm_available(), reason="the shipped masked-LM attacker is not installed")
def test_mlm_attacks_run_with_the_shipped_model() -> None:
    at = _app(mechs="santext", eps="3", attacks="mlm,bayes-mlm", n="5").run()
    assert not at.exception and not at.error
    shown = set(sweep_tables(at)[0].value["Attacker"])  # human column name, attackers in words
    assert {"masked-LM attacker", "Bayesian attacker (masked LM prior)"} <= shown


def test_missing_model_is_explained_not_fatal(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("dpcore.models.masked_lm.default_mlm_available", lambda: False)
    at = _app(mechs="santext", eps="3", attacks="bayes-unigram,mlm").run()
    assert not at.exception
    assert any("masked-LM" in w.value for w in at.warning)
    assert len(sweep_charts(at)) == 2


@pytest.mark.skipif(not default_mlm_available(), reason="the shipped masked-LM attacker is not installed")
def test_masked_lm_work_over_the_budget_is_refused_with_the_numbers() -> None:
    # 200 sentences × (3 ε + reference) × 2 mechanisms = 1,600 > 480: refused before any work.
    at = _app(mechs="santext,santext+", eps="1,3,10", n="200", attacks="bayes-unigram,mlm")
    at.run()
    assert not at.exception
    assert len(at.error) == 1
    msg = at.error[0].value
    assert "1,600" in msg and "480" in msg and "Bayesian unigram" in msg
    assert not sweep_charts(at)
    # The same request with the Bayesian unigram attack alone needs no masked LM and runs.
    at.multiselect(key="attacks").set_value(["bayes-unigram"]).run()
    assert not at.exception and not at.error
    assert len(sweep_charts(at)) == 2


def test_no_attack_selected_shows_utility_only() -> None:
    # Regression: an empty attack list crashed the ε figure (KeyError 'mechanism' in groupby).
    at = _app(mechs="santext", eps="1,10").run()
    at.multiselect(key="attacks").set_value([]).run()
    assert not at.exception and not at.error
    assert any("Choose at least one attack" in i.value for i in at.info)
    assert len(sweep_charts(at)) == 1
    assert len(sweep_tables(at)) == 1  # the accuracy table


def test_every_registered_mechanism_is_offered_with_its_own_parameters_and_limits() -> None:
    """TEM and CusText get the Bayesian attack, Feyisetan does not (Monte-Carlo), truncated-gumbel
    is skipped below its ε floor, each with a note; parameters come from the schema."""
    at = _app(**SMALL, mechs="tem,custext,feyisetan,truncated-gumbel", eps="1,3", k="5").run(timeout=300)
    assert not at.exception
    ms = next(m for m in at.multiselect if m.label == "Mechanisms")
    from dpcore.text import TEXT_MECHANISMS

    assert set(ms.options) == set(TEXT_MECHANISMS.names())
    labels = {s.label: s.value for s in at.slider}
    assert labels["k (custext)"] == 5 and "beta (tem)" in {n.label for n in at.number_input}
    notes = " ".join(c.value for c in at.caption)
    assert "truncated-gumbel** is defined only for ε >" in notes and "1, 3 skipped" in notes
    assert "feyisetan**: no Bayesian attack" in notes and "Monte-Carlo only" in notes
    assert "truncated-gumbel**: dpcore refutes its published guarantee" in notes
    attack, utility = sweep_tables(at)[:2]
    got = set(zip(attack.value["Mechanism"], attack.value["ε"], strict=True))
    # each attacker's ceiling (its top-1 on unsanitized text) closes the table as ε = ∞
    assert got == {(m, e) for m in ("custext", "tem") for e in ("1", "3")} | {("unsanitized (ε = ∞)", "∞")}
    assert set(utility.value["Mechanism"]) == {"tem", "custext", "feyisetan"}


@pytest.mark.skipif(not default_mlm_available(), reason="the shipped masked-LM attacker is not installed")
def test_dp_mlm_runs_the_masked_lm_attack_and_says_why_utility_is_skipped() -> None:
    at = _app(mechs="dp-mlm", eps="1", n="5", attacks="mlm").run(timeout=300)
    assert not at.exception
    notes = " ".join(c.value for c in at.caption)
    assert "dp-mlm**: utility is not computed on this server" in notes
    attack = sweep_tables(at)[0]
    assert list(attack.value["Mechanism"]) == ["dp-mlm", "unsanitized (ε = ∞)"]
    assert list(attack.value["Attacker"]) == ["masked-LM attacker"] * 2
    assert any("No accuracy" in i.value for i in at.info)


@pytest.mark.skipif(not default_mlm_available(), reason="the shipped masked-LM attacker is not installed")
def test_the_papers_fig4_setting_is_one_click_and_says_what_differs() -> None:
    from dpcore.attack import paper_setting as paper

    # from the page's defaults, as a first visitor: both views ship precomputed, so this is quick
    # (tests/test_attack_page_view.py checks that nothing is computed)
    at = AppTest.from_file(PAGE, default_timeout=120).run()
    assert not at.exception and not at.error
    assert not any("what differs" in e.label for e in at.expander)
    at.button(key="paper_fig4").click().run(timeout=300)
    assert not at.exception and not at.error
    assert at.multiselect(key="mechs").value == list(paper.PAPER_MECHANISMS)
    assert at.multiselect(key="eps").value == ["12", "14", "16"]
    assert at.selectbox(key="emb").value == "bert" and at.multiselect(key="attacks").value == ["mlm"]
    assert at.slider(key="p").value == 0.3 and at.slider(key="w").value == 0.9
    assert at.query_params["emb"] == "bert"  # the URL reproduces the setting
    differs = next(e for e in at.expander if "what differs" in e.label)
    assert "BERT-base" in " ".join(m.value for m in differs.markdown)
    table = sweep_tables(at)[0].value
    assert set(table["Mechanism"]) >= {"santext", "santext+"}
    # the ceiling row and, for SanText+, the share of positions it kept
    assert table["ε"].astype(str).str.contains("∞").any() and "Kept unchanged" in table.columns
