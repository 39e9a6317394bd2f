"""Benchmark: the live actions a speaker tries on stage, each against issue 63's 20 s budget.

Each action runs in a fresh Python process (every cache cold, as on a fresh server): the page is
opened once at its defaults (untimed: the speaker already has it open), then the action is made
and the page's script is timed until it has finished (Streamlit's ``AppTest``: the server's
work, not the browser's drawing, which ``bench/page_timing.py``'s "after one widget change"
column measures for the pages' lighter changes, 0.2–0.8 s). An action that opens a link is
timed from the link (the first run of the page).

- **DP-MLM chosen on /sanitize** (the mechanism box → ``dp-mlm``);
- **a fourth ε on /attack** (ε 2 added to the defaults 1, 3, 10);
- **a third mechanism on /attack**: each registered mechanism added to the defaults in turn
  with ``--all-mechanisms``, else DP-MLM (the slowest: one masked-LM pass per token);
- **n up to 4,096 on /audit** (largest n → 4,096);
- **/audit_text?how=screen** (the link opened: the whole-vocabulary screen at its defaults).

``--load N`` keeps N busy processes beside the runs (a loaded machine, as ``ci-like --load``);
the 1-minute load average is printed per row. A row names the exception the page raised, if any.

Run: ``python bench/live_actions.py [--load 1] [--all-mechanisms]``; writes
``bench/results/live_actions.txt`` (``--only NAME …`` times some actions and writes nothing).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "bench" / "results" / "live_actions.txt"
#: Issue 63's budget for a live action on 2 cores.
BUDGET_S = 20.0

_CHILD = r"""
import json, sys, time
from streamlit.testing.v1 import AppTest
page, query, action, arg = sys.argv[1], json.loads(sys.argv[2]), sys.argv[3], sys.argv[4]
at = AppTest.from_file(page, default_timeout=900)
for k, v in query.items():
    at.query_params[k] = v
if action == "open":
    t = time.perf_counter(); at.run(); dt = time.perf_counter() - t
else:
    at.run()
    if action == "select":
        key, value = arg.split("=", 1)
        at.selectbox(key=key).set_value(value)
    elif action == "add":
        key, value = arg.split("=", 1)
        ms = at.multiselect(key=key)
        ms.set_value(list(ms.value) + [value])
    t = time.perf_counter(); at.run(); dt = time.perf_counter() - t
errors = [e.message for e in at.exception]  # (st.error also shows verdicts: not counted)
print(json.dumps({"seconds": dt, "errors": errors}))
"""


def actions(all_mechanisms: bool) -> list[tuple[str, str, dict[str, str], str, str]]:
    """(name, page, query, action, argument) of every timed action."""
    pages = ROOT / "pages"
    out = [
        ("DP-MLM chosen on /sanitize", str(pages / "sanitize.py"), {}, "select", "mech=dp-mlm"),
        ("a fourth ε (2) on /attack", str(pages / "attack.py"), {}, "add", "eps=2"),
    ]
    if all_mechanisms:
        sys.path.insert(0, str(ROOT))
        from dpcore.attack.page_view import DEFAULT_MECHANISMS
        from dpcore.text import TEXT_MECHANISMS

        extra = [m for m in TEXT_MECHANISMS.names() if m not in DEFAULT_MECHANISMS]
    else:
        extra = ["dp-mlm"]
    out += [
        (f"a third mechanism ({m}) on /attack", str(pages / "attack.py"), {}, "add", f"mechs={m}")
        for m in extra
    ]
    out += [
        ("n up to 4,096 on /audit", str(pages / "audit.py"), {}, "select", "nmax=4096"),
        ("/audit_text?how=screen opened", str(pages / "audit_text.py"), {"how": "screen"}, "open", ""),
    ]
    return out


def _burn() -> None:  # pragma: no cover - a busy core for --load
    while True:
        pass


def time_action(page: str, query: dict[str, str], action: str, arg: str) -> dict:
    """One action in a fresh process: its seconds and any error the page showed."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run(
        [sys.executable, "-c", _CHILD, page, json.dumps(query), action, arg],
        capture_output=True,
        text=True,
        check=False,
        cwd=str(ROOT),
        env=env,
    )
    if out.returncode != 0:
        raise SystemExit(f"the action on {page} failed:\n{out.stderr[-2000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--load", type=int, default=0, help="busy processes beside the runs (default 0)")
    ap.add_argument("--all-mechanisms", action="store_true", help="time every third mechanism")
    ap.add_argument("--only", nargs="*", help="substrings of action names to time; no file written")
    args = ap.parse_args()
    todo = [a for a in actions(args.all_mechanisms) if not args.only or any(s in a[0] for s in args.only)]
    burners = [mp.Process(target=_burn, daemon=True) for _ in range(args.load)]
    for b in burners:
        b.start()
    rows = []
    try:
        for name, page, query, action, arg in todo:
            la = os.getloadavg()[0]
            got = time_action(page, query, action, arg)
            verdict = "within" if got["seconds"] <= BUDGET_S else "OVER"
            err = f"; page error: {got['errors'][0][:80]}" if got["errors"] else ""
            row = f"| {name} | {got['seconds']:.1f} s | {verdict} | {la:.2f} |{err}"
            print(row, flush=True)
            rows.append((row, got["seconds"]))
    finally:
        for b in burners:
            b.terminate()
    over = [r for r, s in rows if s > BUDGET_S]
    text = "\n".join(
        [
            f"# python bench/live_actions.py{' --load ' + str(args.load) if args.load else ''}"
            f"{' --all-mechanisms' if args.all_mechanisms else ''} — "
            f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {os.cpu_count()} cores, "
            f"{args.load} busy process(es) beside; each action in a fresh process (caches cold), "
            "the page's script timed (AppTest), not the browser's drawing",
            "",
            "| action | script run | budget 20 s | 1-min load |",
            "|---|---|---|---|",
            *[r for r, _ in rows],
            "",
            f"Budget: {len(rows) - len(over)} of {len(rows)} actions within {BUDGET_S:.0f} s.",
        ]
    )
    print("\n" + text)
    if not args.only:
        OUT.parent.mkdir(parents=True, exist_ok=True)
        OUT.write_text(text + "\n")
        print(f"\nwrote {OUT.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
