"""``python -m dpcore verdicts``: which public text sanitizers keep their claims.

Runs the default audit on every sanitizer in reach (:mod:`dpcore.verdicts`), or checks the shipped
table (``--check``), or prints it as Markdown (``--markdown``).
"""

from __future__ import annotations

import argparse
import contextlib
import shlex
import sys
import time
from pathlib import Path
from typing import Any

from dpcore.commands.common import (
    add_full_vocabulary_argument,
    emit_json,
    stderr_progress,
    stdout_reserved,
)
from dpcore.validation import DPCoreError


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "verdicts",
        help="which public text sanitizers keep their claims: audit every one in reach (or --check)",
        description=(
            "Run the default text audit on every word-level sanitizer in reach: dpcore's text "
            "mechanisms and the k-RR reference, pyPANTERA's, mldp-text's where its environment is "
            "installed, and the flawed controls (each at a setting where it breaks its claim; every one "
            "must come out 'violates'); and the published packages as shipped in their own environments "
            "(group packages: the rewriters of dpmlm, preempt and dp-fusion-lib each audited on a pair of "
            "texts with audit-rewriter, dp-diffractor's sanitizer on named words, and a row saying why for "
            "each package not run yet). Each row's vocabulary size and budget are fitted to --minutes "
            "from the sanitizer's probed speed, for power; a row that cannot run says why in one line "
            "and stays in the table. Rows run one after another on this machine (each audit on "
            "--workers processes), or in parallel as Ray tasks with --engine ray. --output writes the "
            "table (the file the dashboard page reads; the shipped one is dpcore/data/verdicts.json), "
            "saved after every row; --resume keeps the rows an earlier run of the same settings "
            "already wrote there. --check reruns a cheap sample (the controls and one row per library) "
            "of the shipped table (or --output) and exits 1 when a verdict or a library version "
            "differs. --markdown prints the table as Markdown, running nothing. 'No violation found' "
            "is not 'private': each row names its test, size and confidence, and what a flaw would have "
            "had to be to be caught. Rows audit dpcore's default vocabularies, which leave out slurs and "
            "insults; --full-vocabulary audits the full ones (the shipped table's setting)."
        ),
    )
    p.add_argument("--minutes", default="10", help="time per fitted row, in minutes (default 10; 0.05..600)")
    p.add_argument(
        "--only",
        default=None,
        help="comma-separated row names or groups (control, dpcore, pyPANTERA, mldp-text, packages)",
    )
    p.add_argument(
        "--engine", default="local", choices=("local", "ray"), help="where rows run (default local)"
    )
    p.add_argument(
        "--address", default=None, help="--engine ray: a Ray cluster to join (default: a local Ray)"
    )
    p.add_argument(
        "--workers", default=None, help="processes (or Ray CPUs) per row (default: this machine's cores)"
    )
    p.add_argument("--seed", default="0", help="the audits' seed (default 0)")
    add_full_vocabulary_argument(p)
    p.add_argument("--output", default=None, help="write the table here (JSON), saved after every row")
    p.add_argument(
        "--resume", action="store_true", help="keep the rows --output already holds for these settings"
    )
    p.add_argument("--check", action="store_true", help="rerun a cheap sample of the table; exit 1 if stale")
    p.add_argument(
        "--markdown", action="store_true", help="print the table (shipped, or --output) as Markdown"
    )
    p.add_argument("--json", action="store_true", help="print the table (or the check) as one JSON object")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if args.check and args.markdown:
        raise DPCoreError("--check and --markdown are separate modes: give one")
    if args.markdown and args.json:
        raise DPCoreError("--markdown prints Markdown: --json is for a run or --check")
    if args.check:
        return _check(args)
    if args.markdown:
        return _markdown(args)
    return _run(args)


def _path(args: argparse.Namespace) -> Path:
    from dpcore.verdicts.document import SHIPPED_PATH

    return Path(args.output) if args.output else SHIPPED_PATH


