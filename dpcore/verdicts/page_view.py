"""The verdict file as the dashboard's "Do public sanitizers keep their claims?" page shows it.

No Streamlit here: the page (``pages/verdicts.py``) filters the rows, shows the tables built here
and :func:`dpcore.viz.verdicts_figure.verdicts_figure`, and opens one row's evidence. Everything
is read from the file's rows (:func:`dpcore.verdicts.run.run_row`'s records); nothing is run.

- :func:`filter_rows`, :func:`table`, :func:`table_for_download` — the table and its filters;
- :func:`certified_excess`, :func:`caught_delta` — the figure's two quantities, in nats (the
  numbers the table's verdicts give, :func:`dpcore.verdicts.wording.nats`);
- :func:`violating_pairs`, :func:`other_pairs`, :func:`pooled_tests`, :func:`single_output`,
  :func:`checks`, :func:`plan_sentence`, :func:`check_sentence`, :func:`command_argv` — one
  opened row's evidence.
"""

from __future__ import annotations

import math
import shlex
from collections.abc import Iterable, Sequence
from typing import Any

import pandas as pd

from dpcore.formatting import as_number, epsilon_text, percent
from dpcore.pairtest.verdicts import NOT_DETECTED, VIOLATES, label
from dpcore.verdicts.document import verdict_of
from dpcore.verdicts.rows import GROUPS, is_rewriter_plan
from dpcore.verdicts.wording import (
    headline,
    is_rewriter_row,
    largest_violation,
    nats,
    power_summary,
    short_claim,
    uniform_flaw,
    vocabulary_words,
)
from dpcore.viz.audit_words import (
    CALL_STATUS_WORDS,
    DECLARATION_STATUS_WORDS,
    EVENT_SOURCE_WORDS,
    POOLED_FAMILY_WORDS,
    RNG_STATUS_WORDS,
)
from dpcore.viz.audit_words import WARNING_STATUSES as AUDIT_WARNING_STATUSES

__all__ = [
    "CALL_STATUS_WORDS",
    "DECLARATION_STATUS_WORDS",
    "EVENT_SOURCE_WORDS",
    "POOLED_FAMILY_WORDS",
    "RNG_STATUS_WORDS",
    "VERDICT_KINDS",
    "VERDICT_WORDS",
    "WARNING_STATUSES",
    "caught_delta",
    "certified_excess",
    "certified_excess_words",
    "check_sentence",
    "checks",
    "claim_lines",
    "command_argv",
    "filter_rows",
    "group_label",
    "groups",
    "header_sentence",
    "largest_violation_text",
    "library_label",
    "matches",
    "other_pairs",
    "plan_sentence",
    "pooled_tests",
    "row_caption",
    "safe_headline",
    "single_output",
    "table",
    "table_for_download",
    "uniform_flaw_text",
    "violating_pairs",
]

#: The verdicts a row can have (:func:`dpcore.verdicts.document.verdict_of`), in the filter's order.
VERDICT_KINDS: tuple[str, ...] = (
    "violates",
    "premise-broken",
    "not-detected",
    "out-of-reach",
    "cannot-run",
    "untested",
)
#: Each verdict in words (the filter and the tables).
VERDICT_WORDS: dict[str, str] = {k: label(k) for k in VERDICT_KINDS}
def _sig(v: Any, digits: int = 4) -> float:
    """``v`` to ``digits`` significant figures (a table needs no more); ±∞ and NaN unchanged."""
    x = as_number(v)
    return x if not math.isfinite(x) else float(f"{x:.{digits}g}")


def library_label(row: dict[str, Any]) -> str:
    """The row's library with its version (``pypantera 1.0.2``; ``(not installed)`` without one)."""
    return _versioned(row)


def _versioned(row: dict[str, Any]) -> str:
    return f"{row['library']} {row.get('library_version') or '(not installed)'}"


