"""The claim's ceiling (dpcore.attack.ceiling): the Bayesian attacker stays under it on correct
mechanisms (by simulation and exactly from the channel), the overclaiming k-ary randomized
response crosses it, and the bound's own properties (LDP closed form, groups, unprotected mass,
top-k, capped at 1)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpcore.attack import bayes
from dpcore.attack.ceiling import (
    Secrets,
    ceiling_crossed,
    claim_ceiling,
    claim_ceiling_curve,
    claim_shape,
    epsilon_grid,
    ldp_success_ceiling,
)
from dpcore.flawed.text import OverclaimedRandomizedResponse
from dpcore.text import create_text_mechanism
from dpcore.text.vocab import Vocabulary
from dpcore.textaudit.reference import KaryRandomizedResponse

#: A few real stopwords (CusText+ keeps them) and made-up words.
WORDS = ["the", "and", "of", "to"] + [f"w{i}" for i in range(46)]


def _vocab(seed: int = 0, scale: float = 0.3) -> Vocabulary:
    rng = np.random.default_rng(seed)
    return Vocabulary.create(
        embedding="glove",
        words=WORDS,
        vectors=scale * rng.normal(size=(len(WORDS), 5)),
        frequency=np.geomspace(1.0, 1e-3, len(WORDS)),
        frequency_source="test",
    )


def _mech(name: str, eps: float, vocab: Vocabulary):
    extra = {"santext+": {"p": 0.3, "w": 0.5}, "custext": {"k": 6}, "custext+": {"k": 6}}.get(name, {})
    return create_text_mechanism(name, vocab=vocab, epsilon=eps, **extra)


def _secrets(n_words: int, n: int, seed: int) -> np.ndarray:
    """Original ids at n positions: a Zipf-like ρ over the first ``n_words`` words of V."""
    rng = np.random.default_rng(seed)
    w = 1.0 / np.arange(1, n_words + 1)
    return rng.choice(n_words, size=n, p=w / w.sum()).astype(np.int64)


def _channel(mech) -> np.ndarray:
    """P[x, y] = Pr[M(x)=y] over all of (the small) V, from the mechanism's exact rows."""
    n = len(mech.vocab)
    out = np.empty((n, n))
    for sl, rows in mech.iter_log_rows(np.arange(n)):
        out[sl] = np.exp(rows)
    return out


@pytest.mark.parametrize("name", ["santext", "santext+", "custext", "custext+", "random", "tem"])
@pytest.mark.parametrize("eps", [0.5, 1.0, 2.0])
def test_bayesian_attacker_stays_under_the_claims_ceiling(name: str, eps: float) -> None:
    vocab = _vocab()
    mech = _mech(name, eps, vocab)
    x = _secrets(30, 4_000, seed=1)
    y = mech.sample_ids(x, np.random.default_rng(2))
    res = bayes.bayes_attack(mech, x, y)
    ceil = claim_ceiling(mech, x)
    hits = res.n_tokens - res.n_defended
    low, crossed = ceiling_crossed(hits, res.n_tokens, ceil.success_ceiling, confidence=0.975)
    assert not crossed and low <= ceil.success_ceiling
    # exactly: the attacker's expected success and the best possible one (the Bayes vulnerability
    # Σ_y max_x ρ(x)·P(y|x)) under the same ρ, both at most the ceiling
    rho = np.bincount(x, minlength=len(vocab)) / x.size
    P = _channel(mech)
    guess = np.argmax(bayes.unigram_log_prior(vocab)[:, None] + np.log(np.maximum(P, 1e-300)), axis=0)
    expected = float(sum(rho[g] * P[g, yy] for yy, g in enumerate(guess)))
    vulnerability = float(np.max(rho[:, None] * P, axis=0).sum())
    assert expected <= vulnerability + 1e-12
    assert vulnerability <= ceil.success_ceiling + 1e-12
    assert abs(res.defense_rate - (1 - expected)) < 0.03  # the simulation is of this attacker
    assert ceil.prior_best <= ceil.success_ceiling <= 1.0


@pytest.mark.parametrize("name", ["santext", "custext", "random", "tem"])
def test_the_ceiling_bites_at_small_epsilon(name: str) -> None:
    """Not vacuous: at ε = 0.5 the ceiling is below 1 on this vocabulary (CusText: one bound per group)."""
    mech = _mech(name, 0.5, _vocab())
    assert claim_ceiling(mech, _secrets(30, 4_000, seed=1)).success_ceiling < 0.9


