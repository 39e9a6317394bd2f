"""Where the text audit draws its samples: this process, a local process pool, or Ray.

Every word's draws come from its own stream, ``SeedSequence(seed, "text-audit", stage, word)``
(:func:`dpcore.rng.cell_seed_sequence`), so *which* process draws a word changes nothing: the
counts of a word are the same in this process, in any of ``workers`` forked processes, or in a
Ray task on another machine. Words are sent out in shards and the results are merged **in word
order** (outputs outside the vocabulary get their codes in that order, sorted by label within a
word), so a run's result does not depend on the engine, the number of workers or the shard size.

Engines
-------
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

import sys
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Executor, ProcessPoolExecutor, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dpcore.blas import one_blas_thread
from dpcore.rng import cell_seed_sequence
from dpcore.textaudit.sampling import OutputCodebook, SanitizerRaised, draw_counts
from dpcore.topk import largest_k
from dpcore.validation import DPCoreError

__all__ = [
    "ENGINES",
    "DrawPlan",
    "WordDraws",
    "WordSummary",
    "draw_words",
]

ENGINES = ("local", "ray")
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
    labels = tuple(sorted(extras))
    nz = np.flatnonzero(counts != 0)  # (a boolean mask: numpy finds its nonzeros 10× faster)
    if labels:
        ext = np.asarray([extras[k] for k in labels], dtype=np.int64)
        codes = np.concatenate([nz, -1 - np.arange(len(labels), dtype=np.int64)])
        vals = np.concatenate([counts[nz], ext]).astype(np.int64)
    else:  # vocabulary outputs only (the id fast path): the same arrays without the concatenations
        codes = nz.astype(np.int64, copy=False)
        vals = counts[nz].astype(np.int64, copy=False)
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
        self_count=int(counts[wid]) if 0 <= wid < counts.size else 0,
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
        )
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


# --- local pool ------------------------------------------------------------------------------

_FORKED: tuple[Any, np.ndarray] | None = None


def _forked_shard(wids: Sequence[int], seed: int, plan: DrawPlan) -> list:
    assert _FORKED is not None
    sanitizer, words = _FORKED
    return _draw_shard(sanitizer, words, wids, seed, plan)


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
    if engine == "ray":
        return _draw_ray(sanitizer, words, wids, seed, plan, workers, address, tick)
    if workers <= 1 or wids.size == 1:
        return _draw_shard(sanitizer, words, wids, seed, plan, tick)
    return _draw_pool(sanitizer, words, wids, seed, plan, workers, tick)


def _collect(
    submit: Callable[[np.ndarray], Any],
    shards: list[np.ndarray],
    plan: DrawPlan,
    wait_any: Callable[[list], tuple[list, list]],
    fetch: Callable[[Any], list],
    in_flight: int,
    tick: Callable[[int], None] | None,
) -> list[WordDraws]:
    """Run shards with at most ``in_flight`` pending; reassemble in shard order.

    ``fetch`` returns a shard's results, or a string when the shard was lost because its worker
    process died: every word of that shard is then a failed word, with that reason.
    """
    results: dict[int, list] = {}
    pending: dict[Any, int] = {}
    nxt = 0
    while nxt < len(shards) or pending:
        while nxt < len(shards) and len(pending) < in_flight:
            pending[submit(shards[nxt])] = nxt
            nxt += 1
        done, _ = wait_any(list(pending))
        for fut in done:
            k = pending.pop(fut)
            got = fetch(fut)
            if isinstance(got, str):
                why = f"the worker process died while sampling this word ({got})"
                got = [WordDraws(wid=int(w), error=why) for w in shards[k]]
            results[k] = got
            if tick is not None:
                tick(len(shards[k]) * plan.draws_per_word)
    return [wd for k in range(len(shards)) for wd in results[k]]


def _draw_pool(
    sanitizer: Any,
    words: np.ndarray,
    wids: np.ndarray,
    seed: int,
    plan: DrawPlan,
    workers: int,
    tick: Callable[[int], None] | None,
) -> list[WordDraws]:
    """Shards in a pool of forked processes (threads where fork is not available).

    A worker process that dies (the sanitizer calls ``os._exit``, crashes, or is killed) breaks
    the pool: the words of the shards then in flight are failed words, a fresh pool draws the
    remaining shards, and after 3 broken pools every remaining word is a failed word.

    The workers die with this process (they are killed when it ends, SIGKILL included:
    :func:`dpcore.lifeline.worker_init`), and are killed at once when the run is interrupted or
    fails here, instead of finishing the shards they hold.
    """
    global _FORKED
    import multiprocessing as mp
    import os
    from concurrent.futures import Future
    from concurrent.futures.process import BrokenProcessPool

    from dpcore.lifeline import kill_workers, worker_init

    shards = _shards(wids, plan, workers)
    max_broken = 3
    state: dict[str, Any] = {"pool": None, "gen": 0, "broken": 0, "stale": False}
    gen_of: dict[Any, int] = {}
    if "fork" in mp.get_all_start_methods():
        _FORKED = (sanitizer, words)
        ctx = mp.get_context("fork")
        parent = os.getpid()

        def new_pool() -> Executor:  # forked from this thread, which shuts the pool down
            return ProcessPoolExecutor(
                max_workers=workers, mp_context=ctx, initializer=worker_init, initargs=(parent,)
            )

        def run(pool: Executor, s: np.ndarray) -> Any:
            return pool.submit(_forked_shard, s, seed, plan)
    else:  # pragma: no cover - no fork (Windows, some macOS set-ups)

        def new_pool() -> Executor:
            return ThreadPoolExecutor(max_workers=workers)

        def run(pool: Executor, s: np.ndarray) -> Any:
            return pool.submit(_draw_shard, sanitizer, words, s, seed, plan)

    def broke(gen: int) -> None:
        if gen == state["gen"] and not state["stale"]:
            state["broken"] += 1
            state["stale"] = True

    def submit(s: np.ndarray) -> Any:
        while True:
            if state["stale"]:  # the pool broke: a fresh one, while fewer than max_broken died
                state["pool"].shutdown(wait=True, cancel_futures=True)
                state["pool"] = new_pool() if state["broken"] < max_broken else None
                state["gen"] += 1
                state["stale"] = False
            if state["pool"] is None:
                lost: Future = Future()
                lost.set_result(
                    f"not drawn: worker processes died {max_broken} times, so no further pool was started"
                )
                return lost
            try:
                fut = run(state["pool"], s)
            except BrokenProcessPool:
                broke(state["gen"])
                continue
            gen_of[fut] = state["gen"]
            return fut

    def fetch(fut: Any) -> list | str:
        gen = gen_of.pop(fut, -1)
        try:
            return fut.result()
        except BrokenProcessPool:
            broke(gen)
            return (
                "a process of the local pool ended abruptly — os._exit, a crash or a kill — while this "
                f"word's shard was in flight; pool {gen + 1} of at most {max_broken}"
            )

    state["pool"] = new_pool()
    finished = False
    try:
        out = _collect(
            submit,
            shards,
            plan,
            lambda fs: wait(fs, return_when=FIRST_COMPLETED),
            fetch,
            2 * workers,
            tick,
        )
        finished = True
        return out
    finally:
        if state["pool"] is not None:
            if not finished:  # interrupted (Ctrl-C, SIGTERM as an exception) or failed
                kill_workers(state["pool"])
            state["pool"].shutdown(wait=True, cancel_futures=True)
        _FORKED = None


# --- Ray ---------------------------------------------------------------------------------------


def _pickle_user_code_by_value(sanitizer: Any) -> None:
    """A sanitizer from a user's ``file.py`` lives in a module a Ray worker cannot import."""
    mod = sys.modules.get(type(sanitizer).__module__)
    if mod is not None and mod.__name__.startswith("dpcore_user_sanitizer_"):
        from ray import cloudpickle  # Ray serialises with its own copy of cloudpickle

        cloudpickle.register_pickle_by_value(mod)


