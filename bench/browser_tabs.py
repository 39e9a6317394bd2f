"""Benchmark: the browser's CPU for a page load in a new tab against one reused tab, in one run.

Why the browser tests share one tab (``tests/e2e/conftest.py``, issue 59): a test's page load
used to open a new tab of the persistent profile. Each new tab gets a new renderer process that
must start and compile Streamlit's and Plotly's code again (from the profile's code cache, but
still cold); one reused tab keeps its renderer, warm, from load to load.

One ``streamlit run app.py`` server on this machine and headless Debian Chromium (the browser
tests' flags). Every page is opened once first (the server's caches fill, the profile's cache
too). Then ``--reps`` rounds of the eight pages below, two ways, each in a profile of its own:

- **new tab**: a new tab per load, closed after it (what the tests did);
- **one tab**: one tab goes from page to page (``page.goto``: a new document and a new Streamlit
  session each time, as a test starts).

A load ends when a Plotly figure is drawn and the script has been idle for a second
(``tests/e2e/idle.py``). CPU is the whole machine's (``/proc/stat``, all processes: the renderer,
the browser's other processes and the server), over the round; nothing else should run. Prints
both, per load, and their ratio, and writes them to ``bench/results/browser_tabs.txt``.

Run: ``python bench/browser_tabs.py`` (``--reps 2`` by default).
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from app_memory import free_port, start_server, wait_healthy  # noqa: E402

OUT = ROOT / "bench" / "results" / "browser_tabs.txt"
PAGES = [
    "sensitivity",
    "audit",
    "accounting",
    "verdicts",
    "audit_text",
    "sanitize",
    "audit_rewriter",
    "rewriter_calibration",
]


def machine_cpu_seconds() -> float:
    """Busy CPU seconds of the whole machine since boot (every core; idle and iowait left out)."""
    with open("/proc/stat", encoding="ascii") as fh:
        v = [int(x) for x in fh.readline().split()[1:]]
    return (sum(v) - v[3] - v[4]) / os.sysconf("SC_CLK_TCK")


def rounds(pw, url: str, reuse: bool, reps: int, profile: str) -> tuple[float, float]:  # type: ignore[no-untyped-def]
    """(machine CPU seconds, wall seconds) per load over ``reps`` rounds of :data:`PAGES`."""
    from tests.e2e.conftest import CHROMIUM_ARGS, _chromium_path
    from tests.e2e.idle import wait_idle

    ctx = pw.chromium.launch_persistent_context(
        profile,
        executable_path=_chromium_path(),
        headless=True,
        args=CHROMIUM_ARGS,
        viewport={"width": 1280, "height": 720},
    )
    try:
        warm = ctx.new_page()
        for p in PAGES:  # the profile's HTTP and code caches fill
            warm.goto(f"{url}/{p}")
            wait_idle(warm, 180_000)
        warm.close()
        shared = ctx.new_page() if reuse else None
        c0, t0 = machine_cpu_seconds(), time.monotonic()
        for _ in range(reps):
            for p in PAGES:
                page = shared if shared is not None else ctx.new_page()
                page.goto(f"{url}/{p}")
                page.wait_for_selector(".js-plotly-plot", timeout=180_000)
                wait_idle(page, 180_000)
                if shared is None:
                    page.close()
        loads = reps * len(PAGES)
        return (machine_cpu_seconds() - c0) / loads, (time.monotonic() - t0) / loads
    finally:
        ctx.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=2, help="rounds of the eight pages (default 2)")
    args = parser.parse_args()
    if args.reps < 1:
        raise SystemExit("--reps must be at least 1")
    from playwright.sync_api import sync_playwright

    port = free_port()
    url = f"http://127.0.0.1:{port}"
    tmp = Path(tempfile.mkdtemp(prefix="dpcore-tabs-"))
    log = (tmp / "server.log").open("w")
    proc = start_server(port, log)
    try:
        wait_healthy(url, proc)
        with sync_playwright() as pw:
            new = rounds(pw, url, False, args.reps, str(tmp / "new"))
            one = rounds(pw, url, True, args.reps, str(tmp / "one"))
    finally:
        proc.terminate()
        proc.wait(timeout=30)
        log.close()
        shutil.rmtree(tmp, ignore_errors=True)
    lines = [
        f"{len(PAGES)} pages x {args.reps} rounds, {os.cpu_count()} cores, load {os.getloadavg()[0]:.2f}",
        f"new tab per load: {new[0]:.2f} s of CPU, {new[1]:.2f} s of wall a load",
        f"one reused tab:   {one[0]:.2f} s of CPU, {one[1]:.2f} s of wall a load",
        f"ratio (new / one): CPU {new[0] / one[0]:.2f}, wall {new[1] / one[1]:.2f}",
    ]
    print("\n".join(lines))
    OUT.parent.mkdir(parents=True, exist_ok=True)
    head = f"python bench/browser_tabs.py --reps {args.reps}, {time.strftime('%Y-%m-%d')}"
    OUT.write_text("\n".join([head, *lines]) + "\n")


if __name__ == "__main__":
    main()
