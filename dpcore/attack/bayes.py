"""Mechanism-aware (Bayesian) inversion of a token sanitizer, beyond SanText's §5.3 attack.

The sanitizer is public (Kerckhoffs): an attacker who sees the sanitized word y at a position
knows the exact channel Pr[M(x)=y] of every candidate original word x ∈ V. Bayes' rule gives

    post(x | y) = prior(x)·Pr[M(x)=y] / Σ_{x'∈V} prior(x')·Pr[M(x')=y],

and the attacker's top-1 guess is the MAP word argmax_x post(x | y). Its **defense rate** (the
fraction of positions where the MAP word differs from the original, as in Yue et al. 2021, §5.3)
is compared with the masked-LM attack of :mod:`dpcore.attack.mask_inference`.

Channel (Yue et al. 2021, eq. 1 and eq. 2 / Algorithm 2)
---------------------------------------------------------
For the exact mechanisms of exponential form (``santext``, ``santext+``, ``random``, ``tem``; see
:class:`dpcore.text.mechanisms.ExponentialTokenMechanism`)

    Pr[M(x)=y] = (1 − q_x)·[y = x] + q_x·[y ∈ C]·exp(−½·ε·d(x,y)) / Z(x),
    Z(x) = Σ_{y'∈C} exp(−½·ε·d(x,y')),

with C = V, q_x = 1 for SanText; C = V_S, q_x = 1 on V_S and p on V_N for SanText+; ε = 0 for
uniform replacement; for TEM (Carvalho et al. 2023) d is replaced by min(d, γ). CusText and
CusText+ (Chen et al. 2023) have their own exact rows; their columns are read through the
mechanism's ``log_prob`` (:class:`RowChannel`). Monte-Carlo mechanisms and dp-mlm, whose rows
depend on the private line, have no channel: the attack refuses them with the reason.

The attack needs the *column* Pr[M(·)=y] for every distinct y that occurs, hence Z(x) for all
x ∈ V. Both are computed in chunks of rows with the sampler's machinery
(:func:`dpcore.text.sampling.log_weight_rows`), in float64 log space; no |V|×|V| matrix is
ever held (each chunk has at most ``max_elements`` values). Z for several ε over the same V and
C is computed from one pass over the distances (:func:`log_normalizer_table`).

Priors
------
``unigram``
    prior(x) ∝ f(x) + f_min, with f the vocabulary's public frequencies (wordfreq, the same that
    define V_S) or counts from a corpus (:func:`unigram_log_prior`); f_min (the smallest positive
    frequency) keeps every word possible.
``mlm`` (contextual; :func:`mlm_bayes_attack`)
    At each position the masked LM reads the *sanitized* sentence with that position masked and
    gives a distribution over its WordPiece vocabulary. It is mapped to V by **first piece**: a
    word x whose WordPiece split (alone, after the tokenizer's normalisation) starts with piece
    g(x) receives p_MLM(g(x) | context) shared among the words of V with the same first piece in
    proportion to their unigram prior,

        prior_k(x) = p_MLM,k(g(x)) · u(x) / Σ_{x'∈V: g(x')=g(x)} u(x').

    A word that is a single WordPiece (e.g. ``movie``) usually owns its piece alone and gets
    exactly the MLM's probability; a multi-piece word (``unwatchable`` → ``un ##watch ##able``)
    shares the probability of its first piece with the other V words starting with it (``un``,
    ``unable``, …). Every word of V gets positive mass, and the prior sums to 1 over V after
    renormalisation (the MLM's mass on pieces that start no word of V is dropped).

Top-k success
-------------
:func:`bayes_topk_attack` ranks V by post(x | y) for each distinct y (the same streamed columns)
and counts a position as a success within top-k when the original word is among the k most
probable words. The ranking is total: descending posterior, ties broken by the lower id, so
top-1 is exactly the MAP guess of :func:`bayes_attack`. Each column's k_max best words come from
one partition (the k_max-th largest value; every word above it, then the lowest ids equal to
it), never a full sort of V. The attacker who guesses k words (Tong et al., NAACL 2025, report
success within the top 10) succeeds at rate Σ_positions [rank(x) < k] / n.

Positions scored
----------------
Only positions whose *original* token is in V are scored (the positions the mechanism protects;
an out-of-vocabulary token is released as ``[UNK]`` whatever ε, and no attacker guessing in V
can name it). Both attacks are scored on the same positions. The interval is the two-sided
Clopper–Pearson interval, treating positions as independent (optimistic about precision, as in
:mod:`dpcore.attack.mask_inference`).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dpcore.logspace import logsumexp
from dpcore.memory import trim_after
from dpcore.models.masked_lm import DEFAULT_BATCH_SIZE
from dpcore.stats import cp_lower, cp_upper
from dpcore.text.mechanisms import ExponentialTokenMechanism, TextMechanism
from dpcore.text.sampling import DEFAULT_MAX_ELEMENTS, Candidates, iter_chunks, log_weight_rows
from dpcore.text.vocab import Vocabulary
from dpcore.validation import DPCoreError, check_finite_float

__all__ = [
    "AttackCounts",
    "Channel",
    "RowChannel",
    "TopKCounts",
    "bayes_attack",
    "bayes_topk_attack",
    "bayes_unsupported_reason",
    "channel_of",
    "defense_counts",
    "log_likelihood_columns",
    "log_normalizer_table",
    "mlm_bayes_attack",
    "posterior",
    "posterior_ranks",
    "prepare_channels",
    "topk_counts",
    "unigram_log_prior",
    "vocab_first_pieces",
]


# ---------------------------------------------------------------------------------------------
# The channel Pr[M(x)=y]
# ---------------------------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class Channel:
    """The exact channel of an exponential token mechanism (module docstring, eq. 1/2).

    Attributes
    ----------
    vocab
        V.
    candidates
        Ids of the output set C (sorted).
    replace_prob
        q_x for every x ∈ V.
    em_epsilon
        ε of the exponential weights (0 for uniform replacement).
    log_z
        log Z(x) for every x ∈ V (over C).
    truncate
        Distances are truncated at this value (∞; γ for TEM, Carvalho et al. 2023).
    """

    vocab: Vocabulary
    candidates: np.ndarray
    replace_prob: np.ndarray
    em_epsilon: float
    log_z: np.ndarray
    in_c: np.ndarray = field(repr=False)
    log_q: np.ndarray = field(repr=False)
    log_keep: np.ndarray = field(repr=False)
    truncate: float = math.inf


@dataclass(frozen=True, eq=False)
class RowChannel:
    """The exact channel of any other mechanism with a closed form (CusText, CusText+), read
    through its own paired ``log_prob``: column j is ``log_prob(V, y_j)`` over all x ∈ V."""

    vocab: Vocabulary
    mechanism: TextMechanism


def _exponential_parts(mech: TextMechanism) -> tuple[np.ndarray, np.ndarray, float, float] | None:
    """(C, q, ε_em, γ) when ``mech`` has the exponential form of eq. 1/2 (module docstring)."""
    if isinstance(mech, ExponentialTokenMechanism) and (
        type(mech).log_prob is ExponentialTokenMechanism.log_prob
    ):
        return (
            np.asarray(mech._candidates, dtype=np.int64),
            np.asarray(mech._replace_prob, dtype=np.float64),
            float(mech._em_epsilon),
            float(mech._truncate),
        )
    return None


def _channel_parts(mech: TextMechanism) -> tuple[np.ndarray, np.ndarray, float, float]:
    """(C, q, ε_em, γ) from the mechanism's public parameters (Yue et al. 2021, eq. 1, eq. 2;
    TEM's truncation γ, Carvalho et al. 2023, Algorithm 1)."""
    parts = _exponential_parts(mech)
    if parts is None:
        raise DPCoreError(f"{mech.name!r} does not have the exponential form of eq. 1/2")
    return parts


