"""Vickrey (Xu et al. 2021): the selection rule, the noise it uses, that it never inspects the input
after the noise, and the edges (t = 0 is the plain noisy-NN mechanism, ε = 1000, ε → 0)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from dpcore.text import create_text_mechanism
from dpcore.text.mechanisms import Feyisetan
from dpcore.text.vickrey import VickreyCMP, VickreyMahalanobis, first_choice_probability, two_nearest
from dpcore.text.vocab import build_vocabulary
from dpcore.validation import MIN_EPSILON, DPCoreError

ALPHA = 1e-3


@pytest.fixture(scope="module")
def vocab():
    return build_vocabulary("glove", size=300)


def test_first_choice_probability_formula() -> None:
    d1, d2 = np.array([1.0, 2.0, 0.0, 0.0]), np.array([3.0, 2.0, 1.0, 0.0])
    np.testing.assert_allclose(first_choice_probability(d1, d2, 0.5), [0.75, 0.5, 1.0, 1.0])
    np.testing.assert_allclose(first_choice_probability(d1, d2, 0.0), 1.0)
    np.testing.assert_allclose(first_choice_probability(d1[:2], d2[:2], 1.0), 0.0)
    t = 0.3
    np.testing.assert_allclose(
        first_choice_probability(d1[:1], d2[:1], t), (1 - t) * 3 / (t * 1 + (1 - t) * 3)
    )


def test_two_nearest_matches_brute_force(vocab) -> None:
    pts = np.random.default_rng(0).standard_normal((200, vocab.dim)) * 3
    w1, w2, d1, d2 = two_nearest(vocab, pts, max_elements=300 * 37)  # several chunks
    d = np.linalg.norm(pts[:, None, :] - vocab.vectors[None], axis=2)
    order = np.argsort(d, axis=1)
    assert np.array_equal(w1, order[:, 0]) and np.array_equal(w2, order[:, 1])
    np.testing.assert_allclose(d1, d[np.arange(200), order[:, 0]], rtol=1e-9)
    np.testing.assert_allclose(d2, d[np.arange(200), order[:, 1]], rtol=1e-9)


def test_selection_frequency_matches_the_rule(vocab) -> None:
    """Replay the noise with the same seed: the choice of w₁ is Bernoulli(p₁) given ẑ."""
    mech = VickreyCMP(vocab=vocab, epsilon=8.0, t=0.5)
    ids = np.full(10_000, int(vocab.ids(["house"])[0]))  # one chunk: same RNG order
    rng = np.random.default_rng(4)
    pts = mech._noisy(ids, rng)
    w1, w2, d1, d2 = two_nearest(vocab, pts)
    u = rng.random(ids.size)
    out = mech.sample_ids(ids, np.random.default_rng(4))
    assert np.array_equal(out, np.where(u < first_choice_probability(d1, d2, 0.5), w1, w2))
    p1 = first_choice_probability(d1, d2, 0.5)
    k = int((out == w1).sum())
    assert stats.binomtest(k, ids.size, p1.mean()).pvalue > ALPHA  # mean of p₁ (weak but live)
    assert 0.5 < p1.mean() < 1.0


def test_never_inspects_the_input_after_the_noise(vocab) -> None:
    """The output depends on x only through ẑ: with the same noisy point, any input gives the same word."""
    mech = VickreyCMP(vocab=vocab, epsilon=50.0, t=0.9)
    x = int(vocab.ids(["house"])[0])
    out = mech.sample_ids(np.full(2000, x), np.random.default_rng(0))
    assert np.mean(out == x) < 0.5  # at large ε, x is the nearest; t = 0.9 mostly picks w₂ ≠ x
    assert np.mean(out == x) > 0.0  # but x itself is still possible (never dropped)


def test_t_zero_is_the_noisy_nearest_neighbour_and_edges(vocab) -> None:
    ids = np.arange(300)
    a = VickreyCMP(vocab=vocab, epsilon=2.0, t=0.0).sample_ids(ids, np.random.default_rng(3))
    rng = np.random.default_rng(3)
    pts = VickreyCMP(vocab=vocab, epsilon=2.0, t=0.0)._noisy(ids, rng)
    assert np.array_equal(a, two_nearest(vocab, pts)[0])
    big = VickreyCMP(vocab=vocab, epsilon=1000.0, t=0.0).sample_ids(ids, np.random.default_rng(0))
    assert np.array_equal(big, ids)
    for name in ("vickrey-cmp", "vickrey-mahalanobis"):
        small = create_text_mechanism(name, vocab=vocab, epsilon=MIN_EPSILON).sample_ids(
            ids, np.random.default_rng(0)
        )
        assert small.min() >= 0 and small.max() < 300
    for bad in (-0.1, 1.5, float("nan")):
        with pytest.raises(DPCoreError):
            VickreyCMP(vocab=vocab, epsilon=1.0, t=bad)


def test_guarantee_is_that_of_the_noise(vocab) -> None:
    fey = Feyisetan(vocab=vocab, epsilon=3.0).privacy.epsilon
    assert VickreyCMP(vocab=vocab, epsilon=3.0).privacy.epsilon == fey
    vm = VickreyMahalanobis(vocab=vocab, epsilon=3.0, lam=0.4, t=0.2)
    assert vm.privacy.epsilon > 3.0 and "Mahalanobis" in vm.privacy.describe()
    assert vm.params()["t"] == 0.2
