"""TEM (Carvalho et al. 2023): the closed form equals Algorithm 1, the sampler equals the closed
form, the bound holds and an overclaim is rejected, and the edges stay finite."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import chisquare

from dpcore.text import create_text_mechanism
from dpcore.text.metrics import bound_check
from dpcore.text.tem import TEM, tem_gamma
from dpcore.text.vocab import build_vocabulary

ALPHA = 1e-3


@pytest.fixture(scope="module")
def vocab():
    return build_vocabulary("glove", size=300)


def _row(mech: TEM, wid: int) -> np.ndarray:
    (_, rows), *_ = list(mech.iter_log_rows(np.array([wid])))
    return np.exp(rows[0])


def _algorithm_1(vocab, wid: int, eps: float, gamma: float, n: int, rng: np.random.Generator) -> np.ndarray:
    """Carvalho et al. 2023, Algorithm 1, simulated literally: scores, ⊥, Gumbel arg-max, uniform outside."""
    d = np.linalg.norm(vocab.vectors - vocab.vectors[wid], axis=1)
    inside = np.flatnonzero(d <= gamma)
    outside = np.flatnonzero(d > gamma)
    bottom = -gamma + (2 / eps) * math.log(outside.size) if outside.size else -np.inf
    scores = np.append(-d[inside], bottom)
    noisy = scores + rng.gumbel(0.0, 2.0 / eps, size=(n, scores.size))
    pick = np.argmax(noisy, axis=1)
    out = np.empty(n, dtype=np.int64)
    is_bottom = pick == inside.size
    out[~is_bottom] = inside[pick[~is_bottom]]
    out[is_bottom] = outside[rng.integers(0, outside.size, size=int(is_bottom.sum()))]
    return out


def _chi2(counts: np.ndarray, p: np.ndarray, n: int) -> float:
    big = p * n >= 5
    obs = np.append(counts[big], counts[~big].sum())
    exp = np.append(p[big], p[~big].sum()) * n
    if exp[-1] == 0:
        obs, exp = obs[:-1], exp[:-1]
    return float(chisquare(obs, exp).pvalue)


@pytest.mark.parametrize(("eps", "beta"), [(3.0, 0.3), (6.0, 0.05)])
def test_closed_form_equals_algorithm_1(vocab, eps: float, beta: float) -> None:
    mech = TEM(vocab=vocab, epsilon=eps, beta=beta)
    wid = int(vocab.ids(["house"])[0])
    d = np.linalg.norm(vocab.vectors - vocab.vectors[wid], axis=1)
    assert 0 < (d <= mech.gamma).sum() < len(vocab)  # both branches of Algorithm 1 are live
    n = 200_000
    draws = _algorithm_1(vocab, wid, eps, mech.gamma, n, np.random.default_rng(1))
    counts = np.bincount(draws, minlength=len(vocab))
    assert _chi2(counts, _row(mech, wid), n) > ALPHA


def test_sampler_matches_its_closed_form(vocab) -> None:
    mech = TEM(vocab=vocab, epsilon=3.0, beta=0.3)
    wid = int(vocab.ids(["money"])[0])
    n = 200_000
    counts = np.bincount(mech.sample_ids(np.full(n, wid), np.random.default_rng(2)), minlength=len(vocab))
    assert _chi2(counts, _row(mech, wid), n) > ALPHA


def test_bound_holds_and_an_overclaim_is_rejected(vocab) -> None:
    mech = create_text_mechanism("tem", vocab=vocab, epsilon=3.0)
    assert bound_check(mech, seed=0).passed
    assert not bound_check(mech, seed=0, epsilon=1.0).passed  # claiming ε/3 is caught


def test_gamma_formula_and_edges(vocab) -> None:
    assert tem_gamma(1.0, 1000, 0.001) == pytest.approx(2 * math.log(0.999 * 999 / 0.001))
    assert tem_gamma(1.0, 2, 0.9) == 0.0  # floored: everything is "outside", output uniform
    for eps in (1e-6, 1000.0):
        mech = TEM(vocab=vocab, epsilon=eps)
        p = _row(mech, 5)
        assert np.all(np.isfinite(p)) and math.isclose(p.sum(), 1.0, rel_tol=1e-9)
        out = mech.sample_ids(np.arange(50), np.random.default_rng(0))
        if eps == 1000.0:
            assert np.array_equal(out, np.arange(50))  # ε → ∞ keeps every word
        else:
            assert len(set(out.tolist())) > 30  # ε → 0 is close to uniform
    flat = TEM(vocab=vocab, epsilon=1.0, beta=0.999)  # γ = 0: uniform over V
    assert flat.gamma == 0.0
    np.testing.assert_allclose(_row(flat, 7), 1 / len(vocab), rtol=1e-12)


def test_isolated_word_maps_uniformly_outside_its_empty_ball(vocab) -> None:
    mech = TEM(vocab=vocab, epsilon=50.0, beta=0.3)
    wid = int(vocab.ids(["house"])[0])
    d = np.linalg.norm(vocab.vectors - vocab.vectors[wid], axis=1)
    assert (d <= mech.gamma).sum() == 1  # only the word itself is inside
    p = _row(mech, wid)
    others = np.delete(p, wid)
    np.testing.assert_allclose(others, others[0], rtol=1e-9)  # uniform outside
    assert p[wid] > others[0]


def test_audit_text_sees_tem_within_its_claim(vocab) -> None:
    from dpcore.textaudit import DpcoreSanitizer, audit_text

    s = DpcoreSanitizer(TEM(vocab=vocab, epsilon=1.0))
    r = audit_text(s, vocab=vocab, pairs=10, strategy="adaptive", samples=20_000, seed=0)
    assert r.verdict == "not-detected" and r.exact_verdict == "within-claim"
