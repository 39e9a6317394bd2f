"""CLI: ``sanitize`` and ``metrics`` end to end, bad input, atomic output, ``list``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dpcore.validation import DPCoreError
from tests.conftest import Cli

LINES = [
    "It's a charming and often affecting journey.",
    "",
    "The patient was diagnosed with cancer in Boston.",
    "Third line stays third.",
]


@pytest.fixture()
def infile(tmp_path: Path) -> Path:
    p = tmp_path / "in.txt"
    p.write_text("\n".join(LINES) + "\n", encoding="utf-8")
    return p


@pytest.mark.parametrize("mech", ["santext", "santext+", "random", "feyisetan"])
def test_sanitize_keeps_line_count_and_order(mech: str, infile: Path, tmp_path: Path, cli: Cli) -> None:
    out = tmp_path / "out.txt"
    args = ["sanitize", "--mechanism", mech, "--epsilon", "1000", "--seed", "3", "--json"]
    if mech == "santext+":
        args += ["--p", "0"]  # p = 0: non-sensitive words are kept, sensitive ones kept at ε = 1000
    code, stdout, err = cli([*args, "--input", str(infile), "--output", str(out)])
    assert code == 0, err
    got = out.read_text(encoding="utf-8")
    assert got.endswith("\n") and len(got.splitlines()) == len(LINES)
    report = json.loads(stdout)
    assert report["parameters"]["seed"] == 3 and report["parameters"]["mechanism"] == mech
    if mech != "random":  # ε = 1000 keeps every in-vocabulary token: order is visible
        assert got.splitlines()[0] == "it 's a charming and often affecting journey ."
        assert got.splitlines()[1] == ""
        assert got.splitlines()[3] == "third line stays third ."
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".out.txt")]


def test_sanitize_is_reproducible_and_respects_vocab_file(infile: Path, tmp_path: Path, cli: Cli) -> None:
    vocab = tmp_path / "vocab.txt"
    vocab.write_text("the\na\ncancer\njourney\nboston\n.\n", encoding="utf-8")
    outs = []
    for i in range(2):
        out = tmp_path / f"o{i}.txt"
        code, _, err = cli(
            ["sanitize", "--mechanism", "santext+", "--epsilon", "2", "--p", "0.3", "--w", "0.5",
             "--vocab", str(vocab), "--seed", "7", "--input", str(infile), "--output", str(out)]
        )  # fmt: skip
        assert code == 0, err
        outs.append(out.read_text(encoding="utf-8"))
        assert "seed 7" in err
    assert outs[0] == outs[1]
    allowed = {"the", "a", "cancer", "journey", "boston", ".", "[UNK]"}
    assert set(outs[0].split()) <= allowed  # V is exactly the file's words


BAD = [
    (["--epsilon", "0"], "epsilon"),
    (["--epsilon", "nan"], "NaN"),
    (["--epsilon", "-2"], "epsilon"),
    (["--epsilon", "1", "--embedding", "word2vec"], "unknown embedding"),
    (["--epsilon", "1", "--mechanism", "santext+", "--p", "1.5"], "p = 1.5 is out of range: p ∈ [0, 1]"),
    (["--epsilon", "1", "--mechanism", "santext+", "--w", "-0.1"], "w = -0.1 is out of range: w ∈ (0, 1]"),
    (["--epsilon", "1", "--p", "0.3"], "--p does not apply to santext"),
    (["--epsilon", "1", "--mechanism", "nope"], "unknown text mechanism"),
    (["--epsilon", "1", "--seed", "1.5"], "seed"),
]


@pytest.mark.parametrize(("extra", "msg"), BAD)
def test_bad_arguments_exit_2_without_output(
    extra: list[str], msg: str, infile: Path, tmp_path: Path, cli: Cli
) -> None:
    out = tmp_path / "out.txt"
    args = ["sanitize", "--mechanism", "santext", "--input", str(infile), "--output", str(out)]
    if "--mechanism" in extra:
        args = ["sanitize", "--input", str(infile), "--output", str(out)]
    code, _, err = cli([*args, *extra])
    assert code == 2
    assert err.count("\n") == 1 and msg in err
    assert not out.exists()


@pytest.mark.parametrize(
    ("content", "msg"),
    [(b"", "empty"), (b"\x00\x01\x02binary", "binary"), (b"caf\xe9 au lait\n", "not UTF-8"),
     (b"word " * 2_100_000, "limit is 5 MB")],
    ids=["empty", "binary", "latin1", "10MB"],
)  # fmt: skip
def test_bad_input_files(content: bytes, msg: str, tmp_path: Path, cli: Cli) -> None:
    src = tmp_path / "in.bin"
    src.write_bytes(content)
    out = tmp_path / "out.txt"
    out.write_text("previous result\n", encoding="utf-8")  # must survive a failed run untouched
    code, _, err = cli(
        ["sanitize", "--mechanism", "santext", "--epsilon", "1", "--input", str(src), "--output", str(out)]
    )
    assert code == 2 and msg in err and err.count("\n") == 1
    assert out.read_text(encoding="utf-8") == "previous result\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.bin", "out.txt"]


def test_missing_input_and_output_dir(infile: Path, tmp_path: Path, cli: Cli) -> None:
    code, _, err = cli(
        ["sanitize", "--mechanism", "santext", "--epsilon", "1", "--input", str(tmp_path / "nope.txt"),
         "--output", str(tmp_path / "o.txt")]
    )  # fmt: skip
    assert code == 2 and "does not exist" in err
    code, _, err = cli(
        ["sanitize", "--mechanism", "santext", "--epsilon", "1", "--input", str(infile),
         "--output", str(tmp_path / "no" / "dir" / "o.txt")]
    )  # fmt: skip
    assert code == 2 and "output directory" in err


def test_atomic_write_leaves_nothing_on_failure(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from dpcore.text import sanitize as mod

    target = tmp_path / "out.txt"

    def boom(*_: object) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(mod.os, "replace", boom)
    with pytest.raises(DPCoreError, match="disk full"):  # one clear error (dpcore.files)
        mod.write_atomic(target, "data")
    assert list(tmp_path.iterdir()) == []


def test_metrics_json(cli: Cli) -> None:
    code, out, err = cli(
        ["metrics", "--mechanism", "santext+", "--epsilon", "3", "--vocab-size", "2000",
         "--words", "the,Movie", "--population", "300", "--json"]
    )  # fmt: skip
    assert code == 0, err
    data = json.loads(out)
    rows = {r["word"]: r for r in data["metrics"]}
    assert set(rows) == {"the", "movie"}
    assert rows["the"]["N_x"] == pytest.approx(0.7)
    for r in rows.values():
        assert {"N_x", "S_x", "S_y_star_mc", "S_y_star_expected"} <= set(r)
    assert data["bound_check"]["passed"] is True
    assert data["parameters"]["p"] == 0.3


def test_metrics_bad_word(cli: Cli) -> None:
    code, _, err = cli(
        [
            "metrics",
            "--mechanism",
            "santext",
            "--epsilon",
            "3",
            "--vocab-size",
            "2000",
            "--words",
            "qqqzzzxxyy",
        ]
    )
    assert code == 2 and "not in the" in err


def test_list_includes_text_mechanisms(cli: Cli) -> None:
    code, out, _ = cli(["list", "--json"])
    assert code == 0
    text = {r["name"] for r in json.loads(out) if r["family"] == "text"}
    from dpcore.text import TEXT_MECHANISMS

    assert text == set(TEXT_MECHANISMS.names()) and {"santext", "santext+", "tem", "dp-mlm"} <= text
