"""What the "Rewriter calibration" page draws and writes, from a calibration's JSON record.

The record is what ``python -m dpcore calibrate-rewriters --save FILE`` writes
(:meth:`dpcore.rewriter.calibrate.CalibrationResult.to_dict` through
:func:`dpcore.jsonutil.dumps`, where ∞ is the string ``"inf"``), read back with
:func:`dpcore.rewriter.calibrate.load_shipped`. Nothing here computes an audit:

- :func:`calibration_figure`: per rewriter, the TPR at 1% FPR of the best distinguisher against
  the nominal ε (the certified lower bound as a dot, a bar up to the point estimate of the best
  measured test), beside the mean similarity of a rewrite to its input;
- :func:`calibration_table` (numbers, for the downloads) and :func:`shown_table` (the same rows
  in words, for the page);
- :func:`page_headline`, the page's headline: one sentence a room reads at a glance;
- :func:`check_calibration`, :func:`headline_of` (the record's own, longer headline: the CLI's),
  :func:`headline_epsilon`, :func:`per_unit`, :func:`samples_of`, :func:`pair_examples`: the
  record read for the page.

Each rewriter's nominal ε is per another unit (a word and a unit of embedding distance, a
WordPiece, a generated token), so the same ε is a different promise for each: the figure puts them
on one axis to show how differently they let an observer tell two sentences apart (TeDA, Li et
al. 2026).
"""

from __future__ import annotations

import html
import math
from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from dpcore.formatting import MISSING, as_number, epsilon_text, percent
from dpcore.pairtest.verdicts import NOT_DETECTED, OUT_OF_REACH, UNTESTED, VIOLATES, label
from dpcore.rewriter.calibrate import NOMINAL, headline_epsilon_of, loss, title, tpr_reach
from dpcore.rewriter.calibrate import headline as calibration_headline
from dpcore.validation import DPCoreError
from dpcore.viz.axes import FONT
from dpcore.viz.palette import SOFT_INK, colour

__all__ = [
    "ESTIMATE_WORDS",
    "FIRST_COLUMNS",
    "MORE_COLUMNS",
    "SHOWN_COLUMNS",
    "VERDICT_WORDS",
    "calibration_figure",
    "calibration_table",
    "check_calibration",
    "headline_epsilon",
    "headline_of",
    "loss",
    "meaning_of",
    "page_headline",
    "pair_examples",
    "per_unit",
    "percent",
    "rewriter_title",
    "samples_of",
    "shown_table",
    "tpr_cap",
]

#: What the bar above each dot is, as the figure and the table say it.
ESTIMATE_WORDS = "estimate (best measured test, biased upward)"
#: The verdict of a cell in words (the table; downloads keep the codes).
VERDICT_WORDS = {k: label(k) for k in (VIOLATES, NOT_DETECTED, OUT_OF_REACH, UNTESTED)}
#: The keys every calibration record has (:func:`check_calibration`).
_KEYS = ("pair", "rewriters", "epsilons", "rewrites_per_input", "confidence", "cells")
_CELL_KEYS = ("rewriter", "epsilon", "claimed_bound", "lower_bound", "verdict", "tpr_at_fpr")
#: Default height (px): the title, the headline and the figure share a 1280×720 screen.
HEIGHT = 470
#: Where the legend starts (px from the figure's top): under the title and its subtitle, also in
#: talk mode's larger text; the plot starts under the legend.
_LEGEND_TOP_PX = 70
#: How far apart (in decades) the rewriters' dots at one ε are drawn, so none hides another.
_DODGE = 0.025
#: The chance line: an observer who guesses "x" for 1 rewrite in 100 catches x 1 time in 100.
_CHANCE_COLOUR = "#9e9e9e"
#: The shown table: its columns, in order (the page's names; :func:`shown_table`).
SHOWN_COLUMNS = [
    "rewriter",
    "nominal ε",
    "claimed loss",
    "certified loss ≥",
    "TPR at 1% FPR ≥",
    "TPR estimate",
    "meaning retained",
    "verdict",
    "best test by",
    "LM reading",
]
#: The page's first table: the columns a room reads, few enough to fit a 1280-px projector with the
#: sidebar open (issue 58: the last column was cut off at 1280 px).
FIRST_COLUMNS = ["rewriter", "nominal ε", "claimed loss", "certified loss ≥", "TPR at 1% FPR ≥", "verdict"]
#: The rest, in a second table under an expander (with the cell's rewriter and ε, to read it alone).
MORE_COLUMNS = [
    "rewriter", "nominal ε", "TPR estimate", "meaning retained", "best test by", "LM reading",
]  # fmt: skip
#: What a nominal ε is per, shorter than the library's words, where the table needs it to fit.
_TABLE_PER = {"santext-words": "per word per distance unit"}


