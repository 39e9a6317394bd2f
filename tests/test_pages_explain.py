"""AppTest: the Sensitivity and the Accounting & samplers pages, including bad input via the URL."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from dpcore.accounting import dpnr_dropout_epsilon
from dpcore.sensitivity import adept_violation_fractions, dimension_grid
from dpcore.viz.accounting_figure import CLAIM_BARS, PLACE_VALUE_BARS, PLACE_VALUE_COLOUR
from dpcore.viz.palette import BAD, OK

ROOT = Path(__file__).resolve().parents[1]
SENSITIVITY = str(ROOT / "pages" / "sensitivity.py")
ACCOUNTING = str(ROOT / "pages" / "accounting.py")
# Light settings so the whole file runs in seconds on a shared machine.
LIGHT_SIM = {"pairs": "1000", "nmax": "48"}
LIGHT_SAMPLERS = {"size": "10000"}


pytestmark = pytest.mark.usefixtures("clear_page_caches")


def _run(path: str, params: dict[str, str] | None = None) -> AppTest:
    at = AppTest.from_file(path, default_timeout=60)
    at.query_params.update(params or {})
    return at.run()


def _specs(at: AppTest) -> list[dict]:
    return [json.loads(c.proto.spec) for c in at.get("plotly_chart")]


def _trace(spec: dict, startswith: str) -> dict:
    return next(t for t in spec["data"] if t.get("name", "").startswith(startswith))


def _bars_by_bit(spec: dict, startswith: str) -> list[float]:
    """Bar heights of every trace named ``startswith…`` (one per colour), in the bits' order."""
    order = next(t for t in spec["data"] if t.get("type") == "bar")["x"]  # the claimed bars: every bit
    by_x = {
        x: y
        for t in spec["data"]
        if t.get("name", "").startswith(startswith)
        for x, y in zip(t["x"], t["y"], strict=True)
    }
    return [by_x[x] for x in order]


# --------------------------------------------------------------------------------------------
# Sensitivity
# --------------------------------------------------------------------------------------------
def test_sensitivity_default_renders_both_figures() -> None:
    at = _run(SENSITIVITY)
    assert not at.exception
    curve, viol = _specs(at)
    assert any(t["name"].startswith("true L1 sensitivity") for t in curve["data"])
    uni = _trace(viol, "uniform")
    norm = _trace(viol, "normal")
    assert uni["x"] == list(range(1, 256)) and len(norm["y"]) == 255
    # the page shows what the library computes for the same parameters
    direct = adept_violation_fractions(range(1, 256), clip=10.0, dist="uniform", pairs=10_000, seed=0)
    assert uni["y"] == pytest.approx([100 * f for f in direct.fractions])
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["True L1 sensitivity 2C√n"] == "226.3"  # 20·√128
    assert metrics["True ε = ε√n"] == "11.31"
    assert at.query_params["nmax"] == "255"


def test_sensitivity_widgets_change_the_figures() -> None:
    at = _run(SENSITIVITY, LIGHT_SIM)
    curve0, viol0 = _specs(at)
    at.number_input(key="sigma").set_value(0.3).run()
    assert not at.exception
    _, viol1 = _specs(at)
    assert _trace(viol0, "normal")["y"] != _trace(viol1, "normal")["y"]
    assert _trace(viol0, "uniform")["y"] == _trace(viol1, "uniform")["y"]
    assert at.query_params["sigma"] == "0.3"
    at.number_input(key="n").set_value(16).run()
    curve2, _ = _specs(at)
    assert _trace(curve0, "your n")["y"] != _trace(curve2, "your n")["y"]
    assert _trace(curve2, "your n")["y"] == [pytest.approx(80.0)]  # 2·10·√16
    at.number_input(key="seed").set_value(5).run()
    _, viol3 = _specs(at)
    assert _trace(viol1, "uniform")["y"] != _trace(viol3, "uniform")["y"]


