"""The privacy-loss figure: empirical ε against dimension n, with the claim, exact curves and
Monte-Carlo confidence bands (the live version of Habernal 2022, Fig. 2)."""

from __future__ import annotations

import math

import pandas as pd
import plotly.graph_objects as go

from dpcore.viz.axes import log_axis

__all__ = ["INF_LABEL", "audit_figure", "results_frame"]

INF_LABEL = "∞"
_PALETTE = (
    "#3b6ea5",
    "#c0504d",
    "#4e9a59",
    "#8064a2",
    "#d68a1a",
    "#2f9fa8",
    "#7f7f7f",
    "#b5536b",
    "#6b7d2e",
)


def results_frame(rows: list[dict]) -> pd.DataFrame:
    """A tidy frame with one row per (mechanism, n) and method-prefixed columns."""
    return pd.DataFrame(rows)


def _finite_top(values: list[float], floor: float) -> float:
    finite = [v for v in values if v is not None and math.isfinite(v)]
    return max([floor, *finite]) * 1.15 if finite else floor * 1.15


def audit_figure(
    df: pd.DataFrame,
    *,
    epsilon: float,
    log_y: bool = False,
    show_lr: bool = True,
    title: str | None = None,
) -> go.Figure:
    """Build the audit figure.

    ``df`` has columns ``mechanism, dim, exact, exact_lr, mc, mc_lower, mc_upper, mc_lr`` (NaN
    where not computed). Infinite values are drawn at the top of the plot and labelled ∞.
    """
    # The y range follows the majority-vote values and lower bounds; larger values (LR curves,
    # upper bounds, ∞) are drawn at the top edge with their true value in the hover text.
    cols = ["exact", "mc", "mc_lower"]
    allv = [float(v) for c in cols if c in df for v in df[c].tolist() if pd.notna(v)]
    top = _finite_top(allv, max(2.0 * epsilon, 1.0))
    fig = go.Figure()

    def clamp(v: float) -> float | None:
        if v is None or pd.isna(v):
            return None
        return min(float(v), top)

    def label(v: float) -> str:
        if v is None or pd.isna(v):
            return "n/a"
        return INF_LABEL if math.isinf(v) else f"{v:.4g}"

    for i, (mech, g) in enumerate(df.groupby("mechanism", sort=False)):
        color = _PALETTE[i % len(_PALETTE)]
        g = g.sort_values("dim")
        x = g["dim"].tolist()
        if "mc_lower" in g and g["mc_lower"].notna().any():
            lo = [clamp(v) for v in g["mc_lower"]]
            hi = [clamp(v) for v in g["mc_upper"]]
            fig.add_trace(
                go.Scatter(
                    x=x + x[::-1],
                    y=hi + lo[::-1],
                    fill="toself",
                    fillcolor=color,
                    opacity=0.15,
                    line={"width": 0},
                    hoverinfo="skip",
                    name=f"{mech}: CI band",
                    legendgroup=mech,
                    showlegend=False,
                )
            )
        if "exact" in g and g["exact"].notna().any():
            fig.add_trace(
                go.Scatter(
                    x=x,
                    y=[clamp(v) for v in g["exact"]],
                    mode="lines+markers",
                    line={"color": color, "width": 2},
                    marker={"size": 6},
                    name=f"{mech} (exact)",
                    legendgroup=mech,
                    customdata=[label(v) for v in g["exact"]],
                    hovertemplate=f"{mech}<br>n=%{{x}}<br>exact ε̂=%{{customdata}}<extra></extra>",
                )
            )
        if show_lr and "exact_lr" in g and g["exact_lr"].notna().any():
            fig.add_trace(
                go.Scatter(
                    x=x,
                    y=[clamp(v) for v in g["exact_lr"]],
                    mode="lines",
                    line={"color": color, "width": 1.5, "dash": "dot"},
                    name=f"{mech} (LR attack, exact)",
                    legendgroup=mech,
                    customdata=[label(v) for v in g["exact_lr"]],
                    hovertemplate=f"{mech}<br>n=%{{x}}<br>LR ε̂=%{{customdata}}<extra></extra>",
                )
            )
        if "mc" in g and g["mc"].notna().any():
            fig.add_trace(
                go.Scatter(
                    x=x,
                    y=[clamp(v) for v in g["mc"]],
                    mode="markers",
                    marker={"color": color, "symbol": "diamond-open", "size": 10},
                    name=f"{mech} (Monte-Carlo)",
                    legendgroup=mech,
                    customdata=[
                        [label(a), label(b), label(c)]
                        for a, b, c in zip(g["mc"], g["mc_lower"], g["mc_upper"], strict=True)
                    ],
                    hovertemplate=(
                        f"{mech}<br>n=%{{x}}<br>MC ε̂=%{{customdata[0]}}"
                        "<br>CI [%{customdata[1]}, %{customdata[2]}]<extra></extra>"
                    ),
                )
            )
    fig.add_hline(
        y=epsilon,
        line={"color": "#222", "dash": "dash", "width": 1.5},
        annotation_text=f"claimed ε = {epsilon:g}",
        annotation_position="top left",
    )
    fig.add_hline(y=top, line={"color": "#bbb", "width": 1})
    fig.add_annotation(
        x=0,
        xref="paper",
        y=top,
        text=f"{INF_LABEL} and larger values (hover for exact numbers)",
        showarrow=False,
        yshift=10,
        xanchor="left",
    )
    fig.update_layout(
        title=title or "Empirical privacy loss vs dimension",
        xaxis={"title": "dimension n", "type": "log", "dtick": math.log10(2)},
        yaxis=log_axis("empirical ε̂") if log_y else {"title": "empirical ε̂", "type": "linear"},
        template="plotly_white",
        legend={"orientation": "h", "y": -0.2},
        height=560,
        margin={"t": 60, "l": 60, "r": 20, "b": 40},
    )
    if log_y:
        fig.update_yaxes(range=[-3, math.log10(top) + 0.05])
    else:
        fig.update_yaxes(range=[0, top * 1.05])
    return fig