def bayes_unsupported_reason(mech: TextMechanism) -> str | None:
    """Why the Bayesian attack has no channel for ``mech`` (one line), or None when it has one."""
    try:
        _check_bayes_supported(mech)
    except DPCoreError as exc:
        return str(exc)
    return None


def _check_bayes_supported(mech: TextMechanism) -> None:
    if getattr(mech, "contextual", False):
        raise DPCoreError(
            f"the Bayesian attack needs Pr[M(x)=y] for every candidate x; {mech.name!r} reads the "
            "whole private line, so that column takes one language-model pass per word of V at "
            "every position (not offered): use the masked-LM attacker"
        )
    if not mech.has_exact_distribution:
        raise DPCoreError(
            f"the Bayesian attack needs the mechanism's exact output distribution; {mech.name!r} has "
            "none in closed form (Monte-Carlo only): use the masked-LM attacker"
        )


def log_normalizer_table(
    vocab: Vocabulary,
    candidates: np.ndarray,
    epsilons: Sequence[float],
    *,
    truncate: float = math.inf,
    max_elements: int = DEFAULT_MAX_ELEMENTS,
) -> np.ndarray:
    """log Z_ε(x) = log Σ_{y∈C} exp(−½·ε·min(d(x,y), γ)) for every x ∈ V and every ε (eq. 1;
    γ = ``truncate``, ∞ except for TEM).

    One chunked pass over the distances serves all ε: each chunk of rows of −½·d is computed
    once (:func:`dpcore.text.sampling.log_weight_rows` at ε = 1), shifted by its row maximum
    (the largest term of every sum is then exactly 1: no underflow at any ε) and reduced with
    one exp-sum per ε. ε = 0 gives log |C|.

    Returns
    -------
    numpy.ndarray
        Shape ``(len(epsilons), |V|)``, float64.
    """
    eps = np.asarray([float(e) for e in epsilons], dtype=np.float64)
    if eps.ndim != 1 or eps.size == 0 or not np.all(np.isfinite(eps)) or np.any(eps < 0):
        raise DPCoreError("epsilons must be a non-empty list of finite values ≥ 0")
    cand_ids = np.asarray(candidates, dtype=np.int64)
    cand = Candidates.build(vocab.vectors, vocab.sq_norms, cand_ids)
    n = len(vocab)
    out = np.empty((eps.size, n))
    all_ids = np.arange(n, dtype=np.int64)
    buf = None
    for sl in iter_chunks(n, cand_ids.size, max_elements):
        half_d = log_weight_rows(vocab.vectors, vocab.sq_norms, all_ids[sl], cand, 1.0, truncate)  # −½·d
        top = half_d.max(axis=1, keepdims=True)  # max of ε·(−½d) is ε·top for every ε > 0
        half_d -= top
        if buf is None or buf.shape != half_d.shape:
            buf = np.empty_like(half_d)
        for i, e in enumerate(eps):
            if e == 0.0:
                out[i, sl] = math.log(cand_ids.size)
                continue
            np.multiply(half_d, e, out=buf)
            np.exp(buf, out=buf)
            out[i, sl] = np.log(buf.sum(axis=1)) + e * top[:, 0]
    return out


