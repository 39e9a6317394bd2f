"""The claim's ceiling: the most any attacker can win if a sanitizer's privacy claim holds.

An attacker sees the sanitized word y at a position and guesses the original word x. Whatever
its strategy g, and even when it knows the sanitizer and the distribution ρ of the original words
at the scored positions (the *secrets*), its expected top-1 success is

    Σ_y Σ_x ρ(x)·Pr[M(x)=y]·[g(y)=x]  ≤  Σ_y max_x ρ(x)·Pr[M(x)=y],

the posterior *Bayes vulnerability* of the channel (Braun, Chatzikokolakis and Palamidessi 2009,
"Quantitative notions of leakage for one-try attacks", MFPS: multiplicative Bayes leakage and
its capacity; Alvim, Chatzikokolakis, Palamidessi and Smith 2012, "Measuring information leakage
using generalized gain functions", CSF). A privacy claim bounds it without knowing the channel.

LDP (d ≡ 1 for x ≠ x′)
    Pr[M(x)=y] ≤ e^ε·Pr[M(x₀)=y] for a fixed x₀, so success ≤ e^ε·max_x ρ(x): e^ε times the
    best guess made without the sanitized word (capped at 1).
Metric LDP over groups
    The claim Pr[M(x)=y] ≤ exp(ε·d(x,x′) + ε₀)·Pr[M(x′)=y] gives, for any partition of the
    secrets into groups G with a centre x₀ and radius r(G) = max_{x∈G} d(x, x₀),

        success ≤ Σ_G min(ρ(G), max_{x∈G} ρ(x)·exp(ε·r(G) + ε₀))

    (the max over all secrets is at most the sum of the maxima over the groups; inside one
    group the claim compares every x with x₀). Removing the j − 1 heaviest secrets of a group
    and counting them by their mass keeps the bound valid (the rest has radius ≤ r(G) about the
    same centre), and the best such j is taken for every group. The minimum is taken over a
    small family of partitions: the whole set about its minimax centre, and greedy ball covers
    (heaviest uncovered secret first) at a few radii. For LDP the whole set with the best j is
    the best partition of this form. CusText's claim holds only inside one of its groups, so its
    partition is its own groups and nothing is merged across them.
Unprotected outputs
    Outputs that come from exactly one input (SanText+'s non-sensitive words released unchanged,
    w.p. 1 − p, UMLDP of Yue et al. 2021, Def. 3; CusText+'s stopwords) name the input: their
    mass Σ_x ρ(x)·Pr[unprotected | x] is added and only the protected part is bounded.
Top-k
    An attacker with k guesses wins at most e^{ε·r(G)+ε₀} times the mass of the k heaviest
    secrets of a group; the ceiling grows with k.

The bound is for an attacker who sees only the sanitized word at the position. A contextual
attacker (the masked-LM attacker, the Bayesian attacker with the masked-LM prior) reads the other
words of the sentence and so starts from a better guess than ρ: its success is not bounded by
this curve, which is therefore drawn for the mechanism-aware Bayesian attacker with the unigram
prior (:func:`dpcore.attack.bayes.bayes_attack`).

The ceiling is what the *claim* permits. A mechanism whose claim dpcore has refuted
(``privacy.refuted``) or that has no exact channel still gets it, and its rows say so: measured
success above the ceiling is then evidence against the claim, not a contradiction of this bound.

Memory stays bounded: distances are computed among the secrets only (at most a few thousand
distinct words), a block of rows at a time (``max_elements``), never over V × V.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpcore.text.sampling import DEFAULT_MAX_ELEMENTS, iter_chunks
from dpcore.validation import DPCoreError

__all__ = [
    "CEILING_DEFINITIONS",
    "CEILING_MEANING",
    "ClaimCeiling",
    "ClaimShape",
    "Secrets",
    "ceiling_crossed",
    "claim_ceiling",
    "claim_ceiling_curve",
    "claim_fields",
    "claim_shape",
    "claim_shape_on_sentences",
    "epsilon_grid",
    "ldp_success_ceiling",
    "with_claim_ceiling",
]

#: The attackers the claim's ceiling applies to: they see only the sanitized word at the position.
WORD_ONLY_ATTACKS = ("bayes-unigram",)

#: One sentence in plain words (pages, CLI output, downloads).
CEILING_MEANING = (
    "If the sanitizer's privacy claim holds, no attacker who sees only the sanitized word can "
    "guess the original word more often than the claim's ceiling, even one who knows the "
    "sanitizer and how often each word occurs here; so the defense rate should stay above the "
    "claim's floor (1 − that ceiling)."
)

#: Column definitions for downloads and the JSON output.
CEILING_DEFINITIONS = {
    "claim_success_ceiling": (
        "the claim's ceiling: the largest top-1 success any attacker who sees only the sanitized "
        "word can have if the mechanism's privacy claim holds, for the distribution ρ of the "
        "original words at the scored positions: Σ_y max_x ρ(x)·Pr[M(x)=y] (Bayes vulnerability, "
        "Braun, Chatzikokolakis and Palamidessi 2009) bounded through the claim: the mass of "
        "unprotected outputs plus min over partitions of Σ_G min(ρ(G), max_G ρ·exp(ε·r(G)+ε₀)); "
        "ε-LDP: e^ε·max_x ρ(x), capped at 1"
    ),
    "claim_defense_floor": "1 − claim_success_ceiling: the lowest defense rate the claim allows",
    "claim_ceiling_crossed": (
        "True when the Clopper–Pearson lower bound on the measured success (1 − ci_high of the "
        "defense rate) is above the claim's ceiling: evidence that the claim does not hold"
    ),
    "claim_unprotected_mass": (
        "Σ_x ρ(x)·Pr[unprotected output | x]: positions where the output names the input "
        "(SanText+ keeps non-sensitive words w.p. 1 − p; CusText+ keeps stopwords)"
    ),
    "claim_prior_best": "max_x ρ(x): the best top-1 guess without the sanitized word",
    "claim_partition": "the partition of the secrets that gave the smallest bound",
    "claim_note": (
        "the claim's scope, and whether dpcore has refuted it (the ceiling is what the claim permits)"
    ),
}


# ---------------------------------------------------------------------------------------------
# The secrets: original words at the scored positions
# ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Secrets:
    """The empirical distribution ρ of the original words at the scored positions.

    Attributes
    ----------
    ids
        Distinct word ids in V, sorted.
    counts
        Positions holding each word.
    """

    ids: np.ndarray
    counts: np.ndarray

    @classmethod
    def from_ids(cls, original_ids: Sequence[int] | np.ndarray) -> Secrets:
        """ρ from the original ids of the scored positions (one per position)."""
        x = np.asarray(original_ids, dtype=np.int64)
        if x.ndim != 1 or x.size == 0:
            raise DPCoreError("the claim's ceiling needs at least one scored position")
        if x.min() < 0:
            raise DPCoreError("scored positions must have their original word in V")
        ids, counts = np.unique(x, return_counts=True)
        return cls(ids, counts.astype(np.int64))

    @property
    def positions(self) -> int:
        """Scored positions."""
        return int(self.counts.sum())

    @property
    def probs(self) -> np.ndarray:
        """ρ(x) for every secret (sums to 1)."""
        return self.counts / float(self.counts.sum())

    def top_mass(self, k: int = 1) -> float:
        """Mass of the k most frequent secrets: the best top-k guess without the sanitized word."""
        p = np.sort(self.probs)[::-1]
        return float(p[: max(1, int(k))].sum())


def ldp_success_ceiling(probs: Sequence[float] | np.ndarray, epsilon: float, *, top_k: int = 1) -> float:
    """The closed form under ε-LDP: min(1, e^ε × mass of the ``top_k`` most frequent secrets).

    Parameters
    ----------
    probs
        ρ over the secrets (normalised here).
    epsilon
        ε ≥ 0 of the ε-LDP claim.
    top_k
        Guesses per position.
    """
    p = np.asarray(probs, dtype=np.float64)
    if p.ndim != 1 or p.size == 0 or np.any(p < 0) or p.sum() <= 0:
        raise DPCoreError("probs must be a non-empty vector of non-negative masses")
    p = np.sort(p / p.sum())[::-1]
    mass = float(p[: max(1, int(top_k))].sum())
    # min(1, e^ε·mass) as exp(min(0, ε + ln mass)): no overflow at any ε (e^ε alone overflows
    # above ε ≈ 709.78); mass > 0 here (the heaviest secret has positive mass)
    return float(math.exp(min(0.0, float(epsilon) + math.log(mass))))


# ---------------------------------------------------------------------------------------------
# Partitions of the secrets
# ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class _Partition:
    """Groups of protected secrets: ``order[starts[g]:starts[g+1]]`` (indices into the secrets,
    heaviest first inside a group) with radius ``radius[g]`` in the claim's distance."""

    name: str
    order: np.ndarray
    starts: np.ndarray
    radius: np.ndarray


