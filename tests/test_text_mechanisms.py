"""SanText, SanText+, random and Feyisetan: exact distributions, samplers, extremes, bounds."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from dpcore.text import TEXT_MECHANISMS, create_text_mechanism
from dpcore.text.mechanisms import Feyisetan, RandomReplacement, SanText, SanTextPlus
from dpcore.text.metrics import bound_check
from dpcore.text.sampling import pair_distances
from dpcore.text.vocab import Vocabulary, build_vocabulary, sensitive_count
from dpcore.validation import DPCoreError

ALPHA = 1e-3  # reject the sampler if a goodness-of-fit p-value falls below this


def toy_vocab(n: int = 10, dim: int = 3, seed: int = 7) -> Vocabulary:
    rng = np.random.default_rng(seed)
    return Vocabulary.create(
        embedding="toy",
        words=[f"w{i}" for i in range(n)],
        vectors=rng.normal(size=(n, dim)),
        frequency=np.arange(n, 0, -1, dtype=float),  # w0 most frequent, w{n-1} rarest
        frequency_source="toy",
    )


@pytest.fixture(scope="session")
def glove_small() -> Vocabulary:
    return build_vocabulary("glove", size=2000)


def exact_rows(mech, ids) -> np.ndarray:
    return np.exp(np.vstack([r for _, r in mech.iter_log_rows(np.asarray(ids))]))


def chi2_pvalue(observed: np.ndarray, probs: np.ndarray) -> float:
    """Chi-square goodness of fit, pooling cells with expected count < 5 into one."""
    n = observed.sum()
    expected = probs * n
    small = expected < 5
    obs = np.append(observed[~small], observed[small].sum())
    exp = np.append(expected[~small], expected[small].sum())
    keep = exp > 0
    return float(stats.chisquare(obs[keep], exp[keep] * obs[keep].sum() / exp[keep].sum()).pvalue)


def empirical(mech, x: int, n: int, seed: int) -> np.ndarray:
    out = mech.sample_ids(np.full(n, x), np.random.default_rng(seed), max_elements=64)
    return np.bincount(out, minlength=len(mech.vocab))


# ---- exact distributions ----------------------------------------------------------------------
@pytest.mark.parametrize("name", ["santext", "santext+", "random"])
def test_rows_are_distributions_and_match_log_prob(name: str) -> None:
    v = toy_vocab()
    mech = create_text_mechanism(name, vocab=v, epsilon=2.0)
    rows = exact_rows(mech, np.arange(len(v)))
    np.testing.assert_allclose(rows.sum(axis=1), 1.0, rtol=1e-12)
    xx, yy = np.meshgrid(np.arange(len(v)), np.arange(len(v)), indexing="ij")
    lp = mech.log_prob(xx.ravel(), yy.ravel()).reshape(rows.shape)
    np.testing.assert_allclose(np.exp(lp), rows, rtol=1e-10, atol=1e-15)


def test_santext_rows_follow_eq1() -> None:
    v = toy_vocab()
    eps = 1.7
    rows = exact_rows(SanText(vocab=v, epsilon=eps), np.arange(len(v)))
    d = np.linalg.norm(v.vectors[:, None, :] - v.vectors[None, :, :], axis=2)
    w = np.exp(-0.5 * eps * d)
    np.testing.assert_allclose(rows, w / w.sum(axis=1, keepdims=True), rtol=1e-10)


def test_santext_plus_rows_follow_algorithm2_and_eq2() -> None:
    v = toy_vocab()
    eps, p = 1.3, 0.4
    mech = SanTextPlus(vocab=v, epsilon=eps, p=p, w=0.5)
    rows = exact_rows(mech, np.arange(len(v)))
    s = mech.sensitive
    d = np.linalg.norm(v.vectors[:, None, :] - v.vectors[None, :, :], axis=2)
    w = np.where(s[None, :], np.exp(-0.5 * eps * d), 0.0)
    em = w / w.sum(axis=1, keepdims=True)
    want = np.where(s[:, None], em, p * em)
    want[~s, ~s] += 1 - p  # non-sensitive kept with probability 1 − p
    np.testing.assert_allclose(rows, want, rtol=1e-10, atol=1e-15)


def test_santext_plus_with_w1_is_santext() -> None:
    v = toy_vocab()
    a = exact_rows(SanTextPlus(vocab=v, epsilon=2.0, p=0.3, w=1.0), np.arange(len(v)))
    b = exact_rows(SanText(vocab=v, epsilon=2.0), np.arange(len(v)))
    np.testing.assert_allclose(a, b, rtol=1e-12)


# ---- samplers against the exact distribution ------------------------------------------------
@pytest.mark.parametrize("x", [0, 4, 9])
def test_santext_sampler_chi_square(x: int) -> None:
    v = toy_vocab()
    mech = SanText(vocab=v, epsilon=1.5)
    probs = exact_rows(mech, [x])[0]
    assert chi2_pvalue(empirical(mech, x, 40_000, seed=100 + x), probs) > ALPHA


@pytest.mark.parametrize("x", [0, 2, 8])  # w0, w2 non-sensitive; w8 sensitive (w = 0.5)
def test_santext_plus_sampler_chi_square(x: int) -> None:
    v = toy_vocab()
    mech = SanTextPlus(vocab=v, epsilon=1.5, p=0.3, w=0.5)
    probs = exact_rows(mech, [x])[0]
    assert chi2_pvalue(empirical(mech, x, 40_000, seed=200 + x), probs) > ALPHA


def test_chi_square_test_detects_a_wrong_epsilon() -> None:
    """The goodness-of-fit test above has power: samples at ε = 3 are rejected against ε = 1.5."""
    v = toy_vocab()
    probs = exact_rows(SanText(vocab=v, epsilon=1.5), [0])[0]
    wrong = empirical(SanText(vocab=v, epsilon=3.0), 0, 40_000, seed=1)
    assert chi2_pvalue(wrong, probs) < ALPHA


def test_sampler_on_many_tokens_matches_rows_jointly() -> None:
    """One vectorised pass over mixed tokens: each input's outputs fit its own row."""
    v = toy_vocab(n=12)
    mech = SanText(vocab=v, epsilon=2.0)
    ids = np.tile(np.arange(12), 6000)
    out = mech.sample_ids(ids, np.random.default_rng(5), max_elements=40)
    rows = exact_rows(mech, np.arange(12))
    pvals = [chi2_pvalue(np.bincount(out[ids == x], minlength=12), rows[x]) for x in range(12)]
    assert min(pvals) > ALPHA / 12  # Bonferroni over the 12 inputs


