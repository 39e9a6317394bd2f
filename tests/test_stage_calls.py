"""How a sanitizer may be called (issue 38), tested without running a whole audit.

The check's two tests are held to their level by simulation under independence, and shown to
reject each kind of dependence the audit must not pool as independent draws. The sentences the
audit builds and the one-output-per-call wrapper are checked against their definitions, and the
replay of the audit's own calls against a sanitizer whose large calls ignore the rng.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as sps

import tests.call_plugins as plugins
from dpcore.textaudit import calls
from dpcore.textaudit.calls import (
    CHECK_ALPHA,
    SentenceCalls,
    check_calls,
    homogeneity_test,
    repeats_test,
    sentences,
)
from dpcore.textaudit.engine import DrawPlan, draw_words
from dpcore.textaudit.reference import KaryRandomizedResponse
from dpcore.textaudit.replay import Recorder, replay

WORDS = np.asarray([f"w{i}" for i in range(200)], dtype=object)
PROBE = [3, 150]


# --- sentences ------------------------------------------------------------------------------


def test_a_sentence_holds_its_word_once_at_a_uniform_position_among_uniform_other_words():
    rng = np.random.default_rng(0)
    n, size = 40_000, 16
    wid = np.full(n, 7)
    ids, pos = sentences(np.arange(50), wid, size, rng)
    assert ids.shape == (n, size)
    assert np.all(ids[np.arange(n), pos] == 7)
    assert np.all((ids == 7).sum(axis=1) == 1)  # never among the other words
    # position uniform over 0..15, other words uniform over the 49 words ≠ 7 (χ² at 10⁻⁴: with
    # 600,000 other words a 2% excess on one word gives p < 10⁻⁶)
    assert sps.chisquare(np.bincount(pos, minlength=size)).pvalue > 1e-4
    others = ids[np.arange(size)[None, :] != pos[:, None]]
    counts = np.bincount(others, minlength=50)
    assert counts[7] == 0
    assert sps.chisquare(np.delete(counts, 7)).pvalue > 1e-4


def test_a_word_outside_the_vocabulary_excludes_nothing():
    ids, pos = sentences(np.arange(5), np.array([-1, -1, -1]), 4, np.random.default_rng(1))
    assert np.all(ids[np.arange(3), pos] == -1)
    others = ids[np.arange(4)[None, :] != pos[:, None]]
    assert others.min() >= 0 and others.max() <= 4


# --- the tests hold their level -------------------------------------------------------------


def test_the_repeats_test_holds_its_level_under_independence():
    rng = np.random.default_rng(2)
    p = rng.dirichlet(np.ones(30))
    pv = [repeats_test(*(rng.choice(30, size=400, p=p) for _ in range(3)))["p_value"] for _ in range(2000)]
    # an exact conditional test (discrete, so conservative): rejections at 5% stay ≤ 5% + noise
    assert np.mean(np.asarray(pv) < 0.05) <= 0.065


def test_the_homogeneity_test_holds_its_level_under_one_distribution():
    rng = np.random.default_rng(3)
    p = np.r_[0.3, np.full(699, 0.7 / 699)]  # one frequent output and a long thin tail
    pv = [
        homogeneity_test(rng.choice(700, size=20_000, p=p), rng.choice(700, size=200, p=p), "t")["p_value"]
        for _ in range(2000)
    ]
    # cells chosen from the column totals keep the level (cells ordered by the large sample's
    # counts alone rejected 22% at 5% here)
    assert np.mean(np.asarray(pv) < 0.05) <= 0.065
    assert np.mean(np.asarray(pv) < 0.01) <= 0.018


def test_the_repeats_test_rejects_pairs_that_match_too_often():
    rng = np.random.default_rng(4)
    a = np.repeat(rng.integers(0, 50, size=100), 2)  # adjacent pairs equal
    t = repeats_test(a, rng.integers(0, 50, size=200), rng.integers(0, 50, size=200))
    assert t["within_matches"] == 100 and t["p_value"] < 1e-20


def test_the_homogeneity_test_sees_a_thin_output_favoured_by_small_calls():
    # k-RR at |V| = 200, ε = 1: every output is expected < 5 times among 200 small draws, so the
    # cells pool outputs in large-call order; a 20% pass-through still stands out
    rng = np.random.default_rng(5)
    krr = KaryRandomizedResponse(epsilon=1.0, words=list(WORDS))
    large = krr.sample_ids(0, 60_000, rng)
    small = np.where(rng.random(200) < 0.2, 0, krr.sample_ids(0, 200, rng))
    t = homogeneity_test(large, small, "large-vs-single")
    assert t["cells"] >= 2 and t["p_value"] < 1e-10


# --- the check ------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_independent_draws_pass_the_check(seed):
    krr = KaryRandomizedResponse(epsilon=1.0, words=list(WORDS))
    for s in (krr, plugins.BlackBoxKrr(epsilon=1.0, words=WORDS)):
        c = check_calls(s, WORDS, PROBE, large=20_000, seed=seed)
        assert c.status == "independent" and not c.dependent, c.text
        assert len(c.tests) == 6 and c.words == ("w3", "w150")
        assert all(t["p_value"] >= CHECK_ALPHA / 6 for t in c.tests)


def test_dpcores_own_santext_passes_the_check():
    from dpcore.text import create_text_mechanism
    from dpcore.text.vocab import build_vocabulary
    from dpcore.textaudit import DpcoreSanitizer

    vocab = build_vocabulary("glove", size=500)
    mech = DpcoreSanitizer(create_text_mechanism("santext", vocab=vocab, epsilon=1.0))
    c = check_calls(mech, vocab.words, [0, 321], large=50_000, seed=0)
    assert c.status == "independent", c.text


@pytest.mark.parametrize(
    ("make", "status", "named"),
    [
        (
            lambda: plugins.ConsistentReplacement(epsilon=1.0, words=WORDS),
            "within-call-dependent",
            "depend on each other",
        ),
        (
            lambda: plugins.RefreshedCache(epsilon=1.0, words=WORDS, rate=0.1),
            "within-call-dependent",
            "depend on each other",
        ),
        (
            lambda: plugins.RefreshedCache(epsilon=1.0, words=WORDS, rate=0.001),
            "within-call-dependent",
            "depend on each other",
        ),
        (
            lambda: plugins.PassThroughOnCalls(epsilon=1.0, words=WORDS, low=1, high=64),
            "call-size-dependent",
            "calls of 1 word(s) differ",
        ),
        (
            lambda: plugins.PassThroughOnCalls(epsilon=1.0, words=WORDS, low=2, high=64),
            "call-size-dependent",
            "calls of 16 word(s) differ",
        ),
    ],
    ids=["consistent", "cache-0.1", "cache-0.001", "small-calls", "sentence-calls"],
)
def test_each_dependence_is_detected_and_named(make, status, named):
    c = check_calls(make(), WORDS, PROBE, large=20_000, seed=0)
    assert c.status == status and c.dependent
    assert named in c.text and "\n" not in c.text


def test_a_sanitizer_failing_every_call_is_unchecked():
    class Fails(plugins.BlackBoxKrr):
        def sample(self, words, rng):
            raise RuntimeError("no")

    c = check_calls(Fails(epsilon=1.0, words=WORDS), WORDS, PROBE, large=1000, seed=0)
    assert c.status == "unchecked" and not c.dependent and c.tests == []


def test_the_check_is_sized_for_a_slow_sanitizer():
    from dpcore.textaudit.timing import Speed

    assert calls.check_size(None) == calls.CHECK_CALLS
    assert calls.check_size(Speed(per_word=1e-5, per_draw=1e-6, probe_seconds=0.1)) == calls.CHECK_CALLS
    slow = calls.check_size(Speed(per_word=1e-3, per_draw=2e-2, probe_seconds=1.0))  # 50 draws/s
    assert slow == calls.MIN_CHECK_CALLS


# --- one output per call --------------------------------------------------------------------


def test_sentence_calls_give_each_draw_its_own_call_and_keep_its_distribution():
    inner = plugins.ConsistentReplacement(epsilon=1.0, words=WORDS)
    seen: list[int] = []

    class Counting(plugins.ConsistentReplacement):
        def sample(self, words, rng):
            seen.append(len(words))
            return super().sample(words, rng)

    wrapped = SentenceCalls(Counting(epsilon=1.0, words=WORDS), WORDS)
    out = wrapped.sample(["w0"] * 3000, np.random.default_rng(6))
    assert seen == [calls.SENTENCE_WORDS] * 3000  # one call per draw
    # k-RR's keep probability e/(e + 199) is what one draw per call shows (two-sided binomial, 0.001)
    keep = float(inner.keep_probability)
    assert sps.binomtest(int(np.sum(out == "w0")), 3000, keep).pvalue > 1e-3
    assert wrapped.name == inner.name and wrapped.epsilon == 1.0
    assert not hasattr(wrapped, "sample_ids") and not hasattr(wrapped, "row_blocks")
    assert wrapped.describe()["one_output_per_call"] == {"call_words": calls.SENTENCE_WORDS}


def test_sentence_calls_reproduce_from_the_rng():
    wrapped = SentenceCalls(plugins.RefreshedCache(epsilon=1.0, words=WORDS, rate=0.01), WORDS)
    a = wrapped.sample(["w1", "w2"] * 50, np.random.default_rng(7))
    b = wrapped.sample(["w1", "w2"] * 50, np.random.default_rng(7))
    assert np.array_equal(a, b)


# --- replaying the audit's own calls --------------------------------------------------------


def _recorded(sanitizer, seed=0):
    def draw(wids, what):
        return draw_words(sanitizer, WORDS, wids, seed, what)

    rec = Recorder(draw, seed)
    rec(np.arange(10), DrawPlan("screen", (300, 300), top=5))
    rec(np.arange(4), DrawPlan("confirm", (1000, 1000)))
    return rec


def test_replay_finds_the_same_draws_for_a_sanitizer_that_keeps_the_contract():
    out = replay(
        _recorded(plugins.BlackBoxKrr(epsilon=1.0, words=WORDS)),
        plugins.BlackBoxKrr(epsilon=1.0, words=WORDS),
        WORDS,
        0,
    )
    assert out["same"] is True and set(out["stages"]) == {"screen", "confirm"}
    assert out["draws"] == 2600


def test_replay_catches_fresh_entropy_on_large_calls_that_the_small_probe_misses():
    from dpcore.textaudit.contract import enforce_rng_contract

    s = plugins.FreshEntropyOnLargeCalls(epsilon=1.0, words=WORDS)
    _, contract = enforce_rng_contract(s, WORDS, np.arange(8), seed=0, workers=1, engine="local")
    assert contract.status == "ok"  # the probe's calls are at most 256 words
    out = replay(_recorded(s), s, WORDS, 0)
    assert out["same"] is False and "cannot be reproduced" in out["text"]
    assert not out["stages"]["screen"]["same"] and not out["stages"]["confirm"]["same"]


def test_a_cold_start_is_state_across_calls_not_global_state():
    from dpcore.textaudit.contract import enforce_rng_contract

    s = plugins.ColdStart(epsilon=1.0, words=WORDS)
    out, c = enforce_rng_contract(s, WORDS, np.arange(8), seed=0, workers=1, engine="local")
    assert c.status == "state-across-calls" and out is s
    assert "carries state from one call to the next" in c.text and "global random state" in c.text


def test_dpcores_own_samplers_are_independent_by_construction_and_an_override_is_checked():
    from dpcore.text import create_text_mechanism
    from dpcore.text.vocab import build_vocabulary
    from dpcore.textaudit import DpcoreSanitizer
    from dpcore.textaudit.calls import independent_by_construction

    vocab = build_vocabulary("glove", size=300)
    mech = create_text_mechanism("santext", vocab=vocab, epsilon=1.0)

    class Overrides(DpcoreSanitizer):
        def sample(self, words, rng):
            return super().sample(words, rng)

    class Claims(KaryRandomizedResponse):  # another claim, the same sampler
        name = "krr-claims"

    assert independent_by_construction(DpcoreSanitizer(mech))
    assert not independent_by_construction(Overrides(mech))
    assert independent_by_construction(KaryRandomizedResponse(epsilon=1.0, words=list(WORDS)))
    assert independent_by_construction(Claims(epsilon=1.0, words=list(WORDS)))
    for plugin in (plugins.BlackBoxKrr, plugins.ConsistentReplacement):  # their own sample: checked
        assert not independent_by_construction(plugin(epsilon=1.0, words=WORDS))


# --- stage 2 in sentence calls --------------------------------------------------------------


def test_stage_two_sentence_calls_are_fixed_for_a_named_plan_and_sized_for_a_fitted_one():
    from dpcore.textaudit import users_calls
    from dpcore.textaudit.timing import Speed

    def speed(per_call):  # a 16-word call costs per_word + 16·per_draw
        return Speed(per_word=per_call / 2, per_draw=per_call / 32, probe_seconds=0.1)

    assert users_calls.sentence_calls(None, 100) == users_calls.SENTENCE_CALLS  # named: always
    assert users_calls.sentence_calls(speed(1e-5), 100) == users_calls.SENTENCE_CALLS
    assert users_calls.sentence_calls(speed(1.25e-3), 100) == 40  # 5 s over 100 words at 1.25 ms
    assert users_calls.sentence_calls(speed(0.01), 100) == 0  # 5 per word, below the minimum


def test_stage_two_sentence_counts_line_up_with_its_large_counts_outside_the_vocabulary_too():
    from dpcore.textaudit.engine import WordDraws
    from dpcore.textaudit.sampling import OutputCodebook
    from dpcore.textaudit.users_calls import _aligned

    cb = OutputCodebook(["a", "b", "c"])
    tag = cb.code("⊥")  # an output outside V seen in stage 2
    halves = (np.array([5, 0, 1, 2]), np.array([4, 1, 0, 3]))
    small = WordDraws(wid=0, counts=[np.array([2, 0, 0])], extras=[{"⊥": 1, "new": 4}])
    c1, c2 = _aligned(halves, small, cb)
    assert tag == 3 and cb.code("new") == 4
    assert c1.tolist() == [9, 1, 1, 5, 0] and c2.tolist() == [2, 0, 0, 1, 4]


def test_sentences_take_their_other_words_from_the_pool_only():
    pool = np.array([2, 5, 9, 11])
    ids, pos = sentences(pool, np.array([5] * 2000 + [7] * 2000), 6, np.random.default_rng(8))
    others = ids[np.arange(6)[None, :] != pos[:, None]].reshape(4000, 5)
    assert set(np.unique(others[:2000])) == {2, 9, 11}  # the word itself (in the pool) never
    assert set(np.unique(others[2000:])) == {2, 5, 9, 11}  # a word outside the pool: all of it


def test_a_sanitizer_refusing_some_words_is_still_checked_with_fillers_it_answers():
    class RefusesSome(plugins.BlackBoxKrr):  # refuses a third of V, like words it does not know
        def sample(self, words, rng):
            if any(int(str(w)[1:]) % 3 == 0 for w in words):
                raise ValueError("unknown word")
            return super().sample(words, rng)

    c = check_calls(RefusesSome(epsilon=1.0, words=WORDS), WORDS, [1, 151], large=5_000, seed=0)
    assert c.status == "independent", c.text
    assert c.fillers and all(w % 3 for w in c.fillers)
