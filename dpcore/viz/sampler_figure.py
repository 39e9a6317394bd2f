"""The sampler inspector figure (Habernal 2022, Fig. 3): one histogram per sampler with the
true Laplace density overlaid.

Correct samplers are drawn in Laplace's colour and DPText's flawed ones in DPText's
(:func:`dpcore.viz.palette.colour`), as on the audit page; there is no title (the page's headline
says what the figure shows).
"""

from __future__ import annotations

import math

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from dpcore.formatting import percent
from dpcore.samplers_inspect import SamplerInspection
from dpcore.viz.palette import INK, SOFT_INK, colour

__all__ = ["sampler_histogram_figure"]


def sampler_histogram_figure(ins: SamplerInspection, *, height: int | None = None) -> go.Figure:
    """Histograms (density) of each sampler on common bins; Lap(0, b) density as a line.

    The y axis is capped at 1.3/b so that the atom of DPText's NaN → 0 variant (mass ½ at 0)
    does not flatten everything else; it is labelled instead.

    Parameters
    ----------
    ins
        The draws' summaries (:func:`dpcore.samplers_inspect.inspect_samplers`).
    height
        The figure's height (px); by default 210 px a row of panels and 110 px for the titles, the
        axis and the legend. A page that must show it whole on a 720-px screen passes less.

    Returns
    -------
    go.Figure
        One panel per sampler, two per row (the flawed ones first), with its share of negative
        draws in the panel.
    """
    # The flawed samplers first: the top row, on the first screen, tells the story.
    summaries = sorted(ins.summaries, key=lambda s: not s.flawed)
    k = len(summaries)
    cols = 2 if k > 1 else 1
    rows = math.ceil(k / cols)
    fig = make_subplots(
        rows=rows,
        cols=cols,
        subplot_titles=[s.label for s in summaries],
        shared_xaxes=True,
        vertical_spacing=0.16,
    )
    edges = np.asarray(ins.edges)
    centres = (0.5 * (edges[:-1] + edges[1:])).tolist()
    width = float(edges[1] - edges[0])
    top = 1.3 / ins.scale
    for i, s in enumerate(summaries):
        r, c = i // cols + 1, i % cols + 1
        color = colour("dptext") if s.flawed else colour("laplace")
        fig.add_trace(
            go.Bar(
                x=centres,
                y=s.density,
                width=width,
                marker={"color": color, "line": {"width": 0}},
                opacity=0.75,
                name=s.label,
                showlegend=False,
                hovertemplate="z≈%{x:.3g}<br>density %{y:.4g}<extra></extra>",
            ),
            row=r,
            col=c,
        )
        fig.add_trace(
            go.Scatter(
                x=ins.grid,
                y=ins.laplace_density,
                mode="lines",
                line={"color": INK, "width": 2},
                name=f"Lap(0, {ins.scale:g}) density",
                showlegend=i == 0,
                hoverinfo="skip",
            ),
            row=r,
            col=c,
        )
        p = "< 1e-16" if s.ks_pvalue < 1e-16 else f"= {s.ks_pvalue:.2g}"
        note = f"negative: {percent(s.fraction_negative)}  KS p {p}"
        if max(s.density) > top:
            note += f"<br>atom at 0: {percent(s.fraction_zero)} (off scale)"
        xref = "x domain" if i == 0 else f"x{i + 1} domain"
        yref = "y domain" if i == 0 else f"y{i + 1} domain"
        fig.add_annotation(
            x=0.02,
            y=0.98,
            xref=xref,
            yref=yref,
            text=note,
            showarrow=False,
            align="left",
            xanchor="left",
            yanchor="top",
            font={"size": 14, "color": SOFT_INK},
            bgcolor="rgba(255,255,255,0.85)",
        )
        fig.update_yaxes(range=[0, top], row=r, col=c)
    fig.update_layout(
        template="plotly_white",
        bargap=0,
        height=height or 210 * rows + 110,
        legend={"orientation": "h", "x": 0, "y": 0, "yref": "container", "yanchor": "bottom"},
        margin={"t": 40, "l": 60, "r": 20, "b": 100},
    )
    fig.update_xaxes(title_text="noise value", row=rows)
    return fig
