"""The Attack page caches per unit; a unit computed alone must equal the same cell of a sweep,
so adding or removing an ε (or a mechanism) can reuse every other cached unit unchanged."""

from __future__ import annotations

import pytest

from dpcore.attack.datasets import load_labelled_dataset, split_dataset
from dpcore.attack.experiment import (
    attack_at_epsilon,
    attack_reference,
    attack_sweep,
    sample_attack_sentences,
)
from dpcore.attack.utility import utility_at_epsilon, utility_baselines, utility_sweep
from dpcore.text import create_text_mechanism
from dpcore.text.vocab import build_vocabulary


@pytest.fixture(scope="module")
def setup():  # type: ignore[no-untyped-def]
    vocab = build_vocabulary("glove", size=2_000)
    data = load_labelled_dataset("tweets")
    return vocab, data


def _strip(row: dict) -> dict:
    return {k: v for k, v in row.items() if k != "seconds"}


def test_attack_unit_alone_equals_the_sweep_cell(setup) -> None:  # type: ignore[no-untyped-def]
    vocab, data = setup
    sents = sample_attack_sentences(data, 15, seed=2)

    def make(e: float):  # type: ignore[no-untyped-def]
        return create_text_mechanism("santext+", vocab=vocab, epsilon=e, p=0.3, w=0.9)

    sweep = attack_sweep(sents, make, [1.0, 3.0, 10.0], attacks=["bayes-unigram"], seed=2)
    ref = attack_reference(sents, make(1.0), attacks=["bayes-unigram"])
    alone = attack_at_epsilon(sents, make(3.0), ref, attacks=["bayes-unigram"], seed=2)
    cell = [r for r in sweep["rows"] if r["epsilon"] == 3.0]
    assert [_strip(r) for r in alone["rows"]] == [_strip(r) for r in cell]
    other = attack_at_epsilon(sents, make(3.0), ref, attacks=["bayes-unigram"], seed=3)
    assert _strip(other["rows"][0]) != _strip(cell[0])  # the seed matters: the equality is not vacuous


def test_utility_unit_alone_equals_the_sweep_cell(setup) -> None:  # type: ignore[no-untyped-def]
    vocab, data = setup
    split = split_dataset(data, n_train=400, n_test=200, split_seed=0)

    def make(e: float):  # type: ignore[no-untyped-def]
        return create_text_mechanism("santext", vocab=vocab, epsilon=e)

    sweep = utility_sweep(split, make, [1.0, 10.0], seed=5)
    assert utility_at_epsilon(split, make(10.0), seed=5) == sweep["rows"][1]
    assert utility_baselines(split, vocab, seed=5) == sweep["baselines"]
