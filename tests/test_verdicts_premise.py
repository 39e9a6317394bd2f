"""A row whose implementation breaks its paper's premise is its own outcome, never 'violates'."""

from __future__ import annotations

from dpcore.verdicts.document import choose_check_rows, outcome, verdict_of

BROKEN = {"status": "broken", "text": "the output sets overlap without being equal"}


def _row(verdict: str, premise: dict | None, check: str) -> dict:
    return {
        "name": "lib:X",
        "group": "lib",
        "library": "lib",
        "status": "ran",
        "audit": {"verdict": verdict, "premise": premise},
        "check": {"verdict": check, "seconds": 1.0},
    }


def test_outcome_and_verdict_of() -> None:
    assert outcome("violates", BROKEN) == "premise-broken"
    assert outcome("untested", {"status": "holds"}) == "untested"
    assert outcome("not-detected", None) == "not-detected"
    assert verdict_of(_row("untested", BROKEN, "premise-broken")) == "premise-broken"
    assert verdict_of(_row("not-detected", None, "not-detected")) == "not-detected"


def test_check_rows_compare_the_rows_outcome() -> None:
    """A premise-broken row whose check also finds the premise broken is a valid check row."""
    assert choose_check_rows([_row("untested", BROKEN, "premise-broken")]) == ["lib:X"]
    assert choose_check_rows([_row("untested", BROKEN, "untested")]) == []
