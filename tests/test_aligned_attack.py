"""sanitize --format jsonl feeds mask-attack aligned tokens, for both embeddings; misaligned input
is refused, never scored (issue 11, item 3)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dpcore.models.masked_lm import default_mlm_available
from tests.conftest import Cli

TEXT = "the hospital kept my records private.\nshe was diagnosed with cancer in march\n"


@pytest.mark.parametrize("embedding", ["glove", "bert"])
def test_jsonl_is_aligned_and_attackable(embedding: str, tmp_path: Path, cli: Cli) -> None:
    src = tmp_path / "in.txt"
    src.write_text(TEXT)
    out = tmp_path / "san.jsonl"
    args = ["sanitize", "--mechanism", "santext", "--embedding", embedding, "--epsilon", "3",
            "--input", str(src), "--output", str(out), "--format", "jsonl", "--seed", "0"]  # fmt: skip
    if embedding == "glove":
        args += ["--vocab-size", "5000"]
    code, _, err = cli(args)
    assert code == 0, err
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["text"] for r in rows] == TEXT.splitlines()
    assert all(len(r["original"]) == len(r["sanitized"]) > 0 for r in rows)
    if not default_mlm_available():
        pytest.skip("the shipped attacker is missing")
    code, stdout, err = cli(["mask-attack", "--input", str(src), "--sanitized", str(out), "--json"])
    assert code == 0, err
    res = json.loads(stdout)
    assert res["n_tokens"] == sum(len(r["original"]) for r in rows)


def test_misaligned_jsonl_is_refused(tmp_path: Path, cli: Cli) -> None:
    src = tmp_path / "in.txt"
    src.write_text(TEXT)
    rows = [
        {
            "text": "the hospital kept my records private.",
            "original": ["the", "hospital"],
            "sanitized": ["a"],
        },
        {"text": "she was diagnosed with cancer in march", "original": ["she"], "sanitized": ["he"]},
    ]
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    code, _, err = cli(["mask-attack", "--input", str(src), "--sanitized", str(bad)])
    assert code == 2 and "tokens must align" in err
    rows[0]["sanitized"] = ["a", "b"]
    rows[1]["text"] = "a different line"
    bad.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    code, _, err = cli(["mask-attack", "--input", str(src), "--sanitized", str(bad)])
    assert code == 2 and "different line" in err
    assert len(err.strip().splitlines()) == 1


def test_bert_text_output_with_other_token_counts_is_refused(tmp_path: Path, cli: Cli) -> None:
    src = tmp_path / "in.txt"
    src.write_text("the hospital\n")
    san = tmp_path / "san.txt"
    san.write_text("exhaustedissa\n")  # WordPieces joined back: one word for two positions
    code, _, err = cli(["mask-attack", "--input", str(src), "--sanitized", str(san)])
    assert code == 2 and "sanitize --format jsonl" in err
