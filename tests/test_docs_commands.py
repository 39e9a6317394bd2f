"""Every command and every Python block the documentation shows runs (issue 25).

What is collected, from ``README.md`` and every Markdown page under ``docs/`` (the MkDocs site):

- fenced blocks tagged ``bash``, ``sh``, ``shell`` or ``console``: every line that starts with
  ``python -m dpcore`` or ``dpcore`` is a command (``\\`` continuations joined, ``# comments``
  dropped). Other lines (``pip install``, ``apt-get``, ``ray start``, ``streamlit run``) are not
  run. A ``python -m dpcore`` line in an untagged block fails the test: tag the block.
- fenced ``python`` blocks: run as scripts, in page order, in one namespace per page.

How it runs: each page in its own empty temporary folder holding the sample files of
:data:`SAMPLE_FILES` (``reviews.txt``, ``original.txt``, ``reviews.csv``, ``my.tsv``,
``data/train-*.parquet``), so nothing is written into the repository; commands in-process through
:func:`dpcore.cli.main` (no subprocess); no network (Hugging Face is set offline). A command
passes when it exits 0, raises nothing, prints no traceback, and with ``--json`` prints JSON that
parses. A Python block passes when it raises nothing. Anything else fails the test, marked or not.

Small sizes. Unless ``DPCORE_DOCS_FULL=1`` is set, every size option of :data:`CI_CAPS` that a
command gives is lowered to its CI value; the options of :data:`CI_ADDED` are added with their CI
value when the command's sub-command has them and the command does not give them; a command that
screens the whole vocabulary gets :data:`SCREEN_CAPS`; :data:`CI_LISTS` keeps the first values of
a list option; :data:`CI_REPLACED` and :data:`CI_DROPPED` turn ``--engine ray`` (8–15 s of Ray
start-up) into the local engine, whose results are identical. Python blocks are not rewritten:
they are written small. The same table is in ``docs/development.md``.

Markers: an HTML comment right before a fenced block (``docs/development.md`` shows them):

- ``<!-- ci: run instead (REASON): ... -->``: a block too long for CI, or that needs what CI does
  not have (a cluster, the user's own model). The comment's body (commands for a shell block,
  code for a Python block) runs in its place. The reason is required.
- ``<!-- ci: file PATH -->``: the block is a file the page's commands use; it is written to PATH in
  the page's folder and not run.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import traceback
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from dpcore.cli import build_parser, main

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
FULL = os.environ.get("DPCORE_DOCS_FULL") == "1"

#: Size options and their CI value: a larger value given by a command is lowered to it.
CI_CAPS: dict[str, float] = {
    "--trials": 2000,  # audit --method mc (per neighbour), metrics (Monte-Carlo counts)
    "--samples": 2000,  # audit-text: draws per word
    "--pilot-samples": 500,
    "--screen-budget": 200_000,  # audit-text --strategy screen: draws over the whole vocabulary
    "--pairs": 5,  # audit-text pairs; adept-sim pairs per n
    "--vocab-size": 5000,  # the documented words stay in V
    "--population": 200,  # metrics: S_y* over sampled inputs instead of all of V
    "--sentences": 3,  # attack
    "--n-train": 40,  # utility
    "--n-test": 20,
    "--workers": 1,  # no forked pools inside the test process
    "--max-steps": 1,  # train-attacker
    "--eval-words": 10,
    "--validation-words": 10,
    "--rewrites": 30,  # audit-rewriter, calibrate-rewriters: rewrites per input (their floor is 20)
    "--max-new-tokens": 8,  # DP-Prompt: tokens per paraphrase
}
#: A command that screens the whole vocabulary (its sub-command has --screen-budget and it gives no
#: --words) gets a smaller vocabulary: the screen needs 200 draws of every word.
SCREEN_CAPS: dict[str, float] = {"--vocab-size": 1000, "--screen-budget": 200_000}
#: List options and the number of their values kept (the first ones).
CI_LISTS: dict[str, int] = {"--epsilons": 1}
#: Options whose value is replaced in CI: starting Ray takes 8–15 s, and the engines give identical
#: results (tests/test_corpus_ray.py, tests/test_textaudit*.py run Ray against the local engine).
CI_REPLACED: dict[str, str] = {"--engine": "local"}
#: Options dropped in CI with their value (they only make sense with a replaced one).
CI_DROPPED = ("--address",)
#: Options added with their CI value when the sub-command has them and the command omits them
#: (their defaults are sizes meant for real runs).
CI_ADDED = (
    "--samples",  # audit-text: without it, the audit's default draws per word (a sanitizer at 2,000)
    "--vocab-size",
    "--population",
    "--screen-budget",
    "--sentences",
    "--n-train",
    "--n-test",
    "--workers",
)
#: An added option is left out when the command gives one of these instead.
EXCLUSIVE = {"--vocab-size": ("--vocab", "--paper-setting"), "--screen-budget": ("--words",)}

SHELL_TAGS = {"bash", "sh", "shell", "console"}
COMMAND = re.compile(r"^(python -m dpcore|dpcore)(\s|$)")
MARKER = re.compile(r"<!--\s*ci:\s*(.*?)-->\s*$", re.S)

SAMPLE_TEXT = "the hospital kept my records private.\nshe was diagnosed with cancer in march\n"
SENTENCES = [
    ("the movie was great and the actors were wonderful", 1),
    ("what a boring film , i fell asleep", 0),
    ("a moving story with a brilliant cast", 1),
    ("the plot made no sense at all", 0),
    ("i loved every minute of it", 1),
    ("terrible dialogue and a weak ending", 0),
    ("a warm , funny and clever picture", 1),
    ("two hours of my life i will not get back", 0),
]
SAMPLE_FILES: dict[str, str] = {
    "reviews.txt": SAMPLE_TEXT,
    "original.txt": SAMPLE_TEXT,
    "reviews.csv": "id,review\n1,the hospital kept my records private\n2,she was diagnosed with cancer\n",
    "my.tsv": "sentence\tlabel\n" + "".join(f"{s}\t{y}\n" for s, y in SENTENCES * 3),
}


@dataclass
class Block:
    page: Path
    line: int  # 1-based line of the opening fence
    tag: str
    body: str
    marker: str | None = None  # "run instead", "file" or None
    reason: str = ""
    replacement: str = ""  # the marker's body (run instead) or path (file)
    commands: list[str] = field(default_factory=list)

    @property
    def where(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"


def shell_commands(body: str) -> list[str]:
    """The dpcore commands of a shell block, continuations joined, comments dropped."""
    joined = re.sub(r"\\\n\s*", " ", body)
    out = []
    for raw in joined.splitlines():
        line = raw.strip()
        if COMMAND.match(line):
            out.append(shlex.join(shlex.split(line, comments=True)))
    return out


def parse_marker(text: str, block: Block) -> None:
    m = re.match(r"file\s+(\S+)\s*$", text.strip())
    if m:
        block.marker, block.replacement = "file", m.group(1)
        return
    m = re.match(r"run instead\s*\((.+?)\)\s*:(.*)$", text.strip(), re.S)
    if not m:
        raise AssertionError(
            f"{block.where}: unknown ci marker {text.strip()!r}; use "
            "'<!-- ci: run instead (REASON): ... -->' or '<!-- ci: file PATH -->'"
        )
    block.marker, block.reason, block.replacement = "run instead", m.group(1).strip(), m.group(2).strip()


def collect(page: Path) -> list[Block]:
    lines = page.read_text(encoding="utf-8").splitlines()
    blocks: list[Block] = []
    i = 0
    while i < len(lines):
        fence = re.match(r"^```(\w*)\s*$", lines[i])
        if not fence:
            i += 1
            continue
        end = next(j for j in range(i + 1, len(lines)) if lines[j].startswith("```"))
        block = Block(page, i + 1, fence.group(1), "\n".join(lines[i + 1 : end]) + "\n")
        # a marker is the HTML comment that ends on the last non-blank line before the fence
        k = i - 1
        while k >= 0 and not lines[k].strip():
            k -= 1
        if k >= 0 and lines[k].rstrip().endswith("-->"):
            start = max(s for s in range(k + 1) if "<!--" in lines[s])
            m = MARKER.search("\n".join(lines[start : k + 1]))
            if m:
                parse_marker(m.group(1), block)
        if block.tag in SHELL_TAGS:
            block.commands = shell_commands(block.body)
        blocks.append(block)
        i = end + 1
    return blocks


ALL_BLOCKS = {page: collect(page) for page in PAGES}


def runnable(blocks: list[Block]) -> bool:
    return any(b.marker or b.commands or b.tag == "python" for b in blocks)


RUN_PAGES = [p for p, blocks in ALL_BLOCKS.items() if runnable(blocks)]
#: Shown commands whose work one test process computes once (``precompute-attack-page`` keeps its
#: view in the process): their pages run in the same pytest-xdist worker as the other tests that
#: ask for it (tests/test_attack_page_view.py), so two processes never compute it twice.
SHARED_WORK = {"precompute-attack-page": "attack-page-view"}


def _page_param(page: Path):  # type: ignore[no-untyped-def]
    cmds = " ".join(c for b in ALL_BLOCKS[page] for c in [*b.commands, b.replacement])
    groups = sorted({g for cmd, g in SHARED_WORK.items() if cmd in cmds})
    marks = [pytest.mark.xdist_group(g) for g in groups[:1]]
    return pytest.param(page, marks=marks, id=str(page.relative_to(ROOT)))


# --------------------------------------------------------------------------------------------
# Shrinking sizes


def _subparser(argv: list[str]):
    """The (sub-)parser that will read ``argv``'s options: dpcore → COMMAND → SCHEME …"""
    import argparse

    parser = build_parser()
    rest = list(argv)
    while rest:
        actions = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        if not actions or rest[0] not in actions[0].choices:
            break
        parser = actions[0].choices[rest.pop(0)]
    return parser


