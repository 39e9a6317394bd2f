"""The verdict page's first sentence and its table, in cells short enough for a 1280-px projector.

No Streamlit here. :func:`headline_sentence` answers the page's question in one plain sentence
with its numbers; :func:`table_cells` gives the table as the page draws it (an HTML table whose
cells wrap, so that nothing is cut off at 1280 px): short cells on one scale (nats above the
claim, as the figure's axis), each with its full wording as a tooltip, and a sort key per cell.
The download keeps the full table (:func:`dpcore.verdicts.page_view.table_for_download`), and the
opened row gives every word of it.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import Any

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


def _range(values: Sequence[float]) -> str:
    lo, hi = min(values), max(values)
    return f"{nats(lo)} nats" if nats(lo) == nats(hi) else f"{nats(lo)} to {nats(hi)} nats"


def _count(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"


def headline_sentence(rows: Sequence[dict[str, Any]]) -> str:
    """The page's answer in one plain sentence, with its numbers, e.g. "None of the 24 sanitizers
    was caught above its claim: 20 showed no violation, at run sizes that would have caught a flaw
    of 0.0171 to 0.342 nats, 1 breaks its paper's premise and 3 could not run; all 4 flawed
    controls were caught, 0.0833 to 1.88 nats above their claims."

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
        by = {k: [r for r in others if verdict_of(r) == k] for k in VERDICT_KINDS}
        bad = by["violates"]
        if bad:
            excess = [certified_excess(r) or 0.0 for r in bad]
            lead = (
                f"{len(bad)} of the {len(others)} sanitizers violate their claims "
                f"({', '.join(r['name'] for r in bad[:3])}{', …' if len(bad) > 3 else ''}; "
                f"{_range(excess)} above)"
            )
        else:
            lead = f"None of the {len(others)} sanitizers was caught above its claim"
        rest: list[str] = []
        quiet = by["not-detected"]
        if quiet:
            deltas = [d for d in (caught_delta(r) for r in quiet) if d is not None]
            rest.append(
                f"{len(quiet)} showed no violation"
                + (f", at run sizes that would have caught a flaw of {_range(deltas)}" if deltas else "")
            )
        if by["premise-broken"]:
            n = len(by["premise-broken"])
            rest.append(f"{n} {'breaks its paper' if n == 1 else 'break their papers'}'s premise")
        if by["cannot-run"]:
            rest.append(f"{len(by['cannot-run'])} could not run")
        if by["untested"]:
            rest.append(f"{_count(len(by['untested']), 'could', 'could')} not be tested")
        if rest:
            tail = rest[-1] if len(rest) == 1 else ", ".join(rest[:-1]) + " and " + rest[-1]
            lead += ": " + tail
        parts.append(lead)
    if controls:
        caught = [r for r in controls if verdict_of(r) == "violates"]
        excess = [certified_excess(r) or 0.0 for r in caught]
        if len(caught) == len(controls):
            what = "both" if len(controls) == 2 else f"all {len(controls)}"
            sentence = (
                f"{what} flawed controls were caught"
                if len(controls) > 1
                else "the flawed control was caught"
            )
        else:
            sentence = f"{len(caught)} of {len(controls)} flawed controls were caught"
        if caught:
            sentence += f", {_range(excess)} above {'their claims' if len(caught) > 1 else 'its claim'}"
        parts.append(sentence)
    text = "; ".join(parts)
    return text[:1].upper() + text[1:] + "."


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
        return "violates its claim" if excess is None else f"violates: ≥ {nats(excess)} above its claim"
    if v == "not-detected":
        d = caught_delta(row)
        return "no violation found" + ("" if d is None else f"; would catch ≥ {nats(d)}")
    return {"premise-broken": "premise of its claim broken", "cannot-run": "cannot run"}.get(v, v)


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