_CHANNEL_CACHE: dict[tuple[Any, ...], tuple[Vocabulary, Channel]] = {}
_CHANNEL_CACHE_MAX = 16


def _cache_key(
    vocab: Vocabulary, cand: np.ndarray, q: np.ndarray, em: float, trunc: float
) -> tuple[Any, ...]:
    return (id(vocab), hash(cand.tobytes()), hash(q.tobytes()), float(em), float(trunc))


def channel_of(
    mech: TextMechanism, *, log_z: np.ndarray | None = None, max_elements: int = DEFAULT_MAX_ELEMENTS
) -> Channel | RowChannel:
    """The exact channel of ``mech`` (for the exponential form, with Z(x) for all x ∈ V,
    computed once and cached).

    Parameters
    ----------
    mech
        Any mechanism with a closed-form distribution that does not read the line:
        ``santext``, ``santext+``, ``random``, ``tem`` (exponential form, eq. 1/2 with TEM's
        truncation), ``custext``, ``custext+`` (their own exact ``log_prob``).
    log_z
        Precomputed log Z(x) (e.g. one row of :func:`log_normalizer_table` for a sweep).

    Raises
    ------
    DPCoreError
        For Monte-Carlo mechanisms (``feyisetan``, ``mahalanobis``, ``vickrey-*``,
        ``truncated-gumbel``) and for ``dp-mlm``, whose rows depend on the private line.
    """
    _check_bayes_supported(mech)
    parts = _exponential_parts(mech)
    if parts is None:
        return RowChannel(mech.vocab, mech)
    cand, q, em, trunc = parts
    vocab = mech.vocab
    key = _cache_key(vocab, cand, q, em, trunc)
    hit = _CHANNEL_CACHE.get(key)
    if hit is not None and hit[0] is vocab:
        return hit[1]
    if log_z is None:
        log_z = log_normalizer_table(vocab, cand, [em], truncate=trunc, max_elements=max_elements)[0]
    log_z = np.asarray(log_z, dtype=np.float64)
    if log_z.shape != (len(vocab),):
        raise DPCoreError("log_z must hold one value per word of V")
    in_c = np.zeros(len(vocab), dtype=bool)
    in_c[cand] = True
    with np.errstate(divide="ignore"):
        log_q, log_keep = np.log(q), np.log1p(-q)
    ch = Channel(vocab, cand, q, float(em), log_z, in_c, log_q, log_keep, float(trunc))
    if len(_CHANNEL_CACHE) >= _CHANNEL_CACHE_MAX:
        _CHANNEL_CACHE.pop(next(iter(_CHANNEL_CACHE)))
    _CHANNEL_CACHE[key] = (vocab, ch)  # the entry keeps ``vocab`` alive, so its id stays valid
    return ch


def prepare_channels(
    mechs: Sequence[TextMechanism], *, max_elements: int = DEFAULT_MAX_ELEMENTS
) -> list[Channel | RowChannel]:
    """Channels of many mechanisms (e.g. one per ε of a sweep), sharing distance passes.

    Mechanisms of the exponential form over the same V, C and truncation get their Z(x) from
    one :func:`log_normalizer_table`. The channels are cached, so later :func:`channel_of` calls
    for these mechanisms are free.
    """
    for m in mechs:
        _check_bayes_supported(m)
    groups: dict[tuple[int, bytes, float], list[int]] = {}
    parts = [_exponential_parts(m) for m in mechs]
    for i, (m, pt) in enumerate(zip(mechs, parts, strict=True)):
        if pt is not None:
            groups.setdefault((id(m.vocab), pt[0].tobytes(), pt[3]), []).append(i)
    out: list[Channel | RowChannel | None] = [None] * len(mechs)
    for members in groups.values():
        todo = [i for i in members if _CHANNEL_CACHE.get(_cache_key(mechs[i].vocab, *parts[i])) is None]
        if todo:
            ems = sorted({parts[i][2] for i in todo})
            cand, trunc = parts[todo[0]][0], parts[todo[0]][3]
            table = log_normalizer_table(
                mechs[todo[0]].vocab, cand, ems, truncate=trunc, max_elements=max_elements
            )
            for i in todo:
                channel_of(mechs[i], log_z=table[ems.index(parts[i][2])])
    for i, m in enumerate(mechs):
        out[i] = channel_of(m, max_elements=max_elements)
    return [c for c in out if c is not None]


