"""The whole-vocabulary screen: stage 1 of ``audit_text(strategy="screen")``.

Every screened word x gets m draws of M(x) (:mod:`dpcore.textaudit.engine`), reduced at once to
a :class:`~dpcore.textaudit.engine.WordSummary`: its t most frequent outputs with their counts,
its count of itself, and a *residual* bound on the count of any output not listed. Memory is
O(|words| · t) whatever m is, and no |V| × |V| array is ever built.

Candidate pairs
---------------
- **Neighbours** (metric claims grow with d, so close words have the smallest claims): each word
  with its ``neighbors`` nearest screened words.
- **Random partners**: each word with ``random_partners`` uniform screened words (an ε-LDP claim
  is the same for every pair, so any partner that rarely produces x's outputs will do).
- **Per-output extremes** (ε-LDP's worst events are single outputs): for each output y listed by
  some word, the word that produced y most often (its *top producer*), against the
  :data:`LOW_RESIDUAL_PARTNERS` words with the smallest residual bound (the words least likely to
  have produced y unnoticed) and the :data:`BOTTOM_PRODUCERS` words that list y with the smallest
  counts (a word whose few outputs are all listed shows exactly how rarely it produced y).

Pilot score
-----------
For a pair (x, x′) and each output y listed by x (and x itself), the shrunk log-ratio
ln CP⁻(c_x(y); m, 0.05) − ln CP⁺(ĉ_x′(y); m, 0.05), where ĉ_x′(y) is x′'s count when y is listed
for x′ (or is x′ itself) and its residual bound otherwise (so the score never overstates the
ratio); the same the other way round; the pair's score is the largest over y and both directions
minus its claimed bound. The K highest-scoring distinct pairs go to stage 2, which draws fresh
samples and alone decides the verdict (Bonferroni over K). The screen only proposes.

The claim of each pair comes from the sanitizer (ε, ε·d, or its own ``claimed_bound``); outputs
outside the protected set (SanText+'s V_P) are never used as events.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from dpcore.pairtest.estimator import best_prefix_event, estimate_direction
from dpcore.rng import cell_seed_sequence
from dpcore.stats import log_cp_lower, log_cp_upper
from dpcore.text.sampling import iter_chunks, pair_distances
from dpcore.text.vocab import Vocabulary
from dpcore.textaudit.engine import DrawPlan, WordDraws
from dpcore.textaudit.pairs import nearest_neighbors
from dpcore.textaudit.pooled import MATCH_NEIGHBOURS, ScreenDraws, pairings_for
from dpcore.textaudit.sampling import OutputCodebook, SegmentCounts, eligible_outputs
from dpcore.validation import DPCoreError


class ScreenPlan(Protocol):
    """What the screen reads of the audit's plan (:class:`dpcore.textaudit.plan.AuditPlan` has it):
    a structural type, so the screen sits below the plan that sizes it and imports nothing of it."""

    screen_ids: np.ndarray | None
    m_screen: int
    pairs: int
    neighbors: int
    seed: int
    workers: int
    vocab_size: int
    screen_budget: int
    screen_minutes: float
    fitted: bool

    def pairs_rng(self) -> np.random.Generator: ...


__all__ = [
    "DEFAULT_SCREEN_BUDGET",
    "MIN_SCREEN_DRAWS",
    "SCREEN_ALPHA",
    "SCREEN_TOP",
    "ScreenProposal",
    "draws_per_word",
    "propose_pairs",
]

#: Total draws of stage 1 by default (all words together).
DEFAULT_SCREEN_BUDGET = 20_000_000
#: Fewest draws per word the screen accepts (below it, single outputs cannot stand out).
MIN_SCREEN_DRAWS = 200
#: Most draws per word the screen uses (more goes to stage 2 instead).
MAX_SCREEN_DRAWS = 1_000_000
#: Outputs kept per word in the summary.
SCREEN_TOP = 16
#: One-sided level of the per-output bounds that score a pair (a ranking device, not a test).
SCREEN_ALPHA = 0.05
#: Random partners per word.
RANDOM_PARTNERS = 2
#: Pairs named by a rejecting pooled family that go on to stage 2 (per family).
POOLED_CONFIRM = 5
#: Screened words besides the confirmed pairs' whose counts the declaration test looks at.
DECLARATION_SPREAD = 64
#: Per listed output, its top producer is paired with this many lowest-residual words …
LOW_RESIDUAL_PARTNERS = 8
#: … and with this many of the words that list the output with the smallest counts.
BOTTOM_PRODUCERS = 8
#: Chance that a rerun's K-th score exceeds :attr:`ScreenProposal.kth_upper` (tail model).
THRESHOLD_MISS = 0.05
#: Fewest top word scores the tail model of the K-th score is fitted to.
TAIL_WORDS = 30
#: One-sided level of the lower confidence bound on the tail's decay rate.
TAIL_RATE_ALPHA = 0.1


def draws_per_word(n_words: int, budget: int) -> int:
    """m = budget // words, capped at :data:`MAX_SCREEN_DRAWS`; an error below the minimum."""
    m = min(MAX_SCREEN_DRAWS, budget // max(1, n_words))
    if m < MIN_SCREEN_DRAWS:
        raise DPCoreError(
            f"a screen budget of {budget:,} draws gives {m} draws to each of {n_words:,} words; the "
            f"screen needs at least {MIN_SCREEN_DRAWS}: raise the budget to {MIN_SCREEN_DRAWS * n_words:,} "
            "or screen fewer words"
        )
    return int(m)


@dataclass(frozen=True)
class ScreenProposal:
    """What stage 1 proposes.

    Attributes
    ----------
    pairs:
        Vocabulary ids of the K best pairs, best first, shape (K, 2).
    scores:
        Their pilot scores (pilot lower bound − claim).
    candidates:
        Distinct candidate pairs scored.
    word_scores:
        Per screened word (same order as the screened ids), the best pilot score of a candidate
        pair in the direction that favours it, i.e. with the event made of its own outputs (−∞
        for a word that failed).
    residual_median:
        Median residual bound over screened words.
    events:
        Per proposed pair, the single output that gave it its score: (favoured word's id, output
        code), or (−1, −1) when the score came from all outputs of a co-located pair. Stage 2
        tests that event on all its fresh draws besides the event it selects itself.
    residual_max:
        Largest residual bound of a screened word (the power statement scores a partner's
        unlisted output at it, whichever word the partner is).
    kth_upper:
        An upper (1 − :data:`THRESHOLD_MISS`) quantile of the K-th score of a rerun of the screen
        (:func:`kth_score_upper`): the bar the power statement makes a flawed pair clear.
    """

    pairs: np.ndarray
    scores: np.ndarray
    candidates: int
    word_scores: np.ndarray
    residual_median: float
    events: np.ndarray | None = None
    residual_max: float = 0.0
    kth_upper: float = -math.inf


def propose_pairs(
    draws: list[WordDraws],
    *,
    vocab: Vocabulary,
    m: int,
    k_pairs: int,
    neighbors: int,
    rng: np.random.Generator,
    label_code: Callable[[str], int],
    n_codes: int,
    claims: Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray],
    eligible: np.ndarray | None,
    colocated: np.ndarray | None = None,
    nn: np.ndarray | None = None,
) -> ScreenProposal:
    """Score candidate pairs from the screen's summaries and return the ``k_pairs`` best.

    Parameters
    ----------
    draws:
        One :class:`WordDraws` with a summary (or an error) per screened word.
    vocab:
        The vocabulary (ids, vectors for neighbours and distances).
    m:
        Draws per word.
    k_pairs:
        How many pairs to propose.
    neighbors:
        Nearest screened neighbours per word.
    rng:
        For the random partners.
    label_code:
        Global code of an output outside the vocabulary, from its label.
    n_codes:
        Codes in use (vocabulary and other outputs), after every label was coded.
    claims:
        ``claims(x_ids, x′_ids, distances)`` → claimed bound per pair.
    eligible:
        Mask over codes of the outputs the guarantee covers (None: all).
    colocated:
        Pairing 0 over the positions of ``draws`` (partner position, −1: none): these pairs are
        candidates too, and their score is also taken from all outputs (``pair_lower``).
    nn:
        The screened words' nearest screened words (positions of ``draws``, nearest first, at
        least ``neighbors`` columns), when the caller has them.
    """
    ok = [d for d in draws if d.summary is not None]
    pos_all = np.full(len(draws), -1, dtype=np.int64)
    okmask = np.array([d.summary is not None for d in draws], dtype=bool)
    pos_all[okmask] = np.arange(int(okmask.sum()))
    n = len(ok)
    word_scores = np.full(len(draws), -np.inf)
    if n < 2:
        return ScreenProposal(np.zeros((0, 2), dtype=np.int64), np.zeros(0), 0, word_scores, 0.0)
    wids = np.array([d.wid for d in ok], dtype=np.int64)
    t = max(len(d.summary.codes) for d in ok)  # type: ignore[union-attr]
    # one row per word: its listed outputs (global codes) and counts, then itself
    codes = np.full((n, t + 1), -1, dtype=np.int64)
    counts = np.zeros((n, t + 1), dtype=np.int64)
    residual = np.empty(n, dtype=np.int64)
    for r, d in enumerate(ok):
        s = d.summary
        assert s is not None
        c = np.asarray(
            [int(x) if x >= 0 else label_code(s.labels[-1 - int(x)]) for x in s.codes], dtype=np.int64
        )
        codes[r, : c.size] = c
        counts[r, : c.size] = s.counts
        codes[r, t] = d.wid
        counts[r, t] = s.self_count
        residual[r] = s.residual
    listed = codes >= 0
    # sorted keys (row, code) → count for exact look-ups; anything else is bounded by the residual
    key = np.where(listed, np.arange(n)[:, None] * n_codes + np.maximum(codes, 0), -1).ravel()
    val = counts.ravel()
    sel = key >= 0
    key, val = key[sel], val[sel]
    order = np.argsort(key, kind="stable")
    key, val = key[order], val[order]
    uniq = np.ones(key.size, dtype=bool)
    uniq[1:] = key[1:] != key[:-1]
    key, val = key[uniq], val[uniq]

    def lookup(rows: np.ndarray, cds: np.ndarray) -> np.ndarray:
        q = rows * n_codes + cds
        at = np.minimum(np.searchsorted(key, q), key.size - 1)
        hit = key[at] == q
        return np.where(hit, val[at], residual[rows])

    log_lo, log_hi = _score_tables(counts, np.minimum(residual, m), m)
    usable = listed & (counts > 0)
    if eligible is not None:
        el = np.zeros(n_codes, dtype=bool)
        el[: eligible.size] = eligible
        usable &= el[np.maximum(codes, 0)]

    pairs = _candidate_rows(
        vocab,
        wids,
        neighbors,
        nn,
        pos_all,
        okmask,
        rng,
        codes[usable],
        counts[usable],
        np.nonzero(usable)[0],
        residual,
        colocated,
    )
    agg_lower = np.array([d.summary.pair_lower for d in ok], dtype=np.float64)  # type: ignore[union-attr]

    # --- scores ---
    ids_a, ids_b = wids[pairs[:, 0]], wids[pairs[:, 1]]
    dist = pair_distances(vocab.vectors, ids_a, ids_b)
    claim = np.asarray(claims(ids_a, ids_b, dist), dtype=np.float64)
    best = np.full((len(pairs), 2), -np.inf)  # per direction: pairs[:, 0] favoured, then [:, 1]
    best_code = np.full((len(pairs), 2), -1, dtype=np.int64)
    # chunks of 2**18 (pair, output) cells per side: each of the ten temporaries below holds
    # 2 MiB, not 8 (the issue-60 memory walk: the SanText+ screen's peak fell by about 60 MiB)
    for sl in iter_chunks(len(pairs), 2 * (t + 1), 1 << 19):
        p = pairs[sl]
        for side, (fav, oth) in enumerate(((p[:, 0], p[:, 1]), (p[:, 1], p[:, 0]))):
            c_fav = counts[fav]  # (P, t+1)
            cds = codes[fav]
            c_oth = lookup(np.repeat(oth, t + 1).reshape(-1, t + 1), np.maximum(cds, 0))
            s = log_lo[c_fav] - log_hi[np.minimum(c_oth, m)]
            s = np.where(usable[fav], s, -np.inf)
            arg = np.argmax(s, axis=1)
            best[sl, side] = s[np.arange(len(p)), arg]
            best_code[sl, side] = cds[np.arange(len(p)), arg]
    # co-located pairs: the score on all outputs (first half selects, second half bounds)
    agg = np.stack([agg_lower[pairs[:, 0]], agg_lower[pairs[:, 1]]], axis=1)
    agg = np.where(np.isnan(agg), -np.inf, agg)
    from_agg = agg > best
    best = np.maximum(best, agg)
    best_code = np.where(from_agg, -1, best_code)
    with np.errstate(invalid="ignore"):
        excess = np.where(np.isfinite(claim)[:, None], best - claim[:, None], -np.inf)
    excess = np.where(np.isnan(excess), -np.inf, excess)
    score = excess.max(axis=1)
    side_best = np.argmax(excess, axis=1)
    # per word, the best score of a direction that favours it (its outputs are the event)
    ws = np.full(n, -np.inf)
    np.maximum.at(ws, pairs[:, 0], excess[:, 0])
    np.maximum.at(ws, pairs[:, 1], excess[:, 1])
    word_scores[okmask] = ws
    fav_row = np.where(side_best == 0, pairs[:, 0], pairs[:, 1])
    kth_hi = kth_score_upper(score, fav_row, ws, k_pairs)
    top = np.argsort(-score, kind="stable")[: min(k_pairs, len(pairs))]
    fav_id = np.where(side_best[top] == 0, ids_a[top], ids_b[top])
    code = best_code[top, side_best[top]]
    events = np.stack([np.where(code >= 0, fav_id, -1), code], axis=1)
    return ScreenProposal(
        pairs=np.stack([ids_a[top], ids_b[top]], axis=1),
        scores=score[top],
        candidates=len(pairs),
        word_scores=word_scores,
        residual_median=float(np.median(residual)),
        events=events,
        residual_max=float(residual.max()),
        kth_upper=kth_hi,
    )


