"""The verdict page in a real browser: a deep link opens one violating row with its evidence and
command, the figure's red markers are the file's certified excesses, a row clicked in the table opens
and goes into the URL, and the opened row's download is the file's row.

The table's fit at 1280 px, and that opening a row brings its evidence into view and marks it in the
figure, are ``tests/e2e/test_verdict_table_fit.py``'s.

Everything waits for a state (a heading, the figure, the URL, an idle script); nothing here times
the page (its speed against the Plotly floor is ``bench/page_timing.py``'s).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

from dpcore.verdicts import page_view as view
from dpcore.verdicts.document import load_shipped, verdict_of
from tests.e2e.idle import wait_idle

pytestmark = pytest.mark.e2e

FIGURE = ".st-key-verdicts-figure .js-plotly-plot"


def _idle(page, timeout: int = 120_000) -> None:  # type: ignore[no-untyped-def]
    wait_idle(page, timeout)


def _query(page) -> dict[str, str]:  # type: ignore[no-untyped-def]
    return page.evaluate("() => Object.fromEntries(new URLSearchParams(location.search))")


def _violating(doc: dict[str, Any]) -> dict[str, Any]:
    rows = [r for r in doc["rows"] if verdict_of(r) == "violates"]
    assert rows, "the shipped verdict file has no violating row (every control must violate)"
    return rows[0]


def test_a_deep_link_opens_one_violating_row(app_url: str, page, artifacts: Path) -> None:  # type: ignore[no-untyped-def]
    doc = load_shipped()
    row = _violating(doc)
    page.goto(f"{app_url}/verdicts?row={quote(row['name'])}")
    page.get_by_role("heading", name="Do public sanitizers keep their claims?").wait_for(timeout=120_000)
    page.locator(f"{FIGURE} .main-svg").first.wait_for(timeout=120_000)
    page.get_by_role("heading", name=row["name"], exact=True).wait_for(timeout=120_000)
    _idle(page)
    main = page.locator('[data-testid="stMain"]')
    assert main.locator('[data-testid="stException"]').count() == 0
    # the row's verdict in words, and the exact command that reproduces it
    alerts = " ".join(main.locator('[data-testid="stAlert"]').all_inner_texts())
    headline = view.safe_headline(row)
    assert headline[:1].upper() + headline[1:] in alerts, alerts
    code = main.locator('[data-testid="stCode"]').inner_text()
    assert row["command"] in " ".join(code.split()), code
    assert _query(page)["row"] == row["name"]
    # the figure: one red marker per violating row, at its certified excess, and the legend's words
    legend = page.locator(f"{FIGURE} .legendtext").all_text_contents()
    assert "certified excess (lower bound at 95%)" in legend, legend
    assert not any("private" in t for t in legend), legend
    drawn = page.evaluate(
        """(sel) => {
            const gd = document.querySelector(sel);
            return gd.data.filter(t => (t.name || '').startsWith('certified excess'))
                          .flatMap(t => t.customdata.map((n, i) => [n, t.x[i]]));
        }""",
        FIGURE,
    )
    want = {r["name"]: view.certified_excess(r) for r in doc["rows"] if verdict_of(r) == "violates"}
    assert dict(drawn) == pytest.approx(want), (drawn, want)
    # the opened row's download is the file's row
    with page.expect_download() as dl:
        page.get_by_role("button", name="Download this row (JSON)").click()
    path = artifacts / "verdicts-row.json"
    dl.value.save_as(str(path))
    got = json.loads(path.read_text(encoding="utf-8"))
    assert got["name"] == row["name"] and got["command"] == row["command"]
    assert got["audit"]["verdict"] == "violates"
    assert got["audit"]["pairs"] == json.loads(json.dumps(row["audit"]["pairs"]))
    page.screenshot(path=str(artifacts / "verdicts-row.png"), full_page=True)


def test_a_row_clicked_in_the_table_opens_and_goes_into_the_url(app_url: str, page, artifacts: Path) -> None:  # type: ignore[no-untyped-def]
    doc = load_shipped()
    rows = doc["rows"]
    i = (
        next(k for k, r in enumerate(rows) if verdict_of(r) == "not-detected")
        if any(verdict_of(r) == "not-detected" for r in rows)
        else 0
    )
    page.goto(f"{app_url}/verdicts")
    table = page.locator(".st-key-verdicts-table table")
    table.wait_for(timeout=120_000)
    page.locator(f"{FIGURE} .main-svg").first.wait_for(timeout=120_000)
    _idle(page)
    assert _query(page).get("row") == ""
    # the table is HTML: its i-th line is a row of cells, in the file's order
    line = table.locator("tbody tr").nth(i)
    assert line.locator("td").nth(1).inner_text() == rows[i]["name"]
    line.click()
    name = rows[i]["name"]
    page.wait_for_function(
        "(n) => new URLSearchParams(location.search).get('row') === n", arg=name, timeout=60_000
    )
    page.get_by_role("heading", name=name, exact=True).wait_for(timeout=60_000)
    _idle(page)
    if rows[i]["command"]:
        code = page.locator('[data-testid="stMain"] [data-testid="stCode"]').inner_text()
        assert rows[i]["command"] in " ".join(code.split()), code
    page.screenshot(path=str(artifacts / "verdicts-picked.png"), full_page=True)
