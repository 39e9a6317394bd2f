"""The rewriter audit (dpcore.rewriter): verdicts, bounds, premise, reach, contract, errors."""

from __future__ import annotations

import math
from pathlib import Path
from typing import ClassVar

import numpy as np
import pytest

from dpcore.rewriter import RewriterClaim, audit_rewriter, load_rewriter
from dpcore.rewriter.contract import PROBE, UNBATCHED_PROBE, check_contract
from dpcore.rewriter.distinguish import choose_events, parse_distinguishers
from dpcore.rewriter.draws import plan_tasks
from dpcore.rewriter.pairs import build_pairs, corpus_sentences
from dpcore.rewriter.planted import CopyRewriter, LeakWordRewriter, planted_loss, q_for_loss
from dpcore.rewriter.power import reach, rewrites_needed
from dpcore.stats import cp_log_ratio_lower, cp_max_log_ratio
from dpcore.validation import DPCoreError

PLUGINS = Path(__file__).resolve().parent / "plugins" / "rewriters.py"
POOL = corpus_sentences()[:20]
FAST = ("exact", "words")


def test_a_copying_rewriter_violates_with_the_pair_event_and_exact_loss() -> None:
    rw = CopyRewriter(epsilon=1.0, q=0.5, pool=POOL)
    res = audit_rewriter(rw, [(POOL[0], POOL[1])], rewrites=200, seed=0, distinguishers=FAST)
    assert res.verdict == "violates"
    (p,) = res.pairs
    assert p.violates and p.lower_bound > 1.0
    assert p.exact_loss == pytest.approx(planted_loss(0.5, 20))
    # the bound is a lower bound: never above the exact loss (it holds at 95%; here by a margin)
    assert p.lower_bound < p.exact_loss
    best = p.best
    assert best is not None and best.count_x > best.count_x_prime
    d = res.to_dict()
    assert d["verdict"] == "violates" and d["pairs"][0]["violates"] is True
    assert d["largest_certifiable_bound"] == pytest.approx(res.reach)
    assert d["pairs"][0]["tradeoff"]["outside"], "the chosen event's box is beyond the claim's curve"
    assert "violates its claim" in res.text() and "95%" in res.verdict_text


def test_an_identity_free_rewriter_is_not_flagged_and_the_text_says_not_private() -> None:
    # outputs do not depend on the input (q = 0): loss 0, no claim can be violated
    rw = CopyRewriter(epsilon=0.5, q=0.0, pool=POOL)
    res = audit_rewriter(
        rw, [(POOL[0], POOL[1])], rewrites=200, seed=1, distinguishers=("exact", "words", "chars")
    )
    assert res.verdict == "not-detected"
    assert "does not show the rewriter is private" in res.verdict_text
    assert res.pairs[0].lower_bound < 0.5


