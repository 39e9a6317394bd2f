"""The Mahalanobis mechanism (Xu et al. 2020): its noise against its density, its metric, the
λ = 0 limit, edge ε and bad input."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from dpcore.text import create_text_mechanism
from dpcore.text.mahalanobis import Mahalanobis, regularized_covariance
from dpcore.text.vocab import Vocabulary, build_vocabulary
from dpcore.validation import MIN_EPSILON, DPCoreError

ALPHA = 1e-3


@pytest.fixture(scope="module")
def glove() -> Vocabulary:
    return build_vocabulary("glove", size=2000)


def test_noise_has_the_regularized_mahalanobis_density(glove: Vocabulary) -> None:
    """Density ∝ exp(−ε‖z‖_RM) ⇔ the whitened noise Σ_λ^{-1/2}Z is isotropic with a Gamma(m, 1/ε)
    norm: KS on the norm, and on projections of the direction onto fixed axes (the first
    coordinate of a uniform point on S^{m−1} has (u+1)/2 ~ Beta((m−1)/2, (m−1)/2))."""
    eps, m = 2.5, glove.dim
    mech = Mahalanobis(vocab=glove, epsilon=eps, lam=0.7)
    z = mech.noise(20_000, np.random.default_rng(5))
    _, _, inv_half = regularized_covariance(glove, 0.7)
    w = z @ inv_half
    r = np.linalg.norm(w, axis=1)
    assert stats.kstest(r, stats.gamma(a=m, scale=1 / eps).cdf).pvalue > ALPHA
    beta = stats.beta((m - 1) / 2, (m - 1) / 2)
    for axis in (0, 17, m - 1):
        assert stats.kstest((w[:, axis] / r + 1) / 2, beta.cdf).pvalue > ALPHA
    # The test has power: the unwhitened (elliptical) noise fails the isotropy check.
    raw = np.linalg.norm(z, axis=1)
    worst = min(stats.kstest((z[:, a] / raw + 1) / 2, beta.cdf).pvalue for a in range(m))
    assert worst < ALPHA


def test_lambda_zero_is_the_spherical_mechanism(glove: Vocabulary) -> None:
    mech = Mahalanobis(vocab=glove, epsilon=3.0, lam=0.0)
    x, x2 = np.arange(0, 50), np.arange(50, 100)
    d_euc = np.linalg.norm(glove.vectors[x].astype(float) - glove.vectors[x2], axis=1)
    np.testing.assert_allclose(mech.privacy_distance(x, x2), d_euc, rtol=1e-9)
    assert "λ = 0" in mech.privacy.describe()


def test_sampler_is_the_nearest_word_to_the_noisy_point(glove: Vocabulary) -> None:
    mech = Mahalanobis(vocab=glove, epsilon=4.0, lam=0.5)
    ids = np.arange(200)
    pts = mech.noisy_points(ids, np.random.default_rng(9))
    got = mech.sample_ids(ids, np.random.default_rng(9))
    full = ((pts[:, None, :] - glove.vectors[None, :, :].astype(float)) ** 2).sum(axis=2)
    np.testing.assert_array_equal(got, full.argmin(axis=1))


def test_edge_epsilons(glove: Vocabulary) -> None:
    ids = np.arange(300)
    big = Mahalanobis(vocab=glove, epsilon=1000.0).sample_ids(ids, np.random.default_rng(0))
    np.testing.assert_array_equal(big, ids)  # noise ≪ nearest-neighbour gaps: the input
    tiny = Mahalanobis(vocab=glove, epsilon=MIN_EPSILON).sample_ids(ids, np.random.default_rng(0))
    assert tiny.min() >= 0 and tiny.max() < len(glove)
    assert (tiny != ids).mean() > 0.99  # the input carries no weight any more
    # OOV words never reach a mechanism (sanitize masks them); ids outside V are refused.
    with pytest.raises(DPCoreError):
        Mahalanobis(vocab=glove, epsilon=1.0).sample_ids(np.array([len(glove)]), np.random.default_rng(0))


@pytest.mark.parametrize("lam", [-0.1, 1.5, float("nan")])
def test_bad_lambda(glove: Vocabulary, lam: float) -> None:
    with pytest.raises(DPCoreError, match="lam"):  # the schema's check, through the factory
        create_text_mechanism("mahalanobis", vocab=glove, epsilon=1.0, lam=lam)
    with pytest.raises(DPCoreError, match="lambda"):  # the constructor's own check
        Mahalanobis(vocab=glove, epsilon=1.0, lam=lam)
