"""Where the text audit draws its samples: this process, a local process pool, or Ray.

Every word's draws come from its own stream, ``SeedSequence(seed, "text-audit", stage, word)``
(:func:`dpcore.rng.cell_seed_sequence`), so *which* process draws a word changes nothing: the
counts of a word are the same in this process, in any of ``workers`` forked processes, or in a
Ray task on another machine. Words are sent out in shards and the results are merged **in word
order** (outputs outside the vocabulary get their codes in that order, sorted by label within a
word), so a run's result does not depend on the engine, the number of workers or the shard size.

Engines
-------
Both run on :func:`dpcore.executor.run_tasks`, dpcore's one home for worker processes (workers
die with their parent; a broken pool is replaced).

``local``
    ``workers = 1``: in this process. ``workers > 1``: a pool of forked processes (on Linux
    they share the sanitizer and the vocabulary copy-on-write and start at once; where fork is
    not available, a thread pool).
``ray``
    Ray tasks, one per shard (``address`` joins an existing cluster; by default a local Ray with
    ``workers`` CPUs is started for the run and stopped after it). The sanitizer is shipped once
    with ``ray.put``; a sanitizer loaded from a user's ``file.py`` is pickled by value, so the
    cluster's workers need dpcore but not the file.

Blocks
------
A sanitizer with ``row_blocks()`` (dpcore's exponential mechanisms through
:class:`~dpcore.textaudit.interface.DpcoreSanitizer`) has the words of a shard drawn in blocks of
:data:`BLOCK_WORDS` (default: its product height, 64 words up to |V| = 131,072): one matrix
product gives the distance rows of a block's words, instead of one matrix-vector product (a full
read of the embedding matrix) per word. Each word still takes its own uniforms from its own
stream, in the same order, and every product has the same height, so the draws do not depend on
the block size or the worker (:class:`dpcore.text.mechanisms.RowBlocks`). Every other sanitizer
is drawn word by word.

What a word returns is either its full counts per half (the confirmation stage) or a small
summary (the screen, :class:`WordSummary`): memory in the driver stays bounded by the number of
words times the summary size, not by the draws.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dpcore.blas import one_blas_thread
from dpcore.executor import ENGINES
from dpcore.rng import cell_seed_sequence
from dpcore.textaudit.sampling import OutputCodebook, SanitizerRaised, SegmentCounts, draw_counts
from dpcore.topk import largest_k
from dpcore.validation import DPCoreError

__all__ = [
    "ENGINES",
    "DrawPlan",
    "WordDraws",
    "WordSummary",
    "draw_words",
]

#: Scores a co-located pair of full screen draws: (lower bound favouring a, favouring b).
PairScorer = Callable[
    ["WordDraws", "WordDraws", int, tuple[int, ...], "np.ndarray | None"], tuple[float, float]
]
#: Draws per shard the engine aims at (enough work to amortise a task, small enough for progress).
SHARD_DRAWS = 1 << 22


@dataclass(frozen=True)
class DrawPlan:
    """What to draw for every word of one stage.

    Attributes
    ----------
    stage:
        The stage's name in the word streams (``"screen"``, ``"pilot"``, ``"confirm"``).
    halves:
        Draws per half, drawn one after the other from the word's stream (``(n_sel, n_eval)``
        for a test, ``(m,)`` for the screen).
    top:
        ``None``: return full counts per half. An integer t: return a :class:`WordSummary`
        with the t most frequent outputs instead (the screen).
    """

    stage: str
    halves: tuple[int, ...]
    top: int | None = None
    #: The screen's pairings, shape (P, |V|): each word id's partner id per pairing (−1: none).
    #: Every word's summary then carries its count of each partner and of outputs outside V.
    partners: np.ndarray | None = None
    #: With a scorer, the words of pairing 0 arrive side by side (shards never split a pair) and
    #: each such pair is also scored on all its outputs by ``pair_scorer(a, b, |V|, halves,
    #: eligible)`` → (lower bound favouring a, favouring b), before both are reduced (the screen's
    #: :func:`~dpcore.textaudit.screen.pair_lower_bounds`). A module-level function, so that Ray
    #: can ship it.
    pair_scorer: PairScorer | None = None

    @property
    def colocated(self) -> bool:
        return self.pair_scorer is not None

    @property
    def draws_per_word(self) -> int:
        return int(sum(self.halves))


@dataclass(frozen=True)
class WordSummary:
    """A word's screen draws reduced to what proposing pairs needs.

    Attributes
    ----------
    codes:
        The ``t`` most frequent outputs (vocabulary ids; outputs outside the vocabulary as
        ``-1 − k`` for ``labels[k]``), most frequent first (ties: smaller code first).
    counts:
        Their counts (int64, descending).
    self_count:
        How often the word produced itself.
    residual:
        An upper bound on the count of any output *not* listed: the t-th largest count when the
        word had more than t distinct outputs, else 0 (every output is listed).
    distinct:
        Number of distinct outputs seen.
    labels:
        Labels of the listed outputs outside the vocabulary.
    """

    codes: np.ndarray
    counts: np.ndarray
    self_count: int
    residual: int
    distinct: int
    labels: tuple[str, ...] = ()
    #: Per pairing of the plan: how often the word produced its partner.
    partner_counts: tuple[int, ...] = ()
    #: Per half: how often the word produced an output outside the vocabulary.
    outside_counts: tuple[int, ...] = ()
    #: Pairing 0's pair scored on all outputs: the lower bound (the plan's ``pair_scorer``) on
    #: ln Pr[M(x) ∈ S] − ln Pr[M(x′) ∈ S], S chosen on the first half of both words' draws and
    #: counted on the second (nan: not scored).
    pair_lower: float = float("nan")


@dataclass
class WordDraws:
    """One word's draws for one stage (counts per half, or a summary), or its failure."""

    wid: int
    counts: list[np.ndarray] = field(default_factory=list)  # per half, over the vocabulary
    extras: list[dict[str, int]] = field(default_factory=list)  # per half: other outputs
    summary: WordSummary | None = None
    error: str | None = None
    #: The same counts per half over the outputs drawn only, in place of ``counts`` (the
    #: screen's words on the id fast path: vocabulary outputs only, ``extras`` empty).
    sparse: SegmentCounts | None = None


