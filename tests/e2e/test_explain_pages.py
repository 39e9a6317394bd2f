"""The Sensitivity and Accounting & samplers pages in a real browser: plots render, screenshots."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.idle import wait_idle

pytestmark = pytest.mark.e2e


def _wait_for_plot(page, count: int = 1) -> None:  # type: ignore[no-untyped-def]
    page.wait_for_selector(".js-plotly-plot .main-svg", state="visible", timeout=60_000)
    page.wait_for_function(
        f"() => document.querySelectorAll('.js-plotly-plot').length >= {count}", timeout=60_000
    )
    wait_idle(page, timeout=60_000)  # the script has finished, a second ago


def test_sensitivity_page_plots_and_screenshot(app_url: str, page, artifacts: Path) -> None:  # type: ignore[no-untyped-def]
    page.goto(f"{app_url}/sensitivity?pairs=1000&nmax=64")
    _wait_for_plot(page, count=2)
    legend = page.locator(".js-plotly-plot .legendtext").all_text_contents()
    assert any(t.startswith("uniform") for t in legend), legend
    assert any(t.startswith("true L1 sensitivity") for t in legend), legend
    assert "nmax=64" in page.url
    page.screenshot(path=str(artifacts / "sensitivity.png"), full_page=True)


def test_accounting_page_plots_and_screenshot(app_url: str, page, artifacts: Path) -> None:  # type: ignore[no-untyped-def]
    page.goto(f"{app_url}/accounting?size=10000")
    _wait_for_plot(page)
    legend = page.locator(".js-plotly-plot .legendtext").all_text_contents()
    assert any("dropout" in t for t in legend), legend
    page.screenshot(path=str(artifacts / "accounting-dpnr.png"), full_page=True)
    page.get_by_role("tab", name="Sampler inspector").click()
    page.wait_for_timeout(500)
    page.screenshot(path=str(artifacts / "accounting-samplers.png"), full_page=True)
