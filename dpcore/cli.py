"""Command-line interface: ``python -m dpcore <command> ...``.

Each command lives in its own module under :mod:`dpcore.commands` and exposes
``register(subparsers)``; adding a command means adding a module name to
:data:`dpcore.commands.COMMAND_MODULES`. Bad arguments exit with status 2 and one line on stderr;
with ``--json``, that line is one JSON object (``error``, ``type``, ``exit_code``).
"""

from __future__ import annotations

import argparse
import importlib
import signal
import sys
import threading
from collections.abc import Sequence

from dpcore import __version__
from dpcore.files import Terminated
from dpcore.validation import DPCoreError

__all__ = ["build_parser", "main"]


class UsageError(Exception):
    """Raised instead of argparse's multi-line usage dump."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        raise UsageError(message)


def build_parser() -> argparse.ArgumentParser:
    """The full parser, with one sub-command per module in :data:`COMMAND_MODULES`."""
    from dpcore.commands import COMMAND_MODULES

    parser = _Parser(
        prog=_prog(),
        description="dpcore: audit, explain and apply differential privacy for NLP.",
    )
    parser.add_argument("--version", action="version", version=f"dpcore {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True
    for mod in COMMAND_MODULES:
        importlib.import_module(f"dpcore.commands.{mod}").register(sub)
    return parser


def _prog() -> str:
    """``dpcore`` when run as the console script, else ``python -m dpcore``."""
    import os

    name = os.path.basename(sys.argv[0] or "")
    return "dpcore" if name in ("dpcore", "dpcore.exe") else "python -m dpcore"


def _check_utf8(argv: Sequence[str]) -> None:
    """Refuse arguments holding bytes that are not UTF-8 (Python keeps them as lone surrogates,
    which would fail deep inside a library instead of here, with one clear line)."""
    for arg in argv:
        try:
            arg.encode("utf-8")
        except UnicodeEncodeError:
            shown = arg.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
            raise UsageError(f"argument '{shown}' is not valid UTF-8 text") from None


def _utf8_streams() -> None:
    """Write UTF-8 whatever ``PYTHONIOENCODING`` says when the stream cannot encode ε, √ or ∞
    (with ``cp1252`` printing them crashed ``audit``, ``sensitivity`` and ``list``)."""
    for stream in (sys.stdout, sys.stderr):
        enc = getattr(stream, "encoding", None) or "ascii"
        try:
            "ε√∞≤→".encode(enc)
        except (UnicodeEncodeError, LookupError):
            reconfigure = getattr(stream, "reconfigure", None)
            if reconfigure is not None:
                reconfigure(encoding="utf-8", errors="replace")


def _restore_interrupt_handler() -> None:
    """From here on Ctrl-C raises KeyboardInterrupt (caught below: one line, exit 130)."""
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, signal.default_int_handler)


def _behind(exc: BaseException, kind: type[BaseException]) -> bool:
    """Whether ``exc`` was raised because of a ``kind`` exception (its cause or context chain)."""
    seen: set[int] = set()
    cur: BaseException | None = exc
    while cur is not None and id(cur) not in seen:
        if isinstance(cur, kind):
            return True
        seen.add(id(cur))
        cur = cur.__cause__ or cur.__context__
    return False


def _json_mode(argv: Sequence[str]) -> bool:
    """Whether the command line asks for JSON output (``--json`` before any ``--``)."""
    for a in argv:
        if a == "--":
            return False
        if a == "--json":
            return True
    return False


def _fail(argv: Sequence[str], line: str, message: str, kind: str, code: int) -> int:
    """Report a failure on stderr: one line, or with ``--json`` one JSON object
    (``{"error": message, "type": kind, "exit_code": code}``), so a script reading JSON gets JSON."""
    if _json_mode(argv):
        import json

        obj = {"error": message, "type": kind, "exit_code": code}
        print(json.dumps(obj, ensure_ascii=False), file=sys.stderr)
    else:
        print(f"dpcore: {line}", file=sys.stderr)
    return code


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; return the exit status (0 ok, 2 bad input, 3 nothing tested (``audit-text``), 130
    interrupted, 143 terminated)."""
    argv = sys.argv[1:] if argv is None else list(argv)
    try:
        _utf8_streams()
        parser = build_parser()
        _check_utf8(argv)
        args = parser.parse_args(argv)
        _restore_interrupt_handler()
        return int(args.func(args) or 0)
    except (UsageError, DPCoreError) as exc:
        msg = str(exc).replace("\n", " ")
        kind = "usage" if isinstance(exc, UsageError) else "invalid-input"
        return _fail(argv, f"error: {msg}", msg, kind, 2)
    except KeyboardInterrupt:
        return _fail(argv, "interrupted", "interrupted", "interrupted", 130)
    except Terminated:
        return _fail(argv, "terminated", "terminated", "terminated", 143)
    except BrokenPipeError:
        return 0
    except Exception as exc:
        # A signal inside a class body's ``__set_name__`` (a dataclass field, while a module is
        # imported) reaches us as the RuntimeError Python wraps it in: still an interrupt.
        if _behind(exc, KeyboardInterrupt):
            return _fail(argv, "interrupted", "interrupted", "interrupted", 130)
        if _behind(exc, Terminated):
            return _fail(argv, "terminated", "terminated", "terminated", 143)
        raise