def check_calibration(calib: Any) -> dict[str, Any]:
    """``calib`` if it reads as a calibration record, else a :class:`DPCoreError` naming what is missing.

    Parameters
    ----------
    calib
        A parsed ``rewriter_calibration.json``.
    """
    if not isinstance(calib, dict):
        raise DPCoreError("the calibration file does not hold a JSON object")
    missing = [k for k in _KEYS if k not in calib]
    if missing:
        raise DPCoreError(f"the calibration file lacks {', '.join(missing)}")
    cells = calib["cells"]
    if not isinstance(cells, list) or not cells:
        raise DPCoreError("the calibration file holds no cells")
    for i, c in enumerate(cells):
        if not isinstance(c, dict) or any(k not in c for k in _CELL_KEYS):
            raise DPCoreError(f"cell {i + 1} of the calibration file lacks a rewriter, ε, bound or verdict")
        if not isinstance(c["tpr_at_fpr"], dict):
            raise DPCoreError(f"cell {i + 1} of the calibration file has no TPR at 1% FPR")
    return calib


def _fpr(calib: Mapping[str, Any]) -> float:
    return float(calib.get("fpr", 0.01))


def tpr_cap(calib: Mapping[str, Any]) -> float:
    """The largest lower bound on the TPR at 1% FPR that the record's audit size can certify: its
    ``tpr_reach``, or :func:`dpcore.rewriter.calibrate.tpr_reach` of its rewrites and confidence for a
    record written before it was kept. A perfect test's certified rate stops there."""
    cap = calib.get("tpr_reach")
    if cap is None:
        cap = tpr_reach(int(calib["rewrites_per_input"]), float(calib["confidence"]))
    return float(cap)


def _at_cap(calib: Mapping[str, Any], low: float) -> bool:
    return not math.isnan(low) and low > _fpr(calib) and low >= tpr_cap(calib) - 1e-9


def rewriter_title(calib: Mapping[str, Any], name: str) -> str:
    """A rewriter's display name: the record's ``title`` of its cells, else the library's."""
    for c in calib["cells"]:
        if c["rewriter"] == name and c.get("title"):
            return str(c["title"])
    return title(name)


def per_unit(calib: Mapping[str, Any], name: str) -> str:
    """What ``name``'s nominal ε is per, as a phrase: ``per WordPiece``."""
    text = next(
        (str(c["nominal"]) for c in calib["cells"] if c["rewriter"] == name and c.get("nominal")), None
    )
    text = text or NOMINAL.get(name, "ε")
    return text.removeprefix("ε ").strip() or "per text"


def headline_of(calib: Mapping[str, Any]) -> str:
    """The record's headline sentence (computed from its cells when the record has none)."""
    text = calib.get("headline")
    if isinstance(text, str) and text.strip():
        return text.strip()
    return calibration_headline(calib["cells"], calib["epsilons"], calib["rewriters"])


def page_headline(calib: Mapping[str, Any]) -> str:
    """What a room should conclude, in one sentence: at the nominal ε where the rewriters differ
    most (:func:`headline_epsilon`), the claim each rewriter's paper makes for the pair, then what the
    audit certified, with the exact loss beside it where dpcore knows it, and the audits' size and
    confidence (:func:`dpcore.rewriter.calibrate.headline`, without its estimates: the figure under
    the headline draws them, as bars above the certified dots).

    A certified loss of 0 reads "none above 0", never "private".

    Parameters
    ----------
    calib
        The calibration record (:func:`dpcore.rewriter.calibrate.load_shipped`).
    """
    names = _names(calib)
    return calibration_headline(
        calib["cells"],
        [float(e) for e in calib["epsilons"]],
        names,
        tpr_cap=tpr_cap(calib),
        confidence=float(calib["confidence"]),
        rewrites=int(calib["rewrites_per_input"]),
        titles={n: rewriter_title(calib, n) for n in names},
        estimates=False,
    )


