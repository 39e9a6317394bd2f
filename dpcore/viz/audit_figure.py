"""The privacy-loss figure: empirical ε against dimension n, with the claim, exact curves and
Monte-Carlo confidence bands (the live version of Habernal 2022, Fig. 2).

One legend entry per mechanism, in its colour on every chart (:func:`dpcore.viz.palette.colour`);
how each was measured is told by the line style, explained in one short note under the title:
solid for the exact majority vote, dotted for the exact likelihood-ratio attack, open diamonds
with a light band for Monte-Carlo estimates and their confidence intervals. Clicking a mechanism
in the legend shows or hides all of its traces.
"""

from __future__ import annotations

import math

import pandas as pd
import plotly.graph_objects as go

from dpcore.formatting import epsilon_text
from dpcore.viz.axes import FONT, log_axis
from dpcore.viz.palette import BAD, CLAIM, GRID, MIN_FONT_PX, SOFT_INK, colour

__all__ = ["INF_LABEL", "audit_figure", "method_note", "results_frame"]

INF_LABEL = "∞"
#: Lower end of the log y axis (log10): losses below 10⁻³ are not drawn.
LOG_Y_FLOOR = -3.0
#: Share of the plot's height given to the ∞ band, on linear and log axes alike.
INF_BAND_SHARE = 0.12
#: Default height (px): the page's headline and the whole figure fit a 1280×720 first screen.
HEIGHT = 470


def results_frame(rows: list[dict]) -> pd.DataFrame:
    """A tidy frame with one row per (mechanism, n) and method-prefixed columns."""
    return pd.DataFrame(rows)


def _finite_top(values: list[float], floor: float) -> float:
    finite = [v for v in values if v is not None and math.isfinite(v)]
    return max([floor, *finite]) * 1.15 if finite else floor * 1.15


def method_note(*, exact: bool, lr: bool, mc: bool) -> str:
    """The one-line key to the line styles of :func:`audit_figure` ("" when only one kind is drawn
    and it is the exact majority vote: nothing to tell apart).

    Parameters
    ----------
    exact, lr, mc
        Whether the figure draws exact majority-vote curves, exact likelihood-ratio curves and
        Monte-Carlo estimates.
    """
    parts = []
    if exact and (lr or mc):
        parts.append("solid: majority vote")
    if lr:
        parts.append("dotted: best attack")
    if mc:
        parts.append("◇: Monte-Carlo (band: confidence interval)")
    return " · ".join(parts)


