"""Every page tells its story on the first screen of a projector (issue 50).

At 1280×720, each page's headline (one plain sentence) and its main figure are in the first
viewport without scrolling: the main figure's top edge is inside the window and at least half of
the figure shows. The same holds in talk mode (``?talk=1``), where text and figures are larger and
everything but the story is collapsed. A screenshot of each first screen goes to
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
  const h = document.querySelector('[data-testid="stHeading"] h1, h1');
  const head = document.querySelector('[data-testid="stMarkdownContainer"] p');
  const box = (e) => { if (!e) return null; const r = e.getBoundingClientRect();
                       return {top: r.top, bottom: r.bottom, height: r.height}; };
  return {figure: box(el), title: box(h), header: box(document.querySelector('[data-testid="stHeader"]')),
          scrollY: window.scrollY};
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
    assert 0 <= fig["top"] < HEIGHT, (
        f"{path}: the main figure starts at {fig['top']:.0f} px, below the first screen"
    )
    visible = min(fig["bottom"], HEIGHT) - fig["top"]
    assert visible >= 0.5 * fig["height"], (
        f"{path}: only {visible:.0f} of the figure's {fig['height']:.0f} px are on the first screen"
    )


@pytest.mark.parametrize("talk", [False, True], ids=["plain", "talk"])
@pytest.mark.parametrize(("path", "key"), PAGES, ids=[p or "home" for p, _ in PAGES])
def test_the_main_figure_is_on_the_first_screen(  # type: ignore[no-untyped-def]
    app_url: str, projector, artifacts, path: str, key: str, talk: bool
) -> None:
    url = f"{path}?talk=1" if talk else path
    geo = _first_screen(projector, app_url, url, key, f"{path or 'home'}{'-talk' if talk else ''}", artifacts)
    _check(geo, url)