def headline_epsilon(calib: Mapping[str, Any]) -> float:
    """The nominal ε the headline speaks of (:func:`dpcore.rewriter.calibrate.headline_epsilon_of`)."""
    return headline_epsilon_of(calib["cells"], [float(e) for e in calib["epsilons"]])


def meaning_of(calib: Mapping[str, Any]) -> dict[str, Any] | None:
    """The record's floor and ceiling of "meaning retained" (None for a record made before them)."""
    m = calib.get("meaning")
    if not isinstance(m, dict) or any(math.isnan(as_number(m.get(k))) for k in ("floor", "ceiling")):
        return None
    return dict(m)


def _cells(calib: Mapping[str, Any], name: str) -> list[Mapping[str, Any]]:
    return sorted((c for c in calib["cells"] if c["rewriter"] == name), key=lambda c: float(c["epsilon"]))


def _names(calib: Mapping[str, Any]) -> list[str]:
    listed = [str(r) for r in calib["rewriters"]]
    extra = [str(c["rewriter"]) for c in calib["cells"] if str(c["rewriter"]) not in listed]
    return list(dict.fromkeys([*listed, *extra]))


def _hover(calib: Mapping[str, Any], c: Mapping[str, Any]) -> str:
    t = c["tpr_at_fpr"]
    fpr = percent(_fpr(calib))
    low = as_number(t.get("lower"))
    if math.isnan(low):
        told = "not measured"
    elif low <= _fpr(calib) + 1e-12:
        told = f"{percent(low)}: no better than chance could be shown"
    else:
        told = f"at least {percent(low)} (certified)"
        if _at_cap(calib, low):
            told += ", the most this audit's size can certify"
    sim = as_number(c.get("similarity"))
    return (
        f"<b>{html.escape(rewriter_title(calib, str(c['rewriter'])))}</b>, nominal ε = "
        f"{epsilon_text(c['epsilon'])} ({html.escape(per_unit(calib, str(c['rewriter'])))})<br>"
        f"one rewrite tells x from x′ at {fpr} false alarms: {told}<br>"
        f"{ESTIMATE_WORDS}: {percent(t.get('tpr'))}<br>"
        f"claim for the pair: {loss(c['claimed_bound'])}; "
        + (
            f"certified loss ≥ {loss(c['lower_bound'])}"
            if as_number(c["lower_bound"]) > 0
            else "no leak shown (no certified loss above 0)"
        )
        + (f"; exact loss {exact}" if (exact := loss(c.get("exact_loss"))) else "")  # "" when unknown
        + "<br>"
        + f"verdict: {html.escape(VERDICT_WORDS.get(str(c['verdict']), str(c['verdict'])))}"
        + ("" if math.isnan(sim) else f"<br>meaning retained: {sim:.2f}")
    )