def summarize(
    counts: np.ndarray,
    extras: dict[str, int],
    wid: int,
    top: int,
    *,
    partner_counts: tuple[int, ...] = (),
    outside_counts: tuple[int, ...] = (),
    pair_lower: float = float("nan"),
) -> WordSummary:
    """Reduce full counts (vocabulary part and other outputs) to a :class:`WordSummary`."""
    nz = np.flatnonzero(counts != 0)  # (a boolean mask: numpy finds its nonzeros 10× faster)
    return summarize_drawn(
        nz,
        counts[nz],
        extras,
        top,
        self_count=int(counts[wid]) if 0 <= wid < counts.size else 0,
        partner_counts=partner_counts,
        outside_counts=outside_counts,
        pair_lower=pair_lower,
    )


def summarize_drawn(
    ids: np.ndarray,
    counts: np.ndarray,
    extras: dict[str, int],
    top: int,
    *,
    self_count: int,
    partner_counts: tuple[int, ...] = (),
    outside_counts: tuple[int, ...] = (),
    pair_lower: float = float("nan"),
) -> WordSummary:
    """:func:`summarize` from the vocabulary outputs drawn (``ids`` increasing, ``counts`` > 0)."""
    labels = tuple(sorted(extras))
    if labels:
        ext = np.asarray([extras[k] for k in labels], dtype=np.int64)
        codes = np.concatenate([ids, -1 - np.arange(len(labels), dtype=np.int64)])
        vals = np.concatenate([counts, ext]).astype(np.int64)
    else:  # vocabulary outputs only (the id fast path): the same arrays without the concatenations
        codes = ids.astype(np.int64, copy=False)
        vals = counts.astype(np.int64, copy=False)
    distinct = int(vals.size)
    if vals.size > top:
        keep = largest_k(vals, top)  # ties by position: the same on every processor
        codes, vals = codes[keep], vals[keep]
        residual = int(vals.min())
    else:
        residual = 0
    order = np.lexsort((codes, -vals))
    codes, vals = codes[order].astype(np.int64, copy=False), vals[order]
    # listed outputs outside V: renumbered -1, -2, … in label order among the listed ones
    outside = codes < 0
    used = np.unique(-1 - codes[outside]) if labels else np.zeros(0, dtype=np.int64)
    if used.size:
        codes = codes.copy()
        codes[outside] = -1 - np.searchsorted(used, -1 - codes[outside])
    return WordSummary(
        codes=codes,
        counts=vals,
        self_count=int(self_count),
        residual=residual,
        distinct=distinct,
        labels=tuple(labels[int(i)] for i in used),
        partner_counts=tuple(int(c) for c in partner_counts),
        outside_counts=tuple(int(c) for c in outside_counts),
        pair_lower=float(pair_lower),
    )


