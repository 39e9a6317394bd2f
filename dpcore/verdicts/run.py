"""Run the verdict table's rows: each sanitizer's default audit, fitted to its minutes.

:func:`run_row` plans (:func:`dpcore.verdicts.fit.plan_row`, or a control's fixed setting), runs
:func:`dpcore.textaudit.audit_text` and keeps a compact record of what it showed
(:func:`compact_audit`), with the exact ``audit-text`` command that reproduces it and its
check (:func:`run_check`: a small deterministic audit that ``verdicts --check`` reruns). A row that
cannot run records why in one line. :func:`run_rows` runs rows one after another on this
machine, or in parallel as Ray tasks on a cluster.
"""

from __future__ import annotations

import math
import os
import platform
import shlex
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

from dpcore.verdicts.document import outcome
from dpcore.verdicts.fit import plan_row
from dpcore.verdicts.rows import FixedPlan, RewriterPlan, RowSpec, library_version

#: The non-control rows' check: a small screen every ``verdicts --check`` can afford.
CHECK_PLAN = FixedPlan(vocab_size=300, screen_budget=60_000, samples=2_000, pairs=20)
#: Pairs kept in a row's record besides the violating ones (the rest are summarised).
KEPT_PAIRS = 10
#: Violating pairs kept in a row's record.
KEPT_VIOLATIONS = 50
#: The longest one-line why a row that cannot run records.
WHY_CHARS = 400


def now_iso() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def machine() -> str:
    """One line naming this machine: cores, CPU, OS and Python."""
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            for line in fh:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return (
        f"{os.cpu_count()} cores ({cpu}), {platform.system()} {platform.machine()}, "
        f"Python {platform.python_version()}"
    )


def audit_arguments(spec: RowSpec, plan: FixedPlan | Any, seed: int) -> dict[str, Any]:
    """The keyword arguments of :func:`~dpcore.textaudit.audit_text` for a row's plan: exactly
    what :func:`command_line`'s ``audit-text`` passes."""
    if isinstance(plan, FixedPlan) and plan.words is not None:
        return dict(
            words=list(plan.words),
            pairs=plan.pairs,
            neighbors=plan.neighbors,
            samples=plan.samples,
            seed=seed,
        )
    return dict(
        pairs=int(plan.pairs),
        neighbors=2 if not isinstance(plan, FixedPlan) else plan.neighbors,
        samples=int(plan.samples),
        screen_budget=int(plan.screen_budget),
        seed=seed,
    )


def command_line(spec: RowSpec, plan: FixedPlan | Any, seed: int) -> str:
    """The ``python -m dpcore audit-text`` command that reproduces a row's audit (same JSON,
    apart from timings, on any machine and with any number of workers)."""
    a = audit_arguments(spec, plan, seed)
    cmd = ["python", "-m", "dpcore", "audit-text", "--mechanism", spec.name, "--epsilon", f"{spec.epsilon:g}"]
    if spec.embedding != "glove":
        cmd += ["--embedding", spec.embedding]
    cmd += ["--vocab-size", str(plan.vocab_size)]
    if getattr(plan, "full_vocabulary", False):
        cmd += ["--full-vocabulary"]
    if "words" in a:
        cmd += ["--words", ",".join(a["words"])]
    cmd += ["--pairs", str(a["pairs"]), "--neighbors", str(a["neighbors"])]
    if "screen_budget" in a:
        cmd += ["--screen-budget", str(a["screen_budget"])]
    cmd += ["--samples", str(a["samples"]), "--seed", str(seed), "--json"]
    return shlex.join(cmd)


def rewriter_command(spec: RowSpec, plan: RewriterPlan, seed: int) -> str:
    """The ``python -m dpcore audit-rewriter`` command that reproduces a rewriter row's audit."""
    cmd = ["python", "-m", "dpcore", "audit-rewriter", "--rewriter", spec.name]
    cmd += ["--epsilon", f"{spec.epsilon:g}", "--x", plan.x, "--x-prime", plan.x_prime]
    cmd += ["--rewrites", str(plan.rewrites)]
    if plan.distinguishers:
        cmd += ["--distinguishers", ",".join(plan.distinguishers)]
    cmd += ["--seed", str(seed), "--json"]
    return shlex.join(cmd)