def groups(rows: Iterable[dict[str, Any]]) -> list[str]:
    """The groups the rows belong to: the table's order (:data:`dpcore.verdicts.rows.GROUPS`), then
    any other in the file's order."""
    present = list(dict.fromkeys(r["group"] for r in rows))
    return [g for g in GROUPS if g in present] + [g for g in present if g not in GROUPS]


def group_label(group: str, rows: Iterable[dict[str, Any]]) -> str:
    """A group as the figure and the filter name it: ``pyPANTERA 1.0.2``, ``control (dpcore 0.1.0)``."""
    mine = [r for r in rows if r["group"] == group]
    if not mine:
        return group
    if all(r["library"].lower() == group.lower() for r in mine):
        versions = list(dict.fromkeys(r.get("library_version") or "(not installed)" for r in mine))
        return f"{group} {', '.join(versions)}"
    libs = list(dict.fromkeys(_versioned(r) for r in mine))
    return f"{group} ({', '.join(libs)})"


def matches(row: dict[str, Any], query: str) -> bool:
    """Whether ``query`` (case-insensitive, blank matches everything) is in the row's name, summary
    or claim."""
    q = query.strip().lower()
    if not q:
        return True
    return any(q in str(row.get(k) or "").lower() for k in ("name", "summary", "claim"))


def filter_rows(
    rows: Sequence[dict[str, Any]],
    *,
    groups: Sequence[str] | None = None,
    verdicts: Sequence[str] | None = None,
    query: str = "",
) -> list[dict[str, Any]]:
    """The rows of the chosen groups and verdicts whose name, summary or claim holds ``query``, in
    the file's order (None: every group or verdict)."""
    return [
        r
        for r in rows
        if (groups is None or r["group"] in groups)
        and (verdicts is None or verdict_of(r) in verdicts)
        and matches(r, query)
    ]


def safe_headline(row: dict[str, Any]) -> str:
    """:func:`dpcore.verdicts.wording.headline` of the row."""
    return headline(row)


def row_caption(row: dict[str, Any]) -> str:
    """The line under an opened row's verdict: library, ε, embedding, the claim in short, and the
    row's summary where it says more than the claim."""
    summary, claim = str(row.get("summary") or ""), str(row.get("claim") or "")
    more = summary if summary and not (claim and claim in summary) else ""
    return (
        f"{library_label(row)}; ε = {epsilon_text(row['epsilon'])}"
        + (f", {row['embedding']} embedding" if row.get("embedding") else "")
        + f"; claim: {short_claim(row)}."
        + (f" {more}" if more else "")
    )


def largest_violation_text(row: dict[str, Any]) -> str:
    """The row's largest certified violation in words, its numbers beside it
    (:func:`dpcore.verdicts.wording.largest_violation`): a pair's certified loss against its
    claim, or the pooled test's certified excess; or that no test certified one."""
    w = largest_violation(row)
    if w is None:
        return "None: no test certified a privacy loss above the claim."
    conf = percent(float(row["audit"]["confidence"]), exact=True)
    if w["kind"] == "pair":
        source = w.get("event_source")
        return (
            f"The pair ({w['x']}, {w['x_prime']}): its {w['quantity']} is at least {nats(w['lower_bound'])} "
            f"nats at {conf} confidence (family-wise), against a claimed {nats(w['claimed_bound'])}: "
            f"at least {nats(w['excess'])} nats above its claim"
            + (f"; event chosen by {EVENT_SOURCE_WORDS.get(source, source)}." if source else ".")
        )
    return (
        f"The pooled '{w['family']}' test over {w['terms']:,} {w['pairing']} pairs: some pair's loss "
        f"exceeds its claim by at least {nats(w['excess'])} nats, at {conf} confidence."
    )


def uniform_flaw_text(row: dict[str, Any]) -> str:
    """The smallest flaw shared by the vocabulary that the row's run would have caught, in words
    (:func:`dpcore.verdicts.wording.power_summary`)."""
    p = power_summary(row)
    if p["uniform_delta"] is None:
        return "A flaw shared by the vocabulary: no size stated by this run."
    return (
        f"A flaw shared by the vocabulary, Δ ≥ {nats(p['uniform_delta'])} nats above the claim: "
        f"had {uniform_flaw(p['uniform_family'], p['uniform_pairing'], p['uniform_delta'])}, "
        "it would have been caught."
    )


