"""The verdict table as one figure: how far above its claim each sanitizer's loss was certified to
be, or how small a flaw its run would have caught.

One horizontal axis, "privacy loss above the claim (nats)" (logarithmic: the values span decades),
and one line per mechanism, grouped by library under a bold header line. On a row that violates,
a red marker at its certified excess: the largest violating pair's lower bound − claimed bound,
or the pooled test's certified excess, at the row's confidence; its label and hover give the
number the verdict table gives ("violates its claim by at least … nats", the same digits,
:func:`dpcore.verdicts.wording.nats`). On a row where no violation was found, a grey open marker
at the smallest flaw shared by the vocabulary that the run would have caught with probability 0.9,
its hover naming that flaw as the table does: the row says what it would have seen, never that
the sanitizer is private. A row with neither (it could not run, nothing could be sampled, or its
run states no uniform flaw) has a note on its line and no marker. Each hover also gives the claim
(ε-LDP, or ε·d + ε₀ metric LDP with its ε₀, and the paper).
"""

from __future__ import annotations

import math
import textwrap
from collections.abc import Sequence
from typing import Any

import plotly.graph_objects as go

from dpcore.verdicts.document import verdict_of
from dpcore.verdicts.page_view import (
    caught_delta,
    certified_excess,
    certified_excess_words,
    group_label,
    groups,
)
from dpcore.verdicts.wording import headline, largest_violation, power_summary, short_claim
from dpcore.viz.axes import FONT, log_axis

__all__ = ["NOTES", "verdicts_figure"]

_BAD = "#c0504d"
_GREY = "#7f7f7f"
#: Line height (px) per mechanism or group header.
_LINE = 30
#: The widest line of a hover box (characters).
_HOVER_CHARS = 72

#: The note on a line without a marker, by verdict (not-detected: its run states no uniform flaw).
NOTES = {
    "cannot-run": "cannot run",
    "untested": "untested: nothing could be sampled",
    "not-detected": "no violation found; no uniform flaw stated",
    "premise-broken": "premise broken: its paper's claim covers almost no pair (row's evidence)",
}


def _pct(v: float) -> str:
    return f"{100 * v:g}%"


def _lines(text: str) -> str:
    """``text`` broken into hover lines of at most :data:`_HOVER_CHARS` characters."""
    return "<br>".join(textwrap.wrap(text, _HOVER_CHARS, break_long_words=False))


def _hover(row: dict[str, Any]) -> str:
    """A marker's hover: the row's name, its verdict as the table words it (the same numbers), the
    violating pair where there is one, and the claim."""
    parts = [f"<b>{row['name']}</b>", _lines(headline(row))]
    w = largest_violation(row)
    if w is not None and w["kind"] == "pair":
        parts.append(f"pair ({w['x']}, {w['x_prime']})")
    parts.append(_lines(f"claim: {short_claim(row)}"))
    return "<br>".join(parts)


