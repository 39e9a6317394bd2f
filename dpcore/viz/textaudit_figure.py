"""The text-audit figure: each pair's lower confidence bound against its claimed bound.

A point above the diagonal is a pair whose privacy loss is, at the stated confidence, larger
than the mechanism claims (a violation). The horizontal line is the largest loss the sample size
can show at all: claims above it cannot be refuted by this run, whatever the mechanism does.
"""

from __future__ import annotations

import math

import pandas as pd
import plotly.graph_objects as go

from dpcore.textaudit.result import TextAuditResult

__all__ = ["pairs_table", "screen_figure", "textaudit_figure", "worst_words_table"]

_OK = "#3b6ea5"
_BAD = "#c0504d"
_FONT = 16


def pairs_table(result: TextAuditResult) -> pd.DataFrame:
    """One row per pair with human column names (for the page and the CSV)."""
    rows = []
    for p in result.pairs:
        rows.append(
            {
                "word x": p.x,
                "word x′": p.x_prime,
                "distance d(x, x′)": p.distance,
                "claimed bound": p.claimed_bound,
                "empirical ε̂": p.empirical_epsilon,
                f"lower bound ({100 * result.confidence:g}%)": p.lower_bound,
                "exact loss": p.exact_epsilon,
                "violates": "not tested" if p.error else ("yes" if p.violates else "no"),
                "event size |S|": p.event_size,
                "x in S (of T/2)": p.count_x,
                "x′ in S (of T/2)": p.count_x_prime,
                "detectable loss (90%)": (p.detectable_violation or {}).get("loss"),
                "note": p.error or "",
            }
        )
    return pd.DataFrame(rows)


def textaudit_figure(result: TextAuditResult) -> go.Figure:
    """Scatter of claimed bound (x) against lower bound (y), with the diagonal."""
    tested = [p for p in result.pairs if p.error is None]
    fig = go.Figure()
    finite = [p.claimed_bound for p in tested] + [p.lower_bound for p in tested]
    finite += [
        p.exact_epsilon for p in tested if p.exact_epsilon is not None and math.isfinite(p.exact_epsilon)
    ]
    top = max([1e-3, result.max_detectable_loss, *finite]) * 1.08
    fig.add_trace(
        go.Scatter(
            x=[0, top],
            y=[0, top],
            mode="lines",
            line={"color": "#555", "dash": "dash"},
            name="claimed bound (y = x)",
            hoverinfo="skip",
        )
    )
    fig.add_trace(
        go.Scatter(
            x=[0, top],
            y=[result.max_detectable_loss] * 2,
            mode="lines",
            line={"color": "#999", "dash": "dot"},
            name=f"largest loss {result.samples:,} samples can show",
            hoverinfo="skip",
        )
    )
    det = result.detectable_violation or {}
    excess = det.get("excess", math.inf)
    if excess is not None and math.isfinite(excess) and excess > 0:
        e = min(excess, top)
        fig.add_trace(
            go.Scatter(
                x=[0, top, top, 0, 0],
                y=[0, top, min(top + e, top * 2), e, 0],
                mode="lines",
                fill="toself",
                fillcolor="rgba(192, 80, 77, 0.10)",
                line={"width": 0},
                name=(
                    f"could be missed: excess < {excess:.2g} (events of probability ≥ "
                    f"{det.get('event_probability', 0):.2g}; flagged w.p. ≥ {det.get('power', 0.9):g} above)"
                ),
                hoverinfo="skip",
            )
        )
    for violates, color, name in (
        (False, _OK, "pair within its claim"),
        (True, _BAD, "pair violates its claim"),
    ):
        pts = [p for p in tested if p.violates == violates]
        if not pts:
            continue
        fig.add_trace(
            go.Scatter(
                x=[p.claimed_bound for p in pts],
                y=[p.lower_bound for p in pts],
                mode="markers",
                marker={"size": 12, "color": color, "symbol": "x" if violates else "circle"},
                name=f"{name} ({len(pts)})",
                text=[
                    f"{p.x} / {p.x_prime}<br>d = {p.distance:.3g}, claim {p.claimed_bound:.3g}<br>"
                    f"ε̂ = {_fmt(p.empirical_epsilon)}, lower bound {p.lower_bound:.3g}"
                    + ("" if p.exact_epsilon is None else f"<br>exact {_fmt(p.exact_epsilon)}")
                    for p in pts
                ],
                hovertemplate="%{text}<extra></extra>",
            )
        )
    exact = [p for p in tested if p.exact_epsilon is not None]
    if exact:
        fig.add_trace(
            go.Scatter(
                x=[p.claimed_bound for p in exact],
                y=[min(p.exact_epsilon, top) for p in exact],
                mode="markers",
                marker={"size": 9, "color": "rgba(0,0,0,0)", "line": {"color": "#4e9a59", "width": 2}},
                name="exact loss (closed form)",
                text=[f"{p.x} / {p.x_prime}: exact {_fmt(p.exact_epsilon)}" for p in exact],
                hovertemplate="%{text}<extra></extra>",
            )
        )
    fig.update_layout(
        font={"size": _FONT},
        xaxis={"title": "claimed bound for the pair (ε or ε·d(x, x′))", "range": [0, top]},
        yaxis={"title": f"privacy loss, lower bound at {100 * result.confidence:g}%", "range": [0, top]},
        legend={"orientation": "h", "yanchor": "top", "y": -0.2},
        margin={"l": 70, "r": 20, "t": 30, "b": 40},
        height=520,
    )
    return fig