@pytest.mark.parametrize("eps", [1.0, 2.0, 3.0])
def test_overclaimed_randomized_response_crosses_the_ceiling(eps: float) -> None:
    """k-ary RR keeping with probability e^{3ε}/(e^{3ε}+k−1) while claiming ε: against uniform
    secrets over k = 300 words its Bayesian attacker (who guesses the released word) wins far
    more often than e^ε/k, the ε-LDP ceiling; correct k-ary RR at ε stays under it."""
    k, per_word = 300, 20
    words = [f"v{i}" for i in range(k)]
    x = np.repeat(np.arange(k), per_word)
    rho = Secrets.from_ids(x).probs
    ceiling = ldp_success_ceiling(rho, eps)
    assert ceiling == pytest.approx(math.exp(eps) / k)
    for mech, should_cross in (
        (OverclaimedRandomizedResponse(epsilon=eps, words=words), True),
        (KaryRandomizedResponse(epsilon=eps, words=words), False),
    ):
        y = mech._ids(mech.sample(np.asarray(words, dtype=object)[x], np.random.default_rng(3)))
        keep = mech.keep_probability
        # MAP over x of ρ(x)·Pr[M(x)=y]: Pr = keep if x = y, else (1 − keep)/(k − 1)
        like = np.full((k, k), (1 - keep) / (k - 1))
        np.fill_diagonal(like, keep)
        guess = np.argmax(rho[:, None] * like, axis=0)[y]
        hits = int(np.sum(guess == x))
        low, crossed = ceiling_crossed(hits, x.size, ceiling, confidence=0.975)
        assert crossed is should_cross, (mech.name, hits / x.size, low, ceiling)


def test_ldp_closed_form_and_the_uniform_baseline() -> None:
    p = np.array([0.4, 0.3, 0.2, 0.1])
    assert ldp_success_ceiling(p, 0.5) == pytest.approx(math.exp(0.5) * 0.4)
    assert ldp_success_ceiling(p, 0.2, top_k=2) == pytest.approx(math.exp(0.2) * 0.7)
    assert ldp_success_ceiling(p, 5.0) == 1.0
    vocab = _vocab()
    x = _secrets(30, 2_000, seed=4)
    rnd = claim_ceiling(_mech("random", 3.0, vocab), x)  # 0-LDP whatever ε: the prior's best guess
    assert rnd.success_ceiling == pytest.approx(Secrets.from_ids(x).probs.max())
    assert rnd.claim_epsilon == 0.0


def test_one_group_ldp_is_the_best_prefix_of_the_closed_form() -> None:
    """CusText with K = |V| is ε-LDP over all of V: uniform ρ gives e^ε·max ρ exactly; a heavy
    top secret is better counted by its mass: min_j [ρ(top j) + e^ε·ρ_(j+1)]."""
    vocab = _vocab()
    one = create_text_mechanism("custext", vocab=vocab, epsilon=1.0, k=len(vocab))
    uniform = np.repeat(np.arange(10, 20), 7)
    assert claim_ceiling(one, uniform).success_ceiling == pytest.approx(math.exp(1.0) / 10)
    heavy = np.concatenate([np.full(50, 10), np.repeat(np.arange(11, 16), 10)])  # 0.5, 5 × 0.1
    got = claim_ceiling(one, heavy).success_ceiling
    assert got == pytest.approx(0.5 + math.e * 0.1)
    assert got < ldp_success_ceiling([0.5] + [0.1] * 5, 1.0)


def test_groups_bound_each_group_on_its_own() -> None:
    """CusText's claim holds only inside a group: Σ_G min_j [ρ(top j of G) + e^ε·ρ_(j+1) of G],
    brute-forced here, and never below the one-group bound."""
    vocab = _vocab()
    eps = 0.7
    mech = _mech("custext", eps, vocab)
    x = _secrets(40, 3_000, seed=5)
    sec = Secrets.from_ids(x)
    rho = dict(zip(sec.ids.tolist(), sec.probs.tolist(), strict=True))
    group_of = mech._group_of
    expected = 0.0
    for g in set(group_of[sec.ids].tolist()):
        ps = sorted((rho[i] for i in sec.ids if group_of[i] == g), reverse=True)
        r = math.exp(eps) if len(ps) > 1 else 1.0
        expected += min(sum(ps[:j]) + (r * ps[j] if j < len(ps) else 0.0) for j in range(len(ps) + 1))
    got = claim_ceiling(mech, x).success_ceiling
    assert got == pytest.approx(min(1.0, expected))
    whole = create_text_mechanism("custext", vocab=vocab, epsilon=eps, k=len(vocab))
    assert got >= claim_ceiling(whole, x).success_ceiling - 1e-12


def test_unprotected_mass_is_added() -> None:
    vocab = _vocab()
    x = _secrets(30, 3_000, seed=6)
    sec = Secrets.from_ids(x)
    plus = _mech("santext+", 1.0, vocab)
    nonsens = ~plus.sensitive[sec.ids]
    assert nonsens.any() and (~nonsens).any()
    c = claim_ceiling(plus, x)
    assert c.unprotected_mass == pytest.approx(float(np.sum(sec.probs[nonsens])) * (1 - plus.p))
    assert c.success_ceiling >= c.unprotected_mass
    assert c.epsilon0 == pytest.approx(math.log(1 / plus.p))
    cplus = claim_ceiling(_mech("custext+", 1.0, vocab), x)
    stop = np.isin(sec.ids, [vocab.ids(["the", "and", "of", "to"])])
    assert stop.any()
    assert cplus.unprotected_mass == pytest.approx(float(np.sum(sec.probs[stop])))
    assert "group" in cplus.note


