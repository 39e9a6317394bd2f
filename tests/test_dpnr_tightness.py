"""Issue 11, part 2: DPNR's figures checked against the exact loss, and where they are tight.

- kε (Lai et al. 2022, corrected Thm. 1): the Laplace loss between opposite corners of [0, 1]^k
  at an output beyond one corner is exactly kε, and no pair of points in [0, 1]^k exceeds it.
- ε′ = ln((1 − μ)e^{kε} + μ) with word dropout (corrected Thm. 2, eq. 11): never exceeded by the
  exact loss of the dropout mixture over random centres and outputs, and attained when the
  dropped-word embedding equals the neighbour's and the two embeddings are opposite corners.
"""

from __future__ import annotations

import numpy as np
import pytest

from dpcore.accounting import dpnr_dropout_epsilon, dpnr_dropout_loss, dpnr_true_epsilon


@pytest.mark.parametrize(("k", "eps"), [(1, 0.5), (3, 1.0), (8, 0.2)])
def test_k_epsilon_is_attained_and_never_exceeded(k: int, eps: float) -> None:
    rng = np.random.default_rng(k)
    a, a2 = np.ones(k), np.zeros(k)
    z = np.full((1, k), 1.5)  # beyond the corner a, away from a′
    loss = float(dpnr_dropout_loss(z, a, a2, a, eps, 0.0)[0])  # μ = 0: plain DPNR
    assert loss == pytest.approx(dpnr_true_epsilon(k, eps), rel=1e-12)
    for _ in range(200):
        c1, c2 = rng.random((2, k))
        zs = rng.normal(0.5, 2.0, (500, k))
        assert dpnr_dropout_loss(zs, c1, c2, c1, eps, 0.0).max() <= k * eps * (1 + 1e-12)


@pytest.mark.parametrize(("k", "eps"), [(1, 3.0), (2, 1.0), (4, 0.5)])
@pytest.mark.parametrize("mu", [0.1, 0.5, 0.9])
def test_dropout_figure_is_a_tight_bound(k: int, eps: float, mu: float) -> None:
    figure = float(dpnr_dropout_epsilon(k, eps, mu))
    rng = np.random.default_rng(int(100 * mu) + k)
    worst = 0.0
    for _ in range(300):
        a, a2, c = rng.random((3, k))
        if rng.random() < 0.5:  # extreme centres, where the worst case lives
            a = np.round(a)
            a2 = 1.0 - a
            c = np.round(c) if rng.random() < 0.5 else c
        zs = rng.normal(0.5, 2.0, (1000, k))
        worst = max(worst, float(dpnr_dropout_loss(zs, a, a2, c, eps, mu).max()))
    assert worst <= figure * (1 + 1e-12)
    # attained: dropped-word embedding = the neighbour's, the two at opposite corners
    a, a2 = np.ones(k), np.zeros(k)
    z = np.full((1, k), 2.0)
    assert float(dpnr_dropout_loss(z, a, a2, a2, eps, mu)[0]) == pytest.approx(figure, rel=1e-12)
    # and a shared component elsewhere gives strictly less at the same output
    assert float(dpnr_dropout_loss(z, a, a2, np.full(k, 0.5), eps, mu)[0]) < figure