def _score_tables(counts: np.ndarray, residual: np.ndarray, m: int) -> tuple[np.ndarray, np.ndarray]:
    """ln CP⁻ and ln CP⁺ of the screen's counts at ``m`` draws, indexable by a count in 0..m.

    Only the counts that occur (``counts`` and ``residual``) are evaluated; the other entries are
    NaN and never read. Each evaluated entry is, bit for bit, what :func:`log_cp_lower` and
    :func:`log_cp_upper` give over all of 0..m (an element-wise ufunc), at a cost in the number of
    distinct counts instead of ``m`` (a word drawn a million times otherwise costs two million
    Beta quantiles).
    """
    seen = np.unique(np.concatenate([counts.ravel(), residual.ravel()]))
    log_lo = np.full(m + 1, np.nan)
    log_hi = np.full(m + 1, np.nan)
    log_lo[seen] = log_cp_lower(seen, m, SCREEN_ALPHA)
    log_hi[seen] = log_cp_upper(seen, m, SCREEN_ALPHA)
    return log_lo, log_hi


def kth_score_upper(score: np.ndarray, fav: np.ndarray, word_scores: np.ndarray, k: int) -> float:
    """An upper (1 − :data:`THRESHOLD_MISS`) quantile of the K-th pair score of a rerun of the screen.

    Estimated from the run's own scores, with a model that overstates how high a rerun reaches.
    The units are words: a pair scores above s only if its favoured word's best score
    (``word_scores``) does, and each word's best score comes from its own draws, so the words
    are nearly independent (the pairs are not: those one word favours rise and fall together).

    - The top n = max(3K, :data:`TAIL_WORDS`) word scores, above the (n+1)-th (u), are fitted
      with an exponential tail, its rate taken at a lower (1 − :data:`TAIL_RATE_ALPHA`)
      confidence bound λ⁻. The scores are shrunk log-ratios of binomial counts, whose tails are
      lighter than exponential, so the fitted tail is heavier than the scores'.
    - In a rerun, the words above s are Poisson with mean n·e^{−λ⁻(s − u)}, each bringing the
      pairs it favours above s; their number c per word is taken from this run at u (below s,
      so more pairs than at s). The pairs above s are then a compound Poisson sum, taken as
      φ·Poisson(μ/φ) with its mean μ(s) = n·E[c]·e^{−λ⁻(s − u)} and variance-to-mean ratio
      φ = E[c²]/E[c].
    - The quantile is the s at which Pr[φ·Poisson(μ(s)/φ) ≥ K] = :data:`THRESHOLD_MISS`, and never
      below this run's own K-th score.

    Parameters
    ----------
    score:
        Every candidate pair's score.
    fav:
        Per pair, the row of its favoured word.
    word_scores:
        Per row, the word's best score in a direction that favours it (−∞: none).
    k:
        Pairs proposed (K).

    Returns
    -------
    float
        The quantile (+∞ when K < 1 or no pair has a finite score).
    """
    from scipy.special import gammaincinv
    from scipy.stats import chi2

    ok = np.isfinite(score)
    fin = np.sort(score[ok])[::-1]
    if k < 1 or fin.size == 0:
        return math.inf
    kth = float(fin[k - 1]) if fin.size >= k else -math.inf
    ws = np.sort(word_scores[np.isfinite(word_scores)])[::-1]
    if ws.size < 3:
        return max(kth, float(fin[0]))
    n = int(min(ws.size - 1, max(3 * k, TAIL_WORDS)))
    u = float(ws[n])
    spread = float(np.sum(ws[:n] - u))
    c = np.bincount(fav[ok & (score > u)]).astype(np.float64)
    mean_c = max(1.0, float(c.sum()) / n)
    phi = max(1.0, float(np.sum(c**2)) / max(1.0, float(c.sum())))
    mu = phi * float(gammaincinv(math.ceil(k / phi), THRESHOLD_MISS))  # Pr[Poisson(μ/φ) ≥ ⌈K/φ⌉] = miss
    if spread <= 0 or mu >= n * mean_c:
        return max(kth, u)
    rate_lower = float(chi2.ppf(TAIL_RATE_ALPHA, 2 * n))  # a χ² quantile, not a share of α
    rate = rate_lower / (2 * spread)
    return max(kth, u + math.log(n * mean_c / mu) / rate)


