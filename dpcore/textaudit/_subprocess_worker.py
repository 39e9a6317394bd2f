"""dpcore's worker: one text sanitizer run in *another* Python environment, over a pipe.

:mod:`dpcore.textaudit.worker_protocol` starts this file by path with the other environment's
interpreter (``/path/to/python _subprocess_worker.py``). It imports only the standard library and
the code under audit; NumPy only when that code has imported it already, and then only to seed
its global state. It never imports dpcore, so it runs in any environment with Python ≥ 3.8.

Framing: every message, both ways, is ``b"DPCW"``, a 4-byte big-endian length, then that many
bytes of UTF-8 JSON. The worker's file descriptor 1 is pointed at its stderr before anything is
imported (so the library's ``print`` and C-level writes cannot reach the pipe); the protocol
uses private duplicates of the original stdin and stdout.

Messages (each request gets one reply, ``{"ok": true, …}`` or ``{"ok": false, "error": "one
line"}``):

``ready`` (sent by the worker first)
    ``protocol``, ``python``, ``executable``, ``pid``.
``hello`` ``{"target"}``
    Imports the target's module; replies with ``library``, ``version`` and ``mechanisms``
    (from the module's ``describe_library()`` if it has one, else from its top-level package:
    ``__version__`` or the installed distribution's version, and ``MECHANISMS``).
``build`` ``{"target", "epsilon", "embeddings", "params", "build_seed"}``
    Seeds ``random`` (and NumPy's global state, when imported) with ``build_seed``, calls
    ``factory(epsilon=E, vocab=WORDS, [embeddings=PATH], **params)`` (WORDS: the words of the
    word2vec text file ``embeddings``; ``embeddings`` is passed when the factory's signature names
    it), checks
    the object, and replies with its ``name``, ``epsilon``, ``guarantee``, ``method`` (``sample``
    or ``replace_word``), ``has_claimed_bound`` and ``citation``.
``sample`` ``{"words", "seeds": [a, b, c]}``
    ``random.seed(a)``; ``numpy.random.seed(b)`` when NumPy is imported; then
    ``obj.sample(words, random.Random(c))`` or ``[obj.replace_word(w) for w in words]``;
    replies with ``outputs`` (strings; anything else as its ``repr``).
``claim`` ``{"pairs": [[x, x′, d], …]}``
    ``bounds``: ``obj.claimed_bound(x, x′, d)`` for each.
``build_rewriter`` ``{"target", "epsilon", "params", "build_seed"}``
    A text rewriter instead of a word sanitizer: seeds as ``build`` does, calls
    ``factory(epsilon=E, **params)``, checks that the object has ``name`` and
    ``rewrite(texts, rng)``, and replies with its ``name``, ``method`` (``rewrite``),
    ``has_count_tokens`` and ``citation``.
``rewrite`` ``{"texts", "seeds": [a, b, c]}``
    Seeds as ``sample`` does, then ``obj.rewrite(texts, random.Random(c))``; replies with
    ``outputs`` (one string per text).
``count`` ``{"texts"}``
    ``counts``: ``obj.count_tokens(text)`` for each (the rewriter's own tokens).
``exit``
    Replies, then ends. End of input (the pipe closed) ends it too.

The worker ends when its parent ends: on Linux it asks for SIGKILL then
(``prctl(PR_SET_PDEATHSIG)``, when ``DPCORE_WORKER_PDEATHSIG=1``), and everywhere a thread checks
every 0.5 s that its parent is still ``DPCORE_WORKER_PARENT``. Ctrl-C is left to the parent.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import json
import math
import os
import platform
import random
import signal
import socket
import struct
import sys
import threading
import time

MAGIC = b"DPCW"
PROTOCOL = 1
HEADER = struct.Struct(">4sI")
MAX_FRAME = 1 << 30
GUARANTEES = ("ldp", "metric")


# --- framing ---------------------------------------------------------------------------------


def _read_exact(fd, n):
    chunks = []
    while n > 0:
        b = os.read(fd, min(n, 1 << 20))
        if not b:
            return None
        chunks.append(b)
        n -= len(b)
    return b"".join(chunks)


def read_frame(fd):
    """The next message, or None at the end of input."""
    head = _read_exact(fd, HEADER.size)
    if head is None:
        return None
    magic, size = HEADER.unpack(head)
    if magic != MAGIC or size > MAX_FRAME:
        raise ValueError("a frame that is not dpcore's protocol")
    body = _read_exact(fd, size)
    if body is None:
        return None
    return json.loads(body.decode("utf-8"))


def write_frame(fd, obj):
    body = json.dumps(obj, ensure_ascii=False, separators=(",", ":"), allow_nan=True).encode("utf-8")
    view = memoryview(HEADER.pack(MAGIC, len(body)) + body)
    while view:
        n = os.write(fd, view)
        view = view[n:]


# --- the process -----------------------------------------------------------------------------


def _isolate_stdio():
    """Private duplicates of stdin/stdout for the protocol; fd 0 → /dev/null, fd 1 → stderr."""
    proto_in = os.dup(0)
    proto_out = os.dup(1)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    sys.stdin = open(os.devnull)
    return proto_in, proto_out


def _die_with_parent():
    parent = int(os.environ.get("DPCORE_WORKER_PARENT", "0") or 0)
    if os.environ.get("DPCORE_WORKER_PDEATHSIG") == "1" and sys.platform.startswith("linux"):
        try:
            import ctypes

            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG
        except Exception:
            pass
    if not parent:
        return
    if os.getppid() != parent:  # the parent ended before the request was made
        os._exit(0)

    def watch():
        while True:
            time.sleep(0.5)
            if os.getppid() != parent:
                os._exit(0)

    threading.Thread(target=watch, name="dpcore-parent", daemon=True).start()


def _one_line(exc):
    """``Type: message`` in one line (the first line of the message that says something)."""
    name = type(exc).__name__
    if isinstance(exc, SystemExit):
        return f"the code called sys.exit({'' if exc.code is None else repr(exc.code)})"
    for line in str(exc).splitlines():
        text = line.strip()
        if any(ch.isalnum() for ch in text):
            return f"{name}: {text}"[:400]
    return name


# --- the code under audit --------------------------------------------------------------------


def _split_target(target):
    where, sep, attr = str(target).rpartition(":")
    if not sep or not where or not attr.isidentifier():
        raise ValueError(f"{target!r} is not module:factory or path/to/file.py:factory")
    return where, attr


def _module(where):
    if where.endswith(".py"):
        path = os.path.abspath(os.path.expanduser(where))
        if not os.path.isfile(path):
            raise FileNotFoundError(f"no such Python file: {where}")
        name = "dpcore_worker_target_" + str(abs(hash(path)))
        if name in sys.modules:
            return sys.modules[name]
        spec = importlib.util.spec_from_file_location(name, path)
        if spec is None or spec.loader is None:
            raise ImportError(f"cannot load {where} as a Python module")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        try:
            spec.loader.exec_module(module)
        except BaseException:
            sys.modules.pop(name, None)
            raise
        return module
    return importlib.import_module(where)


def _version_of(package):
    version = getattr(package, "__version__", None)
    if version is not None:
        return str(version)
    try:
        from importlib import metadata

        dists = metadata.packages_distributions().get(package.__name__, [])  # Python >= 3.10
        for dist in dists:
            return metadata.version(dist)
        return metadata.version(package.__name__)
    except Exception:
        return None


def _mechanism_names(obj):
    mech = getattr(obj, "MECHANISMS", None)
    if mech is None:
        return None
    try:
        return [str(k) for k in (mech.keys() if hasattr(mech, "keys") else mech)]
    except TypeError:
        return None


def _hello(msg):
    where, _ = _split_target(msg["target"])
    module = _module(where)
    describe = getattr(module, "describe_library", None)
    if callable(describe):
        info = dict(describe())
    else:
        top = importlib.import_module(module.__name__.split(".")[0]) if not where.endswith(".py") else module
        info = {
            "library": top.__name__,
            "version": _version_of(top),
            "mechanisms": _mechanism_names(module) or _mechanism_names(top),
        }
    info.setdefault("module", where)
    return {"ok": True, **info}


def _words_of(path):
    words = []
    with open(path, encoding="utf-8") as fh:
        fh.readline()  # "N DIM"
        for line in fh:
            words.append(line.split(" ", 1)[0])
    return words


def _seed_global(seed):
    random.seed(seed)
    np = sys.modules.get("numpy")
    if np is not None:
        np.random.seed(seed % (1 << 32))


def _accepts(fn, name, by_name=False):
    """Whether ``fn`` takes the keyword ``name`` (``by_name``: named in its signature, not **kw)."""
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return not by_name
    if name in params:
        return params[name].kind in (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    return not by_name and any(p.kind == p.VAR_KEYWORD for p in params.values())


def _factory(msg):
    """The target's factory and its name."""
    where, attr = _split_target(msg["target"])
    module = _module(where)
    factory = getattr(module, attr, None)
    if factory is None or not callable(factory):
        raise AttributeError(f"{where} has no callable {attr!r}")
    return factory, attr


