"""CusText / CusText+ (Chen et al. 2023): the grouping is a partition with shared output sets,
the sampler matches the exact rows, the within-group ε-LDP bound holds and an overclaim is
rejected, nothing is claimed across groups, and the edges (ε → 0, ε = 1000, K = 1, stopwords,
OOV) behave as documented."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import chisquare

from dpcore.text import create_text_mechanism
from dpcore.text.custext import CusText, CusTextPlus, custext_groups, stopword_mask
from dpcore.text.metrics import bound_check
from dpcore.text.vocab import build_vocabulary
from dpcore.validation import MIN_EPSILON, DPCoreError

ALPHA = 1e-3


@pytest.fixture(scope="module")
def vocab():
    return build_vocabulary("glove", size=300)


def _row(mech: CusText, wid: int) -> np.ndarray:
    (_, rows), *_ = list(mech.iter_log_rows(np.array([wid])))
    return np.exp(rows[0])


def _true_epsilon(mech: CusText) -> float:
    """max over groups, x, x′ in the group and y of log Pr[x→y] − log Pr[x′→y], by enumeration."""
    worst = 0.0
    for grp in mech._members:
        g = grp[grp >= 0]
        lp = np.array([[mech.log_prob(np.array([x]), np.array([y]))[0] for y in g] for x in g])
        worst = max(worst, float((lp[:, None, :] - lp[None, :, :]).max()))
    return worst


def test_groups_partition_the_vocabulary_and_share_output_sets(vocab) -> None:
    members, group_of = custext_groups(vocab, 7)
    flat = members[members >= 0]
    assert np.array_equal(np.sort(flat), np.arange(len(vocab)))  # every word in exactly one group
    sizes = (members >= 0).sum(axis=1)
    assert np.all(sizes[:-1] == 7) and 1 <= sizes[-1] <= 7
    mech = CusText(vocab=vocab, epsilon=2.0, k=7)
    for wid in (0, 17, 123, 299):
        support = set(np.flatnonzero(_row(mech, wid) > 0).tolist())
        assert support == set(members[group_of[wid]][members[group_of[wid]] >= 0].tolist())
    # the most frequent word seeds the first group, with its nearest words
    seed = int(np.argmax(vocab.frequency))
    assert seed in members[0]
    d = np.linalg.norm(vocab.vectors - vocab.vectors[seed], axis=1)
    assert set(members[0].tolist()) == set(np.argsort(d, kind="stable")[:7].tolist())


def test_rows_are_exact_min_max_exponential_mechanism(vocab) -> None:
    eps = 3.0
    mech = CusText(vocab=vocab, epsilon=eps, k=5)
    wid = int(vocab.ids(["house"])[0])
    g = mech._members[mech._group_of[wid]]
    g = g[g >= 0]
    u = -np.linalg.norm(vocab.vectors[g] - vocab.vectors[wid], axis=1)
    un = (u - u.min()) / (u.max() - u.min())
    want = np.exp(eps * un / 2) / np.exp(eps * un / 2).sum()
    np.testing.assert_allclose(_row(mech, wid)[g], want, rtol=1e-12)
    assert math.isclose(_row(mech, wid).sum(), 1.0, rel_tol=1e-12)


@pytest.mark.parametrize("name", ["custext", "custext+"])
def test_sampler_matches_exact_rows(vocab, name: str) -> None:
    mech = create_text_mechanism(name, vocab=vocab, epsilon=2.0)
    wid = int(vocab.ids(["money"])[0])
    n = 100_000
    counts = np.bincount(mech.sample_ids(np.full(n, wid), np.random.default_rng(3)), minlength=len(vocab))
    p = _row(mech, wid)
    assert (p > 0).sum() == 20  # K = 20 by default
    assert counts[p == 0].sum() == 0
    assert chisquare(counts[p > 0], p[p > 0] * n).pvalue > ALPHA


def test_bound_holds_within_groups_and_an_overclaim_is_rejected(vocab) -> None:
    mech = CusText(vocab=vocab, epsilon=4.0, k=5)
    true_eps = _true_epsilon(mech)
    assert 0 < true_eps <= 4.0 + 1e-9
    assert bound_check(mech, seed=0, triples=20_000).passed
    res = bound_check(mech, seed=0, triples=20_000, epsilon=0.5 * true_eps)
    assert not res.passed and res.violations > 0


def test_nothing_is_claimed_across_groups(vocab) -> None:
    mech = CusText(vocab=vocab, epsilon=2.0, k=5)
    a, b = mech._members[0][0], mech._members[1][0]
    assert not mech.pair_in_scope(np.array([a]), np.array([b]))[0]
    assert mech.pair_in_scope(np.array([a]), np.array([mech._members[0][1]]))[0]
    lp = mech.log_prob(np.array([a, b]), np.array([a, a]))
    assert np.isfinite(lp[0]) and lp[1] == -np.inf  # cross-group ratio is unbounded
    assert "nothing across groups" in mech.privacy.describe()
    from dpcore.textaudit import DpcoreSanitizer

    s = DpcoreSanitizer(mech)
    w = vocab.words
    assert s.claimed_bound(str(w[a]), str(w[b]), 1.0) == math.inf
    assert s.claimed_bound(str(w[a]), str(w[mech._members[0][1]]), 1.0) == 2.0


def test_audit_text_does_not_flag_custext(vocab) -> None:
    from dpcore.textaudit import DpcoreSanitizer, audit_text

    s = DpcoreSanitizer(CusText(vocab=vocab, epsilon=1.0, k=5))
    r = audit_text(s, vocab=vocab, pairs=10, strategy="adaptive", samples=20_000, seed=0)
    assert r.verdict == "not-detected" and r.exact_verdict == "within-claim"


@pytest.mark.parametrize("eps", [MIN_EPSILON, 1000.0])
def test_epsilon_edges(vocab, eps: float) -> None:
    mech = CusText(vocab=vocab, epsilon=eps, k=5)
    for wid in (0, 50, 299):
        p = _row(mech, wid)
        assert np.all(np.isfinite(p)) and math.isclose(p.sum(), 1.0, rel_tol=1e-9)
        g = mech._members[mech._group_of[wid]]
        g = g[g >= 0]
        if eps == MIN_EPSILON:
            np.testing.assert_allclose(p[g], 1 / g.size, rtol=1e-5)  # uniform over the group
        else:
            assert p[wid] > 1 - 1e-12  # the word itself has the top utility (distance 0)
    out = mech.sample_ids(np.arange(300), np.random.default_rng(0))
    if eps == 1000.0:
        assert np.array_equal(out, np.arange(300))


def test_k_one_is_the_identity_and_bad_k_is_rejected(vocab) -> None:
    mech = CusText(vocab=vocab, epsilon=1.0, k=1)
    assert np.array_equal(mech.sample_ids(np.arange(300), np.random.default_rng(0)), np.arange(300))
    for bad in (0, -3, 2.5, 301):
        with pytest.raises(DPCoreError):
            CusText(vocab=vocab, epsilon=1.0, k=bad)
    with pytest.raises(DPCoreError):
        CusText(vocab=vocab, epsilon=float("nan"))


def test_custext_plus_keeps_stopwords_and_never_outputs_them_otherwise(vocab) -> None:
    mech = CusTextPlus(vocab=vocab, epsilon=2.0)
    stop = stopword_mask(vocab)
    assert 20 < stop.sum() < 300
    sw = np.flatnonzero(stop)
    assert np.array_equal(mech.sample_ids(sw, np.random.default_rng(0)), sw)  # kept unchanged
    non = np.flatnonzero(~stop)
    out = mech.sample_ids(np.repeat(non, 20), np.random.default_rng(1))
    assert not stop[out].any()  # a stopword is output only by itself
    assert bound_check(mech, seed=0).passed  # incl. invertibility of the unprotected stopwords
    assert "stopwords kept unchanged" in mech.privacy.describe()
    plain = CusText(vocab=vocab, epsilon=2.0)
    assert not np.array_equal(plain.sample_ids(sw, np.random.default_rng(0)), sw)  # custext replaces them


def test_oov_words_are_masked_by_the_text_pipeline(vocab) -> None:
    from dpcore.text.sanitize import OOV_TOKEN, sanitize_lines

    mech = CusText(vocab=vocab, epsilon=2.0)
    res = sanitize_lines(["the zzqxv house"], mech, seed=0)
    assert OOV_TOKEN in res.text and "zzqxv" not in res.text and res.n_oov == 1