def test_sampling_is_seeded_and_chunk_invariant(glove_small: Vocabulary) -> None:
    mech = SanText(vocab=glove_small, epsilon=3.0)
    ids = np.random.default_rng(0).integers(0, len(glove_small), 3000)
    a = mech.sample_ids(ids, np.random.default_rng(42))
    b = mech.sample_ids(ids, np.random.default_rng(42), max_elements=5000)
    c = mech.sample_ids(ids, np.random.default_rng(43))
    np.testing.assert_array_equal(a, b)
    assert (a != c).any()


def test_spawned_generators_give_independent_streams(glove_small: Vocabulary) -> None:
    from dpcore.rng import spawn_rngs

    mech = SanText(vocab=glove_small, epsilon=1.0)
    ids = np.arange(500)
    r1, r2 = spawn_rngs(9, 2)
    a, b = mech.sample_ids(ids, r1), mech.sample_ids(ids, r2)
    assert (a != b).mean() > 0.5


# ---- extremes -----------------------------------------------------------------------------------
def test_epsilon_to_zero_is_uniform() -> None:
    v = toy_vocab()
    mech = SanText(vocab=v, epsilon=1e-6)  # dpcore's floor (validation.MIN_EPSILON)
    rows = exact_rows(mech, np.arange(len(v)))
    np.testing.assert_allclose(rows, 1 / len(v), rtol=1e-5)
    counts = empirical(mech, 3, 30_000, seed=3)
    assert chi2_pvalue(counts, np.full(len(v), 1 / len(v))) > ALPHA


def test_large_epsilon_keeps_every_token_without_nan(glove_small: Vocabulary) -> None:
    for mech in (
        SanText(vocab=glove_small, epsilon=1e3),
        SanTextPlus(vocab=glove_small, epsilon=1e3, p=0.3, w=1.0),
    ):
        ids = np.arange(len(glove_small))
        out = mech.sample_ids(ids, np.random.default_rng(0))
        np.testing.assert_array_equal(out, ids)
        lp = mech.log_prob(ids, ids)
        assert np.all(np.isfinite(lp)) and np.all(lp <= 0) and np.all(lp > -1e-6)
        for _, rows in mech.iter_log_rows(ids[:50]):
            assert not np.isnan(rows).any()


# ---- SanText+ specifics ----------------------------------------------------------------------
def test_non_sensitive_token_kept_with_probability_one_minus_p(glove_small: Vocabulary) -> None:
    p = 0.3
    mech = SanTextPlus(vocab=glove_small, epsilon=2.0, p=p, w=0.9)
    x = int(glove_small.ids(["the"])[0])
    assert not mech.sensitive[x]
    n = 20_000
    kept = int((mech.sample_ids(np.full(n, x), np.random.default_rng(11)) == x).sum())
    assert stats.binomtest(kept, n, 1 - p).pvalue > ALPHA
    ci = stats.binomtest(kept, n).proportion_ci(0.999, method="exact")
    assert ci.low <= 1 - p <= ci.high
    assert not ci.low <= 0.75 <= ci.high  # the interval is narrow enough to tell 0.7 from 0.75


