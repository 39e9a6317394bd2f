"""A sanitizer run in another Python environment, behind the text-audit interface.

Some libraries cannot share dpcore's environment (mldp-text pins ``numpy<2``). This adapter runs
the sanitizer in *their* environment: it starts dpcore's worker script
(:mod:`dpcore.textaudit._subprocess_worker`, standard library only) with that environment's
interpreter (:class:`~dpcore.textaudit.worker_protocol.WorkerProcess`) and samples over a pipe.
``--mechanism subprocess:/path/to/python::module:factory`` names one from the command line;
:mod:`dpcore.textaudit.mldp` builds mldp-text's mechanisms on it.

The protocol (length-prefixed JSON over the child's stdin and stdout; the worker's own stdout is
pointed at its stderr, so the library's prints cannot corrupt it) is described in the worker's
docstring. In short:

- **build**, once per process: the worker imports the target, seeds ``random`` and NumPy's global
  state with a fixed build seed (so the object is the same in every process), and calls
  ``factory(epsilon=E, vocab=WORDS)``. dpcore's vocabulary (words and vectors) is written *once*
  per vocabulary as a word2vec text file under the cache folder (:func:`vocabulary_file`); the
  worker reads WORDS from it, and a factory that takes ``embeddings`` gets its path.
- **sample**, per call: dpcore draws three 32-bit seeds from the audit's ``rng`` and sends them
  with the words; the worker seeds ``random`` and ``numpy.random`` (when the library imported
  NumPy) with the first two and hands ``random.Random(third)`` to ``sample(words, rng)``, or calls
  ``replace_word(word)`` word by word. The same audit seed gives the same outputs.

Processes. The worker is started lazily *per process*: the audit's forked worker pools and its
forked rng-contract probes each start their own worker (the object remembers the pid that owns
its worker; a forked child closes its inherited copy of the pipe at once, never writes to it, and
never kills its parent's worker). Calls are serialised by a lock within a process. Nothing is
left behind: the worker exits at end of input (when this process closes the pipe, or ends), it
is killed by :meth:`SubprocessSanitizer.close`, ``__del__`` and at exit, and it asks Linux for
SIGKILL when its parent ends (``PR_SET_PDEATHSIG``, when started from the main thread, since the
signal follows the thread) besides checking its parent every 0.5 s.

The worker is the user's code run with the user's rights: dpcore isolates its output, not its
effects.
"""

from __future__ import annotations

import atexit
import hashlib
import os
import shutil
import tempfile
import threading
import weakref
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from dpcore.cache_folder import cache_dir
from dpcore.text.vocab import Vocabulary
from dpcore.textaudit.worker_protocol import WORKER_DEFAULT_ENV, WorkerDied, WorkerProcess
from dpcore.validation import DPCoreError, check_epsilon

__all__ = [
    "SubprocessSanitizer",
    "WorkerClient",
    "parse_subprocess_spec",
    "vocabulary_file",
]

#: Seconds to import the library and build the sanitizer (embeddings, indexes).
BUILD_SECONDS = 900.0
#: A worker that died this many times in a row (no call answered in between) is not started again
#: in that process; a library that dies on one word only is restarted for the next word.
MAX_DEATHS = 3
#: Seed of ``random`` and NumPy's global state before the factory is called.
BUILD_SEED = 0


class RemoteError(RuntimeError):
    """An exception the sanitizer raised in the worker (subclassed per remote type name)."""


_REMOTE_TYPES: dict[str, type] = {}


def _remote_error(name: str | None, message: str) -> RemoteError:
    """A :class:`RemoteError` whose class is named after the remote exception (``TypeError``…)."""
    name = name if isinstance(name, str) and name.isidentifier() else "RemoteError"
    cls = _REMOTE_TYPES.get(name)
    if cls is None:
        cls = type(name, (RemoteError,), {"__module__": __name__})
        _REMOTE_TYPES[name] = cls
    prefix = f"{name}: "
    return cls(message[len(prefix) :] if message.startswith(prefix) else message)


# --- the vocabulary on disk ------------------------------------------------------------------


