"""The text-audit page in a real browser: a flawed sanitizer is flagged, the deep link applies,
the points above the diagonal are the violations, and the JSON download carries the seed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.e2e.idle import wait_idle

pytestmark = pytest.mark.e2e


def _wait_for_plot(page) -> None:  # type: ignore[no-untyped-def]
    page.wait_for_selector(".js-plotly-plot .main-svg", state="visible", timeout=120_000)
    wait_idle(page, timeout=120_000)  # the script has finished, a second ago


def test_flawed_sanitizer_is_flagged_from_a_deep_link(app_url: str, page, artifacts: Path) -> None:  # type: ignore[no-untyped-def]
    page.goto(
        f"{app_url}/audit_text?mech=flawed:krr-overclaimed&vsize=500&words=house,car,money,water"
        "&nn=0&samples=50000&seed=3"
    )
    _wait_for_plot(page)
    legend = page.locator(".js-plotly-plot .legendtext").all_text_contents()
    assert any(t.startswith("pair violates its claim") for t in legend), legend
    # the data behind the red markers: every violating pair lies above the diagonal
    points = page.evaluate(
        """() => {
            const gd = document.querySelector('.js-plotly-plot');
            return gd.data.filter(t => (t.name || '').startsWith('pair violates'))
                          .flatMap(t => t.x.map((x, i) => [x, t.y[i]]));
        }"""
    )
    assert points and all(y > x for x, y in points), points
    alerts = " ".join(page.locator('[data-testid="stAlert"]').all_inner_texts())
    assert "flawed reproduction" in alerts
    assert "Violates its claim" in alerts
    with page.expect_download() as dl:
        page.get_by_role("button", name="Download JSON").click()
    path = artifacts / "audit-text-download.json"
    dl.value.save_as(str(path))
    payload = json.loads(path.read_text())
    assert payload["parameters"]["seed"] == 3
    assert payload["parameters"]["mechanism"] == "flawed:krr-overclaimed"
    assert payload["parameters"]["verdict"] == "violates"
    assert len(payload["results"]) == 6  # the 6 pairs among 4 words
    page.screenshot(path=str(artifacts / "audit-text.png"), full_page=True)
