"""The text-audit figure: each pair's lower confidence bound against its claimed bound.

A point above the diagonal is a pair whose privacy loss is, at the stated confidence, larger
than the mechanism claims (a violation). The horizontal line is the largest loss the sample size
can show at all: claims above it cannot be refuted by this run, whatever the mechanism does.
"""

from __future__ import annotations

import math

import pandas as pd
import plotly.graph_objects as go

from dpcore.textaudit.result import TextAuditResult

__all__ = ["pairs_table", "textaudit_figure"]

_OK = "#3b6ea5"
_BAD = "#c0504d"
_FONT = 16


def pairs_table(result: TextAuditResult) -> pd.DataFrame:
    """One row per pair with human column names (for the page and the CSV)."""
    rows = []
    for p in result.pairs:
        rows.append(
            {
                "word x": p.x,
                "word x′": p.x_prime,
                "distance d(x, x′)": p.distance,
                "claimed bound": p.claimed_bound,
                "empirical ε̂": p.empirical_epsilon,
                f"lower bound ({100 * result.confidence:g}%)": p.lower_bound,
                "exact loss": p.exact_epsilon,
                "violates": "not tested" if p.error else ("yes" if p.violates else "no"),
                "event size |S|": p.event_size,
                "x in S (of T/2)": p.count_x,
                "x′ in S (of T/2)": p.count_x_prime,
                "note": p.error or "",
            }
        )
    return pd.DataFrame(rows)


def textaudit_figure(result: TextAuditResult) -> go.Figure:
    """Scatter of claimed bound (x) against lower bound (y), with the diagonal."""
    tested = [p for p in result.pairs if p.error is None]
    fig = go.Figure()
    finite = [p.claimed_bound for p in tested] + [p.lower_bound for p in tested]
    finite += [
        p.exact_epsilon for p in tested if p.exact_epsilon is not None and math.isfinite(p.exact_epsilon)
    ]
    top = max([1e-3, result.max_detectable_loss, *finite]) * 1.08
    fig.add_trace(
        go.Scatter(
            x=[0, top],
            y=[0, top],
            mode="lines",
            line={"color": "#555", "dash": "dash"},
            name="claimed bound (y = x)",
            hoverinfo="skip",
        )
    )
    fig.add_trace(
        go.Scatter(
            x=[0, top],
            y=[result.max_detectable_loss] * 2,
            mode="lines",
            line={"color": "#999", "dash": "dot"},
            name=f"largest loss {result.samples:,} samples can show",
            hoverinfo="skip",
        )
    )
    for violates, color, name in (
        (False, _OK, "pair within its claim"),
        (True, _BAD, "pair violates its claim"),
    ):
        pts = [p for p in tested if p.violates == violates]
        if not pts:
            continue
        fig.add_trace(
            go.Scatter(
                x=[p.claimed_bound for p in pts],
                y=[p.lower_bound for p in pts],
                mode="markers",
                marker={"size": 12, "color": color, "symbol": "x" if violates else "circle"},
                name=f"{name} ({len(pts)})",
                text=[
                    f"{p.x} / {p.x_prime}<br>d = {p.distance:.3g}, claim {p.claimed_bound:.3g}<br>"
                    f"ε̂ = {_fmt(p.empirical_epsilon)}, lower bound {p.lower_bound:.3g}"
                    + ("" if p.exact_epsilon is None else f"<br>exact {_fmt(p.exact_epsilon)}")
                    for p in pts
                ],
                hovertemplate="%{text}<extra></extra>",
            )
        )
    exact = [p for p in tested if p.exact_epsilon is not None]
    if exact:
        fig.add_trace(
            go.Scatter(
                x=[p.claimed_bound for p in exact],
                y=[min(p.exact_epsilon, top) for p in exact],
                mode="markers",
                marker={"size": 9, "color": "rgba(0,0,0,0)", "line": {"color": "#4e9a59", "width": 2}},
                name="exact loss (closed form)",
                text=[f"{p.x} / {p.x_prime}: exact {_fmt(p.exact_epsilon)}" for p in exact],
                hovertemplate="%{text}<extra></extra>",
            )
        )
    fig.update_layout(
        font={"size": _FONT},
        xaxis={"title": "claimed bound for the pair (ε or ε·d(x, x′))", "range": [0, top]},
        yaxis={"title": f"privacy loss, lower bound at {100 * result.confidence:g}%", "range": [0, top]},
        legend={"orientation": "h", "yanchor": "top", "y": -0.2},
        margin={"l": 70, "r": 20, "t": 30, "b": 40},
        height=520,
    )
    return fig


def _fmt(v: float | None) -> str:
    if v is None:
        return ""
    return "∞" if math.isinf(v) else f"{v:.4g}"
