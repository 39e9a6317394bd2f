"""The rng contract of an audited sanitizer, checked before any verdict.

The text audit draws every word from its own stream (:mod:`dpcore.textaudit.engine`), in this
process, in forked worker processes or in Ray tasks, and its result is reproduced from its seed.
That holds only when the sanitizer draws every random number from the generator it is handed,
``sample(words, rng)``. A sanitizer that draws from a global state instead (``np.random.random``,
Python's ``random``, a module-level generator) breaks it in two ways: the same seed does not give
the same draws, and forked workers, which all start from a copy of the parent's state, *replay*
the same draws for different words, so different words look alike (or a shard's words all
look like one).

:func:`enforce_rng_contract` draws a small batch (:data:`PROBE_DRAWS` per probe word;
a black-box ``sample`` is timed first and its probe shrunk to about :data:`PROBE_SECONDS`) and
checks

(a) the same seed gives the same draws;
(b) different seeds give different draws; a *deterministic* sanitizer (every draw of a word the
    same output) is identical across seeds by nature: status ``"deterministic"``, not a failure;
(c) with the local engine and ``workers > 1`` (where fork exists): two forked processes drawing
    with different seeds return different draws, each the same as this process's with its seed.

A sanitizer that fails is checked once more as it is: if the same calls now pass, the failure
was its first calls' (state carried from one call to the next: a cold start, a cache), status
``"state-across-calls"``, and it is audited as it is. Otherwise it is wrapped in
:class:`GlobalStateReseeded`, which seeds NumPy's legacy
global state and Python's ``random`` from the audit's generator before every ``sample`` call (what
the pyPANTERA adapter, :mod:`dpcore.textaudit.pypantera`, does for pyPANTERA), and checked again;
if it still fails (its own fixed-seed generator, fresh entropy on every call), the audit is
refused with one :class:`~dpcore.validation.DPCoreError` naming the contract.

Exceptions raised by the sanitizer during the probe are not contract failures: the word is left
out of the probe (the audit reports it as a failed word later); when every probe word fails, the
status is ``"unchecked"``. So is a forked probe process that dies (``os._exit``, a crash): this
process then never calls the sanitizer in the probe, and the local pool reports the words whose
worker died.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from dpcore.blas import one_blas_thread
from dpcore.rng import cell_seed_sequence, global_state_seeded_from
from dpcore.textaudit.wrapping import SanitizerWrapper, stdout_to_stderr, unwrap
from dpcore.validation import DPCoreError

if TYPE_CHECKING:
    from dpcore.textaudit.plan import AuditPlan

__all__ = [
    "PROBE_DRAWS",
    "RNG_CONTRACT_STATUSES",
    "GlobalStateReseeded",
    "RngContract",
    "enforce_rng_contract",
    "unwrap",
]

#: Draws per probe word and call (one ``sample`` call of this many copies of the word), at most.
PROBE_DRAWS = 256
#: Draws per probe word and call, at least (a slow black box gets fewer probe words instead).
MIN_PROBE_DRAWS = 16
#: Seconds the probe of a black-box ``sample`` aims at: it is timed first, and draws per word
#: (then probe words, down to 2) are lowered to fit (pyPANTERA's CMP draws about 150 words/s).
PROBE_SECONDS = 0.5
#: Timed calls of :data:`MIN_PROBE_DRAWS` draws when sizing a black-box probe (the fastest counts).
CALIBRATION_CALLS = 3
#: Seconds a forked probe process may take before it is stopped (its check is then unchecked).
FORK_TIMEOUT = 60.0
RNG_CONTRACT_STATUSES = (
    "ok",
    "deterministic",
    "global-state-reseeded",
    "state-across-calls",
    "not-reproducible",
    "unchecked",
)
_CONTRACT = (
    "rng contract: the same seed must give the same outputs and different seeds different outputs, "
    "in this process and in forked worker processes"
)


# --- the wrapper -----------------------------------------------------------------------------


class GlobalStateReseeded(SanitizerWrapper):
    """A sanitizer whose global random state is seeded from the audit's generator on every call.

    ``sample(words, rng)`` draws two integers from ``rng``, seeds NumPy's legacy global state
    (``np.random.seed``) and Python's ``random`` with them, calls the wrapped ``sample(words,
    rng)`` and puts both global states back as they were. Every other attribute is the wrapped
    sanitizer's (:class:`~dpcore.textaudit.wrapping.SanitizerWrapper`), except ``sample_ids``:
    the wrapped sampler always goes through ``sample``. It pickles (Ray, process pools) when the
    wrapped sanitizer does. Calls are serialised within a process (threads would otherwise reseed
    the one global state under each other).

    Parameters
    ----------
    sanitizer:
        The sanitizer to wrap.
    """

    describe_key = "global_state_reseeded"

    def sample(self, words: Sequence[str], rng: np.random.Generator) -> Any:
        """The wrapped ``sample(words, rng)`` with NumPy's and Python's global state seeded from ``rng``
        (:func:`dpcore.rng.global_state_seeded_from`, the policy the rewriter audit applies too)."""
        with global_state_seeded_from(rng):
            return self.wrapped.sample(words, rng)


# --- the result ------------------------------------------------------------------------------


@dataclass(frozen=True)
class RngContract:
    """What the rng contract check found.

    Attributes
    ----------
    status:
        ``"ok"``; ``"deterministic"`` (every probe draw of a word the same output, for every
        seed: nothing random to check); ``"global-state-reseeded"`` (the sanitizer read a global
        state; the audit runs it wrapped in :class:`GlobalStateReseeded`, which passed);
        ``"state-across-calls"`` (its first calls failed, the same calls repeated passed: state
        carried between calls, audited as it is); ``"not-reproducible"`` (set by the audit when
        re-drawing some of its own calls with their seeds gave other draws,
        :mod:`dpcore.textaudit.replay`); ``"unchecked"`` (every probe word failed, or a forked
        probe process died).
    checks:
        ``same_seed_same_draws``, ``different_seeds_differ``, ``forked_streams_differ`` (two
        forked processes with different seeds drew different outputs) and
        ``forked_same_as_parent`` (a forked process's draws equal this process's with the same
        seed), each True, False, or None when not made (not applicable, no forked workers, or
        nothing to compare). For ``"global-state-reseeded"``, the checks of the wrapped sanitizer.
    probe_words:
        Probe words that could be compared (their ``sample`` did not fail).
    draws_per_word:
        Draws per probe word and call.
    text:
        One plain sentence for reports.
    failed_checks:
        For ``"global-state-reseeded"`` and ``"state-across-calls"``: the checks the sanitizer
        failed first.
    """

    status: str
    checks: dict[str, bool | None]
    probe_words: int
    draws_per_word: int
    text: str
    failed_checks: tuple[str, ...] = field(default=())

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["checks"] = dict(self.checks)
        out["failed_checks"] = list(self.failed_checks)
        return out


_CHECK_NAMES = (
    "same_seed_same_draws",
    "different_seeds_differ",
    "forked_streams_differ",
    "forked_same_as_parent",
)
_FAILURE_TEXT = {
    "same_seed_same_draws": "the same seed gave different draws",
    "different_seeds_differ": "different seeds gave the same draws",
    "forked_streams_differ": "forked worker processes replayed the same draws for different seeds",
    "forked_same_as_parent": "a forked worker process drew differently from this process with the same seed",
}


# --- drawing the probe -----------------------------------------------------------------------


def _probe_seed(seed: int, which: int, word: str) -> np.random.SeedSequence:
    return cell_seed_sequence(seed, "text-audit", "rng-contract", which, word)


def _draw(sanitizer: Any, word: str, wid: int, n: int, ss: np.random.SeedSequence) -> np.ndarray | None:
    """``n`` draws of M(word), as :func:`~dpcore.textaudit.sampling.draw_counts` makes them (None: failed)."""
    rng = np.random.default_rng(ss)
    fast = callable(getattr(sanitizer, "sample_ids", None))
    try:
        with stdout_to_stderr():
            out = sanitizer.sample_ids(wid, n, rng) if fast else sanitizer.sample([word] * n, rng)
        arr = np.asarray(out, dtype=np.int64) if fast else np.asarray(out, dtype=object)
        if arr.ndim != 1 or arr.shape[0] != n:
            return None
        if not fast:  # output labels as the audit's codebook keys them
            arr = np.asarray([o if isinstance(o, str) else repr(o) for o in arr], dtype=object)
    except (Exception, SystemExit):  # the audit reports the word; KeyboardInterrupt propagates
        return None
    return arr


def _draw_all(sanitizer: Any, words: np.ndarray, ids: np.ndarray, n: int, seed: int, which: int) -> list:
    with one_blas_thread():
        return [
            _draw(sanitizer, str(words[w]), int(w), n, _probe_seed(seed, which, str(words[w]))) for w in ids
        ]


def _calibrate(sanitizer: Any, words: np.ndarray, ids: np.ndarray, seed: int) -> float | None:
    """Seconds per draw of a black-box ``sample`` (a warm-up call, then the fastest of
    :data:`CALIBRATION_CALLS` timed ones, so that one preemption or garbage collection does not
    shrink the probe; None: it failed on every probe word)."""
    m = MIN_PROBE_DRAWS
    with one_blas_thread():
        for w in ids:
            word = str(words[w])
            if _draw(sanitizer, word, int(w), m, _probe_seed(seed, 2, word)) is None:
                continue
            best = math.inf
            for _ in range(CALIBRATION_CALLS):
                t0 = time.perf_counter()
                if _draw(sanitizer, word, int(w), m, _probe_seed(seed, 3, word)) is None:
                    break
                best = min(best, time.perf_counter() - t0)
            else:
                return max(best, 1e-9) / m
    return None


def _size(per_draw: float | None, n_ids: int, calls: int) -> tuple[int, int]:
    """(draws per word, probe words) that keep the probe near :data:`PROBE_SECONDS`."""
    if per_draw is None:
        return MIN_PROBE_DRAWS, n_ids
    n = int(PROBE_SECONDS / (calls * max(n_ids, 1) * per_draw))
    if n >= MIN_PROBE_DRAWS:
        return min(n, PROBE_DRAWS), n_ids
    k = int(PROBE_SECONDS / (calls * MIN_PROBE_DRAWS * per_draw))
    return MIN_PROBE_DRAWS, max(2, min(n_ids, k))


def _child(conn: Any, fn: Callable[..., Any], args: tuple, parent: int) -> None:
    """A forked probe process: run ``fn(*args)``, send the result, exit (or die with ``parent``)."""
    from dpcore.lifeline import die_with_parent

    die_with_parent(parent)
    try:
        conn.send(("ok", fn(*args)))
    except BaseException:  # nothing sent: the parent counts the check as not made
        pass
    finally:
        conn.close()


def fork_available() -> bool:
    import multiprocessing as mp

    return "fork" in mp.get_all_start_methods() and not mp.current_process().daemon


def in_forks(jobs: list[tuple[Callable[..., Any], tuple]]) -> tuple[list[Any], list[bool], bool]:
    """Run each ``(fn, args)`` at once in its own forked process.

    Returns their results, whether each sent one (not: it died, raised outside the sanitizer, or
    ran past :data:`FORK_TIMEOUT`), and whether one *died*: ended with a non-zero status on its
    own (not stopped for overrunning). Every process is joined (stopped when it overruns).
    """
    import multiprocessing as mp

    ctx = mp.get_context("fork")
    procs: list[tuple[Any, Any]] = []
    got: list[Any] = [None] * len(jobs)
    sent = [False] * len(jobs)
    overran = False
    try:
        for fn, args in jobs:
            recv, send = ctx.Pipe(duplex=False)
            proc = ctx.Process(target=_child, args=(send, fn, args, os.getpid()), daemon=True)
            proc.start()
            send.close()
            procs.append((proc, recv))
        deadline = time.monotonic() + FORK_TIMEOUT
        for k, (_, recv) in enumerate(procs):
            try:
                if recv.poll(max(0.0, deadline - time.monotonic())):
                    got[k] = recv.recv()[1]
                    sent[k] = True
                else:
                    overran = True
            except (EOFError, OSError):
                pass
            except Exception:  # an output that does not unpickle here
                pass
    finally:
        for proc, recv in procs:
            recv.close()
            proc.join(timeout=5.0)
            if proc.is_alive():
                proc.terminate()
                proc.join(timeout=5.0)
            if proc.is_alive():  # pragma: no cover - ignores SIGTERM
                proc.kill()
                proc.join()
    died = not overran and any(
        not ok and (p.exitcode or 0) != 0 for ok, (p, _) in zip(sent, procs, strict=True)
    )
    return got, sent, died


def _same(a: np.ndarray, b: np.ndarray) -> bool:
    return a.shape == b.shape and bool(np.all(a == b))


def _constant(a: np.ndarray) -> bool:
    return a.size == 0 or bool(np.all(a == a[0]))


@dataclass
class _Outcome:
    checks: dict[str, bool | None]
    compared: int
    deterministic: bool
    child_died: bool = False

    @property
    def failed(self) -> list[str]:
        return [k for k in _CHECK_NAMES if self.checks.get(k) is False]


def _check(sanitizer: Any, words: np.ndarray, ids: np.ndarray, n: int, seed: int, forked: bool) -> _Outcome:
    checks: dict[str, bool | None] = dict.fromkeys(_CHECK_NAMES)
    c0 = c1 = None
    if forked:  # before this process calls the sanitizer: one that ends its process ends a child
        jobs = [(_draw_all, (sanitizer, words, ids, n, seed, which)) for which in (0, 1)]
        (c0, c1), _, died = in_forks(jobs)
        if died:
            return _Outcome(checks, 0, False, child_died=True)
    a1 = _draw_all(sanitizer, words, ids, n, seed, 0)
    a2 = _draw_all(sanitizer, words, ids, n, seed, 0)
    b = _draw_all(sanitizer, words, ids, n, seed, 1)
    ok = [k for k in range(len(ids)) if a1[k] is not None and a2[k] is not None and b[k] is not None]
    if not ok:
        return _Outcome(checks, 0, False)
    checks["same_seed_same_draws"] = all(_same(a1[k], a2[k]) for k in ok)
    differ = any(not _same(a1[k], b[k]) for k in ok)
    deterministic = not differ and all(_constant(a1[k]) and _constant(b[k]) for k in ok)
    checks["different_seeds_differ"] = None if deterministic else differ
    if c0 is not None and c1 is not None:
        both = [k for k in ok if c0[k] is not None and c1[k] is not None]
        if both:
            checks["forked_same_as_parent"] = all(_same(c0[k], a1[k]) and _same(c1[k], b[k]) for k in both)
            if not deterministic:
                checks["forked_streams_differ"] = any(not _same(c0[k], c1[k]) for k in both)
    return _Outcome(checks, len(ok), deterministic and checks["same_seed_same_draws"] is True)


def _text(status: str, out: _Outcome, n: int, failed: Sequence[str] = ()) -> str:
    size = f"{out.compared} probe word(s) × {n} draws"
    forked = out.checks.get("forked_same_as_parent") is not None
    where = " and in forked worker processes" if forked else ""
    if status == "ok":
        return (
            f"the sanitizer's draws depend only on the rng it is handed: the same seed gave the same draws "
            f"and different seeds different draws, in this process{where} ({size})"
        )
    if status == "deterministic":
        return (
            f"the sanitizer is deterministic on the probe: every draw of each word gave the same output, "
            f"the same for every seed{where} ({size}); there was nothing random to check"
        )
    if status == "global-state-reseeded":
        why = "; ".join(_FAILURE_TEXT[k] for k in failed) or "it failed the rng contract"
        return (
            f"the sanitizer does not draw only from the rng it is handed ({why}); it reads NumPy's or "
            "Python's global random state, so dpcore seeds that state from the audit's rng before every "
            f"sample() call (as its pyPANTERA adapter does), and the reseeded sanitizer passed ({size})"
        )
    if status == "state-across-calls":
        why = "; ".join(_FAILURE_TEXT[k] for k in failed)
        return (
            f"the sanitizer's first probe calls drew differently from the same calls repeated later ({why}), "
            "and the repeated check passed: it carries state from one call to the next (a cold start, a "
            "cache, a counter), not a global random state, so the audit runs it as it is; its first calls "
            f"in a fresh process may differ from this run's ({size})"
        )
    if out.child_died:
        return (
            "the rng contract was not checked: a forked probe process ended abruptly while the sanitizer "
            "drew (os._exit, a crash or a kill); the audit reports the words whose worker died"
        )
    return (
        "the rng contract was not checked: the sanitizer's sample() failed on every probe word "
        "(the audit reports those words as failures)"
    )


def enforce_rng_contract(
    sanitizer: Any,
    words: np.ndarray,
    probe_ids: np.ndarray,
    *,
    seed: int,
    workers: int,
    engine: str,
) -> tuple[Any, RngContract]:
    """Check that ``sanitizer`` draws only from the rng it is handed; reseed or refuse it if not.

    Parameters
    ----------
    sanitizer:
        The audited sanitizer (``sample(words, rng)``, optionally ``sample_ids``).
    words:
        The vocabulary's words (id → word).
    probe_ids:
        Vocabulary ids of the probe words (a few, e.g. 8). Each costs 3 calls of up to
        :data:`PROBE_DRAWS` draws here and 2 in forked processes; a black-box ``sample`` is timed
        first and gets fewer draws (then fewer probe words) when it is slow.
    seed:
        The audit's seed; the probe's streams are derived from it (stage ``"rng-contract"``).
    workers, engine:
        The audit's engine: with ``engine="local"``, ``workers > 1`` and fork available, two
        forked processes draw too (check c).

    Returns
    -------
    (sanitizer, RngContract)
        The sanitizer to audit (itself, or wrapped in :class:`GlobalStateReseeded`) and what the
        check found.

    Raises
    ------
    DPCoreError
        One line naming the rng contract, when the sanitizer fails it even reseeded.

    Examples
    --------
    >>> import numpy as np
    >>> from dpcore.textaudit.contract import enforce_rng_contract
    >>> from dpcore.textaudit.reference import KaryRandomizedResponse
    >>> words = np.asarray(["a", "b", "c", "d"], dtype=object)
    >>> krr = KaryRandomizedResponse(epsilon=1.0, words=list(words))
    >>> s, contract = enforce_rng_contract(krr, words, np.arange(4), seed=0, workers=1, engine="local")
    >>> contract.status, s is krr
    ('ok', True)
    """
    ids = np.asarray(probe_ids, dtype=np.int64).reshape(-1)
    if ids.size and (ids.min() < 0 or ids.max() >= len(words)):
        raise DPCoreError(f"probe ids must lie in [0, {len(words)})")
    ids = np.asarray(list(dict.fromkeys(int(i) for i in ids)), dtype=np.int64)
    forked = engine == "local" and int(workers) > 1 and fork_available()
    n = PROBE_DRAWS
    if not callable(getattr(sanitizer, "sample_ids", None)):  # a black box: time it first
        if forked:  # in a forked process: one that ends its process must not end this one
            (per_draw,), _, died = in_forks([(_calibrate, (sanitizer, words, ids, seed))])
            if died:
                out = _Outcome(dict.fromkeys(_CHECK_NAMES), 0, False, child_died=True)
                return sanitizer, RngContract("unchecked", out.checks, 0, 0, _text("unchecked", out, 0))
        else:
            per_draw = _calibrate(sanitizer, words, ids, seed)
        n, k = _size(per_draw, len(ids), 4 if forked else 3)
        ids = ids[:k]
    first = _check(sanitizer, words, ids, n, seed, forked)
    if first.child_died or first.compared == 0:
        return sanitizer, RngContract("unchecked", first.checks, 0, n, _text("unchecked", first, n))
    if not first.failed:
        status = "deterministic" if first.deterministic else "ok"
        return sanitizer, RngContract(status, first.checks, first.compared, n, _text(status, first, n))
    # the same calls again, unwrapped: passing now, the failure was the first calls' (a cold
    # start, a cache, a counter carried between calls), not a global random state; then reseeded
    for status, candidate in (
        ("state-across-calls", sanitizer),
        ("global-state-reseeded", GlobalStateReseeded(sanitizer)),
    ):
        again = _check(candidate, words, ids, n, seed, forked)
        if again.compared > 0 and not again.failed and not again.child_died:
            text = _text(status, again, n, first.failed)
            return candidate, RngContract(status, again.checks, again.compared, n, text, tuple(first.failed))
    why = "; ".join(_FAILURE_TEXT[k] for k in first.failed)
    name = str(getattr(sanitizer, "name", type(sanitizer).__name__))
    raise DPCoreError(
        f"the sanitizer {name} does not draw from the rng it is handed: {why}, even with NumPy's and "
        f"Python's global random state reseeded from it ({_CONTRACT}); draw every random number from "
        "the `rng` argument of sample(words, rng)"
    )


# --- the audit's stage -----------------------------------------------------------------------

#: Probe words drawn for the audit's contract check.
AUDIT_PROBE_WORDS = 8


@dataclass(frozen=True, eq=False)
class ContractOutcome:
    """The contract stage of an audit.

    Attributes
    ----------
    sanitizer:
        What the audit samples from: the sanitizer, or it wrapped in :class:`GlobalStateReseeded`.
    record:
        The result's ``rng_contract`` (:meth:`RngContract.to_dict`) without the forked checks.
    forked_checks:
        The forked-worker checks (they run only with several local workers, so they go to the
        result's ``execution``: the result itself stays the same for any engine and workers).
    """

    sanitizer: Any
    record: dict[str, Any]
    forked_checks: dict[str, Any]


def run(plan: AuditPlan, sanitizer: Any, words: np.ndarray) -> ContractOutcome:
    """Check the rng contract on :data:`AUDIT_PROBE_WORDS` of the plan's words (a seeded choice)."""
    ids = plan.probe_ids
    probe_rng = np.random.default_rng(cell_seed_sequence(plan.seed, "text-audit", "rng-contract"))
    probe = probe_rng.choice(ids, size=min(AUDIT_PROBE_WORDS, len(ids)), replace=False) if len(ids) else ids
    wrapped, contract = enforce_rng_contract(
        sanitizer,
        words,
        np.asarray(probe, dtype=np.int64),
        seed=plan.seed,
        workers=plan.workers,
        engine=plan.engine,
    )
    record, forked = split_fork_checks(contract.to_dict())
    return ContractOutcome(wrapped, record, forked)


def split_fork_checks(contract: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The rng record without its forked-worker checks, and those checks."""
    out = dict(contract)
    checks = dict(out.get("checks", {}))
    forked = {k: checks.pop(k) for k in list(checks) if k.startswith("forked")}
    out["checks"] = checks
    if isinstance(out.get("text"), str):
        out["text"] = out["text"].replace(" and in forked worker processes", "")
    return out, forked