def verdicts_figure(rows: Sequence[dict[str, Any]]) -> go.Figure:
    """The figure of ``rows`` (verdict file rows, in the file's order), grouped by library.

    Parameters
    ----------
    rows
        Rows of a verdict file (:func:`dpcore.verdicts.run.run_row`'s records). Rows that did not
        run are listed with a note and no marker.

    Returns
    -------
    plotly.graph_objects.Figure
        One red trace per confidence level ("certified excess (lower bound at 95%)"), one grey
        trace per power ("smallest uniform flaw caught with probability 0.9"); y positions are
        line numbers (top down), labelled with the mechanisms and the group headers.
    """
    rows = list(rows)
    ticks: list[float] = []
    labels: list[str] = []
    violating: dict[float, list[tuple[float, int, dict[str, Any]]]] = {}
    caught: dict[float, list[tuple[float, int, dict[str, Any]]]] = {}
    notes: list[tuple[int, str]] = []
    headers: list[int] = []
    pos = 0
    for g in groups(rows):
        headers.append(pos)
        ticks.append(pos)
        labels.append(f"<b>{group_label(g, rows)}</b>")
        pos += 1
        for r in (r for r in rows if r["group"] == g):
            ticks.append(pos)
            labels.append(r["name"])
            v = verdict_of(r)
            excess = certified_excess(r) if v == "violates" else None
            delta = caught_delta(r) if v == "not-detected" else None
            if excess is not None and math.isfinite(excess) and excess > 0:
                conf = float(r["audit"].get("confidence", 0.95))
                violating.setdefault(conf, []).append((excess, pos, r))
            elif delta is not None and delta > 0:
                power = float(power_summary(r)["power"])
                caught.setdefault(power, []).append((delta, pos, r))
            else:
                notes.append((pos, NOTES.get(v, v)))
            pos += 1

    fig = go.Figure()
    for conf, pts in violating.items():
        fig.add_trace(
            go.Scatter(
                x=[p[0] for p in pts],
                y=[p[1] for p in pts],
                mode="markers+text",
                marker={"size": 14, "color": _BAD, "symbol": "diamond"},
                text=[certified_excess_words(p[2]) for p in pts],
                textposition="middle right",
                textfont={"color": _BAD, "size": 13},
                name=f"certified excess (lower bound at {_pct(conf)})",
                hovertext=[_hover(p[2]) for p in pts],
                hovertemplate="%{hovertext}<extra></extra>",
            )
        )
    for power, pts in caught.items():
        fig.add_trace(
            go.Scatter(
                x=[p[0] for p in pts],
                y=[p[1] for p in pts],
                mode="markers+text",
                marker={"size": 13, "color": _GREY, "symbol": "circle-open", "line": {"width": 2}},
                text=[f"would have been caught ({_pct(power)})" for _ in pts],
                textposition="middle right",
                textfont={"color": _GREY, "size": 13},
                name=f"smallest uniform flaw caught with probability {power:g}",
                hovertext=[_hover(p[2]) for p in pts],
                hovertemplate="%{hovertext}<extra></extra>",
            )
        )
    values = [p[0] for pts in (*violating.values(), *caught.values()) for p in pts]
    if values:
        lo, hi = min(values), max(values)
        # room on the right for the labels beside the markers (about two decades on a log axis)
        x_range = [math.log10(lo) - 0.3, math.log10(hi) + 1.6]
        xaxis = log_axis("privacy loss above the claim (nats)", [lo, hi], range=x_range)
    else:
        xaxis = {"title": "privacy loss above the claim (nats)", "range": [0, 1]}
    for y, text in notes:
        fig.add_annotation(
            x=0.01, xref="paper", xanchor="left", y=y, yref="y", text=text, showarrow=False,
            font={"size": 13, "color": _GREY},
        )  # fmt: skip
    for y in headers[1:]:
        fig.add_hline(y=y - 0.5, line={"color": "#ccc", "width": 1})
    if not rows:
        fig.add_annotation(
            x=0.5, xref="paper", y=0.5, yref="paper", text="no rows to show", showarrow=False,
            font={"size": 14, "color": _GREY},
        )  # fmt: skip
    height = max(320, 190 + _LINE * pos)
    fig.update_layout(
        font=FONT,
        xaxis=xaxis | {"showgrid": True, "zeroline": False},
        yaxis={
            "tickvals": ticks,
            "ticktext": labels,
            "range": [pos - 0.5, -0.5],  # top down, in the file's order
            "showgrid": False,
            "zeroline": False,
            "automargin": True,
        },
        # the legend 55 px under the plot, whatever its height (the axis title sits between)
        legend={"orientation": "h", "yanchor": "top", "y": -55 / (height - 130)},
        margin={"l": 20, "r": 20, "t": 30, "b": 100},
        height=height,
        showlegend=bool(values),
    )
    return fig
