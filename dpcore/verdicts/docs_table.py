"""The verdict table inside ``docs/verdicts.md``, generated from the shipped file.

The page's prose is written by hand; the table between its markers :data:`BEGIN` and :data:`END`
is :func:`dpcore.verdicts.markdown.markdown_table` of ``dpcore/data/verdicts.json`` and nothing
else. After a new shipped file, one command rewrites the block (and only the block)::

    python -m dpcore.verdicts.docs_table

``tests/test_verdicts_docs.py`` fails, naming that command, when the page's block is not the
shipped file's table.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from dpcore.validation import DPCoreError
from dpcore.verdicts.markdown import markdown_table

BEGIN = "<!-- verdicts-table:begin -->"
END = "<!-- verdicts-table:end -->"
#: The page in a clone of the repository (an installed package has no docs/).
DOCS_PAGE = Path(__file__).resolve().parents[2] / "docs" / "verdicts.md"
#: The command that rewrites the page's block from the shipped file.
COMMAND = "python -m dpcore.verdicts.docs_table"


def _span(text: str) -> tuple[int, int]:
    """Where the block's content starts and ends in ``text`` (just after BEGIN, just before END)."""
    if text.count(BEGIN) != 1 or text.count(END) != 1:
        raise DPCoreError(f"the page must hold {BEGIN} and {END} once each")
    start = text.index(BEGIN) + len(BEGIN)
    end = text.index(END)
    if end < start:
        raise DPCoreError(f"{END} comes before {BEGIN}")
    return start, end


def block(text: str) -> str:
    """The table the page holds now: what lies between its markers, without the blank lines
    around it."""
    start, end = _span(text)
    return text[start:end].strip("\n")


def render_docs(doc: dict[str, Any], text: str) -> str:
    """``text`` (the page) with the block between its markers replaced by ``doc``'s table; the rest
    of the page is returned unchanged."""
    start, end = _span(text)
    return text[:start] + "\n\n" + markdown_table(doc) + "\n\n" + text[end:]


def main(argv: list[str] | None = None) -> int:
    """Rewrite the page's block from the shipped file (or from ``--file FILE``); ``--page PAGE``
    names another page. Prints what it did; exit status 2 with one line on an error."""
    import argparse

    from dpcore.files import write_atomic
    from dpcore.verdicts.document import SHIPPED_PATH, load

    ap = argparse.ArgumentParser(prog=COMMAND, description=__doc__.splitlines()[0])
    ap.add_argument("--file", default=str(SHIPPED_PATH), help="the verdict file (default: the shipped one)")
    ap.add_argument("--page", default=str(DOCS_PAGE), help="the page to rewrite (default: docs/verdicts.md)")
    args = ap.parse_args(argv)
    page = Path(args.page)
    try:
        if not page.is_file():
            raise DPCoreError(f"no such page: {page} (run this from a clone of the repository)")
        text = page.read_text(encoding="utf-8")
        new = render_docs(load(args.file), text)
    except DPCoreError as exc:
        print(f"{COMMAND}: error: {exc}", file=sys.stderr)
        return 2
    if new == text:
        print(f"{page}: the table is already {args.file}'s")
        return 0
    write_atomic(page, new)
    print(f"{page}: the table rewritten from {args.file}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
