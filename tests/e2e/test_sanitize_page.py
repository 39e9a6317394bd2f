"""The "Sanitize text" page in a real browser: paste a sentence, see it sanitized, download it."""

from __future__ import annotations

from pathlib import Path

import pytest

pytestmark = pytest.mark.e2e


def _wait_idle(page) -> None:  # type: ignore[no-untyped-def]
    page.wait_for_selector(".dp-sanitized", state="visible", timeout=90_000)
    page.wait_for_selector(".js-plotly-plot .main-svg", state="visible", timeout=90_000)
    page.wait_for_function(
        '() => !document.querySelector(\'[data-testid="stApp"][data-test-script-state="running"]\')',
        timeout=90_000,
    )


def test_sanitize_a_sentence_and_screenshot(app_url: str, page, artifacts: Path) -> None:  # type: ignore[no-untyped-def]
    page.goto(f"{app_url}/sanitize?source=paste&mech=santext&eps=1000&vsize=2000&seed=1")
    _wait_idle(page)
    box = page.get_by_label("Text (one sentence per line", exact=False)
    box.fill("the movie was good and the food was bad")
    box.press("Control+Enter")
    page.wait_for_function(
        "() => (document.querySelector('.dp-sanitized') || {}).innerText?.includes('the movie was good')",
        timeout=90_000,
    )
    _wait_idle(page)
    assert "the movie was good and the food was bad" in page.locator(".dp-sanitized").inner_text()
    with page.expect_download() as dl:
        page.get_by_role("button", name="Download sanitized text (draw 1)").click()
    path = artifacts / "sanitize-download.txt"
    dl.value.save_as(str(path))
    assert path.read_text(encoding="utf-8").strip() == "the movie was good and the food was bad"
    page.screenshot(path=str(artifacts / "sanitize.png"), full_page=True)


def test_sanitize_default_page_highlights_replacements(app_url: str, page, artifacts: Path) -> None:  # type: ignore[no-untyped-def]
    page.goto(f"{app_url}/sanitize?mech=santext%2B&eps=2&vsize=5000")
    _wait_idle(page)
    assert page.locator(".dp-sanitized mark").count() > 0
    page.screenshot(path=str(artifacts / "sanitize-default.png"), full_page=True)