def vocabulary_file(vocab: Vocabulary, folder: Path | None = None) -> Path:
    """dpcore's vocabulary as a word2vec text file (``N DIM`` header), written once and cached.

    The name carries a digest of the words and vectors, so a vocabulary is written once per
    cache folder (``<cache>/vectors/``) and reused by every later run and process. Vectors are
    written with 9 significant digits (float32 round-trips exactly; gensim loads float32).
    """
    words = [str(w) for w in vocab.words]
    bad = next((w for w in words if not w or any(c.isspace() for c in w)), None)
    if bad is not None:
        raise DPCoreError(f"the vocabulary word {bad!r} cannot be written to a word2vec text file")
    vectors = np.ascontiguousarray(vocab.vectors, dtype=np.float64)
    h = hashlib.sha256()
    h.update("\n".join(words).encode("utf-8"))
    h.update(vectors.tobytes())
    folder = Path(folder) if folder is not None else cache_dir() / "vectors"
    name = f"{vocab.embedding}-{len(words)}x{vectors.shape[1]}-{h.hexdigest()[:16]}.w2v.txt"
    path = folder / name
    if path.is_file():
        return path
    folder.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".vectors-", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fh:
            fh.write(f"{len(words)} {vectors.shape[1]}\n")
            for w, v in zip(words, vectors, strict=True):
                fh.write(w + " " + " ".join(f"{x:.9g}" for x in v) + "\n")
        os.replace(tmp, path)  # atomic: a concurrent run reads a whole file or none
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return path


# --- the sanitizer ---------------------------------------------------------------------------

_LIVE: weakref.WeakSet[WorkerClient] = weakref.WeakSet()


def _after_fork_in_child() -> None:
    for s in list(_LIVE):
        s._after_fork()


def _close_all_at_exit() -> None:
    for s in list(_LIVE):
        try:
            s.close()
        except Exception:  # pragma: no cover - nothing to report at exit
            pass


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)
atexit.register(_close_all_at_exit)


def _resolve_python(python: str) -> str:
    path = os.path.expanduser(str(python))
    if os.sep not in path and "/" not in path:
        found = shutil.which(path)
        if found is None:
            raise DPCoreError(f"no Python interpreter {python!r} on PATH")
        path = found
    if not os.path.isfile(path) or not os.access(path, os.X_OK):
        raise DPCoreError(f"no Python interpreter at {python!r}")
    return os.path.abspath(path)


def parse_subprocess_spec(spec: str) -> tuple[str, str]:
    """``subprocess:/path/to/python::module:factory`` → (python, ``module:factory``).

    The target may also be ``path/to/file.py:factory``.
    """
    body = spec[len("subprocess:") :] if spec.startswith("subprocess:") else spec
    python, sep, target = body.partition("::")
    if not sep or not python or not target:
        raise DPCoreError(
            f"{spec!r}: write subprocess:/path/to/python::module:factory (or ::path/to/file.py:factory)"
        )
    where, sep, attr = target.rpartition(":")
    if not sep or not where or not attr.isidentifier():
        raise DPCoreError(
            f"{spec!r}: the target after '::' must be module:factory or path/to/file.py:factory"
        )
    return python, target


