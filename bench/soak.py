"""Memory soak of the dashboard: N rounds of the most expensive accepted settings, new seeds.

    python bench/soak.py                 # 3 rounds of every page's worst accepted request
    python bench/soak.py --rounds 5 --skip-attack

One ``streamlit run app.py`` on localhost and one headless Chromium session (Debian chromium).
Each round visits every entry of ``bench/app_memory.py``'s ``WORST`` list with ``seed=<round>``
appended, so no result comes from a cache, and prints the server's process-tree RSS: the peak
during the round and the RSS after it. A server whose caches are bounded by entries *and* size
stops growing after the first rounds; a leak keeps climbing. Prints measured figures; not a test.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from app_memory import (
    WORST,
    Sampler,
    free_port,
    start_server,
    tree_rss_bytes,
    wait_healthy,
    wait_page_done,
)


def main() -> None:
    from playwright.sync_api import sync_playwright

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--skip-attack", action="store_true", help="leave out the masked-LM attack page")
    args = ap.parse_args()
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    if exe is None:
        raise SystemExit("Debian chromium is required (apt-get install -y chromium)")
    visits = [v for v in WORST if not (args.skip_attack and v[1].startswith("attack"))]
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    log_path = Path(tempfile.gettempdir()) / "dpcore-soak-server.log"
    with log_path.open("w") as log:
        proc = start_server(port, log)
        sampler = Sampler(proc.pid)
        sampler.start()
        try:
            wait_healthy(url, proc)
            print(f"server idle: {tree_rss_bytes(proc.pid) / 2**20:.0f} MiB", flush=True)
            print("| round | seconds | peak RSS during round (MiB) | RSS after round (MiB) |")
            print("|---|---|---|---|")
            with sync_playwright() as pw:
                browser = pw.chromium.launch(executable_path=exe, headless=True, args=["--no-sandbox"])
                page = browser.new_page(viewport={"width": 1400, "height": 1000})
                for r in range(1, args.rounds + 1):
                    sampler.new_window()
                    t0 = time.perf_counter()
                    for label, path, ready in visits:
                        sep = "&" if "?" in path else "?"
                        page.goto(f"{url}/{path}{sep}seed={r}")
                        # a request over a page's cap shows its error instead of a result
                        refused = "document.body.innerText.includes('this server allows')"
                        wait_page_done(page, f"({ready}) || {refused}", 900_000)
                        if r == 1 and page.evaluate(refused):
                            print(f"refused by its page (over the cap): {label}", flush=True)
                    time.sleep(1.0)
                    after = tree_rss_bytes(proc.pid) / 2**20
                    print(
                        f"| {r} | {time.perf_counter() - t0:.0f} | {sampler.window_peak / 2**20:,.0f} | "
                        f"{after:,.0f} |",
                        flush=True,
                    )
                browser.close()
            print(f"overall peak: {sampler.peak / 2**20:,.0f} MiB")
        finally:
            proc.terminate()


if __name__ == "__main__":
    main()