def _partition(name: str, groups: Sequence[np.ndarray], radius: Sequence[float]) -> _Partition:
    sizes = np.array([len(g) for g in groups], dtype=np.int64)
    order = np.concatenate(groups).astype(np.int64) if groups else np.zeros(0, dtype=np.int64)
    starts = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    return _Partition(name, order, starts, np.asarray(radius, dtype=np.float64))


def _scope_classes(mech: Any, ids: np.ndarray) -> np.ndarray | None:
    """Per secret, the class inside which the claim holds (CusText: its group; −1: none), or None
    when the claim holds across all of V."""
    group_of = getattr(mech, "_group_of", None)  # CusText's groups (dpcore.text.custext)
    if group_of is None:
        return None
    return np.asarray(group_of, dtype=np.int64)[ids]


def _unprotected(mech: Any, ids: np.ndarray) -> np.ndarray:
    """Pr[the output is unprotected | x] per secret: released unchanged as a word no other input
    can produce (``x`` kept, and ``x`` outside the output set C)."""
    q = getattr(mech, "_replace_prob", None)
    cand = getattr(mech, "_candidates", None)
    if q is None or cand is None:
        return np.zeros(ids.size)
    outside = ~np.isin(ids, np.asarray(cand, dtype=np.int64))
    return np.where(outside, 1.0 - np.asarray(q, dtype=np.float64)[ids], 0.0)


