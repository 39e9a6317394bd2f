"""The Attack page's words and colours (issue 50): the headline above the trade-off chart, the
chart's two-sentence caption, the attacker's description, and one marker per attacker on every
chart (the colour is the mechanism's). Pure functions of the rows (dpcore.attack.page_view,
dpcore.viz): no Streamlit."""

from __future__ import annotations

import json
import re

import pandas as pd
import pytest

from dpcore.attack import page_view as pv
from dpcore.viz.attack_figure import epsilon_figure, tradeoff_figure
from dpcore.viz.comparison_figure import comparison_figure
from dpcore.viz.palette import ATTACKER_INK, CLAIM, attacker_style, colour


def _row(
    mech: str, attack: str, eps: float, defense: float, floor: float | None = None, top1: float = 0.3
) -> dict:
    r = {
        "mechanism": mech,
        "attack": attack,
        "epsilon": eps,
        "defense_rate": defense,
        "ci_low": max(defense - 0.05, 0.0),
        "ci_high": min(defense + 0.05, 1.0),
        "attacker_top1_unsanitized": top1,
        "tokens": 200,
    }
    if floor is not None:
        r["claim_defense_floor"] = floor
    return r


UTILITY = [
    {"mechanism": m, "epsilon": e, "accuracy": a, "ci_low": a - 0.03, "ci_high": a + 0.03}
    for m, e, a in [
        ("santext", 1.0, 0.66),
        ("santext", 10.0, 0.72),
        ("santext+", 1.0, 0.67),
        ("santext+", 10.0, 0.71),
    ]
]
BASE = {"accuracy_unsanitized": 0.784, "accuracy_random": 0.666, "majority": 0.666}
ROWS = [
    _row("santext", "bayes-unigram", 1.0, 0.976, floor=0.079, top1=1.0),
    _row("santext", "bayes-unigram", 10.0, 0.003, floor=0.0, top1=1.0),
    _row("santext", "mlm", 1.0, 0.99, top1=0.32),
    _row("santext", "mlm", 10.0, 0.69, top1=0.32),
    _row("santext+", "bayes-unigram", 1.0, 0.44, floor=0.0, top1=1.0),
    _row("santext+", "bayes-unigram", 10.0, 0.22, floor=0.0, top1=1.0),
]


def test_the_headline_is_one_sentence_with_the_numbers_the_chart_shows() -> None:
    text = pv.headline(ROWS, UTILITY, BASE)
    assert len(re.findall(r"\.(?:\s|$)", text)) == 1 and text.endswith(".")  # one sentence
    assert text.startswith("From ε = 1 to 10, SanText's")
    assert "66% → 72% accuracy (78% on the original text)" in text
    # the strongest attacker at the largest ε (Bayesian: 1 − 0.003), its share at both ends
    assert "the Bayesian attacker names 2.4% → 99.7% of the original words" in text
    # one ε, and no accuracy: the sentence keeps only what it knows
    one = pv.headline([r for r in ROWS if r["epsilon"] == 1.0 and r["attack"] == "mlm"], [], BASE)
    assert one == "At ε = 1, the masked-LM attacker names 1% of the original words."
    assert pv.headline([], [], BASE) == ""


def test_the_caption_is_two_sentences_and_points_only_at_what_is_drawn() -> None:
    text = pv.tradeoff_caption(ROWS, UTILITY)
    sentences = [s for s in text.split(". ") if s]
    assert len(sentences) == 2, text
    # the ε = ∞ markers' numbers are the rows' top-1 on the original text
    assert "the Bayesian attacker names 100% and the masked-LM attacker 32%" in text
    # floors are drawn (Bayesian rows carry them): the caption names them and where they are 0
    assert "black dashed lines are the claims' floors" in text
    assert "from ε = 10 on they lie at 0" in text
    every = [dict(r, claim_defense_floor=0.0) for r in ROWS if r["attack"] == "bayes-unigram"]
    assert "here they lie at 0" in pv.tradeoff_caption(every, UTILITY)
    # the masked-LM attacker alone (the paper's Fig. 4 setting): no floor drawn, none pointed at
    mlm = [r for r in ROWS if r["attack"] == "mlm"]
    alone = pv.tradeoff_caption(mlm, UTILITY)
    assert "No claim's floor is drawn" in alone and "black dashed" not in alone
    fig = tradeoff_figure(pd.DataFrame(mlm), pd.DataFrame(UTILITY), BASE)
    assert not [t for t in fig.data if t.name.startswith("the claim's floor")]
    assert (
        "the hollow circle is the masked-LM attacker on the original text (ε = ∞), where it names 32%"
        in alone
    )


def test_the_floor_is_drawn_above_the_bottom_of_the_axis_and_in_black() -> None:
    fig = tradeoff_figure(pd.DataFrame(ROWS), pd.DataFrame(UTILITY), BASE)
    floors = [t for t in fig.data if t.name.startswith("the claim's floor")]
    assert {t.name for t in floors} == {"the claim's floor, santext", "the claim's floor, santext+"}
    lo = fig.layout.yaxis.range[0]
    assert lo < -0.05 and fig.layout.yaxis.zeroline is False  # a floor at 0 is a line, not the axis
    for t in floors:
        assert t.line.color == CLAIM and "markers" in t.mode  # ticks at each measured ε
        assert min(t.y) >= 0 > lo
    top = epsilon_figure(pd.DataFrame(ROWS), pd.DataFrame(UTILITY), BASE, [
        {"mechanism": "santext", "epsilon": [1.0, 10.0], "defense_floor": [0.0, 0.0]}
    ])  # fmt: skip
    assert top.layout.yaxis.range[0] < -0.05 and top.layout.yaxis.zeroline is False


