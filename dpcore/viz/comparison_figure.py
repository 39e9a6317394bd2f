"""The mechanism comparison chart: defense rate against accuracy, every mechanism at every ε
(:func:`dpcore.attack.comparison.compare_mechanisms`).

One colour per mechanism, one marker per attacker (filled circle: Bayesian; open diamond:
masked LM), points labelled by ε. ε-LDP mechanisms are drawn with dashed lines and metric
mechanisms (ε per unit of distance) with solid ones, and the legend says which scale each ε is
on: equal ε does not mean equal privacy across the two groups.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import plotly.graph_objects as go

__all__ = ["comparison_figure", "comparison_table"]

_PALETTE = (
    "#3b6ea5", "#c0504d", "#4e9a59", "#8064a2", "#d68a1a", "#2f9fa8",
    "#7f7f7f", "#b5487f", "#8c6d31", "#17becf", "#393b79", "#637939",
)  # fmt: skip
_ATTACKS = (
    ("defense_bayes", "Bayesian attacker", "circle"),
    ("defense_mlm", "masked-LM attacker", "diamond-open"),
)


def comparison_figure(rows: Sequence[dict[str, Any]]) -> go.Figure:
    """Defense rate (y) against accuracy (x) for every (mechanism, attacker), labelled by ε."""
    fig = go.Figure()
    mechs = list(dict.fromkeys(r["mechanism"] for r in rows))
    for i, mech in enumerate(mechs):
        mine = sorted((r for r in rows if r["mechanism"] == mech), key=lambda r: r["epsilon"])
        ldp = mine[0]["notion"] == "LDP"
        scale = "ε-LDP" if ldp else "ε·d, per unit of distance"
        color = _PALETTE[i % len(_PALETTE)]
        refuted = "; claim refuted" if any(r.get("claim_refuted") for r in mine) else ""
        for key, label, symbol in _ATTACKS:
            pts = [r for r in mine if r.get(key) is not None and r.get("accuracy") is not None]
            if not pts:
                continue
            fig.add_trace(
                go.Scatter(
                    x=[r["accuracy"] for r in pts],
                    y=[r[key] for r in pts],
                    mode="lines+markers+text",
                    text=[f"ε={r['epsilon']:g}" for r in pts],
                    textposition="top center",
                    textfont={"size": 12, "color": color},
                    marker={
                        "symbol": symbol,
                        "size": 11,
                        "color": color,
                        "line": {"width": 2, "color": color},
                    },
                    line={"color": color, "dash": "dash" if ldp else "solid", "width": 1.5},
                    name=f"{mech} ({scale}{refuted}) · {label}",
                    legendgroup=mech,
                    customdata=[[r["epsilon"], r["notion"]] for r in pts],
                    hovertemplate=(
                        f"<b>{mech}</b> · {label}<br>ε = %{{customdata[0]}} ({scale})"
                        "<br>accuracy %{x:.3f}<br>defense rate %{y:.3f}<extra></extra>"
                    ),
                )
            )
    fig.update_layout(
        title="Privacy–utility of every text mechanism (same sentences, same split)",
        xaxis_title="accuracy on sanitized text (TF-IDF + logistic regression)",
        yaxis_title="defense rate (share of words the attacker gets wrong)",
        font={"size": 14},
        legend={"font": {"size": 12}},
        height=620,
        margin={"t": 60, "l": 70, "r": 20, "b": 60},
        annotations=[
            {
                "text": "dashed: ε-LDP (any two words) · solid: ε per unit of embedding distance — "
                "equal ε is not equal privacy across the two",
                "xref": "paper",
                "yref": "paper",
                "x": 0,
                "y": -0.14,
                "showarrow": False,
                "font": {"size": 12},
            }
        ],
    )
    fig.update_yaxes(range=[-0.02, 1.05])
    return fig


def _note(r: dict[str, Any]) -> str:
    parts = ("claim refuted" if r.get("claim_refuted") else "", r.get("note", ""))
    return "; ".join(x for x in parts if x)


def comparison_table(rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Rows with human column names (for tables and CSV)."""

    def pct(v: Any) -> Any:
        return None if v is None else round(100 * float(v), 1)

    return [
        {
            "mechanism": r["mechanism"],
            "ε": r["epsilon"],
            "ε scale": "ε-LDP" if r["notion"] == "LDP" else "ε·d",
            "guarantee": r["notion"],
            "defense rate, Bayesian (%)": pct(r["defense_bayes"]),
            "defense rate, masked LM (%)": pct(r["defense_mlm"]),
            "accuracy (%)": pct(r["accuracy"]),
            "note": _note(r),
        }
        for r in rows
    ]
