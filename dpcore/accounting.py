"""Privacy accounting of two published mechanisms, as corrected in the appendix of Lai et al. (2022).

P. Lai, N. Phan, T. Sun, R. Jain, F. Dernoncourt, J. Gu, N. Barmpalios (2022), "User-Entity
Differential Privacy in Learning Natural Language Models", IEEE BigData; its appendix revisits
Lyu et al. (2020a, b).

- **DPNR** (Lyu et al. 2020a): Laplace noise Lap(1/ε) on each of the k coordinates of a
  min-max-normalised embedding is claimed ε-word-level DP; it is kε-DP (corrected Theorem 1),
  and with word dropout at rate μ it is ε′ = ln((1 − μ)·e^{kε} + μ)-DP (corrected Theorem 2,
  eq. 11).
- **Binary encoding + randomized response** (Lyu et al. 2020b): each real feature is encoded
  with 1 sign bit, m integer bits and f fraction bits, every bit flipped by randomized response
  with budget ε_i and charged as if its sensitivity were 1 (eqs. 13–14: claim ε = Σ ε_i).
  Over the encoded domain that claim is the exact worst-case LDP loss
  (:func:`binary_rr_exact_ldp`). Lai et al. weight each bit by its place value instead —
  integer bit i 2^{i−1}·ε_i (eqs. 15–17), the sign bit 2^{m+1}·ε_i (eq. 18), fraction bit i
  2^{−i}·ε_i (eq. 19) — a loss per unit of distance between real values, reported beside it as
  the "place-value figure", never as the true ε.

Everything is closed form and computed in log space where exponentials could overflow.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpcore.validation import DPCoreError, check_epsilon, check_int, check_probability

__all__ = [
    "BINARY_NOTE",
    "MAX_BITS",
    "MAX_FEATURES",
    "MAX_K",
    "BinaryEncodingReport",
    "BitCost",
    "DPNRReport",
    "binary_encoding_costs",
    "binary_rr_exact_ldp",
    "binary_rr_exact_ldp_enumerated",
    "dpnr_dropout_curve",
    "dpnr_dropout_epsilon",
    "dpnr_dropout_loss",
    "dpnr_report",
    "dpnr_true_epsilon",
]

#: Largest embedding dimension k accepted for DPNR.
MAX_K = 1_000_000
#: Largest number of integer or fraction bits per feature.
MAX_BITS = 64
#: Largest number of encoded features r.
MAX_FEATURES = 1_000_000


def _check_k(k: object) -> int:
    return check_int(k, name="k (embedding dimension)", min_value=1, max_value=MAX_K)


# --------------------------------------------------------------------------------------------
# DPNR
# --------------------------------------------------------------------------------------------
def dpnr_true_epsilon(k: int, epsilon: float) -> float:
    """True word-level budget of DPNR: ``k·ε`` (Lai et al. 2022, appendix, corrected Theorem 1).

    Lap(Δ_f/ε) with Δ_f = 1 on each of the k normalised coordinates, all derived from one
    input, composes sequentially to kε; Lyu et al. (2020a) claim ε.
    """
    return _check_k(k) * check_epsilon(epsilon)


def dpnr_dropout_epsilon(k: int, epsilon: float, mu: float | np.ndarray) -> float | np.ndarray:
    """DPNR with word dropout at rate μ: ``ε′ = ln((1 − μ)·e^{kε} + μ)``.

    Lai et al. (2022), appendix, corrected Theorem 2, eq. (11). Computed as
    ``logaddexp(ln(1 − μ) + kε, ln μ)``, so it stays finite for any kε (no overflow of
    e^{kε}); μ = 0 gives kε and μ = 1 gives 0.

    Parameters
    ----------
    k : int
        Embedding dimension (1..10⁶).
    epsilon : float
        Per-coordinate ε (> 0).
    mu : float or numpy.ndarray
        Dropout rate(s) in [0, 1].

    Returns
    -------
    float or numpy.ndarray
        ε′, of the same shape as ``mu``.
    """
    keps = dpnr_true_epsilon(k, epsilon)
    scalar = np.ndim(mu) == 0
    if scalar:
        m = np.asarray([check_probability(mu, name="dropout rate μ")], dtype=np.float64)
    else:
        m = np.asarray(mu, dtype=np.float64).ravel()
        if m.size == 0 or not np.all(np.isfinite(m)) or np.any((m < 0) | (m > 1)):
            raise DPCoreError("dropout rates μ must all lie in [0, 1]")
    with np.errstate(divide="ignore"):
        out = np.logaddexp(np.log1p(-m) + keps, np.log(m))
    out = np.maximum(out, 0.0)  # ε′ ≥ 0 exactly; rounding could give −1e-17
    if scalar:
        return float(out[0])
    return out.reshape(np.shape(mu))


def dpnr_dropout_loss(
    z: np.ndarray,
    centre: np.ndarray,
    centre_prime: np.ndarray,
    centre_dropped: np.ndarray,
    epsilon: float,
    mu: float,
) -> np.ndarray:
    """Exact privacy loss ``|ln p(z | x) − ln p(z | x′)|`` of DPNR with word dropout at outputs ``z``.

    With probability μ the differing word is dropped and both sentences give the same normalised
    embedding ``centre_dropped`` (c); otherwise they give ``centre`` (a) and ``centre_prime``
    (a′). Every centre lies in [0, 1]^k and each coordinate gets Lap(1/ε), so the output density is
    ``μ·L_c + (1 − μ)·L_a`` against ``μ·L_c + (1 − μ)·L_a′``. This is the quantity the figure
    ln((1 − μ)e^{kε} + μ) of :func:`dpnr_dropout_epsilon` bounds: with r = L_a/L_a′ ≤ e^{kε} and
    s = L_c/L_a′, also r ≤ e^{kε}·s, so the ratio is at most (1 − μ)e^{kε} + μ (case s ≥ 1
    from the first bound, s < 1 from the second), with equality when c = a′ and a, a′ are
    opposite corners (z beyond a). ``z`` has shape (m, k); returns m losses.
    """
    eps = check_epsilon(epsilon)
    m = check_probability(mu, name="dropout rate μ")
    zz = np.atleast_2d(np.asarray(z, dtype=np.float64))

    def logl(c: np.ndarray) -> np.ndarray:
        return -eps * np.abs(zz - np.asarray(c, dtype=np.float64)).sum(axis=1)

    with np.errstate(divide="ignore"):
        lm, l1m = np.log(m), np.log1p(-m)
    shared = lm + logl(centre_dropped)
    num = np.logaddexp(shared, l1m + logl(centre))
    den = np.logaddexp(shared, l1m + logl(centre_prime))
    return np.abs(num - den)


def dpnr_dropout_curve(k: int, epsilon: float, *, points: int = 201) -> tuple[np.ndarray, np.ndarray]:
    """ε′ of :func:`dpnr_dropout_epsilon` on an even grid of μ ∈ [0, 1] (eq. 11 of Lai et al. 2022)."""
    n = check_int(points, name="points", min_value=2, max_value=100_000)
    mu = np.linspace(0.0, 1.0, n)
    return mu, np.asarray(dpnr_dropout_epsilon(k, epsilon, mu))


@dataclass(frozen=True)
class DPNRReport:
    """Claimed and true budgets of DPNR for one (k, ε, μ)."""

    k: int
    epsilon: float
    dropout: float
    claimed_epsilon: float
    true_epsilon: float
    true_epsilon_dropout: float
    citation: str = (
        "Lai et al. (2022), appendix revisiting Lyu et al. 2020a: corrected Theorems 1 and 2, eq. (11)"
    )

    @property
    def understatement(self) -> float:
        """How many times the true budget (with dropout) exceeds the claim."""
        return self.true_epsilon_dropout / self.claimed_epsilon

    def to_dict(self) -> dict[str, Any]:
        return {
            "k": self.k,
            "epsilon": self.epsilon,
            "dropout": self.dropout,
            "claimed_epsilon": self.claimed_epsilon,
            "true_epsilon": self.true_epsilon,
            "true_epsilon_dropout": self.true_epsilon_dropout,
            "understatement": self.understatement,
            "citation": self.citation,
        }


def dpnr_report(k: int, epsilon: float, dropout: float = 0.0) -> DPNRReport:
    """Claimed ε, true kε (corrected Theorem 1) and ε′ with dropout μ (corrected Theorem 2,
    eq. 11), all from Lai et al. (2022)."""
    kk = _check_k(k)
    eps = check_epsilon(epsilon)
    mu = check_probability(dropout, name="dropout rate μ")
    return DPNRReport(
        k=kk,
        epsilon=eps,
        dropout=mu,
        claimed_epsilon=eps,
        true_epsilon=dpnr_true_epsilon(kk, eps),
        true_epsilon_dropout=float(dpnr_dropout_epsilon(kk, eps, mu)),
    )


# --------------------------------------------------------------------------------------------
# Binary encoding + randomized response
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class BitCost:
    """One bit of the encoding of a feature.

    ``distance`` is the bound on d(B_i(v) − B_i(v′)) (Lai et al. 2022, eqs. 16, 18, 19) and
    ``place_value_epsilon = distance · claimed_epsilon`` is their per-bit figure: a loss per unit
    of distance between real values, not the bit's LDP loss (which is ``claimed_epsilon``; see
    :data:`BINARY_NOTE`).
    """

    kind: str  # "sign", "integer" or "fraction"
    index: int  # 1-based position within its kind
    claimed_epsilon: float
    distance: float
    place_value_epsilon: float
    equation: str


@dataclass(frozen=True)
class BinaryEncodingReport:
    """Per-bit and total budgets of Lyu et al. (2020b)'s binary encoding: the claim, the exact
    worst-case LDP loss, and Lai et al.'s (2022) place-value figure."""

    sign_bits: int
    int_bits: int
    frac_bits: int
    features: int
    bits: list[BitCost]
    citation: str = "Lai et al. (2022), appendix revisiting Lyu et al. 2020b: eqs. (13)–(19)"

    @property
    def claimed_per_feature(self) -> float:
        """Σ ε_i over the 1 + m + f bits of one feature (eqs. 13–14, every ΔB_i = 1)."""
        return math.fsum(b.claimed_epsilon for b in self.bits)

    @property
    def place_value_per_feature(self) -> float:
        """Σ of Lai et al.'s place-value per-bit figures (eqs. 17–19) for one feature."""
        return math.fsum(b.place_value_epsilon for b in self.bits)

    @property
    def exact_ldp_per_feature(self) -> float:
        """The exact worst-case LDP loss of one feature's bits: Σ ε_i (:func:`binary_rr_exact_ldp`)."""
        return binary_rr_exact_ldp([b.claimed_epsilon for b in self.bits])

    @property
    def exact_ldp_total(self) -> float:
        return self.features * self.exact_ldp_per_feature

    @property
    def claimed_total(self) -> float:
        """Claimed ε over the whole rl-bit string: r · claimed per feature (eq. 14)."""
        return self.features * self.claimed_per_feature

    @property
    def place_value_total(self) -> float:
        return self.features * self.place_value_per_feature

    def rows(self) -> list[dict[str, Any]]:
        return [
            {
                "kind": b.kind,
                "index": b.index,
                "claimed_epsilon": b.claimed_epsilon,
                "distance_bound": b.distance,
                "place_value_epsilon": b.place_value_epsilon,
                "equation": b.equation,
            }
            for b in self.bits
        ]

    def to_dict(self) -> dict[str, Any]:
        return {
            "sign_bits": self.sign_bits,
            "int_bits": self.int_bits,
            "frac_bits": self.frac_bits,
            "features": self.features,
            "claimed_per_feature": self.claimed_per_feature,
            "claimed_total": self.claimed_total,
            "exact_ldp_per_feature": self.exact_ldp_per_feature,
            "exact_ldp_total": self.exact_ldp_total,
            "place_value_per_feature": self.place_value_per_feature,
            "place_value_total": self.place_value_total,
            "place_value_ratio": self.place_value_total / self.claimed_total,
            "note": BINARY_NOTE,
            "bits": self.rows(),
            "citation": self.citation,
        }