def calibration_figure(calib: Mapping[str, Any], *, height: int = HEIGHT) -> go.Figure:
    """How often one rewrite tells the pair apart at each nominal ε, beside how much meaning it keeps.

    Left panel: x is the nominal ε (log axis, a tick at each ε of the record), y the TPR at the
    record's FPR (1%) of the best distinguisher. One trace per rewriter, in its colour
    (:func:`dpcore.viz.palette.colour` of its title): a dot at the certified lower bound (the value
    the audit vouches for), a bar up to the point estimate of the best measured test (biased upward:
    it is the best of the tests measured), a faint dotted line at y = FPR (chance) and a faint dashed
    one at :func:`tpr_cap` (the most the audit's size can certify: a perfect test's dot stops
    there; drawn when it lies between chance and 100%). Dots of one ε are
    spread a little along x so that none hides another; each trace's ``customdata`` holds the
    cells' ε, estimate and upper bound, and its ``meta`` says ``{"panel": "tpr", "rewriter": name}``.

    Right panel: meaning retained, the mean cosine similarity of a rewrite to its input
    (all-MiniLM-L6-v2; 1 = the same text) against the nominal ε, one trace per rewriter in the same
    colour (``meta`` panel ``"similarity"``), in the same legend group, between two faint lines where
    the record has them (:func:`meaning_of`): its floor (unrelated sentences) and its ceiling (x′
    against x: a rewrite above it is closer to x than x′ is).

    Parameters
    ----------
    calib
        The calibration record (:func:`dpcore.rewriter.calibrate.load_shipped`).
    height
        Figure height (px).
    """
    calib = check_calibration(dict(calib))
    fpr = _fpr(calib)
    eps = sorted({float(e) for e in calib["epsilons"]} | {float(c["epsilon"]) for c in calib["cells"]})
    names = _names(calib)
    fig = make_subplots(rows=1, cols=2, column_widths=[0.63, 0.37], horizontal_spacing=0.11)
    for i, name in enumerate(names):
        cells = _cells(calib, name)
        title_ = rewriter_title(calib, name)
        label = html.escape(title_)  # Plotly reads tags in names and hover text: a file's are shown as text
        col = colour(name)  # by the registered name: a colour means one rewriter everywhere
        shift = 10 ** ((i - (len(names) - 1) / 2) * _DODGE)
        lows, ups, data = [], [], []
        for c in cells:
            t = c["tpr_at_fpr"]
            low, est = as_number(t.get("lower")), as_number(t.get("tpr"))
            lows.append(None if math.isnan(low) else low)
            ups.append(0.0 if math.isnan(low) or math.isnan(est) else max(est - low, 0.0))
            data.append([float(c["epsilon"]), None if math.isnan(est) else est, t.get("upper")])
        fig.add_trace(
            go.Scatter(
                x=[float(c["epsilon"]) * shift for c in cells],
                y=lows,
                mode="lines+markers",
                name=label,
                legendgroup=name,
                line={"color": col, "width": 2},
                marker={"color": col, "size": 11, "line": {"color": "#ffffff", "width": 1}},
                error_y={
                    "type": "data",
                    "symmetric": False,
                    "array": ups,
                    "arrayminus": [0.0] * len(ups),
                    "color": col,
                    "thickness": 2,
                    "width": 7,
                },
                customdata=data,
                hovertext=[_hover(calib, c) for c in cells],
                hoverinfo="text",
                meta={"panel": "tpr", "rewriter": name},
            ),
            row=1,
            col=1,
        )
        sims = [as_number(c.get("similarity")) for c in cells]
        fig.add_trace(
            go.Scatter(
                x=[float(c["epsilon"]) for c in cells],
                y=[None if math.isnan(s) else s for s in sims],
                mode="lines+markers",
                name=label,
                legendgroup=name,
                showlegend=False,
                line={"color": col, "width": 2},
                marker={"color": col, "size": 10, "symbol": "square"},
                hovertext=[_hover(calib, c) for c in cells],
                hoverinfo="text",
                meta={"panel": "similarity", "rewriter": name},
            ),
            row=1,
            col=2,
        )
    fig.add_hline(
        y=fpr,
        line={"color": _CHANCE_COLOUR, "width": 1.5, "dash": "dot"},
        annotation_text=f"chance at {percent(fpr)} false alarms",
        annotation_position="bottom right",
        annotation_font={"color": SOFT_INK},
        annotation_bgcolor="rgba(255, 255, 255, 0.85)",
        row=1,
        col=1,
    )
    cap = tpr_cap(calib)
    if fpr < cap < 1:
        fig.add_hline(
            y=cap,
            line={"color": _CHANCE_COLOUR, "width": 1.5, "dash": "dash"},
            annotation_text=f"the most {int(calib['rewrites_per_input']):,} rewrites can certify",
            annotation_position="top left",
            annotation_font={"color": SOFT_INK},
            annotation_bgcolor="rgba(255, 255, 255, 0.85)",
            row=1,
            col=1,
        )
    lo, hi = math.log10(min(eps)), math.log10(max(eps))
    pad = max(0.12, 0.08 * (hi - lo))
    x_axis = {
        "type": "log",
        "tickvals": eps,
        "ticktext": [epsilon_text(e) for e in eps],
        "range": [lo - pad, hi + pad],
        "title": {"text": "nominal ε (each rewriter's own unit)"},
    }
    fig.update_xaxes(**x_axis, row=1, col=1)
    fig.update_xaxes(**x_axis, row=1, col=2)
    fig.update_yaxes(
        range=[-0.1, 1.05],  # room under the chance line for its label (no dot lies below chance)
        tickvals=[0, 0.25, 0.5, 0.75, 1],
        ticktext=["0%", "25%", "50%", "75%", "100%"],
        title={"text": "how often one rewrite<br>gives the sentence away"},
        zeroline=False,
        row=1,
        col=1,
    )
    meaning = meaning_of(calib)
    if meaning is not None:
        for key, words, where in (
            ("floor", "unrelated sentences", "bottom right"),
            ("ceiling", "x′ against x", "top right"),
        ):
            value = float(meaning[key])
            fig.add_hline(
                y=value,
                line={"color": _CHANCE_COLOUR, "width": 1.5, "dash": "dot" if key == "floor" else "dash"},
                annotation_text=f"{words}: {value:.2f}",
                annotation_position=where,
                annotation_font={"color": SOFT_INK},
                annotation_bgcolor="rgba(255, 255, 255, 0.85)",
                row=1,
                col=2,
            )
    sims = [as_number(c.get("similarity")) for c in calib["cells"]]
    low_sim = min([0.0, *[s for s in sims if not math.isnan(s)]])
    fig.update_yaxes(
        range=[low_sim - 0.1, 1.05],  # room under the floor's line for its label
        tickvals=[0, 0.25, 0.5, 0.75, 1],
        ticktext=["0", "0.25", "0.5", "0.75", "1"],
        title={"text": "meaning retained<br>(similarity to the input)"},
        zeroline=False,
        row=1,
        col=2,
    )
    fig.update_layout(
        title={
            "text": f"Same nominal ε, different distinguishability (at {percent(fpr)} false alarms)",
            "subtitle": {"text": f"dot: certified lower bound · bar: up to the {ESTIMATE_WORDS}"},
            "x": 0.0,
            "xanchor": "left",
            "yref": "container",
            "y": 0.985,
            "yanchor": "top",
        },
        legend={
            "orientation": "h",
            "x": 0.0,
            "xanchor": "left",
            "yref": "container",
            "y": 1 - _LEGEND_TOP_PX / height,
            "yanchor": "top",
        },
        font=FONT,
        height=height,
        margin={"t": _LEGEND_TOP_PX + 40, "l": 80, "r": 20, "b": 70},
        hovermode="closest",
    )
    return fig


