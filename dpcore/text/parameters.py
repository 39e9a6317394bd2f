"""The parameter schema of text mechanisms: name, default, range and help, in one place.

Every registered mechanism class declares ``PARAMETERS``, a tuple of :class:`ParameterSpec`, for
its keyword parameters beyond ``vocab`` and ``epsilon``. The dashboard builds its widgets and URL
parameters from it, the CLI prints it (``python -m dpcore list``) and checks ``--param NAME=VALUE`` against
it, and ``tests/test_text_parameters.py`` checks it against each constructor (same names, same
defaults, bounds accepted, values outside refused). Adding a mechanism with parameters therefore
needs no change to a page or a command.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from dpcore.validation import DPCoreError

__all__ = ["ParameterSpec", "check_parameter", "mechanism_parameter_specs"]


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
        ``"float"`` or ``"int"``.
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
    default: float | int
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
        lo = "(" if self.open_low else "["
        hi = ")" if self.open_high else "]"
        rng = f"{lo}{self.low:g}, {self.high:g}{hi}"
        return f"{self.name} ∈ {rng} ({self.kind}), default {self.default:g}: {self.help}"


def check_parameter(spec: ParameterSpec, value: Any) -> float | int:
    """``value`` converted to the spec's kind and checked against its range (clear errors)."""
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


def mechanism_parameter_specs(name: str) -> tuple[ParameterSpec, ...]:
    """The :class:`ParameterSpec` tuple of a registered text mechanism (empty when it has none)."""
    from dpcore.text.registry import TEXT_MECHANISMS

    return tuple(getattr(TEXT_MECHANISMS.get(name).factory, "PARAMETERS", ()))
