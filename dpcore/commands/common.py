"""Helpers shared by CLI commands: output, progress on stderr, argument types."""

from __future__ import annotations

import contextlib
import os
import sys
import time
from collections.abc import Callable, Iterator
from typing import Any

from dpcore.jsonutil import dumps

__all__ = [
    "FULL_VOCABULARY_HELP",
    "add_full_vocabulary_argument",
    "add_param_argument",
    "emit_json",
    "mechanism_params",
    "stderr_progress",
    "stdout_reserved",
    "vocabulary_line",
]

#: The help of ``--full-vocabulary`` on every command that builds a public vocabulary.
FULL_VOCABULARY_HELP = "research: include the slurs and insults the default vocabulary leaves out"


def emit_json(obj: Any) -> None:
    """Print ``obj`` as strict JSON (∞ as ``"inf"``) on stdout."""
    print(dumps(obj, indent=2))


def _flush(*streams: Any) -> None:
    for stream in streams:
        try:
            if stream is not None:
                stream.flush()
        except (OSError, ValueError):  # closed, or a broken pipe: nothing to keep
            pass


@contextlib.contextmanager
def stdout_reserved() -> Iterator[None]:
    """Keep stdout for what the command prints after the block (its JSON): inside, all goes to stderr.

    File descriptor 1 points at stderr for the whole block (so C-level writes, forked worker
    processes and code holding the original ``sys.stdout`` write there) and ``sys.stdout`` is
    ``sys.stderr``; both are put back on exit, whatever happened, after flushing what was
    written inside to stderr. Where there is no file descriptor 1 (closed), only ``sys.stdout``
    is redirected.
    """
    saved = sys.stdout
    _flush(saved, sys.__stdout__)
    try:
        saved_fd: int | None = os.dup(1)
    except OSError:
        saved_fd = None
    if saved_fd is not None:
        try:
            os.dup2(2, 1)
        except OSError:  # no stderr descriptor either
            os.close(saved_fd)
            saved_fd = None
    sys.stdout = sys.stderr
    try:
        yield
    finally:
        _flush(sys.stdout, sys.stderr, saved, sys.__stdout__)
        sys.stdout = saved
        if saved_fd is not None:
            os.dup2(saved_fd, 1)
            os.close(saved_fd)


def stderr_progress(label: str, *, enabled: bool = True) -> Callable[[int, int], None] | None:
    """A ``progress(done, total)`` callback that reports on stderr, rate-limited.

    On a terminal it redraws one percentage line (every 0.5 s). When stderr is a pipe or a file
    (``2>&1 | tee log``) it writes a plain line at most every 10 s, so long runs still show
    progress in logs and short runs print nothing.
    """
    if not enabled:
        return None
    tty = sys.stderr.isatty()
    interval = 0.5 if tty else 10.0
    state = {"last": time.monotonic(), "shown": False}

    def report(done: int, total: int) -> None:
        now = time.monotonic()
        finished = done >= total
        if not finished and now - state["last"] < interval:
            return
        if finished and not state["shown"] and not tty:
            return
        state["last"] = now
        state["shown"] = True
        pct = 100.0 * done / max(total, 1)
        if tty:
            end = "\n" if finished else ""
            print(f"\r{label}: {pct:5.1f}%", end=end, file=sys.stderr, flush=True)
        else:
            print(f"{label}: {pct:5.1f}% ({done:,} of {total:,})", file=sys.stderr, flush=True)

    return report


def add_param_argument(p: Any) -> None:
    """``--param NAME=VALUE`` (repeatable): a text mechanism's own parameter (``python -m dpcore list``)."""
    p.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a mechanism parameter, e.g. lam=0.3 (mahalanobis), t=0.7 (vickrey-*), beta=0.01 (tem); "
        "repeatable; `list` shows each mechanism's parameters",
    )


def add_full_vocabulary_argument(p: Any) -> None:
    """``--full-vocabulary``: keep the offensive words the default vocabulary leaves out
    (:mod:`dpcore.text.offensive`)."""
    p.add_argument("--full-vocabulary", action="store_true", help=FULL_VOCABULARY_HELP)


def vocabulary_line(vocab: Any) -> str:
    """The one line a human summary gives about the vocabulary: ``vocabulary: <its label>``.

    ``vocab`` is a :class:`~dpcore.text.vocab.Vocabulary` (its ``label``) or a result recording
    one (its ``vocabulary``).
    """
    label = getattr(vocab, "label", None) or getattr(vocab, "vocabulary", None)
    return f"vocabulary: {label or 'not recorded'}"


def mechanism_params(mechanism: str, args: Any) -> dict[str, float]:
    """The mechanism parameters given on the command line (``--p``/``--w`` and ``--param``),
    checked against the mechanism's own parameters (one line naming the accepted ones)."""
    from dpcore.text.mechanisms import mechanism_parameters
    from dpcore.validation import DPCoreError, check_finite_float

    accepted = mechanism_parameters(mechanism)
    given: dict[str, object] = {}
    for name in ("p", "w"):
        if getattr(args, name, None) is not None:
            given[name] = getattr(args, name)
    for item in getattr(args, "param", None) or []:
        name, sep, value = str(item).partition("=")
        name = name.strip()
        if not sep or not name:
            raise DPCoreError(f"--param takes NAME=VALUE, got {item!r}")
        given[name] = value
    unknown = [k for k in given if k not in accepted]
    if unknown:
        has = ", ".join(accepted) if accepted else "none"
        flags = ", ".join(f"--{k}" if k in ("p", "w") else k for k in unknown)
        from dpcore.text import TEXT_MECHANISMS

        verb = "does" if len(unknown) == 1 else "do"
        owners = {k: [n for n in TEXT_MECHANISMS.names() if k in mechanism_parameters(n)] for k in unknown}
        where = "; ".join(f"{k} is a parameter of {', '.join(v)}" for k, v in owners.items() if v)
        raise DPCoreError(
            f"{flags} {verb} not apply to {mechanism} (its parameters: {has}{'; ' + where if where else ''})"
        )
    from dpcore.parameters import check_parameter
    from dpcore.text.parameters import mechanism_parameter_specs

    specs = {sp.name: sp for sp in mechanism_parameter_specs(mechanism)}
    out: dict[str, float] = {}
    for k, v in given.items():
        out[k] = check_parameter(specs[k], v) if k in specs else check_finite_float(v, name=k)
    return out
