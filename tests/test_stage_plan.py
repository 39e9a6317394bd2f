"""The audit's plan and its α budget (issue 37), tested without running a whole audit.

The plan's sizes are checked against hand counts and against the draws the stages really ask
for: a counting ``draw`` records what :mod:`dpcore.textaudit.confirm` and
:mod:`dpcore.textaudit.screen` draw when fed the plan.
"""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
import pytest

from dpcore.pairtest.budget import ALPHA_DECLARATION, ALPHA_POOLED, AlphaBudget
from dpcore.text.vocab import Vocabulary
from dpcore.textaudit import confirm, declaration, screen
from dpcore.textaudit.engine import DrawPlan, draw_words
from dpcore.textaudit.plan import AuditPlan, word_ids_of
from dpcore.textaudit.reference import KaryRandomizedResponse
from dpcore.textaudit.sampling import OutputCodebook
from dpcore.textaudit.screen import claims_function
from dpcore.textaudit.timing import Speed
from dpcore.validation import DPCoreError
from tests.textaudit_helpers import word_vocab

WORDS = [f"w{i}" for i in range(20)]


def _vocab(words: list[str] = WORDS) -> Vocabulary:
    return word_vocab(words)


class _Undeclared(KaryRandomizedResponse):
    """k-RR that declares no rows (a black box to the audit: no declaration stage)."""

    exact = False


class _Counting:
    """A real ``draw`` (one process) that counts the draws each stage asks for."""

    def __init__(self, sanitizer, words: np.ndarray, seed: int) -> None:
        self.sanitizer, self.words, self.seed = sanitizer, words, seed
        self.by_stage: Counter[str] = Counter()

    def __call__(self, wids: np.ndarray, what: DrawPlan):
        self.by_stage[what.stage] += len(wids) * what.draws_per_word
        return draw_words(self.sanitizer, self.words, wids, self.seed, what)

    @property
    def total(self) -> int:
        return sum(self.by_stage.values())


def _run_paired_stages(plan: AuditPlan, sanitizer, vocab: Vocabulary, draw: _Counting) -> None:
    """The stages of an audit without a screen, in the runner's order (pilot, declaration, confirm)."""
    declared = declaration.declares_rows(sanitizer)
    budget = AlphaBudget.split(plan.confidence, declared=declared, screened=False)
    ctx = {"sanitizer": sanitizer, "vocab": vocab, "codebook": OutputCodebook(vocab.words)}
    claims = claims_function(sanitizer, vocab)
    cand = plan.candidates
    if plan.use_pilot:
        cand = confirm.run_pilot(plan, draw, claims=claims, budget=budget, **ctx).pairs
    if declared:
        declaration.run(plan, draw, cand, budget=budget, **ctx)
    confirm.run(plan, draw, cand, claims=claims, budget=budget, use_rows=False, screen_events={}, **ctx)


# --- the α budget ----------------------------------------------------------------------------


@pytest.mark.parametrize("confidence", [0.5, 0.8, 0.95, 0.999])
@pytest.mark.parametrize("declared", [False, True])
@pytest.mark.parametrize("screened", [False, True])
def test_alpha_shares_sum_to_alpha(confidence, declared, screened):
    b = AlphaBudget.split(confidence, declared=declared, screened=screened)
    alpha = 1.0 - confidence
    assert math.isclose(b.alpha, alpha)
    assert math.isclose(b.declaration + b.pooled + b.confirmation, alpha, rel_tol=1e-12)
    assert b.declaration == pytest.approx(ALPHA_DECLARATION * alpha if declared else 0.0)
    assert b.pooled == pytest.approx(ALPHA_POOLED * alpha if screened else 0.0)
    assert b.confirmation > 0 and b.declaration >= 0 and b.pooled >= 0


def test_per_test_levels_are_bonferroni_shares():
    b = AlphaBudget.split(0.95, declared=True, screened=True)
    # the stated split of 0.05: 10 % declaration, 20 % pooled, the rest confirmation
    assert (b.declaration, b.pooled, b.confirmation) == pytest.approx((0.005, 0.01, 0.035))
    assert b.per_confirmation_test(7) == pytest.approx(0.035 / 7)
    assert b.per_pooled_test(6) == pytest.approx(0.01 / 6)
    assert b.per_pilot_test(15) == pytest.approx(0.05 / 30)  # both directions of 15 candidates
    # no confirmation test (no pair): the level is still the whole share, never a division by 0
    assert b.per_confirmation_test(0) == pytest.approx(0.035)
    # a whole audit at these levels spends exactly α: 1 declaration, 6 pooled, 12 confirmation tests
    spent = b.declaration + 6 * b.per_pooled_test(6) + 12 * b.per_confirmation_test(12)
    assert spent == pytest.approx(0.05, rel=1e-12)


