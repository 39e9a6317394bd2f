"""``python -m dpcore audit-rewriter``: each output mode, exit statuses, bad input."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from dpcore.cli import main
from dpcore.rewriter.pairs import corpus_sentences

ROOT = Path(__file__).resolve().parents[1]
PLUGINS = ROOT / "tests" / "plugins" / "rewriters.py"
POOL = corpus_sentences()[:20]
BASE = ["audit-rewriter", "--rewriter", "planted:copy", "--epsilon", "1", "--q", "0.5", "--rewrites", "100"]
BASE += ["--distinguishers", "exact,words"]


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-m", "dpcore", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        stdin=subprocess.DEVNULL,
        timeout=600,
    )


def test_text_output_from_the_real_cli() -> None:
    r = _cli(*BASE, "--x", POOL[0], "--x-prime", POOL[1], "--rewrites", "200")
    assert r.returncode == 0, r.stderr
    assert "verdict: violates" in r.stdout
    assert "largest certifiable bound at this size" in r.stdout
    assert "exact loss (known for this planted rewriter)" in r.stdout


def test_json_output_from_the_real_cli_holds_only_json() -> None:
    r = _cli(*BASE, "--pair-kind", "unrelated", "--pairs", "2", "--seed", "4", "--json")
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    assert d["verdict"] in ("violates", "not-detected")
    assert len(d["pairs"]) == 2 and d["seed"] == 4
    assert d["rewrites_per_input"] == 100 and d["evaluation_rewrites"] == 50
    assert d["largest_certifiable_bound"] > 0 and len(d["power"]) == 3
    assert d["claim"]["unit"] == "document" and d["parameters"]["q"] == 0.5


def test_the_same_seed_gives_the_same_json_on_two_workers(capsys: pytest.CaptureFixture[str]) -> None:
    args = [*BASE, "--x", POOL[2], "--x-prime", POOL[3], "--json", "--seed", "9"]
    assert main(args) == 0
    one = json.loads(capsys.readouterr().out)
    assert main([*args, "--workers", "2"]) == 0
    two = json.loads(capsys.readouterr().out)
    for d in (one, two):
        d.pop("seconds"), d.pop("workers")
    assert one == two


def test_a_plugin_file_is_audited_from_the_cli(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(
        ["audit-rewriter", "--rewriter", f"{PLUGINS}:shuffle", "--epsilon", "1", "--x", "a b c d",
         "--x-prime", "a b c e", "--rewrites", "40", "--distinguishers", "words"]
    )  # fmt: skip
    out = capsys.readouterr().out
    assert code == 0 and "rewriter: plugin:shuffle" in out and "VIOLATES" in out


def test_a_plugin_that_breaks_the_contract_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(
        ["audit-rewriter", "--rewriter", f"{PLUGINS}:own_generator", "--epsilon", "1", "--x", "a b c d",
         "--x-prime", "a b c e", "--rewrites", "40"]
    )  # fmt: skip
    assert code == 2
    assert "gives other rewrites for the same seed" in capsys.readouterr().err


def test_nothing_within_the_premise_exits_3(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(
        ["audit-rewriter", "--rewriter", "dp-mlm", "--epsilon", "1", "--x", "a short line",
         "--x-prime", "a much longer line than that", "--rewrites", "20"]
    )  # fmt: skip
    captured = capsys.readouterr()
    assert code == 3
    assert "verdict: untested" in captured.out
    assert "nothing could be tested (exit status 3)" in captured.err and "tokens" in captured.err


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--epsilon", "0"], "epsilon"),
        (["--epsilon", "nan"], "epsilon"),
        (["--rewrites", "5"], "--rewrites"),
        (["--confidence", "1.5"], "--confidence"),
        (["--x-prime", "only this"], "--x-prime needs --x"),
        (["--x", "   "], "--x is empty"),
        (["--x", "w " * 3000], "characters"),
        (["--distinguishers", "bert"], "distinguisher"),
        (["--q", "1"], "q = 1 is out of range"),
        (["--param", "q"], "--param takes NAME=VALUE"),
        (["--param", "nope=1"], "takes no option nope"),
        (["--rewriter", "nope"], "unknown rewriter"),
        (["--address", "1.2.3.4:6379"], "--address is for --engine ray"),
        (["--pairs", "0"], "--pairs"),
        (["--pair-kind", "two-words"], "pair kind"),
        (["--workers", "0"], "workers"),
    ],
)
def test_bad_input_exits_2_with_one_line(
    extra: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    args = list(BASE)
    for flag, value in zip(extra[::2], extra[1::2], strict=True):
        if flag in args:
            args[args.index(flag) + 1] = value
        else:
            args += [flag, value]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert message in err
    assert "Traceback" not in err