def calibration_table(calib: Mapping[str, Any]) -> pd.DataFrame:
    """Every cell as numbers (the downloads): one row per rewriter and nominal ε, in the record's order.

    Columns: rewriter, epsilon, nominal (what ε is per), claimed_bound, lower_bound,
    largest_certifiable_bound, exact_loss, tpr_lower, tpr_estimate, tpr_upper, similarity (meaning
    retained), verdict, event, family (the distinguisher that chose it), and the LM distinguisher's
    reading of the same rewrites where the record has one: lm_tpr_lower, lm_tpr_estimate,
    lm_lower_bound, lm_event (∞ as ``float("inf")``, none as NaN).
    """
    rows = []
    for c in calib["cells"]:
        t = c["tpr_at_fpr"]
        reading = c.get("lm") or {}
        rows.append(
            {
                "rewriter": str(c["rewriter"]),
                "epsilon": float(c["epsilon"]),
                "nominal": str(c.get("nominal") or NOMINAL.get(str(c["rewriter"]), "ε")),
                "claimed_bound": as_number(c["claimed_bound"]),
                "lower_bound": as_number(c["lower_bound"]),
                "largest_certifiable_bound": as_number(c.get("largest_certifiable_bound")),
                "exact_loss": as_number(c.get("exact_loss")),
                "tpr_lower": as_number(t.get("lower")),
                "tpr_estimate": as_number(t.get("tpr")),
                "tpr_upper": as_number(t.get("upper")),
                "similarity": as_number(c.get("similarity")),
                "verdict": str(c["verdict"]),
                "event": c.get("event"),
                "family": c.get("family"),
                "lm_tpr_lower": as_number(reading.get("tpr_at_fpr", {}).get("lower")),
                "lm_tpr_estimate": as_number(reading.get("tpr_at_fpr", {}).get("tpr")),
                "lm_lower_bound": as_number(reading.get("lower_bound")),
                "lm_event": reading.get("event"),
            }
        )
    return pd.DataFrame(rows)


