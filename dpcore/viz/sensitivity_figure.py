"""Figures for the sensitivity page: Habernal (2021) Fig. 1 (violating pairs vs n) and the
L1 sensitivity of L2 clipping, 2C√n, against ADePT's claimed 2C (Theorem 5.1)."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from dpcore.sensitivity import ViolationResult
from dpcore.viz.axes import log_axis
from dpcore.viz.palette import BAD, CLAIM, colour

__all__ = ["sensitivity_curve_figure", "violation_figure"]

#: Heights (px): the curve shares a 1280×720 first screen with the page's title and headline.
CURVE_HEIGHT = 420
VIOLATION_HEIGHT = 460


def violation_figure(
    results: Sequence[ViolationResult], *, log_x: bool = False, height: int = VIOLATION_HEIGHT
) -> go.Figure:
    """Percentage of clipped pairs with ‖x − x′‖₁ > 2C against n, one line per distribution.

    Parameters
    ----------
    results
        One simulation per distribution (:func:`dpcore.sensitivity.adept_violation_fractions`);
        each is drawn in the distribution's colour (:func:`dpcore.viz.palette.colour`).
    log_x
        A log dimension axis (decade labels).
    height
        Figure height in px.
    """
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
                line={"color": colour(res.dist), "width": 2.5},
                marker={"size": 6, "color": colour(res.dist)},
                name=label,
                customdata=res.violations,
                hovertemplate=(
                    f"{res.dist}<br>n=%{{x}}<br>%{{y:.2f}}%% of pairs (%{{customdata}} of {res.pairs:,})"
                    "<extra></extra>"
                ),
            )
        )
    c = results[0].clip if results else 1.0
    dims = [d for res in results for d in res.dims] or [1]
    lo, hi = min(dims), max(dims)
    # Room beyond the first and last n, so that no line starts or ends on the frame.
    if log_x:
        pad = 0.03 * max(math.log10(hi) - math.log10(lo), 1.0)
        xaxis = log_axis("dimension n", range=[math.log10(lo) - pad, math.log10(hi) + pad])
    else:
        pad = 0.02 * max(hi - lo, 1)
        xaxis = {"title": "dimension n", "type": "linear", "range": [lo - pad, hi + pad]}
    fig.update_layout(
        title=f"Pairs whose clipped L1 distance exceeds the claimed sensitivity 2C = {2 * c:g}",
        xaxis=xaxis,
        yaxis={"title": "violating pairs (%)", "range": [-4, 106]},
        template="plotly_white",
        legend={"orientation": "h", "yanchor": "top", "y": -0.2, "x": 0},
        height=height,
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


def sensitivity_curve_figure(
    clip: float, n_max: int, *, highlight: int | None = None, height: int = CURVE_HEIGHT
) -> go.Figure:
    """True L1 sensitivity 2C√n of L2 clipping against the claimed 2C (and L1 clipping's 2C).

    Parameters
    ----------
    clip
        The clipping constant C.
    n_max
        The largest dimension drawn.
    highlight
        A dimension to mark with its value and the factor √n (the page's n).
    height
        Figure height in px.
    """
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
            line={"color": BAD, "width": 3},
            name="true L1 sensitivity of L2 clipping, 2C√n (Thm 5.1)",
            hovertemplate="n=%{x}<br>2C√n=%{y:.4g}<extra></extra>",
        )
    )
    fig.add_trace(
        go.Scatter(
            x=[1, int(n[-1])],
            y=[2.0 * clip, 2.0 * clip],
            mode="lines",
            line={"color": CLAIM, "dash": "dash", "width": 2},
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
                marker={"color": BAD, "size": 13, "symbol": "diamond"},
                textfont={"color": BAD, "size": 15},
                cliponaxis=False,
                text=[
                    f"n={highlight}: {2.0 * clip * math.sqrt(highlight):.4g} (×{math.sqrt(highlight):.3g})"
                ],
                textposition="top left",
                name=f"your n = {highlight}",
            )
        )
    fig.update_layout(
        title="Maximum L1 distance between two points of the L2 ball of radius C",
        # Room beyond both ends, so that neither line starts, ends or lies on the frame.
        xaxis=log_axis("dimension n", range=[-0.04, math.log10(max(n_max, 1)) + 0.04]),
        # Explicit 1-2-5 ticks: Plotly abbreviates minor log ticks to their leading digit.
        yaxis={
            "title": "L1 distance",
            "type": "log",
            "range": [
                math.log10(2.0 * clip) - 0.12,
                math.log10(2.0 * clip * math.sqrt(max(n_max, 1))) + 0.15,
            ],
            "tickvals": _nice_ticks(2.0 * clip, 2.0 * clip * math.sqrt(n_max)),
        },
        template="plotly_white",
        legend={"orientation": "h", "yanchor": "top", "y": -0.2, "x": 0},
        height=height,
        margin={"t": 60, "l": 60, "r": 20, "b": 40},
    )
    return fig
