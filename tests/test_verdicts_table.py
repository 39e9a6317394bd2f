"""The verdict page's first sentence and table cells (``dpcore.viz.verdicts_table``): the answer in
one sentence with its numbers, and cells short enough for a 1280-px projector, each in full as its
tooltip, on one scale (nats above the claim)."""

from __future__ import annotations

from typing import Any

import pytest

from dpcore.verdicts import page_view as view
from dpcore.verdicts.document import load_shipped, verdict_of
from dpcore.verdicts.wording import nats, short_claim
from dpcore.viz.palette import colour
from dpcore.viz.verdicts_table import (
    COLUMNS,
    claim_cell,
    count_cell,
    headline_sentence,
    table_cells,
    verdict_cell,
)


def _row(
    name: str, group: str, verdict: str | None, *, excess: float = 0.0, delta: float = 0.1
) -> dict[str, Any]:
    row: dict[str, Any] = {
        "name": name,
        "group": group,
        "library": "dpcore",
        "library_version": "0.1.0",
        "guarantee": "ldp",
        "epsilon": 1.0,
        "claim": "Chen et al. 2023 (Findings ACL), §3",
        "seconds": 12.25,
    }
    if verdict is None:
        return row | {"status": "cannot-run", "why": "not installed", "audit": None}
    pairs = []
    if verdict == "violates":
        pair = {"x": "a", "x_prime": "b", "lower_bound": 1.0 + excess, "claimed_bound": 1.0}
        pairs = [pair | {"violates": True, "distance": 1.0, "event_source": "screen"}]
    statements = [{"class": "uniform", "pairing": "random", "excess": delta, "power": 0.9}]
    return row | {
        "status": "ran",
        "why": None,
        "audit": {
            "verdict": verdict,
            "confidence": 0.95,
            "pairs": pairs,
            "pooled": [],
            "vocab_size": 15_000,
            "samples_drawn": 1_000_750_000,
            "power": {"power": 0.9, "statements": statements, "not_covered": [], "text": ""},
        },
    }


def test_the_headline_counts_the_sanitizers_apart_from_the_controls() -> None:
    rows = [
        _row("flawed:a", "control", "violates", excess=1.88),
        _row("flawed:b", "control", "violates", excess=0.0833),
        _row("s1", "dpcore", "not-detected", delta=0.0171),
        _row("s2", "dpcore", "not-detected", delta=0.342),
        _row("s3", "pyPANTERA", None),
    ]
    assert headline_sentence(rows) == (
        "2 of the 3 sanitizers were audited against their claims and none was caught above its claim "
        "(runs sized to catch 0.0171 to 0.342 more privacy loss); 1 was never audited (1 could not run); "
        "both flawed controls were caught."
    )
    # a public sanitizer that violates leads the sentence, with its name and number
    rows.append(_row("pypantera:X", "pyPANTERA", "violates", excess=0.5))
    text = headline_sentence(rows)
    assert text.startswith(
        "3 of the 4 sanitizers were audited against their claims: 1 violates its claim (pypantera:X; "
        "losing 0.5 more privacy than claimed) and 2 showed no violation (runs sized to catch"
    ), text
    # a control that escaped is said so
    rows[0] = _row("flawed:a", "control", "not-detected")
    escaped = "; 1 of 2 flawed controls were caught."
    assert escaped in headline_sentence(rows)
    assert headline_sentence([]) == "No row to show."


def test_the_headline_never_counts_an_unaudited_sanitizer_among_those_not_caught() -> None:
    """Issue 58: rows that could not run, or whose paper's premise is broken, were never audited
    against their claims; the headline counts them apart and says so, instead of inside "None of
    the N sanitizers was caught"."""
    premise = _row("p", "pyPANTERA", "not-detected")
    premise["audit"] = premise["audit"] | {"premise": {"status": "broken"}}
    assert verdict_of(premise) == "premise-broken"
    rows = [_row("s1", "dpcore", "not-detected", delta=0.0171), _row("s2", "mldp-text", None), premise]
    text = headline_sentence(rows)
    assert text.startswith("1 of the 3 sanitizers was audited against its claim and was not caught above it")
    assert "2 were never audited (1 could not run, 1 breaks its paper's premise)" in text
    assert "None of the" not in text
    # nothing audited at all: said plainly, not "none was caught"
    text = headline_sentence([_row("s2", "mldp-text", None), premise])
    assert text == (
        "None of the 2 sanitizers was audited against its claim (1 could not run, 1 breaks its paper's "
        "premise)."
    )
    assert headline_sentence([_row("s2", "mldp-text", None)]) == (
        "The only sanitizer was never audited against its claim (1 could not run)."
    )


