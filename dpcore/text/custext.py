"""CusText and CusText+ (Chen, Mo, Wang, Chen, Nie, Wang and Cui, Findings of ACL 2023).

"A Customized Text Sanitization Mechanism with Differential Privacy", §3:

1. **Mapping function** f_map (§3.2, Algorithm 1 of the paper): walk the vocabulary in
   decreasing public frequency; the first word not yet assigned and its K − 1 nearest
   *unassigned* words form a group S; every word of S is mapped to the same output set S and
   leaves the pool. The last group may have fewer than K words.
2. **Sampling function** f_sample (§3.3): for x ∈ S, the utility u(x, y) = −d(x, y) is
   min-max normalised over y ∈ S to u′ ∈ [0, 1] (so Δu′ = 1), and y is drawn by the exponential
   mechanism (McSherry and Talwar 2007) as stated in the paper's sampling equation:

       Pr[M(x) = y] = exp(ε·u′(x, y)/2) / Σ_{y′ ∈ S} exp(ε·u′(x, y′)/2),   y ∈ S.

   (Equation numbering of the paper was not re-checked this session; the formula is the
   exponential mechanism with Δu = 1.)

Guarantee, stated precisely: for x, x′ in the *same* group S and every y,
u′(x, y) − u′(x′, y) ∈ [−1, 1], so the weights differ by at most e^{ε/2} and the normalisers by at
most e^{ε/2}: **ε-LDP among the words of one group**. Words of different groups have disjoint
output sets, so **nothing** is guaranteed across groups (the likelihood ratio is infinite).
:attr:`CusText.privacy` says so (``scope``), and :func:`dpcore.text.metrics.bound_check` draws its
pairs x ≠ x′ inside one group (:meth:`CusText.bound_pairs`).

The grouping is built from the public vocabulary only (its words, embedding and public
frequencies), never from the text being sanitized, and cached per vocabulary.

CusText+ (§3.4) does not sanitize stopwords: they are kept unchanged (outside every group) and
are *unprotected* outputs — each stopword is output only by itself, with probability 1. The
stopword list is scikit-learn's ``ENGLISH_STOP_WORDS`` (318 words; installed, no network).

Published code (pyPANTERA 1.0.2, ``CusText``) gives different inputs different output sets (the
K nearest words of each word), so an output reachable from one input only breaks ε-LDP: dpcore's
black-box audit flags it. That is not what is implemented here.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

from dpcore.parameters import ParameterSpec
from dpcore.text.mechanisms import ExponentialTokenMechanism, TextPrivacy
from dpcore.text.registry import TEXT_MECHANISMS
from dpcore.text.sampling import DEFAULT_MAX_ELEMENTS, iter_chunks
from dpcore.text.vocab import Vocabulary
from dpcore.topk import smallest_k
from dpcore.validation import DPCoreError, check_int

__all__ = ["CusText", "CusTextPlus", "custext_groups", "stopword_mask"]

DEFAULT_K = 20
_GROUP_CACHE: dict[tuple[int, int, bool], tuple[Vocabulary, np.ndarray, np.ndarray]] = {}
_CACHE_SIZE = 4


def stopword_mask(vocab: Vocabulary) -> np.ndarray:
    """Boolean mask of the words of V in scikit-learn's ``ENGLISH_STOP_WORDS`` (case-folded)."""
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    stop = frozenset(ENGLISH_STOP_WORDS)
    return np.fromiter((str(w).lower() in stop for w in vocab.words), dtype=bool, count=len(vocab))


def custext_groups(
    vocab: Vocabulary, k: int, *, keep_stopwords: bool = False
) -> tuple[np.ndarray, np.ndarray]:
    """CusText's mapping f_map (Chen et al. 2023, §3.2): groups of ≤ K words sharing one output set.

    Returns ``(members, group_of)``: ``members`` is ``(G, K)`` int64, the ids of each group padded
    with −1; ``group_of`` maps each id to its group (−1 for stopwords kept by CusText+). One loop
    iteration per *group* (|V|/K), each a vectorised distance computation over the unassigned
    words; no |V|×|V| matrix is built. Cached per vocabulary object.
    """
    key = (id(vocab), k, keep_stopwords)
    hit = _GROUP_CACHE.get(key)
    if hit is not None and hit[0] is vocab:
        return hit[1], hit[2]
    n = len(vocab)
    vec, sq = vocab.vectors, vocab.sq_norms
    excluded = stopword_mask(vocab) if keep_stopwords else np.zeros(n, dtype=bool)
    order = np.argsort(-np.asarray(vocab.frequency, dtype=np.float64), kind="stable")
    order = order[~excluded[order]]
    free = np.zeros(n, dtype=bool)
    free[order] = True
    left = int(free.sum())
    groups: list[np.ndarray] = []
    cursor = 0  # position in ``order`` of the most frequent unassigned word
    while left:
        while not free[order[cursor]]:
            cursor += 1
        seed = order[cursor]
        if left <= k:
            grp = np.flatnonzero(free)
        else:
            d2 = sq - 2.0 * (vec @ vec[seed])  # ‖y − seed‖² − ‖seed‖², one mat-vec, no gather
            d2[~free] = np.inf
            d2[seed] = -np.inf  # the seed itself is always in its group
            grp = smallest_k(d2, k)  # ties by position: the same on every processor
        groups.append(grp)
        free[grp] = False
        left -= grp.size
    members = np.full((len(groups), k), -1, dtype=np.int64)
    group_of = np.full(n, -1, dtype=np.int64)
    for g, grp in enumerate(groups):
        members[g, : grp.size] = np.sort(grp)
        group_of[grp] = g
    if len(_GROUP_CACHE) >= _CACHE_SIZE:
        _GROUP_CACHE.pop(next(iter(_GROUP_CACHE)))
    _GROUP_CACHE[key] = (vocab, members, group_of)
    return members, group_of