def _candidate_rows(
    vocab: Vocabulary,
    wids: np.ndarray,
    neighbors: int,
    nn: np.ndarray | None,
    pos_all: np.ndarray,
    okmask: np.ndarray,
    rng: np.random.Generator,
    flat_codes: np.ndarray,
    flat_counts: np.ndarray,
    flat_rows: np.ndarray,
    residual: np.ndarray,
    colocated: np.ndarray | None,
) -> np.ndarray:
    """Candidate pairs as rows of the words that drew (sorted, distinct, no self-pairs).

    Neighbours, random partners, per-output extremes (the top producer of each listed output
    against the lowest-residual words and the output's bottom producers) and pairing 0's
    co-located pairs: at most n·(neighbours + random partners + 1) + (outputs listed)·(
    :data:`LOW_RESIDUAL_PARTNERS` + :data:`BOTTOM_PRODUCERS`) pairs.
    """
    n = len(wids)
    parts: list[np.ndarray] = []
    if neighbors > 0:
        row_of = np.full(len(vocab), -1, dtype=np.int64)
        row_of[wids] = np.arange(n)
        if nn is not None and nn.shape[1] >= neighbors:  # positions → rows of the words that drew
            nn = pos_all[np.asarray(nn)[okmask, :neighbors]]
            nn = np.where(nn >= 0, nn, np.arange(n)[:, None])  # a failed neighbour: a self-pair, dropped
        else:
            nn = row_of[nearest_neighbors(vocab, wids, neighbors, among=wids)]
        parts.append(np.stack([np.repeat(np.arange(n), nn.shape[1]), nn.ravel()], axis=1))
    a = np.repeat(np.arange(n), RANDOM_PARTNERS)
    b = (a + rng.integers(1, n, size=a.size)) % n
    parts.append(np.stack([a, b], axis=1))
    if flat_codes.size:
        parts += _extreme_pairs(flat_codes, flat_counts, flat_rows, residual)
    if colocated is not None:
        co = np.asarray(colocated, dtype=np.int64)
        src = np.flatnonzero(okmask)  # row → position
        partner_row = np.full(n, -1, dtype=np.int64)
        has = co[src] >= 0
        partner_row[has] = pos_all[co[src][has]]
        keep = partner_row >= 0
        parts.append(np.stack([np.arange(n)[keep], partner_row[keep]], axis=1))
    pairs = np.concatenate(parts)
    pairs = pairs[pairs[:, 0] != pairs[:, 1]]
    return np.unique(np.sort(pairs, axis=1), axis=0)


