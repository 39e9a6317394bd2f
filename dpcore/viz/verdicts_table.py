"""The verdict page's first sentence and its table, in cells short enough for a 1280-px projector.

No Streamlit here. :func:`headline_sentence` answers the page's question in one plain sentence
with its numbers (amounts of privacy loss without a unit: no "nats" in a lay headline);
:func:`table_cells` gives the table as the page draws it (an HTML table whose cells wrap, so
that nothing is cut off at 1280 px): short cells on one scale (nats above the claim, as the
figure's axis), each with its full wording as a tooltip, and a sort key per cell.
The download keeps the full table (:func:`dpcore.verdicts.page_view.table_for_download`), and the
opened row gives every word of it.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import Any

from dpcore.formatting import sentence
from dpcore.pairtest.verdicts import NOT_DETECTED, VIOLATES, label
from dpcore.verdicts.document import verdict_of
from dpcore.verdicts.page_view import (
    VERDICT_KINDS,
    caught_delta,
    certified_excess,
    library_label,
    safe_headline,
)
from dpcore.verdicts.wording import epsilon0, nats, short_claim
from dpcore.viz.palette import SOFT_INK, colour

__all__ = [
    "COLUMNS",
    "NUMERIC",
    "claim_cell",
    "count_cell",
    "headline_sentence",
    "table_cells",
    "verdict_cell",
]

#: The page's columns, in order; and those that hold numbers (right-aligned, sorted as numbers).
COLUMNS = ("library", "mechanism", "claim", "verdict (nats above the claim)", "|V|", "draws", "seconds")
NUMERIC = frozenset({"|V|", "draws", "seconds"})
#: "Author et al. 2021", "Author & Author 2015": the papers a claim cites.
_CITATION = re.compile(r"[A-Z][\w-]+(?: et al\.| (?:&|and) [A-Z][\w-]+)? \d{4}")


def _span(values: Sequence[float]) -> str:
    """Amounts of privacy loss as a headline gives them: "0.0171 to 0.342", or one number when
    they print alike. No unit: the headline speaks of privacy loss, the table of nats."""
    lo, hi = min(values), max(values)
    return nats(lo) if nats(lo) == nats(hi) else f"{nats(lo)} to {nats(hi)}"


def _never_audited(by: dict[str, list[dict[str, Any]]]) -> list[str]:
    """Why rows were never audited against their claims, counted: "3 could not run", "1 breaks its
    paper's premise", "1 had nothing to sample"."""
    why: list[str] = []
    if by["cannot-run"]:
        why.append(f"{len(by['cannot-run'])} could not run")
    if by["premise-broken"]:
        n = len(by["premise-broken"])
        why.append(f"{n} {'breaks its paper' if n == 1 else 'break their papers'}'s premise")
    if by["untested"]:
        why.append(f"{len(by['untested'])} had nothing to sample")
    if by["out-of-reach"]:
        n = len(by["out-of-reach"])
        whose = "its run" if n == 1 else "their runs"
        why.append(f"{n} {'claims' if n == 1 else 'claim'} more than {whose} could certify")
    return why


