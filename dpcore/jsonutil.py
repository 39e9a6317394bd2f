"""JSON output that never contains invalid tokens: ±∞ become the strings ``"inf"``/``"-inf"``."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any

import numpy as np

__all__ = ["dumps", "to_jsonable"]


def to_jsonable(obj: Any) -> Any:
    """Recursively convert numpy scalars/arrays and non-finite floats into JSON-safe values."""
    if isinstance(obj, Mapping):
        return {str(k): to_jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [to_jsonable(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return [to_jsonable(v) for v in obj.tolist()]
    if isinstance(obj, (bool, np.bool_)):
        return bool(obj)
    if isinstance(obj, (int, np.integer)):
        return int(obj)
    if isinstance(obj, (float, np.floating)):
        x = float(obj)
        if math.isnan(x):
            return "nan"
        if math.isinf(x):
            return "inf" if x > 0 else "-inf"
        return x
    return obj


def dumps(obj: Any, *, indent: int | None = None) -> str:
    """``json.dumps`` of :func:`to_jsonable` ``(obj)``, strict (no NaN/Infinity tokens)."""
    return json.dumps(to_jsonable(obj), indent=indent, allow_nan=False, ensure_ascii=False)