def _audit_rewriter(
    spec: RowSpec, plan: RewriterPlan, seed: int, progress: Callable[[int, int], None] | None = None
) -> tuple[Any, Any]:
    """A rewriter row's audit (one worker: a package's environment starts once)."""
    from dpcore.rewriter.audit import audit_rewriter
    from dpcore.rewriter.distinguish import DISTINGUISHERS
    from dpcore.rewriter.registry import load_rewriter

    rewriter = load_rewriter(spec.name, epsilon=spec.epsilon)
    try:
        result = audit_rewriter(
            rewriter,
            [(plan.x, plan.x_prime)],
            rewrites=plan.rewrites,
            distinguishers=list(plan.distinguishers or DISTINGUISHERS),
            seed=seed,
            workers=1,
            progress=progress,
        )
    finally:
        close = getattr(rewriter, "close", None)
        if callable(close):
            close()
    return rewriter, result


def compact_rewriter_audit(result: Any) -> dict[str, Any]:
    """What a rewriter row keeps of a :class:`~dpcore.rewriter.audit.RewriterAuditResult`: the
    fields a word-level row has where they mean the same (verdict, test, confidence, pairs with
    their bounds, the largest certifiable bound, draws), each pair's chosen event with its counts,
    the contract check, and ``unit: "rewriter"``."""
    d = result.to_dict()
    from dpcore.rewriter.interface import quantity_words

    order = (d.get("claim") or {}).get("order")
    quantity = quantity_words(order)
    pairs = []
    for p in d["pairs"]:
        tests = [t for t in p.get("tests") or [] if t.get("lower_bound") is not None]
        best = max(tests, key=lambda t: float(t["lower_bound"])) if tests else None
        pairs.append(
            {
                "x": p["x"],
                "x_prime": p["x_prime"],
                "tokens": p.get("tokens"),
                "claimed_bound": p["claimed_bound"],
                "lower_bound": p["lower_bound"] if p["lower_bound"] is not None else 0.0,
                "point_estimate": p.get("point_estimate"),
                "violates": bool(p["violates"]),
                "event": p.get("event"),
                "event_source": p.get("distinguisher"),
                "direction": p.get("direction"),
                "counts": None
                if best is None
                else {k: best[k] for k in ("count_x", "count_x_prime", "samples")},
                "error": p.get("outside_premise"),
            }
        )
    tested = [p for p in pairs if p["error"] is None]
    ratios = [
        float(p["lower_bound"]) / float(p["claimed_bound"])
        for p in tested
        if p["claimed_bound"] is not None and float(p["claimed_bound"]) > 0
    ]
    contract = d.get("contract") or {}
    return {
        "unit": "rewriter",
        "verdict": d["verdict"],
        "verdict_text": d["verdict_text"],
        "test": (
            f"Clopper–Pearson lower bound on the {quantity} of one event per direction, chosen on the "
            "selection half of the rewrites (whole outputs, word and character n-grams, side channels, "
            "MiniLM) and bounded on the other half"
        ),
        "confidence": d["confidence"],
        "alpha_per_test": d["alpha_per_test"],
        "max_lower_bound_ratio": max(ratios) if ratios else 0.0,
        "max_detectable_loss": d["largest_certifiable_bound"],
        "exact_verdict": None,
        "vocab_size": None,
        "embedding": None,
        "strategy": "rewriter",
        "samples": d["rewrites_per_input"],
        "samples_drawn": 2 * d["rewrites_per_input"] * len(pairs),
        "selection_rewrites": d["selection_rewrites"],
        "evaluation_rewrites": d["evaluation_rewrites"],
        "distinguishers": d["distinguishers"],
        "elapsed_seconds": d.get("seconds"),
        "pairs_total": len(pairs),
        "pairs_tested": len(tested),
        "violating_pairs_total": sum(1 for p in tested if p["violates"]),
        "pairs": pairs,
        "pooled": [],
        "power": {
            "rewriter_statements": list(d.get("power") or []),
            "text": "; ".join(str(st.get("text")) for st in d.get("power") or []),
        },
        "screen": None,
        "rng_contract": {
            "status": "ok" if contract.get("reproducible") else "not-reproducible",
            "text": (
                f"the same rng gave the same rewrites (probe of {contract.get('probe')}); "
                + (
                    f"copies within a call looked independent (content p = "
                    f"{float(contract.get('content_p_value', 1.0)):.2g})"
                    if contract.get("batched", True)
                    else "one rewrite per call, each with its own random stream"
                )
                if contract.get("reproducible")
                else "the same rng did not give the same rewrites"
            ),
        },
        "calls": {},
        "declaration": None,
        "failed_words": 0,
        "first_failure": None,
        "sanitizer": None,
        "claim": None,
        "claim_text": (d.get("claim") or {}).get("text"),
        "claim_unit": (d.get("claim") or {}).get("unit"),
        "claim_order": order,
        "premise": None,
        "dpcore_version": None,
    }


