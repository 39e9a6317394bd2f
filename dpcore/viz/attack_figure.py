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
hollow marker labelled ∞, as in Fig. 4, named "unsanitized (ε = ∞)". The ε figure draws the same
ceiling as a dotted line per attacker: a defense rate near it means the attacker fails even on
unsanitized text (a weak attacker), not that the sanitizer hides much.

Both figures also draw **the claim's floor** where it is given (:mod:`dpcore.attack.ceiling`):
1 − the most any attacker who sees only the sanitized word can win if the mechanism's privacy
claim holds, one dashed line per mechanism. The ε figure draws it over a dense ε grid
(``claim_curves``); the trade-off figure joins its values at the measured ε (rows'
``claim_defense_floor``), where the accuracy is known. A Bayesian defense rate below it says the
claim does not hold.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from dpcore.viz.axes import log_axis

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
_PALETTE = ("#3b6ea5", "#c0504d", "#4e9a59", "#8064a2", "#d68a1a", "#2f9fa8")
#: The name of the claim's floor: 1 − the claim's ceiling on any word-only attacker's success.
CLAIM_FLOOR = "the claim's floor"
#: One colour per mechanism for the claim's floor (dashed), apart from the attackers' colours.
_FLOOR_COLORS = ("#222222", "#8c6d31", "#7b4173", "#637939", "#843c39", "#5254a3")
_DASHES = ("solid", "dash", "dot", "dashdot", "longdash", "longdashdot")
#: The paper's mechanisms keep their styles; every other mechanism gets the next free one.
_DASH_FIXED = {"santext": "solid", "santext+": "dash", "random": "dot", "feyisetan": "dashdot"}


class _DashMap(dict):
    """Line dash per mechanism: fixed for the paper's four, then in order of first use."""

    def get(self, mech: object, default: str = "solid") -> str:  # type: ignore[override]
        key = str(mech)
        if key in _DASH_FIXED:
            return _DASH_FIXED[key]
        if key not in self:
            free = [d for d in _DASHES[4:] if d not in self.values()]
            self[key] = free[0] if free else _DASHES[len(self) % len(_DASHES)]
        return self[key]


_DASH = _DashMap()


def _color(i: int) -> str:
    return _PALETTE[i % len(_PALETTE)]


def _floor_trace(mech: str, i: int, x: Any, y: Any, eps: Any, *, showlegend: bool = True) -> go.Scatter:
    """The claim's floor of one mechanism: dashed, with ε in the hover."""
    name = f"{CLAIM_FLOOR}, {mech}"
    return go.Scatter(
        x=list(x), y=list(y), mode="lines", name=name, legendgroup=name, showlegend=showlegend,
        line={"color": _FLOOR_COLORS[i % len(_FLOOR_COLORS)], "dash": "dash", "width": 2},
        customdata=[[float(e)] for e in eps],
        hovertemplate=(f"{name}<br>ε = %{{customdata[0]:.3g}}<br>no attacker seeing only the "
                       "sanitized word goes below %{y:.3f} if the claim holds<extra></extra>"),
    )  # fmt: skip


def tradeoff_figure(attack: pd.DataFrame, utility: pd.DataFrame, baselines: dict[str, Any]) -> go.Figure:
    """Defense rate (y) against accuracy (x), points labelled by ε (Fig. 4 of the paper).

    Parameters
    ----------
    attack, utility
        Tidy rows (module docstring).
    baselines
        ``accuracy_unsanitized`` (for the ε = ∞ points) and ``accuracy_random``.
    """
    fig = go.Figure()
    merged = attack.merge(
        utility[["mechanism", "epsilon", "accuracy"]], on=["mechanism", "epsilon"], how="inner"
    )
    keys = list(dict.fromkeys(zip(merged["mechanism"], merged["attack"], strict=True)))
    attacks = list(dict.fromkeys(merged["attack"]))
    acc_inf = baselines.get("accuracy_unsanitized")
    xs = list(merged["accuracy"]) + ([acc_inf] if acc_inf is not None else [])
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

    for mech, atk in keys:
        g = merged[(merged["mechanism"] == mech) & (merged["attack"] == atk)].sort_values("epsilon")
        color = _color(attacks.index(atk))
        name = f"{mech}, {ATTACK_LABELS.get(atk, atk)}"
        # ε labels only where they do not collide with another (hover shows every ε).
        labels = [
            f"ε={e:g}" if free(float(x), float(y)) else ""
            for e, x, y in zip(g["epsilon"], g["accuracy"], g["defense_rate"], strict=True)
        ]
        fig.add_trace(
            go.Scatter(
                x=g["accuracy"], y=g["defense_rate"], mode="lines+markers+text", name=name,
                text=labels, textposition="top right", cliponaxis=False,
                hovertext=[f"{name}<br>ε={e:g}" for e in g["epsilon"]], hoverinfo="text+x+y",
                line={"color": color, "dash": _DASH.get(mech, "solid")}, legendgroup=name,
                error_y={"type": "data", "symmetric": False,
                         "array": g["ci_high"] - g["defense_rate"],
                         "arrayminus": g["defense_rate"] - g["ci_low"], "thickness": 1},
            )
        )  # fmt: skip
    # the claim's floor at the measured ε (rows of the word-only Bayesian attacker carry it)
    if "claim_defense_floor" in merged and len(merged):
        fl = merged.dropna(subset=["claim_defense_floor"])
        for i, mech in enumerate(dict.fromkeys(fl["mechanism"])):
            g = fl[fl["mechanism"] == mech].drop_duplicates("epsilon").sort_values("epsilon")
            fig.add_trace(_floor_trace(str(mech), i, g["accuracy"], g["claim_defense_floor"], g["epsilon"]))
    # ε = ∞ (unsanitized text) does not depend on the mechanism: one marker per attacker, in
    # the legend, drawn last and unclipped so no curve hides it.
    if acc_inf is not None and "attacker_top1_unsanitized" in merged and len(merged):
        for atk in attacks:
            g = merged[merged["attack"] == atk]
            top1 = float(g["attacker_top1_unsanitized"].iloc[0])
            y_inf = 1.0 - top1
            fig.add_trace(
                go.Scatter(
                    x=[acc_inf], y=[y_inf], mode="markers+text",
                    text=["ε=∞" if free(float(acc_inf), y_inf) else ""], textposition="bottom left",
                    marker={"color": _color(attacks.index(atk)), "symbol": "circle-open", "size": 14,
                            "line": {"width": 3}},
                    cliponaxis=False, name=f"{UNSANITIZED}, {ATTACK_LABELS.get(atk, atk)}",
                )
            )  # fmt: skip
    if baselines.get("accuracy_random") is not None:
        fig.add_vline(
            x=baselines["accuracy_random"],
            line={"color": "#999", "dash": "dot"},
            annotation_text="random replacement",
            annotation_position="bottom right",
        )
    fig.update_layout(
        xaxis={"title": "accuracy on sanitized test text"},
        yaxis={"title": "defense rate (1 − attacker top-1)", "range": [-0.1, 1.08]},
        legend={"orientation": "h", "y": -0.22},
        margin={"t": 30},
        height=500,
    )
    return fig


