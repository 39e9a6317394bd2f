"""Figures for the accounting page: DPNR's ε′ against the dropout rate μ (Lai et al. 2022, eq. 11)
and the per-bit budgets of binary-encoding randomized response (eqs. 16–19).

Both are drawn for a projector: no title (the page's headline says what the figure shows), the
legend inside the plot where the data leave room, colours from :mod:`dpcore.viz.palette` (DPNR's
true cost in :data:`~dpcore.viz.palette.BAD`, its claim in :data:`~dpcore.viz.palette.CLAIM`;
binary RR's claim, which holds under LDP, in :data:`~dpcore.viz.palette.OK`).
"""

from __future__ import annotations

import math

import numpy as np
import plotly.graph_objects as go

from dpcore.accounting import BinaryEncodingReport
from dpcore.formatting import epsilon_text
from dpcore.viz.axes import log_axis
from dpcore.viz.palette import BAD, CLAIM, OK

__all__ = [
    "CLAIM_BARS",
    "PLACE_VALUE_BARS",
    "PLACE_VALUE_COLOUR",
    "binary_bits_figure",
    "dpnr_dropout_figure",
]

#: The binary-RR figure's legend: the claim's bars (the LDP loss: the count holds) and the
#: place-value figure's (a per-distance reading, not an LDP loss).
CLAIM_BARS = "claimed ε_i = exact LDP loss of the bit: the count holds"
PLACE_VALUE_BARS = "place-value figure: per unit of distance, not an LDP loss"
#: The place-value bars' colour: a neutral grey, neither the palette's violation red nor its green.
PLACE_VALUE_COLOUR = "#8a8a8a"

#: A legend drawn over the plot: a white box so that grid lines do not cross its text.
_INSIDE = {"bgcolor": "rgba(255,255,255,0.9)", "bordercolor": "#dedede", "borderwidth": 1}


def dpnr_dropout_figure(
    mu: np.ndarray, eps_prime: np.ndarray, *, k: int, epsilon: float, selected_mu: float, selected: float
) -> go.Figure:
    """ε′ = ln((1 − μ)·exp(kε) + μ) against μ, with the claim ε and the no-dropout kε.

    Parameters
    ----------
    mu, eps_prime
        The curve: dropout rates and the true ε′ at each (:func:`dpcore.accounting.dpnr_dropout_curve`).
    k, epsilon
        Embedding dimension and the claimed per-coordinate ε.
    selected_mu, selected
        The chosen dropout rate and its ε′ (a marker on the curve).

    Returns
    -------
    go.Figure
        The curve, kε (dotted) and the claim (dashed); the legend sits in the empty lower left.
    """
    fig = go.Figure()
    fig.add_trace(
        go.Scatter(
            x=np.asarray(mu).tolist(),
            y=np.asarray(eps_prime).tolist(),
            mode="lines",
            line={"color": BAD, "width": 3},
            name="true ε′ with word dropout",
            hovertemplate="μ=%{x:.3f}<br>ε′=%{y:.4g}<extra></extra>",
        )
    )
    fig.add_trace(
        go.Scatter(
            x=[0.0, 1.0],
            y=[k * epsilon, k * epsilon],
            mode="lines",
            line={"color": BAD, "dash": "dot", "width": 1.5},
            name=f"kε = {epsilon_text(k * epsilon, digits=4)}: true ε without dropout",
            hoverinfo="skip",
        )
    )
    fig.add_trace(
        go.Scatter(
            x=[0.0, 1.0],
            y=[epsilon, epsilon],
            mode="lines",
            line={"color": CLAIM, "dash": "dash", "width": 2},
            name=f"claimed ε = {epsilon_text(epsilon)}",
            hoverinfo="skip",
        )
    )
    fig.add_trace(
        go.Scatter(
            x=[selected_mu],
            y=[selected],
            mode="markers",
            marker={"color": BAD, "size": 13, "symbol": "diamond", "line": {"color": "white", "width": 1}},
            name=f"μ = {selected_mu:g}: ε′ = {selected:.4g}",
        )
    )
    fig.update_layout(
        xaxis={"title": "dropout rate μ (share of words dropped)", "range": [0, 1]},
        yaxis={"title": "privacy loss ε", "rangemode": "tozero"},
        template="plotly_white",
        legend={"x": 0.02, "y": 0.35, "xanchor": "left", "yanchor": "middle", **_INSIDE},
        height=380,
        margin={"t": 16, "l": 70, "r": 20, "b": 56},
    )
    return fig


def _bit_label(row: dict) -> str:
    if row["kind"] == "sign":
        return "sign"
    return f"{'int' if row['kind'] == 'integer' else 'frac'} {row['index']}"


def binary_bits_figure(report: BinaryEncodingReport) -> go.Figure:
    """Claimed ε_i against the place-value figure of Lai et al. (2022), per bit (log y).

    Which accounting holds, in the figure as in the page's headline: under LDP the claim's count
    holds, the exact LDP loss of a pair differing in bit i being ε_i, so the claim's bars are the
    palette's "kept" green. The place-value figure weighs each bit by how far flipping it moves the
    real value: a loss per unit of distance, not an LDP loss and not a broken claim, so its bars
    are a neutral grey (never the "violation" red) and its legend says so. The page's headline
    gives the feature's totals.

    Parameters
    ----------
    report
        The per-bit costs (:func:`dpcore.accounting.binary_encoding_costs`).

    Returns
    -------
    go.Figure
        Grouped bars per bit: the claim (green, the LDP loss: the count holds) beside the
        place-value figure (grey, a per-distance reading), one trace each.
    """
    rows = report.rows()
    labels = [_bit_label(r) for r in rows]
    fig = go.Figure()
    fig.add_trace(
        go.Bar(
            x=labels,
            y=[r["claimed_epsilon"] for r in rows],
            name=CLAIM_BARS,
            marker_color=OK,
            offsetgroup="claimed",
            hovertemplate="%{x}<br>claimed ε_i %{y:.4g} = exact LDP loss of the bit<extra></extra>",
        )
    )
    fig.add_trace(
        go.Bar(
            x=labels,
            y=[r["place_value_epsilon"] for r in rows],
            name=PLACE_VALUE_BARS,
            marker_color=PLACE_VALUE_COLOUR,
            offsetgroup="place-value",
            customdata=[[r["distance_bound"], r["equation"]] for r in rows],
            hovertemplate=(
                "%{x}<br>place-value figure %{y:.4g} = %{customdata[0]:.4g}·ε_i "
                "(%{customdata[1]}): per unit of distance, not an LDP loss<extra></extra>"
            ),
        )
    )

    values = [v for r in rows for v in (r["claimed_epsilon"], r["place_value_epsilon"]) if v > 0]
    # Room above the tallest bar for the legend (a decade and a half on the log axis).
    y_range = [math.log10(min(values)) - 0.15, math.log10(max(values)) + 1.5] if values else None
    fig.update_layout(
        barmode="group",
        xaxis={"title": "bit of the encoded feature"},
        yaxis=log_axis("ε per bit (log scale)", values or None, range=y_range),
        template="plotly_white",
        legend={"x": 0.99, "y": 0.99, "xanchor": "right", "yanchor": "top", **_INSIDE},
        xaxis_categoryorder="array",
        xaxis_categoryarray=labels,
        height=400,
        margin={"t": 16, "l": 70, "r": 20, "b": 56},
    )
    return fig
