"""Make the README's screenshots: one PNG per dashboard page, at default settings.

Starts ``streamlit run app.py`` on a free localhost port (the helpers of
``bench/app_memory.py``), opens every page of ``pages._shared.PAGES`` in headless Debian
Chromium (Playwright), waits until the page has rendered its results and Streamlit is idle, and
saves the top 1,400 px of the page to ``docs/screenshots/<url_path>.png`` (the home
page is ``home.png``). ``tests/test_docs.py`` checks that the README shows one per page.

Run: ``python docs/screenshots.py`` (about a minute; the Attack page runs the masked-LM attack),
or ``python docs/screenshots.py audit-text sanitize`` for some pages only.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from app_memory import VISITS, free_port, start_server, wait_healthy, wait_page_done  # noqa: E402

from pages._shared import PAGES  # noqa: E402

OUT = ROOT / "docs" / "screenshots"
#: Extra shots of a page with one row opened: (file name, path and query, the heading to show).
OPENED = [("verdicts-row", "verdicts?row=pypantera%3ACusText", "pypantera:CusText")]
WIDTH, HEIGHT = 1280, 1400  # Streamlit scrolls inside its main block: the viewport is the shot


def main() -> None:
    from playwright.sync_api import sync_playwright

    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    if exe is None:
        raise SystemExit("Debian chromium is required (apt-get install -y chromium)")
    ready = {path: cond for _, path, cond in VISITS}  # first visit of each page: default settings
    OUT.mkdir(parents=True, exist_ok=True)
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    log_path = Path(tempfile.gettempdir()) / "dpcore-screenshots-server.log"
    with log_path.open("w") as log:
        proc = start_server(port, log)
        try:
            wait_healthy(url, proc)
            with sync_playwright() as pw:
                browser = pw.chromium.launch(
                    executable_path=exe, headless=True, args=["--no-sandbox", "--disable-gpu"]
                )
                page = browser.new_page(viewport={"width": WIDTH, "height": HEIGHT})
                only = set(sys.argv[1:])  # optional: url paths to re-shoot ("home" for the landing page)
                for info in PAGES:
                    path = "" if info.default else info.url_path
                    if only and (path or "home") not in only:
                        continue
                    page.goto(f"{url}/{path}")
                    wait_page_done(page, ready[path], 600_000)
                    shot = OUT / f"{path or 'home'}.png"
                    page.screenshot(path=str(shot))
                    print(f"{shot.relative_to(ROOT)}  {shot.stat().st_size / 1024:.0f} kB", flush=True)
                for name, query, heading in OPENED:  # a page with one row opened, its detail in view
                    if only and name not in only:
                        continue
                    page.goto(f"{url}/{query}")
                    wait_page_done(page, ready[query.split("?")[0]], 600_000)
                    page.get_by_role("heading", name=heading).first.scroll_into_view_if_needed()
                    page.wait_for_timeout(500)  # the scroll settles
                    shot = OUT / f"{name}.png"
                    page.screenshot(path=str(shot))
                    print(f"{shot.relative_to(ROOT)}  {shot.stat().st_size / 1024:.0f} kB", flush=True)
                browser.close()
        finally:
            proc.terminate()
            proc.wait(timeout=10)


if __name__ == "__main__":
    main()
