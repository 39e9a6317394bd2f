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
  const floors = gd.data.map((d, i) => [d, i]).filter(([d]) => d.name.startsWith("the claim's floor"))
                .map(([d, i]) => ({name: d.name, line: box(traces[i].querySelector('path.js-line'))}));
  return {labels, inf, floors, area: box(gd.querySelector('.nsewdrag')),
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
    # the headline: one plain sentence with the main numbers, above the chart
    assert "From ε = 1 to 10, SanText's sanitized text trains a classifier to" in body
    assert "the Bayesian attacker names" in body
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
        # one place, drawn as two markers (dpcore.viz.palette.unsanitized_marker): a grey ring and
        # the attacker's own marker inside it
        assert m["visible"] and len(m["points"]) == 2, m
        (cx, cy), (ix, iy) = [((p["x0"] + p["x1"]) / 2, (p["y0"] + p["y1"]) / 2) for p in m["points"]]
        assert abs(cx - ix) <= 1 and abs(cy - iy) <= 1, m
        assert area["x0"] - 1 <= cx <= area["x1"] + 1 and area["y0"] - 1 <= cy <= area["y1"] + 1, (m, area)
    # The claim's floors the caption points to are drawn inside the plot, clear of its bottom edge
    # (issue 50: at 0 they lay in the axis), and the caption names them.
    assert {f["name"] for f in r["floors"]} == {"the claim's floor, santext", "the claim's floor, santext+"}
    for f in r["floors"]:
        line = f["line"]
        assert area["y0"] <= line["y0"] and line["y1"] <= area["y1"] - 8, (f, area)
    assert "black dashed lines are the claims' floors" in body
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


FIG4_DRAWN = """() => [...document.querySelectorAll("[data-testid='stMain'] .js-plotly-plot")].some((gd) => {
    const c = gd.closest('[data-stale]');
    return (!c || c.getAttribute('data-stale') !== 'true')
        && (gd.data || []).some((t) => Array.isArray(t.text) && t.text.includes('ε=12'));
})"""

#: What is drawn at the centre of the page's heading and of the sidebar's "Mechanism" header.
UNCOVERED = """() => ['h1', '[data-testid="stSidebar"] h2'].map((sel) => {
  const el = document.querySelector(sel); const r = el.getBoundingClientRect();
  const top = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
  return {sel, covered: !(top && (el === top || el.contains(top)))};
})"""


def test_the_papers_fig4_setting_opens_on_its_story_with_nothing_over_the_heading(  # type: ignore[no-untyped-def]
    app_url: str, projector, artifacts: Path
) -> None:
    """Issue 50: the button's first figure came after 22 s and its tooltip stayed over the heading.
    At 1280×720 the speaker clicks it on the default page: the setting's trade-off chart (shipped
    precomputed) replaces the default one, with its headline and caption; no tooltip stays."""
    from tests.e2e.idle import wait_idle

    page = projector
    page.set_default_timeout(120_000)
    page.goto(f"{app_url}/attack")
    page.wait_for_selector('[class*="st-key-tradeoff-figure"] .js-plotly-plot', timeout=180_000)
    wait_idle(page, timeout=180_000)
    button = page.get_by_role("button", name="Paper's Fig. 4 setting")
    button.hover()
    button.click()
    page.wait_for_function(FIG4_DRAWN, timeout=180_000, polling=100)
    wait_idle(page, timeout=180_000)
    page.wait_for_function("() => location.search.includes('emb=bert')", timeout=60_000)
    # the pointer still rests on the button, as a speaker's would
    assert [c for c in page.evaluate(UNCOVERED) if c["covered"]] == []
    assert page.locator('[data-testid="stTooltipContent"]').count() == 0
    page.evaluate("() => window.scrollTo(0, 0)")
    page.screenshot(path=str(artifacts / "attack-fig4.png"))
    body = page.locator("body").inner_text()
    assert "From ε = 12 to 16, SanText's sanitized text trains a classifier to" in body
    assert "No claim's floor is drawn" in body and "shipped results of the paper's Fig. 4 setting" in body
    # the chart is on the first screen, whole
    box = page.locator('[class*="st-key-tradeoff-figure"] .stPlotlyChart').first.bounding_box()
    assert box is not None and 0 <= box["y"] and box["y"] + box["height"] <= 720, box
