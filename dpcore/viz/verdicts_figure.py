"""The verdict table as one figure: how far above its claim each sanitizer's loss was certified to
be, or how small a flaw its run would have caught.

One horizontal scale, "loss above the claim (nats)" (logarithmic: the values span decades), and
one line per mechanism, grouped by library under a bold header line. The table's verdicts give the
same numbers on the same scale (nats above the claim). On a row that violates, a red diamond at
its certified excess: the largest violating pair's lower bound − claimed bound, or the pooled
test's certified excess, at the row's confidence. On a row where no violation was found, a grey
open ring at the smallest flaw shared by the vocabulary that the run would have caught with
probability 0.9: the row says what it would have seen, never that the sanitizer is private. A row
with neither (it could not run, nothing could be sampled, its premise is broken, or its run states
no uniform flaw) has a short note on its line and no marker. Each hover gives the row's full name,
its verdict as the table's opened row words it, and its claim (ε-LDP, or ε·d + ε₀ metric LDP with
its ε₀, and the paper).

So that the whole figure fits the first screen of a 1280×720 projector beside the page's
headline, a long table is drawn in two columns of groups side by side (each group stays whole),
and a row's label drops the library prefix its group header already names (``pypantera:CMP`` is
``CMP`` under "pyPANTERA 1.0.2"; the hover keeps the full name). The opened row is marked: a band
across its line, its label in bold with an arrow, a ring around its marker and its number beside
it.
"""

from __future__ import annotations

import math
import textwrap
from collections.abc import Sequence
from typing import Any

import plotly.graph_objects as go

from dpcore.formatting import percent
from dpcore.pairtest.verdicts import label
from dpcore.verdicts.document import verdict_of
from dpcore.verdicts.page_view import (
    caught_delta,
    certified_excess,
    group_label,
    groups,
)
from dpcore.verdicts.wording import headline, largest_violation, nats, power_summary, short_claim
from dpcore.viz.axes import FONT, log_axis
from dpcore.viz.palette import INK, SOFT_INK, colour

__all__ = [
    "HIGHLIGHT",
    "LINE_PX",
    "MAX_HEIGHT_PX",
    "NOTES",
    "OPENED",
    "TALK_LINE_PX",
    "TALK_MAX_HEIGHT_PX",
    "X_TITLE",
    "caught_name",
    "opened_label",
    "row_label",
    "verdicts_figure",
    "violating_name",
]

#: The horizontal axis: one scale for the figure and the table (nats above the claim).
X_TITLE = "loss above the claim (nats)"
#: Line height (px) per mechanism or group header; in talk mode (larger text).
LINE_PX = 18
TALK_LINE_PX = 21
#: The most the figure may take of a 1280×720 first screen under the page's header (px), plain and
#: in talk mode: a longer table draws closer lines, down to :data:`MIN_LINE_PX` of its size.
MAX_HEIGHT_PX = 440
TALK_MAX_HEIGHT_PX = 476
#: The figure's height apart from its lines (px): the legend above the plot (when it has one) and
#: the axes' margins.
LEGEND_PX, AXES_PX = 34, 62
#: The closest lines (px) for each line size: never tighter than the text needs.
MIN_LINE_PX = {LINE_PX: 15, TALK_LINE_PX: 18}
#: A table with more lines than this is drawn in two columns.
ONE_COLUMN_MAX = 16
#: The widest line of a hover box (characters).
_HOVER_CHARS = 72
#: The opened row: the band across its line, and the name of that shape (tests find it by name).
HIGHLIGHT = "rgba(255, 196, 0, 0.28)"
OPENED = "opened row"

#: The note on a line without a marker, by verdict (not-detected: its run states no uniform flaw).
NOTES = {
    "cannot-run": label("cannot-run"),
    "untested": label("untested"),
    "out-of-reach": label("out-of-reach"),
    "not-detected": "no flaw size stated",
    "premise-broken": "premise broken",
}
#: The notes' colours: a broken premise in its verdict's colour, the others in grey.
_NOTE_COLOURS = {"premise-broken": colour("premise-broken")}


def _lines(text: str) -> str:
    """``text`` broken into hover lines of at most :data:`_HOVER_CHARS` characters."""
    return "<br>".join(textwrap.wrap(text, _HOVER_CHARS, break_long_words=False))


