"""Axis helpers shared by the figures.

Log axes label the decades only ("0.1, 1, 10"): Plotly's default labels minor log ticks with their
leading digit ("9 10 2 3"), unreadable on a projector. Rates read as percentages ("0.1%, 1%, 10%"),
never in exponent notation ("1e-06"). Fonts are large enough to read there.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

from dpcore import formatting

__all__ = ["FONT", "decade_ticks", "log_axis"]

#: Base font of every figure (px): readable on a projector.
FONT = {"size": 15}


def _label(v: float) -> str:
    return f"{v:,.0f}" if v >= 1 else f"{v:g}"


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
        The values are rates: label the decades as percentages (:func:`dpcore.formatting.percent`). Needs
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
        axis.update(tickvals=ticks, ticktext=[formatting.percent(t) if percent else _label(t) for t in ticks])
    axis.update(extra)
    return axis
