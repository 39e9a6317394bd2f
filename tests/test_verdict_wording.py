"""Issue 11, part 4: verdicts say what was tested, never more; no check-mark or shield icons."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from dpcore.audit import audit

ROOT = Path(__file__).resolve().parents[1]
SOURCES = [ROOT / "app.py", *sorted((ROOT / "pages").glob("*.py"))]
# Material icon names that draw a check mark or a shield, and the emoji equivalents.
BANNED_ICONS = (
    "check", "check_circle", "done", "done_all", "task_alt", "verified", "verified_user",
    "fact_check", "gpp_good", "gpp_bad", "gpp_maybe", "shield", "security", "policy",
    "privacy_tip", "admin_panel_settings", "health_and_safety",
)  # fmt: skip
BANNED_TEXT = ("No mechanism shown exceeds", "✅", "✔", "✓", "☑", "🛡", "🔒")


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: p.name)
def test_pages_use_no_check_or_shield_icons(path: Path) -> None:
    src = path.read_text(encoding="utf-8")
    icons = set(re.findall(r":material/([a-z_]+):", src))
    assert not icons & set(BANNED_ICONS), (path.name, icons & set(BANNED_ICONS))
    for text in BANNED_TEXT:
        assert text not in src, (path.name, text)
    assert "st.success(" not in src, path.name  # no green "verified" banners


@pytest.mark.parametrize(
    ("kwargs", "needle"),
    [
        ({"method": "exact"}, "no violation detected by this test (n = 8, ε = 1, exact values)"),
        (
            {"method": "mc", "trials": 20_000, "seed": 0},
            "no violation detected by this test (n = 8, ε = 1, 20,000 trials per neighbour from the "
            "real sampler, confidence 0.95)",
        ),
        (
            {"method": "mc", "trials": 20_000, "seed": 0, "model_based": True},
            "no violation detected by this test (n = 8, ε = 1, 20,000 trials per neighbour drawn from "
            "the declared probabilities (model-based), confidence 0.95)",
        ),
    ],
)
def test_cli_verdict_text_names_the_test_when_nothing_is_flagged(kwargs: dict, needle: str) -> None:
    r = audit("laplace", dim=8, epsilon=1.0, **kwargs)
    assert r.verdict in ("within-claim", "not-detected")
    assert r.verdict_text.startswith(needle), r.verdict_text
    assert "private" not in r.verdict_text.replace("not show", "")


def test_violation_text_names_its_bound_and_test() -> None:
    r = audit("adept", dim=32, epsilon=1.0, method="mc", trials=20_000, seed=0)
    assert r.verdict == "violates"
    assert r.verdict_text.startswith(f"violates its claimed ε: the loss is ≥ {r.verdict_lower_bound:.4g}")
    assert "n = 32, ε = 1, 20,000 trials per neighbour from the real sampler" in r.verdict_text
