"""Every page tells its story on the first screen of a projector (issue 50).

At 1280×720, each page's headline (one plain sentence) and its main figure are in the first
viewport without scrolling: the main figure is whole, its plot, axis titles and legend inside the
window (issue 58). The same holds in talk mode (``?talk=1``), where text and figures are larger
and everything but the story is collapsed, and where the sidebar starts collapsed on every load,
even after a visitor opened it. A screenshot of each first screen goes to
``tests/artifacts/first-screen-<page>[-talk].png``.
"""

from __future__ import annotations

import pytest

from tests.e2e.idle import wait_idle

pytestmark = pytest.mark.e2e

WIDTH, HEIGHT = 1280, 720

#: (page path with the query a first visitor meets, the main figure's key)
PAGES = [
    ("", "glance-figure"),  # Home is the default page, at the root (/home?talk=1 is not a page)
    ("audit", "audit-figure"),
    ("audit_text", "textaudit-figure"),
    ("audit_rewriter", "rewriter-tradeoff"),
    ("rewriter_calibration", "calibration-figure"),
    ("verdicts", "verdicts-figure"),
    ("sensitivity", "curve"),
    ("accounting", "dpnr"),
    ("sanitize", "sanitize-figure"),
    ("attack", "tradeoff-figure"),
]

GEOMETRY = """(key) => {
  const el = document.querySelector(`[class*="st-key-${key}"] .stPlotlyChart`)
        || document.querySelector(`[class*="st-key-${key}"]`);
  const plot = el && el.querySelector('.js-plotly-plot');
  const h = document.querySelector('[data-testid="stHeading"] h1, h1');
  const box = (e) => { if (!e) return null; const r = e.getBoundingClientRect();
    return {top: r.top, bottom: r.bottom, left: r.left, right: r.right, height: r.height}; };
  const part = (sel) => plot ? box(plot.querySelector(sel)) : null;
  return {figure: box(el), title: box(h), header: box(document.querySelector('[data-testid="stHeader"]')),
          parts: {legend: part('.legend'), "x-axis title": part('.xtitle'), "y-axis title": part('.ytitle'),
                  "x-axis ticks": part('.xaxislayer-above'), title: part('.gtitle')},
          scrollY: window.scrollY};
}"""

#: The sidebar's width on screen (0 when collapsed).
SIDEBAR_WIDTH = """() => {
  const s = document.querySelector('[data-testid="stSidebar"]');
  return s ? s.getBoundingClientRect().width : 0;
}"""


def _first_screen(page, app_url: str, path: str, key: str, shot: str, artifacts) -> dict:  # type: ignore[no-untyped-def]
    page.goto(f"{app_url}/{path}")
    page.wait_for_selector(f'[class*="st-key-{key}"]', state="attached", timeout=120_000)
    wait_idle(page, timeout=180_000)
    page.wait_for_selector(f'[class*="st-key-{key}"] .js-plotly-plot', timeout=60_000)
    page.evaluate("() => window.scrollTo(0, 0)")
    geo = page.evaluate(GEOMETRY, key)
    page.screenshot(path=str(artifacts / f"first-screen-{shot}.png"))
    return geo


def _check(geo: dict, path: str) -> None:
    fig = geo["figure"]
    assert fig is not None, f"{path}: the main figure is not on the page"
    assert geo["title"] is not None and geo["title"]["top"] >= 0, f"{path}: no title on the first screen"
    if geo["header"] is not None:  # Streamlit's top bar lies over the page: the title starts below it
        assert geo["title"]["top"] >= geo["header"]["bottom"] - 8, (
            f"{path}: the title is under the top bar: {geo}"
        )
    assert 0 <= fig["top"] and fig["bottom"] <= HEIGHT and fig["right"] <= WIDTH, (
        f"{path}: the main figure spans {fig['top']:.0f}–{fig['bottom']:.0f} px: not whole on the "
        f"{WIDTH}×{HEIGHT} first screen"
    )
    for name, part in geo["parts"].items():  # a part outside the figure is cut off by it
        if part is None or part["height"] == 0:
            continue
        assert fig["top"] - 1 <= part["top"] and part["bottom"] <= fig["bottom"] + 1, (
            f"{path}: the figure's {name} ({part['top']:.0f}–{part['bottom']:.0f} px) is cut off by "
            f"the figure ({fig['top']:.0f}–{fig['bottom']:.0f} px)"
        )
        assert fig["left"] - 1 <= part["left"] and part["right"] <= fig["right"] + 1, (
            f"{path}: the figure's {name} ({part['left']:.0f}–{part['right']:.0f} px across) is cut "
            f"off by the figure ({fig['left']:.0f}–{fig['right']:.0f} px)"
        )


@pytest.mark.parametrize("talk", [False, True], ids=["plain", "talk"])
@pytest.mark.parametrize(("path", "key"), PAGES, ids=[p or "home" for p, _ in PAGES])
def test_the_main_figure_is_on_the_first_screen(  # type: ignore[no-untyped-def]
    app_url: str, projector, artifacts, path: str, key: str, talk: bool
) -> None:
    url = f"{path}?talk=1" if talk else path
    geo = _first_screen(projector, app_url, url, key, f"{path or 'home'}{'-talk' if talk else ''}", artifacts)
    _check(geo, url)


def test_talk_mode_starts_with_the_sidebar_collapsed_even_after_it_was_opened(  # type: ignore[no-untyped-def]
    app_url: str, projector
) -> None:
    """A speaker who opened the sidebar once still starts the next ``?talk=1`` load without it.

    Streamlit remembers a sidebar the visitor opened (in the browser's localStorage) and opens it
    again on the next load, whatever ``initial_sidebar_state`` says; talk mode closes it.
    """
    projector.goto(f"{app_url}/sensitivity?talk=1")
    projector.wait_for_selector('[class*="st-key-curve"] .js-plotly-plot', timeout=120_000)
    wait_idle(projector)
    assert projector.evaluate(SIDEBAR_WIDTH) == 0, "talk mode's first load shows the sidebar"
    projector.click('[data-testid="stExpandSidebarButton"]')
    projector.wait_for_function(f"() => ({SIDEBAR_WIDTH})() > 0")
    wait_idle(projector)
    assert projector.evaluate(SIDEBAR_WIDTH) > 0, "the sidebar closed again by itself within a load"
    for path in ("sensitivity?talk=1", "accounting?talk=1"):
        projector.goto(f"{app_url}/{path}")
        projector.wait_for_selector('[data-testid="stSidebar"]', state="attached", timeout=120_000)
        wait_idle(projector)
        projector.wait_for_function(f"() => ({SIDEBAR_WIDTH})() === 0", timeout=30_000)
    # a plain load afterwards is Streamlit's own decision again: nothing of talk mode is remembered
    remembered = projector.evaluate(
        "() => Object.keys(localStorage).filter((k) => k.startsWith('stSidebarCollapsed-'))"
    )
    assert remembered == [], f"talk mode left the sidebar's state in localStorage: {remembered}"
