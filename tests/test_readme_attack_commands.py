"""Issue 11, part 3: the documented sanitize → mask-attack commands (once in the README, since issue 25
in docs/guides/attacker.md) run end to end, for both
embeddings, exactly as printed (on a small original.txt), and misaligned input is refused."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from dpcore.models.masked_lm import default_mlm_available

ROOT = Path(__file__).resolve().parents[1]
TEXT = "the hospital kept my records private.\nshe was diagnosed with cancer in march\n"


def _readme_block() -> list[str]:
    readme = (ROOT / "docs" / "guides" / "attacker.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```bash\n(.*?)```", readme, flags=re.S)
    (block,) = [b for b in blocks if "--sanitized sanitized.jsonl" in b]
    return [ln.split("  #")[0].strip() for ln in block.splitlines() if ln.startswith("python -m dpcore")]


def _run(cmd: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    argv = [sys.executable, *shlex.split(cmd)[1:]]
    return subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=600)


def test_the_block_has_both_embeddings() -> None:
    cmds = _readme_block()
    assert any("--embedding glove" in c for c in cmds) and any("--embedding bert" in c for c in cmds)
    assert any("--format jsonl" in c for c in cmds)


@pytest.mark.skipif(not default_mlm_available(), reason="the shipped attacker is missing")
def test_readme_commands_end_to_end(tmp_path: Path) -> None:
    (tmp_path / "original.txt").write_text(TEXT)
    results = {}
    for cmd in _readme_block():
        if "./my-bert-mlm" in cmd:
            continue  # a user's own model folder
        p = _run(cmd, tmp_path)
        assert p.returncode == 0, (cmd, p.stderr)
        results[cmd] = p
    rows = [json.loads(x) for x in (tmp_path / "sanitized.jsonl").read_text().splitlines()]
    assert [r["text"] for r in rows] == TEXT.splitlines()
    assert all(len(r["original"]) == len(r["sanitized"]) for r in rows)
    n_pieces = sum(len(r["original"]) for r in rows)
    attacks = [json.loads(p.stdout) for c, p in results.items() if "mask-attack" in c and "--json" in c]
    assert len(attacks) == 2
    glove, bert = attacks
    assert glove["n_tokens"] == 14 and glove["n_sentences"] == 2
    assert bert["n_tokens"] == n_pieces and bert["unit"] == "wordpiece"
    for a in (glove, bert):
        assert 0.0 <= a["ci_low"] <= a["defense_rate"] <= a["ci_high"] <= 1.0


def test_bert_plain_text_is_refused_not_scored(tmp_path: Path) -> None:
    # "kristoffersen" is four WordPieces: the sanitized plain text has 10 tokens for 7 words
    (tmp_path / "original.txt").write_text("the hospital kept kristoffersen records private.\n")
    p = _run(
        "python -m dpcore sanitize --mechanism santext --embedding bert-wordpiece --epsilon 3 --seed 0 "
        "--input original.txt --output sanitized.txt",
        tmp_path,
    )
    assert p.returncode == 0, p.stderr
    # plain text cannot be aligned with the original's words, and mask-attack refuses it
    q = _run("python -m dpcore mask-attack --input original.txt --sanitized sanitized.txt --json", tmp_path)
    assert q.returncode == 2 and "sanitize --format jsonl" in q.stderr
    assert len(q.stderr.strip().splitlines()) == 1 and not q.stdout


def test_plain_text_wordpiece_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from dpcore.cli import main

    (tmp_path / "original.txt").write_text("the hospital\n")
    (tmp_path / "sanitized.txt").write_text("a clinic\n")  # equal counts: not enough to align pieces
    code = main(["mask-attack", "--input", str(tmp_path / "original.txt"),
                 "--sanitized", str(tmp_path / "sanitized.txt"), "--unit", "wordpiece"])  # fmt: skip
    err = capsys.readouterr().err
    assert code == 2 and "sanitize --format jsonl" in err and len(err.strip().splitlines()) == 1