def test_sensitivity_deep_link_reproduces_configuration() -> None:
    at = _run(
        SENSITIVITY, {"clip": "2", "nmax": "300", "spacing": "log", "pairs": "1000", "dists": "uniform"}
    )
    assert not at.exception and not at.warning
    _, viol = _specs(at)
    assert len(viol["data"]) == 1
    assert _trace(viol, "uniform")["x"] == dimension_grid(300, "log", max_points=256)
    assert "2C = 4" in viol["layout"]["title"]["text"]


@pytest.mark.parametrize(
    ("params", "bad_key"),
    [
        ({"clip": "0"}, "clip"),
        ({"clip": "-1"}, "clip"),
        ({"clip": "nan"}, "clip"),
        ({"n": "0"}, "n"),
        ({"n": "4097"}, "n"),
        ({"eps": "NaN"}, "eps"),
        ({"pairs": "7"}, "pairs"),
        ({"dists": "uniform,__import__('os')"}, "dists"),
        ({"spacing": "cubic"}, "spacing"),
    ],
)
def test_sensitivity_bad_query_params_warn(params: dict, bad_key: str) -> None:
    at = _run(SENSITIVITY, {**LIGHT_SIM, **params})
    assert not at.exception
    assert any(f"`{bad_key}` ignored" in w.value for w in at.warning)
    assert len(at.get("plotly_chart")) == 2


def test_sensitivity_work_cap_is_a_message() -> None:
    at = _run(SENSITIVITY, {"pairs": "1000000", "nmax": "4096"})
    assert not at.exception
    assert any("this server allows" in e.value for e in at.error)
    assert len(at.get("plotly_chart")) == 1  # the closed-form curve still shows


def test_sensitivity_no_distribution_is_explained() -> None:
    at = _run(SENSITIVITY, LIGHT_SIM)
    at.multiselect(key="dists").set_value([]).run()
    assert not at.exception
    assert any("at least one distribution" in i.value for i in at.info)


# --------------------------------------------------------------------------------------------
# Accounting & samplers
# --------------------------------------------------------------------------------------------
def test_accounting_default_renders_three_figures() -> None:
    at = _run(ACCOUNTING, LIGHT_SAMPLERS)
    assert not at.exception
    dpnr, binary, samplers = _specs(at)
    sel = _trace(dpnr, "μ = 0.3")
    assert sel["y"] == [pytest.approx(dpnr_dropout_epsilon(768, 0.05, 0.3))]
    true_bars = _bars_by_bit(binary, "place-value figure")
    assert true_bars == pytest.approx([3.2, 0.1, 0.2, 0.4, 0.8, 0.05, 0.025, 0.0125, 0.00625, 0.003125])
    # issue 58: the chart agrees with the headline on which accounting holds. The claim's bars are
    # the exact LDP loss (green: the count holds); the place-value figure is a per-distance reading,
    # drawn in neutral grey, never as red "under-charged" bars under a headline that says it holds
    bars = {t["name"]: t for t in binary["data"] if t.get("type") == "bar"}
    assert set(bars) == {CLAIM_BARS, PLACE_VALUE_BARS}
    assert bars[CLAIM_BARS]["marker"]["color"] == OK and "the count holds" in CLAIM_BARS
    assert bars[PLACE_VALUE_BARS]["marker"]["color"] == PLACE_VALUE_COLOUR not in (BAD, OK)
    assert "not an LDP loss" in PLACE_VALUE_BARS
    assert not any("under-charged" in n or "over-charged" in n for n in bars)
    assert sum(1 for t in samplers["data"] if t["type"] == "bar") == 4
    assert any("infinite privacy loss" in e.value for e in at.error)  # eq. 11 at z = 0.1


