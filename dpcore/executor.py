"""The one home of dpcore's worker processes: a local process pool, or Ray tasks.

Every audit and the corpus sanitizer that spreads work over processes goes through
:func:`run_tasks`: the word audit's draws (:mod:`dpcore.textaudit.engine`), the rewriter audit's
draws (:mod:`dpcore.rewriter.draws`), the corpus engine's local batches
(:mod:`dpcore.corpus.engines`) and the verdict table's rows (:mod:`dpcore.verdicts.run`). What
holds for one holds for all:

Workers die with their parent
    A local worker runs :func:`dpcore.lifeline.worker_init` before anything else: the kernel
    kills it when the process that started the pool ends (SIGKILL included), it leaves Ctrl-C to
    its parent, and a run that is interrupted or fails kills its workers at once instead of
    letting them finish what they hold (:func:`dpcore.lifeline.kill_workers`). A local Ray
    started for a run is swept when the run ends (:func:`start_ray`, :mod:`dpcore.lifeline`).
A broken pool is recovered
    A worker that ends abruptly (``os._exit``, a crash, a kill, the out-of-memory killer) breaks
    a local pool and loses the tasks then in flight, and a Ray task whose worker died is lost.
    A fresh pool takes the remaining tasks, at most :data:`MAX_POOLS` pools in all (on Ray: at
    most ``MAX_POOLS`` lost rounds). What happens to a lost task is the caller's choice
    (``on_lost``):

    ``"retry"``
        It is run again. Right where a task's result depends only on the task (every dpcore task
        draws from its own seeded stream, :func:`dpcore.rng.cell_seed_sequence`), so a retried
        task gives what the lost one would have. After ``MAX_POOLS`` broken pools the run ends
        with :class:`WorkersDied`, one clear error.
    ``"report"``
        It is yielded as :class:`Lost`, with the reason, and the run goes on; after
        ``MAX_POOLS`` broken pools every task not yet run is yielded as ``Lost`` too. The word
        audit uses this: a sanitizer that ends its process on one word would end every pool.
Ray takes the same path
    ``engine="ray"`` runs the same task function on the same items with the same state, lost
    tasks handled the same way; the state is shipped once (``ray.put``) and built once per Ray
    worker.
A task's result never depends on where it ran
    Results are yielded with their item's index (in input order with ``ordered=True``); the
    caller puts them back in order, so the engine and the number of workers change nothing.

The state
---------
A task function is called as ``fn(state, item)``. ``state`` is what every task of a run shares:
the sanitizer and its vocabulary, or how to build a rewriter. With ``start="fork"`` (Linux) the
workers inherit it from this process (nothing is pickled: a vocabulary is shared copy-on-write);
with ``start="spawn"`` it is pickled to each worker once, where a model's threads must not be
copied by a fork; where fork is not available, a thread pool shares it. ``build`` (a picklable
function), when given, turns the shipped state into the one a task gets, once per worker.
"""

from __future__ import annotations

import os
import secrets
import sys
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any, Literal

from dpcore.validation import DPCoreError

__all__ = [
    "ENGINES",
    "MAX_POOLS",
    "Lost",
    "WorkersDied",
    "pickle_by_value",
    "run_tasks",
    "start_ray",
]

#: Where tasks can run.
ENGINES = ("local", "ray")
#: Most local pools a run starts (each broken one is replaced by a fresh one), or lost Ray rounds.
MAX_POOLS = 3


@dataclass(frozen=True)
class Lost:
    """A task that did not run to its end because its worker process died (``on_lost="report"``)."""

    reason: str


class WorkersDied(DPCoreError):
    """Worker processes died :data:`MAX_POOLS` times (``on_lost="retry"``)."""


# --- in a worker --------------------------------------------------------------------------------

#: Run token → (state, build) that forked workers inherit; an entry lives while its run's pools do.
#: Keyed, so that runs in two threads of one process (a server) each fork their own state.
_FORK_PAYLOADS: dict[str, tuple[Any, Callable[[Any], Any] | None]] = {}
#: The state a task gets, in a worker of a local pool.
_STATE: Any = None
#: Ray workers: run token -> built state (a Ray worker runs many tasks, of one run or several).
_RAY_STATES: dict[str, Any] = {}