def _row_channel_columns(
    channel: RowChannel, y: np.ndarray, max_elements: int
) -> Iterator[tuple[slice, np.ndarray]]:
    """Columns from the mechanism's paired ``log_prob`` (x = every word of V, y = y_j)."""
    n = len(channel.vocab)
    # CusText's log_prob holds (pairs, K) temporaries: keep pairs·K within the bound
    width = n * max(1, int(getattr(channel.mechanism, "k", 1)))
    x_all = np.arange(n, dtype=np.int64)
    for sl in iter_chunks(y.size, width, max_elements):
        ys = y[sl]
        cols = channel.mechanism.log_prob(np.tile(x_all, ys.size), np.repeat(ys, n))
        yield sl, cols.reshape(ys.size, n)


def log_likelihood_columns(
    channel: Channel | RowChannel, y: np.ndarray, *, max_elements: int = DEFAULT_MAX_ELEMENTS
) -> Iterator[tuple[slice, np.ndarray]]:
    """Exact columns ``L[j, x] = log Pr[M(x) = y_j]`` over all x ∈ V, a chunk of y at a time.

    Yields ``(slice into y, array of shape (chunk, |V|))``, float64, −inf where impossible
    (y ∉ C and y ≠ x). Distances d(y, x) = d(x, y) come from the sampler's row machinery, with
    the diagonal exactly 0.
    """
    vocab = channel.vocab
    y = np.asarray(y, dtype=np.int64)
    if y.ndim != 1 or (y.size and (y.min() < 0 or y.max() >= len(vocab))):
        raise DPCoreError("y must be a 1-D array of ids in [0, |V|)")
    if isinstance(channel, RowChannel):
        yield from _row_channel_columns(channel, y, max_elements)
        return
    n = len(vocab)
    full = Candidates.build(vocab.vectors, vocab.sq_norms, np.arange(n, dtype=np.int64))
    for sl in iter_chunks(y.size, n, max_elements):
        ys = y[sl]
        if channel.em_epsilon == 0.0:
            em = np.broadcast_to(-channel.log_z, (ys.size, n)).copy()
        else:
            em = log_weight_rows(
                vocab.vectors, vocab.sq_norms, ys, full, channel.em_epsilon, channel.truncate
            )
            em -= channel.log_z[None, :]
        em += channel.log_q[None, :]
        em[~channel.in_c[ys], :] = -np.inf
        r = np.arange(ys.size)
        em[r, ys] = np.logaddexp(em[r, ys], channel.log_keep[ys])
        yield sl, em


def unigram_log_prior(vocab: Vocabulary, counts: Mapping[str, float] | None = None) -> np.ndarray:
    """log prior(x) ∝ log(f(x) + f_min) over V (module docstring), normalised to sum 1.

    Parameters
    ----------
    vocab
        V; its ``frequency`` (public wordfreq by default) is used unless ``counts`` is given.
    counts
        Word counts from a corpus (words missing from it count 0).
    """
    if counts is None:
        f = np.asarray(vocab.frequency, dtype=np.float64)
    else:
        f = np.fromiter((float(counts.get(w, 0.0)) for w in vocab.words), dtype=np.float64, count=len(vocab))
    if not np.all(np.isfinite(f)) or np.any(f < 0):
        raise DPCoreError("unigram frequencies must be finite and non-negative")
    pos = f[f > 0]
    floor = float(pos.min()) if pos.size else 1.0
    log_u = np.log(f + floor)
    return log_u - logsumexp(log_u)


def posterior(
    channel: Channel, y: np.ndarray, log_prior: np.ndarray, *, max_elements: int = DEFAULT_MAX_ELEMENTS
) -> np.ndarray:
    """log post(x | y_j) for each y_j (rows) and all x ∈ V; rows sum to 1 in probability.

    ``log_prior`` is one prior over V (shape ``(|V|,)``) or one per row (shape ``(len(y), |V|)``).
    Returns a dense ``(len(y), |V|)`` array: for inspection and tests on small inputs; the
    attacks stream instead (:func:`bayes_attack`).
    """
    y = np.asarray(y, dtype=np.int64)
    lp = np.asarray(log_prior, dtype=np.float64)
    n = len(channel.vocab)
    if lp.shape not in {(n,), (y.size, n)}:
        raise DPCoreError("log_prior must have shape (|V|,) or (len(y), |V|)")
    out = np.empty((y.size, n))
    for sl, cols in log_likelihood_columns(channel, y, max_elements=max_elements):
        cols += lp if lp.ndim == 1 else lp[sl]
        cols -= logsumexp(cols, axis=1, keepdims=True)
        out[sl] = cols
    return out


def _map_guess(channel: Channel, y: np.ndarray, log_prior: np.ndarray, max_elements: int) -> np.ndarray:
    """argmax_x prior(x)·Pr[M(x)=y_j] for each distinct y_j (ties: the lowest id)."""
    out = np.empty(y.size, dtype=np.int64)
    for sl, cols in log_likelihood_columns(channel, y, max_elements=max_elements):
        cols += log_prior[None, :]
        out[sl] = np.argmax(cols, axis=1)
    return out


