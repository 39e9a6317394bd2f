"""What a text audit's trade-off pairs say to an observer of one sanitized word, as records.

:mod:`dpcore.textaudit.tradeoffs` builds one :class:`~dpcore.tradeoff.TradeoffPair` per tested
pair (stage 2's events as boxes, the claim's curve, an exact curve where one was declared). This
module turns them into what the result reports: ``tpr_at_fpr`` (the verdict's worst pair's TPR at
1% and 5% FPR, measured and exact), ``tradeoff`` (the first :data:`JSON_PAIRS` pairs) and the
CLI's one observer line. It reads only :mod:`dpcore.tradeoff`, so the result
(:meth:`dpcore.textaudit.result.TextAuditResult.observer`) reports without importing the stage.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from dpcore.formatting import percent
from dpcore.tradeoff import DEFINITIONS, FPR_LEVELS, TradeoffPair

__all__ = ["CURVE_POINTS", "JSON_PAIRS", "UNIT", "observer_record", "text_line", "tpr_record"]

#: Pairs whose trade-off record goes into the JSON (the strongest evidence first).
JSON_PAIRS = 10
#: Points of each pair's claim curve in the JSON (it is closed-form: ``definitions``).
CURVE_POINTS = 21
#: What the observer sees.
UNIT = "one sanitized word"


def tpr_record(pair: TradeoffPair) -> dict[str, Any]:
    """The ``tpr_at_fpr`` record of one pair: measured (from its boxes) at each FPR level, and
    exact (from the declared distribution) where the pair has an exact curve."""
    measured = pair.tpr_at_fpr(FPR_LEVELS, exact=False)
    return {
        "null": pair.null,
        "alt": pair.alt,
        "epsilon": pair.epsilon,
        "delta": pair.delta,
        "pair": "the verdict's worst pair (violating pairs first, then the largest lower bound / claim)",
        "levels": measured,
        "exact": pair.tpr_at_fpr() if pair.exact_curve is not None else None,
        "events": len(pair.boxes),
        "outside": pair.outside(),
        "note": pair.note,
        "definitions": DEFINITIONS,
    }


def observer_record(pairs: Sequence[TradeoffPair], *, max_pairs: int = JSON_PAIRS) -> dict[str, Any]:
    """``{"tpr_at_fpr": …, "tradeoff": …}``: the worst pair's TPR at 1% and 5% FPR, and the
    trade-off record of the first ``max_pairs`` pairs (strongest evidence first)."""
    shown = list(pairs)[: int(max_pairs)]
    return {
        "tpr_at_fpr": tpr_record(pairs[0]) if pairs else None,
        "tradeoff": {
            "pairs": [p.to_dict(curve_points=CURVE_POINTS) for p in shown],
            "shown": len(shown),
            "total": len(pairs),
            "cap": int(max_pairs),
            "order": "the verdict's worst pair first: violating pairs, then by lower bound over claim",
        },
    }


def text_line(pairs: Sequence[TradeoffPair]) -> str | None:
    """One plain line for the CLI's text output (None when no pair was tested): the worst pair's
    TPR at each FPR level (its bound first) and, over every pair's boxes, how many lie wholly
    beyond the event branch of their claim and how many beyond only the complement branch
    (tested only where the claim covers every output; module docstring)."""
    if not pairs:
        return None
    rec = tpr_record(pairs[0])
    at = "; ".join(
        f"at {percent(e['fpr'])} false alarms ≥ {percent(e['lower'])} right (measured best "
        f"{percent(e['tpr'])}; the claim allows ≤ {percent(e['claim_ceiling'])})"
        for e in rec["levels"]
    )
    branches = [o["branch"] for p in pairs for o in p.outside()]
    n_event, n_comp = branches.count("event"), branches.count("complement")
    n_box = sum(len(p.boxes) for p in pairs)
    partial = sum(p.covers == "events" for p in pairs)
    scope = (
        f"; {partial} of {len(pairs)} pairs' claims cover only some outputs, so only their event branch "
        "is tested"
        if partial
        else ""
    )
    return (
        f"observer: telling {rec['null']!r} from {rec['alt']!r} from {UNIT}, {at}; of {n_box} event boxes, "
        f"{n_event} lie wholly beyond their pair's claim on the event itself (TPR > e^ε·FPR or its mirror) "
        f"and {n_comp} beyond only its complement branch (the claim on the outputs outside the event)"
        f"{scope} (--json: tpr_at_fpr, tradeoff)"
    )
