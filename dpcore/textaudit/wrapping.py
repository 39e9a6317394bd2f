"""The base of the audit's sanitizer wrappers: everything but ``sample`` is the wrapped one's.

The audit wraps a sanitizer when it must be *called* differently from how it is written:
:class:`~dpcore.textaudit.contract.GlobalStateReseeded` (its global random state seeded from the
audit's rng before every call) and :class:`~dpcore.textaudit.calls.SentenceCalls` (one output
per call, each draw from its own sentence-sized call). A wrapper forwards every attribute
(``name``, ``epsilon``, ``guarantee``, ``claimed_bound``, ``log_prob_row``, ``exact``, …) to the
sanitizer inside, except ``sample_ids`` and ``row_blocks`` (the wrapped sampler always goes
through the wrapper's ``sample``), and pickles when the wrapped sanitizer does.

:func:`stdout_to_stderr` is how every stage calls a user's sanitizer: its ``print`` goes to
stderr, so ``--json`` output stays clean.
"""

from __future__ import annotations

import contextlib
import sys
import threading
from collections.abc import Iterator
from typing import Any

__all__ = ["SanitizerWrapper", "stdout_to_stderr", "unwrap"]

_REDIRECT_LOCK = threading.Lock()
_REDIRECT_DEPTH = 0
_REDIRECT_SAVED: Any = None


@contextlib.contextmanager
def stdout_to_stderr() -> Iterator[None]:
    """While a sanitizer runs, Python-level ``print``/``sys.stdout`` writes go to stderr.

    A plugin that prints cannot corrupt ``--json`` output. Unlike
    :func:`contextlib.redirect_stdout` it may be entered from several threads at once (the
    thread-pool engine): the first entry swaps ``sys.stdout``, the last exit puts it back.
    """
    global _REDIRECT_DEPTH, _REDIRECT_SAVED
    with _REDIRECT_LOCK:
        if _REDIRECT_DEPTH == 0:
            _REDIRECT_SAVED = sys.stdout
            sys.stdout = sys.stderr
        _REDIRECT_DEPTH += 1
    try:
        yield
    finally:
        with _REDIRECT_LOCK:
            _REDIRECT_DEPTH -= 1
            if _REDIRECT_DEPTH == 0:
                sys.stdout = _REDIRECT_SAVED
                _REDIRECT_SAVED = None


#: Attributes never forwarded: the engine's fast paths would bypass the wrapper's ``sample``.
_NOT_FORWARDED = ("_wrapped", "sample_ids", "row_blocks")


class SanitizerWrapper:
    """A sanitizer inside another: subclasses define ``sample`` and what ``describe`` adds.

    Parameters
    ----------
    sanitizer:
        The sanitizer to wrap.
    """

    #: The key :meth:`describe` sets to :meth:`described_as` in the wrapped sanitizer's description.
    describe_key = "wrapped"

    def __init__(self, sanitizer: Any) -> None:
        self.__dict__["_wrapped"] = sanitizer

    @property
    def wrapped(self) -> Any:
        """The sanitizer inside."""
        return self.__dict__["_wrapped"]

    def described_as(self) -> Any:
        """What :meth:`describe` records under :attr:`describe_key`."""
        return True

    def describe(self) -> dict[str, Any]:
        """The wrapped sanitizer's description, with this wrapper's mark."""
        inner = self.__dict__["_wrapped"]
        fn = getattr(inner, "describe", None)
        info = dict(fn()) if callable(fn) else {"type": type(inner).__name__}
        info[self.describe_key] = self.described_as()
        return info

    def __getattr__(self, name: str) -> Any:
        # dunders (pickle's __setstate__, copy's __deepcopy__ …) and the fast paths are never forwarded
        if name.startswith("__") or name in _NOT_FORWARDED:
            raise AttributeError(name)
        inner = self.__dict__.get("_wrapped")
        if inner is None:
            raise AttributeError(name)
        return getattr(inner, name)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.__dict__.get('_wrapped')!r})"


def unwrap(sanitizer: Any) -> Any:
    """The sanitizer inside any wrappers (itself when not wrapped)."""
    while isinstance(sanitizer, SanitizerWrapper):
        sanitizer = sanitizer.wrapped
    return sanitizer