def _sanitizers_clause(others: Sequence[dict[str, Any]]) -> str:
    """The public sanitizers' part of the headline: how many were audited against their claims
    (and how many of those were caught above them), and, apart, how many never were and why."""
    by = {k: [r for r in others if verdict_of(r) == k] for k in VERDICT_KINDS}
    bad, quiet = by["violates"], by["not-detected"]
    audited = len(bad) + len(quiet)
    never = len(others) - audited
    why = _never_audited(by)
    if not audited:
        n = len(others)
        subject = "The only sanitizer was never" if n == 1 else f"None of the {n} sanitizers was"
        return f"{subject} audited against its claim ({', '.join(why)})"
    if never:
        lead = f"{audited} of the {len(others)} sanitizers {'was' if audited == 1 else 'were'} audited"
    else:
        lead = "The only sanitizer was audited" if audited == 1 else f"All {audited} sanitizers were audited"
    lead += " against its claim" if audited == 1 else " against their claims"
    deltas = [d for d in (caught_delta(r) for r in quiet) if d is not None]
    sizes = (
        f" (runs sized to catch {_span(deltas)} more privacy loss)"
        if deltas
        else ""
    )
    if bad:
        excess = [certified_excess(r) or 0.0 for r in bad]
        # a published package by its name (its rows name its paths), any other row by its own
        named = list(dict.fromkeys(str(r["library"]) if r["group"] == "packages" else r["name"] for r in bad))
        names = f"{', '.join(named[:3])}{', …' if len(named) > 3 else ''}"
        verb = label(VIOLATES) if len(bad) == 1 else "violate their claims"
        lead += f": {len(bad)} {verb} ({names}; losing {_span(excess)} more privacy than claimed)"
        if quiet:
            lead += f" and {len(quiet)} showed no violation{sizes}"
    elif audited == 1:
        lead += f" and was not caught above it{sizes}"
    else:
        lead += f" and none was caught above its claim{sizes}"
    if never:
        lead += (
            f"; {never} {'was' if never == 1 else 'were'} never audited ({', '.join(why)})"
        )
    return lead


def headline_sentence(rows: Sequence[dict[str, Any]]) -> str:
    """The page's answer in one plain sentence, with its numbers, e.g. "22 of the 26 sanitizers were
    audited against their claims and none was caught above its claim (runs sized to catch 0.0171
    to 0.342 more privacy loss); 4 were never audited (3 could not run, 1 breaks its paper's
    premise); all 4 flawed controls were caught." Two lines on a 1280×720 projector in talk mode:
    the controls' amounts are in the figure and the table.

    The sanitizers audited against their claims (verdict ``violates`` or ``not-detected``) are
    counted apart from those never audited against them (``cannot-run``, ``premise-broken``,
    ``untested``): a row that did not run is not one that "was not caught". Amounts are privacy
    loss above a claim, without a unit; the table and the figure give them in nats.

    Parameters
    ----------
    rows
        The verdict file's rows. The controls (group ``control``, flawed on purpose) are counted
        apart: they are there to be caught.

    Returns
    -------
    str
        One sentence; "No row to show." for no rows.
    """
    controls = [r for r in rows if r["group"] == "control"]
    others = [r for r in rows if r["group"] != "control"]
    if not rows:
        return "No row to show."
    parts: list[str] = []
    if others:
        parts.append(_sanitizers_clause(others))
    if controls:
        caught = [r for r in controls if verdict_of(r) == "violates"]
        if len(caught) == len(controls):
            what = "both" if len(controls) == 2 else f"all {len(controls)}"
            clause = (
                f"{what} flawed controls were caught"
                if len(controls) > 1
                else "the flawed control was caught"
            )
        else:
            clause = f"{len(caught)} of {len(controls)} flawed controls were caught"
        parts.append(clause)
    return sentence("; ".join(parts))


def claim_cell(row: dict[str, Any]) -> str:
    """The claim in a table cell: its kind (ε-LDP, ε·d metric LDP, ε₀ only where it is not 0) and
    the papers it cites, e.g. "ε·d metric LDP (Xu et al. 2021; Feyisetan et al. 2020)"; the full
    claim is the cell's tooltip (:func:`dpcore.verdicts.wording.short_claim`)."""
    g = row.get("guarantee")
    if g == "ldp":
        kind = "ε-LDP"
    elif g == "metric":
        e0 = epsilon0(row)
        kind = (
            "ε·d + ε₀ metric LDP (ε₀ not recorded)"
            if e0 is None
            else ("ε·d metric LDP" if e0 == 0 else f"ε·d + ε₀ metric LDP, ε₀ = {nats(e0)}")
        )
    else:
        kind = ""
    papers = list(dict.fromkeys(_CITATION.findall(str(row.get("claim") or ""))))
    cited = "; ".join(papers)
    if kind and cited:
        return f"{kind} ({cited})"
    return kind or cited or "—"