def _audit(
    spec: RowSpec,
    plan: FixedPlan | Any,
    seed: int,
    workers: int,
    progress: Callable[[int, int], None] | None = None,
) -> tuple[Any, Any]:
    from dpcore.text.vocab import build_vocabulary
    from dpcore.textaudit import audit_text
    from dpcore.textaudit.loaders import load_sanitizer

    vocab = build_vocabulary(
        spec.embedding, size=int(plan.vocab_size), full=bool(getattr(plan, "full_vocabulary", False))
    )
    sanitizer = load_sanitizer(spec.name, epsilon=spec.epsilon, vocab=vocab, params=dict(spec.params))
    result = audit_text(
        sanitizer, vocab=vocab, workers=workers, progress=progress, **audit_arguments(spec, plan, seed)
    )
    return sanitizer, result


def compact_audit(result: Any) -> dict[str, Any]:
    """What a row keeps of a :class:`~dpcore.textaudit.TextAuditResult`: its verdict and test, the
    violating pairs (at most :data:`KEPT_VIOLATIONS`) and the strongest others, the pooled tests
    without their per-claim groups, the power statements, the contract checks and the failures."""
    d = result.to_dict()
    tested = [p for p in d["pairs"] if p.get("error") is None]
    ratio = lambda p: p["lower_bound"] / p["claimed_bound"] if p["claimed_bound"] > 0 else math.inf  # noqa: E731
    tested.sort(key=lambda p: (not p["violates"], -ratio(p) if p["lower_bound"] > 0 else 0.0))
    viol = [p for p in tested if p["violates"]]
    others = [p for p in tested if not p["violates"]]
    keep = viol[:KEPT_VIOLATIONS] + others[:KEPT_PAIRS]
    pooled = []
    for t in d["pooled"]:
        t = {k: v for k, v in t.items() if k != "claim_groups"}
        t["top_pairs"] = list(t.get("top_pairs", []))[:5]
        pooled.append(t)
    screen = d.get("screen")
    if screen is not None:
        screen = {k: v for k, v in screen.items() if k != "top_words"} | {
            "top_words": list(screen.get("top_words", []))[:10]
        }
    contract = d.get("rng_contract") or {}
    calls = d.get("calls") or {}
    declaration = d.get("declaration")
    failures = d.get("failures") or {}
    return {
        "verdict": d["verdict"],
        "verdict_text": d["verdict_text"],
        "test": d["test"],
        "confidence": d["confidence"],
        "alpha_per_test": d["alpha_per_test"],
        "max_lower_bound_ratio": d["max_lower_bound_ratio"],
        "max_detectable_loss": d["max_detectable_loss"],
        "exact_verdict": d["exact_verdict"],
        "vocab_size": d["vocab_size"],
        "embedding": d["embedding"],
        "strategy": d["strategy"],
        "samples": d["samples"],
        "samples_drawn": d["samples_drawn"],
        "elapsed_seconds": d["elapsed_seconds"],
        "pairs_total": len(d["pairs"]),
        "pairs_tested": d["pairs_tested"],
        "violating_pairs_total": len(viol),
        "pairs": keep,
        "pooled": pooled,
        "power": d.get("power") or {},
        "screen": screen,
        "rng_contract": {k: contract.get(k) for k in ("status", "text")},
        "calls": {k: calls.get(k) for k in ("status", "audited_as", "text", "verdict_call_sizes")}
        | {
            k: {j: (calls.get(k) or {}).get(j) for j in ("status", "text", "complete")}
            for k in ("stage_one_size", "stage_two")
            if calls.get(k)
        },
        "declaration": None
        if declaration is None
        else {k: declaration.get(k) for k in ("status", "text", "p_value")},
        "failed_words": len(failures),
        "first_failure": None
        if not failures
        else f"{next(iter(failures))!r}: {next(iter(failures.values()))}",
        "sanitizer": d.get("sanitizer"),
        "claim": d.get("claim"),
        "premise": d.get("premise"),
        "dpcore_version": d.get("dpcore_version"),
    }


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    if not str(exc).startswith(type(exc).__name__) and not hasattr(exc, "dpcore_message"):
        from dpcore.validation import DPCoreError

        if not isinstance(exc, DPCoreError):
            text = f"{type(exc).__name__}: {text}"
    home = os.path.expanduser("~")
    if len(home) > 1:  # the table is published: no one's home folder in it
        text = text.replace(home, "~")
    if len(text) > WHY_CHARS:  # one line in a table: cut at a word, and say so
        text = text[:WHY_CHARS].rsplit(" ", 1)[0].rstrip(" ,;:") + " …"
    return text


