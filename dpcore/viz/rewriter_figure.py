"""What the "Audit a text rewriter" page draws and writes, from an audit's JSON record.

The page shows either a shipped view (:mod:`dpcore.rewriter.views`, read from
``dpcore/data/rewriter_views.json``) or a live run converted to the same record
(:meth:`dpcore.rewriter.RewriterAuditResult.to_dict` through :func:`dpcore.jsonutil.dumps`,
where ∞ is the string ``"inf"``), so everything here reads that record:

- :func:`tradeoff_pair` rebuilds a pair's :class:`~dpcore.tradeoff.TradeoffPair` (the events'
  Clopper–Pearson boxes against the claim at the pair's claimed bound), and
  :func:`rewriter_tradeoff_figure` draws it with :func:`dpcore.viz.tradeoff_figure.tradeoff_figure`;
- :func:`headline`, what a room should conclude, in one plain sentence that names the rewriter
  (:func:`rewriter_name`), the test's size and its confidence; :func:`tests_table`, each
  direction's event and its counts under human column names (the downloads), and
  :func:`shown_tests_table`, the same as the page shows it; :func:`kept_words`, a rewrite's words
  as shown (:mod:`dpcore.rewriter.words`: WordPieces joined into words, other scripts and listed
  words replaced) with which of them come from its input (the flawed DP-MLM keeps stopwords);
  :func:`fmt`, numbers as shown.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

import pandas as pd
import plotly.graph_objects as go

from dpcore.formatting import as_number, epsilon_text, percent
from dpcore.rewriter.distinguish import TITLES
from dpcore.rewriter.registry import display_name
from dpcore.rewriter.words import join_wordpieces, shown_event, shown_word
from dpcore.tradeoff import Box, TradeoffPair
from dpcore.viz.tradeoff_figure import tradeoff_figure

__all__ = [
    "DIRECTION_WORDS",
    "bound",
    "fmt",
    "headline",
    "kept_words",
    "rewriter_name",
    "rewriter_tradeoff_figure",
    "shown_tests_table",
    "tests_table",
    "tradeoff_pair",
]

#: A direction as the page writes it: the event was chosen to favour this input.
DIRECTION_WORDS = {"x>x'": "for x", "x'>x": "for x′"}

#: Characters stripped from a word before comparing it with the input's words.
_PUNCT = re.compile(r"^[^\w#]+|[^\w#]+$")


def rewriter_name(name: str, *, start: bool = False) -> str:
    """A rewriter as a sentence names it: ``"dpcore's DP-MLM variant"``, ``"the flawed DP-MLM that keeps
    stopwords"``; any other name (your own code, from the CLI) as ``"the rewriter NAME"``.

    ``start``: at the start of a sentence ("The flawed …"; "dpcore's" keeps its small d).

    >>> rewriter_name("flawed:dp-mlm-stopwords", start=True)
    'The flawed DP-MLM that keeps stopwords'
    """
    text = display_name(name)
    return "T" + text[1:] if start and text.startswith("the ") else text


def fmt(value: Any, digits: int = 3) -> str:
    """A number as the page shows it: ``∞`` / ``none`` (−∞, an event never seen) / 3 significant digits."""
    v = as_number(value)
    if math.isnan(v):
        return ""
    if v == math.inf:
        return "∞"
    if v == -math.inf:
        return "none"
    return f"{v:.{digits}g}"


def bound(value: Any) -> str:
    """A certified lower bound on the privacy loss as the page shows it: ``none`` when it certifies
    no loss above 0 (a bound ≤ 0 is no leak shown, never a negative loss: issue 58; −∞, an event
    that never came out of its input, is none too), else :func:`fmt`.

    >>> bound(-0.0219), bound("-inf"), bound(3.8098)
    ('none', 'none', '3.81')
    """
    v = as_number(value)
    if math.isnan(v):
        return ""
    return "none" if v <= 0 else fmt(v)


def _label(test: Mapping[str, Any]) -> str:
    return f"{DIRECTION_WORDS.get(test['direction'], test['direction'])}: {shown_event(str(test['event']))}"


def tradeoff_pair(pair: Mapping[str, Any]) -> TradeoffPair | None:
    """The pair's observer trade-off (None for a pair outside the claim's premise).

    A test names x: its FPR is how often the event comes out of x′, its TPR how often out of x.
    Each box is labelled with the input its event was chosen for and the event in words (as the page
    shows it: :func:`dpcore.rewriter.words.shown_event`).
    """
    rec = pair.get("tradeoff")
    if not rec:
        return None
    tests = list(pair.get("tests") or [])
    boxes = []
    for i, b in enumerate(rec["boxes"]):
        label = _label(tests[i]) if len(tests) == len(rec["boxes"]) else shown_event(str(b.get("label", "")))
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
        epsilon=as_number(rec["epsilon"]),
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
    title = (
        "What an observer of one rewrite can do, against the claim (ε = "
        f"{epsilon_text(tp.epsilon, digits=3)} for this pair)"
    )
    return tradeoff_figure([tp], title=title, label_violation=True, height=height)


def headline(result: Mapping[str, Any]) -> str:
    """What a room should conclude, in one plain sentence with its numbers, for the top of the page.

    The sentence names the rewriter (:func:`rewriter_name`), the size of the test and its
    confidence. "violates": the rewriter leaks more than it claims, by a certified loss against the
    claim; "not-detected": no leak shown (a lower bound ≤ 0 is never read as a loss), or a loss
    within the claim, and never "private"; "out-of-reach": the claim was beyond what the run's
    rewrites can certify, so nothing was shown either way; "untested": why not.
    """
    verdict = result["verdict"]
    name = rewriter_name(str(result["rewriter"]))
    conf = percent(float(result["confidence"]), exact=True)
    n = int(result["rewrites_per_input"])
    tested = [p for p in result["pairs"] if p.get("outside_premise") is None]
    size = f"{n:,} rewrites per sentence, {conf} confidence"
    if verdict == "untested" or not tested:
        why = "; ".join(
            sorted({str(p["outside_premise"]) for p in result["pairs"] if p.get("outside_premise")})
        )
        return (
            f"Untested for {name}: the pair is outside its claim's premise"
            + (f" — {why} —" if why else ",")
            + " so this run shows neither a violation nor its absence."
        )
    w = max(
        tested,
        key=lambda p: (bool(p["violates"]), as_number(p["lower_bound"]) - as_number(p["claimed_bound"])),
    )
    lb, claimed = fmt(w["lower_bound"]), fmt(w["claimed_bound"])
    if verdict == "violates":
        return (
            f"{rewriter_name(str(result['rewriter']), start=True)} leaks more than it claims: on this pair "
            f"its privacy loss is at least {lb}, above the {claimed} it claims ({size})."
        )
    if verdict == "out-of-reach":
        return (
            f"Out of reach for {name}: the claimed bound {claimed} is above "
            f"{fmt(result['largest_certifiable_bound'])}, the largest loss {n:,} rewrites per sentence can "
            f"certify at {conf} confidence, so this audit could not have shown a violation and shows "
            "nothing either way."
        )
    if as_number(w["lower_bound"]) <= 0:
        # a lower bound at or below 0 (−∞: the event never came out) is no leak shown, never a
        # "privacy loss of −0.02" (issue 58)
        return (
            f"No leak shown for {name}: this test found no event that tells its rewrites of the two "
            f"sentences apart ({size}; it claims {claimed}), which does not show it is private."
        )
    return (
        f"No leak beyond its claim shown for {name}: on this pair its privacy loss is at least {lb}, "
        f"within the {claimed} it claims ({size}), which does not show it is private."
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
        lb = as_number(t["lower_bound"])
        rows.append(
            {
                "chosen for": DIRECTION_WORDS.get(t["direction"], t["direction"]),
                "found by": TITLES.get(t["distinguisher"], t["distinguisher"]),
                "event": t["event"],
                "rewrites of x in it": int(t["count_x"]),
                "rewrites of x′ in it": int(t["count_x_prime"]),
                "evaluation rewrites": int(t["samples"]),
                "lower bound": lb,
                "point estimate ε̂": as_number(t["point_estimate"]),
                "claimed bound": as_number(p["claimed_bound"]),
                "beyond the claim": "yes"
                if math.isfinite(lb) and lb > as_number(p["claimed_bound"])
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


def shown_tests_table(result: Mapping[str, Any], *, pair: int = 0) -> pd.DataFrame:
    """:func:`tests_table` as the page shows it: the event's text drawn safely
    (:func:`dpcore.rewriter.words.shown_event`: other scripts and listed words replaced), the lower
    bound as :func:`bound` ("none": no loss above 0 certified), the other numbers as :func:`fmt`."""
    shown = tests_table(result, pair=pair)
    shown["event"] = shown["event"].map(lambda e: shown_event(str(e)))
    shown["lower bound"] = shown["lower bound"].map(bound)
    for c in ("point estimate ε̂", "claimed bound"):
        shown[c] = shown[c].map(fmt)
    return shown


def _norm(word: str) -> str:
    return _PUNCT.sub("", word).lower()


def kept_words(original: str, rewrite: str) -> list[tuple[str, bool]]:
    """The rewrite's words as the page shows them, each with whether it is one of the input's words
    (case and surrounding punctuation ignored): what a rewriter let through verbatim.

    The words are those of :func:`dpcore.rewriter.words.shown_words`: ``##`` WordPieces joined to
    the word before, a word outside the Latin script shown as ``[non-Latin]``, a word of dpcore's
    left-out list (a joined one included) as ``[left out]``; a word kept from the input takes no
    piece. Whether a word was kept is decided on the word as written, before it is replaced.

    >>> kept_words("my aunt was ill", "my cousin was tired.")
    [('my', True), ('cousin', False), ('was', True), ('tired.', False)]
    >>> kept_words("my aunt was ill", "my ##uve was pisa ##tures 清")
    [('my', True), ('uve', False), ('was', True), ('pisatures', False), ('[non-Latin]', False)]
    """
    words = {_norm(w) for w in original.split()} - {""}
    return [(shown_word(w), _norm(w) in words) for w in join_wordpieces(rewrite, keep=original.split())]