def draw_one_word(
    sanitizer: Any,
    words: np.ndarray,
    wid: int,
    seed: int,
    plan: DrawPlan,
    tick: Callable[[int], None] | None = None,
    *,
    reduce: bool = True,
    sampler: Any = None,
) -> WordDraws:
    """All of one word's draws for ``plan``, from the word's own stream.

    With ``plan.top`` the draws are reduced to a :class:`WordSummary` (unless ``reduce`` is
    False: the caller scores a co-located pair first, then calls :func:`reduce_draws`).
    ``sampler`` (default: the sanitizer) is what ``sample_ids`` is called on: a block of the
    sanitizer's ``row_blocks()`` holding this word (:func:`_draw_shard`).
    """
    word = str(words[wid])
    rng = np.random.default_rng(cell_seed_sequence(seed, "text-audit", plan.stage, word))
    out = WordDraws(wid=wid)
    n_base = len(words)
    src = sanitizer if sampler is None else sampler
    fast = callable(getattr(src, "sample_ids", None))
    # the screen's words on the id fast path: counts over the outputs drawn only
    sparse = fast and plan.top is not None
    try:
        # all halves from one stream, in the same sample calls (one distance row per chunk, not
        # one per half), split into consecutive segments
        cb = _BaseOnly(n_base) if fast else OutputCodebook(words, base_index=_base_index(words))
        per = draw_counts(
            src,
            word,
            wid,
            plan.draws_per_word,
            rng,
            cb,
            on_progress=tick,
            split=plan.halves,  # type: ignore[arg-type]
            sparse=sparse,
        )
        if sparse:
            out.sparse = per.below(n_base)
            out.extras = [{} for _ in plan.halves]
            per = []
        for c in per:
            c = c if c.size >= n_base else np.pad(c, (0, n_base - c.size))
            extra = {
                str(k): int(c[v]) for k, v in getattr(cb, "extra", {}).items() if v < c.size and c[v] > 0
            }
            out.counts.append(c[:n_base])
            out.extras.append(extra)
    except SanitizerRaised as exc:
        return WordDraws(wid=wid, error=str(exc))
    if plan.top is not None and reduce:
        return reduce_draws(out, plan)
    return out


def reduce_draws(wd: WordDraws, plan: DrawPlan, pair_lower: float = float("nan")) -> WordDraws:
    """A word's full screen counts → its :class:`WordSummary` (counts dropped)."""
    if wd.error is not None or plan.top is None:
        return wd
    if wd.sparse is not None:
        sc = wd.sparse
        total = sc.counts.sum(axis=0) if sc.counts.shape[0] > 1 else sc.counts[0]
        asked = [wd.wid] if plan.partners is None else [wd.wid, *plan.partners[:, wd.wid].tolist()]
        got = sc.lookup(total, np.asarray(asked)).tolist()  # itself, then its partners
        summary = summarize_drawn(
            sc.ids,
            total,
            {},
            plan.top,
            self_count=got[0],
            partner_counts=tuple(got[1:]),
            outside_counts=(0,) * sc.counts.shape[0],
            pair_lower=pair_lower,
        )
        return WordDraws(wid=wd.wid, summary=summary)
    total = wd.counts[0] + wd.counts[1] if len(wd.counts) > 1 else wd.counts[0].copy()
    extras = dict(wd.extras[0])
    for i, (c, e) in enumerate(zip(wd.counts[1:], wd.extras[1:], strict=True)):
        if i:
            total += c
        for k, v in e.items():
            extras[k] = extras.get(k, 0) + v
    partner_counts: tuple[int, ...] = ()
    if plan.partners is not None:
        ps = plan.partners[:, wd.wid]
        partner_counts = tuple(int(total[p]) if p >= 0 else 0 for p in ps)
    outside = tuple(int(sum(e.values())) for e in wd.extras)
    summary = summarize(
        total,
        extras,
        wd.wid,
        plan.top,
        partner_counts=partner_counts,
        outside_counts=outside,
        pair_lower=pair_lower,
    )
    return WordDraws(wid=wd.wid, summary=summary)


_INDEX_CACHE: dict[int, tuple[np.ndarray, Any]] = {}


def _base_index(words: np.ndarray) -> Any:
    """The vocabulary's word → id index, built once per process and vocabulary."""
    hit = _INDEX_CACHE.get(id(words))
    if hit is None or hit[0] is not words:
        import pandas as pd

        _INDEX_CACHE.clear()
        hit = (words, pd.Index(np.asarray(words, dtype=object)))
        _INDEX_CACHE[id(words)] = hit
    return hit[1]


class _BaseOnly:
    """The codebook of the id fast path: outputs are vocabulary ids, nothing else."""

    def __init__(self, n: int) -> None:
        self.n = n
        self.extra: dict[str, int] = {}

    def __len__(self) -> int:
        return self.n