def _extreme_pairs(
    codes: np.ndarray, counts: np.ndarray, rows: np.ndarray, residual: np.ndarray
) -> list[np.ndarray]:
    """Per listed output, its top producer against the lowest-residual words and its bottom producers.

    ``codes``, ``counts``, ``rows``: the listed (output, count, word row) entries, flat.
    """
    o = np.lexsort((-counts, codes))  # per output, largest count first
    c, r = codes[o], rows[o]
    start = np.ones(o.size, dtype=bool)
    start[1:] = c[1:] != c[:-1]
    first = np.flatnonzero(start)
    group = np.cumsum(start) - 1
    hi = r[first]  # the top producer of each output
    low = np.argsort(residual, kind="stable")[:LOW_RESIDUAL_PARTNERS]
    parts = [np.stack([np.repeat(hi, low.size), np.tile(low, hi.size)], axis=1)]
    # bottom producers: the last BOTTOM_PRODUCERS entries of each output's group
    size = np.diff(np.append(first, o.size))
    from_end = size[group] - 1 - (np.arange(o.size) - first[group])
    bottom = from_end < BOTTOM_PRODUCERS
    parts.append(np.stack([hi[group[bottom]], r[bottom]], axis=1))
    return parts


ClaimsFn = Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray]


def claims_function(sanitizer: Any, vocab: Vocabulary) -> ClaimsFn:
    """Vectorised claimed bounds for pairs of ids: the sanitizer's own, ε, or ε·d."""
    own_vec = getattr(sanitizer, "claimed_bounds_ids", None)
    own = getattr(sanitizer, "claimed_bound", None)
    eps = float(sanitizer.epsilon)
    words = vocab.words

    def fn(x: np.ndarray, y: np.ndarray, d: np.ndarray) -> np.ndarray:
        if callable(own_vec):
            return np.asarray(own_vec(x, y, d), dtype=np.float64)
        if callable(own):
            pairs = zip(x, y, d, strict=True)
            return np.fromiter(
                (float(own(str(words[i]), str(words[j]), float(dd))) for i, j, dd in pairs),
                dtype=np.float64,
                count=len(x),
            )
        return np.full(len(x), eps) if sanitizer.guarantee == "ldp" else eps * np.asarray(d, dtype=np.float64)

    return fn