def run_check(
    spec: RowSpec,
    seed: int,
    workers: int,
    *,
    plan: FixedPlan | RewriterPlan | None = None,
    full_vocabulary: bool = False,
    evidence: bool = False,
) -> dict[str, Any]:
    """The row's check: ``plan`` (default: a control's own fixed setting, else :data:`CHECK_PLAN`,
    over the full vocabulary with ``full_vocabulary``); deterministic in its seed, so ``verdicts
    --check`` reruns it and compares verdicts. With ``evidence``, a rewriter row's check also
    returns what it saw (:func:`_rewriter_evidence`), which ``verdicts --check --json`` reports."""
    if spec.rewriter is not None:
        plan = plan if isinstance(plan, RewriterPlan) else None
        return _run_rewriter_check(spec, seed, plan, evidence=evidence)
    if plan is None:
        plan = spec.fixed if spec.fixed is not None else CHECK_PLAN
        plan = replace(plan, full_vocabulary=bool(full_vocabulary))
    t0 = time.perf_counter()
    try:
        _, r = _audit(spec, plan, seed, workers)
    except Exception as exc:  # a third-party library may raise anything: the check says so
        return {"plan": plan.to_dict(), "verdict": "cannot-run", "why": _one_line(exc), "seconds": 0.0}
    return {
        "plan": plan.to_dict(),
        "command": command_line(spec, plan, seed),
        "verdict": outcome(r.verdict, r.premise),
        "max_lower_bound_ratio": r.max_lower_bound_ratio,
        "seconds": round(time.perf_counter() - t0, 2),
    }


def _failed(row: dict[str, Any], exc: BaseException, t0: float) -> dict[str, Any]:
    """``row`` as a row that could not run: its one-line why and its seconds so far."""
    row["why"] = _one_line(exc)
    row["seconds"] = round(time.perf_counter() - t0, 1)
    return row


def _rewriter_evidence(result: Any) -> list[dict[str, Any]]:
    """What a rewriter check saw, per pair: the claimed and certified bounds, the event and its
    counts, a few rewrites of each input, and whether the same rng gave the same rewrites."""
    d = result.to_dict()
    reproducible = (d.get("contract") or {}).get("reproducible")
    return [
        {
            "x": p["x"],
            "x_prime": p["x_prime"],
            "tokens": p.get("tokens"),
            "claimed_bound": p["claimed_bound"],
            "lower_bound": p["lower_bound"],
            "violates": bool(p["violates"]),
            "event": p.get("event"),
            "examples": p.get("examples"),
            "reproducible": reproducible,
        }
        for p in d["pairs"]
    ]


def _run_rewriter_check(
    spec: RowSpec, seed: int, plan: RewriterPlan | None, *, evidence: bool = False
) -> dict[str, Any]:
    """A rewriter row's check: its pair at ``check_rewrites`` (deterministic in the seed)."""
    assert spec.rewriter is not None
    plan = plan or spec.rewriter.checked()
    t0 = time.perf_counter()
    try:
        _, r = _audit_rewriter(spec, plan, seed)
    except Exception as exc:  # a package may raise anything: the check says so
        return {"plan": plan.to_dict(), "verdict": "cannot-run", "why": _one_line(exc), "seconds": 0.0}
    a = compact_rewriter_audit(r)
    out = {
        "plan": plan.to_dict(),
        "command": rewriter_command(spec, plan, seed),
        "verdict": a["verdict"],
        "max_lower_bound_ratio": a["max_lower_bound_ratio"],
        "seconds": round(time.perf_counter() - t0, 2),
    }
    if evidence:
        out["evidence"] = _rewriter_evidence(r)
    return out


