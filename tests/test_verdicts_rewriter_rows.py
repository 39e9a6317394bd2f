"""Rewriter rows in the one verdict table (issue 61): a rewriter audited on a pair of texts reads
like a word-level row everywhere the table is read (file validation, headline, table, evidence,
figure, Markdown, ``--check``), with its own command (``audit-rewriter``) and its own plan."""

from __future__ import annotations

import shlex

import pytest

from dpcore.verdicts import page_view as view
from dpcore.verdicts import wording
from dpcore.verdicts.check import check_document
from dpcore.verdicts.document import choose_check_rows, new_document, validate, verdict_of
from dpcore.verdicts.markdown import markdown_table
from dpcore.verdicts.rows import GROUPS, RewriterPlan, RowSpec, catalogue
from dpcore.verdicts.run import run_row, run_rows
from dpcore.viz.verdicts_figure import row_label, verdicts_figure
from tests.conftest import RAY_GROUP

#: A planted rewriter that copies its input half the time: an infinite loss against any claim.
PLANTED = RowSpec(
    "planted:copy",
    "control",
    "dpcore",
    "test instrument: copies its input with probability 0.5",
    0.25,
    embedding="",
    expected="violates",
    rewriter=RewriterPlan("the cat sat", "the dog sat", rewrites=100, check_rewrites=60, why="planted copy"),
)


@pytest.fixture(scope="module")
def planted_row() -> dict:
    return run_row(PLANTED, minutes=1.0, seed=0, workers=1)


def test_a_rewriter_row_runs_and_its_evidence_supports_its_verdict(planted_row: dict) -> None:
    row = planted_row
    assert row["status"] == "ran" and verdict_of(row) == "violates", row.get("why")
    a = row["audit"]
    assert a["unit"] == "rewriter" and a["pairs_tested"] == 1 and a["violating_pairs_total"] == 1
    pair = a["pairs"][0]
    assert pair["lower_bound"] > pair["claimed_bound"] == pytest.approx(0.25)  # ε per document
    assert pair["counts"]["samples"] == 50 and pair["event"]
    argv = shlex.split(row["command"])
    assert argv[3:5] == ["audit-rewriter", "--rewriter"] and "--x-prime" in argv and "--json" in argv
    assert row["check"]["verdict"] == "violates" and row["check"]["plan"]["rewrites"] == 60
    header = {k: None for k in ("command", "started", "finished", "machine", "dpcore_version")}
    header |= {"minutes": 1.0, "seed": 0, "workers": 1, "engine": "local", "confidence": 0.95}
    header |= {"complete": True, "seconds": 1.0, "check_rows": choose_check_rows([row])}
    doc = new_document(header, [row])
    assert validate(doc) == [] and doc["header"]["check_rows"] == ["planted:copy"]


def test_a_rewriter_row_reads_like_a_word_level_row(planted_row: dict) -> None:
    row = planted_row
    assert wording.headline(row).startswith("violates its claim by at least")
    assert wording.short_claim(row).startswith("ε per document")
    assert "rewrites of each" in wording.test_sentence(row) and "|V|" not in wording.test_sentence(row)
    t = view.table([row])
    assert t.loc[0, "mechanism"] == "planted:copy" and t.loc[0, "draws"] == 200
    assert str(t.loc[0, "|V|"]) == "<NA>"
    pairs = view.violating_pairs(row)
    assert list(pairs["text x"]) == ["the cat sat"] and "in the event (x, x′, of)" in pairs.columns
    assert view.plan_sentence(row).startswith("one pair of texts (planted copy)")
    assert view.check_sentence(row).startswith("the same pair, 60 rewrites of each → violates")
    assert view.certified_excess(row) is not None and view.caught_delta(row) is None
    head = {"command": "c", "started": "s", "finished": "f", "machine": "m", "dpcore_version": "0", "seed": 0}
    md = markdown_table({"header": head | {"confidence": 0.95}, "rows": [row]})
    assert "`planted:copy`" in md and "violates its claim" in md
    fig = verdicts_figure([row])
    assert fig["data"], "the figure draws the row"


def test_the_check_reruns_a_rewriter_row(planted_row: dict, monkeypatch: pytest.MonkeyPatch) -> None:
    header = {k: "x" for k in ("command", "started", "finished", "machine", "dpcore_version")}
    header |= {"minutes": 1.0, "seed": 0, "workers": 1, "engine": "local", "confidence": 0.95}
    header |= {"complete": True, "seconds": 1.0, "check_rows": ["planted:copy"]}
    doc = new_document(header, [planted_row])
    monkeypatch.setattr("dpcore.verdicts.check.catalogue", lambda: [PLANTED])  # this test's row
    report = check_document(doc, workers=1)
    assert report["current"], report["differences"]
    assert report["rerun"][0]["check_now"] == "violates"


def test_the_packages_group_names_every_published_package() -> None:
    rows = {s.name: s for s in catalogue() if s.group == "packages"}
    assert "packages" in GROUPS
    assert set(rows) == {"dpmlm:rewrite", "diffractor:geometric", "preempt:money", "preempt:age",
                         "dp-fusion:generate", "invink:generate"}  # fmt: skip
    assert rows["dpmlm:rewrite"].rewriter is not None and rows["diffractor:geometric"].fixed is not None
    assert rows["preempt:money"].rewriter is not None and rows["preempt:age"].rewriter is not None
    assert rows["dp-fusion:generate"].rewriter is not None
    why = rows["invink:generate"].unavailable
    assert why and "not audited yet" in why and "Python 3.12" in why and "invisibleink.md" in why
    assert row_label({"name": "dpmlm:rewrite", "group": "packages", "library": "dpmlm"}) == "dpmlm"


@RAY_GROUP
def test_a_rewriter_row_on_ray_is_the_local_row(planted_row: dict, ray_runtime: None) -> None:
    pytest.importorskip("ray")
    (on_ray,) = run_rows([PLANTED], minutes=1.0, seed=0, workers=1, engine="ray")

    def essence(row: dict) -> tuple:
        a = row["audit"]
        return row["status"], a["verdict"], [(p["lower_bound"], p["event"], p["counts"]) for p in a["pairs"]]

    assert essence(on_ray) == essence(planted_row) and on_ray["check"]["verdict"] == "violates"