@TEXT_MECHANISMS.register(
    "custext",
    display="CusText",
    summary="CusText: exponential mechanism inside fixed groups of K words; ε-LDP within a group only.",
    citation="Chen et al. 2023 (Findings ACL), CusText, §3.2 mapping, §3.3 sampling (exponential mechanism)",
    tags=("exact",),
)
class CusText(ExponentialTokenMechanism):
    """CusText (Chen et al. 2023, §3), exact: exponential mechanism over the word's group.

    Pr[M(x)=y] ∝ exp(ε·u′(x, y)/2), y ∈ S(x), u′ the min-max normalised −d (see the module
    docstring). ε-LDP among the words of one group; nothing across groups.

    Parameters
    ----------
    vocab:
        The public vocabulary V (its frequencies order the grouping).
    epsilon:
        ε > 0 (ε-LDP within a group).
    k:
        Group size K ≥ 1 (default 20).
    """

    PARAMETERS = (
        ParameterSpec(
            "k", 20, "int", 1, 100_000,
            "size K of each fixed output group, at most |V| (Chen et al. 2023, §3.2)",
            ui_high=100, step=1,
        ),
    )  # fmt: skip

    name = "custext"
    keep_stopwords = False

    def __init__(self, *, vocab: Vocabulary, epsilon: float, k: int = DEFAULT_K) -> None:
        super().__init__(vocab=vocab, epsilon=epsilon)
        self.k = k = check_int(k, name="k", min_value=1, max_value=len(vocab))
        members, group_of = custext_groups(vocab, self.k, keep_stopwords=self.keep_stopwords)
        self._members, self._group_of = members, group_of
        n = len(vocab)
        grouped = group_of >= 0
        self._candidates = np.flatnonzero(grouped).astype(np.int64)
        self._replace_prob = grouped.astype(np.float64)
        self._em_epsilon = self.epsilon
        # out_ids[x] = the output set of x (−1 padded); logp[x] = log Pr over it
        out_ids = np.full((n, self.k), -1, dtype=np.int64)
        logp = np.full((n, self.k), -np.inf)
        ungrouped = np.flatnonzero(~grouped)
        out_ids[ungrouped, 0] = ungrouped
        logp[ungrouped, 0] = 0.0
        # within-group distances from one (G, K, m) gather (G·K·m floats, ≈ |V|·m): no |V|×K×m array
        valid_g = members >= 0
        mv = vocab.vectors[np.where(valid_g, members, 0)]
        msq = vocab.sq_norms[np.where(valid_g, members, 0)]
        gram = np.einsum("gim,gjm->gij", mv, mv)
        dg = np.sqrt(np.maximum(msq[:, :, None] + msq[:, None, :] - 2.0 * gram, 0.0))
        ii = np.arange(k)
        dg[:, ii, ii] = 0.0  # exact zero on the diagonal
        both = valid_g[:, :, None] & valid_g[:, None, :]
        u = np.where(both, -dg, np.nan)  # u[g, i, j] = −d(member i, member j)
        with np.errstate(invalid="ignore"):
            lo = np.nanmin(np.where(both, u, np.inf), axis=2, keepdims=True)
            hi = np.nanmax(np.where(both, u, -np.inf), axis=2, keepdims=True)
            span = hi - lo
            un = np.where(span > 0, (u - lo) / np.where(span > 0, span, 1.0), 0.0)  # one-word group: 0
        sc = np.where(both, 0.5 * self.epsilon * un, -np.inf)
        sc[~valid_g] = 0.0  # padding rows (no such member): harmless, never read
        sc -= sc.max(axis=2, keepdims=True)
        sc -= np.log(np.exp(sc).sum(axis=2, keepdims=True))
        gi, mi = np.nonzero(valid_g)
        xs = members[gi, mi]
        out_ids[xs] = members[gi]
        logp[xs] = sc[gi, mi]
        self._out_ids, self._logp = out_ids, logp

    @property
    def privacy(self) -> TextPrivacy:
        return TextPrivacy(
            "LDP",
            self.epsilon,
            0.0,
            "pure LDP (no metric)",
            "Chen et al. 2023",
            scope=(
                f"only among the words of one CusText group (K = {self.k}); nothing across groups"
                + ("; stopwords kept unchanged, unprotected" if self.keep_stopwords else "")
            ),
        )

    def params(self) -> dict[str, Any]:
        return super().params() | {"k": self.k, "groups": int(self._members.shape[0])}

    def bound_pairs(self, rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
        """Pairs x ≠ x′ from one group (the scope of the guarantee), for the exact bound check."""
        sizes = (self._members >= 0).sum(axis=1)
        big = np.flatnonzero(sizes >= 2)
        if big.size == 0:
            raise DPCoreError("every CusText group has one word: no pair to check")
        g = big[rng.integers(0, big.size, size=n)]
        i = rng.integers(0, sizes[g])
        j = (i + rng.integers(1, sizes[g])) % sizes[g]
        return self._members[g, i], self._members[g, j]

    def pair_in_scope(self, x: np.ndarray, x2: np.ndarray) -> np.ndarray:
        """True where x and x′ share a group: the only pairs the ε-LDP claim covers."""
        gx, gx2 = self._group_of[np.asarray(x)], self._group_of[np.asarray(x2)]
        return (gx == gx2) & (gx >= 0)

    # --- sampling (exact inverse CDF over ≤ K outputs) -------------------------------------
    def sample_ids_from_uniforms(
        self,
        ids: np.ndarray,
        u_coin: np.ndarray,
        u_pick: np.ndarray,
        *,
        max_elements: int = DEFAULT_MAX_ELEMENTS,
    ) -> np.ndarray:
        """Draw M(x) per position from ``u_pick`` (``u_coin`` is unused: every grouped word is replaced)."""
        ids = self._check_ids(ids)
        u_pick = np.asarray(u_pick, dtype=np.float64)
        if u_pick.shape != ids.shape or np.shape(u_coin) != ids.shape:
            raise DPCoreError("u_coin and u_pick need one uniform per token id")
        out = np.empty_like(ids)
        for sl in iter_chunks(ids.size, self.k, max_elements):
            x = ids[sl]
            cdf = np.cumsum(np.exp(self._logp[x]), axis=1)
            target = u_pick[sl] * cdf[:, -1]
            pos = np.minimum((cdf <= target[:, None]).sum(axis=1), self.k - 1)
            # padding has probability 0: never past the last real output
            n_valid = (self._out_ids[x] >= 0).sum(axis=1)
            pos = np.minimum(pos, n_valid - 1)
            out[sl] = self._out_ids[x, pos]
        return out

    # --- exact distribution ----------------------------------------------------------------
    def log_normalizers(self, x: np.ndarray, *, max_elements: int = DEFAULT_MAX_ELEMENTS) -> np.ndarray:
        """Rows are stored normalised: log-normaliser 0."""
        return np.zeros(self._check_ids(x).size)

    def log_prob(
        self, x: np.ndarray, y: np.ndarray, *, max_elements: int = DEFAULT_MAX_ELEMENTS
    ) -> np.ndarray:
        """Exact ``log Pr[M(x_k) = y_k]`` (−inf outside x's group)."""
        x, y = self._check_pairs(x, y)
        hit = self._out_ids[x] == y[:, None]
        col = np.argmax(hit, axis=1)
        return np.where(hit.any(axis=1), self._logp[x, col], -np.inf)

    def iter_log_rows(
        self, x: np.ndarray, *, max_elements: int = DEFAULT_MAX_ELEMENTS
    ) -> Iterator[tuple[slice, np.ndarray]]:
        """Exact rows ``log Pr[M(x) = ·]`` over all of V, a chunk of inputs at a time."""
        x = self._check_ids(x)
        n_v = len(self.vocab)
        for sl in iter_chunks(len(x), n_v, max_elements):
            xs = x[sl]
            rows = np.full((len(xs), n_v), -np.inf)
            oid = self._out_ids[xs]
            r, c = np.nonzero(oid >= 0)
            rows[r, oid[r, c]] = self._logp[xs][r, c]
            yield sl, rows


@TEXT_MECHANISMS.register(
    "custext+",
    display="CusText+",
    summary="CusText+: CusText that keeps stopwords unchanged (unprotected); ε-LDP within a group only.",
    citation="Chen et al. 2023 (Findings ACL), CusText+, §3.4 (stopwords not sanitized)",
    tags=("exact",),
)
class CusTextPlus(CusText):
    """CusText+ (Chen et al. 2023, §3.4): stopwords (scikit-learn's list) are kept unchanged.

    Non-stopwords: exactly :class:`CusText` over groups built from the non-stopwords only.
    Stopwords: output themselves with probability 1 and no other word outputs them.
    """

    name = "custext+"
    keep_stopwords = True
