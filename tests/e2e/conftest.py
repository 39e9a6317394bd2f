"""Browser end-to-end fixtures: a real ``streamlit run app.py`` on localhost and headless
Debian Chromium driven by Playwright.

Fixtures
--------
``app_url``
    Base URL of a dashboard server started once per test session (pages live at
    ``{app_url}/<url_path>``).
``page``
    A fresh Playwright page (1400×1000) in headless Chromium.
``artifacts``
    ``tests/artifacts/`` — screenshots go there.

One server for all of them: every test in this folder is in the xdist group ``e2e``, so they run
in one pytest worker, against one server whose Streamlit caches fill once. A page's default run
is computed once and the models (masked LM, MiniLM, SmolLM2) load once, instead of once in each
worker's server; the other worker runs the rest of the suite meanwhile. A test that needs a
computation of its own (the cancellation tests) asks for settings no other test uses.

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
def browser() -> Iterator[object]:
    exe = _chromium_path()
    if exe is None:
        need("Debian chromium is not installed (apt-get install -y chromium)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        need("playwright is not installed (pip install -r requirements.txt)")
    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=exe, headless=True, args=CHROMIUM_ARGS)
        try:
            yield b
        finally:
            b.close()


@pytest.fixture()
def page(browser: object) -> Iterator[object]:
    context = browser.new_context(viewport={"width": 1400, "height": 1000}, accept_downloads=True)  # type: ignore[attr-defined]
    pg = context.new_page()
    pg.set_default_timeout(60_000)
    try:
        yield pg
    finally:
        context.close()


@pytest.fixture()
def projector(browser: object) -> Iterator[object]:
    """A fresh page at a projector's 1280×720 (issue 50: the first screen tells the story)."""
    context = browser.new_context(viewport={"width": 1280, "height": 720})  # type: ignore[attr-defined]
    pg = context.new_page()
    pg.set_default_timeout(60_000)
    try:
        yield pg
    finally:
        context.close()
