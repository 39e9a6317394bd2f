"""The screen stage of the text audit (issue 37): ``screen.run``, ``propose``, ``outcome``, ``observations``.

The draws come from a fake ``draw`` that returns counts built from arrays (what each word
produced in each half), reduced as the engine reduces them; the scores and records the stage
makes are checked against the arrays with Clopper–Pearson bounds from ``scipy.stats.beta``.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import beta

from dpcore.text.vocab import Vocabulary
from dpcore.textaudit import screen
from dpcore.textaudit.engine import DrawPlan, WordDraws, reduce_draws
from dpcore.textaudit.plan import AuditPlan
from dpcore.textaudit.sampling import OutputCodebook
from dpcore.textaudit.screen import PAIR_ALPHA, SCREEN_ALPHA, SCREEN_TOP, pair_lower_bounds
from tests.textaudit_helpers import word_vocab

N = 8
WORDS = [f"w{i}" for i in range(N)]
M = 400  # draws per screened word


def _vocab() -> Vocabulary:
    return word_vocab(WORDS)


class _Ldp:
    """An ε-LDP claim (ε = 1) and nothing else: the stage only reads the claim."""

    name, epsilon, guarantee = "stub", 1.0, "ldp"


def _totals() -> np.ndarray:
    """Counts of each output (columns) among a word's M draws (rows), all even.

    w0 produces w7 300 times and itself 100 times; w1..w6 produce themselves 100 times and 50
    times each other word but w7; w7 produces itself 100 times and w1..w6 50 times each. So only
    w0 and w7 ever produce w7, and the most suspicious (pair, output) is (w0, w_k ≠ w7) on w7.
    """
    t = np.zeros((N, N), dtype=np.int64)
    t[0, 7], t[0, 0] = 300, 100
    for i in range(1, 7):
        t[i, [j for j in range(7) if j != i]] = 50
        t[i, i] = 100
    t[7, 1:7], t[7, 7] = 50, 100
    assert (t.sum(axis=1) == M).all()
    return t


class _TableDraw:
    """``draw(wids, what)`` from arrays: each word's counts per half, split evenly.

    Like the engine, pairing 0's side-by-side pairs are scored with ``what.pair_scorer`` before
    the screen's draws are reduced to summaries. ``extras``: per word, outputs outside the
    vocabulary (label → count per half); ``fail``: words whose draws raise.
    """

    def __init__(self, totals: np.ndarray, extras=None, fail=()) -> None:
        self.totals, self.extras, self.fail = totals, extras or {}, set(fail)
        self.calls: list[tuple[np.ndarray, DrawPlan]] = []

    def word(self, wid: int, what: DrawPlan) -> WordDraws:
        if wid in self.fail:
            return WordDraws(wid=wid, error=f"sample() raised on {WORDS[wid]}")
        h0 = self.totals[wid] // 2
        counts = [h0, self.totals[wid] - h0]
        ex = self.extras.get(wid, {})
        assert [int(c.sum()) + sum(ex.values()) for c in counts] == list(what.halves)
        return WordDraws(wid=wid, counts=counts, extras=[dict(ex), dict(ex)])

    def __call__(self, wids, what: DrawPlan) -> list[WordDraws]:
        wids = [int(w) for w in wids]
        self.calls.append((np.asarray(wids), what))
        full = [self.word(w, what) for w in wids]
        if what.top is None:
            return full
        lower = [math.nan] * len(wids)
        for k in range(len(wids) - 1):
            if what.partners is not None and what.partners[0][wids[k]] == wids[k + 1] and k % 2 == 0:
                lower[k], lower[k + 1] = what.pair_scorer(full[k], full[k + 1], N, what.halves, None)
        return [reduce_draws(wd, what, lo) for wd, lo in zip(full, lower, strict=True)]


def _log_cp_lower(k: int, n: int, a: float) -> float:
    return -math.inf if k == 0 else math.log(beta.ppf(a, k, n - k + 1))


def _log_cp_upper(k: int, n: int, a: float) -> float:
    return 0.0 if k >= n else math.log(beta.ppf(1 - a, k + 1, n - k))


def _screen(fail=(), extras=None, totals=None):
    vocab = _vocab()
    plan = AuditPlan.create(vocab=vocab, pairs=3, neighbors=2, samples=1_000, screen_budget=N * M, seed=7)
    draw = _TableDraw(_totals() if totals is None else totals, extras=extras, fail=fail)
    cb = OutputCodebook(vocab.words)
    sd = screen.run(plan, draw, sanitizer=_Ldp(), vocab=vocab, codebook=cb)
    return vocab, plan, draw, cb, sd


# --- run -----------------------------------------------------------------------------------------


def test_run_draws_each_word_once_with_pairing_zero_side_by_side():
    _, plan, draw, _, sd = _screen()
    assert len(draw.calls) == 1
    wids, what = draw.calls[0]
    assert what.stage == "screen" and what.halves == (M // 2, M - M // 2) and what.top == SCREEN_TOP
    assert sorted(wids.tolist()) == list(range(N))
    p0 = what.partners[0]
    matched = [w for w in wids if p0[w] >= 0]
    assert wids[: len(matched)].tolist() == matched  # the matched words first, in pairs
    for k in range(0, len(matched), 2):
        assert p0[wids[k]] == wids[k + 1] and p0[wids[k + 1]] == wids[k]
    # back in the order of the screened positions
    assert [wd.wid for wd in sd.draws] == plan.screen_ids.tolist()
    assert sd.halves == (200, 200) and sd.failures == {}


def test_run_summaries_carry_the_counts_of_the_arrays():
    _, plan, _, _, sd = _screen()
    totals = _totals()
    ids = plan.screen_ids
    for pos, wd in enumerate(sd.draws):
        s, w = wd.summary, int(ids[pos])
        assert s.self_count == totals[w, w]
        assert dict(zip(s.codes.tolist(), s.counts.tolist(), strict=True)) == {
            j: int(c) for j, c in enumerate(totals[w]) if c
        }
        assert s.residual == 0  # at most 7 distinct outputs, all listed
        for k, pairing in enumerate(sd.pairings):
            partner = pairing.partner[pos]
            expected = 0 if partner < 0 else int(totals[w, ids[partner]])
            assert s.partner_counts[k] == expected


def test_run_records_failed_words_and_codes_outputs_outside_the_vocabulary():
    totals = _totals()
    totals[5, 5] -= 20  # 10 draws of each half go outside the vocabulary instead
    _, _, _, cb, sd = _screen(fail={3}, extras={5: {"<unk>": 10}}, totals=totals)
    assert sd.failures == {"w3": "sample() raised on w3"}
    assert sd.draws[3].summary is None and sd.draws[3].error is not None
    assert len(cb) == N + 1 and cb.label(N) == "<unk>"
    assert sd.draws[5].summary.outside_counts == (10, 10)


def test_run_splits_the_plan_draws_per_word_in_two_halves():
    vocab = _vocab()
    plan = AuditPlan.create(vocab=vocab, pairs=2, screen_budget=N * 301, seed=7)
    draw = _TableDraw(_totals(), fail=set(range(N)))  # every word fails: only the request matters
    sd = screen.run(plan, draw, sanitizer=_Ldp(), vocab=vocab, codebook=OutputCodebook(WORDS))
    assert draw.calls[0][1].halves == (150, 151) == sd.halves
    assert sorted(sd.failures) == WORDS


# --- scoring on all outputs ------------------------------------------------------------------


def test_pair_lower_bounds_match_clopper_pearson_on_the_evaluation_half():
    n = 100
    zeros = np.zeros(N, dtype=np.int64)
    a = WordDraws(0, counts=[zeros, zeros], extras=[{"⊥": n}, {"⊥": n}])  # always outside V
    b_counts = zeros.copy()
    b_counts[0] = 60
    b = WordDraws(1, counts=[b_counts, b_counts], extras=[{"⊥": 40}, {"⊥": 40}])
    la, lb = pair_lower_bounds(a, b, N, (n, n), None)
    h = PAIR_ALPHA / 2
    # a favoured: the event {⊥} (100 against 40); b favoured: {w0} (60 against 0)
    assert la == pytest.approx(_log_cp_lower(n, n, h) - _log_cp_upper(40, n, h), rel=1e-9)
    assert lb == pytest.approx(_log_cp_lower(60, n, h) - _log_cp_upper(0, n, h), rel=1e-9)
    assert lb > la


def test_pair_lower_bounds_keep_to_protected_outputs_and_skip_failed_words():
    n = 50
    ca, cb = np.zeros(N, dtype=np.int64), np.zeros(N, dtype=np.int64)
    ca[1], cb[0] = n, n
    a, b = WordDraws(0, counts=[ca, ca], extras=[{}, {}]), WordDraws(1, counts=[cb, cb], extras=[{}, {}])
    protected = np.ones(N, dtype=bool)
    protected[1] = False  # a's only output is not protected: no event favours a
    la, lb = pair_lower_bounds(a, b, N, (n, n), protected)
    assert la == -math.inf
    h = PAIR_ALPHA / 2
    assert lb == pytest.approx(_log_cp_lower(n, n, h) - _log_cp_upper(0, n, h), rel=1e-9)
    failed = WordDraws(1, error="boom")
    assert all(math.isnan(v) for v in pair_lower_bounds(a, failed, N, (n, n), None))
    assert all(math.isnan(v) for v in pair_lower_bounds(a, b, N, (2 * n,), None))


# --- propose -------------------------------------------------------------------------------------


def _brute_force_best(totals: np.ndarray, claim: float) -> float:
    """max over ordered pairs and outputs of ln CP⁻(c_x(y)) − ln CP⁺(c_x′(y)) − claim (at 5 %)."""
    best = -math.inf
    for x in range(N):
        for xp in range(N):
            if x == xp:
                continue
            for y in np.flatnonzero(totals[x]):
                s = _log_cp_lower(int(totals[x, y]), M, SCREEN_ALPHA)
                s -= _log_cp_upper(int(totals[xp, y]), M, SCREEN_ALPHA)
                best = max(best, s - claim)
    return best


def test_propose_ranks_the_most_suspicious_pair_first_with_its_event():
    vocab, plan, _, cb, sd = _screen()
    claims = screen.claims_function(_Ldp(), vocab)
    prop = screen.propose(plan, sd, sanitizer=_Ldp(), vocab=vocab, codebook=cb, claims=claims)
    expected = _brute_force_best(_totals(), 1.0)
    assert prop.scores[0] == pytest.approx(expected, rel=1e-9)
    assert len(prop.pairs) == 3 and np.all(np.diff(prop.scores) <= 0)
    # the top pairs favour w0 on its output w7, against a word that never produces w7
    for (x, xp), (fav, code) in zip(prop.pairs, prop.events, strict=True):
        assert (fav, code) == (0, 7)
        assert 0 in (x, xp) and ({x, xp} - {0}) <= set(range(1, 7))
    assert prop.word_scores[0] == pytest.approx(expected, rel=1e-9)
    assert np.all(prop.word_scores[1:] < expected)
    assert prop.residual_median == 0.0


def test_propose_gives_no_pair_when_fewer_than_two_words_drew():
    vocab, plan, _, cb, sd = _screen(fail=set(range(1, N)))
    prop = screen.propose(
        plan, sd, sanitizer=_Ldp(), vocab=vocab, codebook=cb, claims=screen.claims_function(_Ldp(), vocab)
    )
    assert prop.pairs.shape == (0, 2) and prop.candidates == 0
    assert np.all(np.isneginf(prop.word_scores))


# --- outcome, observations, top words ---------------------------------------------------------


def test_outcome_adds_new_pooled_pairs_and_writes_the_record():
    vocab, plan, _, cb, sd = _screen(fail={3})
    claims = screen.claims_function(_Ldp(), vocab)
    prop = screen.propose(plan, sd, sanitizer=_Ldp(), vocab=vocab, codebook=cb, claims=claims)
    x, xp = (int(v) for v in prop.pairs[0])
    pooled_pairs = np.array([[xp, x], [2, 5], [2, 5], [4, 6]], dtype=np.int64)
    out = screen.outcome(plan, sd, prop, pooled_pairs, vocab.words)
    proposed = {tuple(sorted(p)) for p in prop.pairs.tolist()}
    new = {tuple(sorted(p)) for p in pooled_pairs.tolist()} - proposed
    assert new == {(2, 5), (4, 6)}
    assert out.pairs[:3].tolist() == prop.pairs.tolist()
    assert {tuple(sorted(p)) for p in out.pairs[3:].tolist()} == new
    assert len(out.pairs) == 3 + 2  # (w2, w5) once, (w4, w6); the proposed pair not again
    assert out.events == {(int(a), int(b)): (0, 7) for a, b in prop.pairs}
    info = out.info
    assert info["words_screened"] == N and info["draws_per_word"] == M and info["draws"] == N * M
    assert info["budget"] == N * M and info["budget_source"] == "given"
    assert info["proposed"] == 3 and info["confirmed_from_pooled"] == 2 and info["failed_words"] == 1
    assert info["kth_score"] == pytest.approx(float(prop.scores[-1]))
    assert info["top_words"][0]["word"] == "w0"
    assert "w3" not in [t["word"] for t in info["top_words"]]  # a failed word has no score


def test_outcome_confirms_a_pooled_pair_once_whatever_its_orientation():
    vocab, plan, _, cb, sd = _screen()
    prop = screen.propose(
        plan, sd, sanitizer=_Ldp(), vocab=vocab, codebook=cb, claims=screen.claims_function(_Ldp(), vocab)
    )
    out = screen.outcome(plan, sd, prop, np.array([[2, 5], [5, 2]], dtype=np.int64), vocab.words)
    assert out.info["confirmed_from_pooled"] == 1


def test_outcome_confirms_at_most_twenty_pooled_pairs():
    vocab, plan, _, cb, sd = _screen()
    prop = screen.propose(
        plan, sd, sanitizer=_Ldp(), vocab=vocab, codebook=cb, claims=screen.claims_function(_Ldp(), vocab)
    )
    many = np.array([[i, j] for i in range(1, N) for j in range(i + 1, N)], dtype=np.int64)  # 21 pairs
    out = screen.outcome(plan, sd, prop, many, vocab.words)
    assert out.info["confirmed_from_pooled"] == 20


def test_observations_are_the_screen_counts_of_the_words():
    _, plan, _, cb, sd = _screen(fail={3})
    totals = _totals()
    obs = screen.observations(plan, sd, np.array([[0, 1]]), cb)
    assert set(obs) == set(range(N)) - {3}  # pair words, and a spread of all 8 others but the failed
    for wid, (codes, counts, residual) in obs.items():
        assert codes[-1] == wid and counts[-1] == totals[wid, wid]  # the word itself, appended
        listed = dict(zip(codes[:-1].tolist(), counts[:-1].tolist(), strict=True))
        assert listed == {j: int(c) for j, c in enumerate(totals[wid]) if c}
        assert residual == 0


def test_top_words_orders_by_score_and_drops_unscored_words():
    words = np.asarray(WORDS, dtype=object)
    ids = np.array([4, 2, 6, 0])
    scores = np.array([0.5, -np.inf, 2.0, 0.5])
    top = screen.top_words(words, ids, scores, 3)
    assert [t["word"] for t in top] == ["w6", "w4", "w0"]  # ties keep the screened order
    assert [t["rank"] for t in top] == [6, 4, 0]
    assert screen.top_words(words, ids, scores, 10)[-1]["word"] == "w0"  # -inf is left out


# --- top producers against more than the lowest-residual words (issue 38) -------------------


class _OneFlawedPair:
    """ε-LDP (ε = 1) over 16 outputs ("w0".."w15"), uniform for every word but two: x produces w5
    e times as often as the others, z 1/e times as often. Each is within ε of every other word;
    only the pair (x, z) is not (loss 2 on w5: its claim + 1 nat)."""

    name, epsilon, guarantee, exact = "one-flawed-pair", 1.0, "ldp", False

    def __init__(self, words: list[str], x: int, z: int) -> None:
        self._id = {w: i for i, w in enumerate(words)}
        self._out = np.array(words[:16])
        u = np.full(16, 1 / 16)
        self._rows = np.stack([u, u, u])
        for row, r5 in ((1, math.e / 16), (2, 1 / (16 * math.e))):
            self._rows[row] = (1 - r5) / 15
            self._rows[row, 5] = r5
        self._kind = np.zeros(len(words), dtype=np.int64)
        self._kind[[x, z]] = [1, 2]
        self._cdf = np.cumsum(self._rows, axis=1)

    def sample(self, words, rng):
        kind = self._kind[np.fromiter((self._id[w] for w in words), dtype=np.int64, count=len(words))]
        u = rng.random(kind.size)
        out = (u[:, None] > self._cdf[kind]).sum(axis=1)
        return self._out[np.minimum(out, 15)]


def test_a_flaw_against_one_other_word_is_caught_through_the_bottom_producers(monkeypatch):
    """|V| = 2,000: x is the top producer of w5 and z its rarest producer. Every word lists all its
    outputs (residual 0), so the three lowest-residual words are three arbitrary ones: paired only
    with them (the rule before issue 38) x never meets z; its bottom producers include z."""
    from dpcore.textaudit import audit_text

    words = [f"w{i}" for i in range(2_000)]
    vocab = word_vocab(words, dim=3)
    x, z = 1234, 1777
    kw = {"vocab": vocab, "screen_budget": 2_000 * 2_000, "samples": 4_000, "pairs": 5, "seed": 3}
    flagged = lambda res: [(p.x, p.x_prime) for p in res.pairs if p.violates]  # noqa: E731

    res = audit_text(_OneFlawedPair(words, x, z), **kw)
    assert sorted(flagged(res)[0]) == sorted([words[x], words[z]]) and len(flagged(res)) == 1

    monkeypatch.setattr(screen, "LOW_RESIDUAL_PARTNERS", 3)
    monkeypatch.setattr(screen, "BOTTOM_PRODUCERS", 0)
    before = audit_text(_OneFlawedPair(words, x, z), **kw)
    assert before.verdict != "violates"
