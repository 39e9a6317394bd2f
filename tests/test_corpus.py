"""sanitize-corpus: per-row seeding, formats, carried columns, bad input, atomic output, the API."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from dpcore.corpus import MechanismSpec, sanitize_dataframe, sanitize_files, sanitize_table
from dpcore.corpus.core import BatchSanitizer
from dpcore.corpus.io import MANIFEST_NAME
from dpcore.text import create_text_mechanism
from dpcore.text.vocab import build_vocabulary
from tests.conftest import Cli

TEXTS = [
    "It's a charming and often affecting journey.",
    "",
    "The patient was diagnosed with cancer in Boston.",
    "zzqx unknownword the of",
    "Third line stays third, with a number 42 and words.",
]
SPEC = MechanismSpec("santext", 2.0, vocab_size=2000)


def corpus(n: int = 60) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "id": [f"{i:04d}" for i in range(n)],
            "text": [TEXTS[i % len(TEXTS)] + f" row {i}" for i in range(n)],
            "label": [i % 3 for i in range(n)],
        }
    )


BASE = [
    "sanitize-corpus",
    "--mechanism",
    "santext",
    "--epsilon",
    "2",
    "--vocab-size",
    "2000",
    "--no-progress",
]


# --- the mechanism: pre-drawn uniforms ---------------------------------------------------------


@pytest.mark.parametrize("name", ["santext", "santext+", "random", "tem", "custext", "custext+"])
def test_uniform_path_is_exactly_sample_ids(name: str) -> None:
    vocab = build_vocabulary("glove", size=500)
    mech = create_text_mechanism(name, vocab=vocab, epsilon=3.0) if name != "tem" else None
    if mech is None:
        from dpcore.text import TEXT_MECHANISMS

        mech = TEXT_MECHANISMS.create("tem", vocab=vocab, epsilon=3.0)
    ids = np.random.default_rng(1).integers(0, len(vocab), 400)
    a = mech.sample_ids(ids, np.random.default_rng(5))
    u = np.random.default_rng(5).random(2 * ids.size)  # one call of 2n = two calls of n
    b = mech.sample_ids_from_uniforms(ids, u[: ids.size], u[ids.size :])
    assert np.array_equal(a, b)


def test_uniform_path_matches_the_exact_distribution() -> None:
    from scipy.stats import chisquare

    vocab = build_vocabulary("glove", size=300)
    mech = create_text_mechanism("santext+", vocab=vocab, epsilon=2.0, p=0.3, w=0.5)
    x = int(np.flatnonzero(~mech.sensitive)[0])  # a non-sensitive word: keep w.p. 0.7
    n = 40_000
    g = np.random.default_rng(11)
    y = mech.sample_ids_from_uniforms(np.full(n, x), g.random(n), g.random(n))
    ((_, row),) = list(mech.iter_log_rows(np.array([x])))
    prob = np.exp(row[0])
    expected = prob * n
    big = expected >= 5
    obs = np.bincount(y, minlength=len(vocab))
    f_obs = np.append(obs[big], obs[~big].sum())
    f_exp = np.append(expected[big], expected[~big].sum())
    assert chisquare(f_obs, f_exp).pvalue > 1e-4


def test_batch_fast_path_equals_per_row_generators() -> None:
    fast = BatchSanitizer(SPEC, seed=9)
    slow = BatchSanitizer(SPEC, seed=9)
    slow.fast = False  # one sample_ids call per row with default_rng(SeedSequence([9, row]))
    texts = [*TEXTS, None]
    rows = np.array([5, 0, 17, 3, 99, 100])
    assert fast.sanitize(texts, rows)[0] == slow.sanitize(texts, rows)[0]
    # a row's output depends on its index and text only, not on its batch
    alone = [fast.sanitize([t], np.array([r]))[0][0] for t, r in zip(texts, rows, strict=True)]
    assert alone == fast.sanitize(texts, rows)[0]


# --- files ---------------------------------------------------------------------------------------


def test_cli_parquet_glob_keeps_columns_rows_and_writes_manifest(tmp_path: Path, cli: Cli) -> None:
    df = corpus(50)
    df["tags"] = [[i, i + 1] for i in range(50)]
    pq.write_table(
        pa.Table.from_pandas(df.iloc[:30], preserve_index=False), tmp_path / "a.parquet", row_group_size=7
    )
    pq.write_table(pa.Table.from_pandas(df.iloc[30:], preserve_index=False), tmp_path / "b.parquet")
    out = tmp_path / "out"
    code, _, err = cli(
        [
            *BASE,
            "--input",
            str(tmp_path / "*.parquet"),
            "--output",
            str(out),
            "--text-column",
            "text",
            "--seed",
            "4",
        ]
    )
    assert code == 0, err
    assert sorted(p.name for p in out.iterdir()) == [
        MANIFEST_NAME,
        "part-00000.parquet",
        "part-00001.parquet",
    ]
    got = pd.read_parquet(out)
    assert len(got) == 50
    pd.testing.assert_frame_equal(got.drop(columns="text"), df.drop(columns="text"), check_dtype=False)
    assert (got["text"] != df["text"]).any()
    m = json.loads((out / MANIFEST_NAME).read_text())
    assert m["seed"] == 4 and m["seed_recorded"] is True
    assert m["counts"]["rows"] == 50 and m["counts"]["tokens"] > 0
    assert m["vocabulary"]["size"] == 2000 and m["vocabulary"]["digest"].startswith("sha256:")
    assert m["privacy"]["notion"] == "MLDP" and "Σ" in m["privacy"]["per_document"]
    assert m["privacy"]["worst_case_epsilon_longest_document"] > 0
    assert [f["rows"] for f in m["files"]] == [30, 20]


def test_csv_keeps_every_other_column_as_written(tmp_path: Path) -> None:
    src = tmp_path / "in.csv"
    src.write_text('id,text,note\n007,"hello, world",\n010,the cat sat,"multi\nline"\n', encoding="utf-8")
    m = sanitize_files(src, tmp_path / "o", text_column="text", mechanism=SPEC, seed=1)
    got = pd.read_csv(tmp_path / "o" / "part-00000.csv", dtype=str, keep_default_na=False)
    assert got["id"].tolist() == ["007", "010"]
    assert got["note"].tolist() == ["", "multi\nline"]
    assert m["counts"]["rows"] == 2


def test_jsonl_carries_other_fields_exactly_and_can_become_parquet(tmp_path: Path) -> None:
    src = tmp_path / "in.jsonl"
    rows = [
        {"text": "the cat sat", "meta": {"a": [1, 2.5]}, "n": 12345678901234},
        {"text": None, "meta": {}, "n": 0},
    ]
    src.write_text("\n".join(json.dumps(r) for r in rows) + "\n\n", encoding="utf-8")
    sanitize_files(src, tmp_path / "o", text_column="text", mechanism=SPEC, seed=1)
    got = [json.loads(line) for line in (tmp_path / "o" / "part-00000.jsonl").read_text().splitlines()]
    assert [{k: v for k, v in g.items() if k != "text"} for g in got] == [
        {k: v for k, v in r.items() if k != "text"} for r in rows
    ]
    assert got[1]["text"] is None and isinstance(got[0]["text"], str)
    sanitize_files(src, tmp_path / "p", text_column="text", mechanism=SPEC, seed=1, output_format="parquet")
    assert pd.read_parquet(tmp_path / "p")["n"].tolist() == [12345678901234, 0]


def test_seed_not_given_is_not_recorded(tmp_path: Path) -> None:
    corpus(5).to_csv(tmp_path / "in.csv", index=False)
    m = sanitize_files(tmp_path / "in.csv", tmp_path / "o", text_column="text", mechanism=SPEC)
    assert m["seed"] is None and m["seed_recorded"] is False and "written nowhere" in m["seed_note"]
    text = (tmp_path / "o" / MANIFEST_NAME).read_text()
    assert '"seed": null' in text


# --- bad input: one clear line ------------------------------------------------------------------


def _bad(tmp_path: Path, name: str) -> str:
    if name == "missing column":
        corpus(3).to_csv(tmp_path / "in.csv", index=False)
        return "in.csv"
    if name == "non-text column":
        corpus(3).rename(columns={"text": "t", "label": "text"}).to_parquet(tmp_path / "in.parquet")
        return "in.parquet"
    if name == "non-text jsonl":
        (tmp_path / "in.jsonl").write_text('{"text": "ok"}\n{"text": 3}\n')
        return "in.jsonl"
    if name == "empty file":
        (tmp_path / "in.parquet").write_bytes(b"")
        return "in.parquet"
    if name == "no rows":
        (tmp_path / "in.csv").write_text("id,text\n")
        return "in.csv"
    if name == "corrupted parquet":
        corpus(20).to_parquet(tmp_path / "in.parquet")
        data = (tmp_path / "in.parquet").read_bytes()
        (tmp_path / "in.parquet").write_bytes(data[: len(data) // 2])
        return "in.parquet"
    if name == "mixed glob":
        corpus(3).to_parquet(tmp_path / "in.parquet")
        corpus(3).to_csv(tmp_path / "in.csv", index=False)
        return "in.*"
    raise AssertionError(name)


@pytest.mark.parametrize(
    ("name", "needle"),
    [
        ("missing column", "has no column 'body'"),
        ("non-text column", "holds int64, not text"),
        ("non-text jsonl", "line 2 holds a JSON int"),
        ("empty file", "is empty"),
        ("no rows", "has no rows"),
        ("corrupted parquet", "not a readable Parquet file"),
        ("mixed glob", "mixes formats (csv, parquet)"),
    ],
)
def test_bad_input_is_one_clear_line(name: str, needle: str, tmp_path: Path, cli: Cli) -> None:
    src = _bad(tmp_path, name)
    col = "body" if name == "missing column" else "text"
    code, out, err = cli(
        [*BASE, "--input", str(tmp_path / src), "--output", str(tmp_path / "o"), "--text-column", col]
    )
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("dpcore: error:") and needle in err, err
    assert not (tmp_path / "o").exists()


def test_output_that_is_the_input_is_refused(tmp_path: Path, cli: Cli) -> None:
    corpus(3).to_csv(tmp_path / "in.csv", index=False)
    for target in (tmp_path / "in.csv", tmp_path):
        code, _, err = cli(
            [*BASE, "--input", str(tmp_path / "in.csv"), "--output", str(target), "--text-column", "text"]
        )
        assert code == 2 and "input" in err


@pytest.mark.parametrize("workers", [1, 2])
def test_interrupted_run_leaves_nothing_that_looks_complete(
    workers: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from dpcore.corpus import io

    corpus(200).to_parquet(tmp_path / "in.parquet")
    real = io.OutputFolder.write
    calls = {"n": 0}

    def write(self: io.OutputFolder, table: pa.Table, text_column: str) -> None:
        calls["n"] += 1
        if calls["n"] == 3:
            raise KeyboardInterrupt
        real(self, table, text_column)

    monkeypatch.setattr(io.OutputFolder, "write", write)
    with pytest.raises(KeyboardInterrupt):
        sanitize_files(
            tmp_path / "in.parquet",
            tmp_path / "o",
            text_column="text",
            mechanism=SPEC,
            seed=1,
            batch_size=20,
            workers=workers,
        )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.parquet"]  # no output, no temporary folder


# --- the Python API -----------------------------------------------------------------------------


def test_dataframe_and_table_api_match_the_files_path(tmp_path: Path) -> None:
    df = corpus(40)
    df.index = pd.RangeIndex(100, 140)
    res = sanitize_dataframe(
        df, text_column="text", mechanism="santext", epsilon=2.0, vocab_size=2000, seed=3, batch_size=9
    )
    assert list(res.data.index) == list(df.index) and res.data["id"].tolist() == df["id"].tolist()
    tab = sanitize_table(
        pa.Table.from_pandas(df, preserve_index=False), text_column="text", mechanism=SPEC, seed=3, workers=2
    )
    assert tab.data.column("text").to_pylist() == res.data["text"].tolist()
    df.to_csv(tmp_path / "in.csv", index=False)
    sanitize_files(tmp_path / "in.csv", tmp_path / "o", text_column="text", mechanism=SPEC, seed=3)
    got = pd.read_csv(tmp_path / "o" / "part-00000.csv", keep_default_na=False)
    assert got["text"].tolist() == res.data["text"].tolist()
    assert res.manifest["counts"]["rows"] == 40


@pytest.mark.slow
@pytest.mark.parametrize(("sig", "status"), [("SIGINT", 130), ("SIGTERM", 143)])
def test_signalled_cli_run_leaves_no_output(sig: str, status: int, tmp_path: Path) -> None:
    import os
    import signal
    import subprocess
    import sys
    import time

    root = Path(__file__).resolve().parents[1]
    corpus(20_000).to_csv(tmp_path / "in.csv", index=False)
    out = tmp_path / "out"
    argv = [sys.executable, "-m", "dpcore", *BASE, "--input", str(tmp_path / "in.csv"), "--output", str(out)]
    argv += ["--text-column", "text", "--batch-size", "200", "--workers", "2"]
    env = {**os.environ, "PYTHONPATH": str(root)}
    proc = subprocess.Popen(
        argv, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        tmp_dirs = [p for p in tmp_path.iterdir() if p.name.endswith(".dpcore-tmp")]
        if tmp_dirs and any(tmp_dirs[0].iterdir()):
            break  # a part file is being written
        time.sleep(0.05)
    assert proc.poll() is None, "the run ended before it could be interrupted"
    proc.send_signal(getattr(signal, sig))
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == status, err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.csv"], err


def test_fallback_mechanism_is_also_independent_of_batches_and_workers(tmp_path: Path) -> None:
    """feyisetan has no uniform path: one generator per row, same output however it is cut."""
    table = pa.Table.from_pandas(corpus(30), preserve_index=False)
    spec = MechanismSpec("feyisetan", 5.0, vocab_size=500)
    a = sanitize_table(table, text_column="text", mechanism=spec, seed=2, batch_size=4).data
    b = sanitize_table(table, text_column="text", mechanism=spec, seed=2, batch_size=50, workers=2).data
    assert a.equals(b)


def test_jsonl_with_byte_order_mark_and_crlf(tmp_path: Path) -> None:
    src = tmp_path / "in.jsonl"
    src.write_bytes(b'\xef\xbb\xbf{"text": "the cat", "k": 1}\r\n{"text": "a dog", "k": 2}\r\n')
    m = sanitize_files(src, tmp_path / "o", text_column="text", mechanism=SPEC, seed=1)
    got = [json.loads(x) for x in (tmp_path / "o" / "part-00000.jsonl").read_text().splitlines()]
    assert m["counts"]["rows"] == 2 and [g["k"] for g in got] == [1, 2]