def _with_params(factory, attr, kwargs, params):
    for key, value in (params or {}).items():
        if not _accepts(factory, key):
            raise TypeError(f"the factory {attr}() takes no parameter {key!r}")
        kwargs[key] = value
    return kwargs


def _build(msg, state):
    factory, attr = _factory(msg)
    embeddings = msg.get("embeddings")
    words = _words_of(embeddings) if embeddings else list(msg.get("words") or [])
    kwargs = {"epsilon": msg["epsilon"], "vocab": words}
    if embeddings and _accepts(factory, "embeddings", by_name=True):
        kwargs["embeddings"] = embeddings
    _with_params(factory, attr, kwargs, msg.get("params"))
    _seed_global(int(msg.get("build_seed", 0)))
    obj = factory(**kwargs)
    sample = getattr(obj, "sample", None)
    replace = getattr(obj, "replace_word", None)
    if callable(sample):
        method = "sample"
    elif callable(replace):
        method = "replace_word"
    else:
        raise TypeError(
            f"{attr}() returned {type(obj).__name__}, which has neither sample(words, rng) "
            "nor replace_word(word)"
        )
    missing = [a for a in ("name", "epsilon", "guarantee") if not hasattr(obj, a)]
    if missing:
        raise TypeError(f"{attr}() returned {type(obj).__name__}, which lacks {', '.join(missing)}")
    if obj.guarantee not in GUARANTEES:
        raise ValueError(f"the sanitizer's guarantee must be 'ldp' or 'metric', got {obj.guarantee!r}")
    eps = obj.epsilon
    if isinstance(eps, bool) or (not isinstance(eps, (int, float)) and not hasattr(eps, "__float__")):
        raise TypeError(f"the sanitizer's epsilon must be a number, got {type(eps).__name__}")
    eps = float(eps)
    if not (math.isfinite(eps) and eps >= 0):
        raise ValueError(f"the sanitizer's epsilon must be finite and >= 0, got {eps!r}")
    state["obj"], state["method"] = obj, method
    citation = getattr(obj, "citation", None)
    return {
        "ok": True,
        "name": str(obj.name),
        "epsilon": eps,
        "guarantee": str(obj.guarantee),
        "method": method,
        "has_claimed_bound": callable(getattr(obj, "claimed_bound", None)),
        "citation": None if citation is None else str(citation),
        "vocab_size": len(words),
    }


