"""The attacker never saw a sentence it is evaluated on (dpcore.attack.tweet_split).

The shipped attacker was trained on the public side of the tweets (``train-attacker --sources
tweets``); the attack, the Attack page and the comparison draw their sentences from the
evaluation pool only. These tests rebuild the training sentences from the record's rule and check
that no evaluation tweet, nor any sentence the attack can draw, shares an exact text or a
normalised key with them.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dpcore.attack.corpus import build_corpus, normalise_key
from dpcore.attack.datasets import load_labelled_dataset
from dpcore.attack.experiment import attack_pool, sample_attack_sentences
from dpcore.attack.tweet_split import (
    EVALUATION_SHARE,
    _split,
    in_evaluation,
    split_tweets,
    tweet_keys,
)
from dpcore.validation import DPCoreError

RECORD = Path(__file__).resolve().parents[1] / "dpcore/attack/models/minilm-mlm/training_record.json"


def _all_keys(texts: list[str] | tuple[str, ...]) -> set[str]:
    keys: set[str] = set()
    for t in texts:
        keys.update(k for k in tweet_keys(t) if k)
        keys.add(normalise_key(t))
    keys.discard("")
    return keys


@pytest.fixture(scope="module")
def corpus():
    """The shipped attacker's training corpus, rebuilt from its record's sources and seed."""
    rec = json.loads(RECORD.read_text(encoding="utf-8"))
    cfg = rec["config"]
    assert "tweets" in cfg["sources"], "the shipped attacker is the one trained on public tweets"
    built = build_corpus(cfg["seed"], heldout_fraction=cfg["heldout_fraction"], sources=tuple(cfg["sources"]))
    # The rebuilt corpus is the recorded one (sizes match the record).
    assert len(built.train) == rec["corpus"]["train_sentences"]
    assert len(built.heldout) == rec["corpus"]["heldout_sentences"]
    return built


def test_keys_catch_near_copies() -> None:
    a = tweet_keys("RT @cnnbrk: Storm hits &amp; floods http://t.co/abc")
    b = tweet_keys("storm HITS & floods!!")
    assert a[0] == b[0] == "storm hits floods"
    c = tweet_keys("RT cnnbrk: Storm hits & floods")
    assert c[1] == a[1]  # handle kept as a word: the looser key links the two


def test_split_drops_evaluation_tweets_linked_to_public_ones() -> None:
    # Find a text whose primary key is in the evaluation share, and a public-side variant of it
    # that only a looser key links to (the handle written without '@').
    for i in range(10_000):
        ev = f"@user went to the market on day {i}"
        pub = f"user went to the market on day {i}"
        if in_evaluation(tweet_keys(ev)[0]) and not in_evaluation(tweet_keys(pub)[0]):
            break
    else:  # pragma: no cover - 15% of keys fall in the pool
        pytest.fail("no evaluation key found")
    split = _split([pub, ev])
    assert split.public == (pub,)
    assert split.evaluation == ()
    assert split.cross_copies_removed == 1
    # Without the public copy, the tweet stays in the pool.
    assert _split([ev]).evaluation == (ev,)


def test_split_is_a_function_of_text_with_the_stated_share() -> None:
    s = split_tweets()
    n = len(s.public) + len(s.evaluation) + s.cross_copies_removed
    share = (len(s.evaluation) + s.cross_copies_removed) / n
    assert abs(share - EVALUATION_SHARE) < 0.01
    assert not set(s.public) & set(s.evaluation)


def test_no_evaluation_tweet_in_training_exact_or_normalised(corpus) -> None:
    pool = split_tweets().evaluation
    train = corpus.train + corpus.validation
    assert not set(pool) & set(train)
    overlap = _all_keys(pool) & _all_keys(train)
    assert overlap == set()


def test_every_sentence_the_attack_can_draw_is_unseen(corpus) -> None:
    train_keys = _all_keys(corpus.train + corpus.validation)
    for name in ("tweets", "tweets3"):
        pool = attack_pool(load_labelled_dataset(name))
        assert len(pool) > 1_000
        assert not _all_keys(pool) & train_keys
        drawn = sample_attack_sentences(load_labelled_dataset(name), 200, seed=0)
        assert set(drawn) <= set(pool)


def test_the_heldout_top1_is_measured_on_the_pool(corpus) -> None:
    assert set(corpus.heldout) <= set(split_tweets().evaluation)


def test_asking_for_more_sentences_than_the_pool_names_it() -> None:
    data = load_labelled_dataset("tweets")
    n = len(attack_pool(data))
    with pytest.raises(DPCoreError, match="evaluation pool"):
        sample_attack_sentences(data, n + 1, seed=0)