def _init_worker(parent: int, payload: str | tuple[Any, Callable[[Any], Any] | None]) -> None:
    """Initializer of every local worker: die with ``parent``, then hold the run's state."""
    global _STATE
    from dpcore.lifeline import worker_init

    worker_init(parent)  # first: a worker never outlives the run, even while it builds the state
    # forked: the run's token, its entry inherited; spawned: the pickled (state, build) itself
    state, build = _FORK_PAYLOADS[payload] if isinstance(payload, str) else payload
    _STATE = build(state) if build is not None else state


def _call(fn: Callable[[Any, Any], Any], item: Any) -> Any:
    return fn(_STATE, item)


def _ray_call(
    fn: Callable[[Any, Any], Any], state: Any, build: Callable[[Any], Any] | None, token: str, item: Any
) -> Any:
    if build is None:
        return fn(state, item)
    if token not in _RAY_STATES:
        _RAY_STATES.clear()  # one run's state at a time
        _RAY_STATES[token] = build(state)
    return fn(_RAY_STATES[token], item)


# --- backends: how a task is submitted, waited for, and what a dead worker looks like ------------


class _Died(Exception):
    """A task lost with its worker (internal: becomes a retry, a :class:`Lost` or ``WorkersDied``)."""


class _LocalPool:
    """Local processes (fork or spawn), or threads where fork is wanted but not available."""

    def __init__(
        self, workers: int, state: Any, build: Callable[[Any], Any] | None, start: str, token: str
    ) -> None:
        import multiprocessing as mp

        self.workers, self.state, self.build = workers, state, build
        self.parent = os.getpid()
        self.threads = start == "fork" and "fork" not in mp.get_all_start_methods()
        self.ctx = None if self.threads else mp.get_context(start)
        self.payload: str | tuple[Any, Callable[[Any], Any] | None] = (
            token if start == "fork" else (state, build)
        )
        self.built = None
        if self.threads:  # pragma: no cover - no fork (Windows, some macOS set-ups)
            self.built = build(state) if build is not None else state
        self.pool: Any = None
        self.gen = 0

    def open(self) -> None:
        from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor

        if self.threads:  # pragma: no cover
            self.pool = ThreadPoolExecutor(max_workers=self.workers)
        else:
            # forked from this thread, which also shuts the pool down (see dpcore.lifeline)
            self.pool = ProcessPoolExecutor(
                max_workers=self.workers,
                mp_context=self.ctx,
                initializer=_init_worker,
                initargs=(self.parent, self.payload),
            )

    def submit(self, fn: Callable[[Any, Any], Any], item: Any) -> Any:
        from concurrent.futures.process import BrokenProcessPool

        try:
            if self.threads:  # pragma: no cover
                fut = self.pool.submit(fn, self.built, item)
            else:
                fut = self.pool.submit(_call, fn, item)
        except BrokenProcessPool:
            raise _Died() from None
        fut.dpcore_gen = self.gen
        return fut

    def wait(self, handles: list[Any], head_only: bool) -> list[Any]:
        from concurrent.futures import FIRST_COMPLETED, wait

        if head_only:
            wait(handles[:1])
            return handles[:1]
        done, _ = wait(handles, return_when=FIRST_COMPLETED)
        return list(done)

    def result(self, handle: Any) -> Any:
        from concurrent.futures.process import BrokenProcessPool

        try:
            return handle.result()
        except BrokenProcessPool:
            raise _Died() from None

    def generation(self, handle: Any) -> int:
        return getattr(handle, "dpcore_gen", self.gen)

    def restart(self) -> None:
        self.pool.shutdown(wait=True, cancel_futures=True)
        self.gen += 1
        self.open()

    def close(self, finished: bool) -> None:
        from dpcore.lifeline import kill_workers

        if self.pool is None:
            return
        if not finished:  # interrupted (Ctrl-C, SIGTERM as an exception) or failed
            kill_workers(self.pool)
        self.pool.shutdown(wait=True, cancel_futures=True)
        self.pool = None

    @property
    def capacity(self) -> int:
        return self.workers

    def lost_reason(self, gen: int) -> str:
        return (
            "a process of the local pool ended abruptly — os._exit, a crash or a kill — while this "
            f"task was in flight; pool {gen + 1} of at most {MAX_POOLS}"
        )


