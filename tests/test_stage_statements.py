"""The statements stage of the text audit (issue 37): ``power.run``, what the pipeline would have caught.

Its inputs are built by hand: pair results, pooled tests made from count arrays, a screen record.
The figures are checked against independent computations: the exact flag probability of the
pair test summed over binomial counts with ``scipy.stats``, a simulation of the pooled rule, and
nearest-neighbour distances by brute force.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import beta, binom

from dpcore.text.vocab import Vocabulary
from dpcore.textaudit import power
from dpcore.textaudit.pooled import pooled_test, rejects_many
from dpcore.textaudit.result import PairResult
from dpcore.textaudit.screen import claims_function
from tests.textaudit_helpers import word_vocab

N = 30
WORDS = [f"w{i}" for i in range(N)]
EPS = 1.0


def _vocab() -> Vocabulary:
    return word_vocab(WORDS, dim=3)


class _Claim:
    name, epsilon = "stub", EPS

    def __init__(self, guarantee: str = "ldp") -> None:
        self.guarantee = guarantee


def _pair(claim: float, count_x: int = 500, error: str | None = None) -> PairResult:
    return PairResult("a", "b", 1.0, claim, 0.0, 0.0, False, "x>x'", 1, count_x, 10, error=error)


def _run(**kw):
    vocab = _vocab()
    san = kw.pop("sanitizer", _Claim())
    args = {
        "strategy": "random",
        "sanitizer": san,
        "vocab": vocab,
        "screen_ids": None,
        "screen_info": None,
        "nn": None,
        "pooled": [],
        "results": [],
        "samples": 200,
        "alpha_pair": 0.01,
        "claims": claims_function(san, vocab),
    }
    return power.run(**(args | kw))


def _exact_power(n: int, alpha: float, claim: float, p: float, excess: float) -> float:
    """Pr[ln CP⁻(a; n, α/2) − ln CP⁺(b; n, α/2) > claim], a ~ Bin(n, p), b ~ Bin(n, p·e^-(claim+Δ))."""
    k = np.arange(n + 1)
    with np.errstate(divide="ignore"):
        lo = np.where(k > 0, np.log(beta.ppf(alpha / 2, np.maximum(k, 1), n - k + 1)), -np.inf)
        hi = np.where(k < n, np.log(beta.ppf(1 - alpha / 2, k + 1, np.maximum(n - k, 1))), 0.0)
    q = p * math.exp(-(claim + excess)) if math.isfinite(excess) else 0.0
    flag = lo[:, None] - hi[None, :] > claim * (1 + 1e-9) + 1e-9
    return float(binom.pmf(k, n, p) @ flag @ binom.pmf(k, n, q))


def test_nothing_tested_states_nothing():
    out = _run(results=[_pair(1.0, error="boom")])
    assert out == {
        "power": 0.9,
        "statements": [],
        "not_covered": ["everything: no pair and no pooled test could be tested"],
        "text": "nothing was tested, so nothing can be stated",
    }


def test_tested_pairs_are_stated_at_the_smallest_excess_flagged_nine_times_in_ten():
    results = [_pair(1.0), _pair(1.0), _pair(0.5), _pair(4.0), _pair(9.0, error="boom")]
    out = _run(results=results, samples=400, alpha_pair=0.01)
    st = out["statements"]
    assert [s["claim"] for s in st] == [0.5, 1.0, 4.0]  # distinct claims of tested pairs, at most 3
    assert all(s["class"] == "tested-pairs" and s["event_probability"] == 0.5 for s in st)
    n = 200  # a selected event is bounded on T/2
    for s in st:
        if math.isfinite(s["excess"]):
            assert _exact_power(n, 0.01, s["claim"], 0.5, s["excess"]) >= 0.9
            assert _exact_power(n, 0.01, s["claim"], 0.5, s["excess"] - 0.01) < 0.9
        else:  # not even a partner that never produces the event is flagged that often
            assert _exact_power(n, 0.01, s["claim"], 0.5, math.inf) < 0.9
    # at 200 draws and α = 0.01 no bound exceeds about 2.8 nats: a claim of 4 cannot be shown wrong
    assert math.isfinite(st[0]["excess"]) and math.isfinite(st[1]["excess"])
    assert st[2]["excess"] == math.inf
    assert "any pair not in the tested list" in out["not_covered"]
    assert out["text"].startswith("with probability ≥ 0.9 (whole pipeline): only the named pairs")


def _pooled_tests(m: int, terms: int, seed: int):
    """A 'self' and a 'partner' family over ``terms`` pairs of a faithful k-RR, from count arrays."""
    keep = math.exp(EPS) / (math.exp(EPS) + N - 1)
    q = (1 - keep) / (N - 1)
    rng = np.random.default_rng(seed)
    a, b = rng.binomial(m, keep, size=terms), rng.binomial(m, q, size=terms)
    claims = np.full(terms, EPS)
    fam = {}
    for name in ("self", "partner"):
        fam[name], _ = pooled_test(a, b, claims, alpha=0.01 / 6, family=name, pairing="random", m=m)
    return fam, a, b


def _screen_info(kth: float) -> dict:
    return {"draws_per_word": 400, "kth_score": kth, "residual_median": 2.0}


def test_a_screen_states_the_uniform_flaw_caught_by_each_self_family():
    fam, _, b = _pooled_tests(400, N, seed=1)
    out = _run(
        screen_ids=np.arange(N),
        screen_info=_screen_info(-1.0),
        pooled=[fam["self"], fam["partner"]],
        results=[_pair(EPS)],
        samples=4_000,
        alpha_pair=0.01,
    )
    uniform = [s for s in out["statements"] if s["class"] == "uniform"]
    assert len(uniform) == 1 and uniform[0]["family"] == "self"  # the partner family states nothing
    u = uniform[0]
    assert u["terms"] == N and u["partner_rate"] == pytest.approx(b.sum() / (400 * N))
    assert 0 < u["excess"] < math.inf
    # a simulation of the pooled rule at the stated Δ: every term's event e^(ε+Δ) times its partner's
    reps, q = 4_000, u["partner_rate"]
    rng = np.random.default_rng(99)
    p = min(1.0, q * math.exp(EPS + u["excess"]))
    x = math.exp(-EPS) * rng.binomial(400, p, size=(reps, N)).sum(axis=1)
    y = rng.binomial(400 * N, q, size=reps)
    rate = rejects_many(x, y, fam["self"].alpha).mean()
    assert rate >= 0.9 - 3 * math.sqrt(0.09 / reps)  # ≥ 0.9, within simulation error
    assert "a flaw shared by the vocabulary" in out["text"]


def test_a_screen_states_single_output_flaws_at_the_ldp_claim():
    fam, _, _ = _pooled_tests(400, N, seed=2)
    kw = {"screen_ids": np.arange(N), "pooled": [fam["self"]], "results": [_pair(EPS)], "samples": 4_000}
    easy = _run(screen_info=_screen_info(-1.0), **kw)
    single = [s for s in easy["statements"] if s["class"] == "single-output"]
    assert [s["claim"] for s in single] == [EPS]  # ε-LDP: one claim level
    p_easy = single[0]["output_probability"]
    assert 0 < p_easy <= 1
    # a pair must beat the run's K-th score to be proposed: a higher bar needs a likelier output
    hard = _run(screen_info=_screen_info(3.0), **kw)
    p_hard = next(s for s in hard["statements"] if s["class"] == "single-output")["output_probability"]
    assert p_hard > p_easy
    assert "on one output is caught when that output has probability" in easy["text"]
    assert any("never scored" in n for n in easy["not_covered"])


def test_errors_only_but_a_pooled_family_still_states_something():
    fam, _, _ = _pooled_tests(400, N, seed=3)
    out = _run(
        screen_ids=np.arange(N),
        screen_info=_screen_info(0.0),
        pooled=[fam["self"]],
        results=[_pair(EPS, error="boom")],
    )
    assert out["statements"] and out["text"] != "nothing was tested, so nothing can be stated"


def test_candidate_claims_are_the_nearest_neighbour_claims_of_a_metric_screen():
    vocab = _vocab()
    san = _Claim("metric")
    claims = claims_function(san, vocab)
    ids = np.arange(0, N, 2)  # 15 screened words
    v = vocab.vectors[ids]
    d = np.linalg.norm(v[:, None, :] - v[None, :, :], axis=2)
    np.fill_diagonal(d, np.inf)
    expected = EPS * d.min(axis=1)
    got = power.candidate_claims(san, vocab, ids, claims)
    assert got == pytest.approx(expected, rel=1e-9)
    nn_pos = np.argsort(d, axis=1)[:, :1]  # the same neighbours, given as positions
    assert power.candidate_claims(san, vocab, ids, claims, nn_pos) == pytest.approx(expected, rel=1e-9)
    assert power.candidate_claims(_Claim("ldp"), vocab, ids, claims_function(_Claim(), vocab)).tolist() == [
        EPS
    ]
    assert power.candidate_claims(san, vocab, ids[:1], claims) is None
    assert power.candidate_claims(san, vocab, None, claims) is None


def test_a_metric_screen_states_single_outputs_at_three_claim_quantiles():
    vocab = _vocab()
    san = _Claim("metric")
    fam, _, _ = _pooled_tests(400, N, seed=4)
    ids = np.arange(N)
    out = _run(
        sanitizer=san,
        screen_ids=ids,
        screen_info=_screen_info(-1.0),
        pooled=[fam["self"]],
        results=[_pair(0.7)],
        samples=4_000,
    )
    v = vocab.vectors
    d = np.linalg.norm(v[:, None, :] - v[None, :, :], axis=2)
    np.fill_diagonal(d, np.inf)
    levels = np.quantile(EPS * d.min(axis=1), [0.1, 0.5, 0.9])
    single = [s for s in out["statements"] if s["class"] == "single-output"]
    assert [s["claim"] for s in single] == pytest.approx(levels.tolist(), rel=1e-9)
