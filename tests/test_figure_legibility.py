"""Every figure the pages draw is legible on a projector and speaks one visual language (issue 50).

Each page is run as a visitor meets it (AppTest, the page's defaults and its other tabs), and
every Plotly chart it sends is read back: every text is at least 14 px with at least 4.5 : 1
contrast on white, at most 6 legend entries are visible at first, Streamlit's chart theme (12-px
grey ticks) is off, and a name (a mechanism, an attacker, a verdict) has the same colour on every
chart of the page.
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest
from streamlit.testing.v1 import AppTest

from dpcore.viz.palette import (
    ATTACKER_INK,
    MAX_LEGEND_ENTRIES,
    MIN_CONTRAST,
    MIN_FONT_PX,
    NAMED,
    UNKNOWN,
    attacker_style,
    colour,
    contrast_ratio,
    style_figure,
)

ROOT = Path(__file__).resolve().parents[1]

#: (page file, query parameters): every page as first met, and the other tabs of the pages with tabs.
VIEWS = [
    ("home.py", {}),
    ("audit.py", {}),
    ("audit_text.py", {}),
    ("audit_rewriter.py", {}),
    ("rewriter_calibration.py", {}),
    ("verdicts.py", {}),
    ("sensitivity.py", {}),
    ("accounting.py", {}),
    ("accounting.py", {"tab": "binary"}),
    ("accounting.py", {"tab": "sampler"}),
    ("sanitize.py", {}),
    ("attack.py", {}),
]


pytestmark = pytest.mark.usefixtures("clear_page_caches")


def _charts(page: str, query: dict[str, str], talk: bool = False) -> list[tuple[str, str, dict[str, Any]]]:
    at = AppTest.from_file(str(ROOT / "pages" / page), default_timeout=240)
    for k, v in query.items():
        at.query_params[k] = v
    if talk:
        at.query_params["talk"] = "1"
    at.run()
    assert not at.exception, at.exception
    out = [
        (c.proto.id.split("-", 2)[-1], c.proto.theme, json.loads(c.proto.spec))
        for c in at.get("plotly_chart")
    ]
    assert out, f"{page} {query} drew no chart"
    return out


def _texts(spec: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """(where, font) of every text a figure shows, with inherited size and colour filled in."""
    layout = spec.get("layout", {})
    base = layout.get("font", {})
    size, col = base.get("size", 12), base.get("color", "#2a3f5f")  # Plotly's defaults

    def eff(font: dict[str, Any] | None, where: str) -> tuple[str, dict[str, Any]]:
        font = font or {}
        return where, {"size": font.get("size", size), "color": font.get("color", col)}

    out = [eff(base, "layout.font"), eff(layout.get("legend", {}).get("font"), "legend")]
    title = layout.get("title", {})
    if isinstance(title, dict) and title.get("text"):
        out.append(eff(title.get("font"), "title"))
        if (title.get("subtitle") or {}).get("text"):
            out.append(eff(title["subtitle"].get("font"), "subtitle"))
    for name, axis in layout.items():
        if name.startswith(("xaxis", "yaxis")) and axis.get("visible", True) is not False:
            out.append(eff(axis.get("tickfont"), f"{name}.tickfont"))
            title = axis.get("title", {})
            if isinstance(title, dict) and title.get("text"):
                out.append(eff(title.get("font"), f"{name}.title"))
    for i, ann in enumerate(layout.get("annotations", [])):
        if ann.get("text"):
            out.append(eff(ann.get("font"), f"annotation {i} {ann['text'][:30]!r}"))
    for i, menu in enumerate(layout.get("updatemenus", [])):
        out.append(eff(menu.get("font"), f"updatemenu {i}"))
    for t in spec.get("data", []):
        mode = t.get("mode", "")
        if t.get("text") is not None and ("text" in mode or t.get("type") in ("bar", "heatmap")):
            out.append(eff(t.get("textfont"), f"trace {t.get('name')!r} text"))
    return out


def _visible_legend(spec: dict[str, Any]) -> list[str]:
    layout = spec.get("layout", {})
    data = spec.get("data", [])
    if layout.get("showlegend") is False or (layout.get("showlegend") is None and len(data) == 1):
        return []
    return [
        t["name"] for t in data
        if t.get("name") and t.get("showlegend", True) is not False and t.get("visible", True) is not False
    ]  # fmt: skip


def _trace_colours(spec: dict[str, Any]) -> dict[str, str]:
    out = {}
    for t in spec.get("data", []):
        c = (t.get("line") or {}).get("color") or (t.get("marker") or {}).get("color")
        if t.get("name") and isinstance(c, str):
            out[t["name"]] = c.lower()
    return out


def _check_page(charts: list[tuple[str, str, dict[str, Any]]], label: str) -> None:
    problems: list[str] = []
    colours: dict[str, dict[str, str]] = defaultdict(dict)
    for key, theme, spec in charts:
        if theme == "streamlit":
            problems.append(f"{key}: Streamlit's chart theme is on (it sets 12-px grey ticks)")
        for where, font in _texts(spec):
            if font["size"] < MIN_FONT_PX:
                problems.append(f"{key}: {where} is {font['size']} px")
            if contrast_ratio(font["color"]) < MIN_CONTRAST:
                problems.append(
                    f"{key}: {where} colour {font['color']} has contrast {contrast_ratio(font['color']):.2f}"
                )
        legend = _visible_legend(spec)
        if len(legend) > MAX_LEGEND_ENTRIES:
            problems.append(f"{key}: {len(legend)} legend entries visible: {legend}")
        for name, c in _trace_colours(spec).items():
            colours[name][key] = c
    for name, by_chart in colours.items():
        if len(set(by_chart.values())) > 1:
            problems.append(f"{name!r} has different colours across charts: {by_chart}")
    assert not problems, f"{label}:\n" + "\n".join(problems)


@pytest.mark.parametrize(
    ("page", "query"), VIEWS, ids=[f"{p[:-3]}{'-' + '-'.join(q.values()) if q else ''}" for p, q in VIEWS]
)
def test_every_chart_a_page_draws_is_legible(page: str, query: dict[str, str]) -> None:
    _check_page(_charts(page, query), f"{page} {query}")


def test_talk_mode_draws_larger_text() -> None:
    plain = _charts("sensitivity.py", {})
    talk = _charts("sensitivity.py", {}, talk=True)
    size = lambda charts: charts[0][2]["layout"]["font"]["size"]  # noqa: E731
    assert size(talk) > size(plain) >= MIN_FONT_PX
    _check_page(talk, "sensitivity.py in talk mode")


def test_the_palette_keeps_names_apart_and_legible() -> None:
    for c in (*NAMED.values(), UNKNOWN, ATTACKER_INK):
        assert contrast_ratio(c) >= MIN_CONTRAST, c
    # a name's colour does not depend on how it is written or on the chart it is on
    assert colour("adept (exact)") == colour("ADePT") == NAMED["adept"]
    assert colour("pypantera:CusText") == colour("custext") == NAMED["custext"]
    assert colour("some new mechanism") == colour("some new mechanism")
    # the attackers have distinct markers and dashes and no colour of their own (issue 58);
    # the verdicts have distinct colours
    assert len({attacker_style(n) for n in ("mlm", "bayes-unigram", "bayes-mlm")}) == 3
    assert {colour(n) for n in ("mlm", "bayes-unigram", "bayes-mlm")} == {ATTACKER_INK}
    assert len({colour(n) for n in ("violates", "premise-broken", "not-detected", "within-claim")}) == 4
    # and the contrast ratio is WCAG's: black on white is 21, white on white 1, #767676 is 4.54
    assert contrast_ratio("#000000") == pytest.approx(21.0)
    assert contrast_ratio("#ffffff") == pytest.approx(1.0)
    assert contrast_ratio("#767676") == pytest.approx(4.54, abs=0.01)


def test_style_figure_fixes_small_grey_text_and_caps_the_legend() -> None:
    import plotly.graph_objects as go

    fig = go.Figure([go.Scatter(x=[0, 1], y=[i, i], name=f"series {i}") for i in range(9)])
    fig.update_layout(font={"size": 11}, xaxis={"tickfont": {"size": 10, "color": "#aaaaaa"}})
    fig.add_annotation(text="a note", font={"size": 9, "color": "#bbbbbb"}, x=0, y=0)
    spec = json.loads(style_figure(fig).to_json())
    fonts = dict(_texts(spec))
    assert all(f["size"] >= MIN_FONT_PX for f in fonts.values()), fonts
    assert all(contrast_ratio(f["color"]) >= MIN_CONTRAST for f in fonts.values()), fonts
    assert len(_visible_legend(spec)) == MAX_LEGEND_ENTRIES
    button = spec["layout"]["updatemenus"][0]["buttons"][0]
    assert button["label"] == "+3 more in legend"
    assert button["args"][0]["showlegend"].count(True) == 9  # the toggle shows all nine
