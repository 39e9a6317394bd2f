"""Where the rewrites are drawn: this process, a local process pool, or a Ray cluster.

The rewrites are the audit's cost. They are drawn in **chunks** of :data:`CHUNK` copies of one
input, one ``rewrite`` call each, and every chunk has its own random stream,
``SeedSequence(seed, "rewriter-audit", pair, side, chunk)`` (:func:`dpcore.rng.cell_seed_sequence`).
*Which* process draws a chunk therefore changes nothing: the same seed gives the same rewrites in
this process, in any number of local workers, or on Ray, and the chunks are put back in order.

Workers build the rewriter themselves from a :class:`RewriterSource` (a registered name, or a
user's ``file.py:factory`` the CLI was allowed to load), so nothing but the name travels; a
rewriter given as an object is pickled instead (it must be picklable).
"""

from __future__ import annotations

import pickle
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dpcore.rewriter.interface import TextRewriter, call_rewrite
from dpcore.rng import cell_seed_sequence
from dpcore.validation import DPCoreError

__all__ = ["CHUNK", "ENGINES", "RewriterSource", "Task", "draw_rewrites", "plan_tasks"]

#: Copies of one input per ``rewrite`` call (fixed: the rewrites never depend on the workers).
CHUNK = 50
ENGINES = ("local", "ray")


@dataclass(frozen=True)
class RewriterSource:
    """How a worker gets the rewriter: a name to build (:mod:`dpcore.rewriter.registry`) or a
    pickled object."""

    name: str | None = None
    epsilon: float | None = None
    options: dict[str, Any] = field(default_factory=dict)
    allow_user_code: bool = False
    pickled: bytes | None = None
    #: Build it with its global random states seeded from the handed rng on every call
    #: (:class:`dpcore.rewriter.contract.GlobalStateReseeded`: the contract found it reads them).
    reseeded: bool = False

    @classmethod
    def of(cls, rewriter: TextRewriter) -> RewriterSource:
        try:
            return cls(pickled=pickle.dumps(rewriter))
        except Exception as exc:
            raise DPCoreError(
                f"the rewriter {getattr(rewriter, 'name', '?')!r} cannot be sent to workers "
                f"({type(exc).__name__}: {exc}); give it by name or run with one worker"
            ) from None

    def build(self) -> TextRewriter:
        if self.pickled is not None:
            return pickle.loads(self.pickled)
        from dpcore.rewriter.registry import load_rewriter

        built = load_rewriter(
            str(self.name),
            epsilon=float(self.epsilon or 0),
            allow_user_code=self.allow_user_code,
            **self.options,
        )
        if self.reseeded:
            from dpcore.rewriter.contract import GlobalStateReseeded

            return GlobalStateReseeded(built)  # type: ignore[return-value]
        return built


@dataclass(frozen=True)
class Task:
    """``count`` rewrites of ``text``: chunk ``chunk`` of input ``side`` (0: x, 1: x′) of pair ``pair``."""

    pair: int
    side: int
    chunk: int
    text: str
    count: int


def plan_tasks(pairs: Sequence[tuple[str, str]], rewrites: int, chunk: int = CHUNK) -> list[Task]:
    """Every chunk of every input of every pair, in order.

    The first ``rewrites // 2`` rewrites of an input (the audit's selection half) and the rest
    (its evaluation half) are chunked separately, so that no ``rewrite`` call draws copies for
    both halves: copies of one call are checked for independence
    (:mod:`dpcore.rewriter.contract`), but the halves' independence, on which every bound rests,
    never depends on that check. Chunk numbers run on across the two halves; when ``rewrites``
    is a multiple of ``2 * chunk`` the chunks are those of one run over all the rewrites.
    """
    m = int(rewrites) // 2
    out = []
    for p, pair in enumerate(pairs):
        for side, text in enumerate(pair):
            c = 0
            for lo, hi in ((0, m), (m, int(rewrites))):
                for start in range(lo, hi, chunk):
                    out.append(Task(p, side, c, text, min(chunk, hi - start)))
                    c += 1
    return out


def _run(rewriter: TextRewriter, task: Task, seed: int) -> list[str]:
    rng = np.random.default_rng(
        cell_seed_sequence(int(seed), "rewriter-audit", task.pair, task.side, task.chunk)
    )
    return call_rewrite(rewriter, [task.text] * task.count, rng)


_WORKER: dict[str, Any] = {}


def _init(source: RewriterSource, parent: int) -> None:
    from dpcore.lifeline import worker_init

    worker_init(parent)  # dies with the audit's process, which handles Ctrl-C
    _WORKER["rewriter"] = source.build()


def _work(tasks: list[Task], seed: int) -> list[list[str]]:
    rewriter = _WORKER["rewriter"]
    return [_run(rewriter, t, seed) for t in tasks]


def _ray_work(source: RewriterSource, tasks: list[Task], seed: int) -> list[list[str]]:
    if "rewriter" not in _WORKER or _WORKER.get("source") != source:
        _WORKER["rewriter"], _WORKER["source"] = source.build(), source
    return _work(tasks, seed)


