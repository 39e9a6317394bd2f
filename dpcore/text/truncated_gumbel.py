"""The Truncated Gumbel mechanism (Carvalho, Vasiloudis and Feyisetan, FLAIRS-34, 2021).

For an input word w of a vocabulary V with Euclidean embedding distance d:

1. draw k from a Poisson distribution with mean ln(|V| − 1), truncated to k ≤ |V| − 1;
2. take the max(k, 1) nearest words of w (w itself is the nearest, at distance 0; k = 0 leaves
   only w);
3. add independent Gumbel(0, b) noise, truncated to [−Δ_max, Δ_max], to each of their distances
   and output the word with the smallest noisy distance.

The noise scale comes from the paper's calibration, with Δ_min and Δ_max the smallest positive
and the largest distance between two words of V:

    a = (ε − 2·(1 + ln|V|)/Δ_min) / 3,
    b = 2·Δ_max / min(W(2·a·Δ_max), ln(a·Δ_min))          (W: the Lambert W function).

b is a positive, finite scale only when a·Δ_min > 1, i.e. for

    ε > ε_min = (5 + 2·ln|V|) / Δ_min;

below that the calibration gives no valid noise and dpcore refuses the ε with this bound in the
message (it does not clip). With GloVe-50 at |V| = 5,000, Δ_min ≈ 0.35 and ε_min ≈ 62.

**Guarantee: none shown; the paper's claim is refuted here.** The paper states ε·d metric DP in
the Euclidean distance for this calibration. The distribution has no closed form (a random
candidate set and truncated noise), so metrics are Monte-Carlo; but the claim itself can be
checked exactly, and it fails:

**The claim fails for this algorithm: an exact certificate.** Two facts follow from steps 1–3
alone, whatever the noise: M(y) = y whenever k ≤ 1, so Pr[M(y) = y] ≥ Pr[k ≤ 1]; and M(x) can
output y only if y is among the max(k, 1) nearest words of x, so Pr[M(x) = y] ≤ Pr[k ≥ r + 1],
with r the rank of y among x's neighbours (x itself has rank 0). Hence

    ln Pr[M(y) = y] − ln Pr[M(x) = y] ≥ ln Pr[k ≤ 1] − ln Pr[k ≥ r + 1],

which grows like r·ln r, while the claim allows ε·d(x, y). :func:`loss_certificate` scans every
pair of V for the largest excess. Measured on GloVe-50 with |V| = 5,000: at ε = 70, x = ``s``,
y = ``sauce`` (d = 7.39, rank 4,994) have a certified loss of 26,851 nats against a claim of 517,
and 24,218,997 of the 24,995,000 ordered pairs exceed their claim; at ε = 1000, 18,416,969 do.
(At |V| = 400 and ε = 1000 no pair does: the certificate is a lower bound, and silence is not
privacy.) dpcore keeps the mechanism so that it can be compared and audited, prints the
refutation next to its claim wherever the claim is shown, and never calls it private.

**Calibrated from the public vocabulary.** Δ_min and Δ_max are computed over *all* pairs of
words of V (a chunked pass; no |V|×|V| matrix is held), once per vocabulary. The MLDP
library (sjmeis/MLDP, class ``TruncatedGumbel``) measures them from the distances of
*one random word* to the others. One word's nearest neighbour is at least Δ_min away, so that
overstates Δ_min, raises a, shrinks b and adds less noise than the calibration needs, and the
result changes from run to run. That behaviour is fenced as ``flawed:truncated-gumbel-one-word``
(:mod:`dpcore.flawed.text`) for the text audit; it is not offered here.

The sampler is vectorised over positions: the counts k by inverse CDF of the truncated Poisson,
the noise by inverse CDF of the truncated Gumbel (``tests/test_truncated_gumbel.py`` tests both
against their distributions, and replays the arg-min), and distances in chunks of positions.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy.special import lambertw, pdtr

from dpcore.formatting import epsilon_text
from dpcore.stats import poisson_log_tail
from dpcore.text.mechanisms import NOISY_NN_MAX_ELEMENTS, TextMechanism, TextPrivacy
from dpcore.text.registry import TEXT_MECHANISMS
from dpcore.text.sampling import distances, iter_chunks
from dpcore.text.vocab import Vocabulary
from dpcore.topk import smallest_k
from dpcore.validation import DPCoreError

__all__ = [
    "TruncatedGumbel",
    "gumbel_calibration",
    "loss_certificate",
    "minimum_epsilon",
    "vocabulary_distance_range",
]

_RANGE_CACHE: dict[int, tuple[Vocabulary, tuple[float, float]]] = {}
_RANGE_CACHE_MAX = 8


def vocabulary_distance_range(vocab: Vocabulary, *, max_elements: int = 1 << 22) -> tuple[float, float]:
    """(Δ_min, Δ_max): the smallest positive and the largest distance between two words of V.

    Every pair is visited, a chunk of rows at a time (at most ``max_elements`` distances held);
    the result is cached per vocabulary object.
    """
    hit = _RANGE_CACHE.get(id(vocab))
    if hit is not None and hit[0] is vocab:
        return hit[1]
    vec, sq = vocab.vectors, vocab.sq_norms
    n = len(vocab)
    d_min, d_max = math.inf, 0.0
    for sl in iter_chunks(n, n, max_elements):
        d = distances(vec[sl], sq[sl], vec, sq, np.arange(sl.start, sl.stop))  # own word: exactly 0
        d_max = max(d_max, float(d.max()))
        pos = d[d > 0.0]
        if pos.size:
            d_min = min(d_min, float(pos.min()))
    if not math.isfinite(d_min):
        raise DPCoreError("every word of V has the same embedding: no positive distance")
    if len(_RANGE_CACHE) >= _RANGE_CACHE_MAX:
        _RANGE_CACHE.pop(next(iter(_RANGE_CACHE)))
    _RANGE_CACHE[id(vocab)] = (vocab, (d_min, d_max))
    return d_min, d_max


def minimum_epsilon(vocab_size: int, d_min: float) -> float:
    """ε_min = (5 + 2·ln|V|)/Δ_min: the calibration gives a valid scale b only above it."""
    return (5.0 + 2.0 * math.log(vocab_size)) / d_min


def gumbel_calibration(epsilon: float, vocab_size: int, d_min: float, d_max: float) -> tuple[float, float]:
    """(a, b) of Carvalho et al. (2021) (module docstring); raises below :func:`minimum_epsilon`."""
    a = (epsilon - 2.0 * (1.0 + math.log(vocab_size)) / d_min) / 3.0
    if not a * d_min > 1.0:
        raise DPCoreError(
            f"truncated-gumbel is calibrated only for ε > (5 + 2·ln|V|)/Δ_min = "
            f"{minimum_epsilon(vocab_size, d_min):.4g} on this vocabulary (|V| = {vocab_size:,}, "
            f"Δ_min = {d_min:.4g}); ε = {epsilon_text(epsilon)} gives no positive noise scale"
        )
    den = min(float(lambertw(2.0 * a * d_max).real), math.log(a * d_min))
    return a, 2.0 * d_max / den


def loss_certificate(mech: TruncatedGumbel, *, max_elements: int = 1 << 22) -> dict[str, Any]:
    """The pair of V with the largest certified excess of privacy loss over the ε·d claim.

    For every ordered pair (x, y), x ≠ y: the certified loss ln Pr[k ≤ 1] − ln Pr[k ≥ r + 1]
    (module docstring; the truncation of k at |V| − 1 is accounted in both terms), minus the
    claim ε·d(x, y). Rows are visited in chunks; each chunk sorts its distance rows.

    Returns
    -------
    dict
        ``x``, ``y``, ``distance``, ``rank``, ``certified_loss``, ``claimed``, ``excess`` (> 0:
        the claim is false for this pair) and ``violating_pairs`` (how many ordered pairs have a
        positive excess), with ``epsilon`` and ``vocab_size``.
    """
    from scipy.stats import poisson  # scipy.stats costs 0.3 s: only when needed

    vocab = mech.vocab
    n, mu = len(vocab), mech.poisson_mean
    log_f = math.log(poisson.cdf(n - 1, mu))
    log_keep = math.log(poisson.cdf(1, mu)) - log_f
    # Pr[r + 1 ≤ k ≤ n − 1] ≤ Pr[k ≥ r + 1], divided by the truncation mass F
    log_tail = poisson_log_tail(np.arange(1, n + 1), mu) - log_f
    vec, sq = vocab.vectors, vocab.sq_norms
    best: dict[str, Any] = {"excess": -math.inf}
    violating = 0
    for sl in iter_chunks(n, n, max_elements):
        d = distances(vec[sl], sq[sl], vec, sq, np.arange(sl.start, sl.stop))
        r = np.arange(sl.stop - sl.start)
        d[r, r + sl.start] = -1.0  # x itself: rank 0
        order = np.lexsort((np.broadcast_to(np.arange(n), d.shape), d), axis=1)
        rank = np.empty_like(order)
        np.put_along_axis(rank, order, np.arange(n)[None, :], axis=1)
        d[r, r + sl.start] = 0.0
        excess = log_keep - log_tail[rank] - mech.epsilon * d
        excess[r, r + sl.start] = -math.inf
        violating += int((excess > 0).sum())
        i, j = np.unravel_index(int(np.argmax(excess)), excess.shape)
        if excess[i, j] > best["excess"]:
            best = {
                "x": str(vocab.words[i + sl.start]),
                "y": str(vocab.words[j]),
                "distance": float(d[i, j]),
                "rank": int(rank[i, j]),
                "certified_loss": float(log_keep - log_tail[rank[i, j]]),
                "claimed": float(mech.epsilon * d[i, j]),
                "excess": float(excess[i, j]),
            }
    return best | {"violating_pairs": violating, "epsilon": mech.epsilon, "vocab_size": n}


@TEXT_MECHANISMS.register(
    "truncated-gumbel",
    display="Truncated Gumbel",
    summary="Truncated Gumbel: noisy distances to a Poisson-sized set of nearest words; ε·d claim refuted.",
    citation="Carvalho, Vasiloudis, Feyisetan 2021 (FLAIRS-34), Truncated Gumbel mechanism",
    tags=("refuted",),
)
class TruncatedGumbel(TextMechanism):
    """Truncated Gumbel mechanism (Carvalho et al. 2021), Monte-Carlo distribution.

    See the module docstring for the algorithm, the calibration of a and b from the whole public
    vocabulary, and ε_min.

    Parameters
    ----------
    vocab:
        The vocabulary V with its embedding.
    epsilon:
        ε per unit of Euclidean embedding distance; must exceed (5 + 2·ln|V|)/Δ_min.
    """

    name = "truncated-gumbel"
    has_exact_distribution = False

    def __init__(self, *, vocab: Vocabulary, epsilon: float) -> None:
        super().__init__(vocab=vocab, epsilon=epsilon)
        if len(vocab) < 2:
            raise DPCoreError("truncated-gumbel needs at least 2 words")
        self.d_min, self.d_max = self._distance_range()
        self.a, self.b = gumbel_calibration(self.epsilon, len(vocab), self.d_min, self.d_max)
        self.poisson_mean = math.log(len(vocab) - 1)
        self.max_neighbours = len(vocab) - 1

    def _distance_range(self) -> tuple[float, float]:
        return vocabulary_distance_range(self.vocab)

    @classmethod
    def minimum_epsilon(cls, vocab: Vocabulary) -> float:
        """(5 + 2·ln|V|)/Δ_min on this vocabulary (ε must exceed it)."""
        return minimum_epsilon(len(vocab), vocabulary_distance_range(vocab)[0])

    @property
    def privacy(self) -> TextPrivacy:
        return TextPrivacy(
            "metric DP",
            self.epsilon,
            0.0,
            f"Euclidean {self.vocab.embedding} distance",
            "claimed by Carvalho et al. 2021",
            refuted=(
                "an exact bound, ln Pr[k ≤ 1] − ln Pr[k ≥ r + 1], exceeds ε·d for far-ranked pairs "
                "(dpcore.text.truncated_gumbel.loss_certificate)"
            ),
        )

    def params(self) -> dict[str, Any]:
        return super().params() | {
            "d_min": self.d_min,
            "d_max": self.d_max,
            "a": self.a,
            "b": self.b,
            "poisson_mean": self.poisson_mean,
            "epsilon_min": minimum_epsilon(len(self.vocab), self.d_min),
        }

    # --- the two random ingredients (tested against their distributions) --------------------
    def neighbour_counts(self, n: int, rng: np.random.Generator) -> np.ndarray:
        """k ~ Poisson(ln(|V| − 1)) truncated to k ≤ |V| − 1, by inverse CDF (n draws).

        u ~ U[0, F(|V| − 1)), k the smallest count with F(k) ≥ u: a ``searchsorted`` in the table
        of F (``scipy.special.pdtr``) over 0..|V| − 1, computed once per sanitizer. It gives the
        counts ``scipy.stats.poisson.ppf`` gives (checked on 25 million draws at five |V|), at a
        hundredth of its cost.
        """
        cdf = self._poisson_cdf()
        u = rng.random(n) * cdf[-1]
        return np.minimum(np.searchsorted(cdf, u, side="left"), self.max_neighbours).astype(np.int64)

    def _poisson_cdf(self) -> np.ndarray:
        """F(k) = Pr[Poisson(ln(|V| − 1)) ≤ k] for k = 0..|V| − 1 (read-only, computed once)."""
        table = getattr(self, "_cdf_table", None)
        if table is None:
            table = pdtr(np.arange(self.max_neighbours + 1, dtype=np.float64), self.poisson_mean)
            table.flags.writeable = False
            self._cdf_table = table
        return table

    def noise(self, n: int, rng: np.random.Generator) -> np.ndarray:
        """n draws of Gumbel(0, b) truncated to [−Δ_max, Δ_max], by inverse CDF."""
        b, bound = self.b, self.d_max
        lo = math.exp(-math.exp(min(bound / b, 700.0)))
        hi = math.exp(-math.exp(-bound / b))
        u = lo + rng.random(n) * (hi - lo)
        with np.errstate(divide="ignore", over="ignore"):
            g = -b * np.log(-np.log(u))
        return np.clip(np.nan_to_num(g, nan=-bound), -bound, bound)

    # --- sampling ----------------------------------------------------------------------------
    def sample_ids(
        self, ids: np.ndarray, rng: np.random.Generator, *, max_elements: int = NOISY_NN_MAX_ELEMENTS
    ) -> np.ndarray:
        """One draw per position; the counts, then all noise, are drawn first (chunk-independent).

        The sorted neighbour lists are computed once per *distinct* input word (as deep as the
        largest count any of its positions drew), then every position adds its noise to its own
        prefix of that list: distances cost |distinct words|·|V|, not |positions|·|V|.
        """
        ids = self._check_ids(ids)
        n, n_v = ids.size, len(self.vocab)
        out = np.empty(n, dtype=np.int64)
        if n == 0:
            return out
        size = np.maximum(self.neighbour_counts(n, rng), 1)  # candidates per position, incl. w
        offsets = np.concatenate(([0], np.cumsum(size)))
        g_flat = self.noise(int(offsets[-1]), rng)
        uniq, inv = np.unique(ids, return_inverse=True)
        depth = np.zeros(uniq.size, dtype=np.int64)
        np.maximum.at(depth, inv, size)
        kmax = int(depth.max())
        near = np.empty((uniq.size, kmax), dtype=np.int64)
        dist = np.full((uniq.size, kmax), np.inf)
        vec, sq = self.vocab.vectors, self.vocab.sq_norms
        for sl in iter_chunks(uniq.size, n_v, max_elements):
            x = uniq[sl]
            r = np.arange(x.size)
            d = distances(vec[x], sq[x], vec, sq, x)
            d[r, x] = -1.0  # w sorts first, even next to a word with the same embedding
            k = min(int(depth[sl].max()), n_v)
            cand = smallest_k(d, k)  # ties by position: the same on every processor
            dk = np.take_along_axis(d, cand, axis=1)
            order = np.lexsort((cand, dk), axis=1)  # by distance, then id: the max(k,1) nearest
            near[sl, :k] = np.take_along_axis(cand, order, axis=1)
            dist[sl, :k] = np.maximum(np.take_along_axis(dk, order, axis=1), 0.0)
        # positions, in chunks of at most max_elements (position × rank) entries
        for sl in iter_chunks(n, kmax, max_elements):
            c = size[sl]
            cm = int(c.max())
            rows_u = inv[sl]
            noisy = np.full((sl.stop - sl.start, cm), np.inf)
            rows, cols = np.nonzero(np.arange(cm)[None, :] < c[:, None])
            noisy[rows, cols] = dist[rows_u[rows], cols] + g_flat[offsets[sl.start + rows] + cols]
            out[sl] = near[rows_u, np.argmin(noisy, axis=1)]
        return out
