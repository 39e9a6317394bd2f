"""The trade-off figure: what an observer can do with one release, against what the claim allows.

FPR on x, on a log axis by default (the tests that matter live at low FPR), labelled in plain
percentages ("0.1%, 1%, 10%"). TPR on y, on a log axis (where the claim's ceiling TPR ≤ e^ε·FPR + δ
is a straight line of slope one) or, with ``tpr_scale="linear"``, from 0% to 100% (the share of
second inputs an observer names rightly, read directly). Both axes leave room beyond their ends,
so that nothing lies on the frame, and markers are never clipped at the plot's edge.

The region above a pair's ceiling is shaded (Kairouz, Oh & Viswanath 2015, Thm 2.1;
:func:`dpcore.tradeoff.claim_curve`): no test reaches it while the claim holds; its mirror image
(the floor, tests that favour the first input) is shaded too unless ``mirror=False``. For a pair
whose claim covers only some outputs (``covers="events"``) only the tested branch is drawn,
TPR ≤ e^ε·FPR + δ and its mirror: no test made of covered outputs reaches the shaded region while
the claim holds, and nothing is claimed of the others. Each audited event is a point with its
Clopper–Pearson box (error bars on both rates); a box wholly in the shaded region is a violation
and is drawn as a red cross (its hover text says which branch: the claim on the event, or only on
its complement). Exact optimal curves are solid lines, one colour per mechanism
(:func:`dpcore.viz.palette.colour`) where the pair's label starts with a mechanism's name.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from dpcore.formatting import epsilon_text, percent
from dpcore.tradeoff import Box, TradeoffPair, box_violation, claim_curve, tpr_ceiling
from dpcore.viz.axes import FONT, log_axis
from dpcore.viz.palette import BAD, CLAIM, INK, NAMED, SERIES, colour

__all__ = ["tradeoff_figure"]

#: Hover text of a violation, per branch (:func:`dpcore.tradeoff.box_violation`).
_BRANCH = {
    "event": "<br>beyond the claim on the event itself (TPR ≤ e^ε·FPR + δ or its mirror)",
    "complement": "<br>beyond only the complement branch (the claim on the outputs outside the event)",
}

#: Colours of pairs not named after a mechanism (word pairs), in order; red is kept for violations.
_PALETTE = SERIES  # a word pair is no mechanism: no mechanism's colour (dpcore.viz.palette.SERIES)
VIOLATION_COLOUR = BAD
#: The shaded region: the violation red, light.
SHADE = "rgba(178, 24, 43, 0.13)"
#: Smallest FPR/TPR drawn on log axes.
LOG_FLOOR = 1e-6
#: Room beyond the data on a log axis (decades) and on a linear 0–1 axis (share of the range).
LOG_PAD = 0.22
LINEAR_PAD = 0.06
#: Default height (px).
HEIGHT = 560


def _pair_colour(label: str, index: int, taken: set[str]) -> str:
    """A mechanism's colour for a pair named after it ("adept (n = 128): 0ⁿ vs 1ⁿ"), else the first
    colour of :data:`_PALETTE` that no other pair on the chart has (cycling when all are)."""
    key = label.strip().lower().split(" (")[0].split(" ")[0].split(":")[0]
    if key in NAMED:
        return colour(key)
    free = [c for c in _PALETTE if c not in taken]
    return free[0] if free else _PALETTE[index % len(_PALETTE)]


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


def _on_log_axis(
    f: np.ndarray, t: np.ndarray, x_lo: float, points: int = 400
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The exact curve from the plot's left edge ``x_lo`` on, as it looks on a log FPR axis.

    Its vertices (the Neyman–Pearson tests) at FPR ≥ ``x_lo``, and between them ``points``
    log-spaced FPRs with the TPR of the randomised test there (the curve is straight between
    vertices in linear coordinates, so :func:`numpy.interp` is exact). A segment that starts left
    of the plot (ADePT's first test can have an FPR of 10⁻³⁵) is drawn from the edge on.

    Returns
    -------
    (fpr, tpr, vertex)
        Sorted by FPR, then TPR; ``vertex`` is True at the curve's own vertices.
    """
    keep = f >= x_lo
    g = np.geomspace(x_lo, 1.0, points)
    x = np.concatenate([f[keep], g])
    y = np.concatenate([t[keep], np.interp(g, f, t)])
    vertex = np.concatenate([np.ones(int(keep.sum()), dtype=bool), np.zeros(points, dtype=bool)])
    order = np.lexsort((y, x))
    return x[order], y[order], vertex[order]


