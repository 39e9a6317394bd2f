"""Audit any word-level text sanitizer as a black box: empirical privacy loss per pair of words.

- :mod:`dpcore.textaudit.interface` — the :class:`TextSanitizer` protocol (name, epsilon,
  guarantee, ``sample(words, rng)``) and :class:`DpcoreSanitizer` for dpcore's mechanisms.
- :mod:`dpcore.pairtest.estimator` — event selection and Clopper–Pearson bounds per pair.
- :mod:`dpcore.textaudit.runner` — :func:`audit_text`: a plan (:mod:`~dpcore.textaudit.plan`),
  an α budget (:mod:`~dpcore.pairtest.budget`) and the stages, one module each (contract,
  screen, pooled, declaration, confirm, power); docs/development.md draws them.
- :mod:`dpcore.textaudit.reference` — k-ary randomized response over a word list.
- :mod:`dpcore.textaudit.loaders` — names to sanitizers: registered, third-party, user code.
"""

from dpcore.textaudit.interface import DpcoreSanitizer, ExactTextSanitizer, TextSanitizer, check_sanitizer
from dpcore.textaudit.reference import KaryRandomizedResponse
from dpcore.textaudit.result import PairResult, TextAuditResult
from dpcore.textaudit.runner import audit_text, max_detectable_loss

__all__ = [
    "DpcoreSanitizer",
    "ExactTextSanitizer",
    "KaryRandomizedResponse",
    "PairResult",
    "TextAuditResult",
    "TextSanitizer",
    "audit_text",
    "check_sanitizer",
    "max_detectable_loss",
]
