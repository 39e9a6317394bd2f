"""The CLI under interrupts, odd encodings, piped output and oversized work (issue 16, items 4–5)."""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from dpcore.cli import main
from dpcore.commands import common, listing
from dpcore.files import Terminated

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("delay", [0.05, 0.15, 0.3, 0.6, 1.0])
def test_ctrl_c_during_start_up_is_one_line(delay: float) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "dpcore", "audit", "--mechanism", "laplace", "--dim", "8", "--epsilon", "1"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    time.sleep(delay)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    # On a loaded machine the signal can still land in the interpreter's own start-up (site,
    # runpy), before any dpcore code runs; that traceback is Python's and names no dpcore file.
    assert "Traceback" not in err or "dpcore" not in err, err
    if "Fatal Python error: init_import_site" in err:
        # the signal landed while the interpreter imported ``site``, before ``-m dpcore`` ran:
        # Python's own exit status 1, with no dpcore frame (checked above)
        return
    assert proc.returncode in (0, 130, -signal.SIGINT), (proc.returncode, err)


@pytest.mark.parametrize(("signal_exc", "code", "line"), [(KeyboardInterrupt, 130, "interrupted"),
                                                        (Terminated, 143, "terminated")])  # fmt: skip
def test_a_signal_wrapped_by_a_class_body_is_still_one_line(
    signal_exc: type[BaseException], code: int, line: str, capsys, monkeypatch: pytest.MonkeyPatch
) -> None:
    """CI, stop 82: Ctrl-C that lands in a dataclass field's ``__set_name__`` while a command imports
    its module reaches ``main`` as Python's RuntimeError with the interrupt as its cause. The
    signal is raised from a real ``__set_name__`` here, so Python does the wrapping."""

    class Trap:
        def __set_name__(self, owner: type, name: str) -> None:
            raise signal_exc()

    def run(_args: object) -> int:
        type("Late", (), {"field": Trap()})  # what importing a module of dataclasses does
        return 0

    monkeypatch.setattr(listing, "run", run)
    assert main(["list"]) == code
    assert capsys.readouterr().err.strip().splitlines() == [f"dpcore: {line}"]
    assert main(["list", "--json"]) == code
    assert json.loads(capsys.readouterr().err)["type"] == line


@pytest.mark.parametrize(
    "argv",
    [["list"], ["audit", "--mechanism", "adept", "--dim", "8", "--epsilon", "1"],
     ["sensitivity", "--clip", "1", "--dim", "8", "--epsilon", "1"]],
)  # fmt: skip
def test_cp1252_terminal_does_not_crash(argv: list[str]) -> None:
    env = {**os.environ, "PYTHONIOENCODING": "cp1252"}
    proc = subprocess.run(
        [sys.executable, "-m", "dpcore", *argv], cwd=ROOT, env=env, capture_output=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr.decode("utf-8", "replace")
    assert "ε".encode() in proc.stdout or "√".encode() in proc.stdout or b"Baseline" in proc.stdout


def test_progress_is_shown_on_a_pipe_every_ten_seconds(monkeypatch: pytest.MonkeyPatch) -> None:
    buf = io.StringIO()
    monkeypatch.setattr(common.sys, "stderr", buf)  # not a TTY
    now = [1000.0]
    monkeypatch.setattr(common.time, "monotonic", lambda: now[0])
    report = common.stderr_progress("sim")
    assert report is not None
    report(1, 100)  # too soon: nothing
    now[0] += 11
    report(40, 100)
    now[0] += 1
    report(50, 100)  # rate-limited
    now[0] += 11
    report(100, 100)
    lines = buf.getvalue().splitlines()
    assert lines == ["sim:  40.0% (40 of 100)", "sim: 100.0% (100 of 100)"]


def test_short_runs_print_no_progress_on_a_pipe(monkeypatch: pytest.MonkeyPatch) -> None:
    buf = io.StringIO()
    monkeypatch.setattr(common.sys, "stderr", buf)
    report = common.stderr_progress("sim")
    assert report is not None
    report(50, 100)
    report(100, 100)
    assert buf.getvalue() == ""


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["adept-sim", "--dims", "1-4096", "--pairs", "1e6", "--clip", "1"], "would draw 8.2e+09 values"),
        (
            [
                "audit",
                "--mechanism",
                "dptext",
                "--dims",
                "512,768,1000",
                "--blackbox",
                "--epsilon",
                "1",
                "--method",
                "mc",
                "--trials",
                "1e7",
            ],
            "this grid would draw",
        ),
        (
            ["audit-text", "--mechanism", "santext", "--epsilon", "1", "--pairs", "500", "--samples", "1e7"],
            "the limit is",
        ),
    ],
)
def test_oversized_work_is_refused_with_the_estimate(
    argv: list[str], needle: str, capsys, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Refused before the work: the run's progress reporter (called after each block of draws)
    # is never called. A state, not a clock.
    reported: list[tuple[int, int]] = []

    def spy(*_a: object, **_k: object):  # type: ignore[no-untyped-def]
        return lambda done, total: reported.append((done, total))

    for mod in ("adept_sim", "audit", "audit_text"):
        monkeypatch.setattr(f"dpcore.commands.{mod}.stderr_progress", spy)
    assert main(argv) == 2
    assert reported == [], "work started before the refusal"
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and needle in err[0], err


def test_ctrl_c_during_an_attack_says_interrupted() -> None:
    """Issue 58: ``attack`` interrupted by SIGINT must say so, as every other command does. The
    signal is sent once the masked-LM attacker has reported progress (a state, not a delay): the
    whole run takes minutes, the first report comes after ten seconds."""
    argv = ["attack", "--mechanism", "santext", "--epsilons", "1,3", "--sentences", "300", "--attack", "mlm"]
    proc = subprocess.Popen(
        [sys.executable, "-m", "dpcore", *argv],
        cwd=ROOT,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stderr is not None
    seen = []
    for line in proc.stderr:
        seen.append(line)
        if line.startswith("attacking:"):
            break
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, (proc.returncode, seen, err[-2000:])
    assert err.strip().splitlines()[-1] == "dpcore: interrupted", (seen, err[-2000:])
