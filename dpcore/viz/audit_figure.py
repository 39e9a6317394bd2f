"""The privacy-loss figure: empirical ε against dimension n, with the claim, exact curves and
Monte-Carlo confidence bands (the live version of Habernal 2022, Fig. 2)."""

from __future__ import annotations

import math

import pandas as pd
import plotly.graph_objects as go

from dpcore.viz.axes import FONT, log_axis

__all__ = ["INF_LABEL", "audit_figure", "results_frame"]

INF_LABEL = "∞"
#: Lower end of the log y axis (log10): losses below 10⁻³ are not drawn.
LOG_Y_FLOOR = -3.0
#: Share of the plot's height given to the ∞ band, on linear and log axes alike.
INF_BAND_SHARE = 0.12
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
    # ∞ gets its own band above the finite range [0, top] (large finite values stop at `top`),
    # one row per mechanism with an infinite value so that, e.g., copy and DPText both show.
    mechs = list(dict.fromkeys(df["mechanism"])) if len(df) else []
    inf_mechs = [
        m for m in mechs
        if any(c in df and df.loc[df["mechanism"] == m, c].map(lambda v: pd.notna(v) and math.isinf(v)).any()
               for c in ("exact", "exact_lr", "mc"))
    ]  # fmt: skip
    # The band takes a fixed share of the plot's height above the finite range, on either axis
    # type: on a log axis a fixed factor above `top` would be a thin strip (issue 29).
    if log_y:
        span = math.log10(top) - LOG_Y_FLOOR

        def above(share: float) -> float:
            return top * 10 ** (share * span)
    else:

        def above(share: float) -> float:
            return top * (1.0 + share)

    band_lo, band_hi = above(0.04), above(0.04 + INF_BAND_SHARE)
    n_inf = max(len(inf_mechs), 1)
    inf_row = {m: above(0.04 + INF_BAND_SHARE * (k + 1) / (n_inf + 1)) for k, m in enumerate(inf_mechs)}
    cur = [""]

    def ay(v: float) -> float:
        """An annotation's y: Plotly places annotations on a log axis in log10 units."""
        return math.log10(v) if log_y else v

    def clamp(v: float) -> float | None:
        if v is None or pd.isna(v):
            return None
        if math.isinf(float(v)):
            return inf_row.get(cur[0], above(0.04 + INF_BAND_SHARE / 2))
        return min(float(v), top)

    def label(v: float) -> str:
        if v is None or pd.isna(v):
            return "n/a"
        return INF_LABEL if math.isinf(v) else f"{v:.4g}"

    for i, (mech, g) in enumerate(df.groupby("mechanism", sort=False)):
        color = _PALETTE[i % len(_PALETTE)]
        cur[0] = str(mech)
        g = g.sort_values("dim")
        x = g["dim"].tolist()
        # No Monte-Carlo band for a curve with infinite values: it would cover the whole chart
        # (the bounds stay in the hover text).
        if "mc_lower" in g and g["mc_lower"].notna().any() and mech not in inf_mechs:
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
    # Labels sit outside the plotting area, at their values (in the right margin), so no label
    # lies over a curve.
    fig.add_hline(y=epsilon, line={"color": "#222", "dash": "dash", "width": 1.5})
    fig.add_annotation(
        x=1, xref="paper", xanchor="left", xshift=4, y=ay(epsilon), yref="y", showarrow=False,
        text=f"claimed ε = {epsilon:g}", align="left", font={"size": 14, "color": "#222"},
    )  # fmt: skip
    fig.add_hline(y=top, line={"color": "#bbb", "width": 1})
    fig.add_annotation(
        x=1, xref="paper", xanchor="left", xshift=4, y=ay(top), yref="y", showarrow=False,
        text=f"larger values<br>drawn at {top:.3g}", align="left", font={"size": 12, "color": "#666"},
    )  # fmt: skip
    if inf_mechs:
        fig.add_hrect(y0=band_lo, y1=band_hi, fillcolor="#f3e3e3", line_width=0, layer="below")
        fig.add_annotation(
            x=0, xref="paper", y=ay((band_lo * band_hi) ** 0.5 if log_y else (band_lo + band_hi) / 2),
            yref="y", text=f"ε̂ = {INF_LABEL}", showarrow=False, xanchor="right", xshift=-6,
            font={"size": 16, "color": "#a33"},
        )  # fmt: skip
    subtitle = "hover for exact numbers; values above the grey line are drawn on it" + (
        f", infinite ones in the {INF_LABEL} band" if inf_mechs else ""
    )
    fig.update_layout(
        title={"text": f"{title or 'Empirical privacy loss vs dimension'}<br><sup>{subtitle}</sup>"},
        xaxis={"title": "dimension n", "type": "log", "dtick": math.log10(2)},
        yaxis=log_axis("empirical ε̂") if log_y else {"title": "empirical ε̂", "type": "linear"},
        template="plotly_white",
        font=FONT,
        legend={"orientation": "h", "y": -0.2},
        height=560,
        margin={"t": 80, "l": 80, "r": 135, "b": 40},
    )
    fig.update_xaxes(tickfont={"size": 14}, title_font={"size": 16})
    fig.update_yaxes(tickfont={"size": 14}, title_font={"size": 16})
    y_max = above(0.06 + INF_BAND_SHARE) if inf_mechs else above(0.03)
    if log_y:
        # Decade ticks on the finite range only: a number inside the ∞ band would read as a value.
        decades = [10.0**k for k in range(int(LOG_Y_FLOOR), math.floor(math.log10(top)) + 1)]
        fig.update_yaxes(
            range=[LOG_Y_FLOOR, math.log10(y_max)], tickvals=decades, ticktext=[f"{d:g}" for d in decades]
        )
    else:
        # Ticks only on the finite range: a number inside the ∞ band would read as a value.
        raw = top / 5
        mag = 10 ** math.floor(math.log10(raw))
        step = next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)
        ticks = [k * step for k in range(int(top / step) + 1)]
        fig.update_yaxes(range=[0, y_max], tickvals=ticks, ticktext=[f"{t:g}" for t in ticks])
    return fig
