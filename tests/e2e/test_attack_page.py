"""The "Attack & utility" page in a real browser: a small deep-linked sweep draws both figures,
and the figures read clearly (one page load, several assertions on the rendered figures)."""

from __future__ import annotations

from pathlib import Path

import pytest

pytestmark = pytest.mark.e2e

IDLE = '() => !document.querySelector(\'[data-testid="stApp"][data-test-script-state="running"]\')'

# Bounding boxes of the rendered ε labels of the trade-off figure, of its ε = ∞ markers, and of
# its plot area (all in page pixels).
RENDERED = """() => {
  const gd = document.querySelectorAll('.js-plotly-plot')[0];
  const box = (el) => { const r = el.getBoundingClientRect();
                        return {x0: r.left, x1: r.right, y0: r.top, y1: r.bottom}; };
  const labels = [...gd.querySelectorAll('.scatterlayer .textpoint text')]
                   .filter((t) => t.textContent.trim()).map((t) => ({text: t.textContent, ...box(t)}));
  const traces = [...gd.querySelectorAll('.scatterlayer .trace')];
  const inf = gd.data.map((d, i) => [d, i]).filter(([d]) => d.name.startsWith('unsanitized (ε = ∞)'))
                .map(([d, i]) => ({name: d.name, visible: d.visible !== false,
                                   points: [...traces[i].querySelectorAll('path.point')].map(box)}));
  return {labels, inf, area: box(gd.querySelector('.nsewdrag')),
          names: gd.data.filter((d) => d.showlegend !== false).map((d) => d.name)};
}"""

TABLES = """() => [...document.querySelectorAll('[data-testid="stDataFrame"]')].map((d) => {
  const sc = d.querySelector('.dvn-scroller');
  return sc ? {scroll: sc.scrollWidth, client: sc.clientWidth} : null;
})"""

EPS_TICKS = """() => {
  const gd = document.querySelectorAll('.js-plotly-plot')[1];
  return [...gd.querySelectorAll('.xaxislayer-above text')].map((t) => t.textContent);
}"""


def test_attack_page_deep_link_draws_readable_figures(app_url: str, page, artifacts: Path) -> None:  # type: ignore[no-untyped-def]
    page.goto(
        f"{app_url}/attack?mechs=santext,santext%2B&eps=1,3,10&vsize=2000&n=10&ntrain=500&ntest=200"
        "&attacks=bayes-unigram&seed=1"
    )
    page.wait_for_function("() => document.querySelectorAll('.js-plotly-plot').length >= 2", timeout=120_000)
    page.wait_for_function(IDLE, timeout=120_000)
    body = page.locator("body").inner_text()
    assert "Privacy–utility trade-off" in body
    page.screenshot(path=str(artifacts / "attack.png"), full_page=True)

    r = page.evaluate(RENDERED)
    # Legend entries in words: no paper section numbers, every attacker named as one.
    assert r["names"], "the trade-off figure has no legend entries"
    assert all("§" not in n for n in r["names"]), r["names"]
    assert any(n.startswith("santext, Bayesian attacker") for n in r["names"]), r["names"]
    # ε labels: at least one per ε, none overlapping another.
    texts = [b["text"] for b in r["labels"]]
    assert {"ε=1", "ε=3", "ε=10", "ε=∞"} <= set(texts), texts
    boxes = r["labels"]
    for i, a in enumerate(boxes):
        for b in boxes[i + 1 :]:
            x_overlap = min(a["x1"], b["x1"]) > max(a["x0"], b["x0"])
            overlap = x_overlap and min(a["y1"], b["y1"]) > max(a["y0"], b["y0"])
            assert not overlap, f"ε labels overlap: {a} and {b}"
    # Every ε = ∞ marker is drawn, visible, and inside the plot area.
    assert len(r["inf"]) == 1, r["inf"]  # one attacker chosen: one ∞ marker (mechanism-independent)
    area = r["area"]
    for m in r["inf"]:
        assert m["visible"] and len(m["points"]) == 1, m
        p = m["points"][0]
        cx, cy = (p["x0"] + p["x1"]) / 2, (p["y0"] + p["y1"]) / 2
        assert area["x0"] - 1 <= cx <= area["x1"] + 1 and area["y0"] - 1 <= cy <= area["y1"] + 1, (m, area)
    # Tables: human column names, and every column visible at 1400 px (no horizontal scrolling).
    # a data grid draws its scroller after the page is idle (late under load): wait for it
    page.wait_for_function(
        """() => { const d = [...document.querySelectorAll('[data-testid="stDataFrame"]')];
                   return d.length >= 2 && d.every((x) => x.querySelector('.dvn-scroller')); }""",
        timeout=120_000,
    )
    grids = page.evaluate(TABLES)
    # the defense-rate and accuracy tables (and the all-mechanism comparison, when shipped)
    assert len(grids) >= 2 and all(grids), grids
    for g in grids:
        assert g["scroll"] <= g["client"] + 1, f"a table is cut off horizontally: {g} of {grids}"
    # The ε axis of the second figure labels decades only.
    ticks = [t for t in page.evaluate(EPS_TICKS) if t]
    assert ticks and set(ticks) <= {"0.1", "1", "10", "100"}, ticks
