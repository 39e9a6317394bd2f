"""Claim models (dpcore.textaudit.claims): a library row's claim and dpcore's own claim of the same
paper agree pair by pair, or differ for the stated, paper-grounded reason; CusText's premise."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpcore.text import create_text_mechanism
from dpcore.text.vocab import Vocabulary, build_vocabulary
from dpcore.textaudit.claims import (
    ClaimModel,
    SharedOutputSets,
    dpcore_claim,
    mldp_claim,
    pypantera_claim,
    sets_from_rows,
)
from dpcore.textaudit.mldp import MLDP_MECHANISMS
from dpcore.textaudit.pypantera import PYPANTERA_MECHANISMS, pypantera_available

EPS = 1.0


@pytest.fixture(scope="module")
def vocab() -> Vocabulary:
    return build_vocabulary("glove", size=300)


@pytest.fixture(scope="module")
def pairs(vocab: Vocabulary) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    x = rng.integers(0, len(vocab), 400)
    y = (x + rng.integers(1, len(vocab), 400)) % len(vocab)
    diff = vocab.vectors[x] - vocab.vectors[y]
    return x, y, np.sqrt(np.einsum("ij,ij->i", diff, diff))


def _pyp(kind: str, vocab: Vocabulary, **over: object) -> ClaimModel:
    spec = PYPANTERA_MECHANISMS[kind]
    return pypantera_claim(
        kind, epsilon=EPS, vocab=vocab, params=dict(spec.params) | over, citation=spec.citation
    )


def _mldp(kind: str, vocab: Vocabulary, lam: float = 0.2, epsilon: float = EPS) -> ClaimModel:
    spec = MLDP_MECHANISMS[kind]
    return mldp_claim(
        kind, epsilon=epsilon, vocab=vocab, lam=lam, guarantee=spec.guarantee, citation=spec.citation
    )


#: dpcore's mechanism (with the parameters that make its claim the library's) ↔ the library rows
#: that implement the same paper and must agree with it pair by pair.
AGREE = [
    ("santext", {}, "pypantera", "SanText"),
    ("feyisetan", {}, "pypantera", "CMP"),
    ("feyisetan", {}, "mldp", "CMP"),
    ("vickrey-cmp", {}, "pypantera", "VickreyCMP"),
    ("vickrey-cmp", {}, "mldp", "Vickrey"),
    ("tem", {}, "pypantera", "TEM"),
    ("tem", {}, "mldp", "TEM"),
    ("truncated-gumbel", {"epsilon": 40.0}, "mldp", "TruncatedGumbel"),  # calibrated for ε > 29 here
    ("mahalanobis", {"lam": 0.2}, "pypantera", "Mahalanobis"),
    ("vickrey-mahalanobis", {"lam": 0.2}, "pypantera", "VickreyMhl"),
]


@pytest.mark.parametrize(("name", "params", "library", "kind"), AGREE)
def test_library_claim_agrees_with_dpcore_pair_by_pair(vocab, pairs, name, params, library, kind) -> None:
    x, y, d = pairs
    params = dict(params)
    eps = float(params.pop("epsilon", EPS))
    ours = dpcore_claim(create_text_mechanism(name, vocab=vocab, epsilon=eps, **params))
    theirs = _pyp(kind, vocab) if library == "pypantera" else _mldp(kind, vocab, epsilon=eps)
    assert ours.notion == theirs.notion == "metric"
    a, b = ours.bounds(x, y, d), theirs.bounds(x, y, d)
    assert np.all(np.isfinite(a)) and np.all(a > 0)
    np.testing.assert_allclose(b, a, rtol=1e-9)


def test_mldp_mahalanobis_differs_only_by_its_scaling_of_sigma(vocab, pairs) -> None:
    """Xu et al. 2020's Thm 1 holds for the Σ_λ the noise uses; mldp-text scales Σ by the variance
    of all entries (dpcore and pyPANTERA: the mean variance of the coordinates), its covariance has
    numpy's n − 1 divisor (×|V|/(|V| − 1) = 1.0033 here) and it works in float32. The two differ
    on GloVe by more than those last two can explain, and agree to within them once every
    coordinate has the same mean, where the two scalings are the same number."""
    x, y, d = pairs
    ours = dpcore_claim(create_text_mechanism("mahalanobis", vocab=vocab, epsilon=EPS, lam=0.2))
    theirs = _mldp("Mahalanobis", vocab)
    rel = np.abs(theirs.bounds(x, y, d) / ours.bounds(x, y, d) - 1.0)
    assert rel.max() > 5e-3  # GloVe's coordinates have different means: the scalings differ
    centred = Vocabulary.create(
        embedding="glove",
        words=vocab.words,
        vectors=vocab.vectors - vocab.vectors.mean(axis=0),
        frequency=vocab.frequency,
        frequency_source=vocab.frequency_source,
    )
    ours_c = dpcore_claim(create_text_mechanism("mahalanobis", vocab=centred, epsilon=EPS, lam=0.2))
    np.testing.assert_allclose(
        _mldp("Mahalanobis", centred).bounds(x, y, d), ours_c.bounds(x, y, d), rtol=2e-3
    )


def test_custext_claim_model_is_the_same_given_the_same_output_sets(vocab, pairs) -> None:
    """Both CusText rows model Chen et al. 2023's claim: ε-LDP between words with equal output sets,
    nothing otherwise. Given dpcore's sets, pyPANTERA's model gives dpcore's bounds pair by pair;
    the rows differ only in the sets their implementations build (the premise below)."""
    x, y, d = pairs
    mech = create_text_mechanism("custext", vocab=vocab, epsilon=EPS)
    ours = dpcore_claim(mech)
    theirs = pypantera_claim(
        "CusText",
        epsilon=EPS,
        vocab=vocab,
        params={},
        citation=PYPANTERA_MECHANISMS["CusText"].citation,
        output_set=sets_from_rows(mech._out_ids),
    )
    # pairs inside one group, so that both covered and uncovered pairs are compared
    g = mech._members[:5, :2]
    x = np.concatenate([x, g[:, 0]])
    y = np.concatenate([y, g[:, 1]])
    d = np.concatenate([d, np.ones(5)])
    a, b = ours.bounds(x, y, d), theirs.bounds(x, y, d)
    np.testing.assert_array_equal(a, b)
    assert np.isinf(a).any() and (a == EPS).sum() >= 5


def test_claim_bounds_cover_only_their_scope_and_report_it() -> None:
    scope = lambda x, y: x % 2 == y % 2  # noqa: E731
    c = ClaimModel(notion="ldp", epsilon=0.5, citation="test", scope=scope, scope_text="same parity")
    b = c.bounds(np.array([0, 0, 1]), np.array([2, 1, 3]))
    assert b.tolist() == [0.5, math.inf, 0.5]
    rec = c.to_dict()
    assert rec["pairs"] == "same parity" and rec["formula"] == "ε = 0.5"
    m = ClaimModel(notion="metric", epsilon=2.0, epsilon0=0.7, citation="t")
    np.testing.assert_allclose(m.bounds(np.array([0]), np.array([1]), np.array([0.25])), [1.2])
    assert "ε₀ = 0.7" in m.formula
    with pytest.raises(ValueError, match="distances"):
        m.bounds(np.array([0]), np.array([1]))


def test_santext_plus_claim_has_epsilon0_and_protected_outputs(vocab, pairs) -> None:
    x, y, d = pairs
    mech = create_text_mechanism("santext+", vocab=vocab, epsilon=EPS)
    c = dpcore_claim(mech)
    np.testing.assert_allclose(c.bounds(x, y, d), EPS * d + math.log(1 / 0.3))
    assert c.protected is not None and 0 < c.protected.sum() < len(vocab)
    assert "V_P" in c.to_dict()["outputs"]


def test_dpcore_custext_premise_holds(vocab) -> None:
    mech = create_text_mechanism("custext", vocab=vocab, epsilon=EPS)
    claim = dpcore_claim(mech)
    assert claim.premise is not None
    rec = claim.premise.check(None, vocab, seed=0)  # no draws when it holds
    assert rec["status"] == "holds" and rec["overlapping_pairs"] == 0 and rec["pairs_checked"] > 0


class _TopK:
    """A CusText-like sampler over per-word top-K sets (pyPANTERA's construction), uniform in the set."""

    def __init__(self, vocab: Vocabulary, k: int = 5) -> None:
        diff = vocab.vectors[:, None, :] - vocab.vectors[None, :, :]
        self.sets = np.sort(np.argsort(np.einsum("ijk,ijk->ij", diff, diff), axis=1)[:, :k], axis=1)
        self.words = vocab.words

    def sample(self, words, rng):
        ids = np.asarray([int(np.flatnonzero(self.words == w)[0]) for w in words])
        pick = rng.integers(0, self.sets.shape[1], ids.size)
        return self.words[self.sets[ids, pick]]


def test_overlapping_output_sets_break_the_premise_with_evidence() -> None:
    vocab = build_vocabulary("glove", size=60)
    s = _TopK(vocab)
    prem = SharedOutputSets(lambda i: s.sets[i], "per-word top-5 sets")
    rec = prem.check(s, vocab, seed=0, words=60, draws=500)
    assert rec["status"] == "broken" and rec["overlapping_pairs"] > 0
    e = rec["evidence"]
    assert 0 < e["shared"] < 5 or e["shared"] == 4
    assert e["x_produced_only_x"] > 0 and e["x_prime_produced_only_x"] == 0
    assert e["x_rate_lower_95"] > 0.1
    assert repr(e["x"]) in rec["text"] and "cannot produce" in rec["text"]


@pytest.mark.skipif(not pypantera_available(), reason="pyPANTERA is not installed")
def test_pypantera_custext_claim_reads_its_own_sets_and_its_premise_is_broken(vocab) -> None:
    from dpcore.textaudit.pypantera import PypanteraSanitizer

    san = PypanteraSanitizer(kind="CusText", epsilon=EPS, vocab=vocab)
    i = int(vocab.ids(["of"])[0])
    own = san._custext_output_set(i)
    assert own is not None and own.size == 20 and i in own
    # a word and its nearest member have different sets: not covered; a word with itself: ε
    j = int(next(m for m in own if m != i))
    assert not np.array_equal(own, san._custext_output_set(j))
    assert math.isinf(san.claimed_bound("of", str(vocab.words[j]), 1.0))
    rec = san.claim.premise.check(san, vocab, seed=0, words=60, draws=400)
    assert rec["status"] == "broken"
    e = rec["evidence"]
    assert e is not None and e["x_produced_only_x"] > 0 and e["x_prime_produced_only_x"] == 0


@pytest.mark.skipif(not pypantera_available(), reason="pyPANTERA is not installed")
def test_pypantera_custext_audit_flags_no_pair_its_claim_does_not_cover(vocab) -> None:
    """Before: ('of', 'likes') 'violated' an ε-LDP claim over all of V, though the two words have
    disjoint output sets and Chen et al. claim nothing for them. Now the broken premise leads."""
    from dpcore.textaudit import audit_text
    from dpcore.textaudit.pypantera import PypanteraSanitizer

    san = PypanteraSanitizer(kind="CusText", epsilon=EPS, vocab=vocab)
    res = audit_text(san, vocab=vocab, screen_budget=60_000, samples=2_000, seed=0, workers=1)
    for p in res.pairs:
        i, j = vocab.ids([p.x, p.x_prime])
        assert np.array_equal(san._custext_output_set(i), san._custext_output_set(j)), p
        assert math.isfinite(p.claimed_bound)
    assert res.verdict != "violates"
    assert res.premise is not None and res.premise["status"] == "broken"
    assert res.verdict_text.startswith("the premise of its claim does not hold")
    assert "failed on" in res.verdict_text and "%" in res.verdict_text  # 83% of words fail
    assert res.claim is not None and "same output set" in res.claim["pairs"]
    d = res.to_dict()
    assert d["premise"]["evidence"]["x_prime_produced_only_x"] == 0