def table(rows: Sequence[dict[str, Any]]) -> pd.DataFrame:
    """One line per row, as the page shows it: library (with version), mechanism, claim (its
    formula, ε·d + ε₀ for a metric claim, and its paper), verdict (the headline: how far above its
    claim the loss was certified to be, in nats, or what flaw would have been caught), |V|, draws
    and seconds."""
    out = []
    for r in rows:
        a = r.get("audit") or {}
        out.append(
            {
                "library": library_label(r),
                "mechanism": r["name"],
                "claim": short_claim(r),
                "verdict": safe_headline(r),
                "|V|": a.get("vocab_size"),
                "draws": a.get("samples_drawn"),
                "seconds": as_number(r.get("seconds")),
            }
        )
    df = pd.DataFrame(out, columns=["library", "mechanism", "claim", "verdict", "|V|", "draws", "seconds"])
    for c in ("|V|", "draws"):
        df[c] = df[c].astype("Int64")
    return df


def table_for_download(rows: Sequence[dict[str, Any]]) -> pd.DataFrame:
    """:func:`table` with the machine columns a CSV reader wants: name, group, verdict code, ε,
    certified excess, the smallest uniform flaw caught, and the command."""
    df = table(rows)
    df.insert(0, "group", [r["group"] for r in rows])
    df["verdict code"] = [verdict_of(r) for r in rows]
    df["epsilon"] = [as_number(r.get("epsilon")) for r in rows]
    df["certified excess (nats)"] = [certified_excess(r) for r in rows]
    df["smallest uniform flaw caught (nats)"] = [
        caught_delta(r) if verdict_of(r) == "not-detected" else None for r in rows
    ]
    df["why it cannot run"] = [r.get("why") if verdict_of(r) == "cannot-run" else None for r in rows]
    df["command"] = [r.get("command") for r in rows]
    return df


def certified_excess(row: dict[str, Any]) -> float | None:
    """How far above its claim a violating row's loss is certified to be, in nats: the largest
    violation's (:func:`dpcore.verdicts.wording.largest_violation`) lower bound − claimed bound, or
    the pooled test's certified excess; None for a row that did not violate. The table's verdict
    gives the same number ("violates its claim by at least … nats")."""
    w = largest_violation(row)
    return None if w is None else float(w["excess"])


def certified_excess_words(row: dict[str, Any]) -> str | None:
    """:func:`certified_excess` as the table and the figure write it ("≥ 5.35 nats above its
    claim"); None for a row that did not violate."""
    excess = certified_excess(row)
    return None if excess is None else f"≥ {nats(excess)} nats above its claim"


def caught_delta(row: dict[str, Any]) -> float | None:
    """The smallest flaw Δ (nats) shared by the vocabulary the row's run would have caught with its
    power (0.9); None when the run states none."""
    if row["status"] != "ran":
        return None
    d = power_summary(row)["uniform_delta"]
    return None if d is None or not math.isfinite(d) else float(d)


def _kept_pairs(row: dict[str, Any], violates: bool) -> tuple[str, list[tuple[dict[str, Any], float, float]]]:
    """The row's confidence in words, and its tested pairs that violate (or not), each with its
    lower and claimed bounds as numbers."""
    a = row.get("audit") or {}
    conf = percent(float(a.get("confidence", 0.95)), exact=True)
    kept = [
        (p, as_number(p.get("lower_bound")), as_number(p.get("claimed_bound")))
        for p in a.get("pairs", [])
        if bool(p.get("violates")) == violates and not p.get("error")
    ]
    return conf, kept


