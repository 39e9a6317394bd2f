"""The declaration stage of the text audit (issue 37): ``declaration.run`` on counts built as arrays.

A fake ``draw`` hands the stage the counts of each word's own declaration draws. Counts drawn
from the declared distribution pass; counts that depart from it (a sampler at 3ε, an output the
declaration gives probability 0) are a ``"mismatch"``; the p-value is recomputed from the arrays
with ``scipy.stats.binom``.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import binom

from dpcore.pairtest.budget import AlphaBudget
from dpcore.text.vocab import Vocabulary
from dpcore.textaudit import declaration
from dpcore.textaudit.declaration import DECLARED_TOP, own_draws_per_word
from dpcore.textaudit.engine import DrawPlan, WordDraws
from dpcore.textaudit.plan import AuditPlan
from dpcore.textaudit.reference import KaryRandomizedResponse
from dpcore.textaudit.sampling import OutputCodebook
from tests.textaudit_helpers import word_vocab

K = 10
WORDS = [f"w{i}" for i in range(K)]
EPS = 1.0
T = 20_000  # confirmation draws per word: the declaration draws max(1,000, T/10) = 2,000
M = 2_000
PAIRS = np.array([[0, 1], [2, 3]], dtype=np.int64)
BUDGET = AlphaBudget.split(0.95, declared=True, screened=False)  # declaration share 0.005


def _vocab() -> Vocabulary:
    return word_vocab(WORDS)


def _krr_probs(eps: float) -> np.ndarray:
    keep = math.exp(eps) / (math.exp(eps) + K - 1)
    p = np.full((K, K), (1 - keep) / (K - 1))
    np.fill_diagonal(p, keep)
    return p


class _TableDraw:
    """``draw(wids, what)`` returning ``counts[wid]`` (and ``extras[wid]``) as one half."""

    def __init__(self, counts: np.ndarray, extras=None, fail=()) -> None:
        self.counts, self.extras, self.fail = counts, extras or {}, set(fail)
        self.calls: list[tuple[list[int], DrawPlan]] = []

    def __call__(self, wids, what: DrawPlan) -> list[WordDraws]:
        self.calls.append(([int(w) for w in wids], what))
        out = []
        for w in (int(v) for v in wids):
            if w in self.fail:
                out.append(WordDraws(w, error="boom"))
                continue
            ex = dict(self.extras.get(w, {}))
            assert int(self.counts[w].sum()) + sum(ex.values()) == what.draws_per_word
            out.append(WordDraws(w, counts=[self.counts[w].copy()], extras=[ex]))
        return out


class _NoDraws:
    def __call__(self, wids, what):
        raise AssertionError("the stage drew although the screen's counts were given")


def _run(counts, sanitizer=None, extras=None, fail=(), pairs=PAIRS):
    vocab = _vocab()
    plan = AuditPlan.create(vocab=vocab, strategy="random", pairs=3, samples=T, seed=1)
    sanitizer = sanitizer or KaryRandomizedResponse(epsilon=EPS, words=WORDS)
    draw = _TableDraw(counts, extras=extras, fail=fail)
    cb = OutputCodebook(vocab.words)
    check = declaration.run(plan, draw, pairs, sanitizer=sanitizer, vocab=vocab, codebook=cb, budget=BUDGET)
    return check, draw, cb


def _two_sided(c: int, m: int, p: float) -> float:
    if p <= 0:
        return 0.0 if c > 0 else 1.0
    return min(1.0, 2 * min(binom.sf(c - 1, m, p), binom.cdf(c, m, p)))


def test_own_draws_per_word_is_a_tenth_of_t_and_at_least_1000():
    assert own_draws_per_word(20_000) == 2_000
    assert own_draws_per_word(5_000) == 1_000
    assert own_draws_per_word(100) == 1_000


def test_a_sampler_that_follows_its_declaration_agrees():
    counts = np.random.default_rng(11).multinomial(M, _krr_probs(EPS))
    check, draw, _ = _run(counts)
    ((wids, what),) = draw.calls
    assert wids == [0, 1, 2, 3] and what == DrawPlan("declaration", (M,))
    # the test's false mismatch rate is ≤ its level, 0.005, whatever the seed
    assert check.status == "agrees"
    assert check.alpha == pytest.approx(0.005)
    assert check.words_tested == 4 and check.draws_per_word == M
    assert check.family == 4 * (K + DECLARED_TOP + 1)
    assert check.cells_tested == 4 * K  # every output was seen, so every declared one is listed
    assert "agrees with its declared distribution on 4 words" in check.text()


def test_a_sampler_at_three_times_its_declared_epsilon_is_a_mismatch():
    counts = np.random.default_rng(12).multinomial(M, _krr_probs(3 * EPS))
    check, _, _ = _run(counts)
    assert check.status == "mismatch"
    assert check.p_value < check.alpha
    assert check.worst["word"] in WORDS[:4]
    assert "does not follow its declared distribution" in check.text()


def test_the_p_value_is_the_smallest_binomial_cell_times_the_family():
    p = _krr_probs(EPS)
    base = np.array([464] + [171] * 6 + [170] * 3)  # near the expected 463.9 and 170.7, sum 2,000
    counts = np.stack([np.roll(base, w) for w in range(K)])  # word w's own output first
    counts[2, 2] += 56  # word 2 keeps itself too often,
    counts[2, 5] -= 56  # and sends too little to w5
    check, _, _ = _run(counts)
    cells = {(w, y): _two_sided(int(counts[w, y]), M, p[w, y]) for w in range(4) for y in range(K)}
    (w, y), p_min = min(cells.items(), key=lambda kv: kv[1])
    family = 4 * (K + DECLARED_TOP + 1)
    assert (w, y) == (2, 5)
    assert check.p_value == pytest.approx(min(1.0, p_min * family), rel=1e-6)
    assert check.worst["word"] == "w2" and check.worst["output"] == "w5"
    assert check.worst["count"] == counts[2, 5]
    assert check.worst["expected"] == pytest.approx(M * p[2, 5])
    assert check.status == ("mismatch" if p_min * family < BUDGET.declaration else "agrees") == "mismatch"


def test_the_same_counts_within_chance_agree():
    base = np.array([464] + [171] * 6 + [170] * 3)
    counts = np.stack([np.roll(base, w) for w in range(K)])
    check, _, _ = _run(counts)
    assert check.status == "agrees" and check.p_value == 1.0


def test_an_output_the_declaration_rules_out_is_a_mismatch():
    counts = np.random.default_rng(13).multinomial(M, _krr_probs(EPS))
    counts[1] = np.random.default_rng(16).multinomial(M - 5, _krr_probs(EPS)[1])  # 5 draws of w1 are ⊥
    check, _, cb = _run(counts, extras={1: {"⊥": 5}})
    assert len(cb) == K + 1 and cb.label(K) == "⊥"  # the stage coded the new output
    assert check.status == "mismatch" and check.p_value == 0.0
    assert check.worst == {"word": "w1", "output": "⊥", "count": 5, "expected": 0.0, "p_value": 0.0}
    assert check.family == 4 * (K + 1 + DECLARED_TOP + 1)


def test_a_word_that_fails_is_left_out_of_the_test():
    counts = np.random.default_rng(14).multinomial(M, _krr_probs(EPS))
    check, _, _ = _run(counts, fail={3})
    assert check.words_tested == 3 and check.family == 3 * (K + DECLARED_TOP + 1)


def test_a_sanitizer_without_rows_is_not_declared_and_not_drawn_for_nothing():
    class _Undeclared(KaryRandomizedResponse):
        exact = False

    counts = np.random.default_rng(15).multinomial(M, _krr_probs(3 * EPS))
    check, _, _ = _run(counts, sanitizer=_Undeclared(epsilon=EPS, words=WORDS))
    assert check.status == "not-declared" and check.p_value == 1.0
    assert check.text() == "the sanitizer declares no exact distribution"


def test_the_screen_counts_are_used_without_drawing_and_the_family_is_every_screened_word():
    vocab = _vocab()
    plan = AuditPlan.create(vocab=vocab, pairs=2, samples=T, screen_budget=K * 400, seed=2)
    krr = KaryRandomizedResponse(epsilon=EPS, words=WORDS)
    cb = OutputCodebook(vocab.words)
    # the screen listed two outputs of w0 (itself, w4) and bounds every other by its residual 60
    obs = {0: (np.array([0, 4, 0]), np.array([93, 35, 93]), 60)}
    check = declaration.run(
        plan, _NoDraws(), PAIRS, sanitizer=krr, vocab=vocab, codebook=cb, budget=BUDGET, screened=(obs, 400)
    )
    p = _krr_probs(EPS)[0]
    assert check.family == K * (K + DECLARED_TOP + 1)  # all 10 screened words, not the 1 looked at
    assert check.words_tested == 1 and check.draws_per_word == 400
    # listed cells: two-sided binomial; 8 top declared outputs not listed: Pr[Bin(400, q) ≤ 60]
    listed = [_two_sided(93, 400, p[0]), _two_sided(35, 400, p[4])]
    unlisted = binom.cdf(60, 400, p[1])
    assert check.p_value == pytest.approx(min(1.0, min([*listed, unlisted]) * check.family), rel=1e-6)
    # the 8 most probable declared outputs are w0, then w1..w7 (equal, in order): less w0 and w4
    assert check.cells_tested == 3 + (DECLARED_TOP - 2)