def draw_rewrites(
    rewriter: TextRewriter,
    tasks: Sequence[Task],
    *,
    seed: int,
    workers: int = 1,
    engine: str = "local",
    address: str | None = None,
    source: RewriterSource | None = None,
    progress: Callable[[int], None] | None = None,
) -> dict[tuple[int, int], list[str]]:
    """Draw every task; return (pair, side) → its rewrites in chunk order.

    Parameters
    ----------
    rewriter:
        Used in this process (``workers = 1``, local engine).
    tasks:
        From :func:`plan_tasks`.
    seed:
        The audit's seed.
    workers, engine, address:
        ``local`` with one worker: this process; more: a pool of ``workers`` processes
        (``spawn``: each builds the rewriter once). ``ray``: Ray tasks on the cluster at
        ``address`` (default: a local Ray with ``workers`` CPUs, stopped after the run).
    source:
        How workers build the rewriter (default: pickle it).
    progress:
        Called with the number of rewrites each finished task drew.
    """
    if engine not in ENGINES:
        raise DPCoreError(f"engine must be one of {', '.join(ENGINES)}, got {engine!r}")
    results: dict[int, list[str]] = {}
    tasks = list(tasks)
    if engine == "local" and workers <= 1:
        for i, t in enumerate(tasks):
            results[i] = _run(rewriter, t, seed)
            if progress:
                progress(t.count)
    else:
        src = source if source is not None else RewriterSource.of(rewriter)
        n_batches = max(1, min(len(tasks), 4 * max(1, workers)))
        batches = [list(range(b, len(tasks), n_batches)) for b in range(n_batches)]
        batches = [b for b in batches if b]
        if engine == "local":
            results = _draw_pool(src, tasks, batches, seed, workers, progress)
        else:
            results = _draw_ray(src, tasks, batches, seed, workers, address, progress)
    out: dict[tuple[int, int], list[str]] = {}
    for i, t in enumerate(tasks):
        out.setdefault((t.pair, t.side), []).extend(results[i])
    return out


def _draw_pool(
    src: RewriterSource,
    tasks: list[Task],
    batches: list[list[int]],
    seed: int,
    workers: int,
    progress: Callable[[int], None] | None,
) -> dict[int, list[str]]:
    """The batches on a pool of ``spawn`` processes (a model may hold threads a fork would copy).

    The workers die with this process (:func:`dpcore.lifeline.worker_init`, SIGKILL included) and
    are killed at once when the run is interrupted or fails here, instead of finishing the
    batches they hold. A worker that dies (a crash, ``os._exit``, a kill) ends the audit with one
    clear error: every rewrite counts, so none is left out.
    """
    import multiprocessing
    import os
    from concurrent.futures.process import BrokenProcessPool

    from dpcore.lifeline import kill_workers

    ctx = multiprocessing.get_context("spawn")
    pool = ProcessPoolExecutor(
        max_workers=workers, mp_context=ctx, initializer=_init, initargs=(src, os.getpid())
    )
    results: dict[int, list[str]] = {}
    finished = False
    try:
        futs = {pool.submit(_work, [tasks[i] for i in b], seed): b for b in batches}
        for fut in as_completed(futs):
            try:
                outs = fut.result()
            except BrokenProcessPool:
                raise DPCoreError(
                    "a worker process of the rewriter audit ended abruptly (a crash, os._exit or a kill); "
                    "run again, or with --workers 1 to see the rewriter's own error"
                ) from None
            for i, out in zip(futs[fut], outs, strict=True):
                results[i] = out
                if progress:
                    progress(tasks[i].count)
        finished = True
        return results
    finally:
        if not finished:  # interrupted (Ctrl-C, SIGTERM as an exception) or failed
            kill_workers(pool)
        pool.shutdown(wait=True, cancel_futures=True)


def _draw_ray(
    src: RewriterSource,
    tasks: list[Task],
    batches: list[list[int]],
    seed: int,
    workers: int,
    address: str | None,
    progress: Callable[[int], None] | None,
) -> dict[int, list[str]]:
    from dpcore.corpus.engines import start_ray

    stop = start_ray(address, workers)
    try:
        import ray

        remote = ray.remote(_ray_work)
        ref_src = ray.put(src)
        refs = {remote.remote(ref_src, [tasks[i] for i in b], seed): b for b in batches}
        results: dict[int, list[str]] = {}
        pending = list(refs)
        while pending:
            done, pending = ray.wait(pending, num_returns=1)
            for ref in done:
                try:
                    outs = ray.get(ref)
                except Exception as exc:
                    cause = getattr(exc, "cause", None) or exc
                    if isinstance(cause, DPCoreError):
                        raise cause from None
                    raise DPCoreError(f"a Ray task failed: {str(cause).splitlines()[0][:300]}") from None
                for i, o in zip(refs[ref], outs, strict=True):
                    results[i] = o
                    if progress:
                        progress(tasks[i].count)
        return results
    finally:
        stop()