def _run_rewriter_row(
    spec: RowSpec,
    row: dict[str, Any],
    *,
    seed: int,
    check: bool,
    say: Callable[[str], None],
    progress: Callable[[int, int], None] | None,
) -> dict[str, Any]:
    """Audit a rewriter row (:class:`~dpcore.verdicts.rows.RewriterPlan`) into ``row``."""
    plan = spec.rewriter
    assert plan is not None
    t0 = time.perf_counter()
    row["plan"] = {"kind": "rewriter"} | plan.to_dict()
    row["command"] = rewriter_command(spec, plan, seed)
    try:
        say(f"rewriting each of its two texts {plan.rewrites:,} times")
        rewriter, result = _audit_rewriter(spec, plan, seed, progress)
    except Exception as exc:  # a package may raise anything: the row says why
        return _failed(row, exc, t0)
    row["status"] = "ran"
    row["why"] = None
    row["audit"] = compact_rewriter_audit(result)
    row["claim"] = rewriter.claim.citation or rewriter.claim.describe()
    row["guarantee"] = "rewriter"
    if check:
        say("running its check")
        row["check"] = _run_rewriter_check(spec, seed, None)
    row["seconds"] = round(time.perf_counter() - t0, 1)
    return row


def run_row(
    spec: RowSpec,
    *,
    minutes: float,
    seed: int,
    workers: int,
    check: bool = True,
    on_stage: Callable[[str], None] | None = None,
    progress: Callable[[int, int], None] | None = None,
    full_vocabulary: bool = False,
) -> dict[str, Any]:
    """Plan, audit and record one row; never raises for the sanitizer's own failures.

    Parameters
    ----------
    spec:
        The row (:func:`dpcore.verdicts.rows.catalogue`).
    minutes:
        The fitted row's time budget (a control's fixed setting ignores it).
    seed:
        The audit's seed (the pilot uses ``seed + 1``).
    workers:
        Processes the audit draws with.
    check:
        Also run the row's check (:func:`run_check`).
    on_stage:
        Called with one line as the row moves on (plan, audit, check).
    progress:
        ``progress(done, total)`` of the row's audit (draws).
    full_vocabulary:
        Audit over the embedding's top-|V| words with the offensive ones kept (the shipped
        table's setting); False leaves them out (:mod:`dpcore.text.offensive`). The plan records it.
    """
    say = on_stage or (lambda _line: None)
    t0 = time.perf_counter()
    row: dict[str, Any] = {
        "name": spec.name,
        "group": spec.group,
        "library": spec.library,
        "library_version": library_version(spec.library),
        "summary": spec.summary,
        "epsilon": spec.epsilon,
        "embedding": spec.embedding,
        "expected": spec.expected,
        "seed": seed,
        "minutes": minutes,
        "date": now_iso(),
        "machine": machine(),
        "workers": workers,
        "status": "cannot-run",
        "why": spec.unavailable,
        "plan": None,
        "command": None,
        "audit": None,
        "tpr_at_fpr": None,
        "check": None,
        "claim": None,
        "guarantee": None,
    }
    if spec.unavailable is not None:
        row["seconds"] = 0.0
        return row
    if spec.rewriter is not None:
        return _run_rewriter_row(spec, row, seed=seed, check=check, say=say, progress=progress)
    try:
        if spec.fixed is not None:
            plan: Any = replace(spec.fixed, full_vocabulary=bool(full_vocabulary))
            row["plan"] = {"kind": "fixed"} | plan.to_dict()
        else:
            say("probing its speed and running the pilot")
            plan = plan_row(
                spec.name,
                minutes=minutes,
                workers=workers,
                epsilon=spec.epsilon,
                embedding=spec.embedding,
                full_vocabulary=full_vocabulary,
            )
            row["plan"] = {"kind": "fitted"} | plan.to_dict()
        say(
            f"auditing at |V| = {plan.vocab_size:,}"
            + (f", {plan.screen_budget:,} screen draws" if getattr(plan, "screen_budget", None) else "")
            + f", T = {plan.samples:,}"
        )
        row["command"] = command_line(spec, plan, seed)
        sanitizer, result = _audit(spec, plan, seed, workers, progress)
    except Exception as exc:  # a third-party library may raise anything: the row says why
        return _failed(row, exc, t0)
    row["status"] = "ran"
    row["why"] = None
    row["audit"] = compact_audit(result)
    row["tpr_at_fpr"] = result.observer(max_pairs=0)["tpr_at_fpr"]
    row["claim"] = getattr(sanitizer, "citation", None) or (
        "ε-LDP" if result.guarantee == "ldp" else "ε·d metric LDP"
    )
    row["guarantee"] = result.guarantee
    if spec.fixed is not None:  # a fixed row is its own check: the same deterministic audit
        row["check"] = {
            "plan": plan.to_dict(),
            "command": row["command"],
            "verdict": result.verdict,
            "max_lower_bound_ratio": result.max_lower_bound_ratio,
            "seconds": round(time.perf_counter() - t0, 2),
        }
    elif check:
        say("running its check")
        row["check"] = run_check(spec, seed, workers, full_vocabulary=full_vocabulary)
    row["seconds"] = round(time.perf_counter() - t0, 1)
    return row