#: Words per block of a sanitizer with row blocks (``row_blocks()``); None: the height of its
#: distance products (:attr:`dpcore.text.mechanisms.RowBlocks.height`). The draws are the same
#: at any value (tests set 1 and 7).
BLOCK_WORDS: int | None = None


def row_blocks_of(sanitizer: Any) -> Any | None:
    """The sanitizer's block capability, or None: draw word by word.

    Only a sanitizer whose own ``sample_ids`` is callable is asked (a wrapper that forwards other
    attributes but draws through ``sample``, :class:`~dpcore.textaudit.contract.GlobalStateReseeded`,
    is not), and one whose ``row_blocks()`` raises draws word by word.
    """
    if not callable(getattr(sanitizer, "sample_ids", None)):
        return None
    fn = getattr(sanitizer, "row_blocks", None)
    if not callable(fn):
        return None
    from dpcore.textaudit.wrapping import stdout_to_stderr

    try:
        with stdout_to_stderr():
            rows = fn()
    except Exception:
        return None
    ok = rows is not None and callable(getattr(rows, "block", None))
    return rows if ok and isinstance(getattr(rows, "height", None), int) and rows.height >= 1 else None


def block_info(sanitizer: Any) -> dict[str, Any]:
    """How the engine draws this sanitizer's words, for a run's ``execution``.

    ``block_words``: words per block (1: word by word); ``block_bytes``: the memory of one
    block's distance product in each drawing process (0 word by word); ``product_rows``: rows
    of every product (the same at any block size).
    """
    rb = row_blocks_of(sanitizer)
    if rb is None:
        return {"block_words": 1, "block_bytes": 0, "product_rows": 0}
    return {
        "block_words": int(BLOCK_WORDS or rb.height),
        "block_bytes": int(getattr(rb, "buffer_bytes", 0)),
        "product_rows": int(rb.height),
    }


class _Samplers:
    """What each word of a shard draws from: a block of the sanitizer's row blocks, or itself.

    Blocks are made as the words are reached, in order (one block, and one product buffer, in
    memory at a time).
    """

    def __init__(self, sanitizer: Any, wids: Sequence[int]) -> None:
        self.sanitizer = sanitizer
        self.wids = np.asarray(wids, dtype=np.int64)
        self.rows = row_blocks_of(sanitizer)
        self.size = max(1, int(BLOCK_WORDS or (self.rows.height if self.rows is not None else 1)))
        self._start = -1
        self._block: Any = None

    def at(self, i: int) -> Any:
        """The sampler of the shard's i-th word (None: the sanitizer itself)."""
        if self.rows is None:
            return None
        start = i - i % self.size
        if start != self._start:
            self._start = start
            try:
                self._block = self.rows.block(self.wids[start : start + self.size])
            except Exception:
                self._block = None
        return self._block


def _draw_shard(
    sanitizer: Any,
    words: np.ndarray,
    wids: Sequence[int],
    seed: int,
    plan: DrawPlan,
    tick: Callable[[int], None] | None = None,
) -> list:
    with one_blas_thread():  # words are the parallel unit (dpcore.blas)
        samplers = _Samplers(sanitizer, wids)
        if plan.top is None or not plan.colocated or plan.partners is None:
            return [
                draw_one_word(sanitizer, words, int(w), seed, plan, tick, sampler=samplers.at(i))
                for i, w in enumerate(wids)
            ]
        return _screen_shard(sanitizer, words, [int(w) for w in wids], seed, plan, tick, samplers)


def _screen_shard(
    sanitizer: Any,
    words: np.ndarray,
    wids: list[int],
    seed: int,
    plan: DrawPlan,
    tick: Callable[[int], None] | None,
    samplers: _Samplers | None = None,
) -> list[WordDraws]:
    """A screen shard whose pairing-0 pairs sit side by side: each pair is scored, then reduced.

    At most two words' full counts are held at once.
    """
    from dpcore.textaudit.sampling import eligible_outputs

    assert plan.partners is not None
    partner0 = plan.partners[0]
    n_base = len(words)
    elig = eligible_outputs(sanitizer, n_base)
    samplers = samplers if samplers is not None else _Samplers(sanitizer, wids)
    out: list[WordDraws] = []
    i = 0
    while i < len(wids):
        w = wids[i]
        a = draw_one_word(sanitizer, words, w, seed, plan, tick, reduce=False, sampler=samplers.at(i))
        if i + 1 < len(wids) and partner0[w] == wids[i + 1]:
            b = draw_one_word(
                sanitizer, words, wids[i + 1], seed, plan, tick, reduce=False, sampler=samplers.at(i + 1)
            )
            assert plan.pair_scorer is not None
            la, lb = plan.pair_scorer(a, b, n_base, plan.halves, elig)
            out += [reduce_draws(a, plan, la), reduce_draws(b, plan, lb)]
            i += 2
        else:
            out.append(reduce_draws(a, plan))
            i += 1
    return out


