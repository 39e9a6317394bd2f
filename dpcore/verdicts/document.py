"""The verdict table as a file: its schema, the shipped copy, validation, resuming, and the check.

The file (``dpcore/data/verdicts.json`` ships the latest full run) is one JSON object::

    {"schema": "dpcore-verdicts/1",
     "header": {"command", "started", "finished", "machine", "dpcore_version", "minutes", "seed",
                "workers", "engine", "confidence", "complete", "seconds"},
     "definitions": {...},
     "rows": [row, ...]}

Each row is :func:`dpcore.verdicts.run.run_row`'s record. The page, the docs table and
``verdicts --json`` all read this one object.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from dpcore.pairtest.verdicts import NOT_DETECTED, OUT_OF_REACH, UNTESTED, VIOLATES, decide
from dpcore.validation import DPCoreError

SCHEMA = "dpcore-verdicts/1"
SHIPPED_PATH = Path(__file__).resolve().parents[1] / "data" / "verdicts.json"
#: Largest file ``load`` reads (the shipped one is about 1 MB).
MAX_BYTES = 50_000_000

HEADER_KEYS: tuple[str, ...] = (
    "command",
    "started",
    "finished",
    "machine",
    "dpcore_version",
    "minutes",
    "seed",
    "workers",
    "engine",
    "confidence",
    "complete",
    "seconds",
    "check_rows",
)
ROW_KEYS: tuple[str, ...] = (
    "name",
    "group",
    "library",
    "library_version",
    "summary",
    "epsilon",
    "embedding",
    "expected",
    "seed",
    "minutes",
    "date",
    "machine",
    "status",
    "why",
    "plan",
    "command",
    "audit",
    "check",
    "claim",
    "seconds",
)
STATUSES = ("ran", "cannot-run")
#: The verdicts a row's audit may hold (:mod:`dpcore.pairtest.verdicts` holds every verdict's words).
VERDICTS = (VIOLATES, NOT_DETECTED, OUT_OF_REACH, UNTESTED)

DEFINITIONS: dict[str, str] = {
    "verdict": (
        "violates: a test certified, at the stated confidence family-wise, a privacy loss above the "
        "claim; not-detected: no test did, which does not show the mechanism is private; out-of-reach: "
        "every claimed bound tested was above what the run's size can certify, so nothing was shown "
        "either way; untested: nothing could be sampled; premise-broken: the implementation breaks a "
        "premise its paper's guarantee rests on (e.g. CusText's output sets must partition V), shown "
        "with evidence, so the paper's claim says nothing of most pairs; the audit then tested only the "
        "pairs it still covers"
    ),
    "largest certified violation": (
        "the flagged pair with the largest lower bound ÷ claimed bound (ε, or ε·d(x, x′) + ε₀), "
        "stated as how far above that bound its loss is certified to be, in nats; a pooled test's "
        "certified excess in nats where no single pair was flagged"
    ),
    "power": (
        "what the whole pipeline (screen, pooled tests, confirmation) would have caught with "
        "probability ≥ 0.9: a flaw of Δ nats shared by the vocabulary (uniform), or one output with "
        "loss claim + 1 nat and probability ≥ p under M(x) (single-output, per claim level)"
    ),
    "not covered": "what no test of the row could see; a violation of these kinds may exist unseen",
    "check": (
        "a small deterministic audit of the row (a control's own setting) that "
        "`python -m dpcore verdicts --check` reruns and compares"
    ),
    "fitted plan": (
        "|V| and budget chosen from the sanitizer's probed speed so that the row fits its minutes "
        "and, where predicted possible, catches a uniform flaw of Δ ≤ 1 nat with probability ≥ 0.9"
    ),
}


def new_document(header: dict[str, Any], rows: list[dict[str, Any]]) -> dict[str, Any]:
    """A verdict file's object."""
    return {"schema": SCHEMA, "header": dict(header), "definitions": dict(DEFINITIONS), "rows": list(rows)}