def test_each_attacker_has_one_look_on_every_chart_and_the_colour_is_the_mechanism() -> None:
    """Issue 50: the Bayesian attacker was blue in one chart and red in the next. Issue 58: blue and
    orange were the attackers here and SanText and SanText+ elsewhere; now the colour is the
    mechanism on every chart and each attacker keeps one marker on all three."""
    trade = tradeoff_figure(pd.DataFrame(ROWS), pd.DataFrame(UTILITY), BASE)
    eps = epsilon_figure(pd.DataFrame(ROWS), pd.DataFrame(UTILITY), BASE)
    cmp_rows = [
        {"mechanism": m, "epsilon": e, "notion": "MLDP", "defense_bayes": 0.5, "defense_mlm": 0.8,
         "accuracy": 0.7, "accuracy_unsanitized": 0.78, "attacker_top1_unsanitized_bayes": 1.0,
         "attacker_top1_unsanitized_mlm": 0.32}
        for m in ("santext", "santext+") for e in (1.0, 10.0)
    ]  # fmt: skip
    comp = comparison_figure(cmp_rows)
    labels = {"Bayesian attacker": "bayes-unigram", "masked-LM attacker": "mlm"}
    seen: dict[str, set[str]] = {"bayes-unigram": set(), "mlm": set()}
    for fig in (trade, eps, comp):
        for t in fig.data:
            name = t.name or ""
            atk = next((a for label, a in labels.items() if label in name), None)
            if atk is None:
                continue
            symbols = t.marker.symbol if isinstance(t.marker.symbol, tuple | list) else [t.marker.symbol]
            seen[atk].add(symbols[-1])  # an ε = ∞ point is a hollow circle with the attacker's marker
            c = (t.line.color if t.line is not None else None) or t.marker.color
            mech = next((m for m in ("santext+", "santext") if f"{m}," in name or f"{m} (" in name), None)
            assert c == (colour(mech) if mech else ATTACKER_INK), (name, c)
    assert seen == {a: {attacker_style(a).symbol} for a in seen}
    assert attacker_style("bayes-unigram") != attacker_style("mlm")


def test_the_attacker_is_told_once_per_data_set_and_its_two_numbers_are_explained() -> None:
    rec = json.loads(pv.TRAINING_RECORD.read_text(encoding="utf-8"))
    text = pv.attacker_caption(top1_here=0.32, sentences=20)
    assert "stage(s)" not in text and "thread(s)" not in text
    tweets = f"{rec['corpus']['sources']['tweets']:,} public tweets"
    assert text.count(tweets) == 1  # two GPU runs on the same tweets: told once
    assert f"{100 * rec['heldout_top1']:.0f}% at its first guess" in text
    # the chart's marker says 32%: the caption says so, and why the two differ
    assert "On the chart it names 32% of the original words" in text
    assert "one piece of its own vocabulary counts as missed" in text
    assert "not that no attacker could succeed" in text


def test_shipped_paths_and_views() -> None:
    assert pv.shipped_path("default") == pv.SHIPPED_PATH
    fig4 = pv.shipped_path("paper-fig4")
    assert fig4.parent == pv.SHIPPED_PATH.parent and fig4.name == "attack_page_paper_fig4.json"
    with pytest.raises(ValueError, match="no shipped view"):
        pv.shipped_path("nope")
    v = pv.paper_view()
    assert v.embedding == "bert" and v.attacks == ("mlm",) and v.epsilons == (12.0, 14.0, 16.0)
    assert dict(dict(v.parameters)["santext+"]) == {"p": 0.3, "w": 0.9}
    # the cap on masked-LM work: 2 mechanisms × (3 ε + ∞) runs per sentence
    big = pv.paper_view(pv.View.from_dict({**pv.default_view().to_dict(), "sentences": 200}))
    assert big.sentences == pv.MAX_MLM_SENTENCE_RUNS // 8


def test_the_epsilon_axis_is_labelled_at_the_papers_epsilon() -> None:
    """ε = 12, 14, 16 (the Fig. 4 setting) hold no decade: the axis labels them instead of nothing."""
    rows = [dict(ROWS[2], epsilon=12.0), dict(ROWS[3], epsilon=16.0)]  # the masked-LM attacker's
    util = [dict(UTILITY[0], epsilon=12.0), dict(UTILITY[1], epsilon=16.0)]
    fig = epsilon_figure(pd.DataFrame(rows), pd.DataFrame(util), BASE)
    assert list(fig.layout.xaxis2.ticktext) == ["12", "16"] and list(fig.layout.xaxis.tickvals) == [
        12.0,
        16.0,
    ]
    decades = epsilon_figure(pd.DataFrame(ROWS), pd.DataFrame(UTILITY), BASE)
    assert list(decades.layout.xaxis2.ticktext) == ["1", "10"]
