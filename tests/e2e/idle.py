"""Waiting for a Streamlit page to be idle: a state, never a duration."""

from __future__ import annotations

# The app root carries data-test-script-state="running" while a script runs (the toolbar's
# status widget is hidden by toolbarMode = "minimal"); a rerun may start a moment after a widget
# change, so count the page as idle only after a full second without it.
IDLE = """() => {
    const now = performance.now();
    if (document.querySelector('[data-testid="stApp"][data-test-script-state="running"]')) {
        window.__idle = undefined; return false;
    }
    if (window.__idle === undefined) window.__idle = now;
    return now - window.__idle > 1000;
}"""


def wait_idle(page, timeout: int = 90_000) -> None:  # type: ignore[no-untyped-def]
    """Wait until ``page`` has run no script for a full second (``timeout`` in ms)."""
    page.evaluate("() => { window.__idle = undefined; }")
    page.wait_for_function(IDLE, timeout=timeout, polling=100)
