"""The pooled stage of the text audit (issue 37): ``pooled.run(sd, ids, ...)`` on screen draws from arrays.

Each screened word's counts are drawn from a known distribution with a fixed seed (or written
out), handed to :func:`dpcore.textaudit.screen.run` through a fake ``draw``, and the stage's
sums, levels and verdicts are checked against the same arrays.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpcore.pairtest.budget import AlphaBudget
from dpcore.text.vocab import Vocabulary
from dpcore.textaudit import pooled, screen
from dpcore.textaudit.engine import DrawPlan, WordDraws, reduce_draws
from dpcore.textaudit.plan import AuditPlan
from dpcore.textaudit.sampling import OutputCodebook
from tests.textaudit_helpers import word_vocab

N = 40
WORDS = [f"w{i}" for i in range(N)]
HALF = 1_000  # draws per half; m = 2,000
EPS = 1.0
BUDGET = AlphaBudget.split(0.95, declared=False, screened=True)  # pooled share 0.01


def _vocab() -> Vocabulary:
    return word_vocab(WORDS)


class _Claim:
    """A claim and nothing else (the stage reads ε, the guarantee and the protected outputs)."""

    name, epsilon = "stub", EPS

    def __init__(self, guarantee: str = "ldp", protected: np.ndarray | None = None) -> None:
        self.guarantee = guarantee
        self._protected = protected
        if protected is not None:
            self.protected_ids = lambda: self._protected


def _krr_halves(sampling_eps: float, seed: int) -> np.ndarray:
    """Counts (word, half, output) of k-RR at ``sampling_eps``, drawn with a fixed seed."""
    keep = 1.0 / (1.0 + (N - 1) * math.exp(-sampling_eps))
    p = np.full((N, N), (1.0 - keep) / (N - 1))
    np.fill_diagonal(p, keep)
    rng = np.random.default_rng(seed)
    return np.stack([rng.multinomial(HALF, p, size=N), rng.multinomial(HALF, p, size=N)], axis=1)


class _TableDraw:
    """``draw(wids, what)`` returning the given counts per half (and outputs outside V), reduced
    to summaries after pairing 0's side-by-side pairs are scored, as the engine does."""

    def __init__(self, halves: np.ndarray, extras=None, fail=()) -> None:
        self.halves, self.extras, self.fail = halves, extras or {}, set(fail)

    def __call__(self, wids, what: DrawPlan) -> list[WordDraws]:
        wids = [int(w) for w in wids]
        full = []
        for w in wids:
            if w in self.fail:
                full.append(WordDraws(wid=w, error="boom"))
                continue
            ex = self.extras.get(w, ({}, {}))
            assert [int(self.halves[w, h].sum()) + sum(ex[h].values()) for h in (0, 1)] == list(what.halves)
            full.append(
                WordDraws(w, counts=[self.halves[w, 0].copy(), self.halves[w, 1].copy()], extras=list(ex))
            )
        lower = [math.nan] * len(wids)
        for k in range(0, len(wids) - 1, 2):
            if what.partners[0][wids[k]] == wids[k + 1]:
                lower[k], lower[k + 1] = what.pair_scorer(full[k], full[k + 1], N, what.halves, None)
        return [reduce_draws(wd, what, lo) for wd, lo in zip(full, lower, strict=True)]


def _pooled(halves: np.ndarray, sanitizer=None, extras=None, fail=()):
    sanitizer = sanitizer or _Claim()
    vocab = _vocab()
    plan = AuditPlan.create(vocab=vocab, pairs=5, samples=1_000, screen_budget=N * 2 * HALF, seed=3)
    draw = _TableDraw(halves, extras=extras, fail=fail)
    sd = screen.run(plan, draw, sanitizer=sanitizer, vocab=vocab, codebook=OutputCodebook(vocab.words))
    claims = screen.claims_function(sanitizer, vocab)
    out = pooled.run(sd, plan.screen_ids, sanitizer=sanitizer, vocab=vocab, claims=claims, budget=BUDGET)
    return vocab, plan, sd, out


def _test(out, family: str, pairing: str):
    (t,) = [t for t in out.tests if t.family == family and t.pairing == pairing]
    return t


def test_a_faithful_krr_passes_every_family_at_a_bonferroni_share():
    _, _, sd, out = _pooled(_krr_halves(EPS, seed=1))
    names = {(t.pairing, t.family) for t in out.tests}
    assert names == {(p, f) for p in ("random", "frequency-adjacent") for f in pooled.FAMILIES}
    assert out.per_test_alpha == pytest.approx(BUDGET.pooled / 6)
    assert all(t.alpha == pytest.approx(BUDGET.pooled / 6) for t in out.tests)
    # each test fails with probability ≤ its level when the claim holds (family: ≤ 0.01)
    assert not any(t.rejects for t in out.tests)
    assert out.pairs.shape == (0, 2)
    for t in out.tests:
        pairs = next(p.pairs for p in sd.pairings if p.name == t.pairing)
        assert t.terms == (pairs if t.family == "outside-V" else 2 * pairs)  # both directions


def test_sums_are_the_claim_weighted_counts_of_the_arrays():
    halves = _krr_halves(EPS, seed=2)
    _, plan, sd, out = _pooled(halves)
    total = halves.sum(axis=1)  # (word, output) over the screen's m draws
    ids = plan.screen_ids
    for pairing in sd.pairings:
        sig = pairing.partner
        x = np.flatnonzero(sig >= 0)
        wx, wsx = ids[x], ids[sig[x]]
        w = math.exp(-EPS)
        self_t = _test(out, "self", pairing.name)
        assert self_t.x_sum == pytest.approx(w * total[wx, wx].sum())  # Σ e^-c · #{M(x) = x}
        assert self_t.y_sum == pytest.approx(total[wsx, wx].sum())  # Σ #{M(σx) = x}
        part_t = _test(out, "partner", pairing.name)
        assert part_t.x_sum == pytest.approx(w * total[wx, wsx].sum())  # Σ e^-c · #{M(x) = σx}
        assert part_t.y_sum == pytest.approx(total[wsx, wsx].sum())  # Σ #{M(σx) = σx}
        assert self_t.draws_per_word == 2 * HALF