def load(path: str | Path, *, rows_only: bool = False) -> dict[str, Any]:
    """Read and validate a verdict file (its non-finite numbers read back, :func:`normalised`);
    one clear :class:`DPCoreError` when it is not one.

    ``rows_only``: validate the rows alone (``--resume`` reads an earlier, possibly older, file)."""
    p = Path(path)
    if not p.is_file():
        raise DPCoreError(f"no such verdict file: {p}")
    if p.stat().st_size > MAX_BYTES:
        raise DPCoreError(f"{p} is larger than {MAX_BYTES // 1_000_000} MB: not a verdict file")
    try:
        doc = json.loads(p.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise DPCoreError(f"{p} is not a JSON verdict file: {str(exc).splitlines()[0][:160]}") from None
    problems = validate(doc)
    if rows_only:
        problems = [p for p in problems if p.startswith(("row ", "control ", "no rows", "not a JSON"))]
    if problems:
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        raise DPCoreError(f"{p} is not a valid verdict file: {problems[0]}{more}")
    return normalised(doc)


#: Keys whose values are words of a vocabulary (or sentences), never numbers: a word may be "nan".
_WORD_KEYS = frozenset({"x", "x_prime", "word", "words", "event", "name", "why", "text", "first_failure"})
_NON_FINITE = {"inf": math.inf, "-inf": -math.inf, "nan": math.nan}


def normalised(doc: Any, key: str | None = None) -> Any:
    """A copy of ``doc`` with the strings ``"inf"``, ``"-inf"`` and ``"nan"`` (how the file writes
    non-finite numbers, :mod:`dpcore.jsonutil`) read back as floats, except under keys that hold
    words (:data:`_WORD_KEYS`): a vocabulary may hold "nan"."""
    if isinstance(doc, dict):
        return {k: normalised(v, k) for k, v in doc.items()}
    if isinstance(doc, list):
        return [normalised(v, key) for v in doc]
    if isinstance(doc, str) and key not in _WORD_KEYS and doc in _NON_FINITE:
        return _NON_FINITE[doc]
    return doc


def load_shipped() -> dict[str, Any]:
    """The shipped verdict file (``dpcore/data/verdicts.json``)."""
    return load(SHIPPED_PATH)


def _number(v: Any) -> float:
    """A bound of the file as a float (the strings ``"inf"``/``"-inf"``/``"nan"`` included)."""
    try:
        return float(v)
    except (TypeError, ValueError):
        return math.nan


def evidence_says(audit: dict[str, Any]) -> str:
    """The verdict a row's kept evidence supports: ``violates`` when a kept pair is flagged or a
    pooled test rejects, ``untested`` when nothing was tested, ``out-of-reach`` when no pooled test
    ran and every kept pair's claimed bound is at or above the largest loss the run could certify
    (:func:`dpcore.pairtest.verdicts.decide`), else ``not-detected``."""
    pooled_ran = any(t.get("terms", 0) > 0 for t in audit.get("pooled", []))
    pairs = [p for p in audit.get("pairs", []) if p.get("error") is None]
    top = audit.get("max_detectable_loss")
    beyond = sum(
        1 for p in pairs if top is not None and _number(p.get("claimed_bound")) >= _number(top)
    )
    rejects = any(t.get("rejects") for t in audit.get("pooled", []))
    return decide(
        flagged=audit.get("violating_pairs_total", 0) > 0 or rejects,
        tested=int(audit.get("pairs_tested", 0)),
        beyond_reach=int(audit.get("pairs_tested", 0)) if pairs and beyond == len(pairs) else 0,
        others_in_reach=pooled_ran,
    )


def validate(doc: Any) -> list[str]:
    """Every way ``doc`` departs from the schema (an empty list when it is a verdict file).

    Besides keys and types, each row's verdict must be the one its own evidence supports
    (:func:`evidence_says`), its check must be recorded, and a control must come out as expected."""
    if not isinstance(doc, dict):
        return ["not a JSON object"]
    out: list[str] = []
    if doc.get("schema") != SCHEMA:
        out.append(f"schema is {doc.get('schema')!r}, not {SCHEMA!r}")
    header = doc.get("header")
    if not isinstance(header, dict):
        out.append("no header object")
    else:
        out += [f"header lacks {k!r}" for k in HEADER_KEYS if k not in header]
    rows = doc.get("rows")
    if not isinstance(rows, list) or not rows:
        return [*out, "no rows"]
    if isinstance(header, dict) and isinstance(header.get("check_rows"), list):
        names = {r.get("name") for r in rows if isinstance(r, dict)}
        out += [
            f"header's check_rows names {n!r}, which is not a row"
            for n in header["check_rows"]
            if n not in names
        ]
        ran = {r.get("name") for r in rows if isinstance(r, dict) and r.get("status") == "ran"}
        controls = {r.get("name") for r in rows if isinstance(r, dict) and r.get("group") == "control"}
        out += [
            f"control {n!r} is not among the header's check_rows"
            for n in sorted(controls & ran - set(header["check_rows"]))
        ]
    seen: set[str] = set()
    for i, row in enumerate(rows):
        if not isinstance(row, dict):
            out.append(f"row {i} is not an object")
            continue
        name = row.get("name", f"#{i}")
        missing = [k for k in ROW_KEYS if k not in row]
        if missing:
            out.append(f"row {name!r} lacks {', '.join(map(repr, missing))}")
            continue
        if name in seen:
            out.append(f"row {name!r} appears twice")
        seen.add(name)
        if row["status"] not in STATUSES:
            out.append(f"row {name!r}: status {row['status']!r} is not one of {', '.join(STATUSES)}")
            continue
        if row["status"] == "cannot-run":
            if not isinstance(row["why"], str) or not row["why"]:
                out.append(f"row {name!r} cannot run but does not say why")
            continue
        audit = row["audit"]
        if not isinstance(audit, dict) or audit.get("verdict") not in VERDICTS:
            out.append(f"row {name!r} ran but has no audit verdict")
            continue
        if evidence_says(audit) != audit["verdict"]:
            out.append(
                f"row {name!r}: its verdict {audit['verdict']!r} is not what its evidence says "
                f"({evidence_says(audit)!r})"
            )
        if row["expected"] is not None and audit["verdict"] != row["expected"]:
            out.append(f"control {name!r} came out {audit['verdict']!r}, not {row['expected']!r}")
        check = row["check"]
        if not isinstance(check, dict) or "verdict" not in check:
            out.append(f"row {name!r} has no check")
        want = "audit-rewriter" if (audit.get("unit") == "rewriter") else "audit-text"
        if not isinstance(row["command"], str) or want not in row["command"]:
            out.append(f"row {name!r} has no {want} command")
    return out


def outcome(verdict: str, premise: dict[str, Any] | None) -> str:
    """A row's outcome from its audit's verdict and its premise check: ``premise-broken`` when the
    implementation breaks the premise its paper's guarantee rests on (the audit's verdict then
    speaks only of the pairs the claim still covers), else the verdict."""
    if premise is not None and premise.get("status") == "broken":
        return "premise-broken"
    return str(verdict)


def verdict_of(row: dict[str, Any]) -> str:
    """``violates``, ``not-detected``, ``out-of-reach``, ``untested``, ``premise-broken`` or
    ``cannot-run`` (:mod:`dpcore.pairtest.verdicts`)."""
    if row["status"] != "ran":
        return "cannot-run"
    return outcome(row["audit"]["verdict"], row["audit"].get("premise"))


def version_problems(doc: dict[str, Any]) -> tuple[list[str], list[str]]:
    """(differences, skipped): rows whose recorded library version differs from what is installed
    here, and libraries a row records that are not installed here (not compared)."""
    from dpcore.verdicts.rows import library_version

    diff: list[str] = []
    skipped: list[str] = []
    seen: dict[str, str | None] = {}
    for row in doc["rows"]:
        lib = row["library"]
        if lib not in seen:
            seen[lib] = library_version(lib)
        have = seen[lib]
        if row["library_version"] is None:
            continue
        if have is None:
            if lib not in skipped:
                skipped.append(lib)
            continue
        if row["library_version"] != have:
            diff.append(f"{row['name']}: recorded {lib} {row['library_version']}, installed {have}")
    return diff, skipped


def choose_check_rows(rows: list[dict[str, Any]]) -> list[str]:
    """The rows ``verdicts --check`` will rerun, chosen when the file is written (and recorded in
    its header as ``check_rows``): every control that ran, and per other library the row whose
    check was cheapest among those whose check agreed with the row's verdict."""
    out = [r["name"] for r in rows if r["group"] == "control" and r["status"] == "ran"]
    best: dict[str, dict[str, Any]] = {}
    for r in rows:
        if r["group"] == "control" or r["status"] != "ran" or not r.get("check"):
            continue
        if r["check"].get("verdict") != verdict_of(r):
            continue
        lib = r["library"]
        if lib not in best or r["check"]["seconds"] < best[lib]["check"]["seconds"]:
            best[lib] = r
    return out + [r["name"] for r in best.values()]


def check_sample(doc: dict[str, Any]) -> list[dict[str, Any]]:
    """The rows of ``doc`` its header names in ``check_rows``, in the table's order."""
    names = set(doc["header"]["check_rows"])
    return [r for r in doc["rows"] if r["name"] in names]


def resumable(
    old: dict[str, Any], *, minutes: float, seed: int, full_vocabulary: bool = False
) -> dict[str, dict[str, Any]]:
    """Rows of an earlier (partial) file that a resumed run keeps: rows that ran, at the same
    minutes and seed, over the same vocabulary (full or without offensive words), with the library
    at the same version as now (a row that could not run is run again: it fails fast, or its
    library was installed since)."""
    from dpcore.verdicts.rows import library_version, plan_full_vocabulary

    keep: dict[str, dict[str, Any]] = {}
    for row in old.get("rows", []):
        if row.get("status") != "ran" or row.get("minutes") != minutes or row.get("seed") != seed:
            continue
        if plan_full_vocabulary(row.get("plan")) != bool(full_vocabulary):
            continue
        if row.get("library_version") is None or row["library_version"] != library_version(row["library"]):
            continue
        keep[row["name"]] = row
    return keep
