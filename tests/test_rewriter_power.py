"""The rewriter audit's power statement and false-alarm rate, checked on the whole pipeline.

Planted rewriters (dpcore.rewriter.planted) sit exactly at the statement's 90% point: a marker
of probability p whose exact loss the held-out test flags with probability 0.9. The whole audit
(selection over whole outputs, word and character n-grams and side channels, both directions,
Bonferroni) runs on 60 seeds (40 for each side channel); the caught count must not be below the
1% quantile of Bin(runs, stated). The larger
table is ``bench/results/rewriter_power.txt`` (``python bench/rewriter_power.py``).
"""

from __future__ import annotations

import pytest
from scipy.stats import binom

from dpcore.rewriter import audit_rewriter
from dpcore.rewriter.pairs import _replacement_words, corpus_sentences
from dpcore.rewriter.planted import (
    SIDE_CHANNEL_CASES,
    CopyRewriter,
    LeakWordRewriter,
    planted_loss,
    side_channel_case,
)
from dpcore.rewriter.power import at_reach, reach, stated_power, statements

RUNS = 60
N = 200
CLAIM = 1.0
ALPHA = 0.05 / 2  # one pair, two directions
DIST = ("exact", "words", "chars", "side")
SIDE_RUNS = 40
POOL = corpus_sentences()[:20]
WORDS = _replacement_words()[:100]


def _q_at_power(k: int, target: float = 0.9) -> float:
    lo, hi = 1e-4, 0.999
    for _ in range(50):
        mid = 0.5 * (lo + hi)
        if stated_power(N - N // 2, ALPHA, CLAIM, mid + (1 - mid) / k, planted_loss(mid, k)) >= target:
            hi = mid
        else:
            lo = mid
    return hi


def _planted(kind: str, q: float, claim: float):
    if kind == "copy":
        return CopyRewriter(epsilon=claim, q=q, pool=POOL), (POOL[0], POOL[1]), 20
    pair = (f"the storm hit {WORDS[0]}", f"the storm hit {WORDS[1]}")
    return LeakWordRewriter(epsilon=claim, q=q, pool=POOL, words=WORDS), pair, 100


@pytest.mark.parametrize("kind", ["copy", "leak-word"])
def test_planted_rewriters_are_caught_at_the_stated_rate(kind: str) -> None:
    k = 20 if kind == "copy" else 100
    q = _q_at_power(k)
    rw, pair, _ = _planted(kind, q, CLAIM)
    p, loss = q + (1 - q) / k, planted_loss(q, k)
    stated = stated_power(N - N // 2, ALPHA, CLAIM, p, loss)
    assert stated == pytest.approx(0.9, abs=1e-3)
    # the statement a result prints says the same at this marker probability
    line = statements(N - N // 2, ALPHA, CLAIM)
    assert all(s["power"] == 0.9 for s in line)
    caught = sum(
        audit_rewriter(rw, [pair], rewrites=N, seed=s, distinguishers=DIST, check=False).verdict == "violates"
        for s in range(RUNS)
    )
    assert caught >= binom.ppf(0.01, RUNS, stated), f"{kind}: caught {caught}/{RUNS}, stated {stated:.3f}"


@pytest.mark.parametrize("channel", list(SIDE_CHANNEL_CASES))
def test_planted_side_channels_are_caught_at_the_stated_rate(channel: str) -> None:
    k = int(SIDE_CHANNEL_CASES[channel][0]["k"])
    q = _q_at_power(k)
    rw, pair = side_channel_case(channel, q=q, epsilon=CLAIM)
    stated = stated_power(N - N // 2, ALPHA, CLAIM, q + (1 - q) / k, rw.exact_loss(*pair))
    assert stated == pytest.approx(0.9, abs=1e-3)
    caught = sum(
        audit_rewriter(rw, [pair], rewrites=N, seed=s, distinguishers=DIST, check=False).verdict == "violates"
        for s in range(SIDE_RUNS)
    )
    assert caught >= binom.ppf(0.01, SIDE_RUNS, stated), f"{channel}: caught {caught}/{SIDE_RUNS}"


def test_a_rewriter_at_its_claim_is_rarely_flagged_though_its_estimate_often_exceeds_it() -> None:
    q = _q_at_power(20)
    loss = planted_loss(q, 20)
    rw, pair, _ = _planted("copy", q, loss)  # the claim holds with equality
    flagged = above = 0
    for s in range(RUNS):
        res = audit_rewriter(rw, [pair], rewrites=N, seed=1000 + s, distinguishers=DIST, check=False)
        flagged += res.verdict == "violates"
        above += res.pairs[0].estimate > loss
    assert flagged <= binom.ppf(0.999, RUNS, 0.05)
    # the point estimate alone would have "caught" it often: the test's bounds are what keep it valid
    assert above >= RUNS // 5


def test_the_statement_names_only_the_markers_its_distinguishers_select() -> None:
    every = statements(N - N // 2, ALPHA, CLAIM)
    assert every == statements(N - N // 2, ALPHA, CLAIM, distinguishers=(*DIST, "minilm"))
    assert "(a whole output, a word 1–2-gram, a count or a kept word's place)" in every[-1]["text"]
    words = statements(N - N // 2, ALPHA, CLAIM, distinguishers=("words", "minilm"))
    assert (
        words[-1]["markers"] == ["one word 1–2-gram"] and "a marker (a word 1–2-gram) in" in words[-1]["text"]
    )
    assert statements(N - N // 2, ALPHA, CLAIM, distinguishers=("minilm", "lm")) == []


def test_a_bound_at_its_runs_reach_is_said_to_be_so() -> None:
    top = reach(200, 0.025)
    assert at_reach(top, top) and at_reach(top * (1 - 1e-12), top)
    assert not at_reach(top * 0.99, top) and not at_reach(float("nan"), top)
    assert not at_reach(float("-inf"), top) and not at_reach(float("inf"), top)