def test_sensitive_tokens_never_leave_the_sensitive_set(glove_small: Vocabulary) -> None:
    mech = SanTextPlus(vocab=glove_small, epsilon=0.5, p=0.5, w=0.6)
    sens = np.flatnonzero(mech.sensitive)
    ids = np.repeat(sens[:200], 50)
    out = mech.sample_ids(ids, np.random.default_rng(2))
    assert mech.sensitive[out].all()
    # replaced non-sensitive tokens land in V_S too
    nons = np.flatnonzero(~mech.sensitive)[:200]
    out_n = mech.sample_ids(np.repeat(nons, 50), np.random.default_rng(3))
    changed = out_n != np.repeat(nons, 50)
    assert changed.any() and mech.sensitive[out_n[changed]].all()


def test_sensitive_set_size_is_floor_w_times_v() -> None:
    assert sensitive_count(14730, 0.9) == 13257  # the paper's Table 2 reports 13,258 (off by one)
    words = [str(i) for i in range(14730)]
    count = sensitive_count(len(words), 0.9)
    assert len(words[-count - 1 :]) == count + 1  # the released code's slice is one too long
    for n, w in [(10, 0.5), (10, 0.9), (7, 0.3), (2000, 0.9), (2000, 0.0), (2000, 1.0)]:
        assert sensitive_count(n, w) == math.floor(round(w * n, 9))
    v = toy_vocab()
    mask = SanTextPlus(vocab=v, epsilon=1.0, w=0.3).sensitive
    assert mask.sum() == 3
    np.testing.assert_array_equal(np.flatnonzero(mask), [7, 8, 9])  # the three least frequent


def test_sensitive_set_from_corpus_counts() -> None:
    v = toy_vocab().with_frequencies({"w0": 1, "w1": 50, "w2": 2}, source="corpus")
    mask = v.sensitive_mask(0.2)
    np.testing.assert_array_equal(np.flatnonzero(mask), [8, 9])  # zero counts, latest ids first


# ---- privacy maps and the exact bound check --------------------------------------------------
@pytest.mark.parametrize("name", ["santext", "santext+", "random"])
def test_bound_check_passes_for_correct_mechanisms(name: str, glove_small: Vocabulary) -> None:
    mech = create_text_mechanism(name, vocab=glove_small, epsilon=2.0)
    res = bound_check(mech, triples=3000, seed=1)
    assert res.passed, res.to_dict()
    assert res.protected_triples > 1000


def test_bound_check_detects_an_overclaim(glove_small: Vocabulary) -> None:
    """SanText at ε = 2 does not satisfy 1·d-MLDP: the check must say so."""
    res = bound_check(SanText(vocab=glove_small, epsilon=2.0), triples=3000, seed=1, epsilon=1.0)
    assert not res.passed and res.violations > 0 and res.max_excess > 0


def test_bound_check_detects_broken_invertibility(glove_small: Vocabulary) -> None:
    """Broken variants of SanText+ are reported (the check can fail)."""
    mech = SanTextPlus(vocab=glove_small, epsilon=2.0, p=0.3, w=0.5)
    mech._candidates = np.arange(len(glove_small))  # V_P = V: kept words are now protected outputs
    res = bound_check(mech, triples=2000, seed=0)
    assert not res.passed and res.violations > 0  # the 1 − p point mass breaks Def. 3 (i)
    mech2 = SanTextPlus(vocab=glove_small, epsilon=2.0, p=0.3, w=0.5)
    mech2._replace_prob = np.ones(len(glove_small))  # non-sensitive never kept: y ∈ V_U unreachable
    res2 = bound_check(mech2, triples=2000, seed=0)
    assert res2.invertibility_violations > 0 and not res2.passed


def test_privacy_maps() -> None:
    v = toy_vocab()
    assert SanText(vocab=v, epsilon=2.0).privacy.notion == "MLDP"
    plus = SanTextPlus(vocab=v, epsilon=2.0, p=0.25).privacy
    assert plus.notion == "UMLDP" and plus.epsilon0 == pytest.approx(math.log(4))
    assert SanTextPlus(vocab=v, epsilon=2.0, p=0.0).privacy.epsilon0 == math.inf
    assert RandomReplacement(vocab=v).privacy.epsilon == 0.0
    assert Feyisetan(vocab=v, epsilon=3.0).privacy.epsilon == 3.0
    assert {
        "santext", "santext+", "random", "feyisetan", "tem", "custext", "custext+", "mahalanobis",
        "vickrey-cmp", "vickrey-mahalanobis", "dp-mlm",
    } <= set(TEXT_MECHANISMS.names())  # fmt: skip


