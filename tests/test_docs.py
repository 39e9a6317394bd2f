"""docs/ cannot silently fall behind the registries.

Every registered mechanism has a page under ``docs/mechanisms/`` that names its implementing class,
cites the papers of its registry citation, is marked flawed exactly when the registry says so, and
(for vector mechanisms) quotes exact audit values that still match ``dpcore.audit``.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import pytest

from dpcore.audit import audit
from dpcore.mechanisms import VECTOR_MECHANISMS
from dpcore.text import TEXT_MECHANISMS

DOCS = Path(__file__).resolve().parents[1] / "docs"
#: "Habernal 2022", "Dwork & Roth 2014", "Lyu et al. 2020a", "Balle & Wang 2018", …
PAPER = re.compile(r"([A-Z][a-z]+(?: & [A-Z][a-z]+| et al\.)?) (\d{4})[a-z]?")


def _page_name(family: str, name: str) -> str:
    """Vector mechanisms own their plain name; a text mechanism sharing it gets ``-text``."""
    if family == "text" and name in VECTOR_MECHANISMS:
        return f"{name}-text"
    return name


ENTRIES = [("vector", e) for e in VECTOR_MECHANISMS] + [("text", e) for e in TEXT_MECHANISMS]
IDS = [f"{family}:{e.name}" for family, e in ENTRIES]


def _page(family: str, name: str) -> str:
    path = DOCS / "mechanisms" / f"{_page_name(family, name)}.md"
    assert path.is_file(), f"no docs page for the {family} mechanism {name!r}: expected {path}"
    return path.read_text(encoding="utf-8")


@pytest.mark.parametrize(("family", "entry"), ENTRIES, ids=IDS)
def test_every_registered_mechanism_has_a_page_citing_its_papers(family: str, entry) -> None:
    text = _page(family, entry.name)
    assert text.startswith(f"# `{entry.name}`")
    papers = PAPER.findall(entry.citation)
    assert papers, f"registry citation of {entry.name!r} names no paper: {entry.citation!r}"
    # The header table copies the registry citation; the prose must cite each paper itself.
    prose = "\n".join(line for line in text.splitlines() if not line.startswith("| citation (registry)"))
    for authors, year in papers:
        pattern = re.escape(authors) + r",? \(?" + year
        assert re.search(pattern, prose), f"{entry.name}: page does not cite {authors} {year}"
    cls = entry.factory
    assert f"`{cls.__module__}.{cls.__qualname__}`" in text
    for heading in ("## What it computes", "## Claimed ε and true ε", "## How the audit treats it"):
        assert heading in text


@pytest.mark.parametrize(("family", "entry"), ENTRIES, ids=IDS)
def test_flawed_status_matches_the_registry(family: str, entry) -> None:
    text = _page(family, entry.name)
    if entry.flawed:
        assert "**Flawed reproduction — not private.** Fenced in `dpcore.flawed`" in text
        assert entry.factory.__module__.startswith("dpcore.flawed")
    else:
        assert "Flawed reproduction" not in text and "Not flawed" in text


def _fmt(x: float) -> str:
    return "∞" if math.isinf(x) else f"{x:.4f}"


@pytest.mark.parametrize("name", VECTOR_MECHANISMS.names())
def test_vector_pages_quote_current_exact_audit_values(name: str) -> None:
    text = _page("vector", name)
    for n in (1, 8, 32, 128):
        r = audit(name, dim=n, epsilon=1.0)
        row = f"| {n} | {_fmt(r.empirical_epsilon)} | {_fmt(r.lr_epsilon)} (k = {r.lr_cut}) |"
        assert row in text, f"{name}: the exact audit row for n = {n} is stale or missing: {row}"


def test_index_links_every_page_and_the_method_pages() -> None:
    # the mechanism index (docs/mechanisms.md) links every mechanism page; the site's home page
    # (docs/index.md) links the method pages (both were docs/README.md before the site, issue 25)
    mechanisms = (DOCS / "mechanisms.md").read_text(encoding="utf-8")
    for family, entry in ENTRIES:
        assert f"(mechanisms/{_page_name(family, entry.name)}.md)" in mechanisms
    index = (DOCS / "index.md").read_text(encoding="utf-8")
    for page in ("audit.md", "hostile-inputs.md"):
        assert f"({page})" in index and (DOCS / page).is_file()
    listed = {p.stem for p in (DOCS / "mechanisms").glob("*.md")}
    assert listed == {_page_name(f, e.name) for f, e in ENTRIES}, "a page for an unregistered mechanism"


def test_the_site_shows_a_screenshot_of_every_page() -> None:
    from pages._shared import PAGES

    # all seven live on the site's dashboard page (the README shows two and links there, issue 25)
    page = (DOCS / "getting-started" / "dashboard.md").read_text(encoding="utf-8")
    shown = set(re.findall(r"!\[[^\]]*\]\(\.\./(screenshots/[\w-]+\.png)\)", page))
    readme = (DOCS.parent / "README.md").read_text(encoding="utf-8")
    assert re.search(r"!\[[^\]]*\]\(docs/screenshots/[\w-]+\.png\)", readme), "README shows no screenshot"
    for info in PAGES:
        rel = f"screenshots/{'home' if info.default else info.url_path}.png"
        assert rel in shown, f"the dashboard page shows no screenshot of {info.title} (docs/{rel})"
        png = (DOCS / rel).read_bytes()
        assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 20_000, rel  # a real image, not a stub
