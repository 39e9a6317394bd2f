"""The confirmation stage and the pilot of the text audit (issue 37), on counts built as arrays.

A fake ``draw`` returns each word's counts in the selection and evaluation halves as written
here, so the event each direction selects, its counts and its Clopper–Pearson bound are known in
closed form (``scipy.stats.beta``), and so is the level of each test: the confirmation share of α
over the number of tests (per pair: 2 selected, +1 with a screen event, +2 with declared rows that
agreed; declared events are added to the others, never in their place).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import beta

from dpcore.flawed.text import OverclaimedRandomizedResponse
from dpcore.pairtest.budget import AlphaBudget
from dpcore.pairtest.estimator import best_prefix_event
from dpcore.text.vocab import Vocabulary
from dpcore.textaudit import confirm
from dpcore.textaudit.engine import DrawPlan, WordDraws
from dpcore.textaudit.plan import AuditPlan
from dpcore.textaudit.reference import KaryRandomizedResponse
from dpcore.textaudit.result import PairResult
from dpcore.textaudit.sampling import OutputCodebook
from dpcore.textaudit.screen import claims_function
from tests.textaudit_helpers import word_vocab

N = 6
WORDS = [f"w{i}" for i in range(N)]
EPS = 1.0
T = 2_000  # confirmation draws per word: 1,000 select, 1,000 evaluate
BUDGET = AlphaBudget.split(0.95, declared=False, screened=False)  # confirmation share: all 0.05


def _vocab() -> Vocabulary:
    return word_vocab(WORDS)


class _Ldp:
    """A black box claiming ε-LDP (declares no rows): the stage reads only the claim."""

    name, epsilon, guarantee = "stub", EPS, "ldp"


def _row(**counts: int) -> np.ndarray:
    """Counts over the 6 outputs, e.g. ``_row(o4=600, o5=400)``."""
    r = np.zeros(N, dtype=np.int64)
    for k, v in counts.items():
        r[int(k[1:])] = v
    return r


class _TableDraw:
    """``draw(wids, what)`` returning ``table[wid]`` (one count array per half) as drawn."""

    def __init__(self, table: dict[int, tuple[np.ndarray, ...]], fail: dict[int, str] | None = None) -> None:
        self.table, self.fail = table, fail or {}
        self.calls: list[tuple[list[int], DrawPlan]] = []

    def __call__(self, wids, what: DrawPlan) -> list[WordDraws]:
        self.calls.append(([int(w) for w in wids], what))
        out = []
        for w in (int(v) for v in wids):
            if w in self.fail:
                out.append(WordDraws(w, error=self.fail[w]))
                continue
            halves = self.table[w]
            assert [int(h.sum()) for h in halves] == list(what.halves)
            out.append(WordDraws(w, counts=[h.copy() for h in halves], extras=[{} for _ in halves]))
        return out


def _lcp_lo(k: int, n: int, a: float) -> float:
    return -math.inf if k == 0 else math.log(beta.ppf(a, k, n - k + 1))


def _lcp_hi(k: int, n: int, a: float) -> float:
    return 0.0 if k >= n else math.log(beta.ppf(1 - a, k + 1, n - k))


def _bound(a: int, b: int, n: int, alpha: float) -> float:
    """The test's lower bound: ln CP⁻(a; n, α/2) − ln CP⁺(b; n, α/2)."""
    return _lcp_lo(a, n, alpha / 2) - _lcp_hi(b, n, alpha / 2)


def _plan(vocab: Vocabulary, **kw) -> AuditPlan:
    return AuditPlan.create(vocab=vocab, strategy="random", pairs=3, samples=T, seed=5, **kw)


def _confirm(table, pairs, *, sanitizer=None, fail=None, screen_events=None, use_rows=False, budget=BUDGET):
    vocab = _vocab()
    sanitizer = sanitizer or _Ldp()
    draw = _TableDraw(table, fail)
    out = confirm.run(
        _plan(vocab),
        draw,
        np.asarray(pairs, dtype=np.int64),
        sanitizer=sanitizer,
        vocab=vocab,
        codebook=OutputCodebook(vocab.words),
        claims=claims_function(sanitizer, vocab),
        budget=budget,
        use_rows=use_rows,
        screen_events=screen_events or {},
    )
    return vocab, draw, out