def _top_ids(scores: np.ndarray, k: int) -> np.ndarray:
    """The k best ids of each row of ``scores``, best first (descending score, ties: lower id).

    One partition per row finds the k-th largest value t; the row's top k are every id above t
    and then the lowest ids equal to t, so ties at the boundary are settled by id, not by the
    partition's order. Returns ``(rows, k)`` int64 (``k ≤ scores.shape[1]``).
    """
    rows = scores.shape[0]
    kth = -np.partition(-scores, k - 1, axis=1)[:, k - 1 : k]  # the k-th largest, (rows, 1)
    above = scores > kth
    tied = scores == kth
    room = k - above.sum(axis=1, keepdims=True)  # how many tied ids still fit
    keep = above | (tied & (np.cumsum(tied, axis=1) <= room))
    ids = np.nonzero(keep)[1].reshape(rows, k)  # row-major: ascending ids in each row
    order = np.argsort(-np.take_along_axis(scores, ids, axis=1), axis=1, kind="stable")
    return np.take_along_axis(ids, order, axis=1)


def posterior_ranks(
    channel: Channel | RowChannel,
    original_ids: np.ndarray,
    sanitized_ids: np.ndarray,
    log_prior: np.ndarray,
    k_max: int,
    *,
    max_elements: int = DEFAULT_MAX_ELEMENTS,
) -> np.ndarray:
    """Rank of each original word in the posterior of its sanitized word, capped at ``k_max``.

    rank(x | y) = #{x' : post(x' | y) > post(x | y)} + #{x' < x : post(x' | y) = post(x | y)}
    (module docstring, "Top-k success"); positions whose rank is ``k_max`` or more get
    ``k_max``. Rank 0 is the MAP guess of :func:`bayes_attack`. The columns are streamed for the
    distinct y only, a chunk at a time (never a |V|×|V| matrix); the work per position is
    O(k_max).

    Parameters
    ----------
    channel
        :func:`channel_of` the mechanism.
    original_ids, sanitized_ids
        Aligned ids in V of the scored positions.
    log_prior
        log prior over V, shape ``(|V|,)`` (any constant offset: only the order matters).
    k_max
        The largest k of interest, 1 ≤ k_max ≤ |V|.

    Returns
    -------
    numpy.ndarray
        int64 ranks in [0, k_max], one per position.
    """
    x = np.asarray(original_ids, dtype=np.int64)
    y = np.asarray(sanitized_ids, dtype=np.int64)
    n = len(channel.vocab)
    lp = np.asarray(log_prior, dtype=np.float64)
    if lp.shape != (n,):
        raise DPCoreError("log_prior must have one value per word of V")
    if x.shape != y.shape or x.ndim != 1:
        raise DPCoreError("original and sanitized ids must be aligned 1-D arrays")
    if x.size and (min(x.min(), y.min()) < 0 or max(x.max(), y.max()) >= n):
        raise DPCoreError("ids must lie in [0, |V|): score in-vocabulary positions only")
    k = int(k_max)
    if k < 1 or k > n:
        raise DPCoreError(f"k_max must lie in [1, |V|] = [1, {n:,}]")
    ranks = np.full(x.size, k, dtype=np.int64)
    if x.size == 0:
        return ranks
    uy, inv = np.unique(y, return_inverse=True)
    order = np.argsort(inv, kind="stable")  # positions grouped by distinct y
    bounds = np.searchsorted(inv[order], np.arange(uy.size + 1))
    for sl, cols in log_likelihood_columns(channel, uy, max_elements=max_elements):
        cols += lp[None, :]
        top = _top_ids(cols, k)  # (chunk, k), best first
        pos = order[bounds[sl.start] : bounds[sl.stop]]
        match = top[inv[pos] - sl.start] == x[pos, None]  # (positions, k)
        found = match.any(axis=1)
        ranks[pos[found]] = np.argmax(match[found], axis=1)
    return ranks


@dataclass
class TopKCounts:
    """Success of the Bayesian attacker who guesses its k most probable words.

    Attributes
    ----------
    attack
        ``"bayes-topk"``.
    ks
        The k reported (ascending).
    hits
        Scored positions whose original word is within the top k, one per k.
    success, ci_low, ci_high
        hits / n_tokens per k, with its two-sided Clopper–Pearson interval at ``confidence``
        (positions treated as independent, as for :class:`AttackCounts`).
    n_tokens, n_kept
        Scored positions, and those the sanitizer released unchanged.
    seconds
        Wall time.
    """

    attack: str
    ks: tuple[int, ...]
    hits: tuple[int, ...]
    success: tuple[float, ...]
    ci_low: tuple[float, ...]
    ci_high: tuple[float, ...]
    confidence: float
    n_tokens: int
    n_kept: int
    seconds: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "attack": self.attack,
            "confidence": self.confidence,
            "tokens": self.n_tokens,
            "kept_by_sanitizer": self.n_kept,
            "top_k": [
                {"k": k, "hits": h, "success": s, "ci_low": lo, "ci_high": hi}
                for k, h, s, lo, hi in zip(
                    self.ks, self.hits, self.success, self.ci_low, self.ci_high, strict=True
                )
            ],
            "seconds": self.seconds,
        }


