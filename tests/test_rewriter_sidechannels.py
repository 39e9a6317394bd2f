"""Text's side channels: what each count reads, the events the ``side`` distinguisher picks from,
and the planted rewriters that leak one channel each (their laws, and that only ``side`` sees
them). Whether the whole audit catches them at the power statement's rate is
tests/test_rewriter_power.py."""

from __future__ import annotations

import doctest

import numpy as np
import pytest
from scipy.stats import chisquare

import dpcore.rewriter.sidechannels as sidechannels
from dpcore.rewriter import audit_rewriter
from dpcore.rewriter.planted import SIDE_CHANNEL_CASES, planted_loss, side_channel_case
from dpcore.rewriter.sidechannels import CHANNELS, channel_counts, describe, side_matrix
from dpcore.validation import DPCoreError

CHANNELS_AND_PLACES = (*CHANNELS, "positions")


def test_the_docstring_examples_hold() -> None:
    assert doctest.testmod(sidechannels).failed == 0


def test_each_count_reads_what_its_name_says() -> None:
    texts = ["", "Hello, World! 2024", "  two  spaces\tand a tab ", "Ünïcode ÀB 9"]
    c = channel_counts(texts)
    assert c["tokens"].tolist() == [0, 3, 5, 3]
    assert c["characters"].tolist() == [len(t) for t in texts]
    assert c["capitals"].tolist() == [0, 2, 0, 3]
    assert c["punctuation"].tolist() == [0, 2, 0, 0]
    assert c["digits"].tolist() == [0, 4, 0, 1]
    assert all(v.dtype == np.int64 for v in c.values())


def test_the_events_are_each_count_and_threshold_and_each_kept_word_place() -> None:
    texts = ["a b c", "a b", "Storm a", "x y z w"]
    x, names = side_matrix(texts, ("storm hit", "a storm"))
    dense = np.asarray(x.todense()) > 0
    col = {describe(n, True): j for j, n in enumerate(names)}
    tokens = channel_counts(texts)["tokens"]
    for v in np.unique(tokens):
        assert dense[:, col[describe(f"tokens\x1f=\x1f{v}", True)]].tolist() == (tokens == v).tolist()
    for v in np.unique(tokens)[1:]:  # "at least the smallest" holds for every text: not an event
        assert dense[:, col[f"output has ≥ {v} tokens"]].tolist() == (tokens >= v).tolist()
    assert "output has ≥ 2 tokens" not in col
    # places: input words only, counted among the rewrite's words from 1, case ignored
    assert dense[:, col["output has 'storm' as word 1"]].tolist() == [False, False, True, False]
    assert dense[:, col["output has 'a' as word 2"]].tolist() == [False, False, True, False]
    assert dense[:, col["output has 'a' as word 1"]].tolist() == [True, True, False, False]
    assert not any("'x'" in d or "'b'" in d for d in col)
    # without the inputs, counts only
    _, counts_only = side_matrix(texts)
    assert not any(n.startswith("positions") for n in counts_only)


def test_absent_events_read_as_their_complements() -> None:
    assert describe("capitals\x1f>=\x1f1", False) == "output has fewer than 1 capital letter"
    assert describe("digits\x1f=\x1f3", False) == "output does not have exactly 3 digits"
    assert describe("positions\x1fanna\x1f2", False) == "output does not have 'anna' as word 3"


@pytest.mark.parametrize("channel", CHANNELS_AND_PLACES)
def test_each_planted_side_channel_has_its_stated_law(channel: str) -> None:
    """The output's value is the input's with probability q + (1 − q)/K and each other of the K
    values with probability (1 − q)/K (a chi-square test at the 0.1% level, fixed seed)."""
    options, (x, x_prime) = SIDE_CHANNEL_CASES[channel]
    rw, _ = side_channel_case(channel, q=0.3, epsilon=1.0)
    k, low = int(options["k"]), int(options.get("low", 0))
    draws = 3000
    out = rw.rewrite([x] * draws, np.random.default_rng(7))
    if channel == "positions":
        values = np.array([t.split().index("storm") for t in out])
        assert all(len(t.split()) == k for t in out)
    else:
        values = channel_counts(out)[channel]
    assert values.min() >= low and values.max() < low + k
    expected = np.full(k, (1 - 0.3) / k)
    expected[rw.value(x) - low] += 0.3
    observed = np.bincount(values - low, minlength=k)
    assert chisquare(observed, expected * draws).pvalue > 1e-3
    assert rw.value(x) != rw.value(x_prime)
    assert rw.exact_loss(x, x_prime) == pytest.approx(planted_loss(0.3, k))
    assert rw.exact_loss(x, x) == 0.0
    # the same seed gives the same rewrites
    assert rw.rewrite([x] * 5, np.random.default_rng(1)) == rw.rewrite([x] * 5, np.random.default_rng(1))


@pytest.mark.parametrize("channel", ["tokens", "capitals", "positions"])
def test_a_side_channel_leak_is_caught_by_the_side_distinguisher_and_named(channel: str) -> None:
    rw, pair = side_channel_case(channel, q=0.8, epsilon=1.0)
    res = audit_rewriter(
        rw, [pair], rewrites=200, seed=0, check=False, distinguishers=("exact", "words", "side")
    )
    best = res.pairs[0].best
    assert res.verdict == "violates" and best.distinguisher == "side"
    assert ("'storm' as word" if channel == "positions" else UNIT[channel]) in best.description
    # whole outputs and words do not see a leak of capitals: the family is what catches it
    if channel == "capitals":
        blind = audit_rewriter(
            rw, [pair], rewrites=200, seed=0, check=False, distinguishers=("exact", "words")
        )
        assert blind.verdict != "violates"


UNIT = {"tokens": "tokens", "capitals": "capital letter"}


def test_bad_planted_settings_are_refused_clearly() -> None:
    from dpcore.rewriter.planted import LeakCharactersRewriter, LeakPlaceRewriter

    pool = ["one sentence", "another one"]
    with pytest.raises(DPCoreError, match="letters a–z"):
        LeakPlaceRewriter(epsilon=1, q=0.5, pool=pool, words=["a", "b"], word="Storm!", k=4)
    with pytest.raises(DPCoreError, match="distinct words"):
        LeakCharactersRewriter(epsilon=1, q=0.5, pool=pool, words=["a", "a"], low=1, k=4)
    with pytest.raises(DPCoreError, match="low ≥ 1"):
        LeakCharactersRewriter(epsilon=1, q=0.5, pool=pool, words=["a", "b"], low=0, k=4)
    with pytest.raises(DPCoreError, match="k ≥ 2"):
        LeakCharactersRewriter(epsilon=1, q=0.5, pool=pool, words=["a", "b"], low=1, k=1)
    with pytest.raises(DPCoreError, match="unknown side channel 'length'"):
        side_channel_case("length", q=0.5, epsilon=1.0)