@pytest.mark.parametrize("name", ["santext", "santext+", "custext", "tem"])
def test_top_k_is_monotone_and_everything_is_capped(name: str) -> None:
    mech = _mech(name, 1.0, _vocab())
    x = _secrets(30, 2_000, seed=7)
    shape = claim_shape(mech, x)
    eps = epsilon_grid(0.05, 50.0, points=30)
    prev = np.zeros(eps.size)
    for k in (1, 2, 3, 5, 10):
        cur = shape.ceiling(eps, top_k=k)
        assert np.all(cur >= prev - 1e-12) and np.all(cur <= 1.0)
        prev = cur
    assert np.all(np.diff(shape.ceiling(eps)) >= -1e-12)  # grows with ε
    assert shape.ceiling([50.0])[0] == 1.0
    assert shape.ceiling([1.0], top_k=len(shape.secrets.ids))[0] == pytest.approx(1.0)


def test_curve_and_grid() -> None:
    mech = _mech("santext", 1.0, _vocab())
    x = _secrets(30, 1_000, seed=8)
    grid = epsilon_grid(0.5, 10.0, points=20, include=[3.0])
    assert grid[0] == 0.5 and grid[-1] == 10.0 and 3.0 in grid and np.all(np.diff(grid) > 0)
    curve = claim_ceiling_curve(mech, x, grid)
    assert len(curve["defense_floor"]) == grid.size
    assert curve["defense_floor"] == pytest.approx([1 - c for c in curve["success_ceiling"]])
    at3 = claim_ceiling(_mech("santext", 3.0, _vocab()), x).success_ceiling
    assert curve["success_ceiling"][list(grid).index(3.0)] == pytest.approx(at3)
    assert "claim" in curve["meaning"]


def test_attack_json_carries_the_claims_ceiling(capsys: pytest.CaptureFixture[str]) -> None:
    import json

    from dpcore.cli import main

    args = [
        "attack",
        "--mechanism",
        "random",
        "--epsilons",
        "1,3",
        "--sentences",
        "5",
        "--vocab-size",
        "2000",
    ]
    assert main([*args, "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert len(rows) == 2
    for r in rows:
        # the uniform baseline is 0-LDP: the ceiling is the best guess without the word
        assert r["claim_success_ceiling"] == pytest.approx(r["claim_prior_best"])
        assert r["claim_defense_floor"] == pytest.approx(1 - r["claim_success_ceiling"])
        assert r["claim_ceiling_crossed"] is False
        assert r["claim_success_ci_low"] <= 1 - r["defense_rate"]
        assert "claim_success_ceiling" in r["claim_ceiling_definitions"]
    assert main(args) == 0
    text = capsys.readouterr().out
    assert text.count("the claim's ceiling at ε") == 2 and "If the sanitizer's privacy claim holds" in text


def test_attack_page_draws_the_claims_floor() -> None:
    """The page's ε figure draws each mechanism's floor over a dense grid, equal to the library's
    curve on the same sentences; the trade-off figure joins it at the measured ε."""
    import base64
    import json
    from pathlib import Path

    import streamlit as st
    from streamlit.testing.v1 import AppTest

    from dpcore.attack import page_view as pv
    from dpcore.attack.experiment import scored_original_ids

    st.cache_data.clear()
    page = str(Path(__file__).resolve().parents[1] / "pages" / "attack.py")
    at = AppTest.from_file(page, default_timeout=120)
    query = {"vsize": "2000", "n": "10", "ntrain": "500", "ntest": "200", "attacks": "bayes-unigram"}
    for k, v in {**query, "mechs": "santext,random", "eps": "0.5,3"}.items():
        at.query_params[k] = v
    at.run()
    assert not at.exception and not at.error

    def values(x: object) -> list[float]:
        if isinstance(x, dict):
            return np.frombuffer(base64.b64decode(x["bdata"]), dtype=x["dtype"]).tolist()
        return list(x)  # type: ignore[call-overload]

    charts = [c for c in at.get("plotly_chart") if getattr(c, "key", None) != "comparison-figure"]
    trade, by_eps = (json.loads(c.proto.spec) for c in charts[:2])
    floors = {t["name"]: t for t in by_eps["data"] if t.get("name", "").startswith("the claim's floor")}
    assert set(floors) == {"the claim's floor, santext", "the claim's floor, random"}
    res = pv.Resources()
    sents = pv.sentences_unit("tweets", 10, 0)
    mech = res.mechanism("santext", 0.5, (), 2000)
    x = scored_original_ids(sents, mech)
    tr = floors["the claim's floor, santext"]
    xs = values(tr["x"])
    assert len(xs) >= 50 and xs[0] == pytest.approx(0.5) and xs[-1] == pytest.approx(3.0)
    direct = claim_ceiling_curve(mech, x, xs)["defense_floor"]
    assert values(tr["y"]) == pytest.approx(direct)
    assert tr["line"]["dash"] == "dash"
    assert any(t.get("name", "").startswith("the claim's floor") for t in trade["data"])
    assert any("claim's floor" in m.value for m in at.markdown)
    assert any(e.label == "How to read this" for e in at.expander)