def epsilon_figure(
    attack: pd.DataFrame,
    utility: pd.DataFrame,
    baselines: dict[str, Any],
    claim_curves: Sequence[dict[str, Any]] = (),
) -> go.Figure:
    """Defense rate (top) and accuracy (bottom) against ε, with Clopper–Pearson error bars.

    The unsanitized and random-replacement accuracies are horizontal lines. ``claim_curves``
    (:func:`dpcore.attack.ceiling.claim_ceiling_curve`, one per mechanism, over a dense ε grid)
    are drawn as the claim's floor, dashed, in the top panel.
    """
    fig = make_subplots(rows=2, cols=1, shared_xaxes=True, vertical_spacing=0.08)
    attacks = list(dict.fromkeys(attack["attack"])) if len(attack) else []
    groups = attack.groupby(["mechanism", "attack"], sort=False) if len(attack) else []
    for (mech, atk), g in groups:
        g = g.sort_values("epsilon")
        fig.add_trace(
            go.Scatter(
                x=g["epsilon"], y=g["defense_rate"], mode="lines+markers",
                name=f"defense rate, {mech}, {ATTACK_LABELS.get(atk, atk)}",
                line={"color": _color(attacks.index(atk)), "dash": _DASH.get(mech, "solid")},
                error_y={"type": "data", "symmetric": False,
                         "array": g["ci_high"] - g["defense_rate"],
                         "arrayminus": g["defense_rate"] - g["ci_low"], "thickness": 1},
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
                    x=[e_lo, e_hi], y=[y_inf, y_inf], mode="lines", name=label,
                    line={"color": _color(attacks.index(atk)), "dash": "dot", "width": 2},
                    hovertemplate=f"{label}<br>defense rate {y_inf:.3f}<extra></extra>",
                ),
                row=1, col=1,
            )  # fmt: skip
            if all(abs(y_inf - y) > 0.06 for y in ceilings):  # one "ε = ∞" label per height
                ceilings.append(y_inf)
                fig.add_annotation(
                    x=1.0, xref="paper", xanchor="left", y=y_inf, yref="y", showarrow=False,
                    text="ε = ∞", font={"color": _color(attacks.index(atk)), "size": 13},
                )  # fmt: skip
    for i, curve in enumerate(claim_curves):
        fig.add_trace(
            _floor_trace(
                str(curve["mechanism"]), i, curve["epsilon"], curve["defense_floor"], curve["epsilon"]
            ),
            row=1,
            col=1,
        )
    groups_u = utility.groupby("mechanism", sort=False) if len(utility) else []
    for i, (mech, g) in enumerate(groups_u):
        g = g.sort_values("epsilon")
        fig.add_trace(
            go.Scatter(
                x=g["epsilon"], y=g["accuracy"], mode="lines+markers", name=f"accuracy, {mech}",
                line={"color": "#333", "dash": _DASH.get(str(mech), "solid")},
                marker={"symbol": "square"}, legendgroup=f"acc{i}",
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
                line={"color": "#999", "dash": dash},
                annotation_text=label,
                annotation_position="top left",
                row=2,
                col=1,
            )
    eps_values = (list(utility["epsilon"]) if len(utility) else []) + (
        list(attack["epsilon"]) if len(attack) else []
    )
    eps_values += [e for c in claim_curves for e in (c["epsilon"][0], c["epsilon"][-1]) if c["epsilon"]]
    fig.update_xaxes(**log_axis("ε", eps_values), row=2, col=1)
    fig.update_xaxes(**log_axis("", eps_values), row=1, col=1)
    fig.update_yaxes(title_text="defense rate", range=[-0.02, 1.05], row=1, col=1)
    fig.update_yaxes(title_text="accuracy", row=2, col=1)
    fig.update_layout(legend={"orientation": "h", "y": -0.15}, margin={"t": 30, "r": 60}, height=640)
    return fig
