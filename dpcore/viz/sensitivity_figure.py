"""Figures for the sensitivity page: Habernal (2021) Fig. 1 (violating pairs vs n) and the
L1 sensitivity of L2 clipping, 2C√n, against ADePT's claimed 2C (Theorem 5.1)."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from dpcore.sensitivity import ViolationResult
from dpcore.viz.axes import log_axis

__all__ = ["sensitivity_curve_figure", "violation_figure"]

_COLORS = {"uniform": "#3b6ea5", "normal": "#c0504d"}


def violation_figure(results: Sequence[ViolationResult], *, log_x: bool = False) -> go.Figure:
    """Percentage of clipped pairs with ‖x − x′‖₁ > 2C against n, one line per distribution."""
    fig = go.Figure()
    for res in results:
        label = (
            f"uniform on (−{res.scale:g}, {res.scale:g})ⁿ"
            if res.dist == "uniform"
            else f"normal, σ = {res.scale:g}"
        )
        fig.add_trace(
            go.Scatter(
                x=res.dims,
                y=[100.0 * f for f in res.fractions],
                mode="lines+markers" if len(res.dims) <= 64 else "lines",
                line={"color": _COLORS.get(res.dist, "#555"), "width": 2},
                marker={"size": 5},
                name=label,
                customdata=res.violations,
                hovertemplate=(
                    f"{res.dist}<br>n=%{{x}}<br>%{{y:.2f}}%% of pairs (%{{customdata}} of {res.pairs:,})"
                    "<extra></extra>"
                ),
            )
        )
    c = results[0].clip if results else 1.0
    fig.update_layout(
        title=f"Pairs whose clipped L1 distance exceeds the claimed sensitivity 2C = {2 * c:g}",
        xaxis=log_axis("dimension n") if log_x else {"title": "dimension n", "type": "linear"},
        yaxis={"title": "violating pairs (%)", "range": [-2, 102]},
        template="plotly_white",
        legend={"orientation": "h", "y": -0.2},
        height=460,
        margin={"t": 60, "l": 60, "r": 20, "b": 40},
    )
    return fig


def _nice_ticks(lo: float, hi: float) -> list[float]:
    """1-2-5 values covering [lo, hi] on a log axis."""
    out: list[float] = []
    e = math.floor(math.log10(lo)) - 1
    while 10.0**e <= hi * 10:
        out.extend(m * 10.0**e for m in (1, 2, 5) if lo / 2 <= m * 10.0**e <= hi * 2)
        e += 1
    return out


def sensitivity_curve_figure(clip: float, n_max: int, *, highlight: int | None = None) -> go.Figure:
    """True L1 sensitivity 2C√n of L2 clipping against the claimed 2C (and L1 clipping's 2C)."""
    n = (
        np.unique(np.round(np.geomspace(1, max(n_max, 1), 200)).astype(np.int64))
        if n_max > 1
        else np.array([1])
    )
    fig = go.Figure()
    fig.add_trace(
        go.Scatter(
            x=n.tolist(),
            y=(2.0 * clip * np.sqrt(n)).tolist(),
            mode="lines",
            line={"color": "#c0504d", "width": 2.5},
            name="true L1 sensitivity of L2 clipping, 2C√n (Thm 5.1)",
            hovertemplate="n=%{x}<br>2C√n=%{y:.4g}<extra></extra>",
        )
    )
    fig.add_trace(
        go.Scatter(
            x=[1, int(n[-1])],
            y=[2.0 * clip, 2.0 * clip],
            mode="lines",
            line={"color": "#222", "dash": "dash", "width": 1.5},
            name="ADePT's claim = L1 clipping's sensitivity, 2C",
            hoverinfo="skip",
        )
    )
    if highlight is not None:
        fig.add_trace(
            go.Scatter(
                x=[highlight],
                y=[2.0 * clip * math.sqrt(highlight)],
                mode="markers+text",
                marker={"color": "#c0504d", "size": 11, "symbol": "diamond"},
                text=[
                    f"n={highlight}: {2.0 * clip * math.sqrt(highlight):.4g} (×{math.sqrt(highlight):.3g})"
                ],
                textposition="top left",
                name=f"your n = {highlight}",
            )
        )
    fig.update_layout(
        title="Maximum L1 distance between two points of the L2 ball of radius C",
        xaxis=log_axis("dimension n"),
        # Explicit 1-2-5 ticks: Plotly abbreviates minor log ticks to their leading digit.
        yaxis={
            "title": "L1 distance",
            "type": "log",
            "tickvals": _nice_ticks(2.0 * clip, 2.0 * clip * math.sqrt(n_max)),
        },
        template="plotly_white",
        legend={"orientation": "h", "y": -0.2},
        height=420,
        margin={"t": 60, "l": 60, "r": 20, "b": 40},
    )
    return fig