#: Why the exact LDP loss and Lai et al.'s (2022) place-value figure differ (shown by the CLI and page).
BINARY_NOTE = (
    "Each bit is flipped independently by randomized response with budget ε_i, so for two inputs "
    "whose encodings differ in a set D of bits the output likelihood ratio is at most "
    "exp(Σ_{i∈D} ε_i), with equality on the output equal to the first input's encoding; over the "
    "whole encoded domain (D = every bit) the exact worst-case LDP loss is Σ ε_i — what Lyu et al. "
    "(2020b) claim. The revisit by Lai et al. (2022, eqs. 16–19) instead weights each bit by its place value "
    "(2^{i−1}, 2^{m+1}, 2^{−i}), a loss per unit of distance between the real values: two inputs "
    "that differ only in the last fraction bit lose exactly ε_i under LDP, not 2^{−i}·ε_i. Both "
    "numbers are shown; only the first is an LDP loss."
)


def binary_rr_exact_ldp(bit_epsilons: Sequence[float]) -> float:
    """Exact worst-case LDP loss of independent per-bit randomized response: Σ ε_i.

    Bit i is kept with probability e^{ε_i}/(1 + e^{ε_i}) (Warner 1965). For inputs x, x′ and an
    output y, ln Pr[y|x] − ln Pr[y|x′] = Σ_{i: x_i≠x′_i} ±ε_i, largest (Σ over the differing bits)
    at y = x; over all pairs of the encoded domain it is Σ_i ε_i. Checked against enumeration of
    every (x, x′, y) by :func:`binary_rr_exact_ldp_enumerated` in the tests.
    """
    eps = [check_epsilon(e, name="bit epsilon") for e in bit_epsilons]
    if not eps:
        raise DPCoreError("at least one bit is needed")
    return math.fsum(eps)


