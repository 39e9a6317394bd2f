"""Issue 11, part 5: which rows of SanText's Table 2 (Yue et al. 2021; w = 0.9) the off-by-one
slice of the released code explains, and that dpcore's count is ⌊w·|V|⌋ for all four."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from dpcore.text.vocab import sensitive_count

ROOT = Path(__file__).resolve().parents[1]
# Table 2 of Yue et al. (2021): |V| and |V_S| at w = 0.9.
TABLE2 = {
    "SST-2": (14_730, 13_258),
    "MedSTS": (3_320, 2_989),
    "QNLI": (88_159, 79_343),
    "BERT": (30_522, 27_469),
}


def _released_slice(n: int, w: float) -> int:
    """Length of ``words[-count - 1:]`` with ``count = int(w·|V|)`` (the released code's slice)."""
    words = list(range(n))
    return len(words[-int(w * n) - 1 :])


@pytest.mark.parametrize("row", TABLE2)
def test_which_rows_the_off_by_one_explains(row: str) -> None:
    n, reported = TABLE2[row]
    explained = _released_slice(n, 0.9) == reported
    exact = sensitive_count(n, 0.9) == reported
    assert explained == (row in ("SST-2", "MedSTS"))
    assert exact == (row in ("QNLI", "BERT"))
    assert explained != exact


def test_readme_command_prints_the_counts() -> None:
    code = (
        "from dpcore.text.vocab import sensitive_count; "
        "print([sensitive_count(v, 0.9) for v in (14730, 3320, 88159, 30522)])"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[13257, 2988, 79343, 27469]"
    guide = ROOT / "docs" / "guides" / "sanitize.md"  # moved from the README (issue 25)
    assert "`[13257, 2988, 79343, 27469]`" in guide.read_text(encoding="utf-8")
