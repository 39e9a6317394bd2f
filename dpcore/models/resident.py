"""The heavy objects a process keeps (models, embedding vocabularies), within one memory budget.

A dashboard server lives for days and serves every page: the masked LM of the attack page,
the MiniLM encoder of the rewriter audit, the vocabularies of the Sanitize and text-audit pages.
Cached each on its own (``functools.lru_cache``, ``st.cache_resource``), they all stay: one
visitor who opened every page and ran a DP-MLM audit held 863 MiB, above the 690 MB of
Community Cloud's smallest tier (issue 60). Here they share one budget instead:

- :func:`resident` caches a loader's results by its arguments, like ``functools.lru_cache``;
- an object that holds memory it can read again (a vocabulary's vectors) counts it with
  :func:`hold`, and lets it go when the budget drops it;
- every cached object counts its bytes (its ``resident_bytes()`` method, or the ``size``
  function given to :func:`resident`), measured again each time the budget is checked;
- when a new object takes the total above the budget, the least recently used others are
  dropped until it fits (the new one is always kept), and freed memory goes back to the system
  (:func:`dpcore.memory.release_free_memory`). A dropped object that a running computation
  still holds lives until that computation ends; the next call loads it again.

The budget is ``DPCORE_RESIDENT_MIB`` MiB (a whole number from 16 to 1,048,576), or
:data:`DEFAULT_BUDGET_MIB`. Results never depend on it: a dropped object is loaded again
identically; only time does (a reload costs one to two seconds).

Callers must not keep a cached object beyond their computation (a page must not put one in
``st.cache_resource`` or a module global): what they keep, the budget cannot drop.
"""

from __future__ import annotations

import functools
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Any, ParamSpec, TypeVar

from dpcore.validation import env_whole_number

__all__ = [
    "BUDGET_ENV",
    "DEFAULT_BUDGET_MIB",
    "ResidentEntry",
    "budget_bytes",
    "clear",
    "entries",
    "forget",
    "hold",
    "parameter_bytes",
    "resident",
    "total_bytes",
]

#: The environment variable that sets the budget, in MiB.
BUDGET_ENV = "DPCORE_RESIDENT_MIB"
#: The budget when :data:`BUDGET_ENV` is unset: one large model at a time (the masked LM, about
#: 90 MiB in float32, or the MiniLM encoder, about 70 MiB) with small vocabularies beside it.
#: A computation that needs two large ones at once (a DP-MLM rewriter audit: the masked LM for
#: the rewrites, then the encoder for the MiniLM distinguisher) holds both while it runs, but the
#: first leaves the cache when the second loads; the next computation that needs it loads it again
#: (1–2 s). A server with memory to spare sets ``DPCORE_RESIDENT_MIB=512``.
DEFAULT_BUDGET_MIB = 128

P = ParamSpec("P")
T = TypeVar("T")

_LOCK = threading.RLock()
_ENTRIES: OrderedDict[Hashable, _Slot] = OrderedDict()


@dataclass(frozen=True)
class ResidentEntry:
    """One cached object, as :func:`entries` reports it."""

    kind: str
    key: str
    bytes: int


class _Slot:
    """A cache entry: loaded once under its own lock, so two threads never load it twice."""

    def __init__(
        self, kind: str, size: Callable[[Any], int] | None, on_evict: Callable[[], None] | None = None
    ) -> None:
        self.kind = kind
        self.size = size
        self.on_evict = on_evict
        self.lock = threading.Lock()
        self.value: Any = None
        self.loaded = False

    def nbytes(self) -> int:
        if not self.loaded:
            return 0
        if self.size is not None:
            return int(self.size(self.value))
        measure = getattr(self.value, "resident_bytes", None)
        return int(measure()) if callable(measure) else 0


def parameter_bytes(model: Any) -> int:
    """The bytes of a torch model's parameters (0 for an object without ``parameters()``): the
    size of a torch model in the budget."""
    params = getattr(model, "parameters", None)
    return sum(p.numel() * p.element_size() for p in params()) if callable(params) else 0


def budget_bytes() -> int:
    """The budget in bytes: ``DPCORE_RESIDENT_MIB`` MiB, or :data:`DEFAULT_BUDGET_MIB`.

    Raises
    ------
    DPCoreError
        When the variable is set to anything but a whole number from 16 to 1,048,576.
    """
    mib = env_whole_number(BUDGET_ENV, min_value=16, max_value=1 << 20)
    return (DEFAULT_BUDGET_MIB if mib is None else mib) * 2**20


def total_bytes() -> int:
    """The bytes the cached objects hold now (each measured now)."""
    with _LOCK:
        slots = list(_ENTRIES.values())
    return sum(s.nbytes() for s in slots)


def entries() -> list[ResidentEntry]:
    """The cached objects, least recently used first."""
    with _LOCK:
        items = list(_ENTRIES.items())
    return [ResidentEntry(s.kind, _show(k), s.nbytes()) for k, s in items if s.loaded]