TABLE = {
    # w0 selects on w4 and shows it 600 times in 1,000 evaluation draws; w1 shows it 30 times
    0: (_row(o4=1_000), _row(o4=600, o5=400)),
    1: (_row(o5=1_000), _row(o4=30, o5=970)),
    # w2 and w3 alike
    2: (_row(o2=500, o3=500), _row(o2=500, o3=500)),
    3: (_row(o2=500, o3=500), _row(o2=500, o3=500)),
}


def test_a_pair_bound_is_clopper_pearson_on_its_selected_event():
    vocab, draw, out = _confirm(TABLE, [[0, 1], [2, 3], [0, 5]], fail={5: "sample() raised on 'w5'"})
    ((wids, what),) = draw.calls
    assert wids == [0, 1, 2, 3, 5] and what == DrawPlan("confirm", (1_000, 1_000))
    alpha = 0.05 / 6  # 3 pairs × 2 directions share the confirmation's α
    assert out.n_tests == 6 and out.alpha == pytest.approx(alpha)
    r = out.results[0]
    # x over x′: the event {w4} chosen on the selection half; 600 against 30 on the evaluation half
    assert (r.direction, r.event_size, r.count_x, r.count_x_prime) == ("x>x'", 1, 600, 30)
    assert r.lower_bound == pytest.approx(_bound(600, 30, 1_000, alpha), rel=1e-9)
    assert r.empirical_epsilon == pytest.approx(math.log(600 / 30))
    assert r.claimed_bound == EPS and r.violates and r.event_source == "selected"
    assert r.distance == pytest.approx(float(np.linalg.norm(vocab.vectors[0] - vocab.vectors[1])))
    # the other direction ({w5}: 970 against 400) is weaker and not reported
    assert _bound(970, 400, 1_000, alpha) < r.lower_bound
    same = out.results[1]
    assert same.lower_bound == 0.0 and same.empirical_epsilon == 0.0 and not same.violates


def test_a_failing_word_gives_an_error_result_and_is_reported():
    _, _, out = _confirm(TABLE, [[0, 1], [2, 3], [0, 5]], fail={5: "sample() raised on 'w5'"})
    bad = out.results[2]
    assert (bad.x, bad.x_prime) == ("w0", "w5")
    assert bad.error == "sample() raised on 'w5'"
    assert math.isnan(bad.lower_bound) and not bad.violates and math.isnan(bad.ratio)
    assert out.failures == {"w5": "sample() raised on 'w5'"}
    assert [r.error is None for r in out.results] == [True, True, False]
    assert out.draws == 5 * T  # every word asked for, the failed one included
    # its pair still counts among the tests (the level is set before drawing)
    assert out.n_tests == 6


def test_a_screen_event_is_a_third_test_on_all_draws():
    table = {
        0: (_row(o2=1_000), _row(o2=10, o3=690, o1=300)),
        1: (_row(o1=1_000), _row(o1=1_000)),
    }
    _, _, out = _confirm(table, [[0, 1]], screen_events={(0, 1): (0, 3)})
    alpha = 0.05 / 3
    assert out.n_tests == 3 and out.alpha == pytest.approx(alpha)
    r = out.results[0]
    # {w3} was fixed by the screen: bounded on all 2,000 draws (690 against 0)
    assert (r.event_source, r.direction, r.count_x, r.count_x_prime) == ("screen", "x>x'", 690, 0)
    assert r.lower_bound == pytest.approx(_bound(690, 0, T, alpha), rel=1e-9)
    assert r.detectable_violation["samples"] == T
    # the two selected events are weaker: {w2} (10 vs 0) and {w1} the other way (1,000 vs 300)
    assert max(_bound(10, 0, 1_000, alpha), _bound(1_000, 300, 1_000, alpha)) < r.lower_bound
    _, _, without = _confirm(table, [[0, 1]])
    assert without.n_tests == 2 and without.results[0].event_source == "selected"
    assert without.results[0].lower_bound < r.lower_bound


