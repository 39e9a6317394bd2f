"""Mahalanobis (Xu et al. 2020): the noise has density ∝ exp(−ε‖Σ_λ^{-1/2} z‖) (KS on the whitened
radius vs Gamma(m, 1/ε) and on a whitened direction's coordinate vs the sphere's Beta law), the
covariance root is right, the Euclidean claim follows from the paper's, and the edges hold."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from dpcore.text import create_text_mechanism
from dpcore.text.mahalanobis import Mahalanobis
from dpcore.text.vocab import build_vocabulary
from dpcore.validation import MIN_EPSILON, DPCoreError

ALPHA = 1e-3


@pytest.fixture(scope="module")
def vocab():
    return build_vocabulary("glove", size=300)


def _whiten(mech: Mahalanobis, z: np.ndarray) -> np.ndarray:
    return np.linalg.solve(mech._root, z.T).T  # Σ_λ^{-1/2} z


@pytest.mark.parametrize(("eps", "lam"), [(2.0, 0.5), (10.0, 0.9)])
def test_noise_radius_and_direction_follow_the_density(vocab, eps: float, lam: float) -> None:
    mech = Mahalanobis(vocab=vocab, epsilon=eps, lam=lam)
    m = vocab.dim
    w = _whiten(mech, mech.noise(5000, np.random.default_rng(8)))
    r = np.linalg.norm(w, axis=1)
    assert stats.kstest(r, stats.gamma(a=m, scale=1 / eps).cdf).pvalue > ALPHA
    u = w / r[:, None]
    axis = np.random.default_rng(1).standard_normal(m)
    axis /= np.linalg.norm(axis)
    t = (u @ axis + 1) / 2  # a uniform direction's coordinate: Beta((m−1)/2, (m−1)/2)
    assert stats.kstest(t, stats.beta((m - 1) / 2, (m - 1) / 2).cdf).pvalue > ALPHA
    # the un-whitened noise is NOT spherical when λ > 0: its covariance follows Σ_λ
    z = mech.noise(20_000, np.random.default_rng(2))
    sig = mech._root @ mech._root
    emp = np.cov(z, rowvar=False) / (np.mean(np.linalg.norm(z, axis=1) ** 2) / m)
    assert np.linalg.norm(emp - sig) / np.linalg.norm(sig) < 0.25


def test_covariance_root_and_euclidean_claim(vocab) -> None:
    mech = Mahalanobis(vocab=vocab, epsilon=3.0, lam=0.4)
    m = vocab.dim
    cov = np.cov(vocab.vectors, rowvar=False, ddof=0)
    sig = 0.4 * cov * m / np.trace(cov) + 0.6 * np.eye(m)
    np.testing.assert_allclose(mech._root @ mech._root, sig, atol=1e-10)
    lmin = np.linalg.eigvalsh(sig).min()
    assert lmin >= 0.6 - 1e-12
    assert mech.privacy.epsilon == pytest.approx(3.0 / math.sqrt(lmin))
    # d_R ≤ d / √λ_min for random pairs
    v = vocab.vectors[:50, None, :] - vocab.vectors[None, 50:100, :]
    v = v.reshape(-1, m)
    d_r = np.linalg.norm(_whiten(mech, v), axis=1)
    assert np.all(d_r <= np.linalg.norm(v, axis=1) / math.sqrt(lmin) * (1 + 1e-9))
    zero = Mahalanobis(vocab=vocab, epsilon=3.0, lam=0.0)  # λ = 0: spherical, as Feyisetan
    assert zero.privacy.epsilon == pytest.approx(3.0)
    assert "Mahalanobis" in mech.privacy.describe()


def test_epsilon_edges_and_registry(vocab) -> None:
    ids = np.arange(300)
    big = create_text_mechanism("mahalanobis", vocab=vocab, epsilon=1000.0).sample_ids(
        ids, np.random.default_rng(0)
    )
    assert np.mean(big == ids) > 0.95  # ε large: the word itself (its own nearest)
    small = Mahalanobis(vocab=vocab, epsilon=MIN_EPSILON).sample_ids(ids, np.random.default_rng(0))
    assert small.min() >= 0 and small.max() < 300 and np.mean(small == ids) < 0.2
    a = Mahalanobis(vocab=vocab, epsilon=1.0).sample_ids(ids, np.random.default_rng(5))
    b = Mahalanobis(vocab=vocab, epsilon=1.0).sample_ids(ids, np.random.default_rng(5))
    assert np.array_equal(a, b)
    for bad in (-0.1, 1.0, float("nan")):
        with pytest.raises(DPCoreError):
            Mahalanobis(vocab=vocab, epsilon=1.0, lam=bad)
