"""The "Sensitivity" page in a real browser: the ×√n increase has one colour (bad) wherever it
appears, and the log axis labels decades only (one page load)."""

from __future__ import annotations

import pytest

from tests.e2e.idle import wait_idle

pytestmark = pytest.mark.e2e

DELTAS = """() => [...document.querySelectorAll('[data-testid="stMetricDelta"]')].map(
  (d) => ({text: d.innerText.trim(), color: getComputedStyle(d).color}))"""

CURVE_TICKS = """() => {
  const gd = document.querySelector('.js-plotly-plot');
  return gd._fullLayout.xaxis._vals.map((t) => t.text);
}"""


def test_sensitivity_increase_colour_and_decade_ticks(app_url: str, page) -> None:  # type: ignore[no-untyped-def]
    page.goto(f"{app_url}/sensitivity?n=128")
    page.wait_for_selector(".js-plotly-plot .main-svg", state="visible", timeout=60_000)
    wait_idle(page, timeout=60_000)  # the script has finished, a second ago
    deltas = [d for d in page.evaluate(DELTAS) if d["text"].startswith("×")]
    assert len(deltas) == 2, deltas  # the true sensitivity and the true ε, both ×√128 = ×11.3
    assert {d["text"].split()[0] for d in deltas} == {"×11.3"}, deltas
    assert deltas[0]["color"] == deltas[1]["color"], deltas  # one meaning: worse than claimed
    r, g, _b = (int(v) for v in deltas[0]["color"].split("(")[1].split(")")[0].split(",")[:3])
    assert r > g, deltas  # red (bad), not green
    ticks = [t for t in page.evaluate(CURVE_TICKS) if t]
    assert ticks and set(ticks) <= {"1", "10", "100", "1,000", "10,000"}, ticks