_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def _rate(p: float) -> str:
    """A rate for a label: a percentage (:func:`dpcore.formatting.percent`), or below 0.0001% in
    powers of ten ("9.1 × 10⁻³⁵"), never "9.1e-33%"."""
    if p == 0.0 or p >= 1e-6:
        return percent(p)
    mantissa, exponent = f"{p:.1e}".split("e")
    return f"{mantissa} × 10{str(int(exponent)).translate(_SUPERSCRIPT)}"


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


def _claim_traces(fig: go.Figure, pair: TradeoffPair, f: np.ndarray, floor_y: float, *, mirror: bool) -> None:
    """The claim's ceiling (region above shaded, up to TPR = 1) and, with ``mirror``, its floor
    (region below shaded) for one pair, at the FPRs ``f``: the whole curve, or its event branch only
    when the pair's claim covers only some outputs. ``floor_y`` is the bottom of the plot."""
    curve = claim_curve(pair.epsilon, pair.delta, 401, covers=pair.covers)
    ceil = np.interp(f, curve["fpr"], curve["tpr_ceiling"])
    floor = np.interp(f, curve["fpr"], curve["tpr_floor"])
    eps_text = epsilon_text(pair.epsilon, digits=3)
    name = f"claim's ceiling, ε = {eps_text}" + (f", δ = {pair.delta:g}" if pair.delta else "")
    if pair.covers == "events":
        name += ", event branch only (the claim covers some outputs)"
    edge = {"width": 0}
    fig.add_trace(
        go.Scatter(x=f, y=np.ones_like(f), mode="lines", line=edge, showlegend=False, hoverinfo="skip")
    )
    fig.add_trace(
        go.Scatter(
            x=f,
            y=np.maximum(ceil, floor_y),
            mode="lines",
            name=name
            + (
                " (no test reaches the shaded region)"
                if pair.covers == "all"
                else " (no test made of covered outputs reaches the shaded region)"
            ),
            line={"color": CLAIM, "dash": "dash", "width": 2},
            fill="tonexty",
            fillcolor=SHADE,
            hovertemplate="FPR %{x:.3g}<br>most any test can reach: TPR %{y:.3g}<extra>" + name + "</extra>",
        )
    )
    if not mirror:
        return
    fig.add_trace(
        go.Scatter(
            x=f, y=np.full_like(f, floor_y), mode="lines", line=edge, showlegend=False, hoverinfo="skip"
        )
    )
    fig.add_trace(
        go.Scatter(
            x=f,
            y=np.maximum(floor, floor_y),
            mode="lines",
            showlegend=False,
            line={"color": CLAIM, "dash": "dash", "width": 1},
            fill="tonexty",
            fillcolor=SHADE,
            hovertemplate="FPR %{x:.3g}<br>least any test can reach: TPR %{y:.3g}<extra>" + name + "</extra>",
        )
    )


def _violation_label(
    fig: go.Figure,
    pair: TradeoffPair,
    box: Box,
    x: float,
    y: float,
    *,
    x_range: list[float],
    log_x: bool,
    log_y: bool,
) -> None:
    """Say in words, beside its red cross at (``x``, ``y``), what the clearest violating box of
    ``pair`` shows (annotations on a log axis are placed in log10 units)."""
    ceiling = float(tpr_ceiling(np.array([box.fpr]), pair.epsilon, pair.delta, covers=pair.covers)[0])
    eps_text = epsilon_text(pair.epsilon, digits=3) + (f", δ = {pair.delta:g}" if pair.delta else "")
    text = (
        f"{box.label}: names {pair.alt} rightly {_rate(box.tpr)} of the time<br>"
        f"with {_rate(box.fpr)} false alarms; ε = {eps_text} allows at most {_rate(ceiling)}"
    )
    if box.fpr < x or box.tpr < y:
        text += "<br>(drawn at the end of the axis)"
    pos = (math.log10(x) if log_x else x) - x_range[0]
    right = pos < 0.55 * (x_range[1] - x_range[0])  # the text goes where there is room
    fig.add_annotation(
        x=math.log10(x) if log_x else x,
        y=math.log10(y) if log_y else y,
        text=text,
        showarrow=True,
        arrowhead=0,
        arrowcolor=BAD,
        ax=40 if right else -40,
        ay=55 if y > 0.5 else -55,
        xanchor="left" if right else "right",
        align="left" if right else "right",
        font={"size": 14, "color": INK},
        bgcolor="rgba(255, 255, 255, 0.9)",
        bordercolor=BAD,
        borderpad=4,
    )