def _rewriter_pair_rows(row: dict[str, Any], violates: bool) -> pd.DataFrame:
    """A rewriter row's pairs of texts: x, x′, the claimed and certified bounds, the event and the
    counts behind its bound (rewrites of x and of x′ in the event, of the bounding half)."""
    conf, kept = _kept_pairs(row, violates)
    out = []
    for p, lb, cb in kept:
        c = p.get("counts") or {}
        counts = f"{c.get('count_x')}, {c.get('count_x_prime')} of {c.get('samples')}" if c else ""
        out.append(
            {
                "text x": p["x"],
                "text x′": p["x_prime"],
                "claimed bound": _sig(cb),
                f"lower bound ({conf})": _sig(lb),
                "above the claim (nats)": _sig(lb - cb),
                "event": p.get("event") or "",
                "in the event (x, x′, of)": counts,
            }
        )
    cols = ["text x", "text x′", "claimed bound", f"lower bound ({conf})", "above the claim (nats)"]
    return pd.DataFrame(out, columns=[*cols, "event", "in the event (x, x′, of)"])


def _pair_rows(row: dict[str, Any], violates: bool) -> pd.DataFrame:
    if is_rewriter_row(row):
        return _rewriter_pair_rows(row, violates)
    conf, kept = _kept_pairs(row, violates)
    out = []
    for p, lb, cb in kept:
        out.append(
            {
                "word x": p["x"],
                "word x′": p["x_prime"],
                "d(x, x′)": _sig(p.get("distance")),
                "claimed bound": _sig(cb),
                f"lower bound ({conf})": _sig(lb),
                "above the claim (nats)": _sig(lb - cb),
                "lower bound ÷ claim": _sig(lb / cb) if cb > 0 else (math.inf if lb > 0 else math.nan),
                "event chosen by": EVENT_SOURCE_WORDS.get(p.get("event_source"), p.get("event_source") or ""),
            }
        )
    cols = ["word x", "word x′", "d(x, x′)", "claimed bound", f"lower bound ({conf})"]
    cols += ["above the claim (nats)", "lower bound ÷ claim", "event chosen by"]
    return pd.DataFrame(out, columns=cols)


def violating_pairs(row: dict[str, Any]) -> pd.DataFrame:
    """The violating pairs the row keeps (largest lower bound ÷ claim first): x, x′, d(x, x′),
    claimed bound, lower bound, how far it lies above the claim (nats), their ratio and where the
    event came from."""
    return _pair_rows(row, True)


def other_pairs(row: dict[str, Any]) -> pd.DataFrame:
    """The strongest pairs that did not violate (the row keeps a few), as :func:`violating_pairs`."""
    return _pair_rows(row, False)


def pooled_tests(row: dict[str, Any]) -> pd.DataFrame:
    """One line per pooled test: its event (family), pairing, pairs, verdict and certified excess."""
    out = []
    for t in (row.get("audit") or {}).get("pooled", []):
        terms = int(t.get("terms", 0))
        rejects = bool(t.get("rejects"))
        out.append(
            {
                "event": POOLED_FAMILY_WORDS.get(t.get("family"), t.get("family")),
                "pairing": t.get("pairing"),
                "pairs": terms,
                "verdict": "not run: no pair to test"
                if terms == 0
                else label(VIOLATES if rejects else NOT_DETECTED),
                "certified excess (nats)": _sig(t.get("excess_lower_bound")) if rejects else None,
            }
        )
    return pd.DataFrame(out, columns=["event", "pairing", "pairs", "verdict", "certified excess (nats)"])


def single_output(row: dict[str, Any]) -> pd.DataFrame:
    """Per claim level, the smallest probability under M(x) of one output whose loss is claim + 1
    nat that the run would have caught (∞: none, whatever its probability)."""
    singles = power_summary(row)["single_output"]
    return pd.DataFrame(
        [
            {
                "claim": _sig(s["claim"]),
                "output probability ≥": f"{as_number(s['output_probability']):.2g}"
                if as_number(s["output_probability"]) <= 1
                else "cannot be caught",
            }
            for s in singles
        ],
        columns=["claim", "output probability ≥"],
    )