def _build_rewriter(msg, state):
    factory, attr = _factory(msg)
    kwargs = _with_params(factory, attr, {"epsilon": msg["epsilon"]}, msg.get("params"))
    _seed_global(int(msg.get("build_seed", 0)))
    obj = factory(**kwargs)
    if not callable(getattr(obj, "rewrite", None)) or not hasattr(obj, "name"):
        raise TypeError(f"{attr}() returned {type(obj).__name__}, which lacks name or rewrite(texts, rng)")
    state["obj"], state["method"] = obj, "rewrite"
    citation = getattr(obj, "citation", None)
    return {
        "ok": True,
        "name": str(obj.name),
        "method": "rewrite",
        "has_count_tokens": callable(getattr(obj, "count_tokens", None)),
        "citation": None if citation is None else str(citation),
    }


def _rewrite(msg, state):
    obj = state.get("obj")
    if obj is None or state.get("method") != "rewrite":
        raise RuntimeError("rewrite before build_rewriter")
    texts = [str(t) for t in msg["texts"]]
    out = list(obj.rewrite(texts, _seed_call(msg["seeds"])))
    if len(out) != len(texts):
        raise ValueError(f"the rewriter returned {len(out)} texts for {len(texts)} inputs")
    return {"ok": True, "outputs": [_label(o) for o in out]}


