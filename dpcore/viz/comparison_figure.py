"""The mechanism comparison chart: defense rate against accuracy, every mechanism at every ε
(:func:`dpcore.attack.comparison.compare_mechanisms`), as small multiples.

One panel per mechanism (its title names its ε scale), the same axes in every panel, and in each
panel one series per attacker, in the panel's mechanism's colour (:func:`dpcore.viz.palette.colour`,
as on every chart: colour is the mechanism, never the attacker). The attackers are told apart by
their markers (:func:`dpcore.viz.palette.attacker_style`, as on the page's other charts: the
Bayesian attacker's circles, the masked-LM attacker's diamonds), and each has one legend entry in
the neutral :data:`dpcore.viz.palette.ATTACKER_INK`. The line's dash here is the ε scale, not the
attacker: ε-LDP mechanisms are drawn with dashed lines and metric mechanisms (ε per unit of
distance) with solid ones: equal ε does not mean equal privacy across the two groups. Points carry
ε labels only where they do not collide with another label of the panel (hover shows every ε).
Where the rows carry it, the attacker's ceiling (its top-1 on unsanitized text, at the unsanitized
accuracy) is the hollow circle "unsanitized (ε = ∞)" with the attacker's marker inside. Where the
rows carry ``claim_defense_floor`` (:mod:`dpcore.attack.ceiling`), each panel also draws the
claim's floor, black and dashed, through its values at the measured ε (the accuracy is known only
there): 1 − the most any attacker who sees only the sanitized word can win if the claim holds.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from dpcore.formatting import epsilon_text, percent_value
from dpcore.viz.palette import ATTACKER_INK, CLAIM, MIN_FONT_PX, attacker_style, colour, unsanitized_marker

__all__ = ["DEFAULT_SHOWN", "comparison_figure", "comparison_table"]

#: Mechanisms shown by default (three panels, two series each: at most 6 series).
DEFAULT_SHOWN = ("santext", "santext+", "random")
#: Panels per row.
_COLS = 3
_UNSANITIZED = "unsanitized (ε = ∞)"
#: (row key, ceiling key, label, attacker): each attacker's marker in every panel is its own
#: (:func:`dpcore.viz.palette.attacker_style`; the comparison's Bayesian attacker is the
#: word-frequency one, ``bayes-unigram``).
_ATTACKS = (
    ("defense_bayes", "attacker_top1_unsanitized_bayes", "Bayesian attacker", "bayes-unigram"),
    ("defense_mlm", "attacker_top1_unsanitized_mlm", "masked-LM attacker", "mlm"),
)
#: The claim's floor: its name and colour (a claim's colour; dashed in every panel).
_FLOOR, _FLOOR_COLOR = "the claim's floor", CLAIM
#: Share of a panel's axis ranges within which a second ε label would collide with a first.
_LABEL_DX, _LABEL_DY = 0.12, 0.09


def _eps_text(e: float) -> str:
    return "ε=∞" if math.isinf(e) else f"ε={epsilon_text(e)}"


def comparison_figure(rows: Sequence[dict[str, Any]], mechanisms: Sequence[str] | None = None) -> go.Figure:
    """Defense rate (y) against accuracy (x), one panel per mechanism, labelled by ε.

    Parameters
    ----------
    rows
        :func:`dpcore.attack.comparison.compare_mechanisms` rows.
    mechanisms
        The mechanisms to draw, in this order (default: every mechanism of ``rows``).
    """
    present = list(dict.fromkeys(r["mechanism"] for r in rows))
    mechs = [m for m in (mechanisms if mechanisms is not None else present) if m in present]
    n_rows = max(1, math.ceil(len(mechs) / _COLS))
    n_cols = min(_COLS, max(1, len(mechs)))
    titles = []
    for mech in mechs:
        first = next(r for r in rows if r["mechanism"] == mech)
        scale = "ε-LDP" if first["notion"] == "LDP" else "ε·d + ε₀"
        refuted = (
            ", claim refuted" if any(r.get("claim_refuted") for r in rows if r["mechanism"] == mech) else ""
        )
        titles.append(f"<b>{mech}</b> ({scale}{refuted})")
    fig = make_subplots(
        rows=n_rows, cols=n_cols, subplot_titles=titles or None, shared_xaxes="all", shared_yaxes="all",
        horizontal_spacing=0.05, vertical_spacing=0.16 / max(n_rows, 1) + 0.04,
    )  # fmt: skip
    accs = [r["accuracy"] for r in rows if r.get("accuracy") is not None] + [
        r["accuracy_unsanitized"] for r in rows if r.get("accuracy_unsanitized") is not None
    ]
    x_span = (max(accs) - min(accs)) if accs else 1.0
    x_span = x_span or 1.0
    in_legend: set[str] = set()
    for i, mech in enumerate(mechs):
        row, col = i // _COLS + 1, i % _COLS + 1
        mine = sorted((r for r in rows if r["mechanism"] == mech), key=lambda r: r["epsilon"])
        ldp = mine[0]["notion"] == "LDP"
        scale = "ε-LDP" if ldp else "ε·d + ε₀, ε per unit of distance"
        refuted = "; claim refuted" if any(r.get("claim_refuted") for r in mine) else ""
        placed: list[tuple[float, float]] = []

        def free(x: float, y: float, placed: list[tuple[float, float]] = placed) -> bool:
            if any(abs(x - px) < _LABEL_DX * x_span and abs(y - py) < _LABEL_DY for px, py in placed):
                return False
            placed.append((x, y))
            return True

        floor = [
            r for r in mine if r.get("claim_defense_floor") is not None and r.get("accuracy") is not None
        ]
        if floor:
            fig.add_trace(
                go.Scatter(
                    x=[r["accuracy"] for r in floor], y=[r["claim_defense_floor"] for r in floor],
                    mode="lines+markers", marker={"symbol": "line-ew", "size": 12, "color": _FLOOR_COLOR,
                                                  "line": {"width": 2, "color": _FLOOR_COLOR}},
                    line={"color": _FLOOR_COLOR, "dash": "dash", "width": 2},
                    name=_FLOOR, legendgroup=_FLOOR, showlegend=_FLOOR not in in_legend,
                    customdata=[[r["epsilon"]] for r in floor],
                    hovertemplate=(f"<b>{mech}</b> · {_FLOOR} at ε = %{{customdata[0]:g}}<br>no attacker "
                                   "seeing only the sanitized word goes below %{y:.3f} if the claim "
                                   "holds<extra></extra>"),
                ),
                row=row, col=col,
            )  # fmt: skip
            in_legend.add(_FLOOR)
        color = colour(str(mech))
        for key, top_key, label, attacker in _ATTACKS:
            symbol = attacker_style(attacker).symbol
            pts = [r for r in mine if r.get(key) is not None and r.get("accuracy") is not None]
            if not pts:
                continue
            fig.add_trace(
                go.Scatter(
                    x=[r["accuracy"] for r in pts], y=[r[key] for r in pts], mode="lines+markers+text",
                    text=[_eps_text(r["epsilon"]) if free(r["accuracy"], r[key]) else "" for r in pts],
                    textposition="top center", textfont={"size": MIN_FONT_PX, "color": color},
                    marker={"symbol": symbol, "size": 10, "color": color,
                            "line": {"width": 2, "color": color}},
                    line={"color": color, "dash": "dash" if ldp else "solid", "width": 1.5},
                    name=f"{mech} ({scale}{refuted}) · {label}", legendgroup=label,
                    showlegend=False,
                    customdata=[[r["epsilon"]] for r in pts],
                    hovertemplate=(
                        f"<b>{mech}</b> · {label}<br>ε = %{{customdata[0]:g}} ({scale})"
                        "<br>accuracy %{x:.3f}<br>defense rate %{y:.3f}<extra></extra>"
                    ),
                ),
                row=row, col=col,
            )  # fmt: skip
            if label not in in_legend:  # one legend entry per attacker, not per panel
                in_legend.add(label)
                fig.add_trace(
                    go.Scatter(
                        x=[None], y=[None], mode="markers", name=label, legendgroup=label,
                        marker={"symbol": symbol, "size": 10, "color": ATTACKER_INK},
                    ),
                    row=row, col=col,
                )  # fmt: skip
            top1 = next((r.get(top_key) for r in pts if r.get(top_key) is not None), None)
            acc_inf = next(
                (r.get("accuracy_unsanitized") for r in pts if r.get("accuracy_unsanitized") is not None),
                None,
            )
            if top1 is None or acc_inf is None:
                continue
            y_inf = 1.0 - float(top1)
            name = f"{_UNSANITIZED}, {label}"
            fig.add_trace(
                go.Scatter(
                    x=[acc_inf, acc_inf], y=[y_inf, y_inf], mode="markers+text",
                    text=["ε=∞" if free(float(acc_inf), y_inf) else "", ""], textposition="bottom left",
                    textfont={"size": MIN_FONT_PX, "color": ATTACKER_INK}, cliponaxis=False,
                    marker=unsanitized_marker(attacker, size=14),
                    name=name, legendgroup=name, showlegend=name not in in_legend,
                    hovertemplate=(f"<b>{mech}</b> · {name}<br>accuracy %{{x:.3f}}"
                                   "<br>defense rate %{y:.3f}<extra></extra>"),
                ),
                row=row, col=col,
            )  # fmt: skip
            in_legend.add(name)
    fig.update_layout(
        title={
            "text": "Privacy–utility of each text mechanism (same sentences, same split)<br><sup>"
            "dashed: ε-LDP (any two words) · solid: ε per unit of embedding distance — equal ε is "
            "not equal privacy across the two</sup>",
            "x": 0,
            "xanchor": "left",
        },
        font={"size": 14},
        legend={
            "font": {"size": MIN_FONT_PX + 1},
            "orientation": "h",
            "yanchor": "top",
            "y": -0.05 - 0.1 / n_rows,
        },
        height=200 + 340 * n_rows,
        margin={"t": 110, "l": 70, "r": 30, "b": 90},
    )
    if accs:  # room for the ε = ∞ marker and its label at the right edge of each panel
        lo, hi = min(accs), max(accs)
        fig.update_xaxes(range=[lo - 0.06 * x_span, hi + 0.06 * x_span])
    fig.update_yaxes(range=[-0.08, 1.1], zeroline=False)  # a floor at 0 is a line, not the axis
    fig.update_yaxes(title_text="defense rate", col=1)
    fig.update_xaxes(title_text="accuracy", row=n_rows)
    return fig


def _note(r: dict[str, Any]) -> str:
    parts = ("claim refuted" if r.get("claim_refuted") else "", r.get("note", ""))
    return "; ".join(x for x in parts if x)


def comparison_table(rows: Sequence[dict[str, Any]], *, claim: bool = False) -> list[dict[str, Any]]:
    """Rows with human column names (for tables and CSV); ``claim=True`` adds the claim's floor
    and ceiling (:mod:`dpcore.attack.ceiling`; for downloads: the shown table fits a screen)."""

    def extra(r: dict[str, Any]) -> dict[str, Any]:
        if not claim:
            return {}
        return {
            "claim's floor (%)": percent_value(r.get("claim_defense_floor")),
            "claim's ceiling on success (%)": percent_value(r.get("claim_success_ceiling")),
            "claim note": r.get("claim_note", ""),
        }

    return [
        {
            "mechanism": r["mechanism"],
            "ε": r["epsilon"],
            # the ε scale and the guarantee it belongs to (one column: the table fits a screen)
            "ε scale": "ε-LDP" if r["notion"] == "LDP" else f"ε·d ({r['notion']})",
            "Bayesian defense (%)": percent_value(r["defense_bayes"]),
            "masked-LM defense (%)": percent_value(r["defense_mlm"]),
            "accuracy (%)": percent_value(r["accuracy"]),
            "masked-LM, ε = ∞ (%)": None
            if r.get("attacker_top1_unsanitized_mlm") is None
            else percent_value(1.0 - float(r["attacker_top1_unsanitized_mlm"])),
            "kept (%)": percent_value(r.get("kept_share")),
            "note": _note(r),
            **extra(r),
        }
        for r in rows
    ]
