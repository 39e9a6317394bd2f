"""Privacy metrics of token sanitization against ε (the live version of Yue et al. 2021, Fig. 5).

Left axis: N_x = Pr[M(x) = x] (solid). Right axis, logarithmic: the effective support S_x
(dashed), the smallest number of outputs holding the threshold probability mass.
"""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go

from dpcore.viz.axes import log_axis

__all__ = ["sanitize_figure"]

_PALETTE = ("#3b6ea5", "#c0504d", "#4e9a59", "#8064a2", "#d68a1a", "#2f9fa8", "#7f7f7f", "#b5536b")


def sanitize_figure(df: pd.DataFrame, *, epsilon: float | None = None, threshold: float = 0.95) -> go.Figure:
    """N_x and S_x against ε, one colour per word.

    Parameters
    ----------
    df:
        Rows with columns ``epsilon``, ``word``, ``N_x``, ``S_x`` (from
        :func:`dpcore.text.metrics.metrics_over_epsilons`).
    epsilon:
        The currently selected ε, drawn as a vertical line.
    threshold:
        Probability mass of the effective support (for the axis title).
    """
    fig = go.Figure()
    for i, (word, g) in enumerate(df.groupby("word", sort=False)):
        g = g.sort_values("epsilon")
        color = _PALETTE[i % len(_PALETTE)]
        fig.add_trace(
            go.Scatter(
                x=g["epsilon"], y=g["N_x"], name=f"N_x · {word}", mode="lines+markers",
                line={"color": color}, legendgroup=str(word),
            )
        )  # fmt: skip
        fig.add_trace(
            go.Scatter(
                x=g["epsilon"], y=g["S_x"], name=f"S_x · {word}", mode="lines+markers",
                line={"color": color, "dash": "dash"}, yaxis="y2", legendgroup=str(word),
                marker={"symbol": "diamond"},
            )
        )  # fmt: skip
    if epsilon is not None:
        fig.add_vline(x=epsilon, line={"color": "#999", "dash": "dot"})
    fig.update_layout(
        xaxis=log_axis("ε", df["epsilon"]),
        yaxis={"title": "N_x = Pr[M(x) = x]", "range": [0, 1.02]},
        # Explicit decade ticks from the data: Plotly's own right-axis log ticks came out
        # duplicated and decreasing ("5, 4, 3, 2, 2, 1") over S_x ≈ 1 … 12,900.
        yaxis2=log_axis(
            f"S_x (support holding {threshold:g} of the mass)",
            df["S_x"],
            overlaying="y",
            side="right",
            showgrid=False,
        ),
        legend={"orientation": "h", "y": -0.2},
        margin={"t": 30, "r": 60},
        height=460,
    )
    return fig