def test_max_detectable_loss_is_all_against_none():
    _, _, out = _confirm(TABLE, [[0, 1], [2, 3]])
    assert out.n_bound == 1_000  # a selected event is bounded on the evaluation half
    h = out.alpha / 2
    expected = math.log(h ** (1 / 1_000)) - math.log(1 - h ** (1 / 1_000))
    assert out.max_detectable == pytest.approx(expected, rel=1e-9)
    assert confirm.max_detectable_loss(1_000, out.alpha) == pytest.approx(expected, rel=1e-9)


def _krr_table(sampler, seed: int) -> dict[int, tuple[np.ndarray, np.ndarray]]:
    keep = sampler.keep_probability
    p = np.full((N, N), (1 - keep) / (N - 1))
    np.fill_diagonal(p, keep)
    rng = np.random.default_rng(seed)
    return {w: (rng.multinomial(1_000, p[w]), rng.multinomial(1_000, p[w])) for w in range(N)}


def _every_test(table, i: int, j: int, alpha: float, rows=None, screen=None) -> list[tuple[float, str]]:
    """(lower bound, source) of every test stage 2 makes for the pair (i, j), recomputed here."""
    (si, ei), (sj, ej) = table[i], table[j]
    out = []
    for a, b, sa, ea, sb, eb in ((i, j, si, ei, sj, ej), (j, i, sj, ej, si, ei)):
        ev = best_prefix_event(sa, sb, 1_000, alpha)
        out.append((_bound(int(ea[ev].sum()), int(eb[ev].sum()), 1_000, alpha), "selected"))
        if screen is not None and screen[0] == a:
            y = screen[1]
            out.append((_bound(int(sa[y] + ea[y]), int(sb[y] + eb[y]), T, alpha), "screen"))
        if rows is not None:
            ev = confirm.planned_event(rows[a], rows[b], T, alpha, None)
            out.append((_bound(int((sa + ea)[ev].sum()), int((sb + eb)[ev].sum()), T, alpha), "declared"))
    return out


@pytest.mark.parametrize(("factor", "violates"), [(1.0, False), (3.0, True)])
def test_declared_rows_add_planned_events_and_give_the_exact_loss(factor, violates):
    san = OverclaimedRandomizedResponse(epsilon=EPS, words=WORDS, factor=factor)
    table = _krr_table(san, seed=int(factor))
    _, _, out = _confirm(
        table,
        [[0, 1], [2, 3]],
        sanitizer=san,
        use_rows=True,
        screen_events={(0, 1): (0, 0)},  # kept: the rows add events, they replace none
        budget=AlphaBudget.split(0.95, declared=True, screened=False),
    )
    # per pair: 2 selected + 2 declared, and the screen's event of (w0, w1): 9 tests
    assert out.n_tests == 9 and out.alpha == pytest.approx(0.045 / 9)
    assert out.n_tests == AlphaBudget.confirmation_tests(2, 1, declared_events=True)
    assert out.n_bound == T
    rows = {w: np.asarray(san.log_prob_row(WORDS[w])[1]) for w in range(N)}
    for r, (i, j), screen in zip(out.results, [(0, 1), (2, 3)], [(0, 0), None], strict=True):
        # the reported test is the strongest of all the pair's tests, and its source says which
        tests = _every_test(table, i, j, out.alpha, rows, screen)
        best, source = max(tests)
        assert r.lower_bound == pytest.approx(max(0.0, best), rel=1e-9)
        assert r.event_source == source
        # k-RR's worst loss is ln(keep) − ln((1 − keep)/(k − 1)) = the sampling ε, exactly
        assert r.exact_epsilon == pytest.approx(factor * EPS, rel=1e-9)
        assert r.exact_violates is violates
        # a lower bound (at level α per test, fixed seeds): never above the truth, and above the
        # claim at 3ε (keep 0.80 against 0.04 on 2,000 draws)
        assert r.lower_bound <= factor * EPS
        assert r.violates is violates