class _Metric:
    """The claim's distance among the secrets: Euclidean over the embedding, or the mechanism's
    own ``privacy_distance`` (the Mahalanobis mechanisms' d_RM, through its whitening)."""

    def __init__(self, mech: Any, ids: np.ndarray) -> None:
        self.mech, self.ids = mech, ids
        vec = np.asarray(mech.vocab.vectors, dtype=np.float64)[ids]
        own = getattr(mech, "privacy_distance", None)
        self.pairwise = None
        if own is not None:
            half = getattr(mech, "_inv_half", None)
            if half is not None:
                vec = vec @ np.asarray(half, dtype=np.float64)
                k = min(ids.size, 8)
                check = own(ids[:k], ids[::-1][:k])
                if not np.allclose(
                    np.linalg.norm(vec[:k] - vec[::-1][:k], axis=1), check, rtol=1e-9, atol=1e-9
                ):
                    self.pairwise = own
            else:
                self.pairwise = own
        self.vec = vec
        self.sq = np.einsum("ij,ij->i", vec, vec)

    def rows(self, rows: np.ndarray) -> np.ndarray:
        """Distances (approximate in the last bits: used for membership only) from ``rows`` to
        every secret."""
        if self.pairwise is not None:
            n = self.ids.size
            d = self.pairwise(np.repeat(self.ids[rows], n), np.tile(self.ids, rows.size))
            return np.asarray(d, dtype=np.float64).reshape(rows.size, n)
        d = self.vec[rows] @ self.vec.T
        d *= -2.0
        d += self.sq[rows][:, None]
        d += self.sq[None, :]
        np.maximum(d, 0.0, out=d)
        np.sqrt(d, out=d)
        d[np.arange(rows.size), rows] = 0.0
        return d

    def exact(self, centre: int, members: np.ndarray) -> float:
        """max_{x ∈ members} d(x, centre), from difference vectors (exact 0 on the centre)."""
        if self.pairwise is not None:
            return float(np.max(self.pairwise(np.full(members.size, self.ids[centre]), self.ids[members])))
        diff = self.vec[members] - self.vec[centre]
        return float(np.sqrt(np.einsum("ij,ij->i", diff, diff)).max())