def _draw_ray(
    sanitizer: Any,
    words: np.ndarray,
    wids: np.ndarray,
    seed: int,
    plan: DrawPlan,
    workers: int,
    address: str | None,
    tick: Callable[[int], None] | None,
) -> list[WordDraws]:
    from dpcore.corpus.engines import start_ray

    stop = start_ray(address, workers)
    try:
        import ray

        from dpcore.textaudit.wrapping import unwrap

        _pickle_user_code_by_value(sanitizer)
        _pickle_user_code_by_value(unwrap(sanitizer))  # a plugin inside GlobalStateReseeded
        remote = ray.remote(num_cpus=1, max_retries=0)(_draw_shard)
        s_ref, w_ref = ray.put(sanitizer), ray.put(words)
        in_flight = 2 * max(1, int(ray.cluster_resources().get("CPU", workers)))
        shards = _shards(wids, plan, max(workers, in_flight // 2))

        died = (ray.exceptions.WorkerCrashedError, ray.exceptions.OutOfMemoryError)

        def fetch(ref: Any) -> list | str:
            try:
                return ray.get(ref)
            except died as exc:  # the sanitizer ended its worker (os._exit, a crash, a kill)
                return f"its Ray worker ended abruptly: {type(exc).__name__}"
            except Exception as exc:
                cause = getattr(exc, "cause", None) or exc
                first = str(cause).splitlines()[0][:300] if str(cause) else ""
                name = type(cause).__name__
                raise DPCoreError(f"a Ray task of the audit failed: {name}: {first}") from None

        return _collect(
            lambda s: remote.remote(s_ref, w_ref, s, seed, plan),
            shards,
            plan,
            lambda refs: ray.wait(refs, num_returns=1),
            fetch,
            in_flight,
            tick,
        )
    finally:
        stop()
