"""Attacks on sanitized text (SanText, Yue et al. 2021, §5.3).

The package is also callable: ``dpcore.attack(...)`` is :func:`dpcore.api.attack` (defense rates
of sanitized sentences at each ε).

>>> import dpcore
>>> res = dpcore.attack(["the movie was great"], mechanism="santext", epsilons=[1.0])
>>> [r["attack"] for r in res["rows"]]
['bayes-unigram']
"""

import sys as _sys
import types as _types
from typing import Any as _Any


class _CallableModule(_types.ModuleType):
    """``dpcore.attack(...)`` runs :func:`dpcore.api.attack` (the notebook entry point)."""

    def __call__(self, *args: _Any, **kwargs: _Any) -> dict[str, _Any]:
        from dpcore.api import attack

        return attack(*args, **kwargs)


_sys.modules[__name__].__class__ = _CallableModule
