"""``verdicts --engine ray``: rows run as Ray tasks (in parallel on a cluster) and give the same
rows as the local engine, in the table's order."""

from __future__ import annotations

import json

import pytest

from dpcore.cli import main

ray = pytest.importorskip("ray")

pytestmark = pytest.mark.xdist_group("verdicts-ray")

ROWS = "flawed:krr-overclaimed,flawed:truncated-gumbel-one-word,truncated-gumbel"


def _rows(args: list[str], capsys: pytest.CaptureFixture[str]) -> list[dict]:
    code = main(["verdicts", "--only", ROWS, "--minutes", "0.05", "--workers", "1", "--json", *args])
    out, err = capsys.readouterr()
    assert code == 0, err
    return json.loads(out)["rows"]


def _essence(row: dict) -> tuple:
    a = row["audit"] or {}
    pairs = [(p["x"], p["x_prime"], p["lower_bound"]) for p in a.get("pairs", [])]
    return (row["name"], row["status"], row["why"], a.get("verdict"), a.get("max_lower_bound_ratio"), pairs)


def test_ray_rows_equal_local_rows(capsys: pytest.CaptureFixture[str]) -> None:
    local = _rows([], capsys)
    on_ray = _rows(["--engine", "ray"], capsys)
    assert [r["name"] for r in on_ray] == [r["name"] for r in local]  # the table's order
    assert [_essence(r) for r in on_ray] == [_essence(r) for r in local]
    assert [r["audit"]["verdict"] for r in on_ray if r["audit"]] == ["violates", "violates"]
    assert on_ray[2]["status"] == "cannot-run"  # a row that cannot run fails inside its task, and stays
