"""The "Attack & utility" page in a real browser: a small deep-linked sweep draws both figures."""

from __future__ import annotations

from pathlib import Path

import pytest

pytestmark = pytest.mark.e2e


def test_attack_page_deep_link_draws_figures(app_url: str, page, artifacts: Path) -> None:  # type: ignore[no-untyped-def]
    page.goto(
        f"{app_url}/attack?mechs=santext&eps=1,3,10&vsize=2000&n=10&ntrain=500&ntest=200"
        "&attacks=bayes-unigram&seed=1"
    )
    page.wait_for_selector(".js-plotly-plot .main-svg", state="visible", timeout=120_000)
    page.wait_for_function("() => document.querySelectorAll('.js-plotly-plot').length >= 2", timeout=120_000)
    page.wait_for_function(
        '() => !document.querySelector(\'[data-testid="stApp"][data-test-script-state="running"]\')',
        timeout=120_000,
    )
    body = page.locator("body").inner_text()
    assert "Privacy–utility trade-off" in body
    assert "ε=10" in page.locator(".js-plotly-plot").first.inner_text()
    page.screenshot(path=str(artifacts / "attack.png"), full_page=True)
