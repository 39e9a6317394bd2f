"""docs/verdicts.md's table is the shipped verdict file's (``dpcore/data/verdicts.json``), and the
writer that puts it there replaces its block and nothing else."""

from __future__ import annotations

import difflib
from pathlib import Path

import pytest

from dpcore.validation import DPCoreError
from dpcore.verdicts.docs_table import BEGIN, COMMAND, DOCS_PAGE, END, block, main, render_docs
from dpcore.verdicts.document import SHIPPED_PATH, load_shipped
from dpcore.verdicts.markdown import markdown_table

ROOT = Path(__file__).resolve().parents[1]


def _doc() -> dict:
    """A two-row verdict object with what markdown_table reads (no run needed)."""
    header = {
        "command": "python -m dpcore verdicts --minutes 1 --seed 0",
        "started": "2026-01-01T00:00:00Z",
        "finished": "2026-01-01T01:00:00Z",
        "machine": "2 cores",
        "dpcore_version": "0.1.0",
        "seed": 0,
        "confidence": 0.95,
    }
    row = {
        "name": "pypantera:SanText",
        "library": "pypantera",
        "library_version": None,
        "status": "cannot-run",
        "why": "pyPANTERA is not installed: pip install pypantera==1.0.2",
        "claim": None,
        "guarantee": None,
        "audit": None,
        "seconds": 0.0,
    }
    return {"header": header, "rows": [row, row | {"name": "pypantera:CMP"}]}


def test_the_page_holds_the_shipped_table() -> None:
    if not SHIPPED_PATH.is_file():
        pytest.skip(f"{SHIPPED_PATH.name} is not shipped yet: nothing to compare the page's table with")
    want = markdown_table(load_shipped())
    have = block(DOCS_PAGE.read_text(encoding="utf-8"))
    if have != want:
        diff = "\n".join(
            difflib.unified_diff(
                have.splitlines(), want.splitlines(), "docs/verdicts.md", "shipped", lineterm="", n=0
            )
        )
        pytest.fail(
            f"docs/verdicts.md's table is not {SHIPPED_PATH.name}'s; rewrite it with\n\n"
            f"    {COMMAND}\n\n{diff[:3000]}"
        )


def test_the_page_is_in_the_site_and_shows_the_command() -> None:
    text = DOCS_PAGE.read_text(encoding="utf-8")
    assert text.count(BEGIN) == 1 and text.count(END) == 1
    assert COMMAND in text
    assert "verdicts.md" in (ROOT / "mkdocs.yml").read_text(encoding="utf-8")


def test_render_replaces_the_block_and_nothing_else() -> None:
    page = f"# Title\n\nprose before\n\n{BEGIN}\nold table\n{END}\n\nprose after\n"
    out = render_docs(_doc(), page)
    assert out.startswith(f"# Title\n\nprose before\n\n{BEGIN}\n\n")
    assert out.endswith(f"\n\n{END}\n\nprose after\n")
    assert block(out) == markdown_table(_doc())
    assert "old table" not in out and "`pypantera:CMP`" in out
    assert render_docs(_doc(), out) == out  # rewriting again changes nothing


@pytest.mark.parametrize(
    "page",
    ["no markers\n", f"{BEGIN}\n{BEGIN}\n{END}\n", f"{END}\nx\n{BEGIN}\n"],
    ids=["none", "twice", "reversed"],
)
def test_a_page_without_one_block_is_refused(page: str) -> None:
    with pytest.raises(DPCoreError):
        render_docs(_doc(), page)


def test_the_command_rewrites_a_page_from_a_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import dpcore.verdicts.docs_table as docs_table

    page = tmp_path / "verdicts.md"
    page.write_text(f"prose\n\n{BEGIN}\n{END}\n", encoding="utf-8")
    monkeypatch.setattr("dpcore.verdicts.document.load", lambda path: _doc())
    assert docs_table.main(["--file", "v.json", "--page", str(page)]) == 0
    assert block(page.read_text(encoding="utf-8")) == markdown_table(_doc())
    assert "rewritten" in capsys.readouterr().out
    assert main(["--file", "v.json", "--page", str(page)]) == 0
    assert "already" in capsys.readouterr().out
    assert main(["--file", "v.json", "--page", str(tmp_path / "nope.md")]) == 2
    assert "no such page" in capsys.readouterr().err


def test_the_docs_table_writes_the_pages_cells_in_nats_with_the_metric_claim() -> None:
    from dpcore.verdicts.markdown import LEGEND
    from dpcore.verdicts.wording import headline, short_claim

    pair = {"x": "a", "x_prime": "b", "distance": 0.5, "claimed_bound": 0.5 + 1.2, "lower_bound": 4.0}
    pairs = [
        pair | {"violates": True},
        pair | {"x": "c", "distance": 2.0, "claimed_bound": 3.2, "violates": False},
    ]
    audit = {"verdict": "violates", "pairs": pairs, "pooled": [], "vocab_size": 300, "samples_drawn": 1000}
    ran = _doc()["rows"][0] | {
        "name": "santext+",
        "library": "dpcore",
        "library_version": "0.1.0",
        "status": "ran",
        "why": None,
        "claim": "Yue et al. 2021, Thm 2",
        "summary": "SanText+ (UMLDP)",
        "guarantee": "metric",
        "epsilon": 1.0,
        "audit": audit,
        "seconds": 3.0,
    }
    doc = _doc() | {"rows": [ran]}
    md = markdown_table(doc)
    claim, verdict = short_claim(ran), headline(ran)  # the page's table's cells (page_view.table)
    assert claim == "ε·d + ε₀ metric LDP, ε₀ = 1.2 (Yue et al. 2021, Thm 2)"
    assert verdict == "violates its claim by at least 2.3 nats (privacy loss ≥ 4 nats where 1.7 is claimed)"
    assert f"| `santext+` | {claim} | {verdict} | 300 | 1,000 | 3 |" in md
    assert LEGEND in md.splitlines()