def _bound(value: Any) -> str:
    """A certified lower bound as the table shows it: "none" when it certifies no loss above 0."""
    v = as_number(value)
    if math.isnan(v):
        return ""
    return "none" if v <= 0 else loss(v)


def shown_table(calib: Mapping[str, Any]) -> pd.DataFrame:
    """The cells in words (:data:`SHOWN_COLUMNS`), one row per cell, in the record's order.

    The nominal ε says what it is per ("10 per WordPiece"); the claim and the certified lower bound
    are privacy losses in nats, 3 significant digits (∞; "none" where nothing above 0 was
    certified), the certified one with the pair's exact loss beside it where the record has it
    ("3.81 (exact 15.5)"); the TPRs are percentages (the certified one marked "(chance)" when it is
    no more than the FPR); meaning retained has 2 decimals; the verdict is in words.
    """
    fpr = _fpr(calib)
    rows = []
    for c in calib["cells"]:
        t = c["tpr_at_fpr"]
        low = as_number(t.get("lower"))
        certified = percent(low)
        if not math.isnan(low) and low <= fpr + 1e-12:
            certified += " (chance)"
        elif _at_cap(calib, low):
            certified += " (at the cap)"
        sim = as_number(c.get("similarity"))
        name = str(c["rewriter"])
        exact = loss(c.get("exact_loss"))  # "" when the record has none
        rows.append(
            [
                rewriter_title(calib, name),
                f"{epsilon_text(c['epsilon'])} {_TABLE_PER.get(name) or per_unit(calib, name)}",
                loss(c["claimed_bound"]),
                _bound(c["lower_bound"]) + (f" (exact {exact})" if exact else ""),
                certified,
                percent(t.get("tpr")),
                MISSING if math.isnan(sim) else f"{sim:.2f}",
                VERDICT_WORDS.get(str(c["verdict"]), str(c["verdict"])),
                str(c.get("family_title") or MISSING),
                _lm_cell(c.get("lm"), fpr),
            ]
        )
    return pd.DataFrame(rows, columns=SHOWN_COLUMNS)


def _lm_cell(reading: Mapping[str, Any] | None, fpr: float) -> str:
    """The LM distinguisher's certified TPR and its estimate, as the table shows them: "27% (77%)",
    "chance (1.5%)" where no more than the FPR was certified, "—" where the record has no reading."""
    if not reading:
        return MISSING
    t = reading["tpr_at_fpr"]
    low = as_number(t.get("lower"))
    certified = "chance" if not math.isnan(low) and low <= fpr + 1e-12 else percent(low)
    return f"{certified} ({percent(t.get('tpr'))})"


def samples_of(calib: Mapping[str, Any], name: str, epsilon: float) -> list[tuple[str, list[str]]]:
    """The sample rewrites of public sentences of one cell: ``[(sentence, [rewrite, ...]), ...]``."""
    for c in calib["cells"]:
        if c["rewriter"] == name and float(c["epsilon"]) == float(epsilon):
            return [
                (str(s.get("text", "")), [str(r) for r in s.get("rewrites") or []])
                for s in c.get("samples") or []
            ]
    return []


def pair_examples(calib: Mapping[str, Any], name: str, epsilon: float) -> dict[str, Sequence[str]]:
    """The audit's first rewrites of x and of x′ in one cell (``{"x": [...], "x_prime": [...]}``)."""
    for c in calib["cells"]:
        if c["rewriter"] == name and float(c["epsilon"]) == float(epsilon):
            ex = c.get("examples") or {}
            return {
                "x": [str(r) for r in ex.get("x") or []],
                "x_prime": [str(r) for r in ex.get("x_prime") or []],
            }
    return {"x": [], "x_prime": []}
