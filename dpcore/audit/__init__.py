"""Habernal's (2022) empirical sanity check, exact and Monte-Carlo.

The package is also callable: ``dpcore.audit(...)`` is :func:`dpcore.audit.runner.audit`.

>>> from dpcore.audit import audit
>>> r = audit("adept", dim=128, epsilon=1.0, method="exact")
>>> round(r.empirical_epsilon, 2), r.verdict
(13.74, 'violates')
>>> import dpcore
>>> dpcore.audit("adept", dim=128, epsilon=1.0).verdict
'violates'
"""

import sys as _sys
import types as _types

from dpcore import flawed as _flawed  # noqa: F401  (registers the flawed reproductions the audit runs by name)
from dpcore.audit.result import VERDICT_TEXT, AuditResult
from dpcore.audit.runner import MAX_TRIALS, METHODS, audit, audit_grid, build_mechanism

__all__ = ["MAX_TRIALS", "METHODS", "VERDICT_TEXT", "AuditResult", "audit", "audit_grid", "build_mechanism"]


class _CallableModule(_types.ModuleType):
    """``dpcore.audit(...)`` runs :func:`audit` (the notebook entry point)."""

    def __call__(self, *args: object, **kwargs: object) -> AuditResult:
        return audit(*args, **kwargs)  # type: ignore[arg-type]


_sys.modules[__name__].__class__ = _CallableModule