def test_a_claim_above_the_reach_is_out_of_reach_not_no_violation() -> None:
    rw = CopyRewriter(epsilon=10.0, q=0.9, pool=POOL)  # loss ≈ 5.2 but the claim 10 is unreachable
    res = audit_rewriter(rw, [(POOL[0], POOL[1])], rewrites=100, seed=0, distinguishers=FAST)
    assert res.verdict == "out-of-reach"
    assert res.reach < 10.0
    assert "could not have shown a violation" in res.verdict_text
    need = rewrites_needed(10.0, res.alpha)
    assert need is not None and reach(need // 2, res.alpha) > 10.0 >= reach(need // 2 - 1, res.alpha)
    assert f"{need:,}" in res.verdict_text


def test_reach_is_the_largest_clopper_pearson_bound_about_ln_n() -> None:
    for n in (50, 500, 5000):
        top = reach(n, 0.025)
        assert top == pytest.approx(cp_max_log_ratio(n, 0.025))
        assert math.log(n) - 3 < top < math.log(n)


def test_pairs_outside_the_premise_are_not_tested_and_all_outside_is_untested() -> None:
    rw = load_rewriter("flawed:dp-mlm-line-epsilon", epsilon=1.0)
    assert rw.claim.same_length
    res = audit_rewriter(rw, [("a short line", "a much longer line than the first one")], rewrites=20, seed=0)
    assert res.verdict == "untested" and not res.tested
    assert "tokens" in res.pairs[0].outside
    assert res.to_dict()["pairs"][0]["outside_premise"]


def test_a_per_token_claim_composes_over_the_tokens() -> None:
    claim = RewriterClaim(0.25, unit="token", same_length=True)
    assert claim.bound(8, 8) == pytest.approx(2.0)
    assert RewriterClaim(2.0).bound(None, None) == 2.0
    assert "per token" in claim.describe() and "premise" in claim.describe()
    with pytest.raises(DPCoreError, match="count_tokens"):
        claim.bound(None, None)


@pytest.mark.parametrize("eps", [0, -1, float("nan"), float("inf"), True, "1"])
def test_a_claim_needs_a_finite_positive_epsilon(eps: object) -> None:
    with pytest.raises(DPCoreError, match="epsilon"):
        RewriterClaim(eps)  # type: ignore[arg-type]
    with pytest.raises(DPCoreError, match="unit"):
        RewriterClaim(1.0, unit="sentence")


def test_the_selection_half_is_never_counted_twice() -> None:
    # every rewrite distinct: no event chosen on the selection half can be seen again
    sel_x = [f"x {i}" for i in range(50)]
    sel_xp = [f"y {i}" for i in range(50)]
    ev_x = [f"x {i}" for i in range(50, 100)]
    ev_xp = [f"y {i}" for i in range(50, 100)]
    for c in choose_events(sel_x, sel_xp, ev_x, ev_xp, alpha=0.025, distinguishers=("exact",)):
        assert c.count_x == c.count_x_prime == 0



@pytest.mark.parametrize(
    ("zebra_rows", "scored"),
    [(range(15), False), ([r for fold in range(0, 100, 20) for r in range(fold, fold + 3)], True)],
    ids=["seen-in-one-fold", "seen-in-every-fold"],
)
def test_a_single_ngram_is_scored_on_rewrites_that_did_not_pick_it(zebra_rows: object, scored: bool) -> None:
    # 100 selection rewrites per input, five folds of 20, "zebra" in 15 of x's. Seen only in one
    # fold, it is picked only with that fold in view, so no held-out count supports it and its
    # score is below 0 (scored on the rewrites that picked it, 15 against 0 would give 0.85);
    # spread over the folds, it is every fold's pick and scores 15 against 0 of 100.
    sel_x = [("zebra " if i in zebra_rows else "") + "a b c" for i in range(100)]
    sel_xp = ["a b c"] * 100
    ev_x, ev_xp = ["zebra a b c"] * 5, ["a b c"] * 5
    choices = choose_events(sel_x, sel_xp, ev_x, ev_xp, alpha=0.025, distinguishers=("words",))
    single = [c for c in choices if c.description == "output contains the word n-gram 'zebra'"]
    if scored:
        assert [c.selection_bound for c in single] == [
            pytest.approx(float(cp_log_ratio_lower(15, 0, 100, 0.025)))
        ]
        assert single[0].selection_bound > 0.5
    else:
        assert all(c.selection_bound < 0 for c in single)


def test_a_leaked_word_is_found_by_the_word_ngrams() -> None:
    words = ["alpha", "bravo", "charlie", "delta"] + [f"w{i}" for i in range(96)]
    rw = LeakWordRewriter(epsilon=1.0, q=0.6, pool=POOL, words=words)
    res = audit_rewriter(rw, [("we met alpha", "we met bravo")], rewrites=200, seed=0, distinguishers=FAST)
    assert res.verdict == "violates"
    assert "alpha" in res.pairs[0].best.description or "bravo" in res.pairs[0].best.description
    assert res.pairs[0].exact_loss == pytest.approx(planted_loss(0.6, 100))


def test_minilm_finds_a_meaning_that_survives_paraphrase() -> None:
    # the rewriter keeps the topic of its input and changes every word: only meaning leaks
    class Topic:
        name = "topic"
        claim = RewriterClaim(0.5)
        sides: ClassVar[dict[str, list[str]]] = {
            "the match ended in a draw": [
                "a football game",
                "the team scored twice",
                "fans cheered the goal",
            ],
            "interest rates rose again": [
                "the bank lifted borrowing costs",
                "inflation worries markets",
                "the central bank tightened policy",
            ],
        }

        def rewrite(self, texts: list[str], rng: np.random.Generator) -> list[str]:
            return [self.sides[t][int(rng.integers(3))] for t in texts]

    pair = tuple(Topic.sides)
    res = audit_rewriter(Topic(), [pair], rewrites=40, seed=0, distinguishers=("minilm",))
    assert res.verdict == "violates"
    assert res.pairs[0].best.distinguisher == "minilm"


def test_q_for_loss_inverts_the_planted_loss() -> None:
    for loss in (0.5, 1.0, 3.0):
        assert planted_loss(q_for_loss(loss, 20), 20) == pytest.approx(loss)


def test_one_word_pairs_keep_the_token_count_and_differ_in_one_word() -> None:
    rw = load_rewriter("dp-mlm", epsilon=1.0)
    pairs = build_pairs(kind="one-word", n_pairs=3, seed=0, count_tokens=rw.count_tokens)
    assert pairs == build_pairs(kind="one-word", n_pairs=3, seed=0, count_tokens=rw.count_tokens)
    for a, b in pairs:
        assert rw.count_tokens(a) == rw.count_tokens(b)
        diff = [(u, v) for u, v in zip(a.split(), b.split(), strict=True) if u != v]
        assert len(diff) == 1
    for a, b in build_pairs(kind="unrelated", n_pairs=2, seed=0, count_tokens=rw.count_tokens):
        assert a != b and rw.count_tokens(a) == rw.count_tokens(b)
    with pytest.raises(DPCoreError, match="pair kind"):
        build_pairs(kind="two-word", n_pairs=1, seed=0)


def _plugin(name: str):
    return load_rewriter(f"{PLUGINS}:{name}", epsilon=1.0, allow_user_code=True)


def test_a_plugin_rewriter_is_audited_and_user_code_needs_permission() -> None:
    res = audit_rewriter(
        _plugin("shuffle"), [("a b c d", "a b c e")], rewrites=40, seed=0, distinguishers=FAST
    )
    assert res.verdict == "violates"
    assert res.contract is not None and res.contract.reproducible and not res.contract.deterministic
    with pytest.raises(DPCoreError, match="CLI only"):
        load_rewriter(f"{PLUGINS}:shuffle", epsilon=1.0)
    with pytest.raises(DPCoreError, match="lacks"):
        _plugin("not_a_rewriter")


@pytest.mark.parametrize(
    ("factory", "message"),
    [
        ("own_generator", "gives other rewrites for the same seed"),
        ("wrong_length", "returned 1 texts for"),
    ],
)
def test_the_contract_refuses_rewriters_that_break_it(factory: str, message: str) -> None:
    with pytest.raises(DPCoreError, match=message):
        audit_rewriter(_plugin(factory), [("a b c d", "a b c e")], rewrites=40, seed=0, distinguishers=FAST)


@pytest.mark.parametrize(("factory", "which"), [("global_random", "NumPy's"), ("python_random", "Python's")])
def test_a_rewriter_that_reads_a_global_random_state_is_audited_with_it_seeded_per_call(
    factory: str, which: str
) -> None:
    """The word audit's policy (issue 60): not refused, but audited with NumPy's and Python's
    global states seeded from the handed rng on every call; the same seed gives the same result,
    the caller's global states are left as they were, and the result says what it rests on."""
    import random

    np.random.seed(7)  # noqa: NPY002 (the caller's state, which the audit must leave alone)
    random.seed(7)
    before = (np.random.get_state()[1].copy(), random.getstate())  # noqa: NPY002
    runs = [
        audit_rewriter(_plugin(factory), [("a b c d", "a b c e")], rewrites=40, seed=0, distinguishers=FAST)
        for _ in range(2)
    ]
    assert np.array_equal(np.random.get_state()[1], before[0]) and random.getstate() == before[1]  # noqa: NPY002
    a, b = (r.to_dict() for r in runs)
    assert {k: v for k, v in a.items() if k != "seconds"} == {k: v for k, v in b.items() if k != "seconds"}
    res = runs[0]
    assert res.contract is not None and res.contract.global_state_reseeded == which
    assert res.contract.reproducible and res.contract.batched
    assert "global random state, which the audit seeds from the handed rng" in res.independence
    assert res.verdict == "violates"  # it appends its input: the leak is still there, and caught


@pytest.mark.parametrize(
    ("factory", "why", "flagged"),
    [
        # it writes its input into every rewrite: a true leak, still caught one copy per call
        ("one_per_call", "rewrites from one call differ from 24 single calls in how many distinct", True),
        ("shared_word", "its copies of one call agree in content more than copies of different calls", False),
    ],
)
def test_copies_not_shown_independent_are_drawn_one_per_call(factory: str, why: str, flagged: bool) -> None:
    # shared_word: one word per call given to every copy, beside an independent one (the counts pass)
    calls: list[int] = []
    base = type(_plugin(factory))

    class Counted(base):  # type: ignore[misc, valid-type]
        def rewrite(self, texts: list[str], rng: np.random.Generator) -> list[str]:
            calls.append(len(texts))
            return super().rewrite(texts, rng)

    res = audit_rewriter(Counted(1.0), [("a b c d", "a b c e")], rewrites=40, seed=3, distinguishers=FAST)
    assert (
        res.contract is not None and not res.contract.batched and why in str(res.contract.unbatched_because)
    )
    assert len(calls) > 80 and set(calls[-80:]) == {1}  # every rewrite of the audit its own call
    assert res.independence.startswith("one copy per rewrite call (the contract's check found that ")
    assert why in res.independence
    assert f"rests on: {res.independence}" in res.text() and res.to_dict()["independence"] == res.independence
    # shared_word's output ignores its input: drawn one per call, it is not flagged
    assert (res.verdict == "violates") is flagged


def test_a_rewriter_may_declare_its_copies_dependent() -> None:
    calls: list[int] = []

    class Declared(type(_plugin("shared_word"))):  # type: ignore[misc]
        independent_copies = False

        def rewrite(self, texts: list[str], rng: np.random.Generator) -> list[str]:
            calls.append(len(texts))
            return super().rewrite(texts, rng)

    res = audit_rewriter(Declared(1.0), [("a b c d", "a b c e")], rewrites=40, seed=0, distinguishers=FAST)
    assert set(calls[-80:]) == {1} and res.verdict != "violates"
    assert res.independence.startswith("one copy per rewrite call (the rewriter declares")
    calls.clear()
    report = check_contract(Declared(1.0), "some text", seed=3, batched=False)
    assert report.reproducible and not report.batched and report.content_rewrites == 0
    # items 1 and 4 only, on fewer rewrites (each its own call in the audit): a warm-up, then
    # the same seed twice and another seed
    assert report.probe == UNBATCHED_PROBE < PROBE and calls == [1] + [UNBATCHED_PROBE] * 3


def test_a_kept_contract_is_stated_with_its_content_check() -> None:
    res = audit_rewriter(
        _plugin("shuffle"), [("a b c d", "a b c f")], rewrites=40, seed=1, distinguishers=FAST
    )
    c = res.contract
    assert (
        c is not None and c.batched and c.content_calls == 1 + 12 + 24 and c.content_rewrites == 24 + 48 + 24
    )
    assert "copies within one rewrite call are independent" in res.independence
    assert f"permutation p = {c.content_p_value:.2g}" in res.independence


def test_no_rewrite_call_draws_for_both_halves() -> None:
    tasks = plan_tasks([("a", "b")], 150)
    for side in (0, 1):
        edges = np.cumsum([0] + [t.count for t in tasks if t.side == side])
        assert 75 in edges and edges[-1] == 150  # the selection half ends where a call ends
    # a multiple of two chunks keeps the chunks of one run over all rewrites
    assert [(t.chunk, t.count) for t in plan_tasks([("a", "b")], 200) if t.side == 0] == [
        (c, 50) for c in range(4)
    ]


def test_a_deterministic_rewriter_is_reported_not_refused() -> None:
    class Upper:
        name = "upper"
        claim = RewriterClaim(1.0)

        def rewrite(self, texts: list[str], rng: np.random.Generator) -> list[str]:
            return [t.upper() for t in texts]

    report = check_contract(Upper(), "some text", seed=0)
    assert report.deterministic
    res = audit_rewriter(Upper(), [("a b", "a c")], rewrites=40, seed=0, distinguishers=FAST)
    assert res.verdict == "violates" and res.contract.deterministic


def test_a_rewriter_that_touches_global_state_only_when_it_loads_passes_the_contract() -> None:
    class LazyModel:
        name = "lazy"
        claim = RewriterClaim(1.0)
        loaded = False

        def rewrite(self, texts: list[str], rng: np.random.Generator) -> list[str]:
            if not self.loaded:  # a library that seeds NumPy's global state on import
                np.random.seed(1234)  # noqa: NPY002 (what is tested)
                self.loaded = True
            return [f"{t} {int(rng.integers(100))}" for t in texts]

    report = check_contract(LazyModel(), "some text", seed=0)
    assert report.reproducible and not report.deterministic


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"rewrites": 10}, "rewrites"),
        ({"rewrites": 2_000_000}, "rewrites"),
        ({"confidence": 1.0}, "confidence"),
        ({"confidence": float("nan")}, "confidence"),
        ({"seed": -1}, "seed"),
    ],
)
def test_bad_audit_parameters_are_refused_in_one_line(kwargs: dict, message: str) -> None:
    rw = CopyRewriter(epsilon=1.0, q=0.5, pool=POOL)
    with pytest.raises(DPCoreError, match=message):
        audit_rewriter(rw, [(POOL[0], POOL[1])], **{"rewrites": 40, **kwargs})


