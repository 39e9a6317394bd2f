"""The language-model distinguisher on an exact toy model (the ``toy_lm`` fixture): its score is
the difference of two log-likelihoods under the reconstruction prompt, each distinct rewrite is
scored once, and the audit turns it into a held-out threshold event like any other. The shipped
SmolLM2 runs it from the CLI in tests/test_rewriter_dpprompt.py."""

from __future__ import annotations

import math

import pytest

from dpcore.rewriter import audit_rewriter, lmscore
from dpcore.rewriter.distinguish import ALL_DISTINGUISHERS, DISTINGUISHERS, parse_distinguishers
from dpcore.rewriter.planted import LeakWordRewriter
from dpcore.validation import DPCoreError


def test_the_score_is_the_difference_of_the_two_log_likelihoods_and_each_rewrite_is_scored_once(
    toy_lm,
) -> None:  # type: ignore[no-untyped-def]
    toy = toy_lm
    assert isinstance(toy, lmscore.ScoringLM)
    seen: list[tuple[int, int]] = []
    rewrites = ["pool text anna", "pool text bob", "pool text anna", "nothing"]
    s = lmscore.reconstruction_scores(
        rewrites, "anna ill", "bob ill", model=toy, chunk=2, progress=lambda d, t: seen.append((d, t))
    )
    step = math.log(0.6) - math.log(0.05)
    assert s.tolist() == pytest.approx([step, -step, step, 0.0])
    assert toy.prompts_scored == 3  # three distinct rewrites, each scored against x and x′ at once
    assert seen == [(2, 3), (3, 3)]
    with pytest.raises(DPCoreError, match="two different inputs"):
        lmscore.reconstruction_scores(rewrites, "same", "same", model=toy)


def test_the_audit_turns_the_score_into_a_held_out_threshold_event(toy_lm) -> None:  # type: ignore[no-untyped-def]
    toy = toy_lm
    pool = ["a storm hit", "the town slept", "rain fell"]
    rw = LeakWordRewriter(epsilon=0.5, q=0.7, pool=pool, words=["anna", "bob", "carl", "dora"])
    res = audit_rewriter(
        rw, [("we met anna", "we met bob")], rewrites=200, seed=0, check=False, distinguishers=("lm",)
    )
    best = res.pairs[0].best
    assert res.verdict == "violates" and best.distinguisher == "lm"
    assert best.description.startswith("LM score ln p(x | rewrite) − ln p(x′ | rewrite)")
    assert res.distinguishers == ("lm",) and toy.prompts_scored > 0
    # the power statement is for markers that whole outputs, words or side channels pick: none here
    assert res.power == [] and "power: none stated" in res.text()
    # a rewriter that ignores its input gives the toy nothing to read: not flagged
    blind = LeakWordRewriter(epsilon=0.5, q=0.0, pool=pool, words=["anna", "bob", "carl", "dora"])
    res0 = audit_rewriter(
        blind, [("we met anna", "we met bob")], rewrites=200, seed=0, check=False, distinguishers=("lm",)
    )
    assert res0.verdict == "not-detected"


def test_lm_is_asked_for_by_name_and_never_a_default() -> None:
    assert "lm" not in DISTINGUISHERS and "lm" in ALL_DISTINGUISHERS
    assert parse_distinguishers("words, lm") == ("words", "lm")
    assert parse_distinguishers(None) == DISTINGUISHERS
    with pytest.raises(
        DPCoreError, match=r"unknown distinguisher.*'llm'.*choose from exact, words, chars, side, minilm, lm"
    ):
        parse_distinguishers("llm")
    with pytest.raises(DPCoreError, match="unknown distinguisher"):
        audit_rewriter(
            LeakWordRewriter(epsilon=1, q=0.5, pool=["a b", "c d"], words=["x", "y"]),
            [("a x", "a y")],
            rewrites=20,
            distinguishers=("nope",),
        )


def test_retest_reads_the_same_rewrites_with_other_distinguishers(toy_lm) -> None:  # type: ignore[no-untyped-def]
    from dpcore.rewriter.audit import retest

    rw = LeakWordRewriter(
        epsilon=0.5, q=0.5, pool=["a storm hit", "rain fell"], words=["anna", "bob", "carl"]
    )
    pair = ("we met anna", "we met bob")
    base = audit_rewriter(
        rw, [pair], rewrites=100, seed=3, check=False, distinguishers=("words",), keep_rewrites=True
    )
    same = retest(base, ["words"])
    assert same.to_dict() == base.to_dict()  # the same rewrites read the same way: the same result
    by_lm = retest(base, ["lm"])
    assert by_lm.distinguishers == ("lm",) and by_lm.pairs[0].best.distinguisher == "lm"
    assert by_lm.alpha == base.alpha and by_lm.reach == base.reach and by_lm.drawn is base.drawn
    with pytest.raises(DPCoreError, match="keep_rewrites=True"):
        retest(audit_rewriter(rw, [pair], rewrites=20, check=False, distinguishers=("words",)), ["lm"])