def test_the_shipped_headline_gives_the_files_numbers() -> None:
    rows = load_shipped()["rows"]
    text = headline_sentence(rows)
    others = [r for r in rows if r["group"] != "control"]
    quiet = [r for r in others if verdict_of(r) == "not-detected"]
    bad = [r for r in others if verdict_of(r) == "violates"]
    never = len(others) - len(quiet) - len(bad)
    audited = len(quiet) + len(bad)
    lead = f"{audited} of the {len(others)} sanitizers were audited against their claims"
    assert text.startswith(lead), text
    if bad:
        assert f"{len(quiet)} showed no violation" in text
    else:
        assert "none was caught above its claim" in text
    assert f"; {never} were never audited (" in text
    deltas = [view.caught_delta(r) for r in quiet if view.caught_delta(r) is not None]
    assert f"(runs sized to catch {nats(min(deltas))} to {nats(max(deltas))} more privacy loss)" in text
    # a lay headline: privacy loss without units jargon (the table and the figure give nats)
    assert "nats" not in text and "nat " not in text
    assert text.endswith(".") and text.count(".") <= 6  # one sentence (its numbers have points)


def test_cells_are_short_with_the_full_wording_as_tooltips() -> None:
    row = _row("flawed:a", "control", "violates", excess=1.25)
    data = table_cells([row, _row("s3", "pyPANTERA", None)], opened="flawed:a")
    assert data["columns"] == list(COLUMNS) and data["opened"] == "flawed:a"
    first, second = data["rows"]
    assert first["cells"] == [
        "dpcore 0.1.0",
        "flawed:a",
        "ε-LDP (Chen et al. 2023)",
        "violates: ≥ 1.25 above its claim",
        "15,000",
        "1,001 M",
        "12.2",
    ]
    assert first["titles"][2] == short_claim(row) and first["titles"][3] == view.safe_headline(row)
    assert first["titles"][5] == "1,000,750,000 draws"
    assert first["colour"] == colour("violates")
    assert second["cells"][3:6] == ["cannot run", "—", "—"]
    assert second["titles"][3].startswith("cannot run")  # the reason, in full, as the tooltip
    # sort keys: numbers for numbers, missing ones last in the page's sort
    assert first["keys"][5] == 1_000_750_000 and second["keys"][5] is None


def test_claim_and_verdict_cells() -> None:
    metric = _row("m", "dpcore", "not-detected", delta=0.0171) | {
        "guarantee": "metric",
        "claim": "Xu et al. 2021 (PrivateNLP), Vickrey over CMP; Feyisetan et al. 2020",
        "epsilon0": 0.0,
    }
    assert claim_cell(metric) == "ε·d metric LDP (Xu et al. 2021; Feyisetan et al. 2020)"
    assert claim_cell(metric | {"epsilon0": 1.2, "claim": "Yue et al. 2021, Thm 2"}) == (
        "ε·d + ε₀ metric LDP, ε₀ = 1.2 (Yue et al. 2021)"
    )
    assert claim_cell({"guarantee": None, "claim": None}) == "—"
    assert verdict_cell(metric) == "no violation found; would catch ≥ 0.0171"


@pytest.mark.parametrize(
    ("n", "cell"),
    [(None, "—"), (50, "50"), (15_000, "15,000"), (400_000, "400,000"), (3_080_000, "3.1 M"),
     (20_000_100, "20 M"), (1_000_750_000, "1,001 M")],
)  # fmt: skip
def test_counts_fit_a_narrow_column(n: int | None, cell: str) -> None:
    assert count_cell(n) == cell