# --- local pool and Ray: dpcore.executor -------------------------------------------------------


def _shard_task(state: tuple[Any, np.ndarray, int, DrawPlan], shard: np.ndarray) -> list:
    sanitizer, words, seed, plan = state
    return _draw_shard(sanitizer, words, shard, seed, plan)


def _shards(wids: np.ndarray, plan: DrawPlan, workers: int) -> list[np.ndarray]:
    per = max(1, SHARD_DRAWS // max(1, plan.draws_per_word))
    # at least 4 shards per worker for balance, when there are words enough
    per = max(1, min(per, -(-len(wids) // (4 * workers))))
    if plan.colocated:  # never split a pair of pairing 0 (they are laid out side by side)
        per += per % 2
    return [wids[i : i + per] for i in range(0, len(wids), per)]


def draw_words(
    sanitizer: Any,
    words: np.ndarray,
    wids: Sequence[int] | np.ndarray,
    seed: int,
    plan: DrawPlan,
    *,
    engine: str = "local",
    workers: int = 1,
    address: str | None = None,
    tick: Callable[[int], None] | None = None,
) -> list[WordDraws]:
    """Draw ``plan`` for every word id in ``wids``; results in the order of ``wids``.

    Parameters
    ----------
    sanitizer:
        The audited sanitizer (its ``sample`` or ``sample_ids``).
    words:
        The vocabulary's words (id → word).
    wids:
        Word ids to draw, each once.
    seed:
        The audit's seed; each word's stream is derived from it, the stage and the word.
    plan:
        Draws per half and whether to summarise.
    engine, workers, address:
        See the module docstring.
    tick:
        Called with the number of draws done (per chunk in this process, per shard elsewhere).
    """
    if engine not in ENGINES:
        raise DPCoreError(f"unknown engine {engine!r}; choose one of: {', '.join(ENGINES)}")
    wids = np.asarray(wids, dtype=np.int64)
    if wids.size == 0:
        return []
    if engine == "local" and (workers <= 1 or wids.size == 1):
        return _draw_shard(sanitizer, words, wids, seed, plan, tick)
    return _draw_pool(sanitizer, words, wids, seed, plan, workers, tick, engine=engine, address=address)


def _draw_pool(
    sanitizer: Any,
    words: np.ndarray,
    wids: np.ndarray,
    seed: int,
    plan: DrawPlan,
    workers: int,
    tick: Callable[[int], None] | None,
    *,
    engine: str = "local",
    address: str | None = None,
) -> list[WordDraws]:
    """Shards on :func:`dpcore.executor.run_tasks`: forked local processes, or Ray tasks.

    A worker that dies (the sanitizer calls ``os._exit``, crashes, or is killed) loses the
    shards then in flight: their words are failed words, with the reason, and a fresh pool draws
    the remaining shards; after :data:`~dpcore.executor.MAX_POOLS` broken pools every remaining
    word is a failed word (``on_lost="report"``: a sanitizer that ends its process on one word
    would end every pool it was sent to again). The workers die with this process and are killed
    at once when the run is interrupted or fails here (:mod:`dpcore.executor`).
    """
    from dpcore.executor import Lost, pickle_by_value, run_tasks

    if engine == "ray":
        from dpcore.textaudit.wrapping import unwrap

        pickle_by_value(sanitizer)
        pickle_by_value(unwrap(sanitizer))  # a plugin inside GlobalStateReseeded
        import ray

        if ray.is_initialized():
            workers = max(workers, int(ray.cluster_resources().get("CPU", workers)))
    shards = _shards(wids, plan, workers)
    results: list[list | None] = [None] * len(shards)
    for k, got in run_tasks(
        _shard_task,
        shards,
        workers=workers,
        state=(sanitizer, words, seed, plan),
        engine=engine,
        address=address,
        on_lost="report",
        what="the text audit",
    ):
        if isinstance(got, Lost):
            why = f"the worker process died while sampling this word ({got.reason})"
            got = [WordDraws(wid=int(w), error=why) for w in shards[k]]
        results[k] = got
        if tick is not None:
            tick(len(shards[k]) * plan.draws_per_word)
    return [wd for part in results for wd in (part or [])]