class WorkerClient:
    """The dpcore side of one object built in another environment's worker (see the module
    docstring): the worker of this process, started lazily, restarted after a death (at most
    :data:`MAX_DEATHS` in a row), forgotten by a forked child, closed at exit.

    A subclass sets :attr:`python`, :attr:`target`, :attr:`label`, ``_isolated``, ``_capture`` and
    the worker's extra environment variables (:meth:`_setup`), says what it builds
    (:meth:`_build_message`, :attr:`_WHAT`) and which of the build reply's keys must agree in
    every process (:attr:`_IDENTITY`).
    """

    _WHAT = "object"
    _IDENTITY: tuple[str, ...] = ("name", "method")

    def _setup(
        self,
        *,
        python: str,
        target: str,
        label: str,
        isolated: bool,
        stderr: str | None,
        extra_env: dict[str, str] | None = None,
    ) -> None:
        self.python = _resolve_python(python)
        self.target = str(target)
        self.label = label
        self._isolated = bool(isolated)
        mode = stderr or os.environ.get("DPCORE_WORKER_STDERR", "capture")
        self._capture = mode != "inherit"
        self._w: WorkerProcess | None = None
        self._deaths = 0
        self._deaths_pid = os.getpid()
        self._lock = threading.Lock()
        self.library: dict[str, Any] = {}
        self.remote: dict[str, Any] = {}
        self.extra_env: dict[str, str] = dict(extra_env or {})

    def _start(self) -> None:
        """Start this process's worker and build the object; one :class:`DPCoreError` line on failure."""
        try:
            self._worker()
        except (WorkerDied, RemoteError) as exc:
            self.close()
            raise DPCoreError(str(exc).replace("\n", " ")) from None
        except BaseException:
            self.close()
            raise
        _LIVE.add(self)

    def _build_message(self) -> dict[str, Any]:
        raise NotImplementedError

    def _where(self) -> dict[str, Any]:
        """Where the object runs and what was built (the start of ``describe()``)."""
        return {
            "python": self.python,
            "worker_python": getattr(self, "worker_python", None),
            "target": self.target,
            "library": self.library,
            "remote": self.remote,
            "params": getattr(self, "params", {}),
        }

    # -- the worker of this process
    def _env(self) -> dict[str, str]:
        env = dict(os.environ)
        if self._isolated:
            for k in ("PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP", "PYTHONUSERBASE"):
                env.pop(k, None)
        for k, v in WORKER_DEFAULT_ENV.items():
            env.setdefault(k, v)
        env.update(self.extra_env)
        env["DPCORE_WORKER_PARENT"] = str(os.getpid())
        main = threading.current_thread() is threading.main_thread()
        env["DPCORE_WORKER_PDEATHSIG"] = "1" if main else "0"  # PR_SET_PDEATHSIG follows the thread
        return env

    def _fail(self, w: WorkerProcess, reply: dict[str, Any], doing: str) -> RemoteError:
        w.close()
        msg = str(reply.get("error") or "failed")
        err = _remote_error(reply.get("type"), f"{self.label}: {doing} failed: {msg}")
        return err

    def _worker(self) -> WorkerProcess:
        pid = os.getpid()
        w = self._w
        if w is not None and w.pid == pid and w.alive:
            return w
        if w is not None:
            if w.pid != pid:
                w.forget()
            else:
                w.close()
            self._w = None
        if self._deaths_pid != pid:
            self._deaths, self._deaths_pid = 0, pid
        if self._deaths >= MAX_DEATHS:
            raise WorkerDied(
                f"{self.label}: the worker died {MAX_DEATHS} times in a row in this process; "
                "not started again"
            )
        try:
            w = WorkerProcess(self.python, self._env(), self.label, self._capture)
        except WorkerDied:
            self._deaths += 1
            raise
        try:
            hello = w.request({"op": "hello", "target": self.target}, BUILD_SECONDS, "importing the target")
            if not hello.get("ok"):
                raise self._fail(w, hello, f"importing {self.target}")
            info = w.request(self._build_message(), BUILD_SECONDS, f"building the {self._WHAT}")
            if not info.get("ok"):
                raise self._fail(w, info, f"building the {self._WHAT}")
        except BaseException as exc:
            w.close()
            if isinstance(exc, WorkerDied):
                self._deaths += 1
            raise
        if self.remote:  # a later process: the object must be the one the audit started with
            if any(info.get(k) != self.remote.get(k) for k in self._IDENTITY):
                w.close()
                raise WorkerDied(f"{self.label}: the worker built a different {self._WHAT} in process {pid}")
        else:
            self.library = {k: v for k, v in hello.items() if k != "ok"}
            self.remote = {k: v for k, v in info.items() if k != "ok"}
            self.worker_python = w.ready.get("python")
        self._w = w
        return w

    def _call(self, msg: dict[str, Any], doing: str) -> dict[str, Any]:
        with self._lock:
            w = self._worker()
            try:
                reply = w.request(msg, None, doing)
            except WorkerDied:
                self._w = None
                self._deaths += 1
                raise
            except BaseException:  # interrupted mid-call: the pipe's state is unknown
                w.kill()
                self._w = None
                raise
            self._deaths = 0
        if not reply.get("ok"):
            err = str(reply.get("error") or "failed")
            raise _remote_error(reply.get("type"), err)
        return reply

    # -- lifetime
    def close(self) -> None:
        """Stop this process's worker (end of input, then SIGKILL after 2 s)."""
        w, self._w = getattr(self, "_w", None), None
        if w is not None:
            w.close()

    def _after_fork(self) -> None:
        self._lock = threading.Lock()  # a lock held by another thread at fork stays held
        w, self._w = self._w, None
        if w is not None:
            w.forget()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:
            pass

    def __enter__(self) -> WorkerClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __getstate__(self) -> dict[str, Any]:  # Ray: each process starts its own worker
        state = dict(self.__dict__)
        state["_w"] = None
        state["_lock"] = None
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._lock = threading.Lock()
        _LIVE.add(self)

