"""Limits and choices that the CLI's parsers show, kept free of heavy imports.

``python -m dpcore --help`` builds every command's parser; importing a mechanism or the audit
(scipy) just to print a number in a help line made it take seconds. The modules that enforce
these limits import them from here, so each value has one home.
"""

from __future__ import annotations

__all__ = [
    "AUDIT_MAX_TRIALS",
    "AUDIT_METHODS",
    "AUDIT_PAGE_MAX_DRAWS",
    "AUDIT_PAGE_WORKERS",
    "MAX_DIM",
    "UTILITY_CLASSIFIERS",
    "UTILITY_N_TEST",
    "UTILITY_N_TRAIN",
]

#: Largest dimension any vector mechanism, the audit and the sensitivity tools accept.
MAX_DIM = 4096

#: Audit methods: closed form from declared probabilities, or Monte-Carlo.
AUDIT_METHODS = ("exact", "mc")

#: Largest number of trials per input accepted by the audit's API and the CLI.
AUDIT_MAX_TRIALS = 10**9

#: The dashboard's audit page: noise values per request drawn through real samplers. Monte-Carlo
#: runs for the dimensions that fit (:func:`dpcore.audit.runner.plan_monte_carlo`); exact values
#: are always shown.
AUDIT_PAGE_MAX_DRAWS = 900_000_000
#: Threads per Monte-Carlo cell on the dashboard (never more than the machine's cores).
AUDIT_PAGE_WORKERS = 2

#: Utility classifiers (:mod:`dpcore.attack.utility`) and the default split sizes.
UTILITY_CLASSIFIERS = ("tfidf", "minilm")
UTILITY_N_TRAIN = 4_000
UTILITY_N_TEST = 1_000
