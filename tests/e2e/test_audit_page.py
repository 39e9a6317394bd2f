"""The audit page in a real browser: plot renders, a deep link applies, a download works."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.e2e.idle import wait_idle

pytestmark = pytest.mark.e2e


def _wait_for_plot(page) -> None:  # type: ignore[no-untyped-def]
    page.wait_for_selector(".js-plotly-plot .main-svg", state="visible", timeout=60_000)
    wait_idle(page, timeout=60_000)  # the script has finished, a second ago


# Every data trace's drawn y values with its hover labels (the legend-only entries, one per
# mechanism, carry no data), the CI bands, fonts, the legend and the y range.
AUDIT_FIGURE = """() => {
  const gd = document.querySelector('.st-key-audit-figure .js-plotly-plot');
  const fl = gd._fullLayout;
  const traces = gd._fullData.map((d, i) => ({
      name: d.name, fill: d.fill, data: Boolean(d.customdata) || d.fill === 'toself',
      legend: d.showlegend !== false,
      y: gd.calcdata[i].map((c) => c.y),
      labels: gd.calcdata[i].map((c, j) => {
        const cd = d.customdata ? d.customdata[j] : null;
        return Array.isArray(cd) ? String(cd[0]) : String(cd);
      })})).filter((t) => t.data || t.legend);
  return {font: fl.font.size, xtick: fl.xaxis.tickfont.size, ytick: fl.yaxis.tickfont.size,
          yrange: fl.yaxis.range, bands: traces.filter((t) => t.fill === 'toself').map((t) => t.name),
          legend: traces.filter((t) => t.legend).map((t) => t.name),
          traces: traces.filter((t) => t.data && t.fill !== 'toself')};
}"""


def test_audit_page_plots_and_screenshot(app_url: str, page, artifacts: Path) -> None:  # type: ignore[no-untyped-def]
    page.goto(f"{app_url}/audit")
    _wait_for_plot(page)
    legend = page.locator(".js-plotly-plot .legendtext").all_text_contents()
    assert any(t.startswith("adept") for t in legend), legend
    assert any(t.startswith("dptext") for t in legend), legend
    page.screenshot(path=str(artifacts / "audit.png"), full_page=True)
    f = page.evaluate(AUDIT_FIGURE)
    # Readable on a projector: base and tick fonts ≥ 14 px; one legend entry per mechanism.
    assert f["font"] >= 14 and f["xtick"] >= 14 and f["ytick"] >= 14, f
    assert f["legend"] == ["copy", "random", "laplace", "adept", "dptext"], f["legend"]
    # ∞ has its own band, above every finite value drawn, and copy and dptext both show there,
    # on different rows.
    inf = {t["name"]: t for t in f["traces"] if "∞" in t["labels"]}
    names = " ".join(inf)
    assert "copy" in names and "dptext" in names, list(inf)
    inf_y = {n: {y for y, lab in zip(t["y"], t["labels"], strict=True) if lab == "∞"} for n, t in inf.items()}
    finite_y = [
        y for t in f["traces"] for y, lab in zip(t["y"], t["labels"], strict=True) if lab not in ("∞", "n/a")
    ]
    assert min(min(v) for v in inf_y.values()) > max(finite_y), (inf_y, max(finite_y))
    copy_rows = set().union(*(v for n, v in inf_y.items() if n.startswith("copy")))
    dptext_rows = set().union(*(v for n, v in inf_y.items() if n.startswith("dptext")))
    assert not copy_rows & dptext_rows, (copy_rows, dptext_rows)
    assert f["yrange"][1] > max(max(v) for v in inf_y.values()), f["yrange"]  # inside the plot
    # No Monte-Carlo band of an infinite curve covers the chart.
    assert not [n for n in f["bands"] if n.split(":")[0] in ("copy", "dptext")], f["bands"]


def test_audit_deep_link_and_download(app_url: str, page, artifacts: Path) -> None:  # type: ignore[no-untyped-def]
    page.goto(f"{app_url}/audit?mechs=laplace,gaussian&eps=2&nmin=4&nmax=64&mc=false")
    _wait_for_plot(page)
    legend = page.locator(".js-plotly-plot .legendtext").all_text_contents()
    assert any(t.startswith("laplace") for t in legend), legend
    assert not any(t.startswith("dptext") for t in legend), legend
    assert "eps=2" in page.url
    with page.expect_download() as dl:
        page.get_by_role("button", name="Download JSON").click()
    path = artifacts / "audit-download.json"
    dl.value.save_as(str(path))
    payload = json.loads(path.read_text())
    assert payload["parameters"]["epsilon"] == 2.0
    assert payload["parameters"]["dims"] == [4, 8, 16, 32, 64]
    assert {r["mechanism"] for r in payload["results"]} == {"laplace", "gaussian"}
    page.screenshot(path=str(artifacts / "audit-deeplink.png"), full_page=True)
