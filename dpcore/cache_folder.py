"""dpcore's cache folder: where installed environments, converted models and vectors are kept."""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["cache_dir"]


def cache_dir() -> Path:
    """``$DPCORE_CACHE_DIR``, else ``$XDG_CACHE_HOME/dpcore``, else ``~/.cache/dpcore``."""
    own = os.environ.get("DPCORE_CACHE_DIR")
    if own:
        return Path(own).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    if xdg and os.path.isabs(os.path.expanduser(xdg)):
        return Path(xdg).expanduser() / "dpcore"
    return Path.home() / ".cache" / "dpcore"
