"""Every table a page shows has human column names (no bare snake_case machine names)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[1]
MACHINE = re.compile(r"^[a-z0-9]+(_[a-z0-9]+)+$")


@pytest.mark.parametrize(
    ("page", "query"),
    [
        ("audit", {}),
        ("audit_text", {"samples": "2000", "pairs": "5"}),
        ("audit_rewriter", {}),  # the shipped view
        ("rewriter_calibration", {}),  # the shipped calibration
        ("sensitivity", {"pairs": "1000", "nmax": "64"}),
        ("accounting", {"tab": "binary"}),
        ("accounting", {"tab": "sampler", "size": "10000"}),
        ("sanitize", {}),
        ("verdicts", {"row": "flawed:krr-overclaimed"}),  # the table and one row's tables
        ("attack", {"vsize": "2000", "n": "10", "ntrain": "500", "ntest": "200", "attacks": "bayes-unigram"}),
    ],
)
def test_shown_tables_have_human_column_names(page: str, query: dict[str, str]) -> None:
    at = AppTest.from_file(str(ROOT / "pages" / f"{page}.py"), default_timeout=300)
    for k, v in query.items():
        at.query_params[k] = v
    at.run()
    assert not at.exception
    assert len(at.dataframe) >= 1, page
    for df in at.dataframe:
        bad = [c for c in df.value.columns if MACHINE.match(str(c))]
        assert not bad, f"{page}: machine column names shown: {bad}"
