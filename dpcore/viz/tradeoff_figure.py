"""The trade-off figure: what an observer can do with one release, against what the claim allows.

FPR on x, TPR on y, both on log axes by default (the tests that matter live at low FPR, where the
claim's ceiling TPR ≤ e^ε·FPR + δ is a straight line of slope one). The region above a pair's
ceiling is shaded (Kairouz, Oh & Viswanath 2015, Thm 2.1; :func:`dpcore.tradeoff.claim_curve`):
no test reaches it while the claim holds. For a pair whose claim covers only some outputs
(``covers="events"``) only the tested branch is drawn, TPR ≤ e^ε·FPR + δ and its mirror: no test
made of covered outputs reaches the shaded region while the claim holds, and nothing is claimed
of the others. Each audited event is a point with its Clopper–Pearson box (error bars on both
rates); a box wholly in the shaded region is a violation and is drawn as a red cross (its hover
text says which branch: the claim on the event, or only on its complement). Exact optimal curves
are solid lines.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from dpcore.tradeoff import Box, TradeoffPair, box_violation, claim_curve
from dpcore.viz.axes import FONT, log_axis

__all__ = ["tradeoff_figure"]

#: Hover text of a violation, per branch (:func:`dpcore.tradeoff.box_violation`).
_BRANCH = {
    "event": "<br>beyond the claim on the event itself (TPR ≤ e^ε·FPR + δ or its mirror)",
    "complement": "<br>beyond only the complement branch (the claim on the outputs outside the event)",
}

_PALETTE = ("#3b6ea5", "#4e9a59", "#8064a2", "#d68a1a", "#2f9fa8", "#7f7f7f", "#b5536b", "#6b7d2e")
VIOLATION_COLOUR = "#c0504d"
#: Smallest FPR/TPR drawn on log axes.
LOG_FLOOR = 1e-6


def _floor(pairs: Sequence[TradeoffPair]) -> float:
    vals = []
    for p in pairs:
        for b in p.boxes:
            vals += [b.fpr_low, b.fpr, b.tpr_low, b.tpr]
        if p.exact_fpr is not None:
            vals += [v for v in p.exact_fpr[1:3] if v > 0]
    vals = [v for v in vals if v > 0 and math.isfinite(v)]
    lo = min(vals) / 3.0 if vals else 1e-3
    return max(LOG_FLOOR, min(lo, 1e-3))


def _dense(f: np.ndarray, t: np.ndarray, per_segment: int = 24) -> tuple[np.ndarray, np.ndarray]:
    """Points along each straight (randomised) segment, so that it is drawn as the curve it is
    on log axes; curves of many vertices are left as they are."""
    if f.size > 200:
        return f, t
    u = np.linspace(0.0, 1.0, per_segment, endpoint=False)
    xf = [f[:-1, None] + u[None, :] * np.diff(f)[:, None]]
    xt = [t[:-1, None] + u[None, :] * np.diff(t)[:, None]]
    return np.append(np.concatenate(xf, axis=None), f[-1]), np.append(np.concatenate(xt, axis=None), t[-1])


def _bars(boxes: Sequence[Box], rate: str, colour: str) -> dict[str, object]:
    """Asymmetric error bars from each box's interval on ``rate`` ("fpr" or "tpr")."""
    mid = [getattr(b, rate) for b in boxes]
    return {
        "type": "data",
        "symmetric": False,
        "array": [getattr(b, f"{rate}_high") - m for b, m in zip(boxes, mid, strict=True)],
        "arrayminus": [m - getattr(b, f"{rate}_low") for b, m in zip(boxes, mid, strict=True)],
        "color": colour,
    }


def _claim_traces(fig: go.Figure, pair: TradeoffPair, lo: float, log_axes: bool) -> None:
    """The claim's ceiling (region above shaded) and floor (region below shaded) for one pair: the
    whole curve, or its event branch only when the pair's claim covers only some outputs."""
    curve = claim_curve(pair.epsilon, pair.delta, 401, covers=pair.covers)
    f = np.asarray(curve["fpr"])
    if log_axes:
        f = np.unique(np.concatenate([np.geomspace(lo, 1.0, 300), f[f >= lo]]))
    ceil = np.interp(f, curve["fpr"], curve["tpr_ceiling"])
    floor = np.interp(f, curve["fpr"], curve["tpr_floor"])
    eps_text = "∞" if math.isinf(pair.epsilon) else f"{pair.epsilon:.3g}"
    name = f"claim's ceiling, ε = {eps_text}" + (f", δ = {pair.delta:g}" if pair.delta else "")
    if pair.covers == "events":
        name += ", event branch only (the claim covers some outputs)"
    shade = "rgba(192, 80, 77, 0.16)"
    edge = {"width": 0}
    fig.add_trace(
        go.Scatter(x=f, y=np.ones_like(f), mode="lines", line=edge, showlegend=False, hoverinfo="skip")
    )
    fig.add_trace(
        go.Scatter(
            x=f,
            y=np.maximum(ceil, lo),
            mode="lines",
            name=name
            + (
                " (no test reaches the shaded region)"
                if pair.covers == "all"
                else " (no test made of covered outputs reaches the shaded region)"
            ),
            line={"color": "#444444", "dash": "dash", "width": 2},
            fill="tonexty",
            fillcolor=shade,
            hovertemplate="FPR %{x:.3g}<br>most any test can reach: TPR %{y:.3g}<extra>" + name + "</extra>",
        )
    )
    fig.add_trace(
        go.Scatter(x=f, y=np.full_like(f, lo), mode="lines", line=edge, showlegend=False, hoverinfo="skip")
    )
    fig.add_trace(
        go.Scatter(
            x=f,
            y=np.maximum(floor, lo),
            mode="lines",
            showlegend=False,
            line={"color": "#444444", "dash": "dash", "width": 1},
            fill="tonexty",
            fillcolor=shade,
            hovertemplate="FPR %{x:.3g}<br>least any test can reach: TPR %{y:.3g}<extra>" + name + "</extra>",
        )
    )


