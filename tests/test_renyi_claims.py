"""Rényi-DP claims: the Bernoulli divergence, its certified lower bound, the trade-off region it
implies, and the rewriter audit against a Rényi claim (DP-Fusion's claim is one)."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from dpcore.rewriter import RewriterClaim, audit_rewriter
from dpcore.rewriter.pairs import corpus_sentences
from dpcore.rewriter.planted import CopyRewriter
from dpcore.rewriter.power import reach, rewrites_needed
from dpcore.stats import bernoulli_renyi, cp_lower, cp_max_renyi, cp_renyi_lower, cp_upper
from dpcore.tradeoff import Box, TradeoffPair, box_violation, tpr_ceiling, tpr_floor
from dpcore.validation import DPCoreError

POOL = corpus_sentences()[:20]
FAST = ("exact", "words")


def _renyi(p: float, q: float, order: float) -> float:
    """D_α(Bern(p) ‖ Bern(q)), straight from the definition."""
    return math.log(p**order * q ** (1 - order) + (1 - p) ** order * (1 - q) ** (1 - order)) / (order - 1)


def _copy_d(q: float, k: int, order: float) -> float:
    """The exact Rényi divergence between CopyRewriter's laws for two pool sentences (symmetric)."""
    r = (1.0 - q) / k
    hi = q + r
    return math.log(hi**order * r ** (1 - order) + r**order * hi ** (1 - order) + (k - 2) * r) / (order - 1)


def test_the_bernoulli_divergence_is_the_definition_symmetrised_and_infinite_off_support() -> None:
    rng = np.random.default_rng(0)
    p, q = rng.uniform(0.01, 0.99, 50), rng.uniform(0.01, 0.99, 50)
    for order in (1.5, 2.0, 8.0):
        got = bernoulli_renyi(p, q, order)
        want = [max(_renyi(a, b, order), _renyi(b, a, order)) for a, b in zip(p, q, strict=True)]
        np.testing.assert_allclose(got, want, rtol=1e-10)
    assert float(bernoulli_renyi(0.3, 0.3, 2.0)) == 0.0
    assert math.isinf(float(bernoulli_renyi(0.5, 0.0, 2.0)))
    with pytest.raises(ValueError, match="order"):
        bernoulli_renyi(0.5, 0.4, 1.0)


def test_the_certified_bound_is_the_least_divergence_over_its_confidence_box() -> None:
    a, b, n, alpha = 160, 30, 200, 0.025
    lo, hi = float(cp_lower(a, n, alpha / 2)), float(cp_upper(b, n, alpha / 2))
    grid_p, grid_q = np.linspace(lo, 1.0, 400), np.linspace(0.0, hi, 400)
    least = float(bernoulli_renyi(grid_p[:, None], grid_q[None, :], 2.0).min())
    assert float(cp_renyi_lower(a, b, n, alpha, 2.0)) == pytest.approx(least, rel=1e-9)
    assert float(cp_renyi_lower(20, 20, n, alpha, 2.0)) == 0.0  # the intervals meet
    assert float(cp_renyi_lower(0, 5, n, alpha, 2.0)) == -math.inf  # never seen
    assert cp_max_renyi(n, alpha, 2.0) == pytest.approx(float(cp_renyi_lower(n, 0, n, alpha, 2.0)))


def test_the_certified_bound_covers_the_true_divergence_at_its_confidence() -> None:
    # Simulate the whole bound: binomial counts of a known pair of laws; the bound may exceed the
    # true divergence with probability at most alpha (Clopper–Pearson is conservative).
    rng = np.random.default_rng(7)
    n, alpha, trials = 100, 0.1, 4000
    for p, q in ((0.6, 0.3), (0.9, 0.05), (0.35, 0.3)):
        true = float(bernoulli_renyi(p, q, 2.0))
        lb = cp_renyi_lower(rng.binomial(n, p, trials), rng.binomial(n, q, trials), n, alpha, 2.0)
        assert float(np.mean(lb > true)) <= alpha


