"""Vickrey mechanisms (Xu et al. 2021): the choice between the two nearest words follows
p₁ = (1 − t)d₂/(t d₁ + (1 − t)d₂), depends on the noisy point only, and the limits t = 0, 1."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from dpcore.text import create_text_mechanism
from dpcore.text.nearest import nearest_two
from dpcore.text.vickrey import VickreyCMP, VickreyMahalanobis, vickrey_choice, vickrey_first_probability
from dpcore.text.vocab import Vocabulary, build_vocabulary
from dpcore.validation import MIN_EPSILON, DPCoreError


@pytest.fixture(scope="module")
def glove() -> Vocabulary:
    return build_vocabulary("glove", size=2000)


def test_first_probability_formula_and_limits() -> None:
    d1, d2 = np.array([1.0, 2.0, 0.0, 0.0]), np.array([3.0, 2.0, 1.0, 0.0])
    np.testing.assert_allclose(vickrey_first_probability(d1, d2, 0.5), [0.75, 0.5, 1.0, 1.0])
    np.testing.assert_allclose(vickrey_first_probability(d1, d2, 0.0), 1.0)
    np.testing.assert_allclose(vickrey_first_probability(d1[:2], d2[:2], 1.0), 0.0)
    assert np.all(np.isfinite(vickrey_first_probability(d1, d2, 1.0)))


def test_choice_frequencies_match_p1(glove: Vocabulary) -> None:
    """For fixed noisy points, the share of 'nearest' choices matches mean p₁ (binomial test)."""
    rng = np.random.default_rng(3)
    pts = glove.vectors[rng.integers(0, len(glove), 40)].astype(float) + rng.normal(0, 0.8, (40, glove.dim))
    first, second, d1, d2 = nearest_two(pts, glove)
    reps = 500
    rep_pts = np.repeat(pts, reps, axis=0)
    out = vickrey_choice(rep_pts, glove, 0.6, np.random.default_rng(4)).reshape(40, reps)
    assert np.all((out == first[:, None]) | (out == second[:, None]))
    p1 = vickrey_first_probability(d1, d2, 0.6)
    k = int((out == first[:, None]).sum())
    assert stats.binomtest(k, out.size, float(p1.mean())).pvalue > 1e-3
    # and a wrong t is rejected by the same test
    p_wrong = vickrey_first_probability(d1, d2, 0.2)
    assert stats.binomtest(k, out.size, float(p_wrong.mean())).pvalue < 1e-3


def test_output_depends_on_the_noisy_point_only(glove: Vocabulary) -> None:
    """Post-processing: two different inputs that land on the same noisy point are decoded by the
    same law (here: identical draws with the same generator state)."""
    pt = glove.vectors[[7]].astype(float) + 0.3
    a = vickrey_choice(np.repeat(pt, 1000, axis=0), glove, 0.5, np.random.default_rng(1))
    b = vickrey_choice(np.repeat(pt, 1000, axis=0), glove, 0.5, np.random.default_rng(1))
    np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("cls", [VickreyCMP, VickreyMahalanobis])
def test_limits_and_edges(glove: Vocabulary, cls) -> None:
    ids = np.arange(300)
    same = cls(vocab=glove, epsilon=1000.0, t=0.0).sample_ids(ids, np.random.default_rng(0))
    np.testing.assert_array_equal(same, ids)  # t = 0 and no noise: the input
    never = cls(vocab=glove, epsilon=1000.0, t=1.0).sample_ids(ids, np.random.default_rng(0))
    assert not np.any(never == ids)  # t = 1: always the second-nearest word
    tiny = cls(vocab=glove, epsilon=MIN_EPSILON).sample_ids(ids, np.random.default_rng(0))
    assert tiny.min() >= 0 and tiny.max() < len(glove)
    assert cls(vocab=glove, epsilon=2.0).privacy.notion == "metric DP"


@pytest.mark.parametrize("t", [-0.5, 2.0, float("inf")])
def test_bad_t(glove: Vocabulary, t: float) -> None:
    with pytest.raises(DPCoreError, match="t"):
        create_text_mechanism("vickrey-cmp", vocab=glove, epsilon=1.0, t=t)