def worst_words_table(result: TextAuditResult) -> pd.DataFrame:
    """The screen's worst words (best pilot score first) and whether a confirmed violation has them."""
    flagged = {w for p in result.pairs if p.violates for w in (p.x, p.x_prime)}
    rows = [
        {
            "word": w["word"],
            "frequency rank": w["rank"] + 1,
            "pilot lower bound − claim": w["score"],
            "in a confirmed violation": "yes" if w["word"] in flagged else "no",
        }
        for w in (result.screen or {}).get("top_words", [])
    ]
    return pd.DataFrame(rows)


def screen_figure(result: TextAuditResult) -> go.Figure:
    """Per screened word, its worst pilot score (pilot lower bound − claim) against its rank.

    Words above 0 looked, on the screen's draws, like they exceed their claim; the screen only
    proposes, and the red crosses are the words of pairs the confirmation flagged.
    """
    import numpy as np

    fig = go.Figure()
    ids = np.asarray(result.screened_ids if result.screened_ids is not None else [], dtype=np.int64)
    scores = np.asarray(result.word_scores if result.word_scores is not None else [], dtype=np.float64)
    ok = np.isfinite(scores)
    shown = np.clip(scores[ok], -20.0, None)
    fig.add_trace(
        go.Scatter(
            x=ids[ok] + 1,
            y=shown,
            mode="markers",
            marker={"size": 4, "color": _OK, "opacity": 0.6},
            name=f"screened word ({int(ok.sum()):,})",
            hovertemplate="rank %{x}: %{y:.3g}<extra></extra>",
        )
    )
    kth = (result.screen or {}).get("kth_score")
    if kth is not None and math.isfinite(kth) and ids.size:
        fig.add_trace(
            go.Scatter(
                x=[1, int(ids.max()) + 1],
                y=[kth, kth],
                mode="lines",
                line={"color": "#999", "dash": "dot"},
                name="proposed for confirmation above this",
                hoverinfo="skip",
            )
        )
    flagged = {w for p in result.pairs if p.violates for w in (p.x, p.x_prime)}
    if flagged and ids.size:
        words = [str(w) for w in result.screened_words] if result.screened_words is not None else []
        pos = [k for k, w in enumerate(words) if w in flagged and ok[k]]
        if pos:
            fig.add_trace(
                go.Scatter(
                    x=ids[pos] + 1,
                    y=np.clip(scores[pos], -20.0, None),
                    mode="markers",
                    marker={"size": 13, "color": _BAD, "symbol": "x"},
                    name=f"in a confirmed violation ({len(pos)})",
                    text=[words[k] for k in pos],
                    hovertemplate="%{text}: %{y:.3g}<extra></extra>",
                )
            )
    fig.add_hline(y=0, line={"color": "#555", "dash": "dash"})
    fig.update_layout(
        font={"size": _FONT},
        xaxis={"title": "word, by frequency rank", "type": "log"},
        yaxis={"title": "worst pilot loss − claim (nats)"},
        legend={"orientation": "h", "yanchor": "top", "y": -0.2},
        margin={"l": 70, "r": 20, "t": 30, "b": 40},
        height=420,
    )
    return fig


def _fmt(v: float | None) -> str:
    if v is None:
        return ""
    return "∞" if math.isinf(v) else f"{v:.4g}"
