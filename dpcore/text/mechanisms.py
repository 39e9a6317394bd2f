"""Token-level sanitization mechanisms: SanText, SanText+, Feyisetan et al. (2020) and random.

Every mechanism maps token ids of a :class:`~dpcore.text.vocab.Vocabulary` V to token ids of V,
independently per token, and knows its privacy map (:attr:`TextMechanism.privacy`): the notion
and the parameters it satisfies.

=============  ===============================================================  ==============
name           distribution                                                     guarantee
=============  ===============================================================  ==============
``santext``    Pr[M(x)=y] = C_x·exp(−½·ε·d(x,y)), y ∈ V (Yue et al. 2021, eq. 1)  ε·d-MLDP, Thm 1
``santext+``   x ∈ V_S: eq. 1 over V_P = V_S; x ∈ V_N: keep w.p. 1 − p, else     (V_S, V_P, ε,
               y ∈ V_P w.p. p·C_x·exp(−½·ε·d(x,y)) (Algorithm 2, eq. 2)          ln 1/p)-UMLDP,
                                                                                Thm 2
``feyisetan``  nearest word to φ(x) + Z, density of Z ∝ exp(−ε‖z‖)              ε·d metric DP
               (Feyisetan et al. 2020, §3; baseline of Yue et al. §5.2)
``random``     uniform over V (baseline of Yue et al. §5.2)                     0-LDP
=============  ===============================================================  ==============

``santext``, ``santext+`` and ``random`` have closed-form output distributions
(:meth:`ExponentialTokenMechanism.log_prob`, :meth:`~ExponentialTokenMechanism.iter_log_rows`),
used by the privacy metrics and the exact bound check (:mod:`dpcore.text.metrics`). Their
sampler never builds a |V|×|V| matrix (:mod:`dpcore.text.sampling`).
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpcore.blas import one_blas_thread
from dpcore.formatting import epsilon_text
from dpcore.logspace import logsumexp
from dpcore.parameters import ParameterSpec
from dpcore.text.nearest import POSITION_CHUNK, nearest_k
from dpcore.text.registry import TEXT_MECHANISMS
from dpcore.text.sampling import (
    DEFAULT_MAX_ELEMENTS,
    SEARCH_BLOCK,
    Candidates,
    block_ends,
    first_exceeding,
    iter_chunks,
    log_weight_rows,
    pair_distances,
    product_rows,
    search_blocks,
    weight_row,
)
from dpcore.text.vocab import Vocabulary, sensitive_count
from dpcore.validation import DPCoreError, check_epsilon, check_probability

#: Default bound on the scores of one block of a noisy nearest-neighbour search (Feyisetan's and
#: the mechanisms built on it); :func:`dpcore.text.nearest.nearest_k` caps its float32 blocks
#: at this and at its own ``NEAREST_BLOCK_ELEMENTS``.
NOISY_NN_MAX_ELEMENTS = 1 << 22


__all__ = [
    "ExponentialTokenMechanism",
    "Feyisetan",
    "RandomReplacement",
    "RowBlock",
    "RowBlocks",
    "SanText",
    "SanTextPlus",
    "TextMechanism",
    "TextPrivacy",
    "create_text_mechanism",
    "mechanism_parameters",
]


@dataclass(frozen=True)
class TextPrivacy:
    """The privacy map of a text mechanism.

    For all x, x' ∈ V and (protected) outputs y:
    Pr[M(x) = y] ≤ exp(ε·d(x, x') + ε₀)·Pr[M(x') = y], with d the embedding's Euclidean distance
    (MLDP: ε₀ = 0, Yue et al. 2021, Def. 2; UMLDP: Def. 3, which also requires every
    unprotected output to come from exactly one input; LDP: d ≡ 1 for x ≠ x', here ε = 0).
    """

    notion: str
    epsilon: float
    epsilon0: float
    metric: str
    citation: str
    #: Where the guarantee holds, when narrower than all of V (e.g. CusText: within one group).
    scope: str = ""
    #: Non-empty when dpcore has shown the claim false for this algorithm (why, in one line).
    refuted: str = ""

    def log_bound(self, d: np.ndarray | float) -> np.ndarray | float:
        """The largest allowed ``log Pr[M(x)=y] − log Pr[M(x')=y]`` at distance ``d(x, x')``."""
        return self.epsilon * np.asarray(d, dtype=np.float64) + self.epsilon0

    def describe(self) -> str:
        """One line for listings and pages."""
        scope = f"; {self.scope}" if self.scope else ""
        if self.refuted:
            scope += f". NOT PRIVATE AS CLAIMED: {self.refuted}"
        if self.notion == "LDP":
            return f"{self.epsilon:g}-LDP ({self.citation}){scope}"
        e0 = "" if self.epsilon0 == 0 else f", ε₀ = ln(1/p) = {self.epsilon0:.4g}"
        per = f"per unit of {self.metric}"
        return f"{self.notion} with ε = {epsilon_text(self.epsilon)} {per}{e0} ({self.citation}){scope}"


class TextMechanism(ABC):
    """A token-level mechanism M : V → V applied independently to every token."""

    name: str = "text"
    #: True when :meth:`log_prob` gives the exact output distribution.
    has_exact_distribution: bool = False

    def __init__(self, *, vocab: Vocabulary, epsilon: float) -> None:
        if not isinstance(vocab, Vocabulary):
            raise DPCoreError("vocab must be a dpcore.text.vocab.Vocabulary")
        self.vocab = vocab
        self.epsilon = check_epsilon(epsilon)

    @property
    @abstractmethod
    def privacy(self) -> TextPrivacy:
        """The guarantee this mechanism satisfies (its privacy map)."""

    @classmethod
    def minimum_epsilon(cls, vocab: Vocabulary) -> float:
        """The smallest ε this mechanism accepts on ``vocab`` (0: any ε above the global floor).

        Mechanisms whose calibration breaks down below some ε (``truncated-gumbel``) override
        this, so that pages, the CLI and the comparison can say so before building one.
        """
        return 0.0

    @property
    def claimed_epsilon(self) -> float:
        """ε per unit of distance (0 for the random baseline)."""
        return self.privacy.epsilon

    def params(self) -> dict[str, Any]:
        """Parameters to record next to any output."""
        return {
            "mechanism": self.name,
            "embedding": self.vocab.embedding,
            "epsilon": self.epsilon,
            "vocab_size": len(self.vocab),
            "vocabulary": self.vocab.label,
            "privacy": self.privacy.describe(),
        }

    def _check_ids(self, ids: np.ndarray) -> np.ndarray:
        arr = np.asarray(ids)
        if arr.ndim != 1 or (arr.size and not np.issubdtype(arr.dtype, np.integer)):
            raise DPCoreError("token ids must be a 1-D integer array")
        arr = arr.astype(np.int64, copy=False)
        if arr.size and (arr.min() < 0 or arr.max() >= len(self.vocab)):
            raise DPCoreError("token ids must lie in [0, |V|)")
        return arr

    def _check_pairs(self, x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Validated paired ids ``(x, y)`` of the same length (for ``log_prob``)."""
        x, y = self._check_ids(x), self._check_ids(y)
        if x.shape != y.shape:
            raise DPCoreError("x and y must have the same length")
        return x, y

    @abstractmethod
    def sample_ids(
        self, ids: np.ndarray, rng: np.random.Generator, *, max_elements: int = DEFAULT_MAX_ELEMENTS
    ) -> np.ndarray:
        """Sanitize token ids: one independent draw of M(x) per position (same shape)."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}(epsilon={self.epsilon:g}, |V|={len(self.vocab)})"


class ExponentialTokenMechanism(TextMechanism):
    """Pr[M(x)=y] = (1 − q_x)·[y = x] + q_x·C_x·exp(−½·ε_em·d(x,y))·[y ∈ C].

    The common form of eq. (1) (q_x = 1, C = V), Algorithm 2 / eq. (2) (q_x = 1 on V_S, p on
    V_N; C = V_P = V_S) and the uniform baseline (q_x = 1, ε_em = 0). C_x normalises over C.
    """

    has_exact_distribution = True

    _candidates: np.ndarray  # ids of C, sorted
    _replace_prob: np.ndarray  # q_x per id of V
    _em_epsilon: float
    #: Distances are truncated at this value (∞ for eq. 1; γ for TEM, :mod:`dpcore.text.tem`).
    _truncate: float = math.inf

    @property
    def _cand(self) -> Candidates:
        """C prepared once (vectors, norms, column lookup); rebuilt if ``_candidates`` changes."""
        c = getattr(self, "_cand_cache", None)
        if c is None or c.ids is not self._candidates:
            c = Candidates.build(self.vocab.vectors, self.vocab.sq_norms, self._candidates)
            self._cand_cache = c
        return c

    # --- sampling --------------------------------------------------------------------------
    def sample_ids(
        self, ids: np.ndarray, rng: np.random.Generator, *, max_elements: int = DEFAULT_MAX_ELEMENTS
    ) -> np.ndarray:
        """Draw M(x) for every position of ``ids`` (exact; see :mod:`dpcore.text.sampling`).

        Two uniforms are drawn per position, in position order, whatever the chunking: one for
        the keep/replace coin of Algorithm 2 (line 6) and one to pick y from eq. (1)/(2).
        """
        ids = self._check_ids(ids)
        n = ids.size
        u_coin = rng.random(n)
        u_pick = rng.random(n)
        return self.sample_ids_from_uniforms(ids, u_coin, u_pick, max_elements=max_elements)

    def sample_ids_from_uniforms(
        self,
        ids: np.ndarray,
        u_coin: np.ndarray,
        u_pick: np.ndarray,
        *,
        max_elements: int = DEFAULT_MAX_ELEMENTS,
    ) -> np.ndarray:
        """Draw M(x) for every position of ``ids`` from uniforms the caller drew in [0, 1).

        ``sample_ids(ids, rng)`` is exactly ``sample_ids_from_uniforms(ids, rng.random(n),
        rng.random(n))``. Callers that derive each document's randomness from its own seed
        (:mod:`dpcore.corpus`) draw the uniforms per document and map a whole batch at once.
        """
        ids = self._check_ids(ids)
        u_coin = np.asarray(u_coin, dtype=np.float64)
        u_pick = np.asarray(u_pick, dtype=np.float64)
        if u_coin.shape != ids.shape or u_pick.shape != ids.shape:
            raise DPCoreError("u_coin and u_pick need one uniform per token id")
        out = ids.copy()
        sel = np.flatnonzero(u_coin < self._replace_prob[ids])
        if sel.size:
            pos = self._sample_positions(ids[sel], u_pick[sel], max_elements)
            out[sel] = self._candidates[pos]
        return out

    def _sample_positions(self, x: np.ndarray, u: np.ndarray, max_elements: int) -> np.ndarray:
        cand = self._candidates
        if self._em_epsilon == 0.0:  # uniform over C: exact inverse CDF
            return np.minimum((u * len(cand)).astype(np.int64), len(cand) - 1)
        if x.size > 1 and x[0] == x.min() == x.max():
            # one input word (the audit's draws): the same row and arithmetic as below, then one
            # binary search per draw (np.searchsorted 'right' = the first column exceeding u·total)
            w = log_weight_rows(
                self.vocab.vectors, self.vocab.sq_norms, x[:1], self._cand, self._em_epsilon, self._truncate
            )
            w -= w.max(axis=1, keepdims=True)
            np.exp(w, out=w)
            np.cumsum(w, axis=1, out=w)
            total = w[0, -1]
            return np.searchsorted(w[0], np.minimum(u * total, np.nextafter(total, 0.0)), side="right")
        uniq, inv = np.unique(x, return_inverse=True)
        order = np.argsort(inv, kind="stable")
        bounds = np.searchsorted(inv[order], np.arange(len(uniq) + 1))
        res = np.empty(len(x), dtype=np.int64)
        vec, sq = self.vocab.vectors, self.vocab.sq_norms
        for sl in iter_chunks(len(uniq), len(cand), max_elements):
            w = log_weight_rows(vec, sq, uniq[sl], self._cand, self._em_epsilon, self._truncate)
            w -= w.max(axis=1, keepdims=True)  # max-shift: largest weight is exactly 1
            np.exp(w, out=w)
            np.cumsum(w, axis=1, out=w)
            occ = order[bounds[sl.start] : bounds[sl.stop]]
            row = inv[occ] - sl.start
            total = w[row, -1]
            target = np.minimum(u[occ] * total, np.nextafter(total, 0.0))
            res[occ] = first_exceeding(w, row, target)
        return res

    def row_blocks(self) -> RowBlocks | None:
        """Many words' draws with their rows computed a block at a time (:class:`RowBlocks`).

        None where nothing is shared between words: the uniform baseline (no rows), or a subclass
        that samples its own way (it overrides ``sample_ids``, ``sample_ids_from_uniforms`` or
        ``_sample_positions``, as CusText does).
        """
        base = ExponentialTokenMechanism
        own = ("sample_ids", "sample_ids_from_uniforms", "_sample_positions")
        if self._em_epsilon == 0.0 or any(getattr(type(self), n) is not getattr(base, n) for n in own):
            return None
        return RowBlocks(self)

    # --- exact distribution ----------------------------------------------------------------
    def log_normalizers(self, x: np.ndarray, *, max_elements: int = DEFAULT_MAX_ELEMENTS) -> np.ndarray:
        """log Σ_{y' ∈ C} exp(−½·ε·d(x, y')) = −log C_x for each id in ``x`` (eq. 1/2)."""
        x = self._check_ids(x)
        cand = self._candidates
        if self._em_epsilon == 0.0:
            return np.full(x.size, math.log(len(cand)))
        uniq, inv = np.unique(x, return_inverse=True)
        out = np.empty(len(uniq))
        for sl in iter_chunks(len(uniq), len(cand), max_elements):
            w = log_weight_rows(
                self.vocab.vectors,
                self.vocab.sq_norms,
                uniq[sl],
                self._cand,
                self._em_epsilon,
                self._truncate,
            )
            out[sl] = logsumexp(w, axis=1, overwrite=True)
        return out[inv]

    def log_prob(
        self, x: np.ndarray, y: np.ndarray, *, max_elements: int = DEFAULT_MAX_ELEMENTS
    ) -> np.ndarray:
        """Exact ``log Pr[M(x_k) = y_k]`` for paired ids (float64; −inf where impossible)."""
        x, y = self._check_pairs(x, y)
        d = np.minimum(pair_distances(self.vocab.vectors, x, y, max_elements=max_elements), self._truncate)
        in_c = np.isin(y, self._candidates)
        log_z = self.log_normalizers(x, max_elements=max_elements)
        em = np.where(in_c, -0.5 * self._em_epsilon * d - log_z, -np.inf)
        q = self._replace_prob[x]
        with np.errstate(divide="ignore"):
            log_q = np.log(q)
            log_keep = np.log1p(-q)
        out = log_q + em
        same = x == y
        out[same] = np.logaddexp(log_keep[same], out[same])
        return out

    def iter_log_rows(
        self, x: np.ndarray, *, max_elements: int = DEFAULT_MAX_ELEMENTS
    ) -> Iterator[tuple[slice, np.ndarray]]:
        """Exact rows ``log Pr[M(x) = ·]`` over all of V, a chunk of inputs at a time.

        Yields ``(slice into x, array of shape (chunk, |V|))``; each chunk holds at most about
        ``max_elements`` values, so memory stays bounded for any |V|.
        """
        x = self._check_ids(x)
        n_v = len(self.vocab)
        cand = self._candidates
        with np.errstate(divide="ignore"):
            log_q_all = np.log(self._replace_prob)
            log_keep_all = np.log1p(-self._replace_prob)
        for sl in iter_chunks(len(x), n_v, max_elements):
            xs = x[sl]
            if self._em_epsilon == 0.0:
                em = np.full((len(xs), len(cand)), -math.log(len(cand)))
            else:
                em = log_weight_rows(
                    self.vocab.vectors, self.vocab.sq_norms, xs, self._cand, self._em_epsilon, self._truncate
                )
                em -= logsumexp(em, axis=1, keepdims=True)
            rows = np.full((len(xs), n_v), -np.inf)
            rows[:, cand] = em + log_q_all[xs][:, None]
            r = np.arange(len(xs))
            rows[r, xs] = np.logaddexp(rows[r, xs], log_keep_all[xs])
            yield sl, rows


class RowBlocks:
    """Draws of many words of an exponential mechanism, their rows computed G words at a time.

    The text audit's screen draws a few thousand outputs of every word of V. Drawn word by word,
    each word's row (−½·ε·d(x, ·) over C, max-shifted, exp, cumulative sum) starts with a
    matrix-vector product that reads the whole |C|×m embedding matrix for that word alone; here
    one matrix product gives the distance rows of G words (:func:`~dpcore.text.sampling.product_rows`:
    64 up to |C| = 131,072, fewer beyond so that G·|C|·8 bytes ≤ 64 MiB). The product's buffer is
    reused by every block of this object (one block in use at a time), and each row is finished
    (:func:`~dpcore.text.sampling.weight_row`, then the totals of its blocks of 16 columns,
    :func:`~dpcore.text.sampling.block_ends`) and drawn from while it is in cache, by a search in
    two levels (:func:`~dpcore.text.sampling.search_blocks`: the block, then the column).

    Exactness: every product has exactly G rows (a block with fewer words is padded with copies
    of its last word) and runs on one BLAS thread, so a word's row is the same float64 values in
    any block, at any block size and in any process. It is not bit for bit the row of
    :meth:`ExponentialTokenMechanism.sample_ids` for one word: BLAS sums x·y in another order in
    a matrix-vector product (and in a product's edge rows) than in a product's full tiles, which
    changes the last bit of some distances, and the weights' running sums are added block by
    block. Every step from the distances to the weights is that sampler's own; each output's
    probability is its weight's share up to float64 rounding, and an output of weight 0 is
    never drawn.

    Parameters
    ----------
    mechanism:
        The mechanism (its ``row_blocks()`` checks that it samples as its base class does).
    """

    def __init__(self, mechanism: ExponentialTokenMechanism) -> None:
        self.mechanism = mechanism
        self._cand_set = mechanism._cand
        n_c = len(self._cand_set.ids)
        #: Rows of every distance product (fixed by |C|).
        self.height = product_rows(n_c)
        #: Bytes of one finished row (|C| float64); the product's buffer holds ``height`` of them.
        self.row_bytes = 8 * n_c
        self._buf: np.ndarray | None = None
        self._owner: RowBlock | None = None
        #: Whether C is V in id order (a column is its word's id).
        self.identity = bool(
            np.array_equal(mechanism._candidates, np.arange(len(mechanism.vocab)))
        )
        #: |C| zeros for :func:`~dpcore.text.sampling.weight_row`, and each row's block totals
        #: (:func:`~dpcore.text.sampling.block_ends`).
        self._zeros = np.zeros(n_c)
        self._ends = np.empty((self.height, -(-n_c // SEARCH_BLOCK) + 1))

    @property
    def buffer_bytes(self) -> int:
        """Memory of the product's buffer: ``height`` rows of |C| float64."""
        return self.height * self.row_bytes

    def block(self, ids: np.ndarray) -> RowBlock:
        """A block of words: ``block.sample_ids(word_id, n, rng)`` draws for any of them."""
        return RowBlock(self, self.mechanism._check_ids(np.asarray(ids, dtype=np.int64)))

    def _product(self, ids: np.ndarray, owner: RowBlock) -> np.ndarray:
        """−2·φ(ids)·φ(C)ᵀ for ``height`` rows (``ids`` padded with its last id) into the buffer."""
        g = self.height
        if ids.size < g:
            ids = np.concatenate([ids, np.full(g - ids.size, ids[-1], dtype=np.int64)])
        cand = self._cand_set
        if self._buf is None:
            self._buf = np.empty((g, len(cand.ids)))
        x = self.mechanism.vocab.vectors[ids]
        x *= -2.0  # (−2·φ(x))·φ(C)ᵀ: −2·φ(x)·φ(C)ᵀ exactly (weight_row's ``doubled``)
        with one_blas_thread():
            np.matmul(x, cand.vecs.T, out=self._buf)
        self._owner = owner
        return self._buf


class RowBlock:
    """Words of one block of :class:`RowBlocks`; their rows are computed on first use."""

    def __init__(self, blocks: RowBlocks, ids: np.ndarray) -> None:
        self._blocks = blocks
        self.ids = ids
        self._pos: dict[int, int] = {}
        for k, w in enumerate(ids.tolist()):  # the block's words (at most a few dozen)
            self._pos.setdefault(int(w), k)
        self._group = -1
        self._ready = np.zeros(blocks.height, dtype=bool)
        self._row_ends: list[np.ndarray] = [blocks._ends[0]] * blocks.height

    def _row(self, k: int) -> tuple[np.ndarray, np.ndarray]:
        """The finished row of the block's k-th word: its weights over C and their block totals
        (:func:`~dpcore.text.sampling.block_ends`; the last is the row's total)."""
        bl, g = self._blocks, self._blocks.height
        grp = k // g
        if bl._owner is not self or self._group != grp:
            bl._product(self.ids[grp * g : (grp + 1) * g], self)
            self._group = grp
            self._ready[:] = False
        i = k - grp * g
        row = bl._buf[i]  # type: ignore[index]
        if not self._ready[i]:
            mech, wid = bl.mechanism, int(self.ids[k])
            cand = bl._cand_set
            weight_row(
                row,
                mech.vocab.sq_norms[wid],
                cand,
                int(cand.column_of[wid]),
                mech._em_epsilon,
                mech._truncate,
                zeros=bl._zeros,
                doubled=True,
            )
            self._row_ends[i] = block_ends(row, bl._ends[i])
            self._ready[i] = True
        return row, self._row_ends[i]

    def sample_ids(self, word_id: int, n: int, rng: np.random.Generator) -> np.ndarray:
        """``n`` draws of M(word_id): the uniforms of :meth:`ExponentialTokenMechanism.sample_ids`
        for ``np.full(n, word_id)``, in its order (all coins, then all picks), on the block's row."""
        k = self._pos.get(int(word_id))
        if k is None:  # not a word of this block: a block of its own
            return self._blocks.block(np.asarray([word_id])).sample_ids(word_id, n, rng)
        n = int(n)
        sel, target, cdf = self._picks(k, n, rng)
        if target is None:
            return np.full(n, self.ids[k], dtype=np.int64)
        # searched in increasing order (each search starts where the last ended, in cache):
        # the same column for every draw as searching them in draw order
        order = np.argsort(target)
        pos = np.empty(target.size, dtype=np.int64)
        pos[order] = search_blocks(*cdf, target[order])
        picked = pos if self._blocks.identity else self._blocks.mechanism._candidates[pos]
        if sel is None:
            return picked
        out = np.full(n, self.ids[k], dtype=np.int64)
        out[sel] = picked
        return out

    def sample_ids_sorted(
        self, word_id: int, bounds: Sequence[int], rng: np.random.Generator
    ) -> np.ndarray:
        """:meth:`sample_ids` of ``bounds[-1]`` draws, each segment ``bounds[j]:bounds[j + 1]``
        of them in increasing order: the same draws from the same uniforms, sorted within each
        segment (what counting them per segment needs, without putting them back in draw order)."""
        k = self._pos.get(int(word_id))
        if k is None:
            return self._blocks.block(np.asarray([word_id])).sample_ids_sorted(word_id, bounds, rng)
        n = int(bounds[-1])
        sel, target, cdf = self._picks(k, n, rng)
        wid = int(self.ids[k])
        if target is None:
            return np.full(n, wid, dtype=np.int64)
        cand = None if self._blocks.identity else self._blocks.mechanism._candidates
        cuts = bounds if sel is None else np.searchsorted(sel, bounds).tolist()
        for j in range(len(bounds) - 1):  # each segment's picks in increasing order
            target[cuts[j] : cuts[j + 1]].sort()
        pos = search_blocks(*cdf, target)  # one search: a few increasing runs
        picked = pos if cand is None else cand[pos]  # C is sorted: the picks stay sorted
        if sel is None:
            return picked
        parts = []
        for j in range(len(bounds) - 1):
            seg = picked[cuts[j] : cuts[j + 1]]
            kept = int(bounds[j + 1] - bounds[j]) - seg.size  # draws whose coin kept the word
            if kept:  # the word itself, in its place
                at = int(np.searchsorted(seg, wid))
                parts += [seg[:at], np.full(kept, wid, dtype=np.int64), seg[at:]]
            else:
                parts.append(seg)
        return np.concatenate(parts)

    def _picks(
        self, k: int, n: int, rng: np.random.Generator
    ) -> tuple[np.ndarray | None, np.ndarray | None, tuple[np.ndarray, np.ndarray] | None]:
        """The uniforms of ``n`` draws of the block's k-th word (all coins, then all picks):
        (the draws whose coin replaces, increasing, or None when every coin does; their picks
        scaled to the row's total; the row's weights and block totals), or (an empty
        selection, None, None) when no coin replaces."""
        mech = self._blocks.mechanism
        u_coin = rng.random(n)
        u_pick = rng.random(n)
        p_replace = mech._replace_prob[self.ids[k]]
        every = p_replace >= 1.0  # every coin replaces (u < 1 always): SanText, or a word of V_S
        sel = None if every else np.flatnonzero(u_coin < p_replace)
        if sel is not None and sel.size == 0:
            return sel, None, None
        cdf = self._row(k)
        total = cdf[1][-1]
        target = u_pick if sel is None else u_pick[sel]
        target *= total
        np.minimum(target, np.nextafter(total, 0.0), out=target)
        return sel, target, cdf


@TEXT_MECHANISMS.register(
    "santext",
    display="SanText",
    summary="SanText: exponential mechanism over V, Pr ∝ exp(−½·ε·d(x,y)); ε·d-MLDP.",
    citation="Yue et al. 2021, eq. 1, Algorithm 1, Theorem 1",
    tags=("exact",),
)
class SanText(ExponentialTokenMechanism):
    """SanText (Yue et al. 2021, §4.2, Algorithm 1, eq. 1).

    Each token x is replaced by y ∈ V with Pr[M(x)=y] = C_x·exp(−½·ε·d_euc(φ(x), φ(y))),
    C_x = (Σ_{y'∈V} exp(−½·ε·d(x,y')))⁻¹. Satisfies ε·d(x,x')-LDP (MLDP), Theorem 1.

    Parameters
    ----------
    vocab:
        The vocabulary V with its embedding φ.
    epsilon:
        ε > 0 (per unit of Euclidean embedding distance).
    """

    name = "santext"

    def __init__(self, *, vocab: Vocabulary, epsilon: float) -> None:
        super().__init__(vocab=vocab, epsilon=epsilon)
        self._candidates = np.arange(len(vocab), dtype=np.int64)
        self._replace_prob = np.ones(len(vocab))
        self._em_epsilon = self.epsilon

    @property
    def privacy(self) -> TextPrivacy:
        return TextPrivacy(
            "MLDP", self.epsilon, 0.0, f"Euclidean {self.vocab.embedding} distance", "Yue et al. 2021, Thm 1"
        )


@TEXT_MECHANISMS.register(
    "santext+",
    display="SanText+",
    summary="SanText+: rare words (V_S) via SanText over V_S; others kept w.p. 1−p; UMLDP.",
    citation="Yue et al. 2021, eq. 2, Algorithm 2, Theorem 2",
    tags=("exact",),
)
class SanTextPlus(ExponentialTokenMechanism):
    """SanText+ (Yue et al. 2021, §4.3, Algorithm 2, eq. 2), with V_P = V_S.

    V_S = the ⌊w·|V|⌋ least frequent words of V (:meth:`Vocabulary.sensitive_mask`).

    - x ∈ V_S: y ∈ V_P = V_S with Pr = C_x·exp(−½·ε·d(x,y)), C_x normalising over V_P (eq. 1
      run over V_S and V_P).
    - x ∈ V_N: y = x with probability 1 − p; otherwise y ∈ V_P with
      Pr = p·C_x·exp(−½·ε·d(x,y)), C_x normalising over V_P (eq. 2). As x ∉ V_P, N_x = 1 − p.

    Satisfies (V_S, V_P, ε, ε₀)-UMLDP with ε₀ = ln(1/p) (Theorem 2; ε₀ = ∞ at p = 0).

    Parameters
    ----------
    vocab:
        The vocabulary V (its ``frequency`` defines V_S).
    epsilon:
        ε > 0.
    p:
        Probability that a non-sensitive token is replaced, in [0, 1] (paper default 0.3).
    w:
        Fraction of V marked sensitive, in (0, 1] (paper default 0.9). Needs ⌊w·|V|⌋ ≥ 1.
    """

    PARAMETERS = (
        ParameterSpec(
            "p", 0.3, "float", 0.0, 1.0,
            "probability of replacing a non-sensitive word (Yue et al. 2021, Algorithm 2; ε₀ = ln 1/p)",
            step=0.05,
        ),
        ParameterSpec(
            "w", 0.9, "float", 0.0, 1.0,
            "fraction of V, the rarest words by public frequency, that is sensitive (V_S, §4.3); "
            "at least one word: ⌊w·|V|⌋ ≥ 1",
            open_low=True, ui_low=0.05, step=0.05,
        ),
    )  # fmt: skip

    name = "santext+"

    def __init__(self, *, vocab: Vocabulary, epsilon: float, p: float = 0.3, w: float = 0.9) -> None:
        super().__init__(vocab=vocab, epsilon=epsilon)
        self.p = check_probability(p, name="p")
        self.w = check_probability(w, name="w")
        self.sensitive = vocab.sensitive_mask(self.w)
        self.sensitive.setflags(write=False)
        if not self.sensitive.any():
            raise DPCoreError(
                f"w = {self.w:g} marks no word of the {len(vocab):,}-word vocabulary as sensitive "
                f"(⌊w·|V|⌋ = {sensitive_count(len(vocab), self.w)}); raise w"
            )
        self._candidates = np.flatnonzero(self.sensitive).astype(np.int64)
        self._replace_prob = np.where(self.sensitive, 1.0, self.p)
        self._em_epsilon = self.epsilon

    @property
    def privacy(self) -> TextPrivacy:
        e0 = math.inf if self.p == 0 else math.log(1.0 / self.p)
        return TextPrivacy(
            "UMLDP", self.epsilon, e0, f"Euclidean {self.vocab.embedding} distance", "Yue et al. 2021, Thm 2"
        )

    def params(self) -> dict[str, Any]:
        out = super().params()
        out.update(
            p=self.p,
            w=self.w,
            sensitive_size=int(self.sensitive.sum()),
            frequency_source=self.vocab.frequency_source,
        )
        return out


@TEXT_MECHANISMS.register(
    "random",
    display="Random replacement",
    summary="Baseline: every token replaced by a uniform word of V (0-LDP, no utility).",
    citation="Yue et al. 2021, §5.2 (random sanitization)",
    tags=("exact", "baseline"),
)
class RandomReplacement(ExponentialTokenMechanism):
    """Uniform replacement over V: Pr[M(x)=y] = 1/|V| (eq. 1 at ε = 0; Yue et al. 2021, §5.2, A.3).

    ``epsilon`` is accepted for a uniform interface and ignored: the mechanism is 0-LDP.
    """

    name = "random"

    def __init__(self, *, vocab: Vocabulary, epsilon: float = 1.0) -> None:
        super().__init__(vocab=vocab, epsilon=epsilon)
        self._candidates = np.arange(len(vocab), dtype=np.int64)
        self._replace_prob = np.ones(len(vocab))
        self._em_epsilon = 0.0

    @property
    def privacy(self) -> TextPrivacy:
        return TextPrivacy("LDP", 0.0, 0.0, "any metric", "uniform output, Yue et al. 2021 §5.2")


@TEXT_MECHANISMS.register(
    "feyisetan",
    display="CMP",
    summary="Baseline: φ(x) + noise ∝ exp(−ε‖z‖), then the nearest word (ε·d metric DP).",
    citation="Feyisetan et al. 2020 (WSDM), §3; Yue et al. 2021, §5.2",
    tags=("baseline",),
)
class Feyisetan(TextMechanism):
    """Feyisetan, Balle, Drake, Diethe (2020): noisy embedding, then nearest word.

    z has density ∝ exp(−ε‖z‖₂) on ℝ^m: a uniform direction (normalised Gaussian) times a radius
    R ~ Gamma(shape m, scale 1/ε). The output is argmin_{y∈V} ‖φ(x) + z − φ(y)‖₂. This is
    ε·d_euc metric DP (post-processing of the multivariate Laplace-like noise). The output
    distribution has no closed form: metrics for it are Monte-Carlo only.

    Parameters
    ----------
    vocab:
        The vocabulary V.
    epsilon:
        ε > 0 (note: no ½ factor, unlike eq. 1 of SanText).
    """

    name = "feyisetan"
    has_exact_distribution = False

    @property
    def privacy(self) -> TextPrivacy:
        return TextPrivacy(
            "metric DP",
            self.epsilon,
            0.0,
            f"Euclidean {self.vocab.embedding} distance",
            "Feyisetan et al. 2020",
        )

    def noise(self, n: int, rng: np.random.Generator) -> np.ndarray:
        """n draws of Z with density ∝ exp(−ε‖z‖₂): R·U, R ~ Gamma(m, 1/ε), U uniform on the sphere.

        The same random stream as :meth:`sample_ids` (all radii, then the Gaussian directions row
        by row), so ``sample_ids`` equals the nearest word to φ(x) + ``noise(n, rng)`` (tested).
        """
        m = self.vocab.dim
        radius = rng.gamma(shape=float(m), scale=1.0 / self.epsilon, size=n)
        z = rng.standard_normal((n, m))
        z *= (radius / np.linalg.norm(z, axis=1))[:, None]
        return z

    def sample_ids(
        self, ids: np.ndarray, rng: np.random.Generator, *, max_elements: int = NOISY_NN_MAX_ELEMENTS
    ) -> np.ndarray:
        """Noisy nearest neighbour for each position: argmin_y ‖φ(x) + z − φ(y)‖₂ (§3).

        The noise is the stream of :meth:`noise` (all radii, then the Gaussian directions in
        position order), drawn :data:`~dpcore.text.nearest.POSITION_CHUNK` positions at a
        time; the search is :func:`~dpcore.text.nearest.nearest_k` (float32 products, every
        decision exact in float64; ``max_elements`` bounds its blocks of scores).
        """
        ids = self._check_ids(ids)
        n, m = ids.size, self.vocab.dim
        radius = rng.gamma(shape=float(m), scale=1.0 / self.epsilon, size=n)
        out = np.empty(n, dtype=np.int64)
        vec = self.vocab.vectors
        for start in range(0, n, POSITION_CHUNK):
            sl = slice(start, min(n, start + POSITION_CHUNK))
            z = rng.standard_normal((sl.stop - sl.start, m))
            z *= (radius[sl] / np.linalg.norm(z, axis=1))[:, None]
            z += vec[ids[sl]]
            out[sl] = nearest_k(z, self.vocab, 1, max_elements=max_elements)[0][:, 0]
        return out


def mechanism_parameters(name: str) -> dict[str, Any]:
    """The keyword parameters of a registered text mechanism beyond ``vocab`` and ``epsilon``,
    with their defaults (read from its constructor: one source of truth for the CLI, the
    dashboard and the API).

    Examples
    --------
    >>> from dpcore.text.mechanisms import mechanism_parameters
    >>> mechanism_parameters("santext+")
    {'p': 0.3, 'w': 0.9}
    """
    import inspect

    factory = TEXT_MECHANISMS.get(name).factory
    sig = inspect.signature(factory)
    return {
        k: (None if v.default is inspect.Parameter.empty else v.default)
        for k, v in sig.parameters.items()
        if k not in ("self", "vocab", "epsilon", "mlm") and v.kind is inspect.Parameter.KEYWORD_ONLY
    }


def create_text_mechanism(
    name: str,
    *,
    vocab: Vocabulary,
    epsilon: float,
    **params: Any,
) -> TextMechanism:
    """Build a registered text mechanism with its own parameters (``None`` values are ignored).

    Raises
    ------
    DPCoreError
        Unknown name, bad parameters, or a parameter the mechanism does not have (the message
        lists the ones it has).

    Examples
    --------
    >>> from dpcore.text import create_text_mechanism
    >>> from dpcore.text.vocab import build_vocabulary
    >>> m = create_text_mechanism("santext", vocab=build_vocabulary("glove", size=2000), epsilon=2.0)
    >>> m.privacy.notion, m.claimed_epsilon
    ('MLDP', 2.0)
    """
    accepted = mechanism_parameters(name)  # clear error for unknown names
    given = {k: v for k, v in params.items() if v is not None}
    unknown = [k for k in given if k not in accepted]
    if unknown:
        has = ", ".join(accepted) if accepted else "none"
        raise DPCoreError(
            f"{', '.join(unknown)} {'does' if len(unknown) == 1 else 'do'} not apply to {name} "
            f"(its parameters: {has})"
        )
    from dpcore.parameters import check_parameter
    from dpcore.text.parameters import mechanism_parameter_specs

    specs = {sp.name: sp for sp in mechanism_parameter_specs(name)}
    given = {k: check_parameter(specs[k], v) if k in specs else v for k, v in given.items()}
    return TEXT_MECHANISMS.create(name, vocab=vocab, epsilon=epsilon, **given)