# --- scoring a co-located pair on all its outputs (in the drawing process) -------------------

#: Level of the pair score's bounds in the screen (a ranking device: 0.05 per side).
PAIR_ALPHA = 0.1


def pair_lower_bounds(
    a: WordDraws, b: WordDraws, n_base: int, halves: tuple[int, ...], eligible: np.ndarray | None
) -> tuple[float, float]:
    """Score a pair on all its outputs: (lower bound favouring a, lower bound favouring b).

    The event is the best prefix of the likelihood-ratio order chosen on the first half of both
    words' draws (:func:`~dpcore.pairtest.estimator.best_prefix_event`, over every output, not
    one), and its loss is bounded on the second half. A violation spread thinly over many
    outputs (none of them frequent enough to stand out alone) still gives a high score. The
    engine calls it on pairing 0's pairs, side by side in a shard (``DrawPlan.pair_scorer``).
    """
    if len(halves) < 2 or a.error is not None or b.error is not None:
        return float("nan"), float("nan")
    # The outputs an event can hold: those either word produced in the selection half (the
    # event takes outputs with a positive selection count), vocabulary ids in increasing order,
    # then the selection half's outputs outside V by label. The same outputs in the same order
    # as over the whole vocabulary, so the same event and bound, without |V|-long copies.
    if a.sparse is not None and b.sparse is not None:  # the id fast path: counts of the drawn only
        return _sparse_pair_lower_bounds(a.sparse, b.sparse, halves, eligible)
    ca = a.counts if a.sparse is None else a.sparse.dense(n_base)
    cb = b.counts if b.sparse is None else b.sparse.dense(n_base)
    a0, b0 = ca[0][:n_base], cb[0][:n_base]
    seen = np.flatnonzero((a0 | b0) != 0)
    labels0 = sorted(set(a.extras[0]) | set(b.extras[0]))

    def part(counts: list[np.ndarray], extras: list[dict[str, int]], half: int) -> np.ndarray:
        # this half's counts of those outputs (an output outside V: by label, 0 when absent)
        inside = counts[half][:n_base][seen]
        if not labels0:
            return inside
        extra = np.asarray([extras[half].get(k, 0) for k in labels0], dtype=np.int64)
        return np.concatenate([inside, extra])

    sel_a, sel_b = part(ca, a.extras, 0), part(cb, b.extras, 0)
    ev_a, ev_b = part(ca, a.extras, 1), part(cb, b.extras, 1)
    elig = None
    if eligible is not None:
        elig = eligible[:n_base][seen]
        if labels0:
            elig = np.concatenate([elig, np.zeros(len(labels0), dtype=bool)])
    out = []
    for s_x, s_y, e_x, e_y in ((sel_a, sel_b, ev_a, ev_b), (sel_b, sel_a, ev_b, ev_a)):
        event = best_prefix_event(s_x, s_y, halves[0], PAIR_ALPHA, elig)
        d = estimate_direction(event, e_x, e_y, halves[1], PAIR_ALPHA)
        out.append(d.lower_bound)
    return float(out[0]), float(out[1])