#: Quantiles of the distances from the heaviest secrets that set the ball-cover radii.
_RADIUS_QUANTILES = (0.01, 0.03, 0.1, 0.2, 0.35, 0.5)


def _metric_partitions(
    mech: Any, ids: np.ndarray, members: np.ndarray, max_elements: int
) -> list[_Partition]:
    """The whole set about its minimax centre, and greedy ball covers at a few radii."""
    metric = _Metric(mech, ids[members])
    n = members.size
    if n == 1:
        return [_partition("whole set", [members], [0.0])]
    head = metric.rows(np.arange(min(n, 64)))
    off = head[head > 0]
    radii = sorted({float(np.quantile(off, q)) for q in _RADIUS_QUANTILES}) if off.size else []
    covered = np.zeros((len(radii), n), dtype=bool)
    groups: list[list[tuple[int, np.ndarray]]] = [[] for _ in radii]
    best = (math.inf, 0)
    for sl in iter_chunks(n, n, max_elements):
        rows = np.arange(sl.start, sl.stop)
        d = metric.rows(rows)
        far = d.max(axis=1)
        i_min = int(np.argmin(far))
        if far[i_min] < best[0]:
            best = (float(far[i_min]), int(rows[i_min]))
        for li, i in enumerate(rows):
            for ri, rad in enumerate(radii):
                if covered[ri, i]:
                    continue
                mem = np.flatnonzero(~covered[ri] & (d[li] <= rad))
                mem = np.union1d(mem, [i])
                covered[ri, mem] = True
                groups[ri].append((int(i), mem))
    out = [_partition("whole set", [members], [metric.exact(best[1], np.arange(n))])]
    for rad, grp in zip(radii, groups, strict=True):
        out.append(
            _partition(
                f"balls of radius {rad:.3g}",
                [members[m] for _, m in grp],
                [metric.exact(c, m) for c, m in grp],
            )
        )
    return out