def test_bad_pairs_are_refused() -> None:
    rw = CopyRewriter(epsilon=1.0, q=0.5, pool=POOL)
    with pytest.raises(DPCoreError, match="at least one pair"):
        audit_rewriter(rw, [], rewrites=40)
    with pytest.raises(DPCoreError, match="must differ"):
        audit_rewriter(rw, [("same", "same")], rewrites=40)
    with pytest.raises(DPCoreError, match="non-empty"):
        audit_rewriter(rw, [("", "x")], rewrites=40)
    with pytest.raises(DPCoreError, match="at most"):
        audit_rewriter(rw, [(f"a{i}", f"b{i}") for i in range(101)], rewrites=40)


def test_unknown_names_and_options_are_refused() -> None:
    with pytest.raises(DPCoreError, match="unknown rewriter"):
        load_rewriter("dp-bart", epsilon=1.0)
    with pytest.raises(DPCoreError, match="unknown rewriter 'flawed:nope'; choose one of: dp-mlm, "):
        load_rewriter("flawed:nope", epsilon=1.0)
    with pytest.raises(DPCoreError, match="no option"):
        load_rewriter("dp-mlm", epsilon=1.0, q=0.5)
    with pytest.raises(DPCoreError, match="epsilon"):
        load_rewriter("dp-mlm", epsilon=0.0)
    with pytest.raises(DPCoreError, match="distinguisher"):
        parse_distinguishers("exact,bert")
    assert parse_distinguishers("words, exact,words") == ("words", "exact")