def _sparse_pair_lower_bounds(
    a: SegmentCounts, b: SegmentCounts, halves: tuple[int, ...], eligible: np.ndarray | None
) -> tuple[float, float]:
    """:func:`pair_lower_bounds` from counts over the outputs drawn: the same events and bounds.

    Each direction's event is chosen among the outputs its first word drew in the selection
    half (those with a positive selection count), in increasing id order, as over the whole
    vocabulary; the other word's counts of those outputs are looked up.
    """
    # each word's counts of the other's outputs, from one search of a's outputs among b's
    b_on_a = np.zeros((2, a.ids.size), dtype=np.int64)
    a_on_b = np.zeros((2, b.ids.size), dtype=np.int64)
    if a.ids.size and b.ids.size:
        pos = np.minimum(np.searchsorted(b.ids, a.ids), b.ids.size - 1)
        hit = b.ids[pos] == a.ids
        b_on_a[:, hit] = b.counts[:2, pos[hit]]
        a_on_b[:, pos[hit]] = a.counts[:2, hit]
    out = []
    for x, y_on_x in ((a, b_on_a), (b, a_on_b)):
        drawn = x.counts[0] != 0
        ids = x.ids[drawn]
        elig = None if eligible is None else eligible[ids]
        event = best_prefix_event(x.counts[0][drawn], y_on_x[0][drawn], halves[0], PAIR_ALPHA, elig)
        d = estimate_direction(event, x.counts[1][drawn], y_on_x[1][drawn], halves[1], PAIR_ALPHA)
        out.append(d.lower_bound)
    return float(out[0]), float(out[1])


