"""SanText on every word as a rewriter (dpcore.rewriter.wordlevel): the metric claim is
ε·Σ d(xᵢ, x′ᵢ) over the changed words, its premise is refused clearly, and the CLI audits it."""

from __future__ import annotations

import json

import numpy as np
import pytest

from dpcore.cli import main
from dpcore.rewriter import RewriterClaim, audit_rewriter, load_rewriter
from dpcore.text.vocab import build_vocabulary
from dpcore.validation import DPCoreError

X = "my neighbour anna was diagnosed with diabetes"
X_PRIME = "my neighbour anna was diagnosed with cancer"


@pytest.fixture(scope="module")
def santext():
    return load_rewriter("santext-words", epsilon=2.0)


def test_the_claim_is_epsilon_times_the_summed_glove_distances(santext) -> None:
    v = build_vocabulary("glove", size=15_000)
    d = float(np.linalg.norm(v.vectors[v.ids(["diabetes"])[0]] - v.vectors[v.ids(["cancer"])[0]]))
    assert 1.0 < d < 10.0
    assert santext.claimed_bound(X, X_PRIME) == pytest.approx(2.0 * d)
    two = "my neighbour anna was diagnosed with cancer".replace("anna", "maria")
    dd = float(np.linalg.norm(v.vectors[v.ids(["anna"])[0]] - v.vectors[v.ids(["maria"])[0]]))
    assert santext.claimed_bound(X, two) == pytest.approx(2.0 * (d + dd))  # summed over the words
    assert santext.claimed_bound(X, X) == 0.0
    assert santext.claim.metric and "per word" in santext.claim.describe()
    with pytest.raises(DPCoreError, match="claimed_bound"):
        santext.claim.bound(7, 7)


def test_pairs_outside_the_premise_are_not_tested_and_say_why(santext) -> None:
    assert santext.premise(X, X_PRIME) is None
    assert "7 and 8 words" in santext.premise(X, X_PRIME + " today")
    assert "outside V" in santext.premise(X, "my neighbour anna was diagnosed with zzqxv")
    res = audit_rewriter(santext, [(X, X + " today")], rewrites=40, seed=0, distinguishers=("words",))
    assert res.verdict == "untested" and "words" in res.pairs[0].outside


def test_a_metric_claim_needs_claimed_bound() -> None:
    from dpcore.rewriter import check_rewriter

    class NoBound:
        name = "no-bound"
        claim = RewriterClaim(1.0, unit="token", metric="some distance")

        def count_tokens(self, text: str) -> int:
            return len(text.split())

        def rewrite(self, texts, rng):
            return list(texts)

    with pytest.raises(DPCoreError, match="claimed_bound"):
        check_rewriter(NoBound())
    with pytest.raises(DPCoreError, match="metric claim is per token"):
        RewriterClaim(1.0, unit="document", metric="d")


def test_the_cli_audits_santext_on_every_word(capsys) -> None:
    args = ["audit-rewriter", "--rewriter", "santext-words", "--epsilon", "1", "--x", X, "--x-prime", X_PRIME]
    assert main([*args, "--rewrites", "100", "--distinguishers", "exact,words", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["claim"]["metric"] == "Euclidean GloVe 50d distance"
    want = load_rewriter("santext-words", epsilon=1.0).claimed_bound(X, X_PRIME)
    assert out["pairs"][0]["claimed_bound"] == pytest.approx(want)
    assert out["parameters"]["mechanism"] == "santext"
    assert main([*args, "--q", "0.5", "--rewrites", "20"]) == 2
    assert "santext-words takes no option q" in capsys.readouterr().err
