"""Helpers for the browser tests that prove a widget change stops a long computation.

The proof never rests on a clock. Each page caches a finished unit of work, so had the long
run gone on to the end after the widget change, asking for it again would show its result at
once; the tests ask again and require a fresh computation (a progress text). That proof needs
the long run to have been computing when the change reached the server. On a loaded machine the
browser may send the change only after the run has finished, or after it has computed every unit
(it is then stopped while drawing, with every unit cached: CI saw "Audited 7/7 cells" so). A
change that arrives while the last unit computes does the same: Streamlit stops a script only at
its next message, so the unit finishes and is cached first, and the next message (the one saying
every unit is done) is never sent. So a test's ``done`` pattern matches the texts after which
every unit may be cached: the last unit's own progress where it is cached on completion. Then
cancellation was not exercised: a test first asks again with a fresh, uncached request (the audit
test tries five seeds), and otherwise skips, saying so, instead of passing or failing on
something it did not observe.

Whether the run finished is read from what the server sent, not from what the browser drew (a
starved browser coalesces its renders, and Streamlit itself drops a queued progress update that a
later one replaces, so a "last progress" text may never be seen). :class:`LongRunWatch` parses the
server's messages to the page (Streamlit's ``ForwardMsg`` protobuf): a run that ends normally
sends ``script_finished: FINISHED_SUCCESSFULLY``; a run stopped by a widget change sends no such
message before the next run's ``new_session``.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass

import pytest
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

RECOMPUTE_TIMEOUT_MS = 45_000
# the pages' progress texts (ASCII, or UTF-8 ε), quoted in messages
_PROGRESS_TEXT = re.compile(
    rb"(?:Monte-Carlo [a-z0-9+-]+, n=|Audited \d|Simulating [a-z]+:|Sanitized \d|Masked-LM attacker:)"
    rb"(?:[ -~]|\xce\xb5){0,80}"
)


@dataclass(frozen=True)
class LongRun:
    """What the server sent of the run that was under way when the widget changed.

    ``mark`` counts the progress texts sent until then: :func:`expect_recompute` looks only at
    those sent after it.
    """

    finished: bool
    last_progress: str
    mark: int = 0
    computed_all: bool = False

    @property
    def exercised(self) -> bool:
        """Whether the change reached the server while the long run still had work to compute.

        False when the run ended normally, or when its last progress text said every unit was
        computed (the change then stopped only the drawing, and every unit is cached).
        """
        return not (self.finished or self.computed_all)


#: The watches still listening to a page; the ``page`` fixture detaches them after each test.
_WATCHES: list[LongRunWatch] = []


def detach_watches(page) -> None:  # type: ignore[no-untyped-def]
    """Detach every :class:`LongRunWatch` listening to ``page``."""
    for watch in [w for w in _WATCHES if w._page is page]:
        watch.detach()
        _WATCHES.remove(watch)


class LongRunWatch:
    """Follow the server's messages to one page, to tell whether the long run ran to its end.

    Create it before the page first opens the app (the websocket is opened then). Call
    :meth:`change` just before the widget change and :meth:`result` before asking for the
    cancelled run again. Runs before the long one need no care: each ``new_session`` starts the
    count again.
    """

    def __init__(self, page, done: str | None = None) -> None:  # type: ignore[no-untyped-def]
        # ``done``: a regex that matches in full every progress text after which each unit may be
        # computed and cached: "every unit is computed", and the last unit's own texts when that
        # unit is cached as it returns (it completes before the script reaches its next message)
        self._done = re.compile(done) if done is not None else None
        self._armed = True
        self._changed = False
        self._finished = False
        self._outcome: bool | None = None
        self._last_progress = ""
        self.sent: list[str] = []  # every progress text the server sent to the page, in order
        self._page = page
        page.on("websocket", self._on_websocket)
        _WATCHES.append(self)

    def _on_websocket(self, ws) -> None:  # type: ignore[no-untyped-def]
        ws.on("framereceived", self._frame)

    def detach(self) -> None:
        """Stop listening to the page (the tab outlives the test: ``page`` in conftest.py)."""
        self._page.remove_listener("websocket", self._on_websocket)

    def _frame(self, payload: bytes | str) -> None:
        if not isinstance(payload, bytes):
            return
        msg = ForwardMsg()
        try:
            msg.ParseFromString(payload)
        except Exception:  # not a ForwardMsg: nothing to learn from it
            return
        kind = msg.WhichOneof("type")
        if kind == "delta":
            self.sent += [t.decode("utf-8", "replace").strip() for t in _PROGRESS_TEXT.findall(payload)]
        if not self._armed:
            return
        if kind == "script_finished" and msg.script_finished == ForwardMsg.FINISHED_SUCCESSFULLY:
            self._finished = True
        elif kind == "new_session":
            if self._changed:  # the change's own run begins: the long run is over
                self._outcome = self._finished
                self._armed = False
                return
            self._finished = False  # a new run begins; earlier runs are not the long run
        elif kind == "delta":
            texts = _PROGRESS_TEXT.findall(payload)
            if texts:
                self._last_progress = texts[-1].decode("utf-8", "replace").strip()

    def wait_sent(self, page, regex: str, timeout_ms: float, since: int = 0) -> bool:  # type: ignore[no-untyped-def]
        """Wait until the server has sent a progress text matching ``regex`` (after the first
        ``since`` texts). What the server sent, not what the browser drew: a browser starved of
        CPU coalesces its renders and may never draw a short-lived progress text. The timeout
        bounds the wait for that state; it is no time limit on the page. False on timeout."""
        pattern = re.compile(regex)
        deadline = time.monotonic() + timeout_ms / 1000
        while not any(pattern.search(t) for t in self.sent[since:]):
            if time.monotonic() > deadline:
                return False
            page.wait_for_timeout(50)  # lets Playwright deliver the websocket frames
        return True

    def change(self) -> None:
        """The widget change is about to be made: the next run to begin is its run."""
        self._changed = True

    def result(self) -> LongRun:
        """Stop following and say whether the long run ran to its end before the change."""
        self._armed = False
        finished = self._outcome if self._outcome is not None else self._finished
        computed_all = self._done is not None and self._done.fullmatch(self._last_progress) is not None
        return LongRun(
            finished=finished,
            last_progress=self._last_progress,
            mark=len(self.sent),
            computed_all=computed_all,
        )


def expect_recompute(page, watch: LongRunWatch, regex: str, what: str, seen: LongRun) -> None:  # type: ignore[no-untyped-def]
    """Wait for the server to send a progress text matching ``regex`` (Python syntax) after
    asking for the cancelled run again: its result is not cached, so it must compute.

    Skips, saying why, when ``seen`` shows the long run had ended normally, or computed every
    unit, before the widget change reached the server (cancellation was not exercised; callers
    first try again with a fresh, uncached request). Fails otherwise.
    """
    if not watch.wait_sent(page, regex, RECOMPUTE_TIMEOUT_MS, since=seen.mark):
        if not seen.exercised:
            why = "its run finished" if seen.finished else "every unit was computed"
            pytest.skip(
                f"the {what} ran to its end before the widget change reached the server "
                f"(the server said {why}), so cancellation was not exercised "
                f"(last progress sent: {seen.last_progress!r})"
            )
        raise AssertionError(
            f"asking again for the cancelled {what} computed nothing within "
            f"{RECOMPUTE_TIMEOUT_MS // 1000} s, so it had run to the end although the server "
            f"stopped its run for the change (last progress sent: {seen.last_progress!r})"
        )
