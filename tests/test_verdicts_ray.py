"""``verdicts --engine ray``: rows run as Ray tasks (in parallel on a cluster) and give the same
rows as the local engine, in the table's order."""

from __future__ import annotations

import pytest

from tests.conftest import RAY_GROUP, Cli, CliRun

ray = pytest.importorskip("ray")

pytestmark = RAY_GROUP  # on the worker's one local Ray (tests/conftest.py: ray_runtime)

ROWS = "flawed:krr-overclaimed,flawed:truncated-gumbel-one-word,truncated-gumbel"


def _argv(*args: str) -> list[str]:
    """``verdicts`` of ``ROWS`` at 0.05 minutes a row on one worker, with ``--json``."""
    return ["verdicts", "--only", ROWS, "--minutes", "0.05", "--workers", "1", "--json", *args]


def _rows(run: CliRun) -> list[dict]:
    """The rows a ``cli(...)`` run printed, once it exited 0."""
    return run.json()["rows"]


def _essence(row: dict) -> tuple:
    a = row["audit"] or {}
    pairs = [(p["x"], p["x_prime"], p["lower_bound"]) for p in a.get("pairs", [])]
    return (row["name"], row["status"], row["why"], a.get("verdict"), a.get("max_lower_bound_ratio"), pairs)


def test_ray_rows_equal_local_rows(cli: Cli, ray_runtime: None) -> None:
    local = _rows(cli(_argv()))
    on_ray = _rows(cli(_argv("--engine", "ray")))
    assert [r["name"] for r in on_ray] == [r["name"] for r in local]  # the table's order
    assert [_essence(r) for r in on_ray] == [_essence(r) for r in local]
    assert [r["audit"]["verdict"] for r in on_ray if r["audit"]] == ["violates", "violates"]
    assert on_ray[2]["status"] == "cannot-run"  # a row that cannot run fails inside its task, and stays