def violating_name(confidence: float) -> str:
    """The legend's name of the violating rows' markers at a confidence level."""
    return f"certified excess (lower bound at {percent(confidence, exact=True)})"


def caught_name(power: float) -> str:
    """The legend's name of the no-violation rows' markers at a power."""
    return f"smallest uniform flaw caught with probability {power:g}"


def opened_label(row: dict[str, Any], value: float) -> str:
    """The number beside the opened row's marker, as its table cell gives it: "≥ 1.25 nats above"
    (certified excess) or "would catch ≥ 0.0171" (the smallest flaw its run would have caught)."""
    return f"≥ {nats(value)} nats above" if verdict_of(row) == "violates" else f"would catch ≥ {nats(value)}"


def _hover(row: dict[str, Any]) -> str:
    """A marker's hover: the row's name, its verdict in words (the same numbers as the table), the
    violating pair where there is one, and the claim."""
    parts = [f"<b>{row['name']}</b>", _lines(headline(row))]
    w = largest_violation(row)
    if w is not None and w["kind"] == "pair":
        parts.append(f"pair ({w['x']}, {w['x_prime']})")
    parts.append(_lines(f"claim: {short_claim(row)}"))
    return "<br>".join(parts)


def row_label(row: dict[str, Any]) -> str:
    """A row's label in the figure: its name without the library prefix its group header names
    (``pypantera:CMP`` → ``CMP``, ``flawed:krr-overclaimed`` → ``krr-overclaimed``); a published
    package's row by its package (``dpmlm:rewrite`` → ``dpmlm``), since its group holds several."""
    name = str(row["name"])
    if row.get("group") == "packages":
        return str(row.get("library") or name)
    return name.split(":", 1)[1] if ":" in name else name


def _columns(sizes: list[int], n_columns: int, max_lines: int | None = None) -> tuple[int, int]:
    """Where the second column starts: ``(k, m)``: group k's first m rows end the first column and
    the rest of it opens the second under a "continued" header (``m == 0``: group k starts the
    second column whole). Groups stay in order and whole, the longer column as short as it can be;
    only when whole groups would make a column longer than ``max_lines`` (what fits the figure's
    height) is a group split, where that makes the longer column shortest (its repeated header
    counts as a line). ``(len(sizes), 0)``: one column. ``sizes`` counts each group's header and
    rows."""
    if n_columns < 2 or len(sizes) < 2:
        return len(sizes), 0
    total = sum(sizes)
    whole = min(range(1, len(sizes)), key=lambda k: (max(sum(sizes[:k]), total - sum(sizes[:k])), k))
    best, cut = max(sum(sizes[:whole]), total - sum(sizes[:whole])), (whole, 0)
    if max_lines is None or best <= max_lines:
        return cut
    for k, size in enumerate(sizes):
        for m in range(1, size - 1):  # at least one row on each side
            first = sum(sizes[:k]) + 1 + m
            longer = max(first, total - first + 1)
            if longer < best:
                best, cut = longer, (k, m)
    return cut


