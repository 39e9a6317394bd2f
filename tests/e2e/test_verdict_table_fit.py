"""The verdict table on a 1280-px projector (issue 50): no cell is cut off, and opening a row brings
its evidence into view and marks it in the figure.

The table is an HTML table (its cells are DOM elements, unlike ``st.dataframe``'s canvas), so the
test reads every cell: a cell whose content is wider than the cell (``scrollWidth`` >
``clientWidth``) is clipped or runs into its neighbour. The test first shows that it sees such a
cell when there is one (cells forced onto one line, as a grid draws them), then that the page has
none, at 1280×720 with the sidebar open and in talk mode, and after sorting.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from dpcore.verdicts.document import load_shipped, verdict_of
from dpcore.viz.verdicts_figure import row_label
from tests.e2e.idle import wait_idle

pytestmark = pytest.mark.e2e

WIDTH, HEIGHT = 1280, 720
TABLE = ".st-key-verdicts-table table"
FIGURE = ".st-key-verdicts-figure .js-plotly-plot"

#: Every cell (header and body) whose content is wider than the cell, and the table against the
#: block it sits in.
CLIPPED = """(sel) => {
  const table = document.querySelector(sel);
  if (!table) return null;
  const cells = [...table.querySelectorAll('th, td')];
  const clipped = cells.filter((c) => c.scrollWidth > c.clientWidth + 1)
    .map((c) => ({text: c.textContent, scroll: c.scrollWidth, client: c.clientWidth}));
  const box = table.parentElement.getBoundingClientRect();
  const t = table.getBoundingClientRect();
  return {cells: cells.length, clipped, table: t.width, room: box.width, right: t.right,
          window: window.innerWidth};
}"""

#: Where the opened row's heading is, and whether the figure marks the row.
OPENED = """([name, label]) => {
  const heading = [...document.querySelectorAll('[data-testid="stMain"] h3')]
    .find((h) => h.textContent.trim() === name);
  const gd = document.querySelector('.st-key-verdicts-figure .js-plotly-plot');
  const shapes = (gd && gd.layout.shapes) || [];
  const band = shapes.find((s) => s.name === 'opened row');
  const ticks = gd ? [gd.layout.yaxis, gd.layout.yaxis2].filter(Boolean)
    .flatMap((a) => (a.ticktext || []).map((t, i) => [t, a.tickvals[i]])) : [];
  const tick = ticks.find(([t]) => t === `<b>▶ ${label}</b>`);
  const r = heading ? heading.getBoundingClientRect() : null;
  return {heading: r && {top: r.top, bottom: r.bottom}, height: window.innerHeight,
          band: band ? {y0: band.y0, y1: band.y1} : null, line: tick ? tick[1] : null};
}"""


def _open(page, url: str) -> None:  # type: ignore[no-untyped-def]
    page.goto(url)
    page.locator(f"{FIGURE} .main-svg").first.wait_for(timeout=120_000)
    wait_idle(page, timeout=120_000)


def _show_table(page) -> None:  # type: ignore[no-untyped-def]
    """Talk mode keeps the table in a collapsed expander: open it."""
    if not page.locator(TABLE).is_visible():
        page.get_by_text("The table: every row", exact=False).first.click()
    page.locator(TABLE).wait_for(state="visible", timeout=60_000)


#: The table shows itself sorted up by the column ``name`` (its header carries the mark).
SORTED_UP = """([sel, name]) => [...document.querySelectorAll(`${sel} th`)]
  .some((th) => th.textContent === name + " ▲")"""


def _sort_by(page, column: str) -> None:  # type: ignore[no-untyped-def]
    """Click a column's name and wait until the table shows itself sorted by it. A table that the
    component draws anew before the click took (its first draw after the expander opened, on a busy
    machine) has no sort: the click is repeated on the table then shown."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    for _ in range(3):
        page.locator(f"{TABLE} th", has_text=column).click()
        try:
            page.wait_for_function(SORTED_UP, arg=[TABLE, column], timeout=15_000)
            return
        except PlaywrightTimeout:
            continue
    raise AssertionError(f"the table does not show itself sorted by {column!r} after three clicks")