# --- the audit's stage -----------------------------------------------------------------------


def run(
    plan: ScreenPlan,
    draw: Callable[[np.ndarray, DrawPlan], list[WordDraws]],
    *,
    sanitizer: Any,
    vocab: Vocabulary,
    codebook: OutputCodebook,
) -> ScreenDraws:
    """Draw m outputs of every screened word, summarised (stage 1); code every output seen."""
    assert plan.screen_ids is not None
    ids = plan.screen_ids
    # the screened words' nearest screened words, once (matching, candidates, claim levels)
    k_nn = max(plan.neighbors, MATCH_NEIGHBOURS if sanitizer.guarantee == "metric" else 0)
    k_nn = min(len(ids) - 1, k_nn)
    nn_pos = None
    if k_nn > 0:
        row_of = np.full(len(vocab), -1, dtype=np.int64)
        row_of[ids] = np.arange(len(ids))
        nn_pos = row_of[nearest_neighbors(vocab, ids, k_nn, among=ids, workers=plan.workers)]
    pairings = pairings_for(
        sanitizer.guarantee,
        vocab,
        ids,
        np.random.default_rng(cell_seed_sequence(plan.seed, "text-audit", "pairings")),
        nn=nn_pos,
    )
    partners = np.full((len(pairings), len(vocab)), -1, dtype=np.int64)
    for k, pr in enumerate(pairings):
        has = pr.partner >= 0
        partners[k, ids[has]] = ids[pr.partner[has]]
    # pairing 0's pairs side by side (so a worker scores each on all its outputs)
    p0 = pairings[0].partner
    first = np.flatnonzero(p0 > np.arange(len(p0)))
    order = np.concatenate([np.stack([first, p0[first]], axis=1).ravel(), np.flatnonzero(p0 < 0)]).astype(
        np.int64
    )
    m = plan.m_screen
    halves = (m // 2, m - m // 2)
    dplan = DrawPlan("screen", halves, top=SCREEN_TOP, partners=partners, pair_scorer=pair_lower_bounds)
    drawn = draw(ids[order], dplan)
    sdraws: list[WordDraws] = [drawn[0]] * len(order)
    for k, pos in enumerate(order):
        sdraws[pos] = drawn[k]
    failures: dict[str, str] = {}
    for wd in sdraws:
        if wd.summary is not None:
            for label in wd.summary.labels:
                codebook.code(label)
        else:
            failures[str(vocab.words[wd.wid])] = str(wd.error)
    return ScreenDraws(sdraws, pairings, halves, nn_pos, failures)


def propose(
    plan: ScreenPlan,
    sd: ScreenDraws,
    *,
    sanitizer: Any,
    vocab: Vocabulary,
    codebook: OutputCodebook,
    claims: ClaimsFn,
) -> ScreenProposal:
    """The K most suspicious pairs of the screen's summaries (:func:`propose_pairs`)."""
    return propose_pairs(
        sd.draws,
        vocab=vocab,
        m=plan.m_screen,
        k_pairs=plan.pairs,
        neighbors=plan.neighbors,
        rng=plan.pairs_rng(),
        label_code=codebook.code,
        n_codes=len(codebook),
        claims=claims,
        eligible=eligible_outputs(sanitizer, len(codebook)),
        colocated=sd.colocated,
        nn=sd.nn,
    )


@dataclass(frozen=True, eq=False)
class ScreenOutcome:
    """What the screen hands on: the pairs to confirm, their screen events and the record.

    Attributes
    ----------
    pairs:
        Vocabulary ids of the pairs stage 2 tests: the proposed ones, then those named by
        rejecting pooled families.
    events:
        Per proposed pair (x id, x′ id): the screen's (favoured word id, output code).
    info:
        The result's ``screen`` record.
    word_scores:
        Per screened word, its best score (the dashboard's map).
    candidates:
        Candidate pairs scored.
    """

    pairs: np.ndarray
    events: dict[tuple[int, int], tuple[int, int]]
    info: dict[str, Any]
    word_scores: np.ndarray
    candidates: int


def outcome(
    plan: ScreenPlan, sd: ScreenDraws, prop: ScreenProposal, pooled_pairs: np.ndarray, words: np.ndarray
) -> ScreenOutcome:
    """Merge the proposals with the pooled tests' pairs, and write the screen's record."""
    assert plan.screen_ids is not None
    cand = prop.pairs
    events: dict[tuple[int, int], tuple[int, int]] = {}
    if prop.events is not None:
        for (x_id, y_id), ev in zip(cand, prop.events, strict=True):
            if ev[0] >= 0:
                events[(int(x_id), int(y_id))] = (int(ev[0]), int(ev[1]))
    if len(pooled_pairs):
        seen = {tuple(sorted(map(int, pr))) for pr in cand}
        extra = [pr for pr in pooled_pairs if tuple(sorted(map(int, pr))) not in seen]
        extra = np.unique(np.asarray(extra, dtype=np.int64).reshape(-1, 2), axis=0)
        # a pair named in both orientations is confirmed once (in its first orientation)
        first = {}
        for pr in extra:
            first.setdefault(tuple(sorted(map(int, pr))), pr)
        extra = np.asarray(list(first.values()), dtype=np.int64).reshape(-1, 2)[: 4 * POOLED_CONFIRM]
        if len(extra):
            cand = np.concatenate([cand, extra])
    ids, m = plan.screen_ids, plan.m_screen
    info = {
        "words_screened": len(ids),
        "draws_per_word": int(m),
        "budget": int(plan.screen_budget),
        "budget_source": f"fitted to {plan.screen_minutes:g} min" if plan.fitted else "given",
        "draws": int(len(ids) * m),
        "candidates_scored": int(prop.candidates),
        "proposed": len(prop.pairs),
        "confirmed_from_pooled": int(len(cand) - len(prop.pairs)),
        "failed_words": int(sum(wd.error is not None for wd in sd.draws)),
        "kth_score": float(prop.scores[-1]) if len(prop.scores) else -math.inf,
        "kth_score_upper": prop.kth_upper,
        "residual_median": prop.residual_median,
        "residual_max": prop.residual_max,
        "pairings": [{"name": pr.name, "pairs": pr.pairs} for pr in sd.pairings],
        "top_words": top_words(words, ids, prop.word_scores, 20),
    }
    return ScreenOutcome(cand, events, info, prop.word_scores, int(prop.candidates))


def top_words(words: np.ndarray, ids: np.ndarray, scores: np.ndarray, k: int) -> list[dict[str, Any]]:
    """The ``k`` screened words with the highest scores (word, vocabulary rank, score)."""
    order = np.argsort(-scores, kind="stable")[:k]
    return [
        {"word": str(words[ids[o]]), "rank": int(ids[o]), "score": float(scores[o])}
        for o in order
        if np.isfinite(scores[o])
    ]


def observations(
    plan: ScreenPlan, sd: ScreenDraws, pairs: np.ndarray, codebook: OutputCodebook
) -> dict[int, tuple[np.ndarray, np.ndarray, int]]:
    """The screen's counts for the declaration test: the pairs' words and a seeded spread of others.

    Word id → (listed output codes and the word itself, their counts, the residual bound).
    """
    assert plan.screen_ids is not None
    ids = plan.screen_ids
    pos_of = np.full(plan.vocab_size, -1, dtype=np.int64)
    pos_of[ids] = np.arange(len(ids))
    rng = np.random.default_rng(cell_seed_sequence(plan.seed, "text-audit", "declaration-words"))
    spread = rng.choice(ids, size=min(DECLARATION_SPREAD, len(ids)), replace=False).astype(np.int64)
    obs: dict[int, tuple[np.ndarray, np.ndarray, int]] = {}
    for wid in np.unique(np.concatenate([pairs.ravel(), spread])):
        sm = sd.draws[pos_of[int(wid)]].summary
        if sm is None:
            continue
        codes = np.asarray(
            [int(c) if c >= 0 else codebook.code(sm.labels[-1 - int(c)]) for c in sm.codes], dtype=np.int64
        )
        obs[int(wid)] = (np.append(codes, int(wid)), np.append(sm.counts, sm.self_count), int(sm.residual))
    return obs
