"""Browser end-to-end fixtures: a real ``streamlit run app.py`` on localhost and headless
Debian Chromium driven by Playwright.

Fixtures
--------
``app_url``
    Base URL of a dashboard server started once per test session (pages live at
    ``{app_url}/<url_path>``).
``page``
    A new Playwright tab (1400×1000) in headless Chromium, in the session's one browser
    profile (``profile``).
``projector``
    The same at a projector's 1280×720.
``fresh_page``
    A tab in a context of its own with an empty cache (``browser.new_context``), for a test
    about what the browser loads.
``browser``
    The launched browser, for tests that need separate contexts (separate cookies and caches:
    several visitors at once).
``artifacts``
    ``tests/artifacts/`` — screenshots go there.

One server for all of them: every test in this folder is in the xdist group ``e2e``, so they run
in one pytest worker, against one server whose Streamlit caches fill once. A page's default run
is computed once and the models (masked LM, MiniLM, SmolLM2) load once, instead of once in each
worker's server; the other worker runs the rest of the suite meanwhile. A test that needs a
computation of its own (the cancellation tests) asks for settings no other test uses.

One browser profile and one tab: ``page`` and ``projector`` hand every test the same tab of one
persistent Chromium profile (``profile``), at the test's viewport, instead of a new incognito
context each. The tab's renderer process stays up from test to test, with Streamlit's and
Plotly's code compiled and warm: in ``python bench/browser_tabs.py`` (2026-12-04, this 2-core
machine) a page load took 2.45 s of the machine's CPU in one reused tab and 4.68 s in a new tab
each. Each test navigates first, so it starts on a new document and a new Streamlit session; the
fixture resets what a tab carries from test to test (viewport, default timeout, mouse position,
the websocket listeners of :mod:`tests.e2e.cancellation`), and a test that failed gets its tab
closed, so the next one starts in a new tab.

A context of its own starts with an empty HTTP cache and, being incognito, keeps no compiled
JavaScript, so each test's first load parsed and compiled Streamlit's and Plotly's bundles again;
in the profile they come from its cache. Twenty first-screen loads took 25% less browser CPU
that way (106 s against 143 s on this 2-core machine). What a test checks does not depend on
it: each load is a Streamlit session of its own (a session is a websocket, not a cookie), and a
test about which code the browser fetches (``test_late_widgets.py``, whose routes also bypass the
cache) uses ``fresh_page``.

Outside CI the tests skip when Chromium or Playwright is missing; in CI (``CI`` set) they fail,
so a missing install step cannot hide behind a green run.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import need

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "tests" / "artifacts"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
]


def _chromium_path() -> str | None:
    for name in ("chromium", "chromium-browser"):
        found = shutil.which(name)
        if found:
            return found
    return None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist reads the groups from the markers
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Every browser test in the xdist group ``e2e``: one worker, one server (module docstring)."""
    here = Path(__file__).resolve().parent
    for item in items:
        if here in item.path.resolve().parents:
            item.add_marker(pytest.mark.xdist_group("e2e"))


@pytest.fixture(scope="session")
def artifacts() -> Path:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    return ARTIFACTS


@pytest.fixture(scope="session")
def app_url() -> Iterator[str]:
    port = _free_port()
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    worker = os.environ.get("PYTEST_XDIST_WORKER", "")  # each pytest-xdist worker has its own server
    log = (ARTIFACTS / f"streamlit-e2e{'-' + worker if worker else ''}.log").open("w")
    cmd = [
        sys.executable,
        "-m",
        "streamlit",
        "run",
        str(ROOT / "app.py"),
        "--server.port",
        str(port),
        "--server.address",
        "127.0.0.1",
        "--server.headless",
        "true",
        "--browser.gatherUsageStats",
        "false",
        "--server.fileWatcherType",
        "none",
    ]
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while True:
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as r:
                if r.read().strip() == b"ok":
                    break
        except OSError:
            pass
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            log.close()
            pytest.fail("the Streamlit server did not start within 60 s")
        time.sleep(0.3)
    try:
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


@pytest.fixture(scope="session")
def _playwright() -> Iterator[object]:
    """Playwright, started once (a second ``sync_playwright()`` in one thread is refused)."""
    if _chromium_path() is None:
        need("Debian chromium is not installed (apt-get install -y chromium)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        need("playwright is not installed (pip install -r requirements.txt)")
    with sync_playwright() as pw:
        yield pw


@pytest.fixture(scope="session")
def browser(_playwright: object) -> Iterator[object]:
    b = _playwright.chromium.launch(  # type: ignore[attr-defined]
        executable_path=_chromium_path(), headless=True, args=CHROMIUM_ARGS
    )
    try:
        yield b
    finally:
        b.close()


@pytest.fixture(scope="session")
def profile(_playwright: object, tmp_path_factory: pytest.TempPathFactory) -> Iterator[object]:
    """One persistent browser profile whose cache every ``page`` and ``projector`` tab shares."""
    ctx = _playwright.chromium.launch_persistent_context(  # type: ignore[attr-defined]
        str(tmp_path_factory.mktemp("chromium-profile")),
        executable_path=_chromium_path(),
        headless=True,
        args=CHROMIUM_ARGS,
        viewport={"width": 1400, "height": 1000},
        accept_downloads=True,
    )
    try:
        yield ctx
    finally:
        ctx.close()


class _SharedTab:
    """The profile's one tab that ``page`` and ``projector`` hand to each test in turn."""

    page: object | None = None


_TAB = _SharedTab()
_FAILED = pytest.StashKey[bool]()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    """Mark a test whose setup or call failed: its tab is not handed to the next test."""
    outcome = yield
    if outcome.get_result().failed:  # type: ignore[attr-defined]
        item.stash[_FAILED] = True


def _tab(profile: object, request: pytest.FixtureRequest, width: int, height: int) -> Iterator[object]:
    """The shared tab, as a new one would be: this viewport, a 60 s default timeout, the mouse at
    (0, 0), no listener of an earlier test. Every test that takes it navigates first (``goto``),
    so it starts on a new document and a new Streamlit session (a session is the page's
    websocket). A test that failed leaves its tab to be closed; the next test gets a new one."""
    from tests.e2e.cancellation import detach_watches

    pg = _TAB.page
    if pg is None or pg.is_closed():  # type: ignore[attr-defined]
        pg = _TAB.page = profile.new_page()  # type: ignore[attr-defined]
    pg.set_viewport_size({"width": width, "height": height})  # type: ignore[attr-defined]
    pg.set_default_timeout(60_000)  # type: ignore[attr-defined]
    pg.mouse.move(0, 0)  # type: ignore[attr-defined]
    try:
        yield pg
    finally:
        detach_watches(pg)
        if request.node.stash.get(_FAILED, False):
            pg.close()  # type: ignore[attr-defined]
            _TAB.page = None


@pytest.fixture()
def page(profile: object, request: pytest.FixtureRequest) -> Iterator[object]:
    yield from _tab(profile, request, 1400, 1000)


@pytest.fixture()
def projector(profile: object, request: pytest.FixtureRequest) -> Iterator[object]:
    """The tab at a projector's 1280×720 (issue 50: the first screen tells the story)."""
    yield from _tab(profile, request, 1280, 720)


@pytest.fixture()
def fresh_page(browser: object) -> Iterator[object]:
    """A tab (1400×1000) in a context of its own: an empty cache, nothing shared."""
    context = browser.new_context(viewport={"width": 1400, "height": 1000}, accept_downloads=True)  # type: ignore[attr-defined]
    pg = context.new_page()
    pg.set_default_timeout(60_000)
    try:
        yield pg
    finally:
        context.close()