def clear(kind: str | None = None) -> None:
    """Drop every cached object (of one kind when ``kind`` is given); for tests and benchmarks."""
    with _LOCK:
        keys = [k for k, s in _ENTRIES.items() if kind is None or s.kind == kind]
        gone = [_ENTRIES.pop(k) for k in keys]
    for slot in gone:
        if slot.on_evict is not None:
            slot.on_evict()
    _release()


def hold(key: Hashable, kind: str, nbytes: Callable[[], int], release: Callable[[], None]) -> None:
    """Count memory that an object holds and can give back (the vectors of a vocabulary, read
    on first use and read again when needed): ``nbytes()`` is what it holds now, and
    ``release()`` is called when the budget drops it. Marks it as the most recently used; the
    budget is then fitted, keeping it.

    Parameters
    ----------
    key:
        A key of its own (a tuple whose first item is a dotted name, for :func:`entries`).
    kind, nbytes, release:
        What it is, its bytes now, and how it lets them go (it must stay usable: it reads them
        again on its next use).
    """
    with _LOCK:
        slot = _ENTRIES.get(key)
        if slot is None:
            slot = _ENTRIES[key] = _Slot(kind, lambda _value: nbytes(), release)
            slot.loaded = True
        _ENTRIES.move_to_end(key)
    _fit(key)


def forget(key: Hashable) -> None:
    """Remove ``key`` without calling its release (its object is gone)."""
    with _LOCK:
        _ENTRIES.pop(key, None)


def _show(key: Hashable) -> str:
    if len(key) != 3:  # type: ignore[arg-type]  # a key of hold(): (its name, its object's id)
        return str(key[0])  # type: ignore[index]
    qualname, args, kwargs = key  # type: ignore[misc]
    parts = [repr(a) for a in args] + [f"{k}={v!r}" for k, v in kwargs]
    text = f"{qualname}({', '.join(parts)})"
    return text if len(text) <= 120 else text[:119] + "…"


def _release() -> None:
    import gc

    from dpcore.memory import release_free_memory

    gc.collect()
    release_free_memory()


def _fit(keep: Hashable, incoming: int = 0) -> None:
    """Drop least recently used entries other than ``keep`` until the total fits the budget
    (with ``incoming`` bytes about to be loaded, room for them too)."""
    budget = budget_bytes() - max(0, int(incoming))
    dropped: list[_Slot] = []
    with _LOCK:
        sizes = {k: s.nbytes() for k, s in _ENTRIES.items()}
        total = sum(sizes.values())
        for k in list(_ENTRIES):
            if total <= budget:
                break
            if k == keep or not _ENTRIES[k].loaded or sizes[k] == 0:
                continue
            total -= sizes[k]
            dropped.append(_ENTRIES.pop(k))
    for slot in dropped:  # outside the lock: a release takes its object's own lock
        if slot.on_evict is not None:
            slot.on_evict()
    if dropped:
        _release()


def resident(
    kind: str,
    *,
    size: Callable[[Any], int] | None = None,
    expect: Callable[..., int] | None = None,
) -> Callable[[Callable[P, T]], Callable[P, T]]:
    """Cache a loader's results within the process's memory budget (see the module docstring).

    Parameters
    ----------
    kind:
        What the loader makes (``"vocabulary"``, ``"masked LM"``, …), for reports.
    size:
        The bytes a result holds; default: its ``resident_bytes()`` method (0 when it has none).
    expect:
        The bytes a load will hold, from the loader's arguments, known before loading: room is
        made for them first, so that a model does not load beside what it is about to replace
        (loading the masked LM passes through about twice its final size).

    Returns
    -------
    Callable
        A decorator. The wrapped function has ``__wrapped__`` (the loader itself) and
        ``cache_clear()`` (drop this loader's results).
    """

    def decorate(fn: Callable[P, T]) -> Callable[P, T]:
        qualname = f"{fn.__module__}.{fn.__qualname__}"

        @functools.wraps(fn)
        def wrapper(*args: P.args, **kwargs: P.kwargs) -> T:
            key = (qualname, args, tuple(sorted(kwargs.items())))
            with _LOCK:
                slot = _ENTRIES.get(key)
                if slot is None:
                    slot = _ENTRIES[key] = _Slot(kind, size)
                _ENTRIES.move_to_end(key)
            with slot.lock:
                fresh = not slot.loaded
                if fresh:
                    if expect is not None:
                        _fit(key, incoming=expect(*args, **kwargs))
                    try:
                        slot.value = fn(*args, **kwargs)
                    except BaseException:
                        with _LOCK:
                            if _ENTRIES.get(key) is slot:
                                del _ENTRIES[key]
                        raise
                    slot.loaded = True
                value = slot.value
            if fresh:
                _fit(key)
            return value

        def cache_clear() -> None:
            with _LOCK:
                for k in [k for k in _ENTRIES if k[0] == qualname]:
                    del _ENTRIES[k]

        wrapper.cache_clear = cache_clear  # type: ignore[attr-defined]
        return wrapper

    return decorate
