"""Loading a user's own factory: the one way both audits run user code (CLI only).

The word audit's sanitizer loader (:mod:`dpcore.textaudit.loaders`) and the rewriter registry
(:mod:`dpcore.rewriter.registry`) both accept ``path/to/file.py:factory`` and
``package.module:factory`` when the CLI allows user code; both load it here. The dashboard never
allows it: it cannot load or run code.
"""

from __future__ import annotations

import importlib
import importlib.util
import re
import sys
from pathlib import Path
from typing import Any

from dpcore.validation import DPCoreError

__all__ = ["load_factory"]

_MODULE_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$")
_IDENT_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def load_factory(spec: str) -> Any:
    """The callable ``factory`` of ``path/to/file.py:factory`` or ``package.module:factory``.

    A file is imported as a module named ``dpcore_user_sanitizer_<hash of its path>`` (the text
    audit's Ray engine pickles such a module's objects by value). Every failure (no such file,
    a bad name, an import that raises, no such callable) is one :class:`DPCoreError`.
    """
    target, _, attr = spec.rpartition(":")
    if not _IDENT_RE.match(attr):
        raise DPCoreError(f"{spec!r}: the factory after ':' must be a Python name")
    if target.endswith(".py"):
        path = Path(target).expanduser()
        if not path.is_file():
            raise DPCoreError(f"no such Python file: {target!r}")
        mod_name = f"dpcore_user_sanitizer_{abs(hash(str(path.resolve())))}"
        mspec = importlib.util.spec_from_file_location(mod_name, path)
        if mspec is None or mspec.loader is None:
            raise DPCoreError(f"cannot load {target!r} as a Python module")
        module = importlib.util.module_from_spec(mspec)
        sys.modules[mod_name] = module
        try:
            mspec.loader.exec_module(module)
        except Exception as exc:
            sys.modules.pop(mod_name, None)
            raise DPCoreError(f"importing {target!r} failed: {type(exc).__name__}: {exc}") from None
    else:
        if not _MODULE_RE.match(target):
            raise DPCoreError(f"{spec!r} is neither path/to/file.py:factory nor package.module:factory")
        try:
            module = importlib.import_module(target)
        except Exception as exc:
            raise DPCoreError(f"importing {target!r} failed: {type(exc).__name__}: {exc}") from None
    factory = getattr(module, attr, None)
    if factory is None or not callable(factory):
        raise DPCoreError(f"{target!r} has no callable {attr!r}")
    return factory
