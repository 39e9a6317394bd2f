"""Privacy–utility figures: defense rate against accuracy (Yue et al. 2021, Fig. 4) and both
against ε.

Inputs are tidy tables:

- attack rows: ``mechanism``, ``attack``, ``epsilon``, ``defense_rate``, ``ci_low``, ``ci_high``
  and ``attacker_top1_unsanitized`` (from :func:`dpcore.attack.experiment.attack_sweep`);
- utility rows: ``mechanism``, ``epsilon``, ``accuracy``, ``ci_low``, ``ci_high`` (from
  :func:`dpcore.attack.utility.utility_sweep`), and the baselines ``accuracy_unsanitized`` and
  ``accuracy_random``.

In the trade-off figure each (mechanism, attack) is one curve of points labelled by ε, and its
ε = ∞ end (unsanitized accuracy, 1 − the attacker's top-1 on unsanitized text) is drawn as a
hollow circle labelled ∞, as in Fig. 4, named "unsanitized (ε = ∞)", with the attacker's marker
inside. The ε figure draws the same ceiling as a dotted line per attacker, the attacker's marker
at its ends: a defense rate near it means the attacker fails even on unsanitized text (a weak
attacker), not that the sanitizer hides much.

Both figures also draw **the claim's floor** where it is given (:mod:`dpcore.attack.ceiling`):
1 − the most any attacker who sees only the sanitized word can win if the mechanism's privacy
claim holds, one black dashed line per mechanism (black is a claim's colour on every chart,
:data:`dpcore.viz.palette.CLAIM`; the legend and the hover name the mechanism).
The ε figure draws it over a dense ε grid (``claim_curves``); the trade-off figure joins its
values at the measured ε (rows' ``claim_defense_floor``), where the accuracy is known, with a tick
at each. A Bayesian defense rate below it says the claim does not hold. The defense-rate axes
start below 0 and draw no zero line, so a floor at 0 (a claim that lets an attacker name every
word) is a visible line above the bottom of the plot, not hidden in the axis.

**Colour is the mechanism** (:func:`dpcore.viz.palette.colour` of its name: SanText is the same
blue here as on every other page); **the attacker is its marker and dash**
(:func:`dpcore.viz.palette.attacker_style`: the same on every chart), never a colour. What belongs
to an attacker alone, whatever the mechanism (its ε = ∞ point and ceiling), is drawn in the neutral
:data:`dpcore.viz.palette.ATTACKER_INK`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from dpcore.formatting import epsilon_text, percent
from dpcore.viz.axes import log_axis
from dpcore.viz.palette import ATTACKER_INK, CLAIM, SOFT_INK, attacker_style, colour, unsanitized_marker

__all__ = ["ATTACK_LABELS", "CLAIM_FLOOR", "UNSANITIZED", "epsilon_figure", "tradeoff_figure"]

ATTACK_LABELS = {
    "mlm": "masked-LM attacker",
    "bayes-unigram": "Bayesian attacker (word frequencies)",
    "bayes-mlm": "Bayesian attacker (masked-LM prior)",
}
#: Share of the axis ranges within which a second ε label would collide with a first one.
_LABEL_DX, _LABEL_DY = 0.07, 0.07
#: The name of the attacker's ceiling: its defense rate on unsanitized text (ε = ∞).
UNSANITIZED = "unsanitized (ε = ∞)"
#: The name of the claim's floor: 1 − the claim's ceiling on any word-only attacker's success.
CLAIM_FLOOR = "the claim's floor"
#: The lowest defense rate the axes show: room under 0, so a line at 0 is not in the axis.
_Y_LOW = -0.09
#: The accuracy panel's marker (accuracy does not depend on the attacker): no attacker's marker.
_ACCURACY_SYMBOL = "hexagon"


def _floor_trace(mech: str, x: Any, y: Any, eps: Any, *, ticks: bool = False) -> go.Scatter:
    """The claim's floor of one mechanism: black (a claim's colour) and dashed, with the mechanism
    and ε in the hover; ``ticks`` marks each point (the trade-off figure's measured ε) so a floor
    stays visible where it runs along another line."""
    name = f"{CLAIM_FLOOR}, {mech}"
    return go.Scatter(
        x=list(x), y=list(y), mode="lines+markers" if ticks else "lines", name=name, legendgroup=name,
        line={"color": CLAIM, "dash": "dash", "width": 2.5},
        marker={"symbol": "line-ew-open", "size": 18, "color": CLAIM, "line": {"width": 3, "color": CLAIM}},
        customdata=[[float(e)] for e in eps],
        hovertemplate=(f"{name}<br>ε = %{{customdata[0]:.3g}}<br>no attacker seeing only the "
                       "sanitized word goes below %{y:.3f} if the claim holds<extra></extra>"),
    )  # fmt: skip


def tradeoff_figure(
    attack: pd.DataFrame, utility: pd.DataFrame, baselines: dict[str, Any], *, height: int = 440
) -> go.Figure:
    """Defense rate (y) against accuracy (x), points labelled by ε (Fig. 4 of the paper).

    Colour: the mechanism (:func:`dpcore.viz.palette.colour` of its name); marker and dash: the
    attacker (:func:`dpcore.viz.palette.attacker_style`); black: the claim's floor. Each attacker's
    ε = ∞ end (a hollow circle in :data:`~dpcore.viz.palette.ATTACKER_INK` with the attacker's marker
    inside, labelled ε=∞) keeps its name but no legend entry of its own, so the legend lists the
    curves and the floors only.

    Parameters
    ----------
    attack, utility
        Tidy rows (module docstring).
    baselines
        ``accuracy_unsanitized`` (for the ε = ∞ points) and ``accuracy_random``.
    height
        The figure's height in px (the page fits it on a 1280×720 first screen).
    """
    fig = go.Figure()
    merged = attack.merge(
        utility[["mechanism", "epsilon", "accuracy"]], on=["mechanism", "epsilon"], how="inner"
    )
    keys = list(dict.fromkeys(zip(merged["mechanism"], merged["attack"], strict=True)))
    attacks = list(dict.fromkeys(merged["attack"]))
    acc_inf = baselines.get("accuracy_unsanitized")
    xs = list(merged["accuracy"]) + ([acc_inf] if acc_inf is not None else [])
    if baselines.get("accuracy_random") is not None:
        xs.append(float(baselines["accuracy_random"]))
    x_span = (max(xs) - min(xs)) if xs else 1.0
    x_span = x_span or 1.0
    y_span = 1.18
    placed: list[tuple[float, float]] = []

    def free(x: float, y: float) -> bool:
        """True if a label at (x, y) is clear of every label placed so far (then place it)."""
        if any(abs(x - px) < _LABEL_DX * x_span and abs(y - py) < _LABEL_DY * y_span for px, py in placed):
            return False
        placed.append((x, y))
        return True

    # the claim's floor at the measured ε (rows of the word-only Bayesian attacker carry it),
    # drawn first: the measured points lie over it where they meet
    if "claim_defense_floor" in merged and len(merged):
        fl = merged.dropna(subset=["claim_defense_floor"])
        for mech in dict.fromkeys(fl["mechanism"]):
            g = fl[fl["mechanism"] == mech].drop_duplicates("epsilon").sort_values("epsilon")
            fig.add_trace(
                _floor_trace(str(mech), g["accuracy"], g["claim_defense_floor"], g["epsilon"], ticks=True)
            )
    for mech, atk in keys:
        g = merged[(merged["mechanism"] == mech) & (merged["attack"] == atk)].sort_values("epsilon")
        color, style = colour(str(mech)), attacker_style(str(atk))
        name = f"{mech}, {ATTACK_LABELS.get(atk, atk)}"
        # ε labels only where they do not collide with another (hover shows every ε).
        labels = [
            f"ε={epsilon_text(e)}" if free(float(x), float(y)) else ""
            for e, x, y in zip(g["epsilon"], g["accuracy"], g["defense_rate"], strict=True)
        ]
        fig.add_trace(
            go.Scatter(
                x=g["accuracy"], y=g["defense_rate"], mode="lines+markers+text", name=name,
                text=labels, textposition="top right", cliponaxis=False, textfont={"color": color},
                hovertext=[f"{name}<br>ε={epsilon_text(e)}" for e in g["epsilon"]], hoverinfo="text+x+y",
                line={"color": color, "dash": style.dash, "width": 2.5},
                marker={"color": color, "symbol": style.symbol, "size": 9}, legendgroup=name,
                error_y={"type": "data", "symmetric": False,
                         "array": g["ci_high"] - g["defense_rate"],
                         "arrayminus": g["defense_rate"] - g["ci_low"], "thickness": 1.5},
            )
        )  # fmt: skip
    # ε = ∞ (unsanitized text) does not depend on the mechanism: one hollow circle per attacker, in
    # the attackers' neutral ink with the attacker's marker inside, drawn last and unclipped so no
    # curve hides it.
    if acc_inf is not None and "attacker_top1_unsanitized" in merged and len(merged):
        for atk in attacks:
            g = merged[merged["attack"] == atk]
            top1 = float(g["attacker_top1_unsanitized"].iloc[0])
            y_inf = 1.0 - top1
            name = f"{UNSANITIZED}, {ATTACK_LABELS.get(atk, atk)}"
            fig.add_trace(
                go.Scatter(
                    x=[acc_inf, acc_inf], y=[y_inf, y_inf], mode="markers+text", showlegend=False,
                    text=["ε=∞" if free(float(acc_inf), y_inf) else "", ""], textposition="bottom left",
                    textfont={"color": ATTACKER_INK},
                    marker=unsanitized_marker(str(atk)),
                    cliponaxis=False, name=name,
                    hovertemplate=(f"{name}<br>accuracy %{{x:.3f}}<br>defense rate %{{y:.3f}}: the attacker "
                                   f"names {percent(top1)} of the original words<extra></extra>"),
                )
            )  # fmt: skip
    if baselines.get("accuracy_random") is not None:
        # the line's label sits above the plot, at the line: clear of every point and ε label
        fig.add_vline(x=baselines["accuracy_random"], line={"color": SOFT_INK, "dash": "dot"})
        fig.add_annotation(
            x=baselines["accuracy_random"], y=1.0, xref="x", yref="paper", xanchor="left", yanchor="bottom",
            text="random replacement", showarrow=False, font={"color": SOFT_INK},
        )  # fmt: skip
    fig.update_layout(
        xaxis={
            "title": "accuracy on sanitized test text (right: more useful)",
            # room right of ε = ∞ for its marker
            **({"range": [min(xs) - 0.04 * x_span, max(xs) + 0.05 * x_span]} if xs else {}),
        },
        yaxis={
            "title": "defense rate (up: more private)",
            "range": [_Y_LOW, 1.1],
            "zeroline": False,
            "tickvals": [0, 0.25, 0.5, 0.75, 1],
        },
        legend={"orientation": "h", "y": -0.2, "yanchor": "top", "x": 0, "xanchor": "left"},
        margin={"t": 32, "b": 10, "l": 70, "r": 30},
        height=height,
    )
    return fig


def _eps_axis(title: str, values: Sequence[float], measured: Sequence[float]) -> dict[str, Any]:
    """A log ε axis labelled at the decades, or at the measured ε when fewer than two decades
    fall inside the data (the paper's ε = 12, 14, 16 would otherwise get no label at all)."""
    axis = log_axis(title, values)
    vals = [float(v) for v in values if v is not None and float(v) > 0]
    inside = [t for t in axis.get("tickvals", []) if vals and min(vals) <= t <= max(vals)]
    if len(inside) < 2 and measured:
        axis.update(tickvals=list(measured), ticktext=[epsilon_text(e) for e in measured])
    return axis


def epsilon_figure(
    attack: pd.DataFrame,
    utility: pd.DataFrame,
    baselines: dict[str, Any],
    claim_curves: Sequence[dict[str, Any]] = (),
) -> go.Figure:
    """Defense rate (top) and accuracy (bottom) against ε, with Clopper–Pearson error bars.

    The unsanitized and random-replacement accuracies are horizontal lines. ``claim_curves``
    (:func:`dpcore.attack.ceiling.claim_ceiling_curve`, one per mechanism, over a dense ε grid)
    are drawn as the claim's floor, black and dashed, in the top panel. As in
    :func:`tradeoff_figure`, colour is the mechanism (:func:`dpcore.viz.palette.colour`) and marker
    and dash are the attacker (:func:`dpcore.viz.palette.attacker_style`); each attacker's ε = ∞
    line is dotted, in :data:`~dpcore.viz.palette.ATTACKER_INK` with the attacker's marker at both
    ends, and labelled "ε = ∞" at the right edge instead of a legend entry. The accuracy panel has
    one line per mechanism in its colour (accuracy does not depend on the attacker).
    """
    fig = make_subplots(rows=2, cols=1, shared_xaxes=True, vertical_spacing=0.08)
    attacks = list(dict.fromkeys(attack["attack"])) if len(attack) else []
    groups = attack.groupby(["mechanism", "attack"], sort=False) if len(attack) else []
    for (mech, atk), g in groups:
        g = g.sort_values("epsilon")
        style = attacker_style(str(atk))
        fig.add_trace(
            go.Scatter(
                x=g["epsilon"], y=g["defense_rate"], mode="lines+markers",
                name=f"defense rate, {mech}, {ATTACK_LABELS.get(atk, atk)}",
                line={"color": colour(str(mech)), "dash": style.dash},
                marker={"color": colour(str(mech)), "symbol": style.symbol, "size": 8},
                error_y={"type": "data", "symmetric": False,
                         "array": g["ci_high"] - g["defense_rate"],
                         "arrayminus": g["defense_rate"] - g["ci_low"], "thickness": 1.5},
            ),
            row=1, col=1,
        )  # fmt: skip
    # The attacker's ceiling: 1 − its top-1 on unsanitized text (ε = ∞), one dotted line per
    # attacker across the ε range; a defense rate near it means the attacker fails even there.
    if len(attack) and "attacker_top1_unsanitized" in attack:
        e_lo, e_hi = float(attack["epsilon"].min()), float(attack["epsilon"].max())
        ceilings: list[float] = []
        for atk in attacks:
            top1 = attack.loc[attack["attack"] == atk, "attacker_top1_unsanitized"].dropna()
            if not len(top1):
                continue
            y_inf = 1.0 - float(top1.iloc[0])
            label = f"{UNSANITIZED}, {ATTACK_LABELS.get(atk, atk)}"
            fig.add_trace(
                go.Scatter(
                    x=[e_lo, e_hi], y=[y_inf, y_inf], mode="lines+markers", name=label, showlegend=False,
                    line={"color": ATTACKER_INK, "dash": "dot", "width": 2},
                    marker={"color": ATTACKER_INK, "symbol": attacker_style(str(atk)).symbol, "size": 8},
                    hovertemplate=f"{label}<br>defense rate {y_inf:.3f}<extra></extra>",
                ),
                row=1, col=1,
            )  # fmt: skip
            if all(abs(y_inf - y) > 0.06 for y in ceilings):  # one "ε = ∞" label per height
                ceilings.append(y_inf)
                fig.add_annotation(
                    x=1.0, xref="paper", xanchor="left", y=y_inf, yref="y", showarrow=False,
                    text="ε = ∞", font={"color": ATTACKER_INK, "size": 14},
                )  # fmt: skip
    for curve in claim_curves:
        fig.add_trace(
            _floor_trace(str(curve["mechanism"]), curve["epsilon"], curve["defense_floor"], curve["epsilon"]),
            row=1,
            col=1,
        )
    groups_u = utility.groupby("mechanism", sort=False) if len(utility) else []
    for i, (mech, g) in enumerate(groups_u):
        g = g.sort_values("epsilon")
        fig.add_trace(
            go.Scatter(
                x=g["epsilon"], y=g["accuracy"], mode="lines+markers", name=f"accuracy, {mech}",
                line={"color": colour(str(mech))},
                marker={"symbol": _ACCURACY_SYMBOL, "color": colour(str(mech))}, legendgroup=f"acc{i}",
                error_y={"type": "data", "symmetric": False, "array": g["ci_high"] - g["accuracy"],
                         "arrayminus": g["accuracy"] - g["ci_low"], "thickness": 1},
            ),
            row=2, col=1,
        )  # fmt: skip
    for key, label, dash in (
        ("accuracy_unsanitized", "unsanitized", "dash"),
        ("accuracy_random", "random replacement", "dot"),
    ):
        if baselines.get(key) is not None:
            fig.add_hline(
                y=baselines[key],
                line={"color": SOFT_INK, "dash": dash, "width": 1},
                annotation_text=label,
                annotation_position="top right",
                annotation_font={"color": SOFT_INK},
                row=2,
                col=1,
            )
    eps_values = (list(utility["epsilon"]) if len(utility) else []) + (
        list(attack["epsilon"]) if len(attack) else []
    )
    measured = sorted({float(e) for e in eps_values})
    eps_values += [e for c in claim_curves for e in (c["epsilon"][0], c["epsilon"][-1]) if c["epsilon"]]
    for row, title in ((2, "ε"), (1, "")):
        fig.update_xaxes(**_eps_axis(title, eps_values, measured), row=row, col=1)
    fig.update_yaxes(title_text="defense rate", range=[_Y_LOW, 1.06], zeroline=False, row=1, col=1)
    fig.update_yaxes(title_text="accuracy", row=2, col=1)
    fig.update_layout(
        legend={"orientation": "h", "y": -0.12, "yanchor": "top"}, margin={"t": 30, "r": 60}, height=640
    )
    return fig
