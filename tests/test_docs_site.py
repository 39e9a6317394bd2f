"""The documentation site reads offline: no page asks for a remote font, script, stylesheet or image.

``mkdocs build --strict`` renders the site as a user's ``mkdocs serve`` would; every ``<link>``,
``<script>``, ``<img>`` and CSS ``url()`` in the output must be local (plain ``<a href>`` links
to other sites are fine: they are not fetched when a page loads).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import need

ROOT = Path(__file__).resolve().parents[1]

_LOADED = re.compile(
    r"<(?:link|script|img|iframe|source)\b[^>]*?\b(?:href|src)=[\"']((?:https?:)?//[^\"']+)", re.I
)
_CSS_URL = re.compile(r"(?:url\(|@import\s+)[\"']?((?:https?:)?//[^\"')\s]+)", re.I)


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    try:
        import mkdocs  # noqa: F401
    except ImportError:
        need("mkdocs is not installed (pip install -r requirements-dev.txt)")  # CI builds the site only here
    out = tmp_path_factory.mktemp("site")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    # The one build of the site in CI (.ci/run builds none): strict, so a broken link, anchor or
    # API reference fails every test of this file, with mkdocs' warnings in the message.
    built = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    if built.returncode != 0:
        pytest.fail(f"mkdocs build --strict failed:\n{built.stderr[-4000:]}")
    return out


def test_the_site_loads_nothing_remote(site: Path) -> None:
    remote: list[str] = []
    pages = list(site.rglob("*.html"))
    assert len(pages) > 10
    for f in [*pages, *site.rglob("*.css")]:
        text = f.read_text(encoding="utf-8", errors="replace")
        pattern = _CSS_URL if f.suffix == ".css" else _LOADED
        remote += [f"{f.relative_to(site)}: {u}" for u in pattern.findall(text)]
        if f.suffix == ".html":
            remote += [f"{f.relative_to(site)}: {u}" for u in _CSS_URL.findall(text)]
    assert remote == []


def test_the_theme_asks_for_no_web_font() -> None:
    text = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    assert re.search(r"^\s+font:\s*false\s*$", text, re.M)


def test_no_bare_dpcore_command_anywhere_a_user_reads() -> None:
    """The quick start gives ``python -m dpcore``; ``dpcore`` is a command only after ``pip install``,
    so docs, README and every message name a sub-command as ``python -m dpcore SUBCOMMAND``."""
    import argparse

    from dpcore.cli import build_parser

    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    names = "|".join(sorted(map(re.escape, sub.choices), key=len, reverse=True))
    bare = re.compile(rf"(?<!-m )(?<![\w/.-])dpcore (?:{names})(?![\w-])")
    files = [ROOT / "README.md", *(ROOT / "docs").rglob("*.md"), *(ROOT / "dpcore").rglob("*.py")]
    files += [*(ROOT / "dpcore").rglob("*.md"), *(ROOT / "pages").rglob("*.py"), ROOT / "app.py"]
    found = [
        f"{f.relative_to(ROOT)}:{i}: {line.strip()}"
        for f in files
        for i, line in enumerate(f.read_text(encoding="utf-8").splitlines(), 1)
        if bare.search(line)
    ]
    assert found == []


def test_the_readme_stays_within_200_lines() -> None:
    """The README is the front door: at most 200 lines (issue 58 found 202); the rest is the site."""
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 200, len(lines)