def test_a_family_sum_is_exactly_rounded_whatever_blas_threads_run():
    """Σ e^{−c}·A is rounded once (math.fsum): a BLAS dot product split across threads, or
    another processor's kernel, would change its last bits and the run's result with them."""
    threadpoolctl = pytest.importorskip("threadpoolctl")
    rng = np.random.default_rng(3)
    a = rng.integers(0, 30, 200_000).astype(np.float64)
    claims = rng.random(200_000) * 3
    got = []
    for threads in (1, 2):
        with threadpoolctl.threadpool_limits(limits=threads, user_api="blas"):
            t, _ = pooled.pooled_test(a, a[::-1].copy(), claims, alpha=0.05, family="self", pairing="p", m=10)
        got.append(t)
    assert got[0].x_sum == got[1].x_sum == math.fsum((np.exp(-claims) * a).tolist())
    assert got[0].lower == got[1].lower


def test_a_krr_sampling_at_three_times_its_claim_is_rejected_and_named():
    _, plan, sd, out = _pooled(_krr_halves(3 * EPS, seed=3))
    rejecting = [t for t in out.tests if t.rejects]
    assert {t.family for t in rejecting} >= {"self"}
    for t in rejecting:
        # every pair's loss is exactly 3ε − ε = 2 nats above its claim: the bound may not exceed it
        assert 0 < t.excess_lower_bound <= 2 * EPS
        assert 1 <= len(t.top_pairs) <= 5
    assert 0 < len(out.pairs) <= 5 * len(rejecting)
    partners = {
        (int(plan.screen_ids[i]), int(plan.screen_ids[p.partner[i]]))
        for p in sd.pairings
        for i in np.flatnonzero(p.partner >= 0)
    }
    assert {tuple(int(v) for v in pr) for pr in out.pairs} <= partners  # named pairs are matched pairs


def test_outputs_outside_the_vocabulary_are_a_family_of_their_own():
    halves = _krr_halves(EPS, seed=4)
    extras = {}
    for w in range(0, N, 2):  # each even word sends 30 draws of each half to ⊥ instead of to itself
        halves[w, :, w] -= 30
        extras[w] = ({"⊥": 30}, {"⊥": 30})
    _, _, _sd, out = _pooled(halves, extras=extras)
    t = _test(out, "outside-V", "frequency-adjacent")  # pairs (2i, 2i+1): only one side produces ⊥
    assert t.terms == N // 2
    assert t.x_sum == pytest.approx(math.exp(-EPS) * 30 * (N // 2))  # counted on the second half
    assert t.y_sum == 0.0 and t.draws_per_word == HALF
    assert t.rejects
    named = {tuple(int(v) for v in pr) for pr in out.pairs}
    assert {(r["x"], r["x_prime"]) for r in t.top_pairs} <= {(WORDS[a], WORDS[b]) for a, b in named}
    assert all(int(r["x"][1:]) % 2 == 0 for r in t.top_pairs)  # the word that produced ⊥ is favoured


def test_a_protected_set_drops_the_outside_family_and_unprotected_events():
    protected = np.ones(N, dtype=bool)
    protected[:10] = False
    _, plan, sd, out = _pooled(_krr_halves(EPS, seed=5), sanitizer=_Claim(protected=protected))
    assert {t.family for t in out.tests} == {"self", "partner"}
    assert out.per_test_alpha == pytest.approx(BUDGET.pooled / 4)
    for pairing in sd.pairings:
        x = np.flatnonzero(pairing.partner >= 0)
        t = _test(out, "self", pairing.name)
        assert t.terms == int(protected[plan.screen_ids[x]].sum())  # the event {x} must be protected


def test_metric_claims_weigh_each_term_by_its_distance():
    halves = _krr_halves(EPS, seed=6)
    vocab, plan, sd, out = _pooled(halves, sanitizer=_Claim("metric"))
    assert [p.name for p in sd.pairings] == ["nearest-neighbour"]
    assert len(out.tests) == 3 and out.per_test_alpha == pytest.approx(BUDGET.pooled / 3)
    sig = sd.pairings[0].partner
    x = np.flatnonzero(sig >= 0)
    wx, wsx = plan.screen_ids[x], plan.screen_ids[sig[x]]
    d = np.linalg.norm(vocab.vectors[wx] - vocab.vectors[wsx], axis=1)
    total = halves.sum(axis=1)
    t = _test(out, "self", "nearest-neighbour")
    assert t.x_sum == pytest.approx(float(np.sum(np.exp(-EPS * d) * total[wx, wx])), rel=1e-9)


def test_a_failed_word_takes_its_pairs_out_of_every_family():
    halves = _krr_halves(EPS, seed=7)
    _, _, sd0, full = _pooled(halves)
    _, _, sd1, less = _pooled(halves, fail={0})
    assert sd1.failures == {"w0": "boom"}
    for a, b in zip(full.tests, less.tests, strict=True):
        pairing = next(p for p in sd0.pairings if p.name == a.pairing)
        lost = 0 if pairing.partner[0] < 0 else (1 if a.family == "outside-V" else 2)
        assert b.terms == a.terms - lost
