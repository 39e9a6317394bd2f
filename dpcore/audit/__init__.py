"""Habernal's (2022) empirical sanity check, exact and Monte-Carlo.

>>> from dpcore.audit import audit
>>> r = audit("adept", dim=128, epsilon=1.0, method="exact")
>>> round(r.empirical_epsilon, 2), r.verdict
(13.74, 'violates')
"""

from dpcore.audit.result import VERDICT_TEXT, AuditResult
from dpcore.audit.runner import MAX_TRIALS, METHODS, audit, audit_grid, build_mechanism

__all__ = ["MAX_TRIALS", "METHODS", "VERDICT_TEXT", "AuditResult", "audit", "audit_grid", "build_mechanism"]