def test_declared_rows_never_hide_the_selected_event_or_the_screens_output():
    """Issue 38: a sampler that departs from its declaration (here: w0 never outputs itself, as
    k-RR declares, but mostly w4) is judged on its own draws. The declared rows plan {w0} and
    {w1}, which its draws never hit; the event selected on the first half, and the screen's
    output, still test it."""
    krr = KaryRandomizedResponse(epsilon=EPS, words=WORDS)
    declared = AlphaBudget.split(0.95, declared=True, screened=False)  # confirmation share 0.045
    _, _, out = _confirm(TABLE, [[0, 1]], sanitizer=krr, use_rows=True, budget=declared)
    alpha = 0.045 / 4  # 2 selected + 2 declared tests
    assert out.n_tests == 4 and out.alpha == pytest.approx(alpha)
    r = out.results[0]
    assert (r.event_source, r.direction, r.event_size, r.count_x, r.count_x_prime) == (
        "selected",
        "x>x'",
        1,
        600,
        30,
    )
    assert r.lower_bound == pytest.approx(_bound(600, 30, 1_000, alpha), rel=1e-9)
    assert r.violates and r.detectable_violation["samples"] == 1_000
    # the declared events alone show nothing: {w0} from w0 and {w1} from w1, 0 hits in 2,000 draws
    rows = {w: np.asarray(krr.log_prob_row(WORDS[w])[1]) for w in range(N)}
    assert confirm.planned_event(rows[0], rows[1], T, alpha, None).tolist() == [0]
    assert max(b for b, s in _every_test(TABLE, 0, 1, alpha, rows) if s == "declared") == -math.inf
    # the rows' exact loss says ε (what the declaration claims); the draws say more
    assert r.exact_epsilon == pytest.approx(EPS) and r.exact_violates is False
    # the screen's output {w4} is kept too, a fifth test, on all 2,000 draws: 1,600 against 30
    _, _, scr = _confirm(
        TABLE, [[0, 1]], sanitizer=krr, use_rows=True, budget=declared, screen_events={(0, 1): (0, 4)}
    )
    assert scr.n_tests == 5 and scr.n_bound == T
    s = scr.results[0]
    assert (s.event_source, s.count_x, s.count_x_prime) == ("screen", 1_600, 30)
    assert s.lower_bound == pytest.approx(_bound(1_600, 30, T, 0.045 / 5), rel=1e-9)


def test_declared_rows_and_no_pair_give_no_result():
    san = KaryRandomizedResponse(epsilon=EPS, words=WORDS)
    _, _, out = _confirm({}, np.zeros((0, 2)), sanitizer=san, use_rows=True)
    assert out.results == [] and out.draws == 0


def test_no_pair_draws_nothing_and_tests_nothing():
    _, _draw, out = _confirm({}, np.zeros((0, 2)))
    assert out.results == [] and out.draws == 0 and out.failures == {}
    assert out.alpha == pytest.approx(0.05)  # one (empty) test: the share is not divided by 0


# --- the pieces the stage is made of ---------------------------------------------------------


def test_counts_code_outputs_outside_the_vocabulary_and_name_failures():
    cb = OutputCodebook(WORDS)
    draws = [
        WordDraws(0, counts=[_row(o1=3), _row(o2=4)], extras=[{"⊥": 2}, {}]),
        WordDraws(1, error="boom"),
    ]
    c = confirm.Counts(draws, np.asarray(WORDS, dtype=object), cb, 5, 4)
    sel, ev = c.get(0)
    assert len(cb) == N + 1 and sel[N] == 2 and sel[1] == 3 and ev[2] == 4 and ev.size == N + 1
    with pytest.raises(confirm.SampleFailed, match="boom"):
        c.get(1)
    with pytest.raises(confirm.SampleFailed, match="not drawn"):
        c.get(2)


def test_planned_event_takes_the_best_prefix_of_the_declared_ratio():
    la = np.array([math.log(0.5), math.log(0.3), math.log(0.2), -math.inf])
    lb = np.log([0.1, 0.3, 0.2, 0.4])
    # ratios: ln 5, 0, 0, −∞ (w3 cannot come from x): {w0} alone is best at n = 10,000
    assert confirm.planned_event(la, lb, 10_000, 0.01, None).tolist() == [0]
    not_w0 = np.array([False, True, True, True])
    assert 0 not in confirm.planned_event(la, lb, 10_000, 0.01, not_w0).tolist()
    assert confirm.planned_event(np.full(4, -np.inf), lb, 100, 0.01, None).size == 0


