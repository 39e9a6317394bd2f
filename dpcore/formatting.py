"""How dpcore writes a percentage and an ε: one home for every sentence, table, label and tick.

Two kinds of number are written as percentages, and each has one rule:

A rate that was measured or derived (a TPR, a defense rate, a share of draws, a claim's ceiling)
    :func:`percent`: two significant digits in plain decimals (``0.25%``, ``9.4%``), whole
    percents from 10% (``12%``, ``94%``), never exponent notation (``0.0001%``, not ``1e-04%``).
    A rate is never written as a round figure it is not: a positive rate never becomes ``0%``
    and a rate below 1 never becomes ``100%`` (digits are added until it does not:
    ``99.7%``, ``99.97%``); within 10⁻⁹ of 1, the rounding error of a computed probability, a
    rate is ``100%``. A missing rate (None, NaN) is ``—``.
A level someone set (a confidence, a power, a false-alarm level)
    :func:`percent` with ``exact=True``: as given, to six significant digits (``95%``,
    ``97.5%``, ``99.9%``): a level is never rounded.

:func:`percent_value` gives the number a table column headed "(%)" holds (one decimal).

An ε (:func:`epsilon_text`) is written as given when someone set it (``1``, ``0.5``, ``10``), or to a
stated number of significant digits when it was computed (ADePT's true ε, a mechanism's floor,
k·ε), and ``∞`` when it is infinite.

A phrase becomes a sentence (:func:`sentence`) with a capital first letter only where it starts
with a lower-case Latin letter of an ordinary word: ``ε = 0.25 …`` and ``dpcore …`` stay as
written (a Greek ε capitalised is a different letter).

``tests/test_formatting.py`` holds the rules, and keeps every other module from formatting a
percentage or an ε itself.
"""

from __future__ import annotations

import math
from typing import Any

__all__ = ["MISSING", "as_number", "epsilon_text", "percent", "percent_value", "sentence"]

#: Words a sentence may start with as written (names written in lower case).
_LOWER_CASE_NAMES = ("dpcore",)

#: What a missing number is written as.
MISSING = "—"
#: The most decimals :func:`percent` adds to keep a rate off 0% and 100%.
_MAX_DECIMALS = 12
#: How close to 1 a rate is 1, the rounding error of a computed probability (``100%``).
_ONE_TOLERANCE = 1e-9


def as_number(v: Any) -> float:
    """A number of a record as a float: None (and a bool) is NaN, the strings ``"inf"``, ``"-inf"``
    and ``"nan"`` (how JSON records carry them) are those floats, anything unreadable is NaN."""
    if v is None or isinstance(v, bool):
        return math.nan
    try:
        return float(v)
    except (TypeError, ValueError):
        return math.nan


def percent(rate: Any, *, exact: bool = False) -> str:
    """A rate in [0, 1] as a percentage.

    Parameters
    ----------
    rate
        The rate (a fraction, not a percentage); None or NaN for a missing one.
    exact
        A level someone set (a confidence, a power): written as given (``:g``), never rounded
        to two digits.

    Returns
    -------
    str
        ``"9.4%"``, ``"100%"``, ``"0.0001%"``, ``"99.7%"``; ``"—"`` for a missing rate.

    Examples
    --------
    >>> [percent(v) for v in (1e-6, 0.0025, 0.094, 0.5, 0.997, 1.0)]
    ['0.0001%', '0.25%', '9.4%', '50%', '99.7%', '100%']
    >>> percent(0.975, exact=True)
    '97.5%'
    """
    p = as_number(rate)
    if math.isnan(p):
        return MISSING
    pct = 100.0 * p
    if exact or pct == 0.0 or not math.isfinite(pct):
        return f"{pct:g}%"
    if abs(1.0 - p) <= _ONE_TOLERANCE:  # 1 computed in floating point (an exact TPR of 1 − 2e-12)
        return "100%"
    digits = max(0, 1 - math.floor(math.log10(abs(pct)) + 1e-9))  # two significant digits
    while True:
        text = f"{pct:,.{digits}f}"
        shown = float(text.replace(",", ""))
        rounded_off = (shown == 0.0) or (shown >= 100.0 > pct)
        if not rounded_off or digits >= _MAX_DECIMALS:
            break
        digits += 1
    return (text.rstrip("0").rstrip(".") if "." in text else text) + "%"


def percent_value(rate: Any, *, decimals: int = 1) -> float | None:
    """A rate as the number in a column headed "(%)": ``0.9375`` → ``93.8``; None when missing."""
    p = as_number(rate)
    return None if math.isnan(p) else round(100.0 * p, decimals)


def epsilon_text(value: Any, *, digits: int | None = None) -> str:
    """An ε (or ε₀, or a privacy loss in ε's units) as dpcore writes it.

    Parameters
    ----------
    value
        The ε; None or NaN for a missing one.
    digits
        None: a value someone set, as given (``:g``: ``1``, ``0.5``, ``2.5e-05``). A number: a
        computed value, to that many significant digits (``epsilon_text(2.0 * 128 ** 0.5, digits=4)``
        → ``"22.63"``).

    Returns
    -------
    str
        ``"1"``, ``"22.63"``, ``"∞"``; ``"—"`` for a missing ε.
    """
    e = as_number(value)
    if math.isnan(e):
        return MISSING
    if math.isinf(e):
        return "∞" if e > 0 else "−∞"
    return f"{e:g}" if digits is None else f"{e:.{int(digits)}g}"


def sentence(text: Any, *, stop: bool = True) -> str:
    """A phrase as a sentence: a capital first letter where it starts with a lower-case Latin
    letter (not a Greek letter such as ε, not :data:`_LOWER_CASE_NAMES`), and, with ``stop``, a
    full stop unless it ends with one.

    Examples
    --------
    >>> sentence("violates its claim")
    'Violates its claim.'
    >>> sentence("ε = 0.25 per token", stop=False)
    'ε = 0.25 per token'
    >>> sentence("dpcore found no violation.")
    'dpcore found no violation.'
    """
    text = str(text)
    first = text[:1]
    if first.isascii() and first.islower() and not text.startswith(_LOWER_CASE_NAMES):
        text = first.upper() + text[1:]
    return text + ("." if stop and not text.endswith(".") else "")