# ---- Feyisetan baseline ------------------------------------------------------------------------
def test_feyisetan_extremes_and_seeding(glove_small: Vocabulary) -> None:
    ids = np.arange(300)
    big = Feyisetan(vocab=glove_small, epsilon=1e3).sample_ids(ids, np.random.default_rng(0))
    np.testing.assert_array_equal(big, ids)
    mech = Feyisetan(vocab=glove_small, epsilon=1.0)
    a = mech.sample_ids(ids, np.random.default_rng(4))
    b = mech.sample_ids(ids, np.random.default_rng(4))
    np.testing.assert_array_equal(a, b)
    assert (a != ids).mean() > 0.9


def test_feyisetan_noise_has_its_density_and_drives_the_sampler(glove_small: Vocabulary) -> None:
    """Z ∝ exp(−ε‖z‖): radius Gamma(m, 1/ε) and uniform direction (KS tests on the mechanism's own
    noise), and sample_ids is exactly the nearest word to φ(x) + that noise (replayed)."""
    eps, m = 2.0, glove_small.dim
    mech = Feyisetan(vocab=glove_small, epsilon=eps)
    z = mech.noise(20_000, np.random.default_rng(8))
    radii = np.linalg.norm(z, axis=1)
    assert stats.kstest(radii, stats.gamma(a=m, scale=1 / eps).cdf).pvalue > ALPHA
    # a coordinate of a uniform unit vector: u₁² ~ Beta(1/2, (m − 1)/2)
    u1 = z[:, 0] / radii
    assert stats.kstest(u1**2, stats.beta(0.5, (m - 1) / 2).cdf).pvalue > ALPHA
    assert stats.binomtest(int((u1 > 0).sum()), u1.size).pvalue > ALPHA  # symmetric about 0
    # a wrong scale is rejected by the same test (the test can fail)
    assert stats.kstest(radii, stats.gamma(a=m, scale=1 / (1.1 * eps)).cdf).pvalue < ALPHA
    ids = np.random.default_rng(3).integers(0, len(glove_small), 400)
    noisy = glove_small.vectors[ids] + mech.noise(ids.size, np.random.default_rng(5))
    d2 = ((noisy[:, None, :] - glove_small.vectors[None, :, :]) ** 2).sum(axis=2)
    want = np.argmin(d2, axis=1)
    got = mech.sample_ids(ids, np.random.default_rng(5))
    got_chunked = mech.sample_ids(ids, np.random.default_rng(5), max_elements=len(glove_small) * 7)
    assert (got == want).mean() > 0.995  # float rounding may flip exact near-ties only
    np.testing.assert_array_equal(got, got_chunked)


# ---- bad input -----------------------------------------------------------------------------------
@pytest.mark.parametrize("eps", [0, -1, float("nan"), float("inf"), "abc", 1e4])
def test_bad_epsilon(eps: object) -> None:
    with pytest.raises(DPCoreError):
        SanText(vocab=toy_vocab(), epsilon=eps)  # type: ignore[arg-type]


@pytest.mark.parametrize("kwargs", [{"p": 1.5}, {"p": -0.1}, {"p": float("nan")}, {"w": 2.0}, {"w": 0.05}])
def test_bad_santext_plus_parameters(kwargs: dict) -> None:
    with pytest.raises(DPCoreError):
        SanTextPlus(vocab=toy_vocab(), epsilon=1.0, **kwargs)


def test_bad_names_and_ids() -> None:
    v = toy_vocab()
    with pytest.raises(DPCoreError, match="unknown text mechanism"):
        create_text_mechanism("nope", vocab=v, epsilon=1.0)
    with pytest.raises(DPCoreError, match="p does not apply to santext"):
        create_text_mechanism("santext", vocab=v, epsilon=1.0, p=0.3)
    with pytest.raises(DPCoreError):
        SanText(vocab=v, epsilon=1.0).sample_ids(np.array([0, 99]), np.random.default_rng(0))


def test_pair_distances_chunked_equal_direct() -> None:
    rng = np.random.default_rng(3)
    vec = rng.normal(size=(50, 7))
    x, y = rng.integers(0, 50, size=1001), rng.integers(0, 50, size=1001)
    y[:10] = x[:10]
    direct = np.linalg.norm(vec[x] - vec[y], axis=1)
    for max_elements in (1, 7, 100, 10**6):  # one pair per chunk … all pairs in one chunk
        got = pair_distances(vec, x, y, max_elements=max_elements)
        np.testing.assert_allclose(got, direct, rtol=1e-13, atol=0)
        assert np.all(got[:10] == 0.0)
