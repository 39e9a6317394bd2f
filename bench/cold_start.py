"""Benchmark: cold start of the dashboard, from ``streamlit run app.py`` to the first page served.

For each run: headless Chromium is launched first (not timed); then the clock starts, the server
process is started, ``/_stcore/health`` and ``/`` are polled on localhost until ``/`` answers
HTTP 200, and Playwright opens ``/`` and waits until the app script has rendered the home page's
title. The time printed is process start → title visible. After each run the server's memory
maps are checked for libtorch: torch must not load at start-up. Prints every run and the median.

Run: ``python bench/cold_start.py`` (``--runs N``, default 3; ``--python VENV/bin/python`` and
``--root DIR`` serve with another interpreter or checkout, as in ``bench/app_memory.py``).
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from app_memory import free_port, start_server, torch_loaded, tree_rss_bytes

TITLE = "dpcore: an open laboratory for differential privacy in NLP"
TARGET_S = 10.0


def _get_ok(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2) as r:
            return r.status == 200
    except OSError:
        return False


def one_run(  # type: ignore[no-untyped-def]
    browser, python: str = sys.executable, root: Path | None = None
) -> tuple[float, float, float, bool]:
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    log_path = Path(tempfile.gettempdir()) / "dpcore-cold_start-server.log"
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with log_path.open("w") as log:
        t0 = time.perf_counter()
        proc = start_server(port, log, python, root) if root else start_server(port, log, python)
        try:
            deadline = t0 + 120
            while not (_get_ok(f"{url}/_stcore/health") and _get_ok(f"{url}/")):
                if proc.poll() is not None or time.perf_counter() > deadline:
                    raise SystemExit("the server did not serve / within 120 s")
                time.sleep(0.05)
            t_http = time.perf_counter() - t0
            page = browser.new_page()
            page.goto(url)
            page.get_by_role("heading", name=TITLE).wait_for(state="visible", timeout=120_000)
            t_page = time.perf_counter() - t0
            page.close()
            rss = tree_rss_bytes(proc.pid) / 2**20
            torch = torch_loaded(proc.pid)
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
    return t_http, t_page, rss, torch


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--python", default=sys.executable, help="interpreter that serves the app")
    ap.add_argument("--root", default=None, help="checkout to serve (default: this one)")
    args = ap.parse_args()
    root = Path(args.root).resolve() if args.root else None
    from playwright.sync_api import sync_playwright

    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    if exe is None:
        raise SystemExit("Debian chromium is required (apt-get install -y chromium)")
    times = []
    any_torch = False
    with sync_playwright() as pw:
        browser = pw.chromium.launch(
            executable_path=exe, headless=True, args=["--no-sandbox", "--disable-gpu"]
        )
        for i in range(max(1, min(args.runs, 20))):
            t_http, t_page, rss, torch = one_run(browser, args.python, root)
            times.append(t_page)
            any_torch |= torch
            print(
                f"run {i + 1}: HTTP 200 on / after {t_http:.2f} s; home page rendered after {t_page:.2f} s; "
                f"server RSS {rss:.0f} MB; torch loaded: {'yes' if torch else 'no'}",
                flush=True,
            )
        browser.close()
    med = statistics.median(times)
    print(
        f"median cold start (process start → home page title visible): {med:.2f} s "
        f"(target < {TARGET_S:.0f} s: {'met' if med < TARGET_S else 'NOT met'})"
    )
    print(f"torch loaded at start-up: {'YES' if any_torch else 'no'}")


if __name__ == "__main__":
    main()