def shrink(argv: list[str]) -> list[str]:
    """``argv`` with the CI rules of the module docstring applied (unchanged with DPCORE_DOCS_FULL=1)."""
    if FULL:
        return argv
    known = {s for a in _subparser(argv)._actions for s in a.option_strings}
    screens = "--screen-budget" in known and not any(a.partition("=")[0] == "--words" for a in argv)
    caps = {**CI_CAPS, **SCREEN_CAPS} if screens else CI_CAPS
    out: list[str] = []
    rest = list(argv)
    while rest:
        arg = rest.pop(0)
        name, eq, _ = arg.partition("=")
        if name in CI_DROPPED:
            if not eq and rest:
                rest.pop(0)
            continue
        if name in CI_REPLACED:
            if not eq and rest:
                rest.pop(0)
            out += [name, CI_REPLACED[name]]
            continue
        out.append(arg)
    for i, arg in enumerate(out):
        name, eq, value = arg.partition("=")
        if name in CI_LISTS and not eq and i + 1 < len(out):
            out[i + 1] = ",".join(out[i + 1].split(",")[: CI_LISTS[name]])
        if name not in caps:
            continue
        if eq:
            pass
        elif i + 1 < len(out):
            value = out[i + 1]
        try:
            too_big = float(value) > caps[name]
        except ValueError:
            continue
        if too_big:
            cap = f"{caps[name]:g}"
            if eq:
                out[i] = f"{name}={cap}"
            else:
                out[i + 1] = cap
    given = {a.partition("=")[0] for a in out}
    for name in CI_ADDED:
        if name in known and name not in given and not given.intersection(EXCLUSIVE.get(name, ())):
            out += [name, f"{caps[name]:g}"]
    return out


