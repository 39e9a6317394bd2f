"""Every page's tables fit a 1400-px window: no horizontal scrolling (issue 13, "Tables"), and the
rewriter pages' tables fit a 1280-px projector with the sidebar open (issue 58: the calibration
table's last column was cut off at 1280 px).

The column names themselves are checked without a browser in ``tests/test_table_columns.py``
(the grid draws its headers on a canvas).
"""

from __future__ import annotations

import pytest

from tests.e2e.idle import wait_idle

pytestmark = pytest.mark.e2e

TABLES = """() => [...document.querySelectorAll('[data-testid="stDataFrame"]')].map((d) => {
  const sc = d.querySelector('.dvn-scroller');
  return sc ? {scroll: sc.scrollWidth, client: sc.clientWidth} : null;
}).filter((g) => g && g.client > 0)"""


def _idle(page) -> None:  # type: ignore[no-untyped-def]
    wait_idle(page, timeout=120_000)  # the script has finished, a second ago


PAGES = [
    ("audit", None),
    ("audit_text?samples=2000&pairs=5", None),
    ("audit_rewriter", None),
    ("rewriter_calibration", None),
    ("verdicts?row=flawed:krr-overclaimed", None),
    ("sensitivity?pairs=1000&nmax=64", "Table"),
    ("accounting?tab=binary", None),
    ("accounting?tab=sampler&size=10000", None),
    ("sanitize", None),
]


def _tables_at(page, url: str, expander: str | None, count: int) -> list[dict]:  # type: ignore[no-untyped-def]
    page.goto(url)
    page.wait_for_selector('[data-testid="stDataFrame"]', state="attached", timeout=120_000)
    _idle(page)
    if expander:
        page.get_by_text(expander, exact=True).first.click()
    page.wait_for_function(f"() => ({TABLES})().length >= {count}", timeout=60_000)
    page.wait_for_timeout(500)  # the grid measures its columns after it is shown
    return page.evaluate(TABLES)


def test_tables_fit_without_horizontal_scrolling(app_url: str, page) -> None:  # type: ignore[no-untyped-def]
    """One tab through every page with a table, as a visitor clicking through (front end cached)."""
    for path, expander in PAGES:
        for g in _tables_at(page, f"{app_url}/{path}", expander, 1):
            assert g["scroll"] <= g["client"] + 1, f"{path}: a table is cut off horizontally: {g}"


#: The rewriter pages on a projector: (path, the expander that holds a second table, tables shown).
PROJECTOR_PAGES = [
    ("rewriter_calibration", "The estimate and the meaning retained of every cell", 2),
    ("audit_rewriter", None, 1),  # dpcore's DP-MLM, the page's default
    ("audit_rewriter?rw=flawed:dp-mlm-stopwords", None, 1),  # the flawed control
]


def test_the_rewriter_tables_fit_a_1280_px_projector(app_url: str, projector) -> None:  # type: ignore[no-untyped-def]
    """At 1280 px with the sidebar open, every column of the rewriter pages' tables is in view."""
    for path, expander, count in PROJECTOR_PAGES:
        geos = _tables_at(projector, f"{app_url}/{path}", expander, count)
        sidebar = projector.locator('[data-testid="stSidebar"]').bounding_box()
        assert sidebar is not None and sidebar["width"] > 200, f"{path}: the sidebar is not open: {sidebar}"
        assert len(geos) == count, f"{path}: {geos}"
        for g in geos:
            assert g["scroll"] <= g["client"] + 1, f"{path}: a table is cut off horizontally at 1280 px: {g}"
    # the check is not vacuous: in a narrower window the calibration's first table does scroll
    projector.set_viewport_size({"width": 900, "height": 720})
    geos = _tables_at(projector, f"{app_url}/rewriter_calibration", None, 1)
    assert geos[0]["scroll"] > geos[0]["client"] + 1, geos