def topk_counts(
    ranks: np.ndarray,
    kept: np.ndarray,
    ks: Sequence[int],
    *,
    attack: str = "bayes-topk",
    confidence: float = 0.95,
    seconds: float = 0.0,
) -> TopKCounts:
    """:class:`TopKCounts` from per-position ranks (:func:`posterior_ranks`)."""
    conf = check_finite_float(confidence, name="confidence", min_value=0.5, max_value=0.999999)
    r = np.asarray(ranks, dtype=np.int64)
    n = int(r.size)
    if n == 0:
        raise DPCoreError("no position to score: no original token of these sentences is in V")
    alpha = (1.0 - conf) / 2.0
    ks_t = tuple(int(k) for k in ks)
    hits = tuple(int(np.count_nonzero(r < k)) for k in ks_t)
    return TopKCounts(
        attack=attack,
        ks=ks_t,
        hits=hits,
        success=tuple(h / n for h in hits),
        ci_low=tuple(float(cp_lower(h, n, alpha)) for h in hits),
        ci_high=tuple(float(cp_upper(h, n, alpha)) for h in hits),
        confidence=conf,
        n_tokens=n,
        n_kept=int(np.asarray(kept, dtype=bool).sum()),
        seconds=round(seconds, 3),
    )


def bayes_topk_attack(
    mech: TextMechanism,
    original_ids: np.ndarray,
    sanitized_ids: np.ndarray,
    *,
    ks: Sequence[int] = (1, 10),
    log_prior: np.ndarray | None = None,
    confidence: float = 0.95,
    max_elements: int = DEFAULT_MAX_ELEMENTS,
) -> TopKCounts:
    """Top-k success of the Bayesian attack (exact channel, position-independent prior).

    The attacker lists the k words of V with the highest post(x | y) (ties: lower id) and
    succeeds when the original word is among them; k = 1 is the MAP guess of
    :func:`bayes_attack` (its success is 1 − that defense rate, on the same positions).

    Parameters
    ----------
    mech
        The (public) sanitizer, any mechanism :func:`channel_of` accepts.
    original_ids, sanitized_ids
        Aligned ids in V of the scored positions.
    ks
        The k to report (each in [1, |V|]).
    log_prior
        log prior over V (default :func:`unigram_log_prior` of ``mech.vocab``; pass
        ``unigram_log_prior(vocab, counts)`` for a corpus's own word distribution).
    """
    t0 = time.monotonic()
    n = len(mech.vocab)
    ks_sorted = sorted({int(k) for k in ks})
    if not ks_sorted or ks_sorted[0] < 1 or ks_sorted[-1] > n:
        raise DPCoreError(f"every k must lie in [1, |V|] = [1, {n:,}]")
    lp = unigram_log_prior(mech.vocab) if log_prior is None else np.asarray(log_prior, dtype=np.float64)
    channel = channel_of(mech, max_elements=max_elements)
    x = np.asarray(original_ids, dtype=np.int64)
    y = np.asarray(sanitized_ids, dtype=np.int64)
    ranks = posterior_ranks(channel, x, y, lp, ks_sorted[-1], max_elements=max_elements)
    return topk_counts(ranks, x == y, ks_sorted, confidence=confidence, seconds=time.monotonic() - t0)


# ---------------------------------------------------------------------------------------------
# Attacks
# ---------------------------------------------------------------------------------------------
@dataclass
class AttackCounts:
    """Defense rate of one attack over the scored positions (module docstring).

    Attributes
    ----------
    attack
        ``"mlm"``, ``"bayes-unigram"`` or ``"bayes-mlm"``.
    defense_rate, ci_low, ci_high, confidence
        Fraction of scored positions where the top-1 guess differs from the original, with its
        two-sided Clopper–Pearson interval.
    n_tokens, n_defended
        Scored positions (original in V) and defended ones.
    n_kept
        Scored positions whose sanitized token equals the original (``to_dict``: also their
        share, ``kept_share``).
    seconds
        Wall time.
    prior_top1
        Top-1 of the prior alone on the same positions (Bayes-MLM: the MLM's contextual prior).
    guesses
        Top-1 guess per scored position (token strings), when requested.
    """

    attack: str
    defense_rate: float
    ci_low: float
    ci_high: float
    confidence: float
    n_tokens: int
    n_defended: int
    n_kept: int
    seconds: float = 0.0
    prior_top1: float | None = None
    guesses: list[str] | None = field(default=None, repr=False)

    def to_dict(self) -> dict[str, Any]:
        return {
            "attack": self.attack,
            "defense_rate": self.defense_rate,
            "ci_low": self.ci_low,
            "ci_high": self.ci_high,
            "confidence": self.confidence,
            "tokens": self.n_tokens,
            "defended": self.n_defended,
            "kept_by_sanitizer": self.n_kept,
            # the share of positions released unchanged (SanText+ keeps many frequent words)
            "kept_share": self.n_kept / self.n_tokens if self.n_tokens else float("nan"),
            "seconds": self.seconds,
        }


