"""Waiting for a Streamlit page to be idle: a state, never a duration."""

from __future__ import annotations

# The app root carries the script's state in data-test-script-state (the toolbar's status widget
# is hidden by toolbarMode = "minimal"): "initial" before the first run, "running",
# "rerunRequested" and "stopRequested" between runs, "notRunning" (or "compilationError") when a
# run is over. Only the last two are idle: a page whose first run has not begun, or whose rerun
# was asked for and not yet started, is not. A rerun may start a moment after a widget change, so
# count the page as idle only after a full second in those states.
IDLE = """() => {
    const now = performance.now();
    const app = document.querySelector('[data-testid="stApp"]');
    const state = app ? app.getAttribute('data-test-script-state') : null;
    if (state !== 'notRunning' && state !== 'compilationError') {
        window.__idle = undefined; return false;
    }
    if (window.__idle === undefined) window.__idle = now;
    return now - window.__idle > 1000;
}"""


def wait_idle(page, timeout: int = 90_000) -> None:  # type: ignore[no-untyped-def]
    """Wait until ``page`` has run no script for a full second (``timeout`` in ms)."""
    page.evaluate("() => { window.__idle = undefined; }")
    page.wait_for_function(IDLE, timeout=timeout, polling=100)
