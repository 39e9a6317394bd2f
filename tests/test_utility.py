"""Utility of sanitized text: datasets, the fixed split, accuracy lines, CLI."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from dpcore.attack.datasets import load_labelled_dataset, split_dataset
from dpcore.attack.utility import utility_sweep
from dpcore.cli import main
from dpcore.text import create_text_mechanism
from dpcore.text.vocab import build_vocabulary
from dpcore.validation import DPCoreError


def test_tweets_datasets_are_deduplicated_and_labelled() -> None:
    two, three = load_labelled_dataset("tweets"), load_labelled_dataset("tweets3")
    assert two.label_names == ("negative", "positive")
    assert three.label_names == ("negative", "neutral", "positive")
    assert len(set(two.texts)) == len(two) > 20_000
    assert len(three) > len(two)
    assert set(np.unique(two.labels)) == {0, 1}


def test_split_is_fixed_disjoint_and_test_independent_of_train_size() -> None:
    data = load_labelled_dataset("tweets")
    a = split_dataset(data, n_train=500, n_test=200, split_seed=3)
    b = split_dataset(data, n_train=900, n_test=200, split_seed=3)
    c = split_dataset(data, n_train=500, n_test=200, split_seed=4)
    assert not set(a.train) & set(a.test)
    np.testing.assert_array_equal(a.test, b.test)
    assert a.record() == split_dataset(data, n_train=500, n_test=200, split_seed=3).record()
    assert a.record()["split_digest"] != c.record()["split_digest"]
    with pytest.raises(DPCoreError):
        split_dataset(data, n_train=20_001, n_test=10)


def test_unsanitized_beats_random_replacement_beyond_the_intervals() -> None:
    vocab = build_vocabulary("glove", size=5000)
    split = split_dataset(load_labelled_dataset("tweets"), n_train=2000, n_test=800, split_seed=0)
    res = utility_sweep(
        split, lambda e: create_text_mechanism("santext", vocab=vocab, epsilon=e), [1000.0], seed=0
    )
    b, row = res["baselines"], res["rows"][0]
    assert b["unsanitized_ci_low"] > b["random_ci_high"] + 0.02
    assert row["ci_low"] > b["random_ci_high"]  # ε = 1000 keeps every in-vocabulary token
    assert abs(b["accuracy_random"] - b["majority"]) < 0.05  # random text: near the majority rate
    p = res["parameters"]
    assert p["n_train"] == 2000 and p["n_test"] == 800 and p["seed"] == 0 and p["split_seed"] == 0


def test_tsv_input_and_cli_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rng = np.random.default_rng(0)
    good = ["a wonderful charming film", "great acting and a lovely story", "i loved it"]
    bad = ["a dull boring mess", "terrible plot and awful acting", "i hated it"]
    rows = [f"{rng.choice(good)} {i}\t1" if i % 2 else f"{rng.choice(bad)} {i}\t0" for i in range(120)]
    f = tmp_path / "train.tsv"
    f.write_text("sentence\tlabel\n" + "\n".join(rows) + "\n", encoding="utf-8")
    args = ["utility", "--mechanism", "santext+", "--input", str(f), "--n-train", "80", "--n-test", "40"]
    assert main([*args, "--epsilon", "2", "--vocab-size", "3000", "--seed", "5", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    for key in (
        "accuracy",
        "accuracy_unsanitized",
        "accuracy_random",
        "n_train",
        "n_test",
        "ci_low",
        "ci_high",
    ):
        assert key in out
    assert out["n_train"] == 80 and out["n_test"] == 40 and out["seed"] == 5 and out["p"] == 0.3
    assert out["accuracy_unsanitized"] == 1.0  # the label words separate the classes perfectly
    bad_tsv = tmp_path / "bad.tsv"
    bad_tsv.write_text("text\ty\nfoo\t1\n", encoding="utf-8")
    assert main(["utility", "--mechanism", "santext", "--epsilon", "1", "--input", str(bad_tsv)]) == 2
    assert "SST-2" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("extra", "msg"),
    [
        (["--epsilon", "nan"], "epsilon"),
        (["--epsilon", "1", "--n-train", "30000"], "n-train"),
        (["--epsilon", "1", "--classifier", "bert"], "invalid choice"),
        (["--epsilons", ",".join(["1"] * 17)], "epsilon"),
    ],
)
def test_utility_cli_bad_input_exits_2(
    extra: list[str], msg: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["utility", "--mechanism", "santext", "--dataset", "tweets", *extra]) == 2
    assert msg in capsys.readouterr().err