#: Statuses a page shows as a warning (the text-audit page's, and a word that failed to sample).
WARNING_STATUSES = frozenset({*AUDIT_WARNING_STATUSES, "failed"})


def checks(row: dict[str, Any]) -> list[dict[str, str]]:
    """The contract checks made before the row's verdict: the rng contract, how it is called, the
    declared distribution and the words that failed to sample; each with ``check``, ``status``,
    ``result`` (in words) and ``text``."""
    a = row.get("audit") or {}
    rc = a.get("rng_contract") or {}
    calls = a.get("calls") or {}
    decl = a.get("declaration")
    rc_status = rc.get("status") or "unchecked"
    call_status = calls.get("status") or "unchecked"
    out = [
        {
            "check": "Random generator (rng contract)",
            "status": rc_status,
            "result": RNG_STATUS_WORDS.get(rc_status, rc_status),
            "text": rc.get("text") or "the rng contract was not checked",
        },
        {
            "check": "How it is called (call check)",
            "status": call_status,
            "result": CALL_STATUS_WORDS.get(call_status, call_status)
            + (f"; audited as {calls['audited_as']}" if calls.get("audited_as") else ""),
            "text": calls.get("text") or "the calls were not checked",
        },
    ]
    if decl is None:
        out.append(
            {
                "check": "Declared distribution",
                "status": "not-declared",
                "result": DECLARATION_STATUS_WORDS["not-declared"],
                "text": "the sanitizer declares no exact distribution: nothing to test",
            }
        )
    else:
        d_status = decl.get("status") or "not-declared"
        out.append(
            {
                "check": "Declared distribution",
                "status": d_status,
                "result": DECLARATION_STATUS_WORDS.get(d_status, d_status),
                "text": decl.get("text") or "",
            }
        )
    prem = a.get("premise")
    if prem:
        out.append(
            {
                "check": "Premise of the claim",
                "status": str(prem.get("status")),
                "result": "broken" if prem.get("status") == "broken" else "holds on the words checked",
                "text": str(prem.get("text") or ""),
            }
        )
    failed = int(a.get("failed_words") or 0)
    out.append(
        {
            "check": "Words that failed to sample",
            "status": "failed" if failed else "ok",
            "result": f"{failed:,}" if failed else "none",
            "text": f"first: {a['first_failure']}" if failed and a.get("first_failure") else "",
        }
    )
    return out


def claim_lines(row: dict[str, Any]) -> list[str]:
    """The claim the row's audit tested (its claim model) and, when broken, its premise, in
    sentences for the opened row; empty for a row without a recorded claim model."""
    a = row.get("audit") or {}
    claim = a.get("claim")
    out: list[str] = []
    if claim:
        out.append(
            f"Claim tested: {claim.get('formula')} ({claim.get('citation')}), for {claim.get('pairs')}, "
            f"on {claim.get('outputs')}."
        )
    prem = a.get("premise")
    if prem and prem.get("status") == "broken":
        out.append(f"Premise broken: the paper's guarantee needs {prem.get('premise')}; {prem.get('text')}.")
    return out


def _int(v: Any) -> str:
    return "—" if v is None else f"{int(v):,}"


