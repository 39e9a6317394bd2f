"""Figures for the accounting page: DPNR's ε′ against the dropout rate μ (Lai et al. 2022, eq. 11)
and the per-bit budgets of binary-encoding randomized response (eqs. 16–19)."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from dpcore.accounting import BinaryEncodingReport
from dpcore.viz.axes import log_axis

__all__ = ["binary_bits_figure", "dpnr_dropout_figure"]


def dpnr_dropout_figure(
    mu: np.ndarray, eps_prime: np.ndarray, *, k: int, epsilon: float, selected_mu: float, selected: float
) -> go.Figure:
    """ε′ = ln((1 − μ)·exp(kε) + μ) against μ, with the claim ε and the no-dropout kε."""
    fig = go.Figure()
    fig.add_trace(
        go.Scatter(
            x=np.asarray(mu).tolist(),
            y=np.asarray(eps_prime).tolist(),
            mode="lines",
            line={"color": "#c0504d", "width": 2.5},
            name="true ε′ with dropout (corrected Thm 2)",
            hovertemplate="μ=%{x:.3f}<br>ε′=%{y:.4g}<extra></extra>",
        )
    )
    fig.add_trace(
        go.Scatter(
            x=[0.0, 1.0],
            y=[k * epsilon, k * epsilon],
            mode="lines",
            line={"color": "#8064a2", "dash": "dot"},
            name=f"kε = {k * epsilon:.4g} (corrected Thm 1, μ = 0)",
            hoverinfo="skip",
        )
    )
    fig.add_trace(
        go.Scatter(
            x=[0.0, 1.0],
            y=[epsilon, epsilon],
            mode="lines",
            line={"color": "#222", "dash": "dash"},
            name=f"claimed ε = {epsilon:g}",
            hoverinfo="skip",
        )
    )
    fig.add_trace(
        go.Scatter(
            x=[selected_mu],
            y=[selected],
            mode="markers",
            marker={"color": "#c0504d", "size": 12, "symbol": "diamond"},
            name=f"μ = {selected_mu:g}: ε′ = {selected:.4g}",
        )
    )
    fig.update_layout(
        title=f"DPNR with word dropout: k = {k}, ε = {epsilon:g}",
        xaxis={"title": "dropout rate μ", "range": [0, 1]},
        yaxis={"title": "ε"},
        template="plotly_white",
        legend={"orientation": "h", "y": -0.2},
        height=440,
        margin={"t": 60, "l": 60, "r": 20, "b": 40},
    )
    return fig


def binary_bits_figure(report: BinaryEncodingReport) -> go.Figure:
    """Claimed ε_i against the place-value figure of Lai et al. (2022), per bit (log y).

    The exact LDP loss of a pair differing in bit i is ε_i (the grey bar); the title gives the
    feature's exact worst-case LDP loss, Σ ε_i.
    """
    rows = report.rows()
    labels = [
        "sign" if r["kind"] == "sign" else f"{'int' if r['kind'] == 'integer' else 'frac'} {r['index']}"
        for r in rows
    ]
    fig = go.Figure()
    fig.add_trace(
        go.Bar(
            x=labels,
            y=[r["claimed_epsilon"] for r in rows],
            name="claimed ε_i = exact LDP loss of bit i (eqs. 13–14)",
            marker_color="#9aa5b1",
            offsetgroup="claimed",
        )
    )
    # One trace per colour, so the legend explains both (they share one bar slot per bit).
    for above, color, name in (
        (True, "#c0504d", "place-value figure (Lai et al. 2022, eqs. 17–19) above the claim: under-charged"),
        (
            False,
            "#4e9a59",
            "place-value figure (Lai et al. 2022, eqs. 17–19) at or below the claim: over-charged",
        ),
    ):
        sel = [r for r in rows if (r["place_value_epsilon"] > r["claimed_epsilon"]) == above]
        fig.add_trace(
            go.Bar(
                x=[lab for lab, r in zip(labels, rows, strict=True) if r in sel],
                y=[r["place_value_epsilon"] for r in sel],
                name=name,
                marker_color=color,
                offsetgroup="place-value",
                customdata=[[r["distance_bound"], r["equation"]] for r in sel],
                hovertemplate=(
                    "%{x}<br>place-value figure %{y:.4g} = %{customdata[0]:.4g}·ε_i "
                    "(%{customdata[1]})<extra></extra>"
                ),
            )
        )

    fig.update_layout(
        title=(
            f"One feature: claimed {report.claimed_per_feature:.4g}, exact LDP loss "
            f"{report.exact_ldp_per_feature:.4g}, place-value figure {report.place_value_per_feature:.4g}"
        ),
        barmode="group",
        xaxis={"title": "bit"},
        yaxis=log_axis("ε (log scale)"),
        template="plotly_white",
        legend={"orientation": "h", "y": -0.25},
        xaxis_categoryorder="array",
        xaxis_categoryarray=labels,
        height=440,
        margin={"t": 60, "l": 60, "r": 20, "b": 40},
    )
    return fig