def run_rows(
    specs: Sequence[RowSpec],
    *,
    minutes: float,
    seed: int,
    workers: int,
    engine: str = "local",
    address: str | None = None,
    on_row: Callable[[dict[str, Any]], None] | None = None,
    on_stage: Callable[[str, str], None] | None = None,
    progress: Callable[[str], Callable[[int, int], None] | None] | None = None,
    full_vocabulary: bool = False,
) -> list[dict[str, Any]]:
    """Run ``specs`` and return their rows in order (each audited over the full vocabulary with
    ``full_vocabulary``, as :func:`run_row`).

    ``engine="local"``: one after another in this process, each audit drawing with ``workers``
    processes. ``engine="ray"``: every row is a Ray task asking for ``workers`` CPUs, run in
    parallel on the cluster at ``address`` (a local Ray when None). ``on_row`` is called with each
    row as it finishes (to save progress); ``on_stage(name, line)`` as a local row moves on;
    ``progress(name)`` gives a local row's audit its ``progress(done, total)`` callback.
    """
    if engine == "ray":
        return _run_ray(
            specs,
            minutes=minutes,
            seed=seed,
            workers=workers,
            address=address,
            on_row=on_row,
            full_vocabulary=full_vocabulary,
        )
    rows = []
    for spec in specs:
        stage = None if on_stage is None else (lambda line, n=spec.name: on_stage(n, line))
        bar = None if progress is None else progress(spec.name)
        row = run_row(
            spec,
            minutes=minutes,
            seed=seed,
            workers=workers,
            on_stage=stage,
            progress=bar,
            full_vocabulary=full_vocabulary,
        )
        rows.append(row)
        if on_row is not None:
            on_row(row)
    return rows


def _run_ray(
    specs: Sequence[RowSpec],
    *,
    minutes: float,
    seed: int,
    workers: int,
    address: str | None,
    on_row: Callable[[dict[str, Any]], None] | None,
    full_vocabulary: bool = False,
) -> list[dict[str, Any]]:
    from dpcore.executor import run_tasks

    out: list[dict[str, Any] | None] = [None] * len(specs)
    for i, row in run_tasks(
        _ray_row,
        specs,
        workers=max(workers, os.cpu_count() or 1),
        state=(minutes, seed, workers, full_vocabulary),
        engine="ray",
        address=address,
        cpus_per_task=workers,
        in_flight=len(specs),
        what="the verdict table",
    ):
        out[i] = row
        if on_row is not None:
            on_row(row)
    return [r for r in out if r is not None]


def _ray_row(settings: tuple[float, int, int, bool], spec: RowSpec) -> dict[str, Any]:
    minutes, seed, workers, full_vocabulary = settings
    return run_row(spec, minutes=minutes, seed=seed, workers=workers, full_vocabulary=full_vocabulary)
