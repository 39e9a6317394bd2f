"""The verdict page's tables (``dpcore.verdicts.page_view``): one scale, nats above the claim, for
the table's verdict, the download's certified excess and the opened row's pairs."""

from __future__ import annotations

from typing import Any

import pytest

from dpcore.verdicts import page_view as view


def _row(pairs: list[dict[str, Any]], pooled: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    audit = {
        "verdict": "violates",
        "confidence": 0.95,
        "pairs": pairs,
        "pooled": pooled or [],
        "power": {"power": 0.9, "statements": [], "not_covered": [], "text": ""},
        "vocab_size": 300,
        "samples_drawn": 1000,
    }
    return {
        "name": "m",
        "group": "control",
        "library": "dpcore",
        "library_version": "0.1.0",
        "status": "ran",
        "why": None,
        "claim": None,
        "guarantee": "ldp",
        "epsilon": 1.0,
        "seconds": 1.0,
        "command": None,
        "audit": audit,
    }


def _pair(x: str, lb: float, cb: float, violates: bool = True) -> dict[str, Any]:
    return {"x": x, "x_prime": x + "'", "lower_bound": lb, "claimed_bound": cb, "violates": violates,
            "distance": 1.0, "event_source": "screen"}  # fmt: skip


def test_the_verdict_the_download_and_the_figure_give_one_number() -> None:
    row = _row([_pair("a", 6.35, 1.0), _pair("b", 1.5, 1.0)])
    assert view.certified_excess(row) == pytest.approx(5.35)
    assert view.certified_excess_words(row) == "≥ 5.35 nats above its claim"
    line = view.table([row]).iloc[0]
    assert line["verdict"].startswith("violates its claim by at least 5.35 nats")
    download = view.table_for_download([row]).iloc[0]
    assert download["certified excess (nats)"] == pytest.approx(5.35)
    pooled = {"family": "self", "pairing": "random", "terms": 9, "rejects": True, "excess_lower_bound": 0.4}
    row = _row([], [pooled])
    assert view.certified_excess_words(row) == "≥ 0.4 nats above its claim"
    assert view.table([row]).iloc[0]["verdict"].startswith("violates its claim by at least 0.4 nats")
    assert view.certified_excess_words(_row([_pair("c", 0.5, 1.0, violates=False)])) is None


def test_the_opened_rows_pairs_say_how_far_above_the_claim() -> None:
    pairs = view.violating_pairs(_row([_pair("a", 6.35, 1.0), _pair("b", 2.5, 2.0)]))
    assert list(pairs.columns)[4:7] == ["lower bound (95%)", "above the claim (nats)", "lower bound ÷ claim"]
    assert list(pairs["above the claim (nats)"]) == pytest.approx([5.35, 0.5])


def test_an_opened_rows_sentences_are_built_beside_their_numbers() -> None:
    row = _row([_pair("a", 6.35, 1.0), _pair("b", 1.5, 1.0)])
    text = view.largest_violation_text(row)
    assert text.startswith("The pair (a, a'): its privacy loss is at least 6.35 nats at 95% confidence")
    assert "at least 5.35 nats above its claim" in text and text.endswith(".")
    pooled = {"family": "self", "pairing": "random", "terms": 9, "rejects": True, "excess_lower_bound": 0.4}
    assert view.largest_violation_text(_row([], [pooled])) == (
        "The pooled 'self' test over 9 random pairs: some pair's loss exceeds its claim by at least "
        "0.4 nats, at 95% confidence."
    )
    assert view.largest_violation_text(_row([_pair("c", 0.5, 1.0, violates=False)])).startswith("None:")
    assert view.uniform_flaw_text(row) == "A flaw shared by the vocabulary: no size stated by this run."
    row["audit"]["power"]["statements"] = [
        {"class": "uniform", "excess": 0.0171, "family": "self", "pairing": None}
    ]
    stated = view.uniform_flaw_text(row)
    assert stated.startswith("A flaw shared by the vocabulary, Δ ≥ 0.0171 nats above the claim: had ")
    assert stated.endswith(", it would have been caught.")
    assert view.row_caption({**row, "embedding": "glove", "summary": "audited as shipped"}) == (
        f"{view.library_label(row)}; ε = 1, glove embedding; claim: {view.short_claim(row)}. "
        "audited as shipped"
    )