def audit_figure(
    df: pd.DataFrame,
    *,
    epsilon: float,
    log_y: bool = False,
    show_lr: bool = True,
    title: str | None = None,
    height: int = HEIGHT,
) -> go.Figure:
    """Build the audit figure.

    Parameters
    ----------
    df
        Columns ``mechanism, dim, exact, exact_lr, mc, mc_lower, mc_upper, mc_lr`` (NaN where not
        computed). Infinite values are drawn in a labelled ∞ band at the top of the plot, values
        above the finite range on its top line (their true value in the hover text).
    epsilon
        The claimed ε (a dashed line, labelled in the right margin).
    log_y
        Logarithmic y axis (decades from 10⁻³).
    show_lr
        Draw the exact likelihood-ratio curves (dotted).
    title
        Figure title (default "Empirical privacy loss vs dimension").
    height
        Figure height in px.

    Returns
    -------
    plotly.graph_objects.Figure
        One legend entry per mechanism (its colour from :func:`dpcore.viz.palette.colour`); the
        data traces keep their names (``"adept (exact)"``, ``"adept (LR attack, exact)"``,
        ``"adept (Monte-Carlo)"``, ``"adept: CI band"``) and sit in the mechanism's legend group.
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

    drawn = {"exact": False, "lr": False, "mc": False}
    for mech, g in df.groupby("mechanism", sort=False):
        color = colour(str(mech))
        cur[0] = str(mech)
        g = g.sort_values("dim")
        x = g["dim"].tolist()
        # The mechanism's one legend entry: a swatch in its colour, no data of its own.
        fig.add_trace(
            go.Scatter(
                x=[None], y=[None], mode="lines+markers", name=str(mech), legendgroup=mech,
                line={"color": color, "width": 2.5}, marker={"size": 7, "color": color},
                hoverinfo="skip",
            )
        )  # fmt: skip
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
            drawn["exact"] = True
            fig.add_trace(
                go.Scatter(
                    x=x,
                    y=[clamp(v) for v in g["exact"]],
                    mode="lines+markers",
                    line={"color": color, "width": 2.5},
                    marker={"size": 7, "color": color},
                    name=f"{mech} (exact)",
                    legendgroup=mech,
                    showlegend=False,
                    customdata=[label(v) for v in g["exact"]],
                    hovertemplate=f"{mech}<br>n=%{{x}}<br>exact ε̂=%{{customdata}}<extra></extra>",
                )
            )
        if show_lr and "exact_lr" in g and g["exact_lr"].notna().any():
            drawn["lr"] = True
            fig.add_trace(
                go.Scatter(
                    x=x,
                    y=[clamp(v) for v in g["exact_lr"]],
                    mode="lines",
                    line={"color": color, "width": 2, "dash": "dot"},
                    name=f"{mech} (LR attack, exact)",
                    legendgroup=mech,
                    showlegend=False,
                    customdata=[label(v) for v in g["exact_lr"]],
                    hovertemplate=f"{mech}<br>n=%{{x}}<br>LR ε̂=%{{customdata}}<extra></extra>",
                )
            )
        if "mc" in g and g["mc"].notna().any():
            drawn["mc"] = True
            fig.add_trace(
                go.Scatter(
                    x=x,
                    y=[clamp(v) for v in g["mc"]],
                    mode="markers",
                    marker={"color": color, "symbol": "diamond-open", "size": 11, "line": {"width": 2}},
                    name=f"{mech} (Monte-Carlo)",
                    legendgroup=mech,
                    showlegend=False,
                    cliponaxis=False,
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
    fig.add_hline(y=epsilon, line={"color": CLAIM, "dash": "dash", "width": 2})
    fig.add_annotation(
        x=1, xref="paper", xanchor="left", xshift=4, y=ay(epsilon), yref="y", showarrow=False,
        text=f"claimed ε = {epsilon_text(epsilon)}", align="left", font={"size": 15, "color": CLAIM},
    )  # fmt: skip
    fig.add_hline(y=top, line={"color": "#b0b0b0", "width": 1})
    fig.add_annotation(
        x=1, xref="paper", xanchor="left", xshift=4, y=ay(top), yref="y", showarrow=False,
        text=f"larger values<br>drawn at {top:.3g}", align="left",
        font={"size": MIN_FONT_PX, "color": SOFT_INK},
    )  # fmt: skip
    if inf_mechs:
        fig.add_hrect(y0=band_lo, y1=band_hi, fillcolor="#f6e4e6", line_width=0, layer="below")
        fig.add_annotation(
            x=0, xref="paper", y=ay((band_lo * band_hi) ** 0.5 if log_y else (band_lo + band_hi) / 2),
            yref="y", text=f"ε̂ = {INF_LABEL}", showarrow=False, xanchor="right", xshift=-6,
            font={"size": 16, "color": BAD},
        )  # fmt: skip
    note = method_note(exact=drawn["exact"], lr=drawn["lr"], mc=drawn["mc"])
    fig.update_layout(
        title={
            "text": title or "Empirical privacy loss vs dimension",
            "subtitle": {"text": note, "font": {"size": MIN_FONT_PX, "color": SOFT_INK}},
        },
        xaxis={"title": "dimension n", "type": "log", "dtick": math.log10(2)},
        yaxis=log_axis("empirical ε̂") if log_y else {"title": "empirical ε̂", "type": "linear"},
        template="plotly_white",
        font=FONT,
        legend={"orientation": "h", "yanchor": "top", "y": -0.17, "x": 0, "groupclick": "togglegroup"},
        height=height,
        margin={"t": 78 if note else 56, "l": 80, "r": 135, "b": 30},
    )
    fig.update_xaxes(tickfont={"size": 15}, title_font={"size": 16}, gridcolor=GRID)
    fig.update_yaxes(tickfont={"size": 15}, title_font={"size": 16}, gridcolor=GRID)
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
        # A little room below 0, so that a loss of 0 (the random baseline) is not on the frame.
        fig.update_yaxes(range=[-0.03 * top, y_max], tickvals=ticks, ticktext=[f"{t:g}" for t in ticks])
    return fig
