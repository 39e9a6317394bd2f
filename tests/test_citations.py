"""Issue 11, part 5: code and docs cite papers by authors, year and title, never by a local
file number ("paper 002") or a path outside the repository (``shared/docs/…``)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FILES = sorted(
    {
        *ROOT.glob("dpcore/**/*.py"),
        *ROOT.glob("pages/*.py"),
        *ROOT.glob("bench/*.py"),
        *ROOT.glob("docs/**/*.md"),
        ROOT / "README.md",
        ROOT / "app.py",
    }
)
BAD = re.compile(
    r"\bpapers? 00\d\b|shared/(docs|papers)|\.\./papers/"
    r"|Habernal's (appendix|revisit)|revisited by\s+Habernal",
    re.I,
)


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_unresolvable_citations(path: Path) -> None:
    hits = [m.group(0) for m in BAD.finditer(path.read_text(encoding="utf-8"))]
    assert not hits, hits


def test_the_revisit_is_cited_in_full_in_the_references() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "User-Entity\n  Differential Privacy in Learning Natural Language Models" in readme