def test_accounting_widgets_change_the_figures() -> None:
    at = _run(ACCOUNTING, LIGHT_SAMPLERS)
    dpnr0, bin0, samp0 = _specs(at)
    at.slider(key="mu").set_value(0.9).run()
    assert not at.exception
    dpnr1 = _specs(at)[0]
    assert _trace(dpnr1, "μ = 0.9")["y"] == [pytest.approx(dpnr_dropout_epsilon(768, 0.05, 0.9))]
    assert _trace(dpnr0, "μ = 0.3")["y"] != _trace(dpnr1, "μ = 0.9")["y"]
    assert at.query_params["mu"] == "0.9"
    at.number_input(key="m").set_value(6).run()
    bin1 = _specs(at)[1]
    assert len(_bars_by_bit(bin1, "place-value figure")) == len(_bars_by_bit(bin0, "place-value figure")) + 2
    assert _bars_by_bit(bin1, "place-value figure")[0] == pytest.approx(0.1 * 2**7)  # sign bit: 2^(m+1)·ε_i
    at.number_input(key="b").set_value(2.0).run()
    samp1 = _specs(at)[2]
    lap0 = next(t for t in samp0["data"] if t["type"] == "scatter")
    lap1 = next(t for t in samp1["data"] if t["type"] == "scatter")
    assert max(lap0["y"]) == pytest.approx(0.5) and max(lap1["y"]) == pytest.approx(0.25)


def test_accounting_z_outside_unit_interval_is_not_flagged() -> None:
    at = _run(ACCOUNTING, {**LIGHT_SAMPLERS, "z": "2"})
    assert not at.exception and not at.error
    assert any("outside (0, 1)" in i.value for i in at.info)


@pytest.mark.parametrize(
    ("params", "bad_key"),
    [
        ({"mu": "1.5"}, "mu"),
        ({"mu": "-0.1"}, "mu"),
        ({"mu": "nan"}, "mu"),
        ({"k": "0"}, "k"),
        ({"eps": "inf"}, "eps"),
        ({"m": "100"}, "m"),
        ({"sign": "2"}, "sign"),
        ({"b": "0"}, "b"),
        ({"size": "1000000000"}, "size"),
    ],
)
def test_accounting_bad_query_params_warn(params: dict, bad_key: str) -> None:
    at = _run(ACCOUNTING, {**LIGHT_SAMPLERS, **params})
    assert not at.exception
    assert any(f"`{bad_key}` ignored" in w.value for w in at.warning)
    assert len(at.get("plotly_chart")) == 3


def test_accounting_tabs_open_with_one_plain_sentence_and_keep_equations_one_click_away() -> None:
    # issue 50: "the Accounting binary tab opens with equations"; each tab now opens with one
    # sentence carrying its main number, and every formula sits in an expander under the figure
    at = _run(ACCOUNTING, LIGHT_SAMPLERS)
    assert not at.exception
    dpnr, binary, sampler = at.tabs
    firsts = [tab.markdown[0].value for tab in (dpnr, binary, sampler)]
    assert firsts[0].startswith("DPNR claims **ε = 0.05** per word but spends **38.4**"), firsts[0]
    assert "761× the claim" in firsts[0]
    # issue 58: the headline says which accounting holds, and names the bars as the chart draws them
    assert firsts[1] == (
        "**Under LDP the count holds:** flipping each of a feature's 10 bits at ε_i = 0.1 spends "
        "exactly the claimed 1 (green bars); the revisit's place-value figure, 4.797 (grey bars), is a "
        "loss per unit of distance, not an LDP loss."
    ), firsts[1]
    assert "never negative" in firsts[2] and "infinite" in firsts[2], firsts[2]
    assert not any("$" in f or "eq." in f for f in firsts), firsts
    formulas = [m.value for m in at.markdown if "$" in m.value]
    in_expanders = [m.value for e in at.expander for m in e.markdown if "$" in m.value]
    assert len(formulas) == 2 and sorted(in_expanders) == sorted(formulas)


def test_accounting_dpnr_headline_within_the_claim_at_full_dropout() -> None:
    at = _run(ACCOUNTING, {**LIGHT_SAMPLERS, "mu": "1"})
    assert not at.exception
    assert "within the claim" in at.tabs[0].markdown[0].value
