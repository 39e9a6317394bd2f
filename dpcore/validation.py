"""Small validators that turn bad input into one clear :class:`DPCoreError`.

Every public function of dpcore validates its arguments with these helpers, so the CLI, the API
and the dashboard report the same message for the same mistake.
"""

from __future__ import annotations

import math
import numbers
import os
import re
from decimal import Decimal, InvalidOperation

__all__ = [
    "MAX_EPSILON",
    "MIN_EPSILON",
    "DPCoreError",
    "check_epsilon",
    "check_finite_float",
    "check_int",
    "check_probability",
    "env_whole_number",
    "parse_int_list",
]

#: Smallest ε any dpcore function accepts (see :func:`check_epsilon`).
MIN_EPSILON = 1e-6
#: Largest ε any dpcore function accepts. Larger values are numerically meaningless
#: (e^ε overflows at 709) and usually a typo.
MAX_EPSILON = 1000.0


class DPCoreError(ValueError):
    """Bad input to dpcore. The message is meant to be shown to a user as it is."""


def _as_float(value: object, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        if isinstance(value, str):
            try:
                return float(value.strip())
            except ValueError:
                raise DPCoreError(f"{name} must be a number, got {value!r}") from None
        raise DPCoreError(f"{name} must be a number, got {type(value).__name__}")
    return float(value)


def check_finite_float(
    value: object,
    *,
    name: str,
    min_value: float | None = None,
    max_value: float | None = None,
    min_inclusive: bool = True,
) -> float:
    """Return ``value`` as a finite float within ``[min_value, max_value]``.

    Raises
    ------
    DPCoreError
        If the value is not a number, is NaN or infinite, or lies outside the range.
    """
    x = _as_float(value, name)
    if math.isnan(x):
        raise DPCoreError(f"{name} must be a number, got NaN")
    if math.isinf(x):
        raise DPCoreError(f"{name} must be finite, got {x}")
    if min_value is not None:
        if min_inclusive and x < min_value:
            raise DPCoreError(f"{name} must be ≥ {min_value:g}, got {x:g}")
        if not min_inclusive and x <= min_value:
            raise DPCoreError(f"{name} must be > {min_value:g}, got {x:g}")
    if max_value is not None and x > max_value:
        raise DPCoreError(f"{name} must be ≤ {max_value:g}, got {x:g}")
    return x


def check_epsilon(value: object, *, name: str = "epsilon", max_value: float = MAX_EPSILON) -> float:
    """Return a valid privacy parameter ε: finite, ≥ :data:`MIN_EPSILON` and ≤ ``max_value``.

    The floor is documented, not arbitrary: below it noise scales exceed 10⁶ per unit of
    sensitivity, samplers built on ``log`` of tiny numbers (DPText's) hit the float64 floor, and a
    noisy nearest-neighbour search (Feyisetan et al.) overflows at subnormal ε, which would show
    nonsense metrics. For ε = 0 use the ``random`` baseline.
    """
    x = check_finite_float(value, name=name, min_value=0.0, max_value=max_value, min_inclusive=False)
    if x < MIN_EPSILON:
        raise DPCoreError(
            f"{name} must be ≥ {MIN_EPSILON:g} (dpcore's floor: smaller values lose float64 precision in "
            f"some samplers; for ε = 0 use the random baseline), got {x:g}"
        )
    return x


def check_probability(value: object, *, name: str, open_low: bool = False, open_high: bool = False) -> float:
    """Return a probability in [0, 1] (optionally excluding an end point)."""
    x = check_finite_float(value, name=name)
    low_ok = x > 0.0 if open_low else x >= 0.0
    high_ok = x < 1.0 if open_high else x <= 1.0
    if not (low_ok and high_ok):
        lo = "(" if open_low else "["
        hi = ")" if open_high else "]"
        raise DPCoreError(f"{name} must lie in {lo}0, 1{hi}, got {x:g}")
    return x


def check_int(value: object, *, name: str, min_value: int, max_value: int) -> int:
    """Return ``value`` as an int within ``[min_value, max_value]``.

    Floats are accepted only when they are whole numbers (``1e6`` is fine, ``2.5`` is not). Text
    is parsed as an integer exactly, never through a float (``"12345678901234567"`` keeps its
    last digit; ``"9223372036854775807"`` = 2⁶³ − 1 is accepted).
    """
    if isinstance(value, bool):
        raise DPCoreError(f"{name} must be a whole number, got {value!r}")
    if isinstance(value, numbers.Integral):
        n = int(value)
    elif isinstance(value, str):
        n = _parse_int_text(value, name)
    else:
        x = _as_float(value, name)
        if not math.isfinite(x) or x != math.floor(x):
            raise DPCoreError(f"{name} must be a whole number, got {value!r}")
        n = int(x)
    if n < min_value or n > max_value:
        raise DPCoreError(f"{name} must be between {min_value:,} and {max_value:,}, got {n:,}")
    return n


def env_whole_number(name: str, *, min_value: int, max_value: int) -> int | None:
    """The environment variable ``name`` as a whole number in ``[min_value, max_value]``, or None
    when it is unset or blank (surrounding spaces are ignored).

    Raises
    ------
    DPCoreError
        ``"NAME must be a whole number from MIN to MAX, not 'VALUE'"`` for anything else.
    """
    raw = os.environ.get(name, "").strip()
    if not raw:
        return None
    try:
        n = int(raw)
    except ValueError:
        n = min_value - 1
    if not min_value <= n <= max_value:
        raise DPCoreError(f"{name} must be a whole number from {min_value} to {max_value}, not {raw!r}")
    return n


def _parse_int_text(text: str, name: str) -> int:
    """An integer from text, exactly: ``"9223372036854775807"`` stays that integer (never a float).

    Exponent and decimal forms that denote whole numbers (``"1e6"``, ``"2.0"``) are accepted,
    parsed with :class:`decimal.Decimal`, so no digit is lost to binary rounding.
    """
    t = text.strip().replace("_", "")
    if re.fullmatch(r"[+-]?\d+", t):
        if len(t) > 40:
            raise DPCoreError(f"{name} must be a whole number of at most 40 digits, got {len(t)} digits")
        return int(t)
    try:
        d = Decimal(t)
    except InvalidOperation:
        raise DPCoreError(f"{name} must be a whole number, got {text[:40]!r}") from None
    if not d.is_finite():
        raise DPCoreError(f"{name} must be a whole number, got {text[:40]!r}")
    if d.adjusted() > 40:
        raise DPCoreError(f"{name} must be a whole number of at most 40 digits, got {text[:40]!r}")
    if d != d.to_integral_value():
        raise DPCoreError(f"{name} must be a whole number, got {text[:40]!r}")
    return int(d)


def parse_int_list(text: str, *, name: str, min_value: int, max_value: int, max_items: int = 64) -> list[int]:
    """Parse ``"1,2,8,32"`` into a list of validated ints (order kept, duplicates removed)."""
    parts = [p.strip() for p in str(text).split(",") if p.strip()]
    if not parts:
        raise DPCoreError(f"{name} must be a comma-separated list of whole numbers, got {text!r}")
    if len(parts) > max_items:
        raise DPCoreError(f"{name} may hold at most {max_items} values, got {len(parts)}")
    out: list[int] = []
    for p in parts:
        v = check_int(p, name=name, min_value=min_value, max_value=max_value)
        if v not in out:
            out.append(v)
    return out