def test_the_renyi_ceiling_is_the_edge_of_the_region_and_weaker_than_pure_dp() -> None:
    fpr = np.array([1e-4, 0.01, 0.1, 0.3, 0.6])
    for eps in (0.12, 1.0, 4.0):
        ceil = tpr_ceiling(fpr, eps, order=2.0)
        # on the edge: the divergence there is the claim (below 1 where the edge is inside)
        inner = ceil < 1.0
        np.testing.assert_allclose(bernoulli_renyi(ceil[inner], fpr[inner], 2.0), eps, rtol=1e-6)
        # a pure ε-DP mechanism is (α, ε)-RDP, so the pure region lies inside the Rényi one
        assert np.all(ceil >= tpr_ceiling(fpr, eps) - 1e-12)
        # Mironov 2017, Prop. 10: Pr[S] ≤ (e^ε·Pr′[S])^((α−1)/α) holds on the whole region
        assert np.all(ceil <= (math.exp(eps) * fpr) ** 0.5 + 1e-12)
        mirror = 1.0 - tpr_ceiling(1.0 - fpr, eps, order=2.0)
        np.testing.assert_allclose(tpr_floor(fpr, eps, order=2.0), mirror)
    with pytest.raises(ValueError, match="no δ"):
        tpr_ceiling(0.1, 1.0, 0.01, order=2.0)


def test_a_box_beyond_the_renyi_region_is_a_violation_and_one_inside_is_not() -> None:
    box = Box(fpr=0.15, tpr=0.8, fpr_low=0.1, fpr_high=0.3, tpr_low=0.68, tpr_high=0.9)
    corner = float(bernoulli_renyi(0.68, 0.3, 2.0))
    assert box_violation(box, corner * 0.9, order=2.0) == ("above", "renyi")
    assert box_violation(box, corner * 1.1, order=2.0) is None
    mirrored = Box(fpr=0.8, tpr=0.15, fpr_low=0.68, fpr_high=0.9, tpr_low=0.1, tpr_high=0.3)
    assert box_violation(mirrored, corner * 0.9, order=2.0) == ("below", "renyi")
    pair = TradeoffPair(null="x", alt="x′", epsilon=corner * 0.9, boxes=(box,), order=2.0)
    d = pair.to_dict()
    assert d["order"] == 2.0 and d["claim_curve"]["order"] == 2.0 and d["outside"][0]["branch"] == "renyi"


def test_a_renyi_claim_is_per_document_with_an_order_above_one() -> None:
    claim = RewriterClaim(0.5, order=2.0, citation="test")
    assert claim.quantity == "Rényi divergence of order 2"
    assert "D_2(M(x) ‖ M(x′)) ≤ 0.5" in claim.describe()
    assert claim.to_dict()["order"] == 2.0 and "order" not in RewriterClaim(0.5).to_dict()
    with pytest.raises(DPCoreError, match="order"):
        RewriterClaim(0.5, order=1.0)
    with pytest.raises(DPCoreError, match="per document"):
        RewriterClaim(0.5, unit="token", order=2.0)


def _with_renyi_claim(rw: CopyRewriter, epsilon: float) -> CopyRewriter:
    rw.claim = dataclasses.replace(rw.claim, epsilon=epsilon, order=2.0)
    return rw


def test_the_audit_flags_a_renyi_claim_below_the_true_divergence_and_not_one_at_it() -> None:
    q, k = 0.6, len(POOL)
    true = _copy_d(q, k, 2.0)  # about 2.5
    pair = [(POOL[0], POOL[1])]
    low = audit_rewriter(_with_renyi_claim(CopyRewriter(epsilon=1.0, q=q, pool=POOL), true / 4), pair,
                         rewrites=400, seed=0, distinguishers=FAST)  # fmt: skip
    assert low.verdict == "violates"
    (p,) = low.pairs
    assert true / 4 < p.lower_bound <= true  # a lower bound on the Rényi divergence, not the loss
    assert "Rényi divergence of order 2 is ≥" in low.verdict_text
    assert low.power == [] and "power: none stated" in low.text()
    assert p.tradeoff is not None and p.tradeoff.order == 2.0 and p.tradeoff.outside()
    assert low.reach == pytest.approx(reach(200, low.alpha, order=2.0))
    held = audit_rewriter(_with_renyi_claim(CopyRewriter(epsilon=1.0, q=q, pool=POOL), true), pair,
                          rewrites=400, seed=0, distinguishers=FAST)  # fmt: skip
    assert held.verdict == "not-detected" and held.pairs[0].lower_bound <= true


def test_a_renyi_claim_beyond_the_reach_is_out_of_reach_with_the_rewrites_it_needs() -> None:
    rw = _with_renyi_claim(CopyRewriter(epsilon=1.0, q=0.9, pool=POOL), 6.0)
    res = audit_rewriter(rw, [(POOL[0], POOL[1])], rewrites=60, seed=0, distinguishers=FAST)
    assert res.verdict == "out-of-reach" and res.reach < 6.0
    need = rewrites_needed(6.0, res.alpha, order=2.0)
    assert need is not None and f"about {need:,} rewrites per input" in res.verdict_text
    assert reach(need // 2, res.alpha, order=2.0) > 6.0 >= reach(need // 2 - 1, res.alpha, order=2.0)
