"""Safe output files: never overwrite an input, keep the mode, leave nothing half-written.

Every command that writes a file goes through :func:`check_output_path` *before* any work and
:func:`write_atomic` to write:

- an output that resolves to one of the command's inputs (the same path, a symlink to it, or a
  hard link: the same device and inode) is refused, so raw text is never replaced by its
  sanitized version;
- a name longer than the file system allows (255 bytes a component, ``PATH_MAX`` in all) is one
  clear line, not an ``OSError`` traceback;
- the text goes to a temporary file in the same folder, is flushed to disk and renamed over the
  target (``os.replace``), so a reader sees the old file or the new one, never half of it;
- an existing output keeps its permission bits; a new one gets ``0o666`` less the umask, like
  any file the user creates (``mkstemp`` alone would make it ``0o600``);
- on an exception, Ctrl-C or SIGTERM during the write the temporary file is removed.
"""

from __future__ import annotations

import contextlib
import os
import signal
import stat
import tempfile
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path

from dpcore.validation import DPCoreError

__all__ = [
    "Terminated",
    "check_output_path",
    "check_path_length",
    "same_file",
    "terminate_as_exception",
    "write_atomic",
]

#: Longest file-name component and path accepted (Linux: NAME_MAX = 255 bytes, PATH_MAX = 4096).
NAME_MAX = 255
PATH_MAX = 4096


class Terminated(BaseException):
    """SIGTERM arrived while a file was being written (raised so clean-up runs)."""


def check_path_length(path: str | os.PathLike[str], *, what: str) -> None:
    """Refuse a path with a component over :data:`NAME_MAX` bytes or a total over :data:`PATH_MAX`."""
    raw = os.fsencode(os.fspath(path))
    if len(raw) >= PATH_MAX:
        raise DPCoreError(f"{what} path is {len(raw):,} bytes long; the limit is {PATH_MAX - 1:,}")
    for part in raw.split(b"/"):
        if len(part) > NAME_MAX:
            shown = part[:40].decode("utf-8", "replace")
            raise DPCoreError(
                f"{what} name {shown!r}… is {len(part):,} bytes long; the file system allows {NAME_MAX}"
            )


def same_file(a: str | os.PathLike[str], b: str | os.PathLike[str]) -> bool:
    """True when ``a`` and ``b`` are one file: equal real paths, or the same device and inode."""
    try:
        if os.path.realpath(a) == os.path.realpath(b):
            return True
        sa, sb = os.stat(a), os.stat(b)
    except (OSError, ValueError):
        return False
    return (sa.st_dev, sa.st_ino) == (sb.st_dev, sb.st_ino)


def check_output_path(
    path: str | os.PathLike[str],
    *,
    inputs: Sequence[str | os.PathLike[str] | None] = (),
    what: str = "output",
) -> Path:
    """Refuse an output that cannot become a regular file or that is one of ``inputs``.

    Call it before any work, so a mistake costs nothing.
    """
    check_path_length(path, what=what)
    target = Path(path)
    for src in inputs:
        if src is not None and same_file(target, src):
            raise DPCoreError(
                f"{what} {str(target)!r} is the input file {str(src)!r} (same file, link or path); "
                "choose another output so the input is not overwritten"
            )
    folder = target.parent if str(target.parent) else Path(".")
    try:
        if not folder.is_dir():
            raise DPCoreError(f"{what} directory {str(folder)!r} does not exist")
        if target.is_dir():
            raise DPCoreError(f"{what} {str(target)!r} is a directory; give a file name")
        if target.exists() and not target.is_file():
            raise DPCoreError(f"{what} {str(target)!r} exists and is not a regular file")
    except OSError as exc:
        raise DPCoreError(f"cannot use {what} {str(target)!r}: {exc.strerror or exc}") from None
    return target


@contextlib.contextmanager
def terminate_as_exception() -> Iterator[None]:
    """While active (main thread only), SIGTERM raises :class:`Terminated` instead of killing."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum: int, frame: object) -> None:
        raise Terminated()

    try:
        previous = signal.signal(signal.SIGTERM, handler)
    except ValueError:  # not allowed here (embedded interpreter)
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _current_umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_atomic(
    path: str | os.PathLike[str], text: str, *, inputs: Sequence[str | os.PathLike[str] | None] = ()
) -> None:
    """Write ``text`` (UTF-8) to ``path`` atomically; see the module docstring for the guarantees."""
    target = check_output_path(path, inputs=inputs)
    folder = target.parent if str(target.parent) else Path(".")
    try:
        mode = stat.S_IMODE(os.stat(target).st_mode)
    except FileNotFoundError:
        mode = 0o666 & ~_current_umask()
    tmp: str | None = None
    with terminate_as_exception():
        try:
            fd, tmp = tempfile.mkstemp(dir=folder, prefix=f".{target.name[:200]}.", suffix=".tmp")
            with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
                fh.write(text)
                fh.flush()
                os.fchmod(fh.fileno(), mode)
                os.fsync(fh.fileno())
            os.replace(tmp, target)
            tmp = None
        except OSError as exc:
            raise DPCoreError(f"cannot write {str(target)!r}: {exc.strerror or exc}") from None
        finally:
            if tmp is not None:
                Path(tmp).unlink(missing_ok=True)