def _count(msg, state):
    obj = state.get("obj")
    if obj is None or not callable(getattr(obj, "count_tokens", None)):
        raise RuntimeError("count before build_rewriter, or the rewriter has no count_tokens")
    return {"ok": True, "counts": [int(obj.count_tokens(str(t))) for t in msg["texts"]]}


def _seed_call(seeds):
    """Seed ``random`` and NumPy's global state (when imported) with the first two seeds; return
    ``random.Random(third)`` for the call."""
    a, b, c = (int(v) for v in seeds)
    random.seed(a)
    np = sys.modules.get("numpy")
    if np is not None:
        np.random.seed(b)
    return random.Random(c)


def _label(out):
    return out if isinstance(out, str) else repr(out)


def _sample(msg, state):
    obj = state.get("obj")
    if obj is None:
        raise RuntimeError("sample before build")
    words = [str(w) for w in msg["words"]]
    rng = _seed_call(msg["seeds"])
    if state["method"] == "sample":
        out = list(obj.sample(words, rng))
    else:
        replace = obj.replace_word
        out = [replace(w) for w in words]
    if len(out) != len(words):
        raise ValueError(f"the sanitizer returned {len(out)} outputs for {len(words)} words")
    return {"ok": True, "outputs": [_label(o) for o in out]}


def _claim(msg, state):
    obj = state.get("obj")
    if obj is None:
        raise RuntimeError("claim before build")
    fn = obj.claimed_bound
    return {"ok": True, "bounds": [float(fn(str(x), str(y), float(d))) for x, y, d in msg["pairs"]]}


def main():
    proto_in, proto_out = _isolate_stdio()
    _die_with_parent()
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's: it stops this worker
    socket.setdefaulttimeout(float(os.environ.get("DPCORE_WORKER_SOCKET_TIMEOUT", "10")))
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != here]
    sys.path.insert(0, os.getcwd())  # module:factory resolves as with `python -m` from here
    write_frame(
        proto_out,
        {
            "op": "ready",
            "protocol": PROTOCOL,
            "python": platform.python_version(),
            "executable": sys.executable,
            "pid": os.getpid(),
        },
    )
    state = {}
    ops = {"hello": _hello, "build": lambda m: _build(m, state), "sample": lambda m: _sample(m, state)}
    ops["claim"] = lambda m: _claim(m, state)
    ops["build_rewriter"] = lambda m: _build_rewriter(m, state)
    ops["rewrite"] = lambda m: _rewrite(m, state)
    ops["count"] = lambda m: _count(m, state)
    while True:
        try:
            msg = read_frame(proto_in)
        except (ValueError, OSError):
            return 2
        if msg is None:
            return 0
        op = msg.get("op") if isinstance(msg, dict) else None
        if op == "exit":
            write_frame(proto_out, {"ok": True})
            return 0
        try:
            if op not in ops:
                raise ValueError(f"unknown request {op!r}")
            reply = ops[op](msg)
        except BaseException as exc:  # the code under audit raised, or called sys.exit
            reply = {"ok": False, "error": _one_line(exc), "type": type(exc).__name__}
        try:
            write_frame(proto_out, reply)
        except (TypeError, ValueError) as exc:  # an output JSON cannot carry
            write_frame(proto_out, {"ok": False, "error": _one_line(exc), "type": type(exc).__name__})


if __name__ == "__main__":
    code = main()
    sys.stderr.flush()
    os._exit(code)  # no interpreter teardown: the library's atexit hooks and threads may hang
