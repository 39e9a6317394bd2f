"""Pooled tests over the vocabulary: one test for a whole family of pairs.

A flaw that is the same for every word (a k-RR sampled at 3ε while ε is claimed, a ⊥ branch
that returns the input, a pass-through path) can be invisible to every single pair: at 1,300
draws a word shows two or three outputs of itself, whatever its true rate. Summed over the
vocabulary the evidence is overwhelming. This module pools it.

Families
--------
A *pairing* σ matches screened words in disjoint pairs (σ(σ(x)) = x): nearest neighbours for
metric claims (the smallest claims), a seeded random matching and a frequency-adjacent one for
LDP. For a pairing, each family takes one output event E_x per word and the claim
c_x = c(x, σx) of the pair:

``self``
    E_x = {x}: Pr[M(x) = x] ≤ e^{c_x}·Pr[M(σx) = x] for every x.
``partner``
    E_x = {σx}: Pr[M(x) = σx] ≤ e^{c_x}·Pr[M(σx) = σx].
``outside-V``
    E = {an output outside the vocabulary (⊥, [UNK], a passed-through token)}, in the direction
    chosen for each pair on the first half of the screen's draws and counted on the second.

The statistic
-------------
With A_x = #{M(x) ∈ E_x} and B_x = #{M(σx) ∈ E_x} among the screen's m draws of each word,
and weights w_x = e^{−c_x} ∈ [0, 1], the claims imply

    E[X] = m·Σ_x w_x·Pr[M(x) ∈ E_x]  ≤  m·Σ_x Pr[M(σx) ∈ E_x] = E[Y],
    X = Σ_x w_x·A_x,   Y = Σ_x B_x.

Each count is one cell (word, output) of the screen; no cell appears twice in X or in Y. Counts
of one word's draws are multinomial, hence negatively associated, and different words are
independent (Dubhashi and Ranjan 1998, Random Structures & Algorithms 13, Prop. 7 and Thm 14),
so the moment generating functions of X and Y are bounded by the products of their terms'.
Since 1 + z ≤ e^z and e^{λw} − 1 ≤ w·(e^λ − 1) for w ∈ [0, 1], λ ≥ 0, both tails are those of a
Poisson variable of the same mean (Chernoff):

    Pr[X ≥ x] ≤ exp(−μ·h(x/μ)) for x ≥ μ,   Pr[Y ≤ y] ≤ exp(−ν·h(y/ν)) for y ≤ ν,
    h(u) = u·ln u − u + 1.

Inverting them gives a **conservative** lower confidence bound L on E[X] and upper bound U on
E[Y], each at level α/2 (Chernoff bounds of :mod:`dpcore.stats`). The family *rejects*
when L > U: then, with probability ≥ 1 − α, Σ w_x·p_x > Σ q_x, so some pair of the family has
ln p_x − ln q_x > c_x, and more precisely some pair's loss exceeds its claim by ≥ ln(L/U). The
bound is conservative, not exact (tests/test_textaudit_pooled.py checks its coverage by
simulation). The terms that carry most of the excess (w_x·A_x − B_x) are named and confirmed on
fresh draws in stage 2 of the audit.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from dpcore.pairtest.budget import AlphaBudget, per_test
from dpcore.stats import chernoff_ratio_bounds, chernoff_ratio_lower_exceeds, chernoff_ratio_upper_many
from dpcore.text.vocab import Vocabulary
from dpcore.textaudit.pairs import nearest_neighbors
from dpcore.textaudit.sampling import eligible_outputs

if TYPE_CHECKING:
    from dpcore.textaudit.engine import WordDraws

__all__ = [
    "FAMILIES",
    "FamilyTest",
    "Pairing",
    "ScreenDraws",
    "family_tests",
    "frequency_matching",
    "nearest_matching",
    "pairings_for",
    "pooled_test",
    "random_matching",
    "rejects_many",
    "uniform_power",
]

FAMILIES = ("self", "partner", "outside-V")
#: Nearest neighbours considered per word when matching by distance.
MATCH_NEIGHBOURS = 8


@dataclass(frozen=True)
class Pairing:
    """A matching of screened positions: ``partner[i]`` is i's partner (−1: unmatched)."""

    name: str
    partner: np.ndarray

    @property
    def pairs(self) -> int:
        return int((self.partner >= 0).sum() // 2)


@dataclass(frozen=True, eq=False)
class ScreenDraws:
    """Stage 1's draws: one summary (or failure) per screened word, and how they were paired.

    Attributes
    ----------
    draws:
        One :class:`~dpcore.textaudit.engine.WordDraws` per screened position (``plan.screen_ids``).
    pairings:
        The pooled tests' pairings over positions (:func:`~dpcore.textaudit.pooled.pairings_for`).
    halves:
        Draws per half (m // 2, m − m // 2).
    nn:
        Each screened word's nearest screened words (positions), or None.
    failures:
        Words whose ``sample`` raised, with the message.
    """

    draws: list[WordDraws]
    pairings: list[Pairing]
    halves: tuple[int, int]
    nn: np.ndarray | None
    failures: dict[str, str]

    @property
    def colocated(self) -> np.ndarray:
        """Pairing 0 (partner position per position): its pairs were drawn side by side."""
        return self.pairings[0].partner


def random_matching(n: int, rng: np.random.Generator) -> np.ndarray:
    """A uniformly random perfect matching of ``range(n)`` (one word left out when n is odd)."""
    perm = rng.permutation(n)
    partner = np.full(n, -1, dtype=np.int64)
    k = n - n % 2
    a, b = perm[0:k:2], perm[1:k:2]
    partner[a], partner[b] = b, a
    return partner


def frequency_matching(n: int) -> np.ndarray:
    """Positions 2i and 2i + 1 matched (the vocabulary is ordered by frequency)."""
    partner = np.full(n, -1, dtype=np.int64)
    k = n - n % 2
    idx = np.arange(k)
    partner[:k] = idx ^ 1
    return partner


def nearest_matching(
    vocab: Vocabulary, ids: np.ndarray, *, k: int = MATCH_NEIGHBOURS, nn: np.ndarray | None = None
) -> np.ndarray:
    """A matching of ``ids`` (positions) along nearest neighbours, by rounds of mutual choices.

    In each round every unmatched word points at its nearest unmatched word among its ``k``
    nearest screened words; mutual choices are matched. Words whose k neighbours are all taken
    stay unmatched. Vectorised over words; at most ``k`` + 1 rounds. ``nn``: the screened
    words' nearest screened words as positions, nearest first, when the caller has them.
    """
    ids = np.asarray(ids, dtype=np.int64)
    n = ids.size
    partner = np.full(n, -1, dtype=np.int64)
    if n < 2:
        return partner
    if nn is None:
        row_of = np.full(len(vocab), -1, dtype=np.int64)
        row_of[ids] = np.arange(n)
        nn = row_of[nearest_neighbors(vocab, ids, min(k, n - 1), among=ids)]  # positions, nearest first
    nn = np.asarray(nn, dtype=np.int64)[:, :k]
    for _ in range(nn.shape[1] + 1):
        free = partner < 0
        ok = free[nn] & free[:, None]
        has = ok.any(axis=1)
        choice = np.where(has, nn[np.arange(n), np.argmax(ok, axis=1)], -1)
        i = np.flatnonzero(choice >= 0)
        mutual = i[choice[choice[i]] == i]
        if mutual.size == 0:
            break
        partner[mutual] = choice[mutual]
    return partner


def pairings_for(
    guarantee: str,
    vocab: Vocabulary,
    ids: np.ndarray,
    rng: np.random.Generator,
    nn: np.ndarray | None = None,
) -> list[Pairing]:
    """The pairings of a screen: nearest neighbours for metric claims, random and adjacent for LDP.

    The first pairing's words are drawn side by side, so stage 1 also scores each of its pairs on
    all their outputs (:mod:`dpcore.textaudit.screen`).
    """
    n = len(ids)
    if guarantee == "metric":
        return [Pairing("nearest-neighbour", nearest_matching(vocab, ids, nn=nn))]
    return [Pairing("random", random_matching(n, rng)), Pairing("frequency-adjacent", frequency_matching(n))]


@dataclass(frozen=True)
class FamilyTest:
    """One pooled test: a family of pairs, its sums, its bounds and its verdict.

    Attributes
    ----------
    family, pairing:
        Which event family (:data:`FAMILIES`) over which pairing.
    terms:
        Pairs (directions) in the sums.
    x_sum, y_sum:
        X = Σ w·A and Y = Σ B.
    lower, upper:
        Conservative lower bound on E[X] and upper bound on E[Y], each at ``alpha``/2.
    alpha:
        This test's share of the audit's α.
    rejects:
        ``lower > upper``: some pair of the family violates its claim.
    excess_lower_bound:
        ln(lower / upper) when it rejects: some pair's loss exceeds its claim by at least this.
    top_pairs:
        The terms with the largest w·A − B (words, counts, claim), best first.
    """

    family: str
    pairing: str
    terms: int
    x_sum: float
    y_sum: float
    lower: float
    upper: float
    alpha: float
    rejects: bool
    excess_lower_bound: float
    draws_per_word: int
    top_pairs: list[dict[str, Any]] = field(default_factory=list)
    #: The terms' claims in at most 64 groups of equal size: (largest claim, terms) per group.
    claim_groups: list[tuple[float, int]] = field(default_factory=list)
    test: str = "Chernoff bounds (Poisson tails) on claim-weighted sums of counts, conservative"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def text(self) -> str:
        name = f"pooled '{self.family}' test over {self.terms:,} {self.pairing} pairs"
        if self.terms == 0:
            return f"{name}: no pair to test"
        if self.rejects:
            return (
                f"{name}: violates — some pair's loss exceeds its claim by ≥ {self.excess_lower_bound:.3g} "
                f"(Σ e^(−claim)·count ≥ {self.lower:.4g} against Σ partner count ≤ {self.upper:.4g}, "
                f"level {self.alpha:.2g})"
            )
        return (
            f"{name}: no violation detected (Σ e^(−claim)·count = {self.x_sum:.4g}, lower bound "
            f"{self.lower:.4g}; Σ partner count = {self.y_sum:.4g}, upper bound {self.upper:.4g})"
        )


def pooled_test(
    a: np.ndarray,
    b: np.ndarray,
    claims: np.ndarray,
    *,
    alpha: float,
    family: str,
    pairing: str,
    m: int,
    labels: Callable[[np.ndarray], list[dict[str, Any]]] | None = None,
    top: int = 5,
) -> tuple[FamilyTest, np.ndarray]:
    """Test Σ e^{−c}·A ≤ Σ B (module docstring) for one family.

    Parameters
    ----------
    a, b:
        Counts A_x and B_x per term (terms with an infinite claim or an unprotected event must
        already be left out by the caller).
    claims:
        c_x per term.
    alpha:
        This test's level (bounds at α/2 each).
    family, pairing:
        Names for the report.
    m:
        Draws per word behind each count.
    labels:
        ``labels(term_indices)`` → one dict per term for ``top_pairs``.
    top:
        How many of the terms carrying the excess to name.

    Returns
    -------
    (FamilyTest, indices of the named terms, best first)
    """
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    w = np.exp(-np.asarray(claims, dtype=np.float64))
    # an exactly rounded sum: the same bits for any BLAS thread count and processor (a BLAS dot
    # product splits the sum across threads, and its kernels add in their own order)
    x, y = math.fsum((w * a).tolist()), float(b.sum())
    lo, up = chernoff_ratio_bounds(x, y, alpha)
    rejects = bool(a.size and lo > up)
    excess = math.log(lo / up) if rejects else 0.0
    contrib = w * a - b
    order = np.argsort(-contrib, kind="stable")[:top]
    order = order[contrib[order] > 0]
    named = labels(order) if labels is not None and order.size else []
    fin = np.sort(np.asarray(claims, dtype=np.float64))
    groups = [(float(g[-1]), int(g.size)) for g in np.array_split(fin, min(64, fin.size))] if fin.size else []
    return (
        FamilyTest(
            family=family,
            pairing=pairing,
            terms=int(a.size),
            x_sum=x,
            y_sum=y,
            lower=lo,
            upper=up,
            alpha=float(alpha),
            rejects=rejects,
            excess_lower_bound=float(excess),
            draws_per_word=int(m),
            top_pairs=named,
            claim_groups=groups,
        ),
        order,
    )


def rejects_many(
    x: np.ndarray, y: np.ndarray, alpha: float, *, y_upper: np.ndarray | None = None
) -> np.ndarray:
    """The pooled test's rule over replicates: lower bound on E[X] > upper bound on E[Y] (α/2 each).

    ``y_upper``: the upper bounds of ``y``, ``chernoff_ratio_upper_many(y, α)``, when the caller has
    them already (the same Y for many X: :func:`uniform_power`).
    """
    x = np.asarray(x, dtype=np.float64)
    up = chernoff_ratio_upper_many(y, alpha) if y_upper is None else np.asarray(y_upper, dtype=np.float64)
    return (x > 0) & chernoff_ratio_lower_exceeds(x, up, alpha)  # the bounds' comparison, not the bounds


def uniform_power(
    claim_groups: list[tuple[float, int]],
    q: float,
    m: int,
    alpha: float,
    *,
    power: float = 0.9,
    reps: int = 1000,
    seed: int = 0,
) -> float:
    """Smallest Δ at which a *uniform* flaw is rejected by a pooled test with probability ≥ power.

    The planted flaw: every term's event has probability q under the partner and
    p_x = min(1, q·e^{c_x + Δ}) under the word itself (every pair's loss on its event is its claim
    plus Δ: a k-RR sampled at ε + Δ, a pass-through branch). X and Y are simulated from the
    terms' claims in groups (``claim_groups``: within a group every claim is taken at the group's
    largest, which lowers p·e^{−c}: the figure is conservative), and the test's own rule decides
    (the same generator state for every Δ). Returns ∞ when even Δ = 20 nats is not rejected that often
    (for instance q = 0: partners never produce the event).
    """
    if not claim_groups or not q > 0 or m <= 0:
        return math.inf
    c_g = np.array([c for c, _ in claim_groups], dtype=np.float64)
    n_g = np.array([k for _, k in claim_groups], dtype=np.int64)
    n_y = int(m * n_g.sum())
    ys = np.random.default_rng([seed, 1]).binomial(n_y, q, size=reps)
    y_upper = chernoff_ratio_upper_many(ys, alpha)  # the same Y for every Δ: bounded once

    def flagged(delta: float) -> float:
        p = np.minimum(1.0, q * np.exp(c_g + delta))
        # the same generator state for every Δ (common random numbers keep the search steady)
        counts = np.random.default_rng([seed, 2]).binomial(m * n_g, p, size=(reps, c_g.size))
        xs = (counts * np.exp(-c_g)).sum(axis=1)
        return float(rejects_many(xs, ys, alpha, y_upper=y_upper).mean())

    if flagged(20.0) < power:
        return math.inf
    if flagged(0.0) >= power:
        return 0.0
    lo, hi = 0.0, 20.0
    for _ in range(30):
        mid = 0.5 * (lo + hi)
        if flagged(mid) >= power:
            hi = mid
        else:
            lo = mid
        if hi - lo < 2e-3:
            break
    return hi


def family_tests(
    draws: list[Any],
    pairings: list[Pairing],
    ids: np.ndarray,
    *,
    vocab: Vocabulary,
    claims: Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray],
    eligible: np.ndarray | None,
    alpha: float,
    halves: tuple[int, ...],
) -> tuple[list[FamilyTest], np.ndarray]:
    """Every pooled test of a screen, and the pairs (vocabulary ids) to confirm in stage 2.

    Parameters
    ----------
    draws:
        One :class:`~dpcore.textaudit.engine.WordDraws` per screened position (summary or error).
    pairings:
        The screen's pairings over positions (the plan's partner counts follow their order).
    ids:
        Vocabulary id of each position.
    vocab, claims, eligible:
        Distances, the claim function and the protected outputs (None: all).
    alpha:
        The pooled tests' share of the audit's α, split evenly over the tests.
    halves:
        The screen's draws per half (the outside-V family selects on the first, counts the second).

    Returns
    -------
    (tests, pairs to confirm: shape (k, 2) of vocabulary ids, those of rejecting families only)
    """
    from dpcore.text.sampling import pair_distances

    n = len(draws)
    ok = np.array([d.summary is not None for d in draws], dtype=bool)
    self_c = np.zeros(n, dtype=np.int64)
    out_h = np.zeros((n, max(1, len(halves))), dtype=np.int64)
    part_c = np.zeros((n, len(pairings)), dtype=np.int64)
    for i, d in enumerate(draws):  # one small record per word
        s = d.summary
        if s is None:
            continue
        self_c[i] = s.self_count
        if s.outside_counts:
            out_h[i, : len(s.outside_counts)] = s.outside_counts
        if s.partner_counts:
            part_c[i, : len(s.partner_counts)] = s.partner_counts
    m = int(sum(halves))
    with_outside = eligible is None and len(halves) >= 2
    families = [f for f in FAMILIES if f != "outside-V" or with_outside]
    n_tests = max(1, len(pairings) * len(families))
    a_test = per_test(alpha, n_tests)
    el = (
        np.ones(len(vocab), dtype=bool)
        if eligible is None
        else np.asarray(eligible[: len(vocab)], dtype=bool)
    )
    tests: list[FamilyTest] = []
    confirm: list[np.ndarray] = []
    words = vocab.words
    for j, pairing in enumerate(pairings):
        sig = pairing.partner
        x = np.flatnonzero((sig >= 0) & ok)
        x = x[ok[sig[x]]]
        sx = sig[x]
        d = pair_distances(vocab.vectors, ids[x], ids[sx])
        c = np.asarray(claims(ids[x], ids[sx], d), dtype=np.float64)
        fin = np.isfinite(c)
        for fam in families:
            if fam == "self":
                keep = fin & el[ids[x]]
                a, b, fav, oth, mm = self_c[x], part_c[sx, j], x, sx, m
            elif fam == "partner":
                keep = fin & el[ids[sx]]
                a, b, fav, oth, mm = part_c[x, j], self_c[sx], x, sx, m
            else:  # outside V: one direction per pair, chosen on the first half
                first = x < sx
                xa, xb = x[first], sx[first]
                pick_a = out_h[xa, 0] >= out_h[xb, 0]
                fav = np.where(pick_a, xa, xb)
                oth = np.where(pick_a, xb, xa)
                keep = fin[first]
                a, b, mm = out_h[fav, 1], out_h[oth, 1], int(halves[1])
                c_f = c[first]
            cc = c if fam != "outside-V" else c_f
            a, b, cc, fav, oth = a[keep], b[keep], cc[keep], fav[keep], oth[keep]

            def label(idx: np.ndarray, fav=fav, oth=oth, a=a, b=b, cc=cc, fam=fam) -> list[dict[str, Any]]:
                ev = {"self": "x", "partner": "x'", "outside-V": "outside V"}[fam]
                return [
                    {
                        "x": str(words[ids[fav[k]]]),
                        "x_prime": str(words[ids[oth[k]]]),
                        "event": ev,
                        "count_x": int(a[k]),
                        "count_x_prime": int(b[k]),
                        "claim": float(cc[k]),
                    }
                    for k in idx
                ]

            test, top = pooled_test(
                a, b, cc, alpha=a_test, family=fam, pairing=pairing.name, m=mm, labels=label
            )
            tests.append(test)
            if test.rejects and top.size:
                confirm.append(np.stack([ids[fav[top]], ids[oth[top]]], axis=1))
    pairs = np.concatenate(confirm) if confirm else np.zeros((0, 2), dtype=np.int64)
    return tests, pairs


# --- the audit's stage -----------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class PooledOutcome:
    """The screen's pooled tests and the pairs their rejecting families name for stage 2."""

    tests: list[FamilyTest]
    pairs: np.ndarray

    @property
    def per_test_alpha(self) -> float:
        """Each pooled test's level (0 when none ran)."""
        return self.tests[0].alpha if self.tests else 0.0


def run(
    sd: ScreenDraws,
    ids: np.ndarray,
    *,
    sanitizer: Any,
    vocab: Vocabulary,
    claims: Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray],
    budget: AlphaBudget,
) -> PooledOutcome:
    """Every pooled test of the screen's draws ``sd`` (screened ids ``ids``) at the budget's pooled share."""
    tests, pairs = family_tests(
        sd.draws,
        sd.pairings,
        ids,
        vocab=vocab,
        claims=claims,
        eligible=eligible_outputs(sanitizer, len(vocab)),
        alpha=budget.pooled,
        halves=sd.halves,
    )
    return PooledOutcome(tests, pairs)