def verdicts_figure(
    rows: Sequence[dict[str, Any]],
    *,
    opened: str | None = None,
    line_px: int = LINE_PX,
    columns: int | None = None,
    max_height: int | None = None,
) -> go.Figure:
    """The figure of ``rows`` (verdict file rows, in the file's order), grouped by library.

    Parameters
    ----------
    rows
        Rows of a verdict file (:func:`dpcore.verdicts.run.run_row`'s records). Rows that did not
        run are listed with a note and no marker.
    opened
        The name of the row the page has opened: marked by a band across its line (a shape named
        :data:`OPENED`), its label in bold after an arrow, a ring around its marker and its number
        beside it. None (or a row not among ``rows``): nothing is marked.
    line_px
        Height of one line (px): :data:`LINE_PX`, or :data:`TALK_LINE_PX` for talk mode's larger
        text.
    columns
        1 or 2 columns of groups; None: two when there are more than :data:`ONE_COLUMN_MAX` lines
        and more than one group.
    max_height
        The most height (px) the figure may take (:data:`MAX_HEIGHT_PX` on the page): a figure that
        would be taller draws its lines closer, down to :data:`MIN_LINE_PX` of ``line_px``. None:
        ``line_px`` as given.

    Returns
    -------
    plotly.graph_objects.Figure
        One red trace per confidence level ("certified excess (lower bound at 95%)"), one grey
        trace per power ("smallest uniform flaw caught with probability 0.9"), in the legend once
        each; ``customdata`` of each marker is its row's name. y positions are line numbers (top
        down) on ``yaxis`` (first column) or ``yaxis2`` (second column, labels on its right),
        labelled with the mechanisms and the group headers. Notes are annotations named after
        their row.
    """
    rows = list(rows)
    names = groups(rows)
    sizes = [1 + sum(1 for r in rows if r["group"] == g) for g in names]
    if columns is None:
        columns = 2 if sum(sizes) > ONE_COLUMN_MAX and len(names) > 1 else 1
    # the most lines a column may hold at the closest line spacing (legend and axes included)
    floor = MIN_LINE_PX.get(line_px, line_px)
    max_lines = None if max_height is None else (int(max_height) - LEGEND_PX - AXES_PX) // floor
    first, kept = _columns(sizes, columns, max_lines)
    n_cols = 2 if first < len(names) else 1

    ticks: list[list[float]] = [[] for _ in range(n_cols)]
    labels: list[list[str]] = [[] for _ in range(n_cols)]
    # per (kind, level): [(value, column, line, row)]
    violating: dict[float, list[tuple[float, int, int, dict[str, Any]]]] = {}
    caught: dict[float, list[tuple[float, int, int, dict[str, Any]]]] = {}
    notes: list[tuple[int, int, str, str, str]] = []  # column, line, text, colour, row name
    headers: list[tuple[int, int]] = []
    where: dict[str, tuple[int, int]] = {}
    lines = [0] * n_cols
    for k, g in enumerate(names):
        col = 0 if k < first or (k == first and kept) else 1
        pos = lines[col]
        headers.append((col, pos))
        ticks[col].append(pos)
        labels[col].append(f"<b>{group_label(g, rows)}</b>")
        pos += 1
        for i, r in enumerate(r for r in rows if r["group"] == g):
            if k == first and kept and i == kept:  # the group goes on at the top of the second column
                lines[col], col = pos, 1
                pos = lines[col]
                headers.append((col, pos))
                ticks[col].append(pos)
                labels[col].append(f"<b>{group_label(g, rows)} (continued)</b>")
                pos += 1
            ticks[col].append(pos)
            labels[col].append(row_label(r))
            where[r["name"]] = (col, pos)
            v = verdict_of(r)
            excess = certified_excess(r) if v == "violates" else None
            delta = caught_delta(r) if v == "not-detected" else None
            if excess is not None and math.isfinite(excess) and excess > 0:
                conf = float(r["audit"].get("confidence", 0.95))
                violating.setdefault(conf, []).append((excess, col, pos, r))
            elif delta is not None and delta > 0:
                power = float(power_summary(r)["power"])
                caught.setdefault(power, []).append((delta, col, pos, r))
            else:
                notes.append((col, pos, NOTES.get(v, v), _NOTE_COLOURS.get(v, SOFT_INK), r["name"]))
            pos += 1
        lines[col] = pos
    n_lines = max(lines) if rows else 1

    def axis_refs(col: int) -> dict[str, str]:
        return {"xaxis": "x" if col == 0 else "x2", "yaxis": "y" if col == 0 else "y2"}

    fig = go.Figure()
    kinds = (
        (violating, colour("violates"), "diamond", violating_name),
        (caught, colour("not-detected"), "circle-open", caught_name),
    )
    for points_by_level, col_colour, symbol, name_of in kinds:
        for level, pts in points_by_level.items():
            for col in range(n_cols):
                mine = [p for p in pts if p[1] == col]
                if not mine:
                    continue
                first_of_level = col == min(p[1] for p in pts)
                marker: dict[str, Any] = {"size": 13, "color": col_colour, "symbol": symbol}
                if symbol == "circle-open":
                    marker["line"] = {"width": 2.5}
                fig.add_trace(
                    go.Scatter(
                        x=[p[0] for p in mine],
                        y=[p[2] for p in mine],
                        mode="markers",
                        marker=marker,
                        name=name_of(level),
                        legendgroup=name_of(level),
                        showlegend=first_of_level,
                        customdata=[p[3]["name"] for p in mine],
                        hovertext=[_hover(p[3]) for p in mine],
                        hovertemplate="%{hovertext}<extra></extra>",
                        **axis_refs(col),
                    )
                )
    values = [p[0] for pts in (*violating.values(), *caught.values()) for p in pts]
    if values:
        lo, hi = min(values), max(values)
        x_range = [math.log10(lo) - 0.25, math.log10(hi) + 0.25]
        xaxis = log_axis(X_TITLE, [lo, hi], range=x_range)
    else:
        xaxis = {"title": X_TITLE, "range": [0, 1]}
    xaxis |= {"showgrid": True, "zeroline": False}

    # the opened row: a band across its line, its label in bold, a ring and its number
    if opened in where:
        col, pos = where[opened]
        refs = axis_refs(col)
        fig.add_shape(
            type="rect", name=OPENED, xref=f"{refs['xaxis']} domain", yref=refs["yaxis"],
            x0=0, x1=1, y0=pos - 0.5, y1=pos + 0.5, fillcolor=HIGHLIGHT, line={"width": 0}, layer="below",
        )  # fmt: skip
        k = ticks[col].index(pos)
        labels[col][k] = f"<b>▶ {labels[col][k]}</b>"
        marked = [(p[0], p[3]) for pts in (*violating.values(), *caught.values()) for p in pts]
        mark = next((m for m in marked if m[1]["name"] == opened), None)
        if mark is not None and values:
            x, row = mark
            right_half = math.log10(x) > (x_range[0] + x_range[1]) / 2
            fig.add_trace(
                go.Scatter(
                    x=[x], y=[pos], mode="markers+text", name=OPENED, showlegend=False,
                    marker={"size": 24, "color": "rgba(0,0,0,0)", "line": {"color": INK, "width": 2}},
                    text=[opened_label(row, x)], textposition="middle left" if right_half else "middle right",
                    textfont={"color": INK}, customdata=[row["name"]], hoverinfo="skip", **refs,
                )
            )  # fmt: skip
    for col, pos, text, note_colour, name in notes:
        refs = axis_refs(col)
        fig.add_annotation(
            x=0.02, xref=f"{refs['xaxis']} domain", xanchor="left", y=pos, yref=refs["yaxis"], text=text,
            showarrow=False, font={"color": note_colour}, name=name,
        )  # fmt: skip
    for col, pos in headers:
        if pos > 0:
            refs = axis_refs(col)
            fig.add_shape(
                type="line", xref=f"{refs['xaxis']} domain", yref=refs["yaxis"], x0=0, x1=1,
                y0=pos - 0.5, y1=pos - 0.5, line={"color": "#cccccc", "width": 1},
            )  # fmt: skip
    if not rows:
        fig.add_annotation(
            x=0.5, xref="paper", y=0.5, yref="paper", text="no rows to show", showarrow=False,
            font={"color": SOFT_INK},
        )  # fmt: skip

    def yaxis(col: int) -> dict[str, Any]:
        return {
            "tickvals": ticks[col] if n_cols > col else [],
            "ticktext": labels[col] if n_cols > col else [],
            "range": [n_lines - 0.5, -0.5],  # top down, in the file's order
            "showgrid": False,
            "zeroline": False,
            "automargin": True,
            "ticks": "",
        }

    legend_px = LEGEND_PX if values else 0
    if max_height is not None and legend_px + AXES_PX + line_px * n_lines > max_height:
        fitted = (int(max_height) - legend_px - AXES_PX) // max(n_lines, 1)
        line_px = max(MIN_LINE_PX.get(line_px, line_px), min(line_px, fitted))
    height = max(240, legend_px + AXES_PX + line_px * n_lines)
    layout: dict[str, Any] = {
        "font": FONT,
        "xaxis": xaxis,
        "yaxis": yaxis(0),
        # the legend above the plot: the first screen ends under the figure's x axis
        "legend": {"orientation": "h", "yanchor": "bottom", "y": 1.0, "x": 0, "xanchor": "left"},
        "margin": {"l": 10, "r": 10, "t": legend_px + 6, "b": 56},
        "height": height,
        "showlegend": bool(values),
    }
    if n_cols == 2:
        # the second column's labels on its right, so that both columns' labels sit in the margins
        layout["xaxis"] = xaxis | {"domain": [0.0, 0.47], "anchor": "y"}
        layout["xaxis2"] = xaxis | {"domain": [0.53, 1.0], "anchor": "y2", "matches": "x"}
        layout["yaxis2"] = yaxis(1) | {"anchor": "x2", "side": "right"}
    fig.update_layout(**layout)
    return fig
