"""The "Accounting & samplers" page in a real browser: the selected tab is in the URL, formulas
render as math in expanders under the figures, and the binary-RR legend names both bar colours as
the headline does: the claim (green, it holds under LDP) and the place-value figure (grey)
(one page load)."""

from __future__ import annotations

import pytest

from dpcore.viz.accounting_figure import CLAIM_BARS, PLACE_VALUE_BARS, PLACE_VALUE_COLOUR
from dpcore.viz.palette import BAD, OK

pytestmark = pytest.mark.e2e

IDLE = '() => !document.querySelector(\'[data-testid="stApp"][data-test-script-state="running"]\')'

# Legend entries of the binary-RR figure with the colour of their bars.
LEGEND = """() => {
  const gd = [...document.querySelectorAll('.js-plotly-plot')].find(
    (g) => g.data.some((d) => d.type === 'bar'));
  return gd._fullData.filter((d) => d.type === 'bar' && d.showlegend !== false && d.visible === true)
           .map((d) => ({name: d.name, color: (d.marker || {}).color, n: d._length}));
}"""


def test_accounting_tab_deep_link_math_and_legend(app_url: str, page) -> None:  # type: ignore[no-untyped-def]
    page.goto(f"{app_url}/accounting?tab=binary")
    page.wait_for_selector('[role="tab"][aria-selected="true"]', timeout=60_000)
    page.wait_for_function(IDLE, timeout=60_000)
    selected = page.locator('[role="tab"][aria-selected="true"]').inner_text()
    assert "Binary encoding" in selected, selected
    # Both colours of the place-value bars have their own legend entry, in words.
    # Wait until the bar figure is laid out (its _fullData exists) on a cold, loaded server.
    page.wait_for_function(
        "() => [...document.querySelectorAll('.js-plotly-plot')].some((g) => g._fullData && "
        "g._fullData.some((d) => d.type === 'bar' && (d.name || '').includes('place-value')))",
        timeout=60_000,
    )
    legend = page.evaluate(LEGEND)
    colors = {e["name"]: e["color"] for e in legend}
    # issue 58: the chart agrees with the headline ("Under LDP the count holds"): the claim's bars
    # are the palette's "kept" green, the place-value figure a neutral grey, never "broken" red
    assert colors == {CLAIM_BARS: OK, PLACE_VALUE_BARS: PLACE_VALUE_COLOUR}, legend
    assert BAD not in colors.values(), legend
    # Formulas are typeset (KaTeX), not raw "e^{kε}" or "2^{i−1}".
    body = page.locator("body").inner_text()
    assert "^{" not in body
    assert page.locator(".katex").count() >= 3
    # ... and one click away: every formula sits in an expander under the figure (issue 50)
    assert page.locator('[data-testid="stExpander"] .katex').count() == page.locator(".katex").count()
    # Choosing another tab writes it into the URL.
    page.get_by_role("tab", name="Sampler inspector").click()
    page.wait_for_function("() => location.search.includes('tab=sampler')", timeout=30_000)
    page.get_by_role("tab", name="DPNR (word dropout)").click()
    page.wait_for_function("() => location.search.includes('tab=dpnr')", timeout=30_000)
