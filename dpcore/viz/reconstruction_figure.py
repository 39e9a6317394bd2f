"""The LLM reconstruction chart: the share of original words each attacker recovers against ε,
one panel per (mechanism, sentence set) (:mod:`dpcore.attack.reconstruction_study`).

Rows of panels are the mechanisms and columns the two sentence sets (public lines the model has
read, lines written after its release), on the same axes, so the memorisation gap reads across a
row. In each panel, in the mechanism's colour (:func:`dpcore.viz.palette.colour`): the LLM's
success on all scored positions, its success on the positions the sanitizer *replaced* (open
markers, with the Clopper–Pearson interval: what inversion restores), the masked-LM attacker and,
where the mechanism has an exact channel, the Bayesian attacker (their markers are
:func:`dpcore.viz.palette.attacker_style`'s); the share the sanitizer kept, which copying alone
recovers (a thin dotted line); and the claim's one-word ceiling (black, dashed): the most an
attacker *that sees one sanitized word* recovers while the claim holds. The LLM reads the whole
sentence, so that line is drawn for reference and is not its bound.
"""

from __future__ import annotations

from typing import Any

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from dpcore.viz.palette import ATTACKER_INK, CLAIM, attacker_style, colour

__all__ = ["SERIES", "reconstruction_figure"]

#: (table column, legend label, attacker style, open marker): the attackers' series.
SERIES = (
    ("LLM", "LLM, all words", "llm", False),
    ("LLM on replaced words", "LLM, replaced words only", "llm", True),
    ("masked LM", "masked-LM attacker", "mlm", False),
    ("Bayes (unigram)", "Bayesian attacker", "bayes-unigram", False),
)
_KEPT = "kept by the sanitizer (copying)"
_CEILING = "the claim's one-word ceiling"
_SET_TITLES = {
    "public-lines": "public lines (read by the model)",
    "unseen-lines": "unseen lines (written after it)",
}


def reconstruction_figure(table: list[dict[str, Any]]) -> go.Figure:
    """The chart (module docstring) from :func:`dpcore.attack.reconstruction_study.study_table` rows."""
    mechs = list(dict.fromkeys(r["mechanism"] for r in table))
    sets = list(dict.fromkeys(r["sentences"] for r in table))
    titles = [f"<b>{m}</b> · {_SET_TITLES.get(s, s)}" for m in mechs for s in sets]
    fig = make_subplots(
        rows=max(1, len(mechs)),
        cols=max(1, len(sets)),
        subplot_titles=titles or None,
        shared_yaxes="all",
        horizontal_spacing=0.06,
        vertical_spacing=0.14,
    )
    shown: set[str] = set()

    def legend(name: str) -> bool:
        first = name not in shown
        shown.add(name)
        return first

    for i, mech in enumerate(mechs):
        color = colour(mech)
        for j, sset in enumerate(sets):
            pts = sorted(
                (r for r in table if r["mechanism"] == mech and r["sentences"] == sset),
                key=lambda r: r["epsilon"],
            )
            if not pts:
                continue
            eps = [r["epsilon"] for r in pts]
            cell = {"row": i + 1, "col": j + 1}
            fig.add_trace(
                go.Scatter(
                    x=eps, y=[r["one-word ceiling"] for r in pts], mode="lines",
                    line={"color": CLAIM, "dash": "dash", "width": 2}, name=_CEILING, legendgroup=_CEILING,
                    showlegend=legend(_CEILING),
                    hovertemplate=(f"<b>{mech}</b> · ε = %{{x:g}}<br>an attacker seeing one sanitized word "
                                   "recovers at most %{y:.3f} if the claim holds<extra></extra>"),
                ),
                **cell,
            )  # fmt: skip
            fig.add_trace(
                go.Scatter(
                    x=eps, y=[r["kept by the sanitizer"] for r in pts], mode="lines",
                    line={"color": color, "dash": "dot", "width": 1.5}, name=f"{mech} · {_KEPT}",
                    legendgroup=_KEPT, showlegend=False,
                    hovertemplate=f"<b>{mech}</b> · ε = %{{x:g}}<br>kept: %{{y:.3f}}<extra></extra>",
                ),
                **cell,
            )  # fmt: skip
            if legend(_KEPT):  # its legend entry is neutral: the colour is the mechanism's
                fig.add_trace(
                    go.Scatter(
                        x=[None], y=[None], mode="lines", name=_KEPT, legendgroup=_KEPT,
                        line={"color": ATTACKER_INK, "dash": "dot", "width": 1.5},
                    ),
                    **cell,
                )  # fmt: skip
            for key, label, attacker, hollow in SERIES:
                have = [r for r in pts if r.get(key) is not None]
                if not have:
                    continue
                style = attacker_style(attacker)
                symbol = style.symbol + ("-open" if hollow else "")
                hover = f"<b>{mech}</b> · {label}<br>ε = %{{x:g}}<br>recovered %{{y:.3f}}<extra></extra>"
                err = None
                if hollow:
                    err = {
                        "type": "data", "symmetric": False, "color": color, "thickness": 1.5,
                        "array": [r[f"{key}, high"] - r[key] for r in have],
                        "arrayminus": [r[key] - r[f"{key}, low"] for r in have],
                    }  # fmt: skip
                fig.add_trace(
                    go.Scatter(
                        x=[r["epsilon"] for r in have], y=[r[key] for r in have], mode="lines+markers",
                        error_y=err,
                        marker={"symbol": symbol, "size": 10, "color": color,
                                "line": {"width": 2, "color": color}},
                        line={"color": color, "dash": "dot" if hollow else style.dash, "width": 1.5},
                        name=f"{mech} · {label}", legendgroup=label, showlegend=False,
                        hovertemplate=hover,
                    ),
                    **cell,
                )  # fmt: skip
                if legend(label):  # one neutral legend entry per attacker, not per panel
                    fig.add_trace(
                        go.Scatter(
                            x=[None], y=[None], mode="markers", name=label, legendgroup=label,
                            marker={"symbol": symbol, "size": 10, "color": ATTACKER_INK},
                        ),
                        **cell,
                    )  # fmt: skip
    fig.update_xaxes(type="log", title_text="ε (each mechanism's own)")
    fig.update_yaxes(range=[-0.03, 1.03], zeroline=False)
    fig.update_yaxes(title_text="share of original words recovered", col=1)
    fig.update_layout(
        title={
            "text": "LLM reconstruction beside the other attackers and the claim's one-word ceiling"
            "<br><sup>the ceiling bounds an attacker that sees one sanitized word; the LLM reads the "
            "whole sentence</sup>",
            "x": 0,
            "xanchor": "left",
        },
        legend={"orientation": "h", "yanchor": "top", "y": -0.12},
        height=180 + 300 * max(1, len(mechs)),
        margin={"t": 110, "l": 70, "r": 30, "b": 110},
    )
    return fig