def test_budget_record_states_the_level_of_each_test():
    b = AlphaBudget.split(0.9, declared=False, screened=True)
    rec = b.to_dict(pooled_per_test=b.per_pooled_test(6), confirmation_tests=9)
    assert rec["alpha"] == pytest.approx(0.1)
    assert rec["declaration"] == 0.0
    assert rec["pooled"] == pytest.approx(0.02) and rec["pooled_per_test"] == pytest.approx(0.02 / 6)
    assert rec["confirmation"] == pytest.approx(0.08)
    assert rec["confirmation_tests"] == 9
    assert rec["per_confirmation_test"] == pytest.approx(0.08 / 9)


# --- the plan's sizes --------------------------------------------------------------------------


def test_named_words_give_every_pair_among_them_and_a_pilot_when_over_k():
    vocab = _vocab()
    plan = AuditPlan.create(vocab=vocab, words=["w3", "w7", "w11"], neighbors=0, pairs=2, samples=2_000)
    pairs = {tuple(sorted(p)) for p in plan.candidates.tolist()}
    assert pairs == {(3, 7), (3, 11), (7, 11)}
    assert plan.n_candidates == 3 and plan.use_pilot  # adaptive, 3 candidates for K = 2
    assert plan.pilot == 1_000  # max(1,000, T/10)
    # 3 pilot words × 1,000, then at most 2·K = 4 (here all 3) words × T
    assert plan.estimated_draws == 3 * 1_000 + 3 * 2_000
    assert plan.strategy_label == "words (adaptive)"
    assert sorted(plan.probe_ids.tolist()) == [3, 7, 11]
    d = plan.to_dict()
    assert d["pilot_samples"] == 1_000 and d["screen_budget"] == 0 and d["candidates"] == 3


def test_screen_plan_draws_budget_over_words_per_word():
    vocab = _vocab()
    plan = AuditPlan.create(vocab=vocab, pairs=3, samples=1_000, screen_budget=20 * 450 + 7, seed=5)
    assert plan.strategy == "screen" and plan.strategy_label == "screen"
    assert plan.m_screen == 450  # budget // words
    assert plan.screen_draws == 20 * 450
    assert plan.estimated_draws == 20 * 450 + min(20, 2 * 3) * 1_000
    assert np.array_equal(plan.probe_ids, np.arange(20))
    d = plan.to_dict()
    assert d["screened_words"] == 20 and d["screen_draws_per_word"] == 450 and d["pilot_samples"] == 0
    assert d["seed"] == 5


def test_screen_words_restrict_the_screen():
    vocab = _vocab()
    plan = AuditPlan.create(vocab=vocab, screen_words=["w2", " w9 ", "w2", "w4"], screen_budget=3_000)
    assert plan.screen_ids.tolist() == [2, 9, 4]  # stripped, deduplicated, in the given order
    assert plan.m_screen == 1_000


def test_estimated_seconds_and_the_fitted_plan():
    vocab = _vocab()
    speed = Speed(per_word=0.01, per_draw=2e-6, probe_seconds=0.0)
    plan = AuditPlan.create(vocab=vocab, words=["w1", "w2"], neighbors=1, samples=500, seed=1)
    words = len(np.unique(plan.candidates))
    assert plan.estimated_seconds(speed) == pytest.approx(words * 0.01 + plan.estimated_draws * 2e-6)
    with pytest.raises(DPCoreError, match="only a screen with screen_budget=None is fitted"):
        plan.fit(speed)
    fitted = AuditPlan.create(vocab=vocab, screen_budget=None, samples=None, pairs=2, seed=1)
    assert fitted.fitted and fitted.fit_samples
    sized, fit = fitted.fit(speed)
    assert sized.m_screen == fit.draws_per_word and sized.samples == fit.samples
    assert sized.screen_draws == 20 * fit.draws_per_word
    assert sized.estimated_draws == 20 * fit.draws_per_word + min(20, 4) * fit.samples


def test_the_seed_fixes_the_candidates_and_is_recorded():
    vocab = _vocab()
    a = AuditPlan.create(vocab=vocab, strategy="random", pairs=6, seed=11)
    b = AuditPlan.create(vocab=vocab, strategy="random", pairs=6, seed=11)
    c = AuditPlan.create(vocab=vocab, strategy="random", pairs=6, seed=12)
    assert np.array_equal(a.candidates, b.candidates)
    assert not np.array_equal(a.candidates, c.candidates)
    drawn = AuditPlan.create(vocab=vocab, strategy="random", pairs=6, seed=None)
    assert isinstance(drawn.seed, int) and drawn.to_dict()["seed"] == drawn.seed


