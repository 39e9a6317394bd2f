"""Privacy metrics of token sanitization against ε (the live version of Yue et al. 2021, Fig. 5).

Two panels over a shared logarithmic ε axis, one line per word of the text:

- top: the chance the word comes through unchanged, N_x = Pr[M(x) = x];
- bottom (logarithmic): how many different words it becomes, S_x, the smallest number of outputs
  holding the threshold probability mass.

Each word has its own colour, dash and marker, so lines that run together stay apart, and
:func:`plot_words` picks the words whose chances differ (SanText+ keeps every word outside its
sensitive set with the same chance 1 − p: four such words would draw one line).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from dpcore.formatting import epsilon_text, percent
from dpcore.viz.axes import log_axis
from dpcore.viz.palette import SERIES, SOFT_INK

__all__ = ["WORD_STYLES", "plot_words", "sanitize_figure"]

#: (colour, dash, marker) of the i-th word. Words are not names the palette knows (a mechanism, an
#: attacker, a verdict) and appear on this chart only, so they take :data:`~dpcore.viz.palette.SERIES`
#: colours (none is a mechanism's: the chart's words are not SanText or SanText+) in order, and dash
#: and marker tell them apart in grey too.
WORD_STYLES: tuple[tuple[str, str, str], ...] = tuple(
    zip(SERIES, ("solid", "dash", "dot", "dashdot", "longdash", "longdashdot"),
        ("circle", "diamond", "square", "triangle-up", "x", "star"), strict=True)
)  # fmt: skip
#: The ticks of the "chance it is kept" axis.
KEPT_TICKS = (0.0, 0.2, 0.4, 0.6, 0.8, 1.0)


def plot_words(metrics: Iterable[Mapping[str, Any]], n: int = 4) -> list[str]:
    """Up to ``n`` words of the text whose chances of being kept differ, spread over their range.

    Words with the same N_x (rounded to 3 decimals) would draw the same line: one of each, the
    longest, stands for them. Words made of letters come before numbers and punctuation when there
    are enough of them.

    Parameters
    ----------
    metrics
        Rows with ``word`` and ``N_x`` (:func:`dpcore.text.metrics.token_metrics` at the page's ε),
        in the text's order.
    n
        The most words returned.

    Returns
    -------
    list of str
        Words ordered from the least to the most likely to be kept; the lowest and the highest
        chance are always among them.
    """
    rows = [(str(r["word"]), float(r["N_x"])) for r in metrics]
    letters = [r for r in rows if r[0].isalpha()]
    groups: dict[float, str] = {}
    for pool in (letters, rows):  # letters first; numbers and punctuation only to fill up
        for word, nx in pool:
            key = round(nx, 3) if math.isfinite(nx) else math.inf
            if key not in groups or (pool is letters and len(word) > len(groups[key])):
                groups[key] = word
        if len(groups) >= n:
            break
    ordered = [groups[k] for k in sorted(groups)]
    if len(ordered) <= n:
        return ordered
    picks = sorted({round(i * (len(ordered) - 1) / (n - 1)) for i in range(n)}) if n > 1 else [0]
    return [ordered[i] for i in picks]


def sanitize_figure(df: pd.DataFrame, *, epsilon: float | None = None, threshold: float = 0.95) -> go.Figure:
    """N_x (top) and S_x (bottom) against ε, one style per word.

    Parameters
    ----------
    df
        Rows with columns ``epsilon``, ``word``, ``N_x``, ``S_x`` (from
        :func:`dpcore.text.metrics.metrics_over_epsilons`); words keep their order of appearance.
    epsilon
        The currently selected ε, drawn as a vertical line through both panels.
    threshold
        Probability mass of the effective support S_x (for the axis title).

    Returns
    -------
    go.Figure
        N_x traces on the y axis, S_x traces on y2 (logarithmic, decade ticks), one legend entry
        per word (a click hides both of its lines).
    """
    fig = make_subplots(rows=2, cols=1, shared_xaxes=True, row_heights=[0.55, 0.45], vertical_spacing=0.07)
    for i, (word, g) in enumerate(df.groupby("word", sort=False)):
        g = g.sort_values("epsilon")
        color, dash, symbol = WORD_STYLES[i % len(WORD_STYLES)]
        style = {
            "line": {"color": color, "dash": dash, "width": 2.5},
            "marker": {"symbol": symbol, "size": 8},
        }
        fig.add_trace(
            go.Scatter(
                x=g["epsilon"].tolist(), y=g["N_x"].tolist(), name=str(word), mode="lines+markers",
                legendgroup=str(word),
                hovertemplate=f"{word}<br>ε = %{{x:g}}<br>kept with chance %{{y:.3g}}<extra></extra>",
                **style,
            ),
            row=1, col=1,
        )  # fmt: skip
        fig.add_trace(
            go.Scatter(
                x=g["epsilon"].tolist(), y=g["S_x"].tolist(), name=f"{word} (S_x)", mode="lines+markers",
                legendgroup=str(word), showlegend=False,
                hovertemplate=f"{word}<br>ε = %{{x:g}}<br>becomes one of %{{y:,}} words<extra></extra>",
                **style,
            ),
            row=2, col=1,
        )  # fmt: skip
    if epsilon is not None:
        for row in (1, 2):
            fig.add_vline(x=epsilon, line={"color": SOFT_INK, "dash": "dot", "width": 1.5}, row=row, col=1)
        fig.add_annotation(
            x=math.log10(epsilon), y=1.0, xref="x", yref="paper", yanchor="bottom", showarrow=False,
            text=f"your ε = {epsilon_text(epsilon)}", font={"color": SOFT_INK},
        )  # fmt: skip
    eps_axis = log_axis("ε", df["epsilon"])
    # Explicit decade ticks from the data: Plotly's own log ticks came out duplicated and
    # decreasing ("5, 4, 3, 2, 2, 1") over S_x ≈ 1 … 12,900.
    support_axis = log_axis(f"words it becomes<br>({percent(threshold, exact=True)} of draws)", df["S_x"])
    if len(support_axis["tickvals"]) > 4:  # every other decade: the panel is short
        support_axis["tickvals"] = support_axis["tickvals"][::2]
        support_axis["ticktext"] = support_axis["ticktext"][::2]
    fig.update_layout(
        xaxis={k: v for k, v in eps_axis.items() if k != "title"},  # the top panel: ticks only
        xaxis2=eps_axis,
        yaxis={
            "title": "chance it is kept",
            "range": [-0.03, 1.05],
            "tickvals": list(KEPT_TICKS),
            "ticktext": [percent(v) for v in KEPT_TICKS],
        },
        yaxis2=support_axis,
        legend={"orientation": "h", "x": 0, "xanchor": "left", "y": 1.08, "yanchor": "bottom"},
        margin={"t": 70, "l": 80, "r": 16, "b": 50},
        height=440,
    )
    return fig
