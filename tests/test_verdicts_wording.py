"""A verdict row in plain words, the rows of the table, and what a row that cannot run records."""

from __future__ import annotations

import math

import pytest

from dpcore.validation import DPCoreError
from dpcore.verdicts import wording
from dpcore.verdicts.document import evidence_says, validate
from dpcore.verdicts.rows import GROUPS, catalogue, select
from dpcore.verdicts.run import run_row
from dpcore.verdicts.wording import headline, largest_violation, power_summary, short_claim


def _row(**audit: object) -> dict:
    base = {
        "verdict": "not-detected",
        "pairs": [],
        "pooled": [],
        "power": {"power": 0.9, "statements": [], "text": "", "not_covered": ["x"]},
        "violating_pairs_total": 0,
        "pairs_tested": 3,
        "pairs_total": 3,
        "test": "pooled Chernoff tests …",
        "confidence": 0.95,
        "samples": 1000,
        "vocab_size": 300,
        "screen": None,
    }
    return {"status": "ran", "epsilon": 1.0, "audit": base | audit, "claim": None, "guarantee": "ldp"}


def _pair(lower: float, claim: float, violates: bool) -> dict:
    return {"x": "a", "x_prime": "b", "lower_bound": lower, "claimed_bound": claim, "violates": violates}


def test_a_flagged_pair_gives_the_ratio_of_its_lower_bound_to_its_claim() -> None:
    row = _row(
        verdict="violates", violating_pairs_total=2, pairs=[_pair(1.5, 1.0, True), _pair(6.4, 1.0, True)]
    )
    assert headline(row) == "violates its claim by at least ×6.4"
    w = largest_violation(row)
    assert w is not None and w["kind"] == "pair" and w["ratio"] == pytest.approx(6.4)


def test_a_zero_claim_has_no_ratio() -> None:
    row = _row(verdict="violates", violating_pairs_total=1, pairs=[_pair(0.7, 0.0, True)])
    assert largest_violation(row)["ratio"] == math.inf  # type: ignore[index]
    assert headline(row) == "violates its claim: a loss ≥ 0.7 nats where it claims 0"


def test_a_pooled_rejection_alone_is_a_violation_in_nats() -> None:
    t = {"family": "self", "pairing": "random", "terms": 2000, "rejects": True, "excess_lower_bound": 2.0}
    row = _row(verdict="violates", pooled=[t])
    assert evidence_says(row["audit"]) == "violates"
    assert headline(row) == (
        "violates its claim: some pair's loss exceeds it by at least 2 nats "
        "(pooled 'self' test over 2,000 pairs)"
    )


def test_no_violation_names_the_flaw_that_would_have_been_caught() -> None:
    uniform = {"class": "uniform", "excess": 0.41, "pairing": "nearest-neighbour"}
    single = {"class": "single-output", "claim": 1.4, "output_probability": 0.18}
    row = _row(power={"power": 0.9, "statements": [uniform, single], "text": "t", "not_covered": []})
    assert headline(row) == (
        "no violation found; a flaw of Δ = 0.41 nats shared by the vocabulary would have been caught "
        "with probability 0.9"
    )
    row = _row(power={"power": 0.9, "statements": [single], "text": "t", "not_covered": []})
    assert power_summary(row)["uniform_delta"] is None
    assert headline(row).startswith(
        "no violation found; one output with loss claim + 1 nat and probability ≥ 0.18"
    )
    row = _row()
    assert headline(row) == "no violation found; the run states no flaw it would have caught"
    assert "confidence 95% family-wise" in wording.test_sentence(row)


def test_untested_and_cannot_run() -> None:
    row = _row(verdict="untested", pairs_tested=0)
    assert evidence_says(row["audit"]) == "untested" and headline(row).startswith("untested")
    assert headline({"status": "cannot-run", "why": "no"}) == "cannot run: no"
    assert wording.test_sentence({"status": "cannot-run"}) == ""


def test_short_claim_prefers_the_paper() -> None:
    assert short_claim({"claim": "Yue et al. 2021, eq. 1", "guarantee": "metric"}) == "Yue et al. 2021, eq. 1"
    assert short_claim({"claim": "ε-LDP", "guarantee": "ldp"}) == "ε-LDP"
    assert short_claim({"claim": None, "guarantee": "metric"}) == "ε·d metric LDP"


def test_the_catalogue_and_its_selection() -> None:
    specs = catalogue()
    assert [s.group for s in specs] == sorted((s.group for s in specs), key=GROUPS.index)
    assert all(s.expected == "violates" and s.fixed is not None for s in specs if s.group == "control")
    assert [s.name for s in select(specs, ["krr", "control"])][-1] == "krr"
    with pytest.raises(DPCoreError, match="no row named 'nope'"):
        select(specs, ["nope"])


def test_a_library_that_is_not_installed_keeps_its_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    import dpcore.textaudit.pypantera as pp

    monkeypatch.setattr(pp, "pypantera_available", lambda: False)
    rows = [s for s in catalogue() if s.group == "pyPANTERA"]
    assert len(rows) == 7 and all(s.unavailable and "pip install pypantera" in s.unavailable for s in rows)
    row = run_row(rows[0], minutes=0.05, seed=0, workers=1)
    assert row["status"] == "cannot-run" and row["why"] == rows[0].unavailable and row["audit"] is None
    d = {"schema": "dpcore-verdicts/1", "header": {}, "rows": [row]}
    assert not [p for p in validate(d) if p.startswith("row ")]
