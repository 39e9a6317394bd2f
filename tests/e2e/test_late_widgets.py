"""Widgets whose code reaches the browser late keep a shared link's settings.

The browser loads each kind of widget's code on first use. Streamlit sends a widget's value only
in a run that set it through ``st.session_state`` (the page's first run does, from the URL): a
widget that mounts after a later run starts from its own default (an empty multiselect, a slider
at its first step), shows values the server does not use, and sends those defaults back with the
visitor's next change. The CI run of the cancellation test met this when a busy machine served
the multiselect's code after the test had already changed "Largest n": the distributions emptied,
and the simulation it then asked for never ran.

Here the browser is made to meet it every time: the code of three widget kinds is held back
until a setting has changed and its run has finished.
"""

from __future__ import annotations

import re

import pytest

pytestmark = pytest.mark.e2e

IDLE = '() => !document.querySelector(\'[data-testid="stApp"][data-test-script-state="running"]\')'
# The lazily loaded code of the multiselect, the (select) slider and the radio buttons.
LATE = re.compile(r".*/static/js/(Multiselect|Slider|Radio)\.[^/]*\.js$")
# The three have mounted: each draws its own element (the placeholder before it is empty).
MOUNTED = """() => ['stMultiSelect', 'stSliderThumbValue', 'stRadio'].every(
  (id) => document.querySelector(`[data-testid="stSidebar"] [data-testid="${id}"]`))"""
LINK = "dists=normal&pairs=100000&spacing=log&nmax=4&seed=3"


def _search(page) -> str:  # type: ignore[no-untyped-def]
    return str(page.evaluate("() => location.search"))


def test_widgets_that_mount_after_a_change_show_and_keep_the_links_settings(app_url: str, page) -> None:  # type: ignore[no-untyped-def]
    held: list = []
    page.route(LATE, lambda route: held.append(route))  # answered only when released below
    page.goto(f"{app_url}/sensitivity?{LINK}")
    box = page.get_by_label("Largest n")
    box.fill("5")
    box.press("Enter")
    page.wait_for_function("() => location.search.includes('nmax=5')", timeout=60_000)
    page.wait_for_function(IDLE, timeout=60_000)
    # The run for the change has finished while the three widgets were still unmounted; without
    # their code held back, this test would prove nothing.
    assert sorted(re.sub(r"\..*", "", r.request.url.rsplit("/", 1)[1]) for r in held) == [
        "Multiselect",
        "Radio",
        "Slider",
    ]
    assert {"dists=normal", "pairs=100000", "spacing=log"} <= set(_search(page)[1:].split("&"))
    for route in held:
        route.continue_()
    page.unroute(LATE)

    sidebar = page.locator('[data-testid="stSidebar"]')
    page.wait_for_function(MOUNTED, timeout=60_000)
    dists = sidebar.locator('[data-testid="stMultiSelect"]').inner_text()
    assert "normal" in dists and "uniform" not in dists, dists
    assert sidebar.locator('[data-testid="stSliderThumbValue"]').inner_text().strip() == "100,000"
    assert sidebar.get_by_label("log-spaced").is_checked()

    # The next change sends every widget's value back: the link's settings must survive it.
    box.fill("6")
    box.press("Enter")
    page.wait_for_function("() => location.search.includes('nmax=6')", timeout=60_000)
    page.wait_for_function(IDLE, timeout=60_000)
    assert {"dists=normal", "pairs=100000", "spacing=log", "seed=3"} <= set(_search(page)[1:].split("&"))