def binary_rr_exact_ldp_enumerated(bit_epsilons: Sequence[float]) -> float:
    """The same loss by brute force over all 2^B inputs and outputs (B ≤ 12; for tests)."""
    eps = np.asarray([check_epsilon(e, name="bit epsilon") for e in bit_epsilons], dtype=np.float64)
    b = eps.size
    if not 1 <= b <= 12:
        raise DPCoreError("enumeration takes 1 to 12 bits")
    codes = (np.arange(2**b)[:, None] >> np.arange(b)[None, :]) & 1  # (2^B, B) bit strings
    keep = -np.logaddexp(0.0, -eps)  # ln e^ε/(1+e^ε)
    flip = -np.logaddexp(0.0, eps)  # ln 1/(1+e^ε)
    same = codes[:, None, :] == codes[None, :, :]  # (x, y, bit)
    logp = np.where(same, keep, flip).sum(axis=2)  # ln Pr[y | x], shape (x, y)
    return float(np.max(logp.max(axis=0) - logp.min(axis=0)))


def binary_encoding_costs(
    *,
    sign_bits: int = 1,
    int_bits: int,
    frac_bits: int,
    bit_epsilon: float | Sequence[float],
    features: int = 1,
) -> BinaryEncodingReport:
    """Per-bit budgets of binary-encoding randomized response (Lyu et al. 2020b).

    The claim treats every bit as sensitivity 1, so the budget of the rl-bit string is Σ ε_i
    (eqs. 13–14); that is also the exact worst-case LDP loss over the encoded domain
    (:func:`binary_rr_exact_ldp`). Lai et al. (2022, appendix) weight each bit by how far
    flipping it moves the encoded value — their place-value figure, kept here as
    ``place_value_epsilon`` (a loss per unit of distance, not an LDP loss):

    - integer bit i ∈ [1, m]: d ≤ 2^{i−1}, figure 2^{i−1}·ε_i (eqs. 15–17);
    - sign bit: d ≤ 2^{m+1}, figure 2^{m+1}·ε_i (eq. 18);
    - fraction bit i ∈ [1, f]: d ≤ 2^{−i}, figure 2^{−i}·ε_i (eq. 19).

    Parameters
    ----------
    sign_bits : int
        0 or 1.
    int_bits, frac_bits : int
        m and f (0..64; at least one bit in total).
    bit_epsilon : float or sequence of float
        ε_i: one value for every bit, or one per bit in the order sign, integer 1..m,
        fraction 1..f.
    features : int
        Number r of encoded features (every total scales with r).
    """
    s = check_int(sign_bits, name="sign bits", min_value=0, max_value=1)
    m = check_int(int_bits, name="integer bits m", min_value=0, max_value=MAX_BITS)
    f = check_int(frac_bits, name="fraction bits", min_value=0, max_value=MAX_BITS)
    r = check_int(features, name="features r", min_value=1, max_value=MAX_FEATURES)
    n_bits = s + m + f
    if n_bits == 0:
        raise DPCoreError("the encoding needs at least one bit")
    if isinstance(bit_epsilon, (str, bytes)) or np.ndim(bit_epsilon) == 0:
        eps = [check_epsilon(bit_epsilon, name="bit epsilon")] * n_bits
    else:
        eps = [check_epsilon(e, name="bit epsilon") for e in bit_epsilon]  # type: ignore[union-attr]
        if len(eps) != n_bits:
            raise DPCoreError(f"bit epsilon needs 1 or {n_bits} values (one per bit), got {len(eps)}")
    bits: list[BitCost] = []
    it = iter(eps)
    if s:
        e = next(it)
        d = math.ldexp(1.0, m + 1)
        bits.append(BitCost("sign", 1, e, d, d * e, "eq. 18"))
    for i in range(1, m + 1):
        e = next(it)
        d = math.ldexp(1.0, i - 1)
        bits.append(BitCost("integer", i, e, d, d * e, "eqs. 16–17"))
    for i in range(1, f + 1):
        e = next(it)
        d = math.ldexp(1.0, -i)
        bits.append(BitCost("fraction", i, e, d, d * e, "eq. 19"))
    return BinaryEncodingReport(sign_bits=s, int_bits=m, frac_bits=f, features=r, bits=bits)
