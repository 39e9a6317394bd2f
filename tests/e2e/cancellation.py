"""Helpers for the browser tests that prove a widget change stops a long computation.

The proof never rests on a clock. Each page caches a finished unit of work, so had the long
run gone on to the end after the widget change, asking for it again would show its result at
once; the tests ask again and require a fresh computation (a progress text). That proof needs
the long run to have been running when the change reached the server. On a loaded machine the
browser may send the change only after the run has finished; then cancellation was not
exercised, and the test skips, saying so, instead of passing or failing on something it did not
observe.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest

RECOMPUTE_TIMEOUT_MS = 45_000


@dataclass(frozen=True)
class LongRun:
    """What the page saw of the long run before the widget change reached the server."""

    finished_early: bool
    last_progress: str


def watch_the_long_run(page, old_query: str, *, plots: int | None = None, done: str | None = None) -> None:  # type: ignore[no-untyped-def]
    """Record, in the page, whether the long run finished before the widget change took effect,
    and the last progress text seen.

    Parameters
    ----------
    page
        The Playwright page, on the long run's address.
    old_query
        A piece of the query string that the widget change removes. The page writes its URL at
        the top of each run, so once it is gone the long run is over and watching stops.
    plots
        The run finished if this many Plotly figures are on screen while ``old_query`` is still
        in the URL (its result was drawn). ``None``: the page draws figures before the long part.
    done
        A regular expression (JavaScript syntax) for a progress text saying the run's last unit of
        work is complete; the result is drawn a moment later, and is already cached.
    """
    page.evaluate(
        """([old, plots, done]) => {
            const doneRe = done ? new RegExp(done) : null;
            window.__finishedEarly = false; window.__lastProgress = '';
            let obs = null;
            const check = () => {
                if (!location.search.includes(old)) { if (obs) obs.disconnect(); return; }
                if (plots !== null && document.querySelectorAll('.js-plotly-plot').length >= plots)
                    window.__finishedEarly = true;
                const bar = document.querySelector('[data-testid="stProgress"]');
                const text = bar ? (bar.innerText || '').trim() : '';
                if (text) {
                    window.__lastProgress = text;
                    if (doneRe && doneRe.test(text)) window.__finishedEarly = true;
                }
            };
            obs = new MutationObserver(check);
            check();
            obs.observe(document.body, {childList: true, subtree: true, characterData: true});
        }""",
        [old_query, plots, done],
    )


def long_run_seen(page) -> LongRun:  # type: ignore[no-untyped-def]
    """What :func:`watch_the_long_run` recorded. Read it before navigating away (a new page
    load clears it)."""
    state = page.evaluate("() => [Boolean(window.__finishedEarly), String(window.__lastProgress || '')]")
    return LongRun(finished_early=state[0], last_progress=state[1])


def expect_recompute(page, regex: str, what: str, seen: LongRun) -> None:  # type: ignore[no-untyped-def]
    """Wait for a progress text matching ``regex`` (JavaScript syntax) after asking for the
    cancelled run again: its result is not cached, so it must compute.

    Skips, saying why, when ``seen`` shows the long run had finished before the widget change
    reached the server (cancellation was not exercised). Fails otherwise.
    """
    try:
        page.wait_for_function(
            "(re) => new RegExp(re).test(document.body.innerText || '')",
            arg=regex,
            timeout=RECOMPUTE_TIMEOUT_MS,
            polling=100,
        )
    except Exception as exc:  # playwright's TimeoutError
        if seen.finished_early:
            pytest.skip(
                f"the {what} finished before the widget change reached the server, so "
                f"cancellation was not exercised (last progress seen: {seen.last_progress!r})"
            )
        raise AssertionError(
            f"asking again for the cancelled {what} computed nothing within "
            f"{RECOMPUTE_TIMEOUT_MS // 1000} s, so it had run to the end (last progress seen "
            f"before the change: {seen.last_progress!r})"
        ) from exc
