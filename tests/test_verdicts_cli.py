"""``python -m dpcore verdicts``: every mode, its file, the check (passing and failing), bad input."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from dpcore.cli import main
from dpcore.verdicts.document import check_sample, evidence_says, load, validate
from dpcore.verdicts.wording import headline, power_summary
from tests.conftest import Cli

pytestmark = pytest.mark.xdist_group("verdicts-cli")

#: A control and a correct reference: about 10 s together at 0.05 minutes per fitted row.
ROWS = "flawed:krr-overclaimed,krr"


@pytest.fixture(scope="module")
def table(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    """One small run, JSON mode, written to a file (the stdout JSON and the file must agree)."""
    path = tmp_path_factory.mktemp("verdicts") / "v.json"
    code = main(
        ["verdicts", "--only", ROWS, "--minutes", "0.05", "--workers", "2", "--json", "--output", str(path)]
    )
    assert code == 0
    return path, load(path)


def test_json_run_writes_the_file_the_page_reads(
    table: tuple[Path, dict], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _path, doc = table
    assert validate(doc) == []
    rows = {r["name"]: r for r in doc["rows"]}
    assert list(rows) == ["flawed:krr-overclaimed", "krr"]  # the table's order, not --only's
    control, krr = rows["flawed:krr-overclaimed"], rows["krr"]
    assert control["audit"]["verdict"] == "violates" and control["expected"] == "violates"
    assert headline(control).startswith("violates its claim by at least ")
    assert " nats (privacy loss ≥ " in headline(control)
    assert krr["audit"]["verdict"] == "not-detected"
    p = power_summary(krr)
    assert p["uniform_delta"] is not None and p["uniform_delta"] < 1.0  # a power statement, in nats
    assert "no violation found" in headline(krr) and "private" not in headline(krr)
    for r in doc["rows"]:
        assert r["library"] == "dpcore" and r["library_version"]
        assert r["command"].startswith("python -m dpcore audit-text --mechanism")
        assert r["seed"] == 0 and r["seconds"] >= 0 and r["audit"]["samples_drawn"] > 0
        assert r["check"]["verdict"] == r["audit"]["verdict"]
    assert krr["plan"]["kind"] == "fitted" and control["plan"]["kind"] == "fixed"
    h = doc["header"]
    assert h["command"].startswith("python -m dpcore verdicts --minutes 0.05 --seed 0 --only")
    assert h["complete"] is False  # --only: a partial table
    assert h["finished"] and h["machine"]


def test_text_mode_and_resume(table: tuple[Path, dict], tmp_path: Path, cli: Cli) -> None:
    path, doc = table
    copy_path = tmp_path / "v.json"
    copy_path.write_text(path.read_text(encoding="utf-8"), encoding="utf-8")
    code, out, err = cli(
        ["verdicts", "--only", ROWS, "--minutes", "0.05", "--output", str(copy_path), "--resume"]
    )
    assert code == 0, err
    assert "keeping 2 row(s)" in err and "0 row(s) to run" in err
    assert "violates its claim by at least" in out and "no violation found" in out
    assert f"wrote {copy_path}" in out
    again = load(copy_path)
    assert [r["date"] for r in again["rows"]] == [r["date"] for r in doc["rows"]]  # kept, not rerun
    assert again["header"]["rows_kept_from_earlier_run"] == sorted(r["name"] for r in doc["rows"])
    assert again["header"]["started"] == doc["header"]["started"]  # the run began with its first part
    assert again["header"]["seconds"] >= doc["header"]["seconds"]


def test_markdown_prints_the_table_of_the_file(table: tuple[Path, dict], cli: Cli) -> None:
    path, doc = table
    code, out, err = cli(["verdicts", "--markdown", "--output", str(path)])
    assert code == 0, err
    assert doc["header"]["command"] in out
    lines = [ln for ln in out.splitlines() if ln.startswith("| dpcore")]
    assert len(lines) == 2 and "`flawed:krr-overclaimed`" in lines[0] and "violates" in lines[0]


def test_check_passes_on_a_fresh_file(table: tuple[Path, dict], cli: Cli) -> None:
    path, doc = table
    assert {r["name"] for r in check_sample(doc)} == {"flawed:krr-overclaimed", "krr"}
    code, out, err = cli(["verdicts", "--check", "--output", str(path)])
    assert code == 0, out + err
    assert "is current: 2 row(s) rerun" in out
    code, out, err = cli(["verdicts", "--check", "--json", "--output", str(path)])
    assert code == 0
    report = json.loads(out)
    assert report["current"] is True and report["differences"] == []
    assert [e["check_now"] for e in report["rerun"]] == ["violates", "not-detected"]


def _edited(doc: dict, tmp_path: Path, edit) -> Path:  # type: ignore[no-untyped-def]
    d = copy.deepcopy(doc)
    edit({r["name"]: r for r in d["rows"]})
    p = tmp_path / "edited.json"
    p.write_text(json.dumps(d), encoding="utf-8")
    return p


def test_check_fails_when_a_version_is_edited(table: tuple[Path, dict], tmp_path: Path, cli: Cli) -> None:
    _path, doc = table

    def edit(rows: dict) -> None:
        rows["krr"]["library_version"] = "0.0.1"

    code, out, err = cli(["verdicts", "--check", "--output", str(_edited(doc, tmp_path, edit))])
    assert code == 1, out + err
    assert "is stale: krr: recorded dpcore 0.0.1, installed" in out


def test_check_fails_when_a_verdict_is_edited(table: tuple[Path, dict], tmp_path: Path, cli: Cli) -> None:
    _path, doc = table

    def bare(rows: dict) -> None:  # the verdict alone: the row's own evidence contradicts it
        rows["krr"]["audit"]["verdict"] = "violates"

    code, out, err = cli(["verdicts", "--check", "--json", "--output", str(_edited(doc, tmp_path, bare))])
    assert code == 2  # not a valid verdict file: refused before anything runs
    assert "its verdict 'violates' is not what its evidence says ('not-detected')" in err

    def forged(rows: dict) -> None:  # verdict and evidence both: only rerunning the check shows it
        a = rows["krr"]["audit"]
        a["verdict"] = "violates"
        a["violating_pairs_total"] = 1
        a["pairs"][0] = a["pairs"][0] | {"violates": True}

    edited = _edited(doc, tmp_path, forged)
    assert validate(json.loads(edited.read_text(encoding="utf-8"))) == []
    code, out, err = cli(["verdicts", "--check", "--json", "--output", str(edited)])
    assert code == 1
    report = json.loads(out)
    assert report["current"] is False
    assert report["differences"] == ["krr: the file says 'violates', its check gives 'not-detected' now"]


def test_a_control_that_does_not_violate_is_invalid(table: tuple[Path, dict]) -> None:
    _, doc = table
    d = copy.deepcopy(doc)
    a = d["rows"][0]["audit"]
    a["verdict"], a["violating_pairs_total"] = "not-detected", 0
    a["pairs"] = [p | {"violates": False} for p in a["pairs"]]
    a["pooled"] = [t | {"rejects": False} for t in a["pooled"]]
    assert evidence_says(a) == "not-detected"
    assert "control 'flawed:krr-overclaimed' came out 'not-detected', not 'violates'" in validate(d)


def test_a_row_that_cannot_run_says_why_and_stays(tmp_path: Path, cli: Cli) -> None:
    path = tmp_path / "v.json"
    code, out, err = cli(
        ["verdicts", "--only", "truncated-gumbel", "--minutes", "0.05", "--json", "--output", str(path)]
    )
    assert code == 0, err
    doc = json.loads(out)
    (row,) = doc["rows"]
    assert row["status"] == "cannot-run" and "calibrated only for ε >" in row["why"]
    assert headline(row).startswith("cannot run: ") and "\n" not in row["why"]
    assert validate(doc) == [] and load(path) == doc


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--minutes", "0"], "--minutes"),
        (["--minutes", "nan"], "--minutes"),
        (["--only", "nosuch"], "no row named 'nosuch'"),
        (["--only", ","], "--only must name at least one row"),
        (["--resume"], "--resume needs --output"),
        (["--check", "--markdown"], "separate modes"),
        (["--markdown", "--json"], "--markdown prints Markdown"),
        (["--address", "h:1"], "--address is for --engine ray"),
        (["--seed", "-1"], "seed"),
        (["--check", "--output", "/nonexistent/v.json"], "no such verdict file"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(args: list[str], message: str, cli: Cli) -> None:
    code, out, err = cli(["verdicts", *args])
    assert code == 2 and out == ""
    assert message in err and len(err.strip().splitlines()) == 1


def test_a_file_that_is_not_a_verdict_file_is_refused(tmp_path: Path, cli: Cli) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{not json", encoding="utf-8")
    code, _, err = cli(["verdicts", "--markdown", "--output", str(bad)])
    assert code == 2 and "is not a JSON verdict file" in err
    bad.write_text(json.dumps({"schema": "other", "rows": []}), encoding="utf-8")
    code, _, err = cli(["verdicts", "--check", "--json", "--output", str(bad)])
    assert code == 2 and "is not a valid verdict file" in json.loads(err)["error"]


@pytest.mark.parametrize("name", ["flawed:krr-overclaimed", "krr"])
def test_the_row_command_reproduces_the_row(name: str, table: tuple[Path, dict], cli: Cli) -> None:
    """The command a row shows (the page's "reproduce" box) gives the row's audit again."""
    import shlex

    _, doc = table
    row = next(r for r in doc["rows"] if r["name"] == name)
    argv = shlex.split(row["command"])
    assert argv[:4] == ["python", "-m", "dpcore", "audit-text"]
    code, out, err = cli([*argv[3:], "--workers", "1"])  # any number of workers: the same JSON
    assert code == 0, err
    got = json.loads(out)
    a = row["audit"]
    assert got["verdict"] == a["verdict"] and got["max_lower_bound_ratio"] == a["max_lower_bound_ratio"]
    assert got["samples_drawn"] == a["samples_drawn"] and got["vocab_size"] == a["vocab_size"]
    flagged = sorted((p["x"], p["x_prime"], p["lower_bound"]) for p in got["pairs"] if p["violates"])
    kept = sorted((p["x"], p["x_prime"], p["lower_bound"]) for p in a["pairs"] if p["violates"])
    assert set(kept) <= set(flagged) and len(flagged) == a["violating_pairs_total"]