def defense_counts(
    attack: str,
    hit: np.ndarray,
    kept: np.ndarray,
    *,
    confidence: float = 0.95,
    seconds: float = 0.0,
) -> AttackCounts:
    """:class:`AttackCounts` from per-position hits (True: guess = original)."""
    conf = check_finite_float(confidence, name="confidence", min_value=0.5, max_value=0.999999)
    hit = np.asarray(hit, dtype=bool)
    n = int(hit.size)
    if n == 0:
        raise DPCoreError("no position to score: no original token of these sentences is in V")
    n_def = int(n - hit.sum())
    alpha = (1.0 - conf) / 2.0
    return AttackCounts(
        attack=attack,
        defense_rate=n_def / n,
        ci_low=float(cp_lower(n_def, n, alpha)),
        ci_high=float(cp_upper(n_def, n, alpha)),
        confidence=conf,
        n_tokens=n,
        n_defended=n_def,
        n_kept=int(np.asarray(kept, dtype=bool).sum()),
        seconds=round(seconds, 3),
    )


def bayes_attack(
    mech: TextMechanism,
    original_ids: np.ndarray,
    sanitized_ids: np.ndarray,
    *,
    log_prior: np.ndarray | None = None,
    confidence: float = 0.95,
    keep_guesses: bool = False,
    max_elements: int = DEFAULT_MAX_ELEMENTS,
) -> AttackCounts:
    """The Bayesian attack with a position-independent prior (default: unigram, wordfreq).

    Parameters
    ----------
    mech
        The (public) sanitizer: ``santext``, ``santext+`` or ``random``.
    original_ids, sanitized_ids
        Aligned ids in V of the scored positions (originals in V; the sanitizer's outputs).
    log_prior
        log prior over V (default :func:`unigram_log_prior` of ``mech.vocab``).

    Returns
    -------
    AttackCounts
        The MAP guess is computed once per distinct sanitized word (vectorised over V).
    """
    t0 = time.monotonic()
    x = np.asarray(original_ids, dtype=np.int64)
    y = np.asarray(sanitized_ids, dtype=np.int64)
    n = len(mech.vocab)
    if x.shape != y.shape or x.ndim != 1:
        raise DPCoreError("original and sanitized ids must be aligned 1-D arrays")
    if x.size and (min(x.min(), y.min()) < 0 or max(x.max(), y.max()) >= n):
        raise DPCoreError("ids must lie in [0, |V|): score in-vocabulary positions only")
    lp = unigram_log_prior(mech.vocab) if log_prior is None else np.asarray(log_prior, dtype=np.float64)
    if lp.shape != (n,):
        raise DPCoreError("log_prior must have one value per word of V")
    channel = channel_of(mech, max_elements=max_elements)
    uy, inv = np.unique(y, return_inverse=True)
    guess = _map_guess(channel, uy, lp, max_elements)[inv]
    res = defense_counts(
        "bayes-unigram", guess == x, x == y, confidence=confidence, seconds=time.monotonic() - t0
    )
    if keep_guesses:
        res.guesses = [str(w) for w in mech.vocab.words[guess]]
    return res


