"""``verdicts --check``: is a verdict file still what dpcore and the installed libraries give?

It fails (returns differences) when the file does not validate
(:func:`dpcore.verdicts.document.validate`: a verdict its own evidence does not support, a control
that did not violate), when an installed library's version differs from the one a row records,
or when a sampled row's check, rerun here, gives another verdict than the row's. The sample
(:func:`dpcore.verdicts.document.check_sample`) is the header's ``check_rows``, chosen when the
file was written: every control and, per other library, its cheapest row whose check agreed with
its verdict.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from dpcore.verdicts.document import check_sample, validate, verdict_of, version_problems
from dpcore.verdicts.rows import (
    FixedPlan,
    RewriterPlan,
    RowSpec,
    catalogue,
    is_rewriter_plan,
    plan_full_vocabulary,
)


def _spec_for(row: dict[str, Any]) -> RowSpec | None:
    for s in catalogue():
        if s.name == row["name"]:
            return s
    return None


def check_document(
    doc: dict[str, Any], *, workers: int, progress: Callable[[str], None] | None = None
) -> dict[str, Any]:
    """Rerun the sample's checks and compare; ``differences`` is empty when the file is current."""
    from dpcore.verdicts.run import run_check

    say = progress or (lambda _line: None)
    diffs = validate(doc)
    versions, skipped_libs = version_problems(doc)
    diffs += versions
    rerun: list[dict[str, Any]] = []
    skipped = [f"{lib} is not installed here" for lib in skipped_libs]
    for row in check_sample(doc):
        if row["library"] in skipped_libs:
            continue
        spec = _spec_for(row)
        if spec is None:
            diffs.append(f"{row['name']}: no such row in this dpcore")
            continue
        recorded = row["check"]
        if is_rewriter_plan(recorded["plan"]) and spec.rewriter is not None:
            rp = recorded["plan"]
            rplan = RewriterPlan(**(rp | {"distinguishers": tuple(rp.get("distinguishers") or ())}))
            say(f"rerunning {row['name']}'s check ({rplan.rewrites:,} rewrites per text)")
            got = run_check(spec, int(row["seed"]), workers, plan=rplan, evidence=True)
            rerun.append(_compare(row, recorded, got, diffs))
            continue
        # a plan recorded before dpcore filtered its vocabularies audited the full one
        plan = FixedPlan(**(recorded["plan"] | {"full_vocabulary": plan_full_vocabulary(recorded["plan"])}))
        spec = RowSpec(
            spec.name,
            spec.group,
            spec.library,
            spec.summary,
            spec.epsilon,
            spec.embedding,
            fixed=spec.fixed or None,
            expected=spec.expected,
            unavailable=spec.unavailable,
            rewriter=spec.rewriter,
        )
        say(f"rerunning {row['name']}'s check (|V| = {plan.vocab_size:,}, T = {plan.samples:,})")
        got = run_check(spec, int(row["seed"]), workers, plan=plan)
        rerun.append(_compare(row, recorded, got, diffs))
    return {"mode": "check", "current": not diffs, "differences": diffs, "rerun": rerun, "skipped": skipped}


def _compare(
    row: dict[str, Any], recorded: dict[str, Any], got: dict[str, Any], diffs: list[str]
) -> dict[str, Any]:
    """One rerun check against the file: appends to ``diffs`` where they differ; returns its entry."""
    if got["verdict"] != recorded["verdict"]:
        diffs.append(
            f"{row['name']}: its check gave {recorded['verdict']!r} when the file was written and "
            f"gives {got['verdict']!r} now" + (f" ({got['why']})" if got.get("why") else "")
        )
    elif got["verdict"] != verdict_of(row):
        diffs.append(
            f"{row['name']}: the file says {verdict_of(row)!r}, its check gives {got['verdict']!r} now"
            + (f" ({got['why']})" if got.get("why") else "")
        )
    entry = {
        "name": row["name"],
        "recorded": verdict_of(row),
        "check_recorded": recorded["verdict"],
        "check_now": got["verdict"],
        "seconds": got["seconds"],
    }
    if got.get("evidence") is not None:  # a rewriter row's check: what it saw (pairs, rewrites)
        entry["evidence"] = got["evidence"]
    return entry