def _rate_axis(title: str, log: bool, lo: float) -> dict[str, object]:
    """A rate axis labelled in percentages, with room beyond both ends of [lo, 1] (log) or [0, 1]."""
    if log:
        axis = log_axis(title, [lo, 1.0], percent=True)
        axis["range"] = [math.log10(lo) - LOG_PAD, LOG_PAD / 2]
        return axis
    ticks = [0.0, 0.25, 0.5, 0.75, 1.0]
    return {
        "title": title,
        "type": "linear",
        "range": [-LINEAR_PAD, 1.0 + LINEAR_PAD],
        "tickvals": ticks,
        "ticktext": [percent(t) for t in ticks],
        "zeroline": False,
    }


def tradeoff_figure(
    pairs: Sequence[TradeoffPair],
    *,
    log_axes: bool = True,
    title: str | None = None,
    max_pairs: int = 8,
    tpr_scale: str | None = None,
    mirror: bool = True,
    label_violation: bool = False,
    height: int = HEIGHT,
) -> go.Figure:
    """Draw each pair's claim ceiling (shaded above), exact curve and measured boxes.

    Parameters
    ----------
    pairs
        The pairs to draw (at most ``max_pairs``, in order; the rest are left out and said so in
        the title). Pairs with the same claim share one ceiling.
    log_axes
        A log FPR axis (default), from just below the smallest rate measured to 100%; linear axes
        show the whole square.
    title
        Figure title.
    max_pairs
        The most pairs drawn.
    tpr_scale
        ``"log"`` or ``"linear"``: the TPR axis (default: log with ``log_axes``, else linear). A
        linear TPR axis reads as "names the second input rightly x% of the time".
    mirror
        Draw and shade the claim's floor too (tests that favour the first input). Boxes are tested
        against the whole claim either way.
    label_violation
        Beside each pair's clearest violation (the violating box whose TPR lies furthest above the
        claim's ceiling), say in words what it shows: its TPR, its FPR and what the claim allows.
    height
        Figure height in px.

    Returns
    -------
    plotly.graph_objects.Figure
        Trace names: ``"<pair>: exact optimal tests"``, ``"<pair>: measured events"``,
        ``"<pair>: violation (whole box outside)"``, ``"claim's ceiling, ε = …"`` and
        ``"guessing (TPR = FPR)"``. A pair's measured events are left out of the legend when its
        exact curve is drawn (they lie on it; their hover text names them).
    """
    if tpr_scale not in (None, "log", "linear"):
        raise ValueError(f"tpr_scale must be 'log' or 'linear', got {tpr_scale!r}")
    tpr_log = (tpr_scale or ("log" if log_axes else "linear")) == "log"
    if tpr_log and not log_axes:
        raise ValueError("a log TPR axis needs log_axes=True")
    shown = list(pairs)[:max_pairs]
    fig = go.Figure()
    lo = _floor(shown) if log_axes else 0.0
    x_lo = 10 ** (math.log10(lo) - LOG_PAD) if log_axes else 0.0  # the plot's left edge
    y_lo = x_lo if tpr_log else 0.0
    # The claim's curves span the whole plot, from its left edge (denser where they bend).
    u = np.linspace(0.0, 1.0, 401)
    f = np.unique(np.concatenate([u**3, u]))
    if log_axes:
        f = np.unique(np.concatenate([np.geomspace(x_lo, 1.0, 300), f[f >= x_lo]]))
    ceilings: set[tuple[float, float, str]] = set()
    taken: set[str] = set()
    for i, pair in enumerate(shown):
        pc = _pair_colour(pair.label, i, taken)
        taken.add(pc)
        key = (round(pair.epsilon, 9), round(pair.delta, 12), pair.covers)
        if key not in ceilings:
            ceilings.add(key)
            _claim_traces(fig, pair, f, y_lo, mirror=mirror)
        exact = pair.exact_curve
        if exact is not None:
            ef, et = exact
            vertex = np.ones(ef.size, dtype=bool)
            if log_axes:
                ef, et, vertex = _on_log_axis(ef, et, x_lo)
                if tpr_log:
                    keep = et >= y_lo
                    ef, et, vertex = ef[keep], et[keep], vertex[keep]
            # markers on the curve's own vertices (the tests), when there are few enough to see
            marked = int(vertex.sum()) <= 60
            fig.add_trace(
                go.Scatter(
                    x=ef,
                    y=et,
                    mode="lines+markers" if marked else "lines",
                    marker={"size": np.where(vertex, 6, 0) if marked else 6, "color": pc},
                    name=f"{pair.label}: exact optimal tests",
                    legendgroup=pair.label,
                    line={"color": pc, "width": 3},
                    cliponaxis=False,
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
                mark = VIOLATION_COLOUR if violating else pc
                # a rate below the axis is drawn at its end (`lo`, inside the plot); the hover text
                # and the label keep the true value
                fig.add_trace(
                    go.Scatter(
                        x=[max(b.fpr, lo) if log_axes else b.fpr for b in sel],
                        y=[max(b.tpr, lo) if tpr_log else b.tpr for b in sel],
                        customdata=[[b.fpr, b.tpr] for b in sel],
                        mode="markers",
                        name=f"{pair.label}: "
                        + ("violation (whole box outside)" if violating else "measured events"),
                        legendgroup=pair.label,
                        showlegend=violating or exact is None,
                        marker={
                            "color": mark,
                            "symbol": "x" if violating else "circle",
                            "size": 16 if violating else 9,
                            "line": {"width": 1.5, "color": "#ffffff"},
                        },
                        cliponaxis=False,
                        error_x=_bars(sel, "fpr", mark),
                        error_y=_bars(sel, "tpr", mark),
                        text=[b.label + w for b, w in zip(sel, why, strict=True)],
                        hovertemplate=(
                            "%{text}<br>FPR %{customdata[0]:.3g}<br>TPR %{customdata[1]:.3g}<extra>"
                            + pair.label
                            + "</extra>"
                        ),
                    )
                )
    x_range = [math.log10(lo) - LOG_PAD, LOG_PAD / 2] if log_axes else [-LINEAR_PAD, 1.0 + LINEAR_PAD]
    if label_violation:
        for pair in shown:
            bad = [b for b in pair.boxes if box_violation(b, pair.epsilon, pair.delta, covers=pair.covers)]
            if bad:
                ceil = tpr_ceiling(
                    np.array([b.fpr for b in bad]), pair.epsilon, pair.delta, covers=pair.covers
                )
                worst = bad[int(np.argmax(np.array([b.tpr for b in bad]) - ceil))]
                xy = (
                    max(worst.fpr, lo) if log_axes else worst.fpr,
                    max(worst.tpr, lo) if tpr_log else worst.tpr,
                )
                _violation_label(fig, pair, worst, *xy, x_range=x_range, log_x=log_axes, log_y=tpr_log)
    diag = np.geomspace(x_lo, 1.0, 50) if log_axes else np.array([0.0, 1.0])
    fig.add_trace(
        go.Scatter(
            x=diag,
            y=diag,
            mode="lines",
            name="guessing (TPR = FPR)",
            line={"color": "#767676", "dash": "dot", "width": 1.5},
            hoverinfo="skip",
        )
    )
    left = len(pairs) - len(shown)
    text = title or "What an observer can do with one release"
    if left > 0:
        text += f" (first {len(shown)} pairs of {len(pairs)})"
    fpr_title = "false positive rate (FPR): wrongly naming the second input"
    tpr_title = "true positive rate (TPR): rightly naming it"
    fig.update_layout(
        title=text,
        xaxis=_rate_axis(fpr_title, log_axes, lo),
        yaxis=_rate_axis(tpr_title, tpr_log, lo),
        font=FONT,
        legend={"orientation": "h", "yanchor": "top", "y": -0.2, "x": 0},
        margin={"t": 60, "b": 40},
        height=height,
    )
    return fig
