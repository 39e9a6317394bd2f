"""The parameter schema of text mechanisms and rewriters: name, default, range and help, in one place.

This module sits on the floor (it imports nothing of dpcore but the validation errors), so a
rewriter's module can declare its options without loading the text mechanisms;
:func:`dpcore.text.parameters.mechanism_parameter_specs` and
:func:`dpcore.rewriter.registry.rewriter_parameter_specs` read each registry's schemas.

Every registered mechanism class declares ``PARAMETERS``, a tuple of :class:`ParameterSpec`, for
its keyword parameters beyond ``vocab`` and ``epsilon``; every registered rewriter does the same
for its options beyond ``epsilon`` (:func:`dpcore.rewriter.registry.rewriter_parameter_specs`).
The dashboard builds its widgets and URL parameters from it; the CLI prints it
(``python -m dpcore list``) and checks ``--param NAME=VALUE`` against it, for mechanisms and
rewriters alike; and ``tests/test_text_parameters.py`` checks it against each constructor (same
names, same defaults, bounds accepted, values outside refused). Adding a mechanism or a rewriter
with parameters therefore needs no change to a page or a command.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpcore.validation import DPCoreError

__all__ = ["ParameterSpec", "check_parameter"]


@dataclass(frozen=True)
class ParameterSpec:
    """One keyword parameter of a text mechanism.

    Attributes
    ----------
    name
        The constructor keyword (also the URL key and ``--param`` name).
    default
        The constructor's default.
    kind
        ``"float"``, ``"int"`` or ``"bool"`` (a switch: ``low`` and ``high`` are 0 and 1).
    low, high
        The accepted range (inclusive unless ``open_low`` / ``open_high``).
    help
        One line: what it does and where it comes from (paper and section).
    ui_low, ui_high
        The range a dashboard widget offers (defaults to ``low``/``high``; narrower where the
        accepted range is unbounded, e.g. a logit clip).
    step
        Widget step.
    """

    name: str
    default: float | int | bool
    kind: str
    low: float
    high: float
    help: str
    open_low: bool = False
    open_high: bool = False
    ui_low: float | None = None
    ui_high: float | None = None
    step: float | None = None

    @property
    def widget_range(self) -> tuple[float, float]:
        lo = self.low if self.ui_low is None else self.ui_low
        hi = self.high if self.ui_high is None else self.ui_high
        return lo, hi

    def describe(self) -> str:
        """``p ∈ [0, 1], default 0.3: …`` for listings and help texts."""
        if self.kind == "bool":
            return f"{self.name} (on or off), default {'on' if self.default else 'off'}: {self.help}"
        lo = "(" if self.open_low else "["
        hi = ")" if self.open_high else "]"
        rng = f"{lo}{self.low:g}, {self.high:g}{hi}"
        return f"{self.name} ∈ {rng} ({self.kind}), default {self.default:g}: {self.help}"


#: How a switch may be written (``--param full_vocabulary=true``, a URL's ``?full_vocabulary=1``).
_SWITCH_WORDS = {"true": True, "1": True, "yes": True, "on": True, "false": False, "0": False, "no": False,
                 "off": False}  # fmt: skip


def check_parameter(spec: ParameterSpec, value: Any) -> float | int | bool:
    """``value`` converted to the spec's kind and checked against its range (clear errors)."""
    if spec.kind == "bool":
        if isinstance(value, (bool, np.bool_)):
            return bool(value)
        if isinstance(value, str) and value.strip().lower() in _SWITCH_WORDS:
            return _SWITCH_WORDS[value.strip().lower()]
        if isinstance(value, (int, np.integer)) and int(value) in (0, 1):
            return bool(value)
        raise DPCoreError(f"{spec.name} is a switch: give true or false, got {value!r}")
    if isinstance(value, (bool, np.bool_)):
        raise DPCoreError(f"{spec.name} must be a number, got {value!r}")
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise DPCoreError(f"{spec.name} must be a number, got {value!r}") from None
    if not math.isfinite(v):
        raise DPCoreError(f"{spec.name} must be finite, got {value!r}")
    if spec.kind == "int":
        if v != int(v):
            raise DPCoreError(f"{spec.name} must be a whole number, got {value!r}")
        v = int(v)
    too_low = v <= spec.low if spec.open_low else v < spec.low
    too_high = v >= spec.high if spec.open_high else v > spec.high
    if too_low or too_high:
        raise DPCoreError(f"{spec.name} = {v:g} is out of range: {spec.describe()}")
    return v
