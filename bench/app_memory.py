"""Benchmark: peak memory of the dashboard server with every page visited.

Starts ``streamlit run app.py`` on a free localhost port, visits every page with headless
Chromium (Playwright) at its default settings, plus the Sanitize page with the BERT embedding,
waits for each page to finish, and samples the resident set size (RSS) of the server's whole
process tree every 50 ms (psutil if installed, else ``VmRSS`` from /proc/<pid>/status summed over
children). Prints, per page, the RSS when the page finished and the peak while it ran, then the
overall peak. Pages are visited in one browser session, in order, so caches accumulate as they
would on a real server.

Run: ``python bench/app_memory.py`` (about two minutes on 2 cores; the Attack page at its defaults
runs the masked-LM attack on onnxruntime). ``--python VENV/bin/python`` serves the app with another
interpreter, e.g. a fresh virtualenv made with ``pip install -r requirements.txt`` as Community
Cloud would, and reports that environment's size on disk; ``--root DIR`` serves another checkout
(for a before/after comparison). ``--only audit,sanitize`` visits only those pages
on a fresh server; ``--worst`` visits every page at its most expensive accepted settings (the
time per page is then the worst case a visitor can ask for); ``--visitor`` is issue 60's walk:
every page, then what a curious visitor computes that no shipped view holds (a DP-MLM rewriter
audit at another ε, an attack at other settings, a text audit), against a peak of 550 MiB (the
smallest Community Cloud tier is 690 MB); ``--skip-attack`` leaves the Attack
page out; ``--screenshots DIR`` saves each page; ``--json`` prints the numbers as JSON too.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TARGET_BYTES = 600 * 2**20  # 600 MB peak with every page visited (issue: Cloud-ready runtime)
VISITOR_TARGET_BYTES = 550 * 2**20  # issue 60: every page, then three computations no view ships
INSTALL_TARGET_BYTES = 10**9  # 1 GB on disk

PLOTS = "document.querySelectorAll('.js-plotly-plot').length >= {}"
# (label, path and query, JS condition for "rendered"); "" is the home page. Default settings
# except where the label says otherwise.
VISITS = [
    ("home", "", "document.querySelectorAll('[data-testid=\"stPageLink\"]').length >= 5"),
    ("audit", "audit", PLOTS.format(1)),
    ("audit a text sanitizer", "audit_text", PLOTS.format(1)),
    ("audit a text rewriter", "audit_rewriter", PLOTS.format(1)),
    ("rewriter calibration", "rewriter_calibration", PLOTS.format(1)),
    ("do public sanitizers keep their claims?", "verdicts", PLOTS.format(1)),
    ("sensitivity", "sensitivity", PLOTS.format(2)),
    ("accounting", "accounting", PLOTS.format(1)),
    (
        "sanitize (GloVe, default)",
        "sanitize",
        "!!document.querySelector('.dp-sanitized') && " + PLOTS.format(1),
    ),
    (
        "sanitize (BERT WordPiece)",
        "sanitize?emb=bert",
        "!!document.querySelector('.dp-sanitized') && " + PLOTS.format(1),
    ),
    ("attack (default)", "attack", PLOTS.format(2)),
]
# Issue 60's visitor: every page at its defaults, then three computations no shipped view holds.
VISITOR = [
    *VISITS,
    (
        "audit a text rewriter: DP-MLM at ε = 0.5 (not shipped)",
        "audit_rewriter?rw=dp-mlm&eps=0.5",
        PLOTS.format(1),
        "Run the audit",  # settings no view ships run on this button
    ),
    (
        "attack: SanText at ε = 2 and 5, Bayesian and masked-LM (not shipped)",
        "attack?mechs=santext&eps=2,5&attacks=bayes-unigram,mlm",
        PLOTS.format(2),
    ),
    ("audit a text sanitizer: SanText+ screen", "audit_text?mech=santext%2B&how=screen", PLOTS.format(1)),
]
ALL_AUDIT = "copy,random,laplace,gaussian,adept-corrected,adept,dpnr,dptext,dptext-resample"
SANITIZED = "!!document.querySelector('.dp-sanitized') && " + PLOTS.format(1)
# The most expensive settings each page accepts (just under its caps), for ``--worst``.
WORST = [
    (
        "audit: 9 mechanisms, n ≤ 4096, 1e8 trials",
        f"audit?mechs={ALL_AUDIT}&nmin=1&nmax=4096&mc=true&trials=100000000&conf=0.999",
        PLOTS.format(1),
    ),
    (
        "audit: black-box dptext-resample, 2.5e8 draws",
        "audit?mechs=dptext-resample&nmin=1&nmax=64&mc=true&trials=1000000",
        PLOTS.format(1),
    ),
    (
        "audit-text: 100 adaptive pairs, 1e5 samples per word, |V| = 15,000",
        "audit_text?how=adaptive&pairs=100&nn=2&samples=100000&vsize=15000",
        PLOTS.format(1),
    ),
    ("sensitivity: 1e6 pairs, n ≤ 32", "sensitivity?pairs=1000000&nmax=32", PLOTS.format(2)),
    ("sensitivity: 1e4 pairs, n ≤ 4096", "sensitivity?pairs=10000&nmax=4096&n=4096", PLOTS.format(2)),
    ("accounting: 1e6 sampler draws", "accounting?size=1000000", PLOTS.format(1)),
    ("sanitize: BERT, santext+, 10 draws", "sanitize?emb=bert&mech=santext%2B&draws=10", SANITIZED),
    ("sanitize: BERT, feyisetan, 10 draws", "sanitize?emb=bert&mech=feyisetan&draws=10", SANITIZED),
    (
        "attack: caps (34 × 7 × 2 = 476 ≤ 480 MLM sentence runs)",
        "attack?mechs=santext,santext%2B&eps=0.5,1,3,6,10,20&n=34&attacks=bayes-unigram,mlm,bayes-mlm"
        "&vsize=15000&ntrain=4000&ntest=1000",
        PLOTS.format(2),
    ),
]


def _children(pid: int) -> list[int]:
    kids: list[int] = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            kids.append(int(stat.parent.name))
    return kids


def tree_rss_bytes(pid: int) -> int:
    """RSS of ``pid`` and all its descendants, in bytes."""
    try:
        import psutil
    except ImportError:
        psutil = None
    if psutil is not None:
        try:
            root = psutil.Process(pid)
            procs = [root, *root.children(recursive=True)]
            return sum(p.memory_info().rss for p in procs if p.is_running())
        except psutil.Error:
            return 0
    total, todo = 0, [pid]
    while todo:
        p = todo.pop()
        try:
            for line in Path(f"/proc/{p}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1]) * 1024
                    break
        except OSError:
            continue
        todo += _children(p)
    return total


class Sampler(threading.Thread):
    def __init__(self, pid: int, every: float = 0.05) -> None:
        super().__init__(daemon=True)
        self.pid, self.every = pid, every
        self.window_peak = 0
        self.peak = 0
        self.current = 0
        self._halt = threading.Event()
        self._lock = threading.Lock()

    def run(self) -> None:
        while not self._halt.is_set():
            rss = tree_rss_bytes(self.pid)
            with self._lock:
                self.current = rss
                self.peak = max(self.peak, rss)
                self.window_peak = max(self.window_peak, rss)
            time.sleep(self.every)

    def new_window(self) -> None:
        with self._lock:
            self.window_peak = self.current

    def stop(self) -> None:
        self._halt.set()


def torch_loaded(pid: int) -> bool:
    """Whether libtorch is mapped into the server process (torch has been imported)."""
    try:
        return "libtorch" in Path(f"/proc/{pid}/maps").read_text()
    except OSError:
        return False


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def env_report(python: str) -> dict[str, object]:
    """Size on disk of the environment of ``python`` (its ``sys.prefix``) and what it holds."""
    code = (
        "import sys, importlib.util as u; print(sys.prefix); "
        "print(*[m for m in ('torch', 'transformers', 'onnxruntime', 'ray') if u.find_spec(m)], sep=',')"
    )
    out = subprocess.run([python, "-c", code], capture_output=True, text=True, check=True).stdout.splitlines()
    prefix = out[0]
    du = subprocess.run(["du", "-sb", prefix], capture_output=True, text=True, check=True).stdout
    return {"prefix": prefix, "bytes": int(du.split()[0]), "has": out[1] if len(out) > 1 else ""}


def start_server(  # type: ignore[no-untyped-def]
    port: int, log, python: str = sys.executable, root: Path = ROOT, app: Path | None = None
) -> subprocess.Popen:
    """``streamlit run`` ``app`` (default: the dashboard's ``app.py`` under ``root``) on ``port``."""
    cmd = [python, "-m", "streamlit", "run", str(app or root / "app.py"), "--server.port", str(port)]
    cmd += ["--server.address", "127.0.0.1", "--server.headless", "true"]
    cmd += ["--browser.gatherUsageStats", "false", "--server.fileWatcherType", "none"]
    return subprocess.Popen(cmd, cwd=root, stdout=log, stderr=subprocess.STDOUT)


def wait_healthy(url: str, proc: subprocess.Popen, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit("the Streamlit server exited during start-up")
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as r:
                if r.read().strip() == b"ok":
                    return
        except OSError:
            pass
        time.sleep(0.2)
    raise SystemExit(f"the Streamlit server did not answer within {timeout:.0f} s")


def wait_page_done(page, ready: str, timeout_ms: int) -> None:  # type: ignore[no-untyped-def]
    """The page has rendered its results (``ready``) and Streamlit has been idle for a second."""
    page.wait_for_selector("h1", state="visible", timeout=timeout_ms)
    page.wait_for_function(
        """(ready) => {
            if (!eval(ready)) { window.__idleSince = undefined; return false; }
            const busy = document.querySelector('[data-testid="stApp"][data-test-script-state="running"]')
                || document.querySelector('[data-testid="stSpinner"]');
            const now = performance.now();
            if (busy) { window.__idleSince = undefined; return false; }
            if (window.__idleSince === undefined) window.__idleSince = now;
            return now - window.__idleSince > 1000;
        }""",
        arg=ready,
        timeout=timeout_ms,
        polling=100,
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--only",
        metavar="PAGES",
        help="comma-separated page paths to visit on a fresh server (home, audit, sanitize, "
        "sanitize?emb=bert, …) instead of all, to measure one page alone",
    )
    ap.add_argument(
        "--worst",
        action="store_true",
        help="visit each page at its most expensive accepted settings instead of its defaults",
    )
    ap.add_argument(
        "--visitor",
        action="store_true",
        help="every page, then a DP-MLM rewriter audit, an attack and a text audit no shipped view holds "
        "(issue 60's walk; target peak 550 MiB)",
    )
    ap.add_argument("--skip-attack", action="store_true", help="leave out the Attack page")
    ap.add_argument("--json", action="store_true", help="also print the results as JSON")
    ap.add_argument("--screenshots", metavar="DIR", help="save a full-page screenshot of each visit")
    ap.add_argument("--timeout", type=float, default=900, help="seconds allowed per page")
    ap.add_argument("--python", default=sys.executable, help="interpreter that serves the app")
    ap.add_argument("--root", default=str(ROOT), help="checkout to serve (default: this one)")
    args = ap.parse_args()
    root = Path(args.root).resolve()
    env = env_report(args.python)
    print(
        f"environment {env['prefix']}: {env['bytes'] / 1e9:.2f} GB on disk "
        f"(target < 1 GB for a fresh `pip install -r requirements.txt`: "
        f"{'met' if env['bytes'] < INSTALL_TARGET_BYTES else 'NOT met'}); of torch, transformers, "
        f"onnxruntime and ray it has: {env['has'] or 'none'}; serving "
        f"{root}",
        flush=True,
    )

    from playwright.sync_api import sync_playwright

    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    if exe is None:
        raise SystemExit("Debian chromium is required (apt-get install -y chromium)")
    walk = WORST if args.worst else VISITOR if args.visitor else VISITS
    visits = [v for v in walk if not (args.skip_attack and v[1].startswith("attack"))]
    if args.only:
        wanted = {"" if w.strip() == "home" else w.strip() for w in args.only.split(",")}
        visits = [v for v in visits if v[1] in wanted or (args.worst and v[1].split("?")[0] in wanted)]
        if not visits:
            raise SystemExit(
                f"--only matches no page; choose from: {', '.join(v[1] or 'home' for v in VISITS)}"
            )
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    log_path = Path(tempfile.gettempdir()) / "dpcore-app_memory-server.log"
    log_path.parent.mkdir(parents=True, exist_ok=True)
    results = []
    with log_path.open("w") as log:
        t_start = time.perf_counter()
        proc = start_server(port, log, args.python, root)
        sampler = Sampler(proc.pid)
        sampler.start()
        try:
            wait_healthy(url, proc)
            healthy_s = time.perf_counter() - t_start
            idle_mb = tree_rss_bytes(proc.pid) / 2**20
            print(
                f"server started (pid {proc.pid}) and healthy after {healthy_s:.1f} s; "
                f"RSS before any visit: {idle_mb:.0f} MiB",
                flush=True,
            )
            with sync_playwright() as pw:
                browser = pw.chromium.launch(
                    executable_path=exe, headless=True, args=["--no-sandbox", "--disable-gpu"]
                )
                page = browser.new_page(viewport={"width": 1400, "height": 1000})
                for label, path, ready, *click in visits:
                    sampler.new_window()
                    t0 = time.perf_counter()
                    page.goto(f"{url}/{path}")
                    if click:  # a computation the page runs on a button
                        button = page.get_by_role("button", name=click[0])
                        button.wait_for(timeout=int(args.timeout * 1000))
                        button.click()
                    wait_page_done(page, ready, int(args.timeout * 1000))
                    secs = time.perf_counter() - t0
                    time.sleep(0.5)
                    if args.screenshots:
                        shot = (
                            Path(args.screenshots)
                            / f"app_memory-{path.split('?')[0] or 'home'}-{len(results)}.png"
                        )
                        shot.parent.mkdir(parents=True, exist_ok=True)
                        page.screenshot(path=str(shot), full_page=True)
                    row = {
                        "page": label,
                        "url": f"/{path}",
                        "seconds": round(secs, 1),
                        "rss_after_mb": round(sampler.current / 2**20),
                        "peak_during_mb": round(sampler.window_peak / 2**20),
                        "torch_loaded": torch_loaded(proc.pid),
                    }
                    results.append(row)
                    print(
                        f"{label[:60]:28s} {secs:7.1f} s   RSS after {row['rss_after_mb']:5d} MiB   "
                        f"peak during {row['peak_during_mb']:5d} MiB   "
                        f"torch {'loaded' if row['torch_loaded'] else 'not loaded'}",
                        flush=True,
                    )
                browser.close()
        finally:
            sampler.stop()
            sampler.join()
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
    peak_mb = sampler.peak / 2**20
    target = VISITOR_TARGET_BYTES if args.visitor else TARGET_BYTES
    print(
        f"overall peak RSS of the server process tree: {peak_mb:.0f} MiB = {sampler.peak / 1e9:.2f} GB "
        f"(target < {target // 2**20} MiB: {'met' if sampler.peak < target else 'NOT met'})"
    )
    print(f"sampler: {'psutil' if _has_psutil() else '/proc VmRSS'}; cores: {os.cpu_count()}")
    if args.json:
        summary = {"pages": results, "idle_mb": round(idle_mb), "peak_mb": round(peak_mb)}
        summary |= {"healthy_s": round(healthy_s, 2), "environment": env}
        print(json.dumps(summary, indent=2))


def _has_psutil() -> bool:
    try:
        import psutil  # noqa: F401
    except ImportError:
        return False
    return True


if __name__ == "__main__":
    main()