def test_shrink_rules() -> None:
    if FULL:
        pytest.skip("DPCORE_DOCS_FULL=1 runs the documented sizes")
    a = shrink(["audit", "--mechanism", "adept", "--dims", "1,8", "--method", "mc", "--trials", "1e6"])
    assert a[a.index("--trials") + 1] == "2000"
    w = shrink(
        ["audit-text", "--mechanism", "santext", "--epsilon", "1", "--words", "a,b", "--vocab-size=9000"]
    )
    assert "--vocab-size=5000" in w and "--screen-budget" not in w
    s = shrink(["audit-text", "--mechanism", "santext", "--epsilon", "1", "--pairs", "50"])
    assert s[s.index("--vocab-size") + 1] == "1000" and s[s.index("--screen-budget") + 1] == "200000"
    u = shrink(["utility", "--mechanism", "santext", "--epsilon", "3", "--n-train=5000"])
    assert "--n-train=40" in u and u[u.index("--n-test") + 1] == "20"
    s = shrink(["attack", "--mechanism", "santext", "--epsilons", "1,3,10", "--sentences", "200"])
    assert s[s.index("--epsilons") + 1] == "1" and s[s.index("--sentences") + 1] == "3"
    r = shrink(["sanitize-corpus", "--engine", "ray", "--address", "HEAD:6379", "--workers", "32"])
    assert r[:5] == ["sanitize-corpus", "--engine", "local", "--workers", "1"]
    assert shrink(["accounting", "binary", "--int-bits", "1"]) == ["accounting", "binary", "--int-bits", "1"]


# --------------------------------------------------------------------------------------------
# Running