def _markdown(args: argparse.Namespace) -> int:
    from dpcore.verdicts.document import load
    from dpcore.verdicts.markdown import markdown_table

    print(markdown_table(load(_path(args))))
    return 0


def _settings(args: argparse.Namespace) -> tuple[float, int, int, list[str] | None]:
    from dpcore.parallel import resolve_workers
    from dpcore.validation import check_finite_float, check_int

    minutes = check_finite_float(args.minutes, name="--minutes", min_value=0.05, max_value=600)
    seed = check_int(args.seed, name="--seed", min_value=0, max_value=2**63 - 1)
    workers = resolve_workers(args.workers)
    only = None
    if args.only is not None:
        only = [n.strip() for n in str(args.only).split(",") if n.strip()]
        if not only:
            raise DPCoreError("--only must name at least one row")
    if args.address is not None and args.engine != "ray":
        raise DPCoreError("--address is for --engine ray")
    if args.resume and not args.output:
        raise DPCoreError("--resume needs --output: the file whose rows it keeps")
    return minutes, seed, workers, only


def _command(argv_tail: list[str]) -> str:
    return shlex.join(["python", "-m", "dpcore", "verdicts", *argv_tail])


def _argv_tail(args: argparse.Namespace) -> list[str]:
    out = ["--minutes", f"{float(args.minutes):g}", "--seed", str(args.seed)]
    if args.only is not None:
        out += ["--only", str(args.only)]
    if args.engine != "local":
        out += ["--engine", args.engine]
    if args.address is not None:
        out += ["--address", str(args.address)]
    if args.workers is not None:
        out += ["--workers", str(args.workers)]
    if args.output is not None:
        out += ["--output", str(args.output)]
    if getattr(args, "full_vocabulary", False):
        out += ["--full-vocabulary"]
    return out


