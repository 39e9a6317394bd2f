"""Axis helpers shared by the figures.

Log axes label the decades only ("0.1, 1, 10"): Plotly's default labels minor log ticks with their
leading digit ("9 10 2 3"), unreadable on a projector. Rates read as percentages ("0.1%, 1%, 10%"),
never in exponent notation ("1e-06"). Fonts are large enough to read there.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

__all__ = ["FONT", "decade_ticks", "log_axis", "percent_label"]

#: Base font of every figure (px): readable on a projector.
FONT = {"size": 15}


def _label(v: float) -> str:
    return f"{v:,.0f}" if v >= 1 else f"{v:g}"


def percent_label(rate: float) -> str:
    """A rate in [0, 1] as a tick label, to two significant digits: ``0.001`` → ``"0.1%"``,
    ``1e-06`` → ``"0.0001%"``, ``0.0025`` → ``"0.25%"``, ``1`` → ``"100%"`` (plain decimals, never
    exponent notation).

    Parameters
    ----------
    rate
        The rate (a fraction, not a percentage).
    """
    pct = 100.0 * float(rate)
    if pct == 0.0 or not math.isfinite(pct):
        return f"{pct:g}%"
    digits = max(0, 1 - math.floor(math.log10(abs(pct)) + 1e-9))  # two significant digits
    text = f"{pct:,.{digits}f}"
    return (text.rstrip("0").rstrip(".") if "." in text else text) + "%"


def decade_ticks(values: Iterable[float]) -> list[float]:
    """Powers of ten covering the finite positive ``values`` (one below and above if needed).

    Parameters
    ----------
    values
        Data on a log axis; non-finite and non-positive values are ignored.

    Returns
    -------
    list of float
        Increasing, distinct powers of ten from ``10**floor(log10(min))`` to
        ``10**ceil(log10(max))``; ``[1.0]`` when there is no usable value.
    """
    vals = [float(v) for v in values if v is not None and math.isfinite(float(v)) and float(v) > 0]
    if not vals:
        return [1.0]
    lo, hi = math.floor(math.log10(min(vals)) + 1e-9), math.ceil(math.log10(max(vals)) - 1e-9)
    return [10.0**k for k in range(lo, max(hi, lo) + 1)]


def log_axis(
    title: str, values: Iterable[float] | None = None, *, percent: bool = False, **extra: Any
) -> dict[str, Any]:
    """A log axis whose only labels are decades (explicit when ``values`` is given).

    Parameters
    ----------
    title
        Axis title.
    values
        The data drawn on this axis: the ticks are :func:`decade_ticks` of it. Without it, Plotly
        places a tick at every decade (``dtick=1``).
    percent
        The values are rates: label the decades as percentages (:func:`percent_label`). Needs
        ``values``.
    **extra
        More axis properties (``overlaying``, ``side``, ``range``…).
    """
    axis: dict[str, Any] = {"title": title, "type": "log"}
    if values is None:
        if percent:
            raise ValueError("percent labels need the axis values")
        axis.update(dtick=1, tickformat=",~g")
    else:
        ticks = decade_ticks(values)
        axis.update(tickvals=ticks, ticktext=[percent_label(t) if percent else _label(t) for t in ticks])
    axis.update(extra)
    return axis