# ---------------------------------------------------------------------------------------------
# The claim's shape (everything but ε) and its ceiling
# ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class ClaimShape:
    """What a mechanism's claim says about these secrets, ε aside (built by :func:`claim_shape`).

    The claim's ε is ``scale`` × the mechanism's ε (1 for every mechanism whose ε is its claim;
    0 for the uniform baseline); ε₀, the scope classes, the distances and the unprotected
    probabilities do not depend on ε, so one shape gives the whole curve over ε.

    Attributes
    ----------
    mechanism, notion, scope, refuted
        From the mechanism's ``privacy``.
    scale
        Claim ε per unit of the mechanism's ε.
    epsilon0
        ε₀ of the claim (UMLDP: ln 1/p).
    secrets
        ρ.
    unprotected
        Pr[unprotected output | x] per secret.
    partitions
        The candidate partitions of the protected secrets.
    has_channel
        Whether the mechanism has an exact channel (the Bayesian attacker can run on it).
    """

    mechanism: str
    notion: str
    scale: float
    epsilon0: float
    secrets: Secrets
    unprotected: np.ndarray
    partitions: tuple[_Partition, ...]
    scope: str = ""
    refuted: str = ""
    has_channel: bool = True

    @property
    def unprotected_mass(self) -> float:
        """Σ_x ρ(x)·Pr[unprotected | x]."""
        return float(np.sum(self.secrets.probs * self.unprotected))

    def note(self) -> str:
        """The claim's scope and status, in one line (empty when nothing needs saying)."""
        parts = []
        if self.scope:
            parts.append(f"claim holds {self.scope}")
        if self.refuted:
            parts.append(f"claim refuted by dpcore ({self.refuted}); this is what the claim would permit")
        if not self.has_channel:
            parts.append("no exact channel: the ceiling is the claim's, not measured against it")
        return "; ".join(parts)

    def _bounds(self, part: _Partition, eps: np.ndarray, k: int) -> np.ndarray:
        """The partition's bound on the protected part, for every claim ε in ``eps``."""
        if part.order.size == 0:
            return np.zeros(eps.size)
        p = self.secrets.probs[part.order]
        u = self.unprotected[part.order]
        a = np.where(u < 1.0, p, 0.0)  # masses that can emit a protected output (the max term)
        b = p * (1.0 - u)  # protected mass (the sum term)
        ca = np.concatenate([[0.0], np.cumsum(a)])
        cb = np.concatenate([[0.0], np.cumsum(b)])
        sizes = np.diff(part.starts)
        g = np.repeat(np.arange(sizes.size), sizes + 1)  # j = 0..|G| per group
        j = np.arange(g.size) - np.repeat(np.concatenate([[0], np.cumsum(sizes + 1)[:-1]]), sizes + 1)
        s = part.starts[g]
        e = part.starts[g + 1]
        pref = cb[s + j] - cb[s]
        win = ca[np.minimum(s + j + k, e)] - ca[s + j]
        firsts = np.concatenate([[0], np.cumsum(sizes + 1)[:-1]])
        out = np.empty(eps.size)
        step = max(1, DEFAULT_MAX_ELEMENTS // max(1, g.size))
        # ln of the window's mass (0 where empty, then unused): the max term is
        # min(1, exp(ε·r(G) + ε₀)·window) = exp(min(0, ε·r(G) + ε₀ + ln window)), finite at any ε
        # (e^(ε·r) alone overflows above ≈ 709.78). Capping it at 1 leaves the group's minimum
        # unchanged: its last candidate (j = |G|, empty window) is the group's mass, at most 1.
        has = win > 0
        log_win = np.log(np.where(has, win, 1.0))
        rad = part.radius[g]
        for lo in range(0, eps.size, step):
            ev = eps[lo : lo + step]
            with np.errstate(over="ignore", invalid="ignore"):  # ε·r(G) = +∞ at the largest floats: then 1;
                # ∞·0 (radius 0) is NaN, replaced by 0 below
                spread = np.where(rad[None, :] > 0, ev[:, None] * rad[None, :], 0.0)
            term = np.exp(np.minimum(0.0, spread + self.epsilon0 + log_win[None, :]))
            val = np.where(has[None, :], term, 0.0) + pref[None, :]
            out[lo : lo + step] = np.minimum.reduceat(val, firsts, axis=1).sum(axis=1)
        return out

    def evaluate(
        self, epsilons: Sequence[float] | np.ndarray, *, top_k: int = 1
    ) -> tuple[np.ndarray, list[str]]:
        """The success ceiling at each mechanism ε, and the partition that gave it.

        Parameters
        ----------
        epsilons
            Mechanism ε values (the claim's ε is ``scale`` × each).
        top_k
            Guesses per position.
        """
        k = int(top_k)
        if k < 1:
            raise DPCoreError("top_k must be at least 1")
        eps = np.asarray([float(e) for e in epsilons], dtype=np.float64)
        if eps.ndim != 1 or np.any(~np.isfinite(eps)) or np.any(eps < 0):
            raise DPCoreError("epsilons must be finite values ≥ 0")
        with np.errstate(over="ignore"):  # the claim's ε may be +∞ at the largest floats
            claim = self.scale * eps
        table = np.vstack([self._bounds(pt, claim, k) for pt in self.partitions]) if self.partitions else None
        if table is None:
            protected, names = np.zeros(eps.size), ["none protected"] * eps.size
        else:
            best = np.argmin(table, axis=0)
            protected = table[best, np.arange(eps.size)]
            names = [self.partitions[i].name for i in best]
        total = self.unprotected_mass + protected
        # every mass counted: exactly 1 (not 1 − rounding), and never above 1
        return np.where(total > 1.0 - 1e-12, 1.0, total), names

    def ceiling(self, epsilons: Sequence[float] | np.ndarray, *, top_k: int = 1) -> np.ndarray:
        """The success ceiling at each mechanism ε (:meth:`evaluate` without the partitions)."""
        return self.evaluate(epsilons, top_k=top_k)[0]


def claim_shape_on_sentences(mech: Any, sentences: Sequence[str]) -> ClaimShape:
    """:func:`claim_shape` for the positions every attack scores on ``sentences``
    (:func:`dpcore.attack.experiment.scored_original_ids`): the one way the CLI, the comparison
    and the page build it."""
    from dpcore.attack.experiment import scored_original_ids

    return claim_shape(mech, scored_original_ids(list(sentences), mech))


def claim_shape(
    mech: Any, original_ids: Sequence[int] | np.ndarray | Secrets, *, max_elements: int = DEFAULT_MAX_ELEMENTS
) -> ClaimShape:
    """The claim's shape for ``mech`` on the secrets at the scored positions.

    Parameters
    ----------
    mech
        A text mechanism (:class:`dpcore.text.mechanisms.TextMechanism`): its ``privacy`` (notion,
        ε, ε₀, scope, refuted), its vocabulary's embedding for the distance, and for the
        exponential family its output set and keep probabilities (unprotected outputs).
    original_ids
        The original word ids of the scored positions (or :class:`Secrets`).
    max_elements
        Bound on the values of one block of distances.
    """
    sec = original_ids if isinstance(original_ids, Secrets) else Secrets.from_ids(original_ids)
    if sec.ids.max() >= len(mech.vocab):
        raise DPCoreError("secret ids must lie in [0, |V|)")
    priv = mech.privacy
    eps_m = float(mech.epsilon)
    scale = float(priv.epsilon) / eps_m if eps_m > 0 else 1.0
    u = _unprotected(mech, sec.ids)
    classes = _scope_classes(mech, sec.ids)
    live = np.flatnonzero(u < 1.0)
    if classes is not None:
        live = live[classes[live] >= 0]
    # heaviest first (ties: lower id), so prefixes remove the heaviest secrets of a group
    live = live[np.lexsort((sec.ids[live], -sec.counts[live]))]
    parts: list[_Partition] = []
    if live.size:
        if priv.notion == "LDP":
            if classes is None:
                parts.append(_partition("whole set", [live], [1.0 if live.size > 1 else 0.0]))
            else:
                cl = classes[live]
                grp = [live[cl == c] for c in dict.fromkeys(cl.tolist())]
                parts.append(
                    _partition("the mechanism's groups", grp, [1.0 if g.size > 1 else 0.0 for g in grp])
                )
        elif classes is None:
            parts += _metric_partitions(mech, sec.ids, live, max_elements)
        else:  # a metric claim inside scope classes: each class on its own (no such mechanism yet)
            cl = classes[live]
            grp = [live[cl == c] for c in dict.fromkeys(cl.tolist())]
            rad = [_Metric(mech, sec.ids[g]).exact(0, np.arange(g.size)) for g in grp]
            parts.append(_partition("the mechanism's groups", grp, rad))
    return ClaimShape(
        mechanism=str(getattr(mech, "name", type(mech).__name__)),
        notion=str(priv.notion),
        scale=scale,
        epsilon0=float(priv.epsilon0),
        secrets=sec,
        unprotected=u,
        partitions=tuple(parts),
        scope=str(getattr(priv, "scope", "") or ""),
        refuted=str(getattr(priv, "refuted", "") or ""),
        has_channel=bool(getattr(mech, "has_exact_distribution", False))
        and not bool(getattr(mech, "contextual", False)),
    )


@dataclass(frozen=True)
class ClaimCeiling:
    """The claim's ceiling at one ε (:func:`claim_ceiling`)."""

    mechanism: str
    epsilon: float
    claim_epsilon: float
    epsilon0: float
    notion: str
    top_k: int
    success_ceiling: float
    unprotected_mass: float
    prior_best: float
    partition: str
    secrets: int
    positions: int
    note: str = ""

    @property
    def defense_floor(self) -> float:
        """1 − the success ceiling: the lowest defense rate the claim allows."""
        return 1.0 - self.success_ceiling

    def to_dict(self) -> dict[str, Any]:
        """Flat ``claim_*`` fields (:data:`CEILING_DEFINITIONS`)."""
        return {
            "claim_success_ceiling": self.success_ceiling,
            "claim_defense_floor": self.defense_floor,
            "claim_epsilon": self.claim_epsilon,
            "claim_epsilon0": self.epsilon0,
            "claim_unprotected_mass": self.unprotected_mass,
            "claim_prior_best": self.prior_best,
            "claim_partition": self.partition,
            "claim_secrets": self.secrets,
            "claim_note": self.note,
        }


def _at(shape: ClaimShape, eps: float, top_k: int) -> ClaimCeiling:
    val, names = shape.evaluate([eps], top_k=top_k)
    return ClaimCeiling(
        mechanism=shape.mechanism,
        epsilon=float(eps),
        claim_epsilon=shape.scale * float(eps),
        epsilon0=shape.epsilon0,
        notion=shape.notion,
        top_k=int(top_k),
        success_ceiling=float(val[0]),
        unprotected_mass=shape.unprotected_mass,
        prior_best=shape.secrets.top_mass(top_k),
        partition=names[0],
        secrets=int(shape.secrets.ids.size),
        positions=shape.secrets.positions,
        note=shape.note(),
    )


def claim_ceiling(
    mech: Any,
    original_ids: Sequence[int] | np.ndarray | Secrets | ClaimShape,
    *,
    top_k: int = 1,
    max_elements: int = DEFAULT_MAX_ELEMENTS,
) -> ClaimCeiling:
    """The claim's ceiling for ``mech`` at its own ε (module docstring).

    Examples
    --------
    >>> import numpy as np
    >>> from dpcore.attack.ceiling import ldp_success_ceiling
    >>> round(ldp_success_ceiling(np.full(100, 0.01), 1.0), 4)  # e/100
    0.0272
    """
    shape = (
        original_ids
        if isinstance(original_ids, ClaimShape)
        else claim_shape(mech, original_ids, max_elements=max_elements)
    )
    return _at(shape, float(mech.epsilon), top_k)


def epsilon_grid(lo: float, hi: float, *, points: int = 60, include: Sequence[float] = ()) -> np.ndarray:
    """A dense, log-spaced ε grid from ``lo`` to ``hi`` (plus ``include``), sorted, distinct."""
    lo, hi = float(lo), float(hi)
    if not (lo > 0 and hi >= lo and math.isfinite(hi)):
        raise DPCoreError("the ε grid needs 0 < lo ≤ hi < ∞")
    grid = np.geomspace(lo, hi, max(2, int(points))) if hi > lo else np.array([lo])
    return np.unique(np.concatenate([grid, np.asarray(list(include), dtype=np.float64)]))


def claim_ceiling_curve(
    mech: Any,
    original_ids: Sequence[int] | np.ndarray | Secrets | ClaimShape,
    epsilons: Sequence[float] | np.ndarray,
    *,
    top_k: int = 1,
    max_elements: int = DEFAULT_MAX_ELEMENTS,
) -> dict[str, Any]:
    """The claim's ceiling over an ε grid, for ``mech``'s family (its other parameters fixed).

    Parameters
    ----------
    mech
        The mechanism at any ε (its claim's shape is read from it).
    original_ids
        The scored positions' original word ids, :class:`Secrets` or a :class:`ClaimShape`.
    epsilons
        The grid (e.g. :func:`epsilon_grid` over the plotted range).
    top_k
        Guesses per position.

    Returns
    -------
    dict
        ``mechanism``, ``epsilon``, ``success_ceiling``, ``defense_floor``, ``partition`` (lists
        over the grid), ``top_k``, ``prior_best``, ``unprotected_mass``, ``note`` and ``meaning``
        (:data:`CEILING_MEANING`).
    """
    shape = (
        original_ids
        if isinstance(original_ids, ClaimShape)
        else claim_shape(mech, original_ids, max_elements=max_elements)
    )
    eps = [float(e) for e in epsilons]
    val, names = shape.evaluate(eps, top_k=top_k)
    return {
        "mechanism": shape.mechanism,
        "epsilon": eps,
        "success_ceiling": [float(v) for v in val],
        "defense_floor": [float(1.0 - v) for v in val],
        "partition": names,
        "top_k": int(top_k),
        "prior_best": shape.secrets.top_mass(top_k),
        "unprotected_mass": shape.unprotected_mass,
        "note": shape.note(),
        "meaning": CEILING_MEANING,
    }


def ceiling_crossed(
    n_hits: int, n: int, success_ceiling: float, *, confidence: float = 0.95
) -> tuple[float, bool]:
    """The one-sided Clopper–Pearson lower bound on the success (``n_hits`` of ``n``) at
    ``confidence``, and whether it is above the claim's ceiling."""
    from dpcore.stats import cp_lower

    low = float(cp_lower(int(n_hits), int(n), 1.0 - float(confidence)))
    return low, bool(low > float(success_ceiling))


def claim_fields(
    shape: ClaimShape, epsilon: float, *, tokens: int, defended: int, confidence: float = 0.95
) -> dict[str, Any]:
    """The ``claim_*`` fields of one attack row (:data:`CEILING_DEFINITIONS`).

    ``claim_success_ci_low`` is the one-sided Clopper–Pearson lower bound on the measured
    success at level (1 + ``confidence``)/2, the same bound as ``1 − ci_high`` of the row's
    two-sided interval; ``claim_ceiling_crossed`` says whether it is above the ceiling.
    """
    out = _at(shape, float(epsilon), 1).to_dict()
    low, crossed = ceiling_crossed(int(tokens) - int(defended), int(tokens), out["claim_success_ceiling"],
                                   confidence=(1.0 + float(confidence)) / 2.0)  # fmt: skip
    if int(tokens) != shape.secrets.positions:
        raise DPCoreError(
            f"the row scores {int(tokens):,} positions but the secrets hold {shape.secrets.positions:,}"
        )
    return {**out, "claim_success_ci_low": low, "claim_ceiling_crossed": crossed}


def with_claim_ceiling(
    rows: Sequence[dict[str, Any]], shape: ClaimShape | None, *, confidence: float = 0.95
) -> list[dict[str, Any]]:
    """``rows`` with the claim's ceiling added to every row of an attacker that sees only the
    sanitized word (:data:`WORD_ONLY_ATTACKS`); other rows, and all rows when ``shape`` is None,
    are returned unchanged (copies)."""
    out = []
    for r in rows:
        r = dict(r)
        if shape is not None and r.get("attack") in WORD_ONLY_ATTACKS:
            r.update(
                claim_fields(
                    shape,
                    float(r["epsilon"]),
                    tokens=int(r["tokens"]),
                    defended=int(r["defended"]),
                    confidence=float(r.get("confidence", confidence)),
                )
            )
        out.append(r)
    return out
