"""Shared-server safety: five simultaneous browser sessions with different settings each see
only their own results.

Five separate browser contexts (separate cookies, separate Streamlit sessions) open the same
page with different deep links. All five pages are opened before any is awaited, so the server
runs the five scripts at the same time; then each session changes a widget, again all five before
any is awaited. Every session must show its own ε in the claimed-ε annotation and only its own
mechanisms in the legend (audit), or only its own sentence (sanitize).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

pytestmark = pytest.mark.e2e

IDLE = '() => !document.querySelector(\'[data-testid="stApp"][data-test-script-state="running"]\')'

# (mechanism, ε, seed) per session; names chosen so none is a prefix of another's legend entry
AUDIT_SESSIONS = [
    ("laplace", 0.5, 11),
    ("gaussian", 1.5, 22),
    ("adept", 2.5, 33),
    ("dpnr", 3.5, 44),
    ("dptext", 4.5, 55),
]
SANITIZE_SENTENCES = [
    "the red house was small",
    "my old dog was in the park",
    "she read a long book every night",
    "we played music after dinner",
    "the city was cold in winter",
]


def _legend_mechanisms(page) -> set[str]:  # type: ignore[no-untyped-def]
    """The mechanisms in the audit figure's legend (not the trade-off figure's below it)."""
    texts = page.locator(".st-key-audit-figure .js-plotly-plot .legendtext").all_text_contents()
    return {re.split(r" \(|:", t, maxsplit=1)[0].strip() for t in texts if t.strip()}


def _annotations(page) -> list[str]:  # type: ignore[no-untyped-def]
    return page.locator(".js-plotly-plot .annotation-text").all_text_contents()


def _wait_audit(page, eps: float) -> None:  # type: ignore[no-untyped-def]
    page.wait_for_function(
        "(want) => Array.from(document.querySelectorAll('.js-plotly-plot .annotation-text'))"
        ".some(a => a.textContent === want)",
        arg=f"claimed ε = {eps:g}",
        timeout=120_000,
    )
    page.wait_for_function(IDLE, timeout=120_000)


def _contexts(browser, n: int):  # type: ignore[no-untyped-def]
    ctxs = [browser.new_context(viewport={"width": 1400, "height": 1000}) for _ in range(n)]
    pages = [c.new_page() for c in ctxs]
    for p in pages:
        p.set_default_timeout(120_000)
    return ctxs, pages


def test_five_audit_sessions_see_only_their_own_results(app_url: str, browser, artifacts: Path) -> None:  # type: ignore[no-untyped-def]
    ctxs, pages = _contexts(browser, len(AUDIT_SESSIONS))
    try:
        # Phase 1: five deep links in flight at once (Monte-Carlo on, distinct seeds; the work is
        # kept small: the five scripts overlap because they are all requested before any is read).
        for pg, (mech, eps, seed) in zip(pages, AUDIT_SESSIONS, strict=True):
            pg.goto(
                f"{app_url}/audit?mechs={mech}&eps={eps:g}&nmin=1&nmax=32&mc=true&trials=5000&seed={seed}",
                wait_until="commit",
            )
        for pg, (mech, eps, seed) in zip(pages, AUDIT_SESSIONS, strict=True):
            _wait_audit(pg, eps)
            assert _legend_mechanisms(pg) == {mech}, (mech, _legend_mechanisms(pg))
            claims = [a for a in _annotations(pg) if a.startswith("claimed ε")]
            assert claims == [f"claimed ε = {eps:g}"], (mech, claims)
            assert f"eps={eps:g}" in pg.url and f"seed={seed}" in pg.url, pg.url

        # Phase 2: every session changes its ε through the widget, all before any is awaited.
        new_eps = [eps + 10 for _, eps, _ in AUDIT_SESSIONS]
        for pg, e in zip(pages, new_eps, strict=True):
            box = pg.get_by_label("Claimed ε")
            box.fill(f"{e:g}")
            box.press("Enter")
        for i, (pg, e) in enumerate(zip(pages, new_eps, strict=True)):
            mech = AUDIT_SESSIONS[i][0]
            _wait_audit(pg, e)
            assert _legend_mechanisms(pg) == {mech}, (mech, _legend_mechanisms(pg))
            claims = [a for a in _annotations(pg) if a.startswith("claimed ε")]
            assert claims == [f"claimed ε = {e:g}"], (mech, claims)
            pg.wait_for_function("(e) => location.search.includes('eps=' + e)", arg=f"{e:g}")
            pg.screenshot(path=str(artifacts / f"concurrency-audit-{i + 1}.png"), full_page=False)
    finally:
        for c in ctxs:
            c.close()


def test_five_sanitize_sessions_see_only_their_own_text(app_url: str, browser, artifacts: Path) -> None:  # type: ignore[no-untyped-def]
    # ε = 1000 makes SanText the identity on in-vocabulary words, so each session's output is
    # its own sentence; any leak of another session's text or result would show up verbatim.
    ctxs, pages = _contexts(browser, len(SANITIZE_SENTENCES))
    try:
        for i, pg in enumerate(pages):
            pg.goto(
                f"{app_url}/sanitize?source=paste&mech=santext&eps=1000&vsize=2000&draws=1&seed={i}",
                wait_until="commit",
            )
        for pg in pages:
            pg.wait_for_selector(".dp-sanitized", state="visible", timeout=120_000)
            pg.wait_for_function(IDLE, timeout=120_000)
        for pg, sentence in zip(pages, SANITIZE_SENTENCES, strict=True):
            box = pg.get_by_label("Text (one sentence per line", exact=False)
            box.fill(sentence)
            box.press("Control+Enter")
        for i, (pg, sentence) in enumerate(zip(pages, SANITIZE_SENTENCES, strict=True)):
            pg.wait_for_function(
                "(s) => (document.querySelector('.dp-sanitized') || {}).innerText?.trim() === s",
                arg=sentence,
                timeout=120_000,
            )
            pg.wait_for_function(IDLE, timeout=120_000)
            shown = pg.locator(".dp-sanitized").inner_text().strip()
            assert shown == sentence
            others = [s for s in SANITIZE_SENTENCES if s != sentence]
            body = pg.locator("body").inner_text()
            assert not any(o in body for o in others), i
            assert f"seed={i}" in pg.url
            pg.screenshot(path=str(artifacts / f"concurrency-sanitize-{i + 1}.png"), full_page=False)
    finally:
        for c in ctxs:
            c.close()
