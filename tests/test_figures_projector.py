"""Figures a projector carries (issue 29, item 3): labels at their values on log axes, a labelled
∞ band of a fixed share on either axis type, and no label over the data."""

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