def plan_sentence(row: dict[str, Any]) -> str:
    """The row's plan in one sentence: fixed (a control's setting, with why) or fitted (|V|, screen
    budget, T, the stated class and its predicted Δ)."""
    plan = row.get("plan")
    if not plan:
        return "no plan: the row did not run"
    if is_rewriter_plan(plan):
        why = f" ({plan['why']})" if plan.get("why") else ""
        return (
            f"one pair of texts{why}: x = {plan['x']!r}, x′ = {plan['x_prime']!r}; "
            f"{_int(plan.get('rewrites'))} rewrites of each, half to choose the event and half to bound it"
        )
    parts = [f"|V| = {_int(plan.get('vocab_size'))} ({vocabulary_words(plan)})"]
    if plan.get("words"):
        parts.append(f"the named words {', '.join(map(str, plan['words']))}")
    if plan.get("screen_budget"):
        per = f" ({_int(plan['draws_per_word'])} per word)" if plan.get("draws_per_word") else ""
        parts.append(f"screen budget {_int(plan['screen_budget'])} draws{per}")
    parts.append(f"T = {_int(plan.get('samples'))} draws per word to confirm")
    parts.append(f"{_int(plan.get('pairs'))} pair(s) confirmed")
    if plan.get("kind") == "fitted":
        pred = as_number(plan.get("predicted"))
        stated = plan.get("stated_class") or "uniform"
        what = "Δ" if stated == "uniform" else "p"
        unit = " nats" if stated == "uniform" else ""
        parts.append(
            f"stated class: {stated}, predicted {what} = {pred:.3g}{unit}"
            if math.isfinite(pred)
            else f"stated class: {stated}, nothing predicted"
        )
        if plan.get("reaches_class") is False:
            parts.append(
                "no size was predicted both to fit its minutes and to reach its class: the smallest ran"
            )
        if plan.get("estimate_seconds") is not None:
            parts.append(f"estimated {as_number(plan['estimate_seconds']):.0f} s")
        return "fitted to its minutes: " + "; ".join(parts)
    why = f" ({plan['why']})" if plan.get("why") else ""
    return f"fixed{why}: " + "; ".join(parts)


def check_sentence(row: dict[str, Any]) -> str:
    """The row's check (what ``verdicts --check`` reruns): its plan and the verdict it gave."""
    c = row.get("check")
    if not c:
        return "no check recorded"
    p = c.get("plan") or {}
    if is_rewriter_plan(p):
        size = f"the same pair, {_int(p.get('rewrites'))} rewrites of each"
    else:
        size = f"|V| = {_int(p.get('vocab_size'))} ({vocabulary_words(p)})"
        if p.get("screen_budget"):
            size += f", screen budget {_int(p['screen_budget'])}"
        size += f", T = {_int(p.get('samples'))}"
    verdict = VERDICT_WORDS.get(c.get("verdict"), str(c.get("verdict")))
    took = f", {as_number(c['seconds']):.2g} s" if c.get("seconds") else ""
    why = f": {c['why']}" if c.get("why") else ""
    agrees = ""
    if row.get("status") == "ran" and c.get("verdict") in VERDICT_KINDS:
        agrees = "; the same as the row's" if c["verdict"] == verdict_of(row) else "; not the row's verdict"
    return f"{size} → {verdict}{why}{took}{agrees}"


def command_argv(row: dict[str, Any]) -> list[str] | None:
    """The row's ``python -m dpcore audit-text …`` command as an argument list (None when it has
    none: it could not run before its plan was made)."""
    cmd = row.get("command")
    return shlex.split(cmd) if isinstance(cmd, str) and cmd else None


def header_sentence(header: dict[str, Any]) -> str:
    """The file's header in one line (its command apart): dates, machine, minutes per row, seed,
    confidence, dpcore's version, and whether the run finished."""
    conf = header.get("confidence")
    bits = [
        f"{header.get('started', '?')} to {header.get('finished', '?')}",
        f"on {header.get('machine', '?')}",
        f"{as_number(header.get('minutes')):g} minutes per fitted row",
        f"seed {header.get('seed', '?')}",
    ]
    if conf is not None:
        bits.append(f"confidence {percent(as_number(conf), exact=True)} family-wise per row")
    bits.append(f"dpcore {header.get('dpcore_version', '?')}")
    text = ", ".join(bits) + "."
    if "--full-vocabulary" in str(header.get("command", "")):
        text += (
            " Every row audited the full top-|V| vocabulary, offensive words included (--full-vocabulary); "
            "dpcore's default vocabularies leave slurs and insults out."
        )
    if header.get("complete") is False:
        text += " The run did not finish: rows it did not reach are missing."
    return text
