"""Widgets whose code reaches the browser late keep a shared link's settings.

The browser loads each kind of widget's code on first use. Streamlit sends a widget's value only
in a run that set it through ``st.session_state`` (the page's first run does, from the URL): a
widget that mounts after a later run starts from its own default (an empty multiselect, a slider
at its first step), shows values the server does not use, and sends those defaults back with the
visitor's next change. The CI run of the cancellation test met this when a busy machine served
the multiselect's code after the test had already changed "Largest n": the distributions emptied,
and the simulation it then asked for never ran.

Here the browser is made to meet it every time: the code of some widget kinds is held back
until a setting has changed and its run has finished.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

pytestmark = pytest.mark.e2e

IDLE = '() => !document.querySelector(\'[data-testid="stApp"][data-test-script-state="running"]\')'
# The lazily loaded code of the multiselect, the (select) slider and the radio buttons.
LATE = re.compile(r".*/static/js/(Multiselect|Slider|Radio)\.[^/]*\.js$")
# The three have mounted: each draws its own element (the placeholder before it is empty).
MOUNTED = """() => ['stMultiSelect', 'stSliderThumbValue', 'stRadio'].every(
  (id) => document.querySelector(`[data-testid="stSidebar"] [data-testid="${id}"]`))"""
LINK = "dists=normal&pairs=100000&spacing=log&nmax=4&seed=3"


@pytest.fixture()
def page(fresh_page):  # type: ignore[no-untyped-def]
    """A tab with an empty cache: the widgets' code must come from the server, when released."""
    return fresh_page


def _example_text() -> str:
    """The Sanitize page's example text, read without running the page."""
    tree = ast.parse((Path(__file__).parents[2] / "pages" / "sanitize.py").read_text("utf-8"))
    for node in tree.body:
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") == "DEFAULT_TEXT":
            return str(ast.literal_eval(node.value))
    raise AssertionError("pages/sanitize.py no longer defines DEFAULT_TEXT")


def _hold(page, pattern: re.Pattern[str]) -> list:  # type: ignore[no-untyped-def]
    """Requests for ``pattern`` go unanswered until the test releases them (``_release``)."""
    held: list = []
    page.route(pattern, lambda route: held.append(route))
    return held


def _release(page, pattern: re.Pattern[str], held: list) -> None:  # type: ignore[no-untyped-def]
    for route in held:
        route.continue_()
    page.unroute(pattern)


def _change(page, label: str, value: str, url_has: str) -> None:  # type: ignore[no-untyped-def]
    box = page.locator('[data-testid="stSidebar"]').get_by_label(label, exact=True)
    box.fill(value)
    box.press("Enter")
    page.wait_for_function(f"() => location.search.includes('{url_has}')", timeout=60_000)
    page.wait_for_function(IDLE, timeout=60_000)


def _search(page) -> str:  # type: ignore[no-untyped-def]
    return str(page.evaluate("() => location.search"))


def test_widgets_that_mount_after_a_change_show_and_keep_the_links_settings(app_url: str, page) -> None:  # type: ignore[no-untyped-def]
    held = _hold(page, LATE)
    page.goto(f"{app_url}/sensitivity?{LINK}")
    _change(page, "Largest n", "5", "nmax=5")
    # The run for the change has finished while the three widgets were still unmounted; without
    # their code held back, this test would prove nothing.
    assert sorted(re.sub(r"\..*", "", r.request.url.rsplit("/", 1)[1]) for r in held) == [
        "Multiselect",
        "Radio",
        "Slider",
    ]
    assert {"dists=normal", "pairs=100000", "spacing=log"} <= set(_search(page)[1:].split("&"))
    _release(page, LATE, held)

    sidebar = page.locator('[data-testid="stSidebar"]')
    page.wait_for_function(MOUNTED, timeout=60_000)
    dists = sidebar.locator('[data-testid="stMultiSelect"]').inner_text()
    assert "normal" in dists and "uniform" not in dists, dists
    assert sidebar.locator('[data-testid="stSliderThumbValue"]').inner_text().strip() == "100,000"
    assert sidebar.get_by_label("log-spaced").is_checked()

    # The next change sends every widget's value back: the link's settings must survive it.
    _change(page, "Largest n", "6", "nmax=6")
    assert {"dists=normal", "pairs=100000", "spacing=log", "seed=3"} <= set(_search(page)[1:].split("&"))


def test_a_text_box_that_mounts_after_a_change_shows_and_keeps_the_text(app_url: str, page) -> None:  # type: ignore[no-untyped-def]
    # The pasted text is no URL parameter; the page sets it through the session (the example
    # text on a first visit), so its box has the same race.
    text_area = re.compile(r".*/static/js/TextArea\.[^/]*\.js$")
    held = _hold(page, text_area)
    page.goto(f"{app_url}/sanitize?source=paste&eps=3")
    _change(page, "ε", "4", "eps=4")
    assert held and page.locator("textarea").count() == 0  # the box is not drawn yet
    _release(page, text_area, held)
    page.locator("textarea").wait_for(timeout=60_000)
    assert page.locator("textarea").input_value() == _example_text()
    _change(page, "ε", "5", "eps=5")
    assert page.locator("textarea").input_value() == _example_text()