class _RayTasks:
    """Ray tasks on the cluster :func:`start_ray` joined or started."""

    def __init__(
        self, state: Any, build: Callable[[Any], Any] | None, workers: int, cpus_per_task: float
    ) -> None:
        import ray

        self.ray = ray
        self.state_ref = ray.put(state)
        self.build = build
        self.token = secrets.token_hex(8)
        self.remote = ray.remote(num_cpus=cpus_per_task, max_retries=0)(_ray_call)
        self.named: Any = None  # the remote function named for the run's task, made at first submit
        cpus = ray.cluster_resources().get("CPU", workers)
        self.cap = max(1, int(cpus // max(cpus_per_task, 1e-9))) if cpus_per_task else max(1, workers)
        self.died = (ray.exceptions.WorkerCrashedError, ray.exceptions.OutOfMemoryError)
        self.gen = 0
        self.gen_of: dict[Any, int] = {}

    def open(self) -> None:
        pass

    def submit(self, fn: Callable[[Any, Any], Any], item: Any) -> Any:
        if self.named is None:  # named for the task (a worker's process title reads ray::<name>)
            self.named = self.remote.options(name=getattr(fn, "__name__", "task"))
        ref = self.named.remote(fn, self.state_ref, self.build, self.token, item)
        self.gen_of[ref] = self.gen
        return ref

    def wait(self, handles: list[Any], head_only: bool) -> list[Any]:
        if head_only:
            self.ray.wait(handles[:1], num_returns=1)
            return handles[:1]
        done, _ = self.ray.wait(handles, num_returns=1)
        return list(done)

    def result(self, handle: Any) -> Any:
        try:
            return self.ray.get(handle)
        except self.died:
            raise _Died() from None
        except Exception as exc:
            cause = getattr(exc, "cause", None) or exc
            if isinstance(cause, DPCoreError):
                raise cause from None
            first = str(cause).splitlines()[0][:300] if str(cause) else ""
            raise DPCoreError(f"a Ray task failed: {type(cause).__name__}: {first}") from None

    def generation(self, handle: Any) -> int:
        return self.gen_of.pop(handle, self.gen)

    def restart(self) -> None:
        self.gen += 1

    def close(self, finished: bool) -> None:
        if not finished:
            for ref in list(self.gen_of):
                try:
                    self.ray.cancel(ref, force=True)
                except Exception:  # already done or gone
                    pass

    @property
    def capacity(self) -> int:
        return self.cap

    def lost_reason(self, gen: int) -> str:
        return (
            "its Ray worker ended abruptly (a crash, os._exit, a kill or out of memory); "
            f"round {gen + 1} of at most {MAX_POOLS}"
        )


# --- the one loop -------------------------------------------------------------------------------


def run_tasks(
    fn: Callable[[Any, Any], Any],
    items: Iterable[Any],
    *,
    workers: int,
    state: Any = None,
    build: Callable[[Any], Any] | None = None,
    engine: str = "local",
    start: Literal["fork", "spawn"] = "fork",
    address: str | None = None,
    cpus_per_task: float = 1.0,
    in_flight: int | None = None,
    ordered: bool = False,
    on_lost: Literal["retry", "report"] = "retry",
    what: str = "the run",
) -> Iterator[tuple[int, Any]]:
    """Run ``fn(state, item)`` for every item; yield ``(index, result)`` as tasks finish.

    Parameters
    ----------
    fn:
        A module-level function (it is sent to the workers by name).
    items:
        The tasks' arguments, consumed lazily: at most ``in_flight`` are held at once.
    workers:
        ``1`` with the local engine: in this process, in order, no pool. More: a pool of
        ``workers`` processes. On Ray: the CPUs of a local Ray started for the run.
    state, build:
        What every task gets as its first argument (see the module docstring): ``build(state)``
        when ``build`` is given, once per worker, else ``state``.
    engine:
        ``"local"`` or ``"ray"`` (:data:`ENGINES`).
    start:
        How local workers start: ``"fork"`` (they inherit ``state``) or ``"spawn"`` (``state``
        is pickled; a model's threads are not copied).
    address:
        Ray: an existing cluster to join (default: a local Ray for the run, stopped after it).
    cpus_per_task:
        Ray: CPUs each task reserves.
    in_flight:
        Tasks pending at once (default: twice the workers).
    ordered:
        Yield in input order (a streaming caller, e.g. the corpus writer); else as they finish.
    on_lost:
        What a task lost with its worker becomes: run again (``"retry"``) or :class:`Lost`
        (``"report"``). See the module docstring.
    what:
        What the tasks are, for the error that ends a run whose workers kept dying.

    Raises
    ------
    WorkersDied
        ``on_lost="retry"`` and worker processes died :data:`MAX_POOLS` times.
    DPCoreError
        An unknown engine or start method. A task's own exception is raised as it is (on Ray: a
        ``DPCoreError`` as it is, any other as a ``DPCoreError`` naming it).
    """
    if engine not in ENGINES:
        raise DPCoreError(f"unknown engine {engine!r}; choose one of: {', '.join(ENGINES)}")
    if start not in ("fork", "spawn"):
        raise DPCoreError(f"start must be 'fork' or 'spawn', got {start!r}")
    if on_lost not in ("retry", "report"):
        raise DPCoreError(f"on_lost must be 'retry' or 'report', got {on_lost!r}")
    if ordered and on_lost == "report":
        raise DPCoreError("ordered results need on_lost='retry' (a lost task is run again, in its place)")
    if engine == "local" and workers <= 1:
        here = build(state) if build is not None else state
        for i, item in enumerate(items):
            yield i, fn(here, item)
        return
    if engine == "ray":
        stop = start_ray(address, workers)
        try:
            yield from _loop(
                _RayTasks(state, build, workers, cpus_per_task), fn, items, in_flight, ordered, on_lost, what
            )
        finally:
            stop()
        return
    token = secrets.token_hex(8)
    backend = _LocalPool(workers, state, build, start, token)
    if start == "fork":
        _FORK_PAYLOADS[token] = (state, build)
    try:
        yield from _loop(backend, fn, items, in_flight, ordered, on_lost, what)
    finally:
        _FORK_PAYLOADS.pop(token, None)


def _loop(
    backend: Any,
    fn: Callable[[Any, Any], Any],
    items: Iterable[Any],
    in_flight: int | None,
    ordered: bool,
    on_lost: str,
    what: str,
) -> Iterator[tuple[int, Any]]:
    """Submit lazily, wait, recover from dead workers; the one loop under every engine."""
    source = iter(enumerate(items))
    held: dict[int, Any] = {}  # index -> item, while its task is pending (for a retry)
    pending: dict[int, Any] = {}  # index -> handle, in submission order
    retry: list[int] = []  # indices to submit again, before new items
    state = {"broken": 0, "stale": False}
    exhausted = False
    finished = False

    def broke(gen: int) -> None:
        if gen == backend.gen and not state["stale"]:
            state["broken"] += 1
            state["stale"] = True

    def dead() -> bool:
        return state["broken"] >= MAX_POOLS

    def died_error() -> WorkersDied:
        return WorkersDied(
            f"a worker process of {what} ended abruptly (a crash, os._exit, a kill or out of memory) "
            f"{MAX_POOLS} times, and each time a fresh pool was started; run again, or with one worker "
            "(--workers 1) to see the error in this process"
        )

    def submit(i: int) -> Iterator[tuple[int, Any]]:
        """Submit task ``i``; yields it as Lost when no pool is left (report mode)."""
        while True:
            if state["stale"]:
                if dead():
                    if on_lost == "retry":
                        raise died_error()
                    held.pop(i)
                    why = f"not run: worker processes died {MAX_POOLS} times, so no further pool was started"
                    yield i, Lost(why)
                    return
                backend.restart()
                state["stale"] = False
            try:
                pending[i] = backend.submit(fn, held[i])
                return
            except _Died:
                broke(backend.gen)

    backend.open()
    try:
        width = max(1, in_flight if in_flight is not None else 2 * backend.capacity)
        while True:
            while len(pending) < width and (retry or not exhausted):
                if retry:
                    i = retry.pop(0)
                else:
                    nxt = next(source, None)
                    if nxt is None:
                        exhausted = True
                        continue
                    i, held[i] = nxt
                yield from submit(i)
            if not pending:
                break
            if ordered:  # the lowest index first: retried tasks were submitted again above
                head = min(pending)
                handles = [pending[head], *(h for i, h in pending.items() if i != head)]
            else:
                handles = list(pending.values())
            done = backend.wait(handles, ordered)
            index_of = {h: i for i, h in pending.items()}
            for h in done:
                i = index_of[h]
                del pending[i]
                gen = backend.generation(h)
                try:
                    got = backend.result(h)
                except _Died:
                    broke(gen)
                    if on_lost == "retry":
                        if dead():
                            raise died_error() from None
                        retry.append(i)
                        retry.sort()  # in input order, before any new item
                        continue
                    got = Lost(backend.lost_reason(gen))
                held.pop(i, None)
                yield i, got
        finished = True
    finally:
        backend.close(finished)


# --- Ray ----------------------------------------------------------------------------------------


def start_ray(address: str | None, workers: int) -> Callable[[], None]:
    """Connect to ``address`` (an existing cluster) or start a local Ray; return the stopper.

    Already connected (a test session's Ray, a notebook's): nothing is started and the stopper
    does nothing.
    """
    try:
        import ray
    except ImportError:
        raise DPCoreError(
            "--engine ray needs Ray: pip install -r requirements-dev.txt (or pip install 'dpcore[corpus]')"
        ) from None
    if ray.is_initialized():
        return lambda: None
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    kwargs: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False, "logging_level": "ERROR"}
    env: dict[str, str] = {}
    sweeper = None
    if address:
        # a cluster that is not the run's: when this process ends, Ray itself stops the run's tasks
        kwargs["address"] = address
    else:
        # a local Ray for this run: its workers must import this dpcore. The processes Ray starts
        # inherit the variables now; they are restored afterwards, so the caller's process is
        # unchanged. They carry the sweeper's token too: if this process ends without stopping
        # Ray (SIGKILL), the sweeper kills what is left of it (dpcore.lifeline).
        from dpcore.lifeline import start_sweeper

        root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        paths = [root] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
        sweeper = start_sweeper()
        env = {"PYTHONPATH": os.pathsep.join(dict.fromkeys(paths)), **sweeper.env}
        kwargs["num_cpus"] = max(1, workers)
    old_env = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        ray.init(**kwargs)
    except BaseException as exc:
        if sweeper is not None:  # what ray.init started before it failed or was interrupted
            sweeper.close()
        if not isinstance(exc, Exception):
            raise
        where = f"the Ray cluster at {address!r}" if address else "a local Ray"
        raise DPCoreError(f"cannot start {where}: {str(exc).splitlines()[0][:200]}") from None
    finally:
        for k, v in old_env.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    if sweeper is None:
        return ray.shutdown

    def stop() -> None:
        try:
            ray.shutdown()
        finally:
            sweeper.close()

    return stop


def pickle_by_value(obj: Any, prefixes: tuple[str, ...] = ("dpcore_user_",)) -> None:
    """Ray: ship the module of a user's ``file.py`` object by value (a Ray worker cannot import it)."""
    mod = sys.modules.get(type(obj).__module__)
    if mod is not None and mod.__name__.startswith(prefixes):
        from ray import cloudpickle  # Ray serialises with its own copy of cloudpickle

        cloudpickle.register_pickle_by_value(mod)