def _fits(page, where: str) -> dict[str, Any]:  # type: ignore[no-untyped-def]
    geo = page.evaluate(CLIPPED, TABLE)
    assert geo is not None, f"{where}: no HTML table"
    assert geo["cells"] >= 8 * len(load_shipped()["rows"]) // 2, geo
    assert not geo["clipped"], f"{where}: cells cut off: {geo['clipped']}"
    assert geo["table"] <= geo["room"] + 1 and geo["right"] <= geo["window"], f"{where}: too wide: {geo}"
    return geo


def test_the_check_sees_a_clipped_cell(app_url: str, projector) -> None:  # type: ignore[no-untyped-def]
    """The measurement is not vacuous: forced onto one line, as a grid draws them, cells overflow."""
    _open(projector, f"{app_url}/verdicts")
    projector.locator(TABLE).wait_for(timeout=60_000)
    projector.add_style_tag(
        content=f"{TABLE} td {{ white-space: nowrap !important; overflow-wrap: normal !important; }}"
    )
    geo = projector.evaluate(CLIPPED, TABLE)
    texts = [c["text"] for c in geo["clipped"]]
    assert any(t.startswith("no violation found; would catch") for t in texts), texts


@pytest.mark.parametrize("talk", [False, True], ids=["plain", "talk"])
def test_no_cell_of_the_verdict_table_is_cut_off_at_1280_px(  # type: ignore[no-untyped-def]
    app_url: str, projector, artifacts: Path, talk: bool
) -> None:
    _open(projector, f"{app_url}/verdicts" + ("?talk=1" if talk else ""))
    _show_table(projector)
    _fits(projector, "talk mode" if talk else "sidebar open")
    projector.locator(TABLE).scroll_into_view_if_needed()
    projector.screenshot(path=str(artifacts / f"verdict-table-1280{'-talk' if talk else ''}.png"))
    # sorted by a column, still nothing cut off; the numbers sort as numbers
    _sort_by(projector, "draws")
    order = projector.locator(f"{TABLE} tbody tr").evaluate_all("(rs) => rs.map((r) => r.dataset.name)")
    draws = {r["name"]: (r.get("audit") or {}).get("samples_drawn") for r in load_shipped()["rows"]}
    known = [draws[n] for n in order if draws[n] is not None]
    assert known == sorted(known) and all(draws[n] is None for n in order[len(known) :]), order
    _fits(projector, "sorted by draws")


def _a_row_far_down(doc: dict[str, Any]) -> dict[str, Any]:
    """A row that ran, far down the table (its evidence was 1,800 px below it before)."""
    ran = [r for r in doc["rows"] if r["status"] == "ran" and verdict_of(r) == "not-detected"]
    return ran[-1]


def test_opening_a_row_brings_its_evidence_into_view_and_marks_it_in_the_figure(  # type: ignore[no-untyped-def]
    app_url: str, projector, artifacts: Path
) -> None:
    row = _a_row_far_down(load_shipped())
    _open(projector, f"{app_url}/verdicts")
    line = projector.locator(f'{TABLE} tbody tr[data-name="{row["name"]}"]')
    line.scroll_into_view_if_needed()
    before = projector.evaluate(OPENED, [row["name"], row_label(row)])
    assert before["heading"] is None and before["band"] is None
    line.click()
    projector.wait_for_function(
        "(n) => new URLSearchParams(location.search).get('row') === n", arg=row["name"], timeout=60_000
    )
    # the evidence's heading comes into the window, and the figure marks the row's line
    projector.wait_for_function(
        f"""(args) => {{ const o = ({OPENED})(args);
            return o.heading && o.heading.top >= 0 && o.heading.bottom <= o.height && o.band; }}""",
        arg=[row["name"], row_label(row)],
        timeout=60_000,
    )
    wait_idle(projector, timeout=60_000)
    got = projector.evaluate(OPENED, [row["name"], row_label(row)])
    assert got["heading"]["top"] >= 0 and got["heading"]["bottom"] <= HEIGHT, got
    assert got["line"] is not None and got["band"]["y0"] < got["line"] < got["band"]["y1"], got
    projector.screenshot(path=str(artifacts / "verdict-row-opened-1280.png"))
    # the table marks it too
    assert "dpv-opened" in (
        projector.locator(f'{TABLE} tbody tr[data-name="{row["name"]}"]').get_attribute("class") or ""
    )
