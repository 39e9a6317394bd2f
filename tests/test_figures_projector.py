"""Figures a projector carries (issue 29, item 3): labels at their values on log axes, a labelled
∞ band of a fixed share on either axis type, and no label over the data. Issue 50: one legend
entry per mechanism in its palette colour, rates in plain percentages, and the observer chart's
axes chosen so that ADePT's curve and its violation show inside the frame."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from dpcore.viz.audit_figure import INF_BAND_SHARE, audit_figure


def _frame() -> pd.DataFrame:
    rows = []
    for n in (1, 2, 4, 8, 16, 32, 64, 128):
        rows.append({"mechanism": "laplace", "dim": n, "exact": 1.0 / n**0.5, "exact_lr": 0.9})
        rows.append({"mechanism": "adept", "dim": n, "exact": 0.3 * n, "exact_lr": 1.5 * n})
        rows.append({"mechanism": "dptext", "dim": n, "exact": math.inf, "exact_lr": math.inf})
    df = pd.DataFrame(rows)
    for c in ("mc", "mc_lower", "mc_upper", "mc_lr"):
        df[c] = float("nan")
    return df


def _axis_units(v: float, log_y: bool) -> float:
    return math.log10(v) if log_y else v


@pytest.mark.parametrize("log_y", [False, True])
def test_labels_sit_at_their_values_outside_the_plot(log_y: bool) -> None:
    fig = audit_figure(_frame(), epsilon=2.0, log_y=log_y)
    claimed = next(a for a in fig.layout.annotations if "claimed" in a.text)
    assert claimed.y == pytest.approx(_axis_units(2.0, log_y))  # at ε = 2, not at 10² on a log axis
    for a in fig.layout.annotations:
        # every label is in a margin: right of the plot (x ≥ 1) or left of it (the ∞ label)
        assert a.xref == "paper" and (a.x >= 1 or (a.x <= 0 and a.xanchor == "right")), a.text
    assert not any("drawn here" in a.text for a in fig.layout.annotations)


@pytest.mark.parametrize("log_y", [False, True])
def test_the_infinity_band_is_labelled_and_a_fixed_share_of_the_plot(log_y: bool) -> None:
    fig = audit_figure(_frame(), epsilon=2.0, log_y=log_y)
    band = next(s for s in fig.layout.shapes if s.type == "rect")
    lo, hi = fig.layout.yaxis.range
    share = (_axis_units(band.y1, log_y) - _axis_units(band.y0, log_y)) / (hi - lo)
    assert share >= 0.8 * INF_BAND_SHARE  # not a thin strip on a log axis
    inf_label = next(a for a in fig.layout.annotations if "∞" in a.text and "band" not in a.text)
    assert _axis_units(band.y0, log_y) < inf_label.y < _axis_units(band.y1, log_y)
    # the infinite curve is drawn inside the band, the finite ticks stay below it
    dptext = next(t for t in fig.data if t.name == "dptext (exact)")
    assert all(band.y0 < y < band.y1 for y in dptext.y)
    assert max(fig.layout.yaxis.tickvals) < band.y0


def test_the_text_audit_axis_fits_the_data_with_the_sample_limit_as_a_note() -> None:
    from dpcore.textaudit import KaryRandomizedResponse, audit_text
    from dpcore.viz.textaudit_figure import T_LIMIT_NEAR, textaudit_figure
    from tests.test_textaudit import WORDS, _word_vocab

    m = KaryRandomizedResponse(epsilon=0.5, words=WORDS)
    r = audit_text(m, vocab=_word_vocab(WORDS), pairs=10, strategy="random", samples=20_000, seed=3)
    fig = textaudit_figure(r)
    data = [p.lower_bound for p in r.pairs] + [p.claimed_bound for p in r.pairs]
    top = fig.layout.yaxis.range[1]
    assert r.max_detectable_loss > T_LIMIT_NEAR * max(data) * 1.15  # the case the issue saw
    assert max(data) <= top <= 1.2 * max(data)  # the pairs fill the chart
    assert not any(t.name and "samples can show" in t.name for t in fig.data)
    note = next(a for a in fig.layout.annotations if "samples can show" in a.text)
    assert f"{r.max_detectable_loss:.3g}" in note.text and note.yref == "paper" and note.y >= 1


# ---- issue 50: one visual language, the story on the first screen -----------------------------
def _legend(fig) -> list[str]:  # type: ignore[no-untyped-def]
    return [t.name for t in fig.data if t.name and t.showlegend is not False]


def test_the_audit_figure_has_one_legend_entry_per_mechanism_in_its_colour() -> None:
    from dpcore.viz.palette import colour

    df = _frame()
    df["mc"], df["mc_lower"], df["mc_upper"] = df["exact"], df["exact"] * 0.9, df["exact"] * 1.1
    fig = audit_figure(df, epsilon=2.0)
    assert _legend(fig) == ["laplace", "adept", "dptext"]  # not 3 × 3 entries
    for t in fig.data:
        mech = t.legendgroup
        assert mech in ("laplace", "adept", "dptext"), t.name
        if t.fill != "toself":
            assert (t.line.color or t.marker.color) == colour(mech), t.name
    # how each was measured is the line style, told once under the title
    note = fig.layout.title.subtitle.text
    assert "solid: majority vote" in note and "dotted: best attack" in note and "Monte-Carlo" in note
    assert fig.layout.title.subtitle.font.size >= 14
    assert fig.layout.legend.groupclick == "togglegroup"  # a click on a mechanism hides all of it
    styles = {t.name: (t.line.dash, t.mode) for t in fig.data if t.legendgroup == "adept"}
    assert styles["adept (exact)"] == (None, "lines+markers")
    assert styles["adept (LR attack, exact)"] == ("dot", "lines")
    assert styles["adept (Monte-Carlo)"][1] == "markers"
    # only what is drawn is explained: no note for exact majority-vote curves alone
    plain = audit_figure(df[["mechanism", "dim", "exact"]], epsilon=2.0, show_lr=False)
    assert not plain.layout.title.subtitle.text


def test_a_loss_of_zero_is_drawn_above_the_frame() -> None:
    df = _frame()
    df.loc[df["mechanism"] == "laplace", "exact"] = 0.0
    fig = audit_figure(df, epsilon=2.0)
    assert fig.layout.yaxis.range[0] < 0 < min(fig.layout.yaxis.tickvals) + 1e-12


def test_rates_read_as_plain_percentages() -> None:
    from dpcore.formatting import percent
    from dpcore.viz.axes import log_axis

    assert [percent(v) for v in (1e-6, 1e-3, 0.0025, 0.01, 0.1, 0.5, 1.0)] == [
        "0.0001%", "0.1%", "0.25%", "1%", "10%", "50%", "100%",
    ]  # fmt: skip
    axis = log_axis("FPR", [2e-6, 1.0], percent=True)
    assert axis["ticktext"] == ["0.0001%", "0.001%", "0.01%", "0.1%", "1%", "10%", "100%"]
    with pytest.raises(ValueError, match="percent"):
        log_axis("FPR", percent=True)


def _adept_pairs(dim: int) -> list:  # type: ignore[type-arg]
    from dataclasses import replace

    from dpcore.audit import audit

    return [
        replace(audit(m, dim=dim, epsilon=1.0).tradeoff_pair, null=f"{m} (n = {dim}): 0ⁿ")
        for m in ("adept", "laplace")
    ]


def test_the_observer_chart_shows_adepts_curve_and_cross_inside_the_frame() -> None:
    """Issue 50, item 7: ADePT's curve ran along the top frame, its cross was half clipped, the axes
    read 1e-06 and the shaded region filled the plot."""
    import numpy as np

    from dpcore.viz.palette import BAD, colour
    from dpcore.viz.tradeoff_figure import tradeoff_figure

    fig = tradeoff_figure(_adept_pairs(128), tpr_scale="linear", mirror=False, label_violation=True)
    x, y = fig.layout.xaxis, fig.layout.yaxis
    assert x.type == "log" and y.type == "linear"
    assert not any("e-" in t for t in x.ticktext) and x.ticktext[-1] == "100%"
    assert list(y.ticktext) == ["0%", "25%", "50%", "75%", "100%"]
    # room above 100% and below 0%: ADePT's curve (TPR ≈ 1) is not drawn on the frame
    assert y.range[0] <= -0.05 and y.range[1] >= 1.05
    adept = next(t for t in fig.data if t.name == "adept (n = 128): 0ⁿ vs 1ⁿ: exact optimal tests")
    assert adept.line.color == colour("adept") and max(adept.y) <= 1.0 < y.range[1] - 0.04
    # its cross (the majority vote, FPR ≈ 1e-6) lies well inside the x range and is never clipped
    (cross,) = [t for t in fig.data if "violation" in (t.name or "")]
    assert cross.cliponaxis is False and cross.marker.color == BAD
    assert x.range[0] + 0.15 < math.log10(min(cross.x)) and max(cross.x) <= 1.0
    # the shaded region is the claim's ceiling only (no mirror floor), up to TPR = 1, not beyond
    filled = [t for t in fig.data if t.fill == "tonexty"]
    assert len(filled) == 1 and max(np.asarray(fig.data[0].y)) == 1.0
    # the cross says in words what it shows, with the numbers
    (label,) = fig.layout.annotations
    assert label.text.startswith("majority vote") and "99.9997% of the time" in label.text  # not 100%
    assert "ε = 1 allows at most 0.00029%" in label.text and "drawn at the end" not in label.text
    assert len(_legend(fig)) <= 6  # measured events on an exact curve stay out of the legend


def test_the_observer_chart_keeps_its_log_view_and_mirror_by_default() -> None:
    from dpcore.viz.tradeoff_figure import tradeoff_figure

    fig = tradeoff_figure(_adept_pairs(8))
    assert fig.layout.yaxis.type == "log" and fig.layout.yaxis.ticktext[-1] == "100%"
    assert len([t for t in fig.data if t.fill == "tonexty"]) == 2  # ceiling and its mirror
    assert fig.layout.yaxis.range[1] > 0.0  # room above TPR = 100%
    assert not fig.layout.annotations
    with pytest.raises(ValueError, match="tpr_scale"):
        tradeoff_figure(_adept_pairs(8), tpr_scale="cubic")
    with pytest.raises(ValueError, match="log TPR axis"):
        tradeoff_figure(_adept_pairs(8), log_axes=False, tpr_scale="log")


def test_the_sensitivity_figures_leave_room_around_their_lines() -> None:
    from dpcore.sensitivity import adept_violation_fractions
    from dpcore.viz.palette import BAD, CLAIM, colour
    from dpcore.viz.sensitivity_figure import sensitivity_curve_figure, violation_figure

    fig = sensitivity_curve_figure(10.0, 255, highlight=128)
    true, claim, mark = fig.data
    x0, x1 = fig.layout.xaxis.range
    y0, y1 = fig.layout.yaxis.range
    assert x0 < 0.0 and x1 > math.log10(255)  # the lines start and end inside the frame
    assert y0 < math.log10(20.0) and y1 > math.log10(20.0 * math.sqrt(255))
    assert true.line.color == mark.marker.color == BAD and mark.cliponaxis is False
    assert claim.line.color == CLAIM and claim.line.dash == "dash"
    res = [
        adept_violation_fractions([1, 2, 4, 8], clip=1.0, dist=d, pairs=200, seed=0)
        for d in ("uniform", "normal")
    ]
    fig = violation_figure(res)
    assert fig.layout.xaxis.range[0] < 1 and fig.layout.xaxis.range[1] > 8
    assert fig.layout.yaxis.range[0] < 0 and fig.layout.yaxis.range[1] > 100
    assert [t.line.color for t in fig.data] == [colour("uniform"), colour("normal")]


def test_a_rate_below_the_axis_is_drawn_inside_it_and_told_in_powers_of_ten() -> None:
    """ADePT at ε = 3.5, n = 128 (the talk walk's link): its majority vote has an FPR of about
    10⁻³⁴. The cross sits at the axis' end, inside the plot, its hover and label keep the true
    value without "e-33%", and ADePT's curve starts at the plot's left edge, not at 4%."""
    from dataclasses import replace

    import numpy as np

    from dpcore.audit import audit
    from dpcore.viz.tradeoff_figure import LOG_FLOOR, tradeoff_figure

    pair = audit("adept", dim=128, epsilon=3.5).tradeoff_pair
    fig = tradeoff_figure([replace(pair, null="adept: 0ⁿ")], tpr_scale="linear", label_violation=True)
    (cross,) = [t for t in fig.data if "violation" in (t.name or "")]
    true_fpr = cross.customdata[0][0]
    assert true_fpr < 1e-30 and cross.x[0] == LOG_FLOOR > 10 ** fig.layout.xaxis.range[0]
    assert "customdata[0]" in cross.hovertemplate
    (label,) = fig.layout.annotations
    assert "e-" not in label.text and "× 10⁻³⁵" in label.text and "drawn at the end of the axis" in label.text
    curve = next(t for t in fig.data if "exact optimal" in (t.name or ""))
    x = np.asarray(curve.x)
    assert x.min() == pytest.approx(10 ** fig.layout.xaxis.range[0]) and np.asarray(curve.y)[0] > 0.99
