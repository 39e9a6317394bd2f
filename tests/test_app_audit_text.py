"""AppTest: the "Audit a text sanitizer" page."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[1]
PAGE = str(ROOT / "pages" / "audit_text.py")


@pytest.fixture(autouse=True)
def _clear_caches() -> None:
    st.cache_data.clear()


def _spec(at: AppTest) -> dict:
    charts = at.get("plotly_chart")
    assert len(charts) == 1
    return json.loads(charts[0].proto.spec)


def _points(spec: dict, prefix: str) -> list[tuple[float, float]]:
    out = []
    for t in spec["data"]:
        if t.get("name", "").startswith(prefix):
            out += list(zip(t["x"], t["y"], strict=True))
    return out


def test_default_santext_shows_no_violation_and_no_check_mark() -> None:
    at = AppTest.from_file(PAGE, default_timeout=120).run()
    assert not at.exception
    assert not at.error
    info = " ".join(i.value for i in at.info)
    assert "No violation detected by this test" in info
    assert "does not show the mechanism is private" in info
    assert not at.success  # never a green "verified" banner
    spec = _spec(at)
    pts = _points(spec, "pair within its claim")
    assert pts and all(y <= x + 1e-9 for x, y in pts)  # every point on or under the diagonal
    assert at.query_params["mech"] == "santext"
    assert any("audit-text" in c.value for c in at.code)  # the CLI command to reproduce


def test_flawed_krr_is_flagged_and_labelled() -> None:
    at = AppTest.from_file(PAGE, default_timeout=120)
    at.query_params["mech"] = "flawed:krr-overclaimed"
    at.query_params["vsize"] = "500"
    at.query_params["words"] = "house,car,money,water"
    at.query_params["nn"] = "0"
    at.query_params["samples"] = "50000"
    at.run()
    assert not at.exception
    assert any("Violates its claim" in e.value for e in at.error)
    assert any("flawed reproduction" in w.value for w in at.warning)
    bad = _points(_spec(at), "pair violates its claim")
    assert bad and all(y > x for x, y in bad)


def test_work_cap_refuses_with_the_numbers() -> None:
    at = AppTest.from_file(PAGE, default_timeout=60)
    at.query_params["how"] = "adaptive"
    at.query_params["pairs"] = "100"
    at.query_params["samples"] = "200000"
    at.query_params["nn"] = "10"
    at.run()
    assert not at.exception
    assert any("this server allows" in e.value for e in at.error)
    assert not at.get("plotly_chart")


def test_bad_url_values_fall_back_with_a_warning() -> None:
    at = AppTest.from_file(PAGE, default_timeout=120)
    at.query_params["mech"] = "../../etc/passwd.py:make"
    at.query_params["eps"] = "nan"
    at.run()
    assert not at.exception
    assert sum("ignored" in w.value for w in at.warning) == 2
    assert at.query_params["mech"] == "santext"


def test_unknown_word_is_one_clear_error() -> None:
    at = AppTest.from_file(PAGE, default_timeout=120)
    at.query_params["words"] = "qqzzyyxx"
    at.run()
    assert not at.exception
    assert any("not in the" in e.value for e in at.error)


def test_typed_words_with_markup_are_refused_not_echoed() -> None:
    at = AppTest.from_file(PAGE, default_timeout=120).run()
    at.text_input(key="words").set_value("[click](https://evil.example), house").run()
    assert not at.exception
    shown = " ".join(e.value for e in at.error)
    assert "Words must be words separated by commas" in shown
    assert "evil.example" not in shown
    assert not at.get("plotly_chart")


def test_scan_the_whole_vocabulary_shows_the_screen_and_marks_confirmed_violations() -> None:
    at = AppTest.from_file(PAGE, default_timeout=180)
    at.query_params["mech"] = "flawed:krr-overclaimed"
    at.query_params["vsize"] = "500"
    at.query_params["how"] = "screen"
    at.query_params["budget"] = "500000"
    at.query_params["pairs"] = "5"
    at.query_params["samples"] = "10000"
    at.run()
    assert not at.exception
    assert any("Violates its claim" in e.value for e in at.error)
    charts = [json.loads(c.proto.spec) for c in at.get("plotly_chart")]
    assert len(charts) == 2
    pairs_fig, screen_fig = charts
    names = [t.get("name", "") for t in pairs_fig["data"]]
    assert any(n.startswith("could be missed") for n in names)  # the power band
    screened = next(t for t in screen_fig["data"] if t.get("name", "").startswith("screened word"))
    assert len(_values(screened["x"])) == 500
    marked = next(t for t in screen_fig["data"] if t.get("name", "").startswith("in a confirmed violation"))
    assert marked["text"]
    assert any("500 words × 1,000 draws" in c.value for c in at.caption)
    assert any("--strategy screen" in c.value and "--screen-budget 500000" in c.value for c in at.code)
    assert at.query_params["how"] == "screen"


def _values(arr) -> list:
    """A Plotly array from the spec: a list, or numpy's binary form ({'bdata', 'dtype'})."""
    if isinstance(arr, dict):
        import base64

        import numpy as np

        return np.frombuffer(base64.b64decode(arr["bdata"]), dtype=arr["dtype"]).tolist()
    return list(arr)


def test_a_screen_budget_too_small_for_the_vocabulary_is_refused_with_a_reason() -> None:
    at = AppTest.from_file(PAGE, default_timeout=120)
    at.query_params["how"] = "screen"
    at.query_params["vsize"] = "15000"
    at.query_params["budget"] = "500000"
    at.run()
    assert not at.exception
    assert any("needs at least 200" in e.value for e in at.error)