def tradeoff_figure(
    pairs: Sequence[TradeoffPair],
    *,
    log_axes: bool = True,
    title: str | None = None,
    max_pairs: int = 8,
) -> go.Figure:
    """Draw each pair's claim ceiling (shaded above), exact curve and measured boxes.

    Parameters
    ----------
    pairs
        The pairs to draw (at most ``max_pairs``, in order; the rest are left out and said so in
        the title). Pairs with the same claim share one ceiling.
    log_axes
        Log FPR and TPR axes (default); linear axes show the whole square.
    title
        Figure title.
    """
    shown = list(pairs)[:max_pairs]
    fig = go.Figure()
    lo = _floor(shown) if log_axes else 0.0
    ceilings: dict[tuple[float, float, str], str] = {}
    for i, pair in enumerate(shown):
        colour = _PALETTE[i % len(_PALETTE)]
        key = (round(pair.epsilon, 9), round(pair.delta, 12), pair.covers)
        if key not in ceilings:
            ceilings[key] = colour
            _claim_traces(fig, pair, lo, log_axes)
        exact = pair.exact_curve
        if exact is not None:
            ef, et = exact
            if log_axes:
                ef, et = _dense(ef, et)
                keep = (ef >= lo) & (et >= lo)
                ef, et = ef[keep], et[keep]
            fig.add_trace(
                go.Scatter(
                    x=ef,
                    y=et,
                    mode="lines+markers" if ef.size <= 60 else "lines",
                    marker={"size": 5},
                    name=f"{pair.label}: exact optimal tests",
                    line={"color": colour, "width": 2.5},
                    hovertemplate="FPR %{x:.4g}<br>TPR %{y:.4g}<extra>" + pair.label + " (exact)</extra>",
                )
            )
        if pair.boxes:
            hits = [box_violation(b, pair.epsilon, pair.delta, covers=pair.covers) for b in pair.boxes]
            for violating in (False, True):
                sel = [b for b, h in zip(pair.boxes, hits, strict=True) if (h is not None) == violating]
                why = [_BRANCH[h[1]] for h in hits if h is not None] if violating else [""] * len(sel)
                if not sel:
                    continue
                fig.add_trace(
                    go.Scatter(
                        x=[max(b.fpr, lo) for b in sel],
                        y=[max(b.tpr, lo) for b in sel],
                        mode="markers",
                        name=f"{pair.label}: "
                        + ("violation (whole box outside)" if violating else "measured events"),
                        marker={
                            "color": VIOLATION_COLOUR if violating else colour,
                            "symbol": "x" if violating else "circle",
                            "size": 12 if violating else 8,
                        },
                        error_x=_bars(sel, "fpr", VIOLATION_COLOUR if violating else colour),
                        error_y=_bars(sel, "tpr", VIOLATION_COLOUR if violating else colour),
                        text=[b.label + w for b, w in zip(sel, why, strict=True)],
                        hovertemplate=(
                            "%{text}<br>FPR %{x:.3g}<br>TPR %{y:.3g}<extra>" + pair.label + "</extra>"
                        ),
                    )
                )
    diag = np.geomspace(lo, 1.0, 50) if log_axes else np.array([0.0, 1.0])
    fig.add_trace(
        go.Scatter(
            x=diag,
            y=diag,
            mode="lines",
            name="guessing (TPR = FPR)",
            line={"color": "#999999", "dash": "dot", "width": 1},
            hoverinfo="skip",
        )
    )
    left = len(pairs) - len(shown)
    text = title or "What an observer can do with one release"
    if left > 0:
        text += f" (first {len(shown)} pairs of {len(pairs)})"
    if log_axes:
        xaxis = log_axis("false positive rate (FPR): wrongly naming the second input", [lo, 1.0])
        yaxis = log_axis("true positive rate (TPR): rightly naming it", [lo, 1.0])
        xaxis["range"] = [math.log10(lo), 0.0]
        yaxis["range"] = [math.log10(lo), 0.02]
    else:
        xaxis = {"title": "false positive rate (FPR): wrongly naming the second input", "range": [0, 1]}
        yaxis = {"title": "true positive rate (TPR): rightly naming it", "range": [0, 1.02]}
    fig.update_layout(
        title=text,
        xaxis=xaxis,
        yaxis=yaxis,
        font=FONT,
        legend={"orientation": "h", "yanchor": "top", "y": -0.18},
        margin={"t": 60, "b": 40},
        height=560,
    )
    return fig
