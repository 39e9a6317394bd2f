"""DP-MLM on whole lines under the rewriter audit: dpcore's keeps its claim as far as the audit
sees, the authors' default (stopwords verbatim) is caught on a stopword against a non-stopword,
and the same seed gives the same result on 1 and 2 workers."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpcore.rewriter import audit_rewriter, load_rewriter
from dpcore.rewriter.draws import RewriterSource

# "was" is a stopword, "felt" is not; both lines have 7 WordPieces: per-token ε = 0.25 is a
# line claim of 1.75, within the reach of 200 rewrites per input (2.96 at this α).
X = "my neighbour anna was diagnosed with diabetes"
X_PRIME = "my neighbour anna felt diagnosed with diabetes"
DIST = ("exact", "words", "chars")


@pytest.fixture(scope="module")
def dpmlm():
    return load_rewriter("dp-mlm", epsilon=0.25)


def test_dpmlm_on_whole_lines_is_not_detected_with_power_and_reach(dpmlm) -> None:
    res = audit_rewriter(dpmlm, [(X, X_PRIME)], rewrites=200, seed=0, distinguishers=DIST)
    (p,) = res.pairs
    assert p.tokens == (7, 7) and p.claimed_bound == pytest.approx(1.75)
    assert res.verdict == "not-detected", res.verdict_text
    assert p.claimed_bound < res.reach  # the claim was within reach: "not detected" means something
    assert not p.violates and p.lower_bound < p.claimed_bound
    assert len(res.power) == 3 and all("flagged with probability" in s["text"] or "no marker" in s["text"]
                                       for s in res.power)  # fmt: skip
    finite = [s["detectable_loss"] for s in res.power if math.isfinite(s["detectable_loss"])]
    assert finite and min(finite) < res.reach + 1
    text = res.text()
    assert "largest certifiable bound at this size" in text and "power:" in text


def test_dpmlm_keeping_stopwords_verbatim_violates_on_a_stopword_pair() -> None:
    flawed = load_rewriter("flawed:dp-mlm-stopwords", epsilon=0.25)
    res = audit_rewriter(flawed, [(X, X_PRIME)], rewrites=200, seed=0, distinguishers=DIST)
    assert res.verdict == "violates", res.verdict_text
    (p,) = res.pairs
    assert p.lower_bound > p.claimed_bound == pytest.approx(1.75)
    assert "'was'" in p.best.description  # the stopword is the evidence
    assert "was" in X.split() and "felt" in X_PRIME.split()


def test_the_per_token_epsilon_reported_as_the_lines_is_a_document_claim() -> None:
    rw = load_rewriter("flawed:dp-mlm-line-epsilon", epsilon=1.0)
    assert rw.claim.unit == "document" and rw.claim.bound(7, 7) == 1.0
    assert load_rewriter("dp-mlm", epsilon=1.0).claim.bound(7, 7) == 7.0


def test_dpmlm_rewrites_are_the_same_on_one_and_two_workers(dpmlm) -> None:
    kw = {"rewrites": 60, "seed": 3, "distinguishers": ("exact", "words"), "check": False}
    one = audit_rewriter(dpmlm, [(X, X_PRIME)], workers=1, **kw)
    two = audit_rewriter(
        dpmlm, [(X, X_PRIME)], workers=2, source=RewriterSource(name="dp-mlm", epsilon=0.25), **kw
    )
    a, b = one.to_dict(), two.to_dict()
    for d in (a, b):
        d.pop("seconds"), d.pop("workers")
    assert a == b


def test_every_rewrite_has_the_input_length_and_differs_by_seed(dpmlm) -> None:
    out = dpmlm.rewrite([X] * 5, np.random.default_rng(0))
    assert all(len(o.split()) == 7 for o in out)
    assert out == dpmlm.rewrite([X] * 5, np.random.default_rng(0))
    assert out != dpmlm.rewrite([X] * 5, np.random.default_rng(1))


def test_each_position_of_a_rewrite_follows_dpmlms_exact_distribution() -> None:
    from scipy.stats import binomtest

    rw = load_rewriter("dp-mlm", epsilon=60.0)  # concentrated enough for a sharp test
    mech = rw.mechanism
    tokens = rw.tokenizer.tokenize(X)
    ids = mech.vocab.ids(np.asarray(tokens, dtype=object))
    (rows,) = mech.log_prob_lines([ids])
    n = 400
    out = np.asarray([o.split() for o in rw.rewrite([X] * n, np.random.default_rng(7))], dtype=object)
    for i in range(len(tokens)):
        top = int(np.argmax(rows[i]))
        p = float(np.exp(rows[i][top]))
        k = int(np.count_nonzero(out[:, i] == mech.vocab.words[top]))
        # two-sided exact binomial test per position, Bonferroni over the 7 positions at 0.001
        assert binomtest(k, n, p).pvalue > 0.001 / len(tokens), (i, k, n * p)
        assert 0.02 < p < 0.98, "the test needs a position whose top token is neither rare nor certain"
