"""What the "Audit a text rewriter" page draws and writes, from an audit's JSON record.

The page shows either a shipped view (:mod:`dpcore.rewriter.views`, read from
``dpcore/data/rewriter_views.json``) or a live run converted to the same record
(:meth:`dpcore.rewriter.RewriterAuditResult.to_dict` through :func:`dpcore.jsonutil.dumps`,
where ∞ is the string ``"inf"``), so everything here reads that record:

- :func:`tradeoff_pair` rebuilds a pair's :class:`~dpcore.tradeoff.TradeoffPair` (the events'
  Clopper–Pearson boxes against the claim at the pair's claimed bound), and
  :func:`rewriter_tradeoff_figure` draws it with :func:`dpcore.viz.tradeoff_figure.tradeoff_figure`;
- :func:`headline`, the verdict in one plain sentence; :func:`tests_table`, each direction's
  event and its counts under human column names; :func:`kept_words`, which words of a rewrite
  come from its input (the flawed DP-MLM keeps stopwords); :func:`fmt`, numbers as shown.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

import pandas as pd
import plotly.graph_objects as go

from dpcore.rewriter.distinguish import TITLES
from dpcore.tradeoff import Box, TradeoffPair
from dpcore.viz.tradeoff_figure import tradeoff_figure

__all__ = [
    "DIRECTION_WORDS",
    "as_float",
    "fmt",
    "headline",
    "kept_words",
    "rewriter_tradeoff_figure",
    "tests_table",
    "tradeoff_pair",
]

#: A direction as the page writes it: the event was chosen to favour this input.
DIRECTION_WORDS = {"x>x'": "for x", "x'>x": "for x′"}

#: Characters stripped from a word before comparing it with the input's words.
_PUNCT = re.compile(r"^[^\w#]+|[^\w#]+$")


def as_float(value: Any) -> float:
    """A number of the record (``"inf"``/``"-inf"`` strings for infinities; None is NaN)."""
    if value is None:
        return math.nan
    return float(value)


def fmt(value: Any, digits: int = 3) -> str:
    """A number as the page shows it: ``∞`` / ``none`` (−∞, an event never seen) / 3 significant digits."""
    v = as_float(value)
    if math.isnan(v):
        return ""
    if v == math.inf:
        return "∞"
    if v == -math.inf:
        return "none"
    return f"{v:.{digits}g}"


def _label(test: Mapping[str, Any]) -> str:
    return f"{DIRECTION_WORDS.get(test['direction'], test['direction'])}: {test['event']}"


def tradeoff_pair(pair: Mapping[str, Any]) -> TradeoffPair | None:
    """The pair's observer trade-off (None for a pair outside the claim's premise).

    A test names x: its FPR is how often the event comes out of x′, its TPR how often out of x.
    Each box is labelled with the input its event was chosen for and the event in words.
    """
    rec = pair.get("tradeoff")
    if not rec:
        return None
    tests = list(pair.get("tests") or [])
    boxes = []
    for i, b in enumerate(rec["boxes"]):
        label = _label(tests[i]) if len(tests) == len(rec["boxes"]) else str(b.get("label", ""))
        boxes.append(
            Box(
                fpr=float(b["fpr"]),
                tpr=float(b["tpr"]),
                fpr_low=float(b["fpr_low"]),
                fpr_high=float(b["fpr_high"]),
                tpr_low=float(b["tpr_low"]),
                tpr_high=float(b["tpr_high"]),
                confidence=None if b.get("confidence") is None else float(b["confidence"]),
                label=label,
            )
        )
    return TradeoffPair(
        null="x′",
        alt="x",
        epsilon=as_float(rec["epsilon"]),
        boxes=tuple(boxes),
        unit="one rewrite",
        note=str(rec.get("note", "")),
    )


def rewriter_tradeoff_figure(
    result: Mapping[str, Any], *, pair: int = 0, height: int = 520
) -> go.Figure | None:
    """What an observer of one rewrite can do with the pair's chosen events, against the claim.

    The claim's curve at the pair's claimed bound (shaded where no test may reach while the claim
    holds), each event's Clopper–Pearson box, red crosses for boxes wholly outside it, the
    clearest violation said in words. None when the pair was not tested.
    """
    tp = tradeoff_pair(result["pairs"][pair])
    if tp is None:
        return None
    title = f"What an observer of one rewrite can do, against the claim (ε = {fmt(tp.epsilon)} for this pair)"
    return tradeoff_figure([tp], title=title, label_violation=True, height=height)


def headline(result: Mapping[str, Any]) -> str:
    """The verdict in one plain sentence with its numbers, for the top of the page.

    "violates" states the certified loss and the claim; "not-detected" never reads as private;
    "out-of-reach" says the claim was beyond what the run's rewrites can certify; "untested" why.
    """
    verdict = result["verdict"]
    conf = f"{100 * float(result['confidence']):g}%"
    n = int(result["rewrites_per_input"])
    tested = [p for p in result["pairs"] if p.get("outside_premise") is None]
    size = f"{n:,} rewrites per input, {conf} confidence"
    if verdict == "untested" or not tested:
        why = "; ".join(
            sorted({str(p["outside_premise"]) for p in result["pairs"] if p.get("outside_premise")})
        )
        return (
            "Untested: the pair is outside the claim's premise"
            + (f"; {why}" if why else "")
            + ". This run shows neither a violation nor its absence."
        )
    w = max(
        tested,
        key=lambda p: (bool(p["violates"]), as_float(p["lower_bound"]) - as_float(p["claimed_bound"])),
    )
    lb, claimed = fmt(w["lower_bound"]), fmt(w["claimed_bound"])
    if verdict == "violates":
        return (
            f"{result['rewriter']} violates its claim: on this pair its privacy loss is at least {lb} where "
            f"{claimed} is claimed ({size})."
        )
    if verdict == "out-of-reach":
        return (
            f"Out of reach: the claimed bound {claimed} is above {fmt(result['largest_certifiable_bound'])}, "
            f"the largest loss {n:,} rewrites per input can certify at {conf} confidence, so this audit "
            "could not have shown a violation; nothing was shown either way."
        )
    lower = as_float(w["lower_bound"])
    if lower == -math.inf:
        below = "no event told the two inputs apart"
    elif lower <= 0:
        # a lower bound at or below 0 is no leak shown, never a "privacy loss of −0.02" (issue 58)
        below = f"no leak shown: no event told the two inputs apart ({claimed} is claimed)"
    else:
        below = f"the lower bound on this pair's privacy loss, {lb}, stays under the claimed {claimed}"
    return (
        f"No violation detected by this test ({size}): {below}; this does not show the rewriter is private."
    )


def tests_table(result: Mapping[str, Any], *, pair: int = 0) -> pd.DataFrame:
    """Each direction's chosen event with its evaluation counts and bounds, in words.

    Columns: chosen for, found by, event, rewrites of x in it, rewrites of x′ in it, evaluation
    rewrites, lower bound, point estimate ε̂, claimed bound, beyond the claim (numbers as numbers;
    ∞ as ``float("inf")``; a lower bound of −∞ means the event never came out of its input).
    """
    p = result["pairs"][pair]
    rows = []
    for t in p.get("tests") or []:
        lb = as_float(t["lower_bound"])
        rows.append(
            {
                "chosen for": DIRECTION_WORDS.get(t["direction"], t["direction"]),
                "found by": TITLES.get(t["distinguisher"], t["distinguisher"]),
                "event": t["event"],
                "rewrites of x in it": int(t["count_x"]),
                "rewrites of x′ in it": int(t["count_x_prime"]),
                "evaluation rewrites": int(t["samples"]),
                "lower bound": lb,
                "point estimate ε̂": as_float(t["point_estimate"]),
                "claimed bound": as_float(p["claimed_bound"]),
                "beyond the claim": "yes"
                if math.isfinite(lb) and lb > as_float(p["claimed_bound"])
                else "no",
            }
        )
    return pd.DataFrame(
        rows,
        columns=[
            "chosen for", "found by", "event", "rewrites of x in it", "rewrites of x′ in it",
            "evaluation rewrites", "lower bound", "point estimate ε̂", "claimed bound", "beyond the claim",
        ],
    )  # fmt: skip


def _norm(word: str) -> str:
    return _PUNCT.sub("", word).lower()


def kept_words(original: str, rewrite: str) -> list[tuple[str, bool]]:
    """The rewrite's words, each with whether it is one of the input's words (case and surrounding
    punctuation ignored): what a rewriter let through verbatim.

    >>> kept_words("my aunt was ill", "my cousin was tired.")
    [('my', True), ('cousin', False), ('was', True), ('tired.', False)]
    """
    words = {_norm(w) for w in original.split()} - {""}
    return [(w, _norm(w) in words) for w in rewrite.split()]