# ---------------------------------------------------------------------------------------------
# The contextual (masked-LM) prior
# ---------------------------------------------------------------------------------------------
def vocab_first_pieces(
    tokenizer: Any, vocab: Vocabulary, log_unigram: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """First WordPiece id g(x) of every word of V, and log u(x)/Σ_{g(x')=g(x)} u(x').

    Words that the tokenizer splits into nothing get the unknown token's id.
    """
    words = [str(w) for w in vocab.words]
    enc = tokenizer(words, add_special_tokens=False)["input_ids"]
    unk = tokenizer.unk_token_id if tokenizer.unk_token_id is not None else 0
    first = np.fromiter((ids[0] if ids else unk for ids in enc), dtype=np.int64, count=len(words))
    _, grp = np.unique(first, return_inverse=True)
    u = np.exp(log_unigram - log_unigram.max())
    share = np.log(u) - np.log(np.bincount(grp, weights=u)[grp])
    return first, share


def _forward_log_probs(mlm: Any, variants: list[tuple[list[int], int]]) -> np.ndarray:
    """log-softmax of the MLM's output at the mask position of each variant (float64, numpy)."""
    from dpcore.models.masked_lm import masked_position_logits

    z = masked_position_logits(mlm, variants).astype(np.float64)
    return z - logsumexp(z, axis=-1, keepdims=True)


@dataclass
class MLMBayesOutcome:
    """Per scored position: MLM-only hit, Bayes-MLM hit, prior-only hit (one forward pass)."""

    mlm_hit: np.ndarray
    bayes_hit: np.ndarray
    prior_hit: np.ndarray
    kept: np.ndarray
    seconds: float
    forward_passes: int


def mlm_bayes_attack(
    pairs: Sequence[tuple[Sequence[str], Sequence[str]]],
    scored: Sequence[np.ndarray],
    mech: TextMechanism,
    mlm: Any,
    *,
    log_unigram: np.ndarray | None = None,
    batch_size: int = DEFAULT_BATCH_SIZE,
    use_channel: bool = True,
    progress: Callable[[int, int], None] | None = None,
    max_elements: int = DEFAULT_MAX_ELEMENTS,
) -> MLMBayesOutcome:
    """Masked-LM attack and Bayesian attack with the MLM's contextual prior, in one pass.

    Every position of every sanitized sentence is masked (as in
    :func:`dpcore.attack.mask_inference.mask_token_inference`, word unit: one mask token per
    word, the other words keep all their pieces). From the MLM's distribution at the mask:

    - **MLM top-1** (the paper's attack, §5.3): the best word-initial, non-special piece,
      compared with the original word (a word that is not one such piece cannot be hit);
    - **prior top-1**: argmax over V of the first-piece prior (module docstring);
    - **Bayes-MLM top-1**: argmax over V of prior_k(x)·Pr[M(x)=y_k].

    Parameters
    ----------
    pairs
        ``(original tokens, sanitized tokens)`` per sentence, aligned.
    scored
        Per sentence, a boolean mask of the positions to score (original in V).
    mech
        The sanitizer (its channel; ``use_channel=False`` skips it, e.g. on unsanitized text).
    mlm
        A :class:`dpcore.models.masked_lm.MaskedLM`.
    log_unigram
        log u over V for the first-piece split (default :func:`unigram_log_prior`).
    batch_size
        Masked variants per forward pass; results do not depend on it.
    progress
        ``progress(done_variants, total_variants)``.
    """
    from dpcore.attack.mask_inference import (
        VariantBuilder,
        allowed_mask,
        normalise_word,
        target_id,
        word_piece_ids,
    )

    t0 = time.monotonic()
    vocab = mech.vocab
    lu = unigram_log_prior(vocab) if log_unigram is None else np.asarray(log_unigram, dtype=np.float64)
    tok = mlm.tokenizer
    first, share = vocab_first_pieces(tok, vocab, lu)
    mlm_vocab = int(mlm.vocab_size)
    first = np.minimum(first, mlm_vocab - 1)
    allowed = allowed_mask(tok, mlm_vocab, "word")
    channel = channel_of(mech, max_elements=max_elements) if use_channel else None
    builder = VariantBuilder.for_model(mlm)

    variants: list[tuple[list[int], int]] = []
    x_ids: list[int] = []
    y_ids: list[int] = []
    mlm_target: list[int] = []
    for (orig, san), sc in zip(pairs, scored, strict=True):
        sc = np.asarray(sc, dtype=bool)
        if len(orig) != len(san) or sc.shape != (len(orig),):
            raise DPCoreError("pairs and scored masks must be aligned")
        groups = word_piece_ids(tok, list(san))
        ox, oy = vocab.ids(list(orig)), vocab.ids(list(san))
        for j in np.flatnonzero(sc):
            variants.append(builder.masked(groups, int(j)))
            x_ids.append(int(ox[j]))
            y_ids.append(int(oy[j]) if oy[j] >= 0 else -1)
            mlm_target.append(target_id(tok, normalise_word(tok, str(orig[j])), mlm_vocab, allowed))
    x = np.asarray(x_ids, dtype=np.int64)
    y = np.asarray(y_ids, dtype=np.int64)
    if x.size == 0:
        raise DPCoreError("no position to score: no original token of these sentences is in V")
    if x.min() < 0:
        raise DPCoreError("scored positions must have their original token in V")
    if use_channel and y.min() < 0:
        raise DPCoreError("scored positions must have a sanitized token in V")
    tgt = np.asarray(mlm_target, dtype=np.int64)
    order = np.argsort([len(v[0]) for v in variants], kind="stable")
    mlm_pred = np.empty(x.size, dtype=np.int64)
    prior_guess = np.empty(x.size, dtype=np.int64)
    bayes_guess = np.empty(x.size, dtype=np.int64)
    passes = 0
    with trim_after():  # one trim after the passes (dpcore.memory)
        for b in range(0, order.size, batch_size):
            idx = order[b : b + batch_size]
            lp = _forward_log_probs(mlm, [variants[v] for v in idx])
            n_out = min(lp.shape[-1], allowed.shape[0])
            mlm_pred[idx] = np.argmax(np.where(allowed[None, :n_out], lp[:, :n_out], -np.inf), axis=-1)
            prior = lp[:, first] + share[None, :]  # (batch, |V|) unnormalised log prior
            prior_guess[idx] = np.argmax(prior, axis=1)
            if channel is not None:
                uy, inv = np.unique(y[idx], return_inverse=True)
                for sl, cols in log_likelihood_columns(channel, uy, max_elements=max_elements):
                    rows = np.flatnonzero((inv >= sl.start) & (inv < sl.stop))
                    score = prior[rows] + cols[inv[rows] - sl.start]
                    bayes_guess[idx[rows]] = np.argmax(score, axis=1)
            passes += 1
            if progress is not None:
                progress(min(b + batch_size, order.size), order.size)
    return MLMBayesOutcome(
        mlm_hit=(tgt >= 0) & (mlm_pred == tgt),
        bayes_hit=bayes_guess == x if channel is not None else np.zeros(x.size, dtype=bool),
        prior_hit=prior_guess == x,
        kept=x == y,
        seconds=time.monotonic() - t0,
        forward_passes=passes,
    )
