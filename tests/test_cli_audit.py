"""CLI: `python -m dpcore list` and `audit` — JSON shape, lists, and one-line errors."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.cli_errors import json_error
from tests.conftest import Cli


def test_list_prints_registry(cli: Cli) -> None:
    code, out, _ = cli("list", "--json")
    assert code == 0
    names = {r["name"]: r for r in json.loads(out)}
    for required in (
        "copy",
        "random",
        "laplace",
        "gaussian",
        "adept",
        "adept-corrected",
        "dptext",
        "dptext-resample",
        "dpnr",
    ):
        assert required in names
    assert names["dptext"]["flawed"] and not names["laplace"]["flawed"]
    code, out, _ = cli("list")
    assert code == 0 and "FLAWED" in out


def test_audit_json_object(cli: Cli) -> None:
    code, out, err = cli("audit", "--mechanism", "adept", "--dim", "128", "--epsilon", "1", "--json")
    assert code == 0, err
    d = json.loads(out)
    for key in (
        "mechanism",
        "dim",
        "epsilon",
        "method",
        "trials",
        "seed",
        "empirical_epsilon",
        "lower_bound",
        "claimed_epsilon",
        "verdict",
    ):
        assert key in d
    assert d["method"] == "exact" and abs(d["empirical_epsilon"] - 13.7432) < 1e-3
    assert d["verdict"] == "violates"


def test_audit_mc_json_with_inf_as_string(cli: Cli) -> None:
    code, out, _ = cli(
        "audit",
        "--mechanism",
        "dptext",
        "--dim",
        "4",
        "--epsilon",
        "1",
        "--method",
        "mc",
        "--trials",
        "1e5",
        "--seed",
        "7",
        "--json",
    )
    assert code == 0
    d = json.loads(out)
    assert d["empirical_epsilon"] == "inf" and d["upper_bound"] == "inf"
    assert d["trials"] == 100_000 and d["seed"] == 7
    assert isinstance(d["lower_bound"], float) and d["lower_bound"] > 1.0
    assert d["verdict"] == "violates"


def test_audit_dims_prints_list(cli: Cli) -> None:
    code, out, _ = cli("audit", "--mechanism", "laplace", "--dims", "1,2,8,32", "--epsilon", "0.5", "--json")
    assert code == 0
    rows = json.loads(out)
    assert [r["dim"] for r in rows] == [1, 2, 8, 32]
    assert all(r["empirical_epsilon"] <= 0.5 for r in rows)


def test_audit_human_output(cli: Cli) -> None:
    code, out, _ = cli("audit", "--mechanism", "laplace", "--dim", "8", "--epsilon", "1")
    assert code == 0 and "no violation detected by this test (n = 8, ε = 1, exact values)" in out
    assert "within its claimed" not in out


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["audit", "--mechanism", "laplace", "--dim", "8", "--epsilon", "0"], "epsilon"),
        (["audit", "--mechanism", "laplace", "--dim", "8", "--epsilon", "-1"], "epsilon"),
        (["audit", "--mechanism", "laplace", "--dim", "8", "--epsilon", "nan"], "NaN"),
        (["audit", "--mechanism", "laplace", "--dim", "8", "--epsilon", "inf"], "finite"),
        (["audit", "--mechanism", "laplace", "--dim", "8", "--epsilon", "1e308"], "epsilon"),
        (["audit", "--mechanism", "laplace", "--dim", "0", "--epsilon", "1"], "dim"),
        (["audit", "--mechanism", "laplace", "--dim", "5000", "--epsilon", "1"], "dim"),
        (["audit", "--mechanism", "laplace", "--dims", "1,x", "--epsilon", "1"], "dims"),
        (["audit", "--mechanism", "nope", "--dim", "8", "--epsilon", "1"], "unknown mechanism"),
        (
            [
                "audit",
                "--mechanism",
                "laplace",
                "--dim",
                "8",
                "--epsilon",
                "1",
                "--method",
                "mc",
                "--trials",
                "1e12",
            ],
            "trials",
        ),
        (["audit", "--mechanism", "laplace", "--dim", "8", "--epsilon", "1", "--delta", "0.1"], "gaussian"),
        (["audit", "--mechanism", "gaussian", "--dim", "8", "--epsilon", "1", "--delta", "2"], "delta"),
        (["audit", "--mechanism", "laplace", "--dim", "8", "--epsilon", "1", "--method", "x"], "method"),
        (["audit", "--dim", "8"], "required"),
        (["frobnicate"], "invalid choice"),
    ],
)
def test_bad_arguments_exit_2_with_one_line(cli: Cli, argv: list[str], needle: str) -> None:
    code, out, err = cli(*argv)
    assert code == 2
    assert out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("dpcore: error:"), err
    assert needle.lower() in lines[0].lower()


def test_audit_workers_flag_does_not_change_the_result(cli: Cli) -> None:
    argv = ["audit", "--mechanism", "dptext", "--dim", "16", "--epsilon", "1", "--method", "mc",
            "--trials", "2e5", "--seed", "11", "--json"]  # fmt: skip
    runs = []
    for workers in ("1", "2"):
        code, out, err = cli(*argv, "--workers", workers)
        assert code == 0, err
        runs.append(json.loads(out))
    assert [r["workers"] for r in runs] == [1, 2] and runs[0]["streams"] == 4
    for r in runs:
        r.pop("workers"), r.pop("elapsed_s")
    assert runs[0] == runs[1]
    code, out, err = cli(*argv, "--workers", "0")
    assert code == 2 and out == ""
    assert json_error(err) == {
        "error": "workers must be between 1 and 64, got 0",
        "type": "invalid-input",
        "exit_code": 2,
    }


def test_python_dash_m_entry_point() -> None:
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "dpcore",
            "audit",
            "--mechanism",
            "dpnr",
            "--dim",
            "32",
            "--epsilon",
            "1",
            "--json",
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["true_epsilon"] == 32.0
    bad = subprocess.run(
        [sys.executable, "-m", "dpcore", "audit"], capture_output=True, text=True, timeout=60, check=False
    )
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1