def verdict_cell(row: dict[str, Any]) -> str:
    """The verdict in a table cell, in nats above the claim as the figure's axis: "violates: ≥ 1.25
    nats above its claim", "no violation found; would catch ≥ 0.0171", "premise broken", "cannot
    run", "untested". The full sentence is the cell's tooltip and the opened row's headline."""
    v = verdict_of(row)
    if v == "violates":
        excess = certified_excess(row)
        return label(v) if excess is None else f"violates: ≥ {nats(excess)} above its claim"
    if v == NOT_DETECTED:
        d = caught_delta(row)
        return label(v) + ("" if d is None else f"; would catch ≥ {nats(d)}")
    return label(v)


def count_cell(n: Any) -> str:
    """A count as a table shows it: ``15,000``, ``400,000`` below a million, else in millions
    (``3.1 M``, ``20 M``, ``1,001 M``); "—" when there is none."""
    if n is None or (isinstance(n, float) and not math.isfinite(n)):
        return "—"
    n = int(n)
    if n < 1_000_000:
        return f"{n:,}"
    m = n / 1e6
    return f"{m:,.0f} M" if m >= 10 else f"{m:.2g} M"


def _number(v: Any) -> float | None:
    try:
        x = float(v)
    except (TypeError, ValueError):
        return None
    return x if math.isfinite(x) else None


def table_cells(rows: Sequence[dict[str, Any]], opened: str | None = None) -> dict[str, Any]:
    """The table as the page draws it: JSON-ready, one entry per row in the file's order.

    Parameters
    ----------
    rows
        The rows shown (after the page's filters).
    opened
        The opened row's name (its line is marked).

    Returns
    -------
    dict
        ``columns`` (:data:`COLUMNS`), ``numeric`` (the numeric columns), ``opened``, and ``rows``:
        per row its ``name``, ``cells`` (text), ``titles`` (each cell's full wording, its tooltip),
        ``keys`` (sort keys: numbers, or lower-case text), and ``colour`` (its verdict's colour,
        :func:`dpcore.viz.palette.colour`).
    """
    out = []
    order = {k: i for i, k in enumerate(VERDICT_KINDS)}
    for r in rows:
        a = r.get("audit") or {}
        v = verdict_of(r)
        vocab, draws, seconds = a.get("vocab_size"), a.get("samples_drawn"), _number(r.get("seconds"))
        verdict_value = certified_excess(r) if v == "violates" else caught_delta(r)
        cells = [
            library_label(r),
            str(r["name"]),
            claim_cell(r),
            verdict_cell(r),
            count_cell(vocab),
            count_cell(draws),
            "—" if seconds is None else f"{seconds:,.1f}",
        ]
        titles = [
            library_label(r),
            str(r.get("summary") or r["name"]),
            short_claim(r),
            safe_headline(r),
            "" if vocab is None else f"|V| = {int(vocab):,} words",
            "" if draws is None else f"{int(draws):,} draws",
            "" if seconds is None else f"{seconds:,.1f} seconds",
        ]
        keys: list[Any] = [
            cells[0].lower(),
            cells[1].lower(),
            cells[2].lower(),
            [
                order.get(v, len(order)),
                -(verdict_value or 0.0) if v == "violates" else (verdict_value or 0.0),
            ],
            _number(vocab),
            _number(draws),
            seconds,
        ]
        out.append(
            {
                "name": str(r["name"]),
                "cells": cells,
                "titles": titles,
                "keys": keys,
                "colour": colour(v) if v in ("violates", "premise-broken") else SOFT_INK,
                "verdict": v,
            }
        )
    return {"columns": list(COLUMNS), "numeric": sorted(NUMERIC), "opened": opened or "", "rows": out}
