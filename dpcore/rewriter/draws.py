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
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dpcore.executor import ENGINES, run_tasks
from dpcore.rewriter.interface import TextRewriter, call_rewrite
from dpcore.rng import cell_seed_sequence
from dpcore.validation import DPCoreError

__all__ = ["CHUNK", "ENGINES", "RewriterSource", "Task", "draw_rewrites", "plan_tasks"]

#: Copies of one input per ``rewrite`` call (fixed: the rewrites never depend on the workers).
CHUNK = 50


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


def _build(source: RewriterSource) -> TextRewriter:
    return source.build()


def _work(rewriter: TextRewriter, job: tuple[list[Task], int]) -> list[list[str]]:
    tasks, seed = job
    return [_run(rewriter, t, seed) for t in tasks]


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
    tasks = list(tasks)
    if engine == "local" and workers <= 1:
        jobs, state = [[i] for i in range(len(tasks))], rewriter
        build = None
    else:
        state = source if source is not None else RewriterSource.of(rewriter)
        build = _build
        n_batches = max(1, min(len(tasks), 4 * max(1, workers)))
        jobs = [list(range(b, len(tasks), n_batches)) for b in range(n_batches)]
        jobs = [b for b in jobs if b]
    results: dict[int, list[str]] = {}
    for k, outs in run_tasks(
        _work,
        (([tasks[i] for i in b], seed) for b in jobs),
        workers=workers,
        state=state,
        build=build,
        engine=engine,
        address=address,
        start="spawn",  # a model may hold threads a fork would copy; each worker builds it once
        cpus_per_task=1.0,
        on_lost="retry",  # a chunk's rewrites depend only on its seed: a retry draws the same
        what="the rewriter audit",
    ):
        for i, out in zip(jobs[k], outs, strict=True):
            results[i] = out
            if progress:
                progress(tasks[i].count)
    out: dict[tuple[int, int], list[str]] = {}
    for i, t in enumerate(tasks):
        out.setdefault((t.pair, t.side), []).extend(results[i])
    return out