def _run(args: argparse.Namespace) -> int:
    from dpcore import __version__
    from dpcore.files import write_atomic
    from dpcore.jsonutil import dumps
    from dpcore.verdicts.document import choose_check_rows, load, new_document, resumable
    from dpcore.verdicts.rows import catalogue, select
    from dpcore.verdicts.run import machine, now_iso, run_rows

    minutes, seed, workers, only = _settings(args)
    specs = select(catalogue(), only)
    kept: dict[str, dict[str, Any]] = {}
    earlier: dict[str, Any] = {}  # the header of the run whose rows are kept
    out_path = Path(args.output) if args.output else None
    if args.resume and out_path is not None and out_path.is_file():
        old = load(out_path, rows_only=True)
        kept = resumable(old, minutes=minutes, seed=seed, full_vocabulary=args.full_vocabulary)
        earlier = old.get("header") if kept and isinstance(old.get("header"), dict) else {}
    todo = [s for s in specs if s.name not in kept]
    rows: dict[str, dict[str, Any]] = {s.name: kept[s.name] for s in specs if s.name in kept}
    t0 = time.monotonic()
    header = {
        "command": _command(_argv_tail(args)),
        "started": earlier.get("started") or now_iso(),  # a resumed run began with its first part
        "finished": None,
        "machine": machine(),
        "dpcore_version": __version__,
        "minutes": minutes,
        "seed": seed,
        "workers": workers,
        "engine": args.engine,
        "confidence": 0.95,
        "complete": False,
        "seconds": 0.0,
        "rows_kept_from_earlier_run": sorted(kept),
        "check_rows": [],
    }

    def document(final: bool) -> dict[str, Any]:
        ordered = [rows[s.name] for s in specs if s.name in rows]
        h = dict(header)
        h["seconds"] = round(float(earlier.get("seconds") or 0.0) + time.monotonic() - t0, 1)
        h["check_rows"] = choose_check_rows(ordered)
        # rows kept from an earlier part may have run elsewhere: the header names every machine
        h["machine"] = "; ".join(dict.fromkeys(str(r.get("machine") or h["machine"]) for r in ordered))
        if final:
            h["finished"] = now_iso()
            h["complete"] = only is None and len(ordered) == len(specs)
        return new_document(h, ordered)

    def save(final: bool = False) -> None:
        if out_path is not None and rows:
            write_atomic(out_path, dumps(document(final), indent=1) + "\n")

    n = len(specs)
    done = [len(kept)]

    def on_row(row: dict[str, Any]) -> None:
        rows[row["name"]] = row
        done[0] += 1
        from dpcore.verdicts.wording import headline

        print(
            f"verdicts: [{done[0]}/{n}] {row['name']}: {headline(row)} ({row['seconds']:.0f} s)",
            file=sys.stderr,
            flush=True,
        )
        save()

    def on_stage(name: str, line: str) -> None:
        print(f"verdicts: [{done[0] + 1}/{n}] {name}: {line}", file=sys.stderr, flush=True)

    def bars(name: str) -> Any:
        return stderr_progress(f"verdicts: {name}", enabled=True)

    if kept:
        print(f"verdicts: keeping {len(kept)} row(s) of {out_path}; running {len(todo)}", file=sys.stderr)
    est = sum(0.0 if s.fixed is not None or s.unavailable else minutes for s in todo)
    print(
        f"verdicts: {len(todo)} row(s) to run, about {est:.0f} min of fitted rows plus the controls "
        f"({args.engine}, {workers} worker(s) per row)",
        file=sys.stderr,
        flush=True,
    )
    reserve = stdout_reserved() if args.json else contextlib.nullcontext()
    with reserve:  # with --json, stdout holds the JSON alone
        run_rows(
            todo,
            minutes=minutes,
            seed=seed,
            workers=workers,
            engine=args.engine,
            address=args.address,
            on_row=on_row,
            on_stage=on_stage,
            progress=bars,
            full_vocabulary=args.full_vocabulary,
        )
    doc = document(final=True)
    save(final=True)
    if args.json:
        emit_json(doc)
    else:
        _print_table(doc)
        if out_path is not None:
            print(f"wrote {out_path} ({len(doc['rows'])} rows)")
    return 0


def _print_table(doc: dict[str, Any]) -> None:
    from dpcore.verdicts.wording import headline

    h = doc["header"]
    print(f"{h['command']}  ({h['machine']}; {h['started']} to {h['finished']})")
    width = max(len(r["name"]) for r in doc["rows"])
    for r in doc["rows"]:
        ver = r["library_version"] or "not installed"
        print(f"{r['name']:<{width}}  {r['library']} {ver:<8}  {headline(r)}")


def _check(args: argparse.Namespace) -> int:
    from dpcore.parallel import resolve_workers
    from dpcore.verdicts.check import check_document
    from dpcore.verdicts.document import load

    path = _path(args)
    doc = load(path)
    workers = resolve_workers(args.workers)
    t0 = time.monotonic()
    if args.json:
        with stdout_reserved():
            report = check_document(doc, workers=workers, progress=_check_progress)
    else:
        report = check_document(doc, workers=workers, progress=_check_progress)
    report["path"] = str(path)
    report["seconds"] = round(time.monotonic() - t0, 1)
    if args.json:
        emit_json(report)
    elif report["differences"]:
        d = report["differences"]
        print(
            f"{path} is stale: {d[0]}"
            + (f" (and {len(d) - 1} more)" if len(d) > 1 else "")
            + "; rerun python -m dpcore verdicts"
        )
    else:
        skipped = "; ".join(report["skipped"])
        print(
            f"{path} is current: {len(report['rerun'])} row(s) rerun with the same verdicts, every installed "
            f"library at its recorded version ({report['seconds']:.0f} s)"
            + (f"; not compared: {skipped}" if skipped else "")
        )
    return 1 if report["differences"] else 0


def _check_progress(line: str) -> None:
    print(f"verdicts --check: {line}", file=sys.stderr, flush=True)