def run_command(command: str, capsys: pytest.CaptureFixture[str], where: str) -> None:
    argv = shlex.split(command)
    argv = argv[3:] if argv[:3] == ["python", "-m", "dpcore"] else argv[1:]
    argv = shrink(argv)
    absolute = [a for a in argv if a.startswith("/")]
    assert not absolute, f"{where}: `{command}` uses absolute paths {absolute}; mark the block"
    capsys.readouterr()
    try:
        status = main(argv)
    except SystemExit as exc:  # --help, --version
        status = exc.code or 0
    except BaseException:
        pytest.fail(f"{where}: `{command}` (run as {argv}) raised:\n{traceback.format_exc()}")
    out, err = capsys.readouterr()
    assert status == 0, f"{where}: `{command}` (run as {argv}) exited {status}: {err.strip()[-2000:]}"
    assert "Traceback" not in err, f"{where}: `{command}` printed a traceback:\n{err[-3000:]}"
    if "--json" in argv:
        try:
            json.loads(out)
        except json.JSONDecodeError as exc:
            pytest.fail(f"{where}: `{command}` --json printed no valid JSON ({exc}): {out[:500]!r}")


def run_python(code: str, namespace: dict, capsys: pytest.CaptureFixture[str], where: str) -> None:
    try:
        exec(compile(code, where, "exec"), namespace)  # our own documentation, not user input
    except BaseException:
        pytest.fail(f"{where}: the Python block raised:\n{traceback.format_exc()}")
    capsys.readouterr()


@pytest.fixture
def page_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    import pandas as pd

    for name, text in SAMPLE_FILES.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    (tmp_path / "data").mkdir()
    for k in range(2):
        sentences = [s for s, _ in SENTENCES[4 * k : 4 * k + 4]]
        pd.DataFrame({"id": range(4 * k, 4 * k + 4), "sentence": sentences}).to_parquet(
            tmp_path / "data" / f"train-{k:05d}.parquet"
        )
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "1")
    return tmp_path


@pytest.mark.parametrize("page", [_page_param(p) for p in RUN_PAGES])
def test_documented_commands_run(page: Path, page_folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    namespace: dict = {"__name__": "__docs__"}
    blocks = ALL_BLOCKS[page]
    for block in blocks:  # files first: a page may show the file after the command that uses it
        if block.marker == "file":
            target = page_folder / block.replacement
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(block.body, encoding="utf-8")
    for block in blocks:
        if block.marker == "file":
            continue
        if block.tag in SHELL_TAGS:
            commands = shell_commands(block.replacement) if block.marker else block.commands
            for command in commands:
                run_command(command, capsys, block.where)
        elif block.tag == "python":
            run_python(block.replacement if block.marker else block.body, namespace, capsys, block.where)


# --------------------------------------------------------------------------------------------
# The collector itself


def test_markers_are_well_formed_and_attached() -> None:
    for page, blocks in ALL_BLOCKS.items():
        text = page.read_text(encoding="utf-8")
        n_markers = len(re.findall(r"^<!--\s*ci:", text, flags=re.M))
        assert n_markers == sum(1 for b in blocks if b.marker), (
            f"{page}: a ci marker not right before a block"
        )
        for b in blocks:
            if b.marker == "run instead":
                assert b.reason, f"{b.where}: a run-instead marker needs its reason"
                if b.tag in SHELL_TAGS:
                    assert b.commands, f"{b.where}: run instead of a block with no dpcore command"
                    assert shell_commands(b.replacement), f"{b.where}: the replacement has no dpcore command"
                else:
                    assert b.tag == "python", f"{b.where}: run instead on a {b.tag or 'untagged'} block"
            if b.marker == "file":
                assert not b.replacement.startswith("/") and ".." not in b.replacement, b.where


def test_no_command_hides_in_an_untagged_block() -> None:
    for blocks in ALL_BLOCKS.values():
        for b in blocks:
            if b.tag not in SHELL_TAGS and b.tag not in ("python", "text"):
                hidden = [ln for ln in b.body.splitlines() if COMMAND.match(ln.strip())]
                assert not hidden, f"{b.where}: tag the block `bash` so its commands run: {hidden}"


def test_the_collector_finds_the_documented_commands() -> None:
    commands = {c for blocks in ALL_BLOCKS.values() for b in blocks for c in b.commands}
    # the command of issue 25 that crashed in its text output, and one of every kind of page
    assert "python -m dpcore accounting binary --int-bits 1 --frac-bits 4 --bit-epsilon 0.1" in commands
    assert any(c.startswith("python -m dpcore sanitize-corpus") for c in commands)
    assert any(c.startswith("python -m dpcore audit --mechanism adept") for c in commands)
    subcommands = {shlex.split(c)[3] for c in commands if c.startswith("python -m dpcore ")}
    assert len(subcommands) >= 12, sorted(subcommands)
    readme = [b for b in ALL_BLOCKS[ROOT / "README.md"] if b.commands or b.tag == "python"]
    assert len(readme) >= 2, "the README shows a CLI and a library example"
