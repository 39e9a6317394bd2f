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

from dpcore.rng import cell_seed_sequence
from dpcore.textaudit.sampling import OutputCodebook, SanitizerRaised, draw_counts
from dpcore.validation import DPCoreError

__all__ = [
    "ENGINES",
    "DrawPlan",
    "WordDraws",
    "WordSummary",
    "draw_words",
]

ENGINES = ("local", "ray")
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


@dataclass
class WordDraws:
    """One word's draws for one stage (counts per half, or a summary), or its failure."""

    wid: int
    counts: list[np.ndarray] = field(default_factory=list)  # per half, over the vocabulary
    extras: list[dict[str, int]] = field(default_factory=list)  # per half: other outputs
    summary: WordSummary | None = None
    error: str | None = None


def summarize(counts: np.ndarray, extras: dict[str, int], wid: int, top: int) -> WordSummary:
    """Reduce full counts (vocabulary part and other outputs) to a :class:`WordSummary`."""
    labels = tuple(sorted(extras))
    ext = np.asarray([extras[k] for k in labels], dtype=np.int64)
    nz = np.flatnonzero(counts)
    codes = np.concatenate([nz, -1 - np.arange(len(labels), dtype=np.int64)])
    vals = np.concatenate([counts[nz], ext]).astype(np.int64)
    distinct = int(vals.size)
    if vals.size > top:
        keep = np.argpartition(-vals, top - 1)[:top]
        codes, vals = codes[keep], vals[keep]
        residual = int(vals.min())
    else:
        residual = 0
    order = np.lexsort((codes, -vals))
    codes, vals = codes[order], vals[order]
    used = sorted({int(-1 - c) for c in codes if c < 0})
    remap = {old: new for new, old in enumerate(used)}
    codes = np.asarray([c if c >= 0 else -1 - remap[int(-1 - c)] for c in codes], dtype=np.int64)
    return WordSummary(
        codes=codes,
        counts=vals,
        self_count=int(counts[wid]) if 0 <= wid < counts.size else 0,
        residual=residual,
        distinct=distinct,
        labels=tuple(labels[i] for i in used),
    )


def draw_one_word(
    sanitizer: Any,
    words: np.ndarray,
    wid: int,
    seed: int,
    plan: DrawPlan,
    tick: Callable[[int], None] | None = None,
) -> WordDraws:
    """All of one word's draws for ``plan``, from the word's own stream."""
    word = str(words[wid])
    rng = np.random.default_rng(cell_seed_sequence(seed, "text-audit", plan.stage, word))
    out = WordDraws(wid=wid)
    n_base = len(words)
    fast = callable(getattr(sanitizer, "sample_ids", None))
    try:
        for n in plan.halves:
            cb = _BaseOnly(n_base) if fast else OutputCodebook(words, base_index=_base_index(words))
            c = draw_counts(sanitizer, word, wid, n, rng, cb, on_progress=tick)  # type: ignore[arg-type]
            c = c if c.size >= n_base else np.pad(c, (0, n_base - c.size))
            extra = {str(k): int(c[v]) for k, v in getattr(cb, "extra", {}).items() if c[v] > 0}
            out.counts.append(c[:n_base])
            out.extras.append(extra)
    except SanitizerRaised as exc:
        return WordDraws(wid=wid, error=str(exc))
    if plan.top is not None:
        total = out.counts[0].copy()
        extras = dict(out.extras[0])
        for c, e in zip(out.counts[1:], out.extras[1:], strict=True):
            total += c
            for k, v in e.items():
                extras[k] = extras.get(k, 0) + v
        out.summary = summarize(total, extras, wid, plan.top)
        out.counts, out.extras = [], []
    return out


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


def _draw_shard(
    sanitizer: Any,
    words: np.ndarray,
    wids: Sequence[int],
    seed: int,
    plan: DrawPlan,
    tick: Callable[[int], None] | None = None,
) -> list:
    with _one_blas_thread():
        return [draw_one_word(sanitizer, words, int(w), seed, plan, tick) for w in wids]


def _one_blas_thread() -> Any:
    """Words are the parallel unit: each drawing process keeps BLAS to one thread.

    A word's row (one matrix-vector product over the vocabulary) took 16 ms with OpenBLAS's
    threads on a loaded 2-core machine and 0.6 ms with one; the per-element results are the same.
    """
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover - scikit-learn brings it
        import contextlib

        return contextlib.nullcontext()
    return threadpool_limits(limits=1, user_api="blas")


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
    """Run shards with at most ``in_flight`` pending; reassemble in shard order."""
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
            results[k] = fetch(fut)
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
    global _FORKED
    import multiprocessing as mp

    shards = _shards(wids, plan, workers)
    pool: Executor
    if "fork" in mp.get_all_start_methods():
        _FORKED = (sanitizer, words)
        pool = ProcessPoolExecutor(max_workers=workers, mp_context=mp.get_context("fork"))

        def submit(s: np.ndarray) -> Any:
            return pool.submit(_forked_shard, s, seed, plan)
    else:  # pragma: no cover - no fork (Windows, some macOS set-ups)
        pool = ThreadPoolExecutor(max_workers=workers)

        def submit(s: np.ndarray) -> Any:
            return pool.submit(_draw_shard, sanitizer, words, s, seed, plan)

    try:
        return _collect(
            submit,
            shards,
            plan,
            lambda fs: wait(fs, return_when=FIRST_COMPLETED),
            lambda f: f.result(),
            2 * workers,
            tick,
        )
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
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

        _pickle_user_code_by_value(sanitizer)
        remote = ray.remote(num_cpus=1, max_retries=0)(_draw_shard)
        s_ref, w_ref = ray.put(sanitizer), ray.put(words)
        in_flight = 2 * max(1, int(ray.cluster_resources().get("CPU", workers)))
        shards = _shards(wids, plan, max(workers, in_flight // 2))

        def fetch(ref: Any) -> list:
            try:
                return ray.get(ref)
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