def test_exact_losses_are_the_largest_log_ratio_over_protected_outputs():
    rows = {0: np.log([0.5, 0.3, 0.2]), 1: np.log([0.1, 0.3, 0.6]), 2: np.log([0.5, 0.5, 1e-300])}
    rows[2][2] = -math.inf
    pairs = np.array([[0, 1], [0, 2], [1, 0]])
    out = confirm.exact_losses(rows, pairs, None)
    assert out[0] == pytest.approx(math.log(5)) and out[2] == pytest.approx(math.log(5))
    assert out[1] == math.inf  # w2 never produces an output w0 produces
    protected = np.array([False, True, True])
    assert confirm.exact_losses(rows, pairs[:1], protected)[0] == pytest.approx(math.log(3))
    assert np.isnan(confirm.exact_losses(None, pairs, None)).all()


def test_detectable_on_own_events_is_stated_at_the_median_event_probability():
    def pair(count_x, claim=1.0, error=None):
        return PairResult("a", "b", 1.0, claim, 0.0, 0.0, False, "x>x'", 1, count_x, 0, error=error)

    res = [pair(100), pair(300), pair(900), pair(0), pair(50, error="boom")]
    st = confirm.detectable_on_own_events(res, 1_000, 0.01)
    assert st["event_probability"] == pytest.approx(0.3)  # median of 0.1, 0.3, 0.9 (0 and errors out)
    assert st["samples"] == 1_000 and st["excess"] >= 0
    none = confirm.detectable_on_own_events([pair(50, error="boom")], 1_000, 0.01)
    assert none["event_probability"] is None and none["text"] == "no tested event"


def test_detectable_on_own_events_reads_each_events_own_draws():
    """A selected event counts on T/2 draws, a declared or screen one on T: each probability is
    its count over its own draws, and the statement is at the fewest draws (the weakest test)."""

    def pair(count_x, n):
        det = {"samples": n}
        return PairResult(
            "a", "b", 1.0, 1.0, 0.0, 0.0, False, "x>x'", 1, count_x, 0, detectable_violation=det
        )

    res = [pair(100, 1_000), pair(600, 2_000), pair(1_800, 2_000)]  # 0.1, 0.3, 0.9
    st = confirm.detectable_on_own_events(res, 2_000, 0.01)
    assert st["event_probability"] == pytest.approx(0.3) and st["samples"] == 1_000
    same = confirm.detectable_on_own_events(
        [pair(100, 1_000), pair(300, 1_000), pair(900, 1_000)], 1_000, 0.01
    )
    assert same["excess"] == pytest.approx(st["excess"])


# --- the pilot --------------------------------------------------------------------------------------


def test_the_pilot_keeps_the_k_best_candidates_in_candidate_order():
    vocab = _vocab()
    plan = AuditPlan.create(
        vocab=vocab, words=WORDS, neighbors=0, pairs=2, samples=T, pilot_samples=400, seed=5
    )
    assert plan.use_pilot and len(plan.candidates) == 8  # the first 4·K of the 15 pairs
    spread = np.array([34, 34, 33, 33, 33, 33])
    table = {w: (spread.copy(), spread.copy()) for w in range(2, N)}
    table[0] = (_row(o0=200), _row(o0=200))  # w0 always itself, w1 always itself
    table[1] = (_row(o1=200), _row(o1=200))
    draw = _TableDraw(table, fail={5: "boom"})
    san = _Ldp()
    out = confirm.run_pilot(
        plan,
        draw,
        sanitizer=san,
        vocab=vocab,
        codebook=OutputCodebook(vocab.words),
        claims=claims_function(san, vocab),
        budget=BUDGET,
    )
    ((wids, what),) = draw.calls
    assert wids == list(range(N)) and what == DrawPlan("pilot", (200, 200))
    assert out.draws == N * 400
    assert out.failures == {"w5": "boom"}
    kept = [tuple(sorted(p)) for p in out.pairs.tolist()]
    assert len(kept) == 2 and (0, 1) in kept  # the only pair with disjoint outputs
    assert all(5 not in p for p in kept)
    cand = [tuple(p) for p in plan.candidates.tolist()]
    at = [cand.index(tuple(p)) for p in out.pairs.tolist()]
    assert at == sorted(at)
