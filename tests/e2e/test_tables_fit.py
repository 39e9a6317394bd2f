"""Every page's tables fit a 1400-px window: no horizontal scrolling (issue 13, "Tables").

The column names themselves are checked without a browser in ``tests/test_table_columns.py``
(the grid draws its headers on a canvas).
"""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.e2e

TABLES = """() => [...document.querySelectorAll('[data-testid="stDataFrame"]')].map((d) => {
  const sc = d.querySelector('.dvn-scroller');
  return sc ? {scroll: sc.scrollWidth, client: sc.clientWidth} : null;
}).filter((g) => g && g.client > 0)"""


def _idle(page) -> None:  # type: ignore[no-untyped-def]
    page.wait_for_function(
        '() => !document.querySelector(\'[data-testid="stApp"][data-test-script-state="running"]\')',
        timeout=120_000,
    )


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


def test_tables_fit_without_horizontal_scrolling(app_url: str, page) -> None:  # type: ignore[no-untyped-def]
    """One tab through every page with a table, as a visitor clicking through (front end cached)."""
    for path, expander in PAGES:
        page.goto(f"{app_url}/{path}")
        page.wait_for_selector('[data-testid="stDataFrame"]', state="attached", timeout=120_000)
        _idle(page)
        if expander:
            page.get_by_text(expander, exact=True).first.click()
        page.wait_for_function(f"() => ({TABLES})().length > 0", timeout=60_000)
        page.wait_for_timeout(500)  # the grid measures its columns after it is shown
        for g in page.evaluate(TABLES):
            assert g["scroll"] <= g["client"] + 1, f"{path}: a table is cut off horizontally: {g}"