# --- the estimate against the stages' draws -----------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "pilot"),
    [
        ({"strategy": "random", "pairs": 4}, False),
        ({"strategy": "neighbors", "pairs": 3, "neighbors": 2}, False),
        ({"words": ["w0", "w5", "w9"], "neighbors": 0, "pairs": 3}, False),
        ({"words": ["w0", "w5", "w9", "w13"], "neighbors": 1, "pairs": 2}, True),
    ],
)
def test_estimate_against_the_draws_the_stages_make(kwargs, pilot):
    vocab = _vocab()
    plan = AuditPlan.create(vocab=vocab, samples=400, pilot_samples=200, seed=3, **kwargs)
    assert plan.use_pilot is pilot
    krr = _Undeclared(epsilon=1.0, words=WORDS)
    draw = _Counting(krr, vocab.words, plan.seed)
    _run_paired_stages(plan, krr, vocab, draw)
    if not pilot:  # the candidates are the pairs: the estimate is exact
        assert draw.total == plan.estimated_draws
        assert set(draw.by_stage) == {"confirm"}
    else:  # the pilot's draws are exact; the K kept pairs use at most min(words, 2·K) words
        assert draw.by_stage["pilot"] == len(np.unique(plan.candidates)) * 200
        assert draw.total <= plan.estimated_draws


@pytest.mark.xfail(
    strict=True,
    raises=AssertionError,
    reason="AuditPlan.estimated_draws leaves out the declaration's own draws (max(1,000, T/10) per "
    "candidate word) that a declaring sanitizer gets without a screen; the runner adds them to its "
    "progress total by hand",
)
def test_estimate_counts_the_declaration_draws_of_a_declaring_sanitizer():
    vocab = _vocab()
    plan = AuditPlan.create(vocab=vocab, strategy="random", pairs=4, samples=400, seed=3)
    krr = KaryRandomizedResponse(epsilon=1.0, words=WORDS)  # declares its rows
    draw = _Counting(krr, vocab.words, plan.seed)
    _run_paired_stages(plan, krr, vocab, draw)
    assert draw.by_stage["declaration"] == len(np.unique(plan.candidates)) * 1_000
    assert draw.total == plan.estimated_draws


def test_screen_stage_draws_what_the_plan_says():
    vocab = _vocab()
    plan = AuditPlan.create(vocab=vocab, pairs=2, samples=400, screen_budget=20 * 300, seed=9)
    krr = KaryRandomizedResponse(epsilon=1.0, words=WORDS)
    draw = _Counting(krr, vocab.words, plan.seed)
    sd = screen.run(plan, draw, sanitizer=krr, vocab=vocab, codebook=OutputCodebook(vocab.words))
    assert draw.by_stage == Counter({"screen": plan.screen_draws})
    assert plan.screen_draws == 20 * 300 and sd.halves == (150, 150)


# --- bad arguments -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"strategy": "bogus"}, "unknown pair strategy 'bogus'; choose one of: screen, adaptive"),
        ({"strategy": "screen", "words": ["w1"]}, "name words with screen_words, not words"),
        (
            {"strategy": "random", "samples": None},
            "samples=None (fitted to the time budget) needs the screen",
        ),
        ({"words": ["w1"], "neighbors": 0}, "one word needs neighbours to pair with"),
        ({"words": ["w1", "nope", "zz"]}, "2 word(s) are not in the 20-word vocabulary: 'nope', 'zz'"),
        ({"words": ["  ", ""]}, "give at least one word to audit"),
        ({"screen_words": ["w3", "w3 "]}, "the screen needs at least two words"),
        ({"screen_budget": 100}, "a screen budget of 100 draws gives 5 draws to each of 20 words"),
        ({"pairs": 0}, "pairs must be between 1 and 500, got 0"),
        ({"samples": 99}, "samples must be between 100 and 10,000,000, got 99"),
        ({"confidence": 0.4}, "confidence must be ≥ 0.5, got 0.4"),
        ({"engine": "spark"}, "unknown engine 'spark'; choose one of: local, ray"),
        ({"address": "ray://x:1"}, "address is for engine='ray'"),
        ({"max_total_samples": 10_000, "screen_budget": 4_000}, "this audit would draw about"),
    ],
)
def test_bad_arguments_are_one_clear_error(kwargs, message):
    with pytest.raises(DPCoreError) as err:
        AuditPlan.create(vocab=_vocab(), **kwargs)
    assert message in str(err.value)
    assert "\n" not in str(err.value)


def test_vocab_must_be_a_vocabulary():
    with pytest.raises(DPCoreError, match=r"vocab must be a dpcore\.text\.vocab\.Vocabulary"):
        AuditPlan.create(vocab=WORDS)  # type: ignore[arg-type]


def test_word_ids_of_limits_and_order():
    vocab = _vocab()
    assert word_ids_of(vocab, ["w4", "w1", "w4"], limit=5, what="x").tolist() == [4, 1]
    with pytest.raises(DPCoreError, match="at most 2 words to audit at once, got 3"):
        word_ids_of(vocab, ["w1", "w2", "w3"], limit=2, what="audit")
