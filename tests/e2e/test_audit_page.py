"""The audit page in a real browser: plot renders, a deep link applies, a download works."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytestmark = pytest.mark.e2e


def _wait_for_plot(page) -> None:  # type: ignore[no-untyped-def]
    page.wait_for_selector(".js-plotly-plot .main-svg", state="visible", timeout=60_000)
    # Streamlit shows a "running" indicator while the script runs; wait until it is gone.
    page.wait_for_function(
        '() => !document.querySelector(\'[data-testid="stApp"][data-test-script-state="running"]\')',
        timeout=60_000,
    )


def test_audit_page_plots_and_screenshot(app_url: str, page, artifacts: Path) -> None:  # type: ignore[no-untyped-def]
    page.goto(f"{app_url}/audit")
    _wait_for_plot(page)
    legend = page.locator(".js-plotly-plot .legendtext").all_text_contents()
    assert any(t.startswith("adept") for t in legend), legend
    assert any(t.startswith("dptext") for t in legend), legend
    page.screenshot(path=str(artifacts / "audit.png"), full_page=True)


def test_audit_deep_link_and_download(app_url: str, page, artifacts: Path) -> None:  # type: ignore[no-untyped-def]
    page.goto(f"{app_url}/audit?mechs=laplace,gaussian&eps=2&nmin=4&nmax=64&mc=false")
    _wait_for_plot(page)
    legend = page.locator(".js-plotly-plot .legendtext").all_text_contents()
    assert any(t.startswith("laplace") for t in legend), legend
    assert not any(t.startswith("dptext") for t in legend), legend
    assert "eps=2" in page.url
    with page.expect_download() as dl:
        page.get_by_role("button", name="Download JSON").click()
    path = artifacts / "audit-download.json"
    dl.value.save_as(str(path))
    payload = json.loads(path.read_text())
    assert payload["parameters"]["epsilon"] == 2.0
    assert payload["parameters"]["dims"] == [4, 8, 16, 32, 64]
    assert {r["mechanism"] for r in payload["results"]} == {"laplace", "gaussian"}
    page.screenshot(path=str(artifacts / "audit-deeplink.png"), full_page=True)
