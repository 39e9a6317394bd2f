"""The Truncated Exponential Mechanism (TEM; Carvalho, Vasiloudis, Feyisetan and Wang, SDM 2023).

Algorithm 1 of the paper, for an input word w over a vocabulary V with distance d:

1. L_w = {y ∈ V : d(w, y) ≤ γ}; every y ∈ L_w gets the score −d(w, y), and one extra element ⊥
   gets −γ + (2/ε)·ln|V \\ L_w|;
2. add independent Gumbel(0, 2/ε) noise to every score and take the arg-max;
3. if ⊥ wins, output a uniform word of V \\ L_w.

By the Gumbel-max trick, step 2 picks y ∈ L_w with probability ∝ exp(−ε·d(w, y)/2) and ⊥ with
probability ∝ |V \\ L_w|·exp(−ε·γ/2); spread uniformly over V \\ L_w, each word there gets
∝ exp(−ε·γ/2). So TEM is *exactly* the exponential mechanism with the truncated distance
min(d(w, y), γ):

    Pr[TEM(w) = y] = exp(−½·ε·min(d(w, y), γ)) / Σ_{y′ ∈ V} exp(−½·ε·min(d(w, y′), γ)).

min(d(·, y), γ) is 1-Lipschitz in the first argument, so the weights and the normaliser each
change by at most e^{ε·d(w, w′)/2}: TEM satisfies ε·d metric LDP, the guarantee the paper
proves. dpcore samples and evaluates this closed form (exact rows, bound check, metrics) through
:class:`~dpcore.text.mechanisms.ExponentialTokenMechanism`; ``tests/test_tem.py`` checks it
against a direct simulation of Algorithm 1.

γ follows the paper's choice from a target probability β that a word outside L_w is output
at all (the pyPANTERA implementation uses the same formula):
γ = (2/ε)·ln((1 − β)(|V| − 1)/β).

pyPANTERA's TEM returns the *input* word when ⊥ wins (its uniform draw raises and the exception
handler falls back to the input); that behaviour is in :mod:`dpcore.flawed.text`, not here.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from dpcore.parameters import ParameterSpec
from dpcore.text.mechanisms import ExponentialTokenMechanism, TextPrivacy
from dpcore.text.registry import TEXT_MECHANISMS
from dpcore.text.vocab import Vocabulary
from dpcore.validation import check_probability

__all__ = ["TEM", "tem_gamma"]


def tem_gamma(epsilon: float, vocab_size: int, beta: float) -> float:
    """γ = (2/ε)·ln((1 − β)(|V| − 1)/β), floored at 0 (Carvalho et al. 2023, choice of γ)."""
    return max(0.0, (2.0 / epsilon) * math.log((1.0 - beta) * (vocab_size - 1) / beta))


@TEXT_MECHANISMS.register(
    "tem",
    display="TEM",
    summary="TEM: exponential mechanism over min(d, γ) (⊥ → uniform outside the γ-ball); ε·d metric LDP.",
    citation="Carvalho et al. 2023 (SDM), Truncated Exponential Mechanism, Algorithm 1",
    tags=("exact",),
)
class TEM(ExponentialTokenMechanism):
    """Truncated Exponential Mechanism (Carvalho et al. 2023, Algorithm 1), exact closed form.

    Pr[M(w)=y] ∝ exp(−½·ε·min(d(w, y), γ)) over all of V (see the module docstring for the
    derivation from Algorithm 1's Gumbel-max with ⊥). ε·d metric LDP.

    Parameters
    ----------
    vocab:
        The vocabulary V with its embedding.
    epsilon:
        ε > 0 per unit of Euclidean embedding distance.
    beta:
        β ∈ (0, 1), which sets γ = (2/ε)·ln((1 − β)(|V| − 1)/β) (default 0.001).
    """

    PARAMETERS = (
        ParameterSpec(
            "beta", 0.001, "float", 0.0, 1.0,
            "probability β of leaving the γ-ball; sets γ = (2/ε)·ln((1 − β)(|V| − 1)/β) "
            "(Carvalho et al. 2023, choice of γ)",
            open_low=True, open_high=True, ui_low=1e-4, ui_high=0.5, step=0.001,
        ),
    )  # fmt: skip

    name = "tem"

    def __init__(self, *, vocab: Vocabulary, epsilon: float, beta: float = 0.001) -> None:
        super().__init__(vocab=vocab, epsilon=epsilon)
        self.beta = check_probability(beta, name="beta", open_low=True, open_high=True)
        self.gamma = tem_gamma(self.epsilon, len(vocab), self.beta)
        self._candidates = np.arange(len(vocab), dtype=np.int64)
        self._replace_prob = np.ones(len(vocab))
        self._em_epsilon = self.epsilon
        self._truncate = self.gamma

    @property
    def privacy(self) -> TextPrivacy:
        return TextPrivacy(
            "metric DP",
            self.epsilon,
            0.0,
            f"Euclidean {self.vocab.embedding} distance",
            "Carvalho et al. 2023",
        )

    def params(self) -> dict[str, Any]:
        return super().params() | {"beta": self.beta, "gamma": self.gamma}