class SubprocessSanitizer(WorkerClient):
    """A sanitizer built and sampled in another Python environment (see the module docstring).

    Parameters
    ----------
    python:
        The other environment's interpreter (a path, or a name on ``PATH``).
    target:
        ``module:factory`` or ``path/to/file.py:factory``, resolved by that interpreter (a module
        from its environment or the current folder).
    epsilon:
        ε passed to the factory.
    vocab:
        dpcore's vocabulary: its words are the factory's ``vocab``, its word2vec file its
        ``embeddings``.
    params:
        Extra keyword arguments for the factory (JSON values).
    name, guarantee, citation:
        Override what the remote object reports (the mldp adapter states its own claims).
    label:
        How errors name it (default: ``name`` or the spec).
    isolated:
        Drop ``PYTHONPATH``/``PYTHONHOME``/``PYTHONSTARTUP`` from the worker's environment (managed
        environments: nothing of dpcore's environment leaks in).
    stderr:
        ``"capture"`` (default; the last line goes into error messages) or ``"inherit"`` (the
        worker writes to this process's stderr; ``DPCORE_WORKER_STDERR=inherit`` sets it).
    extra_env:
        Environment variables of the worker (a managed environment's substitutes: ``NLTK_DATA``).

    Raises
    ------
    DPCoreError
        One line: the interpreter does not start, the worker breaks the protocol, the import or
        the factory fails, or the object lacks the interface.
    """

    _WHAT = "sanitizer"
    _IDENTITY = ("name", "epsilon", "guarantee", "method")

    def __init__(
        self,
        *,
        python: str,
        target: str,
        epsilon: float,
        vocab: Vocabulary,
        params: dict[str, Any] | None = None,
        name: str | None = None,
        guarantee: str | None = None,
        citation: str | None = None,
        label: str | None = None,
        isolated: bool = False,
        stderr: str | None = None,
        extra_env: dict[str, str] | None = None,
    ) -> None:
        self._setup(
            python=python,
            target=target,
            label=label or name or f"subprocess:{python}::{target}",
            isolated=isolated,
            stderr=stderr,
            extra_env=extra_env,
        )
        self.vocab = vocab
        self.params = dict(params or {})
        self._embeddings = str(vocabulary_file(vocab))
        self._request_eps = check_epsilon(epsilon)
        self._start()
        info = self.remote
        self.name = name or info["name"]
        self.epsilon = float(info["epsilon"])
        self.guarantee = guarantee or info["guarantee"]
        self.citation = citation if citation is not None else info.get("citation")
        self._remote_claim = bool(info.get("has_claimed_bound")) and guarantee is None
        self._ids = {str(w): i for i, w in enumerate(vocab.words)}

    def _build_message(self) -> dict[str, Any]:
        return {
            "op": "build",
            "target": self.target,
            "epsilon": self._request_eps,
            "embeddings": self._embeddings,
            "params": self.params,
            "build_seed": BUILD_SEED,
        }

    # -- the interface
    def sample(self, words: Sequence[str], rng: np.random.Generator) -> np.ndarray:
        """One output per word, drawn in the worker from three seeds drawn from ``rng``."""
        seeds = [int(v) for v in rng.integers(0, 2**32, size=3)]
        words = [str(w) for w in words]
        reply = self._call({"op": "sample", "words": words, "seeds": seeds}, "sampling")
        out = reply.get("outputs")
        if not isinstance(out, list) or len(out) != len(words):
            raise WorkerDied(f"{self.label}: the worker returned a malformed answer to sample()")
        return np.asarray(out, dtype=object)

    def claimed_bounds_ids(self, x: np.ndarray, y: np.ndarray, d: np.ndarray) -> np.ndarray:
        """Claimed bounds for pairs of vocabulary ids: the remote ``claimed_bound`` when it has
        one (one request for all pairs), else ε (LDP) or ε·d (metric)."""
        x = np.asarray(x, dtype=np.int64)
        y = np.asarray(y, dtype=np.int64)
        d = np.asarray(d, dtype=np.float64)
        if self._remote_claim:
            w = self.vocab.words
            pairs = [[str(w[i]), str(w[j]), float(dd)] for i, j, dd in zip(x, y, d, strict=True)]
            reply = self._call({"op": "claim", "pairs": pairs}, "computing claimed bounds")
            return np.asarray(reply["bounds"], dtype=np.float64)
        return self._own_bounds(x, y, d)

    def _own_bounds(self, x: np.ndarray, y: np.ndarray, d: np.ndarray) -> np.ndarray:
        if self.guarantee == "ldp":
            return np.full(len(x), self.epsilon)
        return self.epsilon * d

    def claimed_bound(self, x: str, x_prime: str, distance: float) -> float:
        """One pair's claimed bound (see :meth:`claimed_bounds_ids`)."""
        i, j = self._ids.get(str(x), -1), self._ids.get(str(x_prime), -1)
        if i < 0 or j < 0:
            if self._remote_claim:
                reply = self._call(
                    {"op": "claim", "pairs": [[str(x), str(x_prime), float(distance)]]}, "claim"
                )
                return float(reply["bounds"][0])
            return self.epsilon if self.guarantee == "ldp" else self.epsilon * float(distance)
        out = self.claimed_bounds_ids(np.array([i]), np.array([j]), np.array([float(distance)]))
        return float(out[0])

    def describe(self) -> dict[str, Any]:
        return {
            **self._where(),
            "adapter": "dpcore.textaudit.subprocess_adapter (run in its own environment)",
            "embeddings_file": self._embeddings,
        }
