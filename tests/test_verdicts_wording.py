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


def test_a_flagged_pair_is_stated_in_nats_above_its_claim() -> None:
    row = _row(
        verdict="violates", violating_pairs_total=2, pairs=[_pair(1.5, 1.0, True), _pair(6.35, 1.0, True)]
    )
    assert (
        headline(row)
        == "violates its claim by at least 5.35 nats (privacy loss ≥ 6.35 nats where 1 is claimed)"
    )
    w = largest_violation(row)
    assert w is not None and w["kind"] == "pair" and w["ratio"] == pytest.approx(6.35)
    assert w["excess"] == pytest.approx(5.35)


def test_the_largest_violation_is_the_largest_ratio_stated_in_nats() -> None:
    # (2.25, 1) has the larger ratio, (10, 8) the larger excess: the file's definition picks the
    # ratio, and the headline states that pair's lower bound − claim
    row = _row(
        verdict="violates", violating_pairs_total=2, pairs=[_pair(10.0, 8.0, True), _pair(2.25, 1.0, True)]
    )
    assert (
        headline(row)
        == "violates its claim by at least 1.25 nats (privacy loss ≥ 2.25 nats where 1 is claimed)"
    )


def test_a_zero_claim_has_no_ratio() -> None:
    row = _row(verdict="violates", violating_pairs_total=1, pairs=[_pair(0.7, 0.0, True)])
    assert largest_violation(row)["ratio"] == math.inf  # type: ignore[index]
    assert (
        headline(row)
        == "violates its claim by at least 0.7 nats (privacy loss ≥ 0.7 nats where 0 is claimed)"
    )


def test_a_pooled_rejection_alone_is_a_violation_in_nats() -> None:
    t = {"family": "self", "pairing": "random", "terms": 2000, "rejects": True, "excess_lower_bound": 2.0}
    weaker = t | {"family": "partner", "excess_lower_bound": 0.5}
    row = _row(verdict="violates", pooled=[weaker, t])
    assert evidence_says(row["audit"]) == "violates"
    assert headline(row) == (
        "violates its claim by at least 2 nats on some pair (pooled 'self' test over 2,000 random pairs)"
    )
    assert largest_violation(row)["excess"] == 2.0  # type: ignore[index]


def _uniform(delta: float, pairing: str = "nearest-neighbour", family: str = "self") -> dict:
    return {"class": "uniform", "family": family, "excess": delta, "pairing": pairing}


def test_no_violation_names_the_flaw_that_would_have_been_caught() -> None:
    single = {"class": "single-output", "claim": 1.4, "output_probability": 0.18}
    row = _row(power={"power": 0.9, "statements": [_uniform(0.41), single], "text": "t", "not_covered": []})
    assert headline(row) == (
        "no violation found; had every word come out as itself e^0.41 ≈ 1.51 times as often as its "
        "claim allows (relative to how often its nearest neighbour comes out as it), that flaw would "
        "have been caught with probability 0.9"
    )
    row = _row(power={"power": 0.9, "statements": [single], "text": "t", "not_covered": []})
    assert power_summary(row)["uniform_delta"] is None
    assert headline(row).startswith(
        "no violation found; one output with loss claim + 1 nat and probability ≥ 0.18"
    )
    row = _row()
    assert headline(row) == "no violation found; the run states no flaw it would have caught"
    assert "confidence 95% family-wise" in wording.test_sentence(row)


def test_the_flaw_named_is_the_smallest_statements_own() -> None:
    # an LDP run: two pairings; the smaller Δ (frequency-adjacent) is the one named, with its partner
    sts = [_uniform(0.5, "random"), _uniform(0.2, "frequency-adjacent"), _uniform(math.inf, "random")]
    row = _row(power={"power": 0.8, "statements": sts, "text": "t", "not_covered": []})
    assert headline(row) == (
        "no violation found; had every word come out as itself e^0.2 ≈ 1.22 times as often as its "
        "claim allows (relative to how often its neighbour in frequency rank comes out as it), that "
        "flaw would have been caught with probability 0.8"
    )


@pytest.mark.parametrize(
    ("family", "pairing", "words"),
    [
        ("self", "random", "come out as itself e^0.1 ≈ 1.11 times as often as its claim allows "
         "(relative to how often the word it is randomly paired with comes out as it)"),
        ("partner", "nearest-neighbour", "come out as its nearest neighbour e^0.1 ≈ 1.11 times as often "
         "as its claim allows (relative to how often that word comes out as itself)"),
        ("outside-V", "frequency-adjacent", "given an output outside the vocabulary e^0.1 ≈ 1.11 times "
         "as often as its claim allows (relative to how often its neighbour in frequency rank gives one)"),
    ],
)  # fmt: skip
def test_each_uniform_family_and_pairing_in_words(family: str, pairing: str, words: str) -> None:
    assert wording.uniform_flaw(family, pairing, 0.1) == f"every word {words}"


def test_a_new_verdict_gets_its_own_headline(monkeypatch: pytest.MonkeyPatch) -> None:
    row = _row(verdict="a-new-verdict")
    assert headline(row) == "a-new-verdict"  # named as it is until it has a sentence
    monkeypatch.setitem(wording.HEADLINES, "a-new-verdict", lambda r: "its own sentence")
    assert headline(row) == "its own sentence"


def test_a_broken_premise_leads_with_its_evidence_and_the_failed_words() -> None:
    premise = {
        "status": "broken",
        "premise": "output sets that partition V",
        "evidence": {
            "x": ",",
            "x_prime": "and",
            "shared": 16,
            "set_size_x": 20,
            "x_produced_only_x": 367,
            "draws": 2000,
        },
    }
    row = _row(verdict="untested")
    row["audit"] |= {"premise": premise, "failed_words": 12_491, "first_failure": "'the': ValueError"}
    row["audit"]["screen"] = {"words_screened": 15_000}
    text = headline(row)
    assert text.startswith("premise broken: its paper's guarantee needs output sets that partition V")
    assert "',' and 'and' share 16 of their 20 outputs" in text
    assert "in 2,000 draws ',' produced 367 times an output 'and' cannot produce" in text
    assert text.endswith("12,491 of 15,000 words (83%) fail to sample (first 'the': ValueError)")
    assert "violates" not in text
    # few failures are not part of the headline; many are, whatever the verdict
    row["audit"]["failed_words"] = 100
    assert "fail to sample" not in headline(row)


def _metric(e0: float, distances: list[float], eps: float = 1.0, **row: object) -> dict:
    pairs = [_pair(0.1, eps * d + e0, False) | {"distance": d} for d in distances]
    return _row(pairs=pairs) | {"guarantee": "metric", "epsilon": eps} | row


def test_short_claim_writes_the_formula_then_the_paper() -> None:
    santext_plus = _metric(
        math.log(1 / 0.3), [0.67, 0.68, 3.2], claim="Yue et al. 2021, Thm 2", summary="UMLDP"
    )
    assert wording.epsilon0(santext_plus) == pytest.approx(math.log(1 / 0.3))
    assert short_claim(santext_plus) == "ε·d + ε₀ metric LDP, ε₀ = 1.2 (Yue et al. 2021, Thm 2)"
    plain = _metric(0.0, [0.5, 2.0], eps=4.5, claim="ε·d metric LDP")
    assert short_claim(plain) == "ε·d + ε₀ metric LDP, ε₀ = 0"
    # a claim on another distance than the recorded one: the pairs do not tell ε₀
    other = _metric(0.0, [0.5, 2.0], claim="Xu et al. 2020, Theorem 1", summary="UMLDP")
    other["audit"]["pairs"][0]["claimed_bound"] += 0.02
    assert wording.epsilon0(other) is None
    assert short_claim(other) == "ε·d + ε₀ metric LDP, ε₀ not recorded (Xu et al. 2020, Theorem 1)"
    assert short_claim(other | {"epsilon0": 0.0}) == "ε·d + ε₀ metric LDP, ε₀ = 0 (Xu et al. 2020, Theorem 1)"
    other["audit"]["claim"] = {"notion": "metric", "epsilon0": 0.0}  # the claim model records it
    assert short_claim(other) == "ε·d + ε₀ metric LDP, ε₀ = 0 (Xu et al. 2020, Theorem 1)"
    # one pair cannot tell a nonzero ε₀ from a claim on another distance
    um = {"summary": "UMLDP"}
    assert (
        wording.epsilon0(_metric(0.3, [1.0], **um)) is None
        and wording.epsilon0(_metric(0.0, [1.0], **um)) == 0.0
    )
    # a metric claim that is not UMLDP has no ε₀ (Yue et al. 2021, Def. 2 vs Def. 3)
    assert wording.epsilon0(_metric(0.3, [1.0, 2.0])) == 0.0
    assert short_claim({"claim": "Chen et al. 2023", "guarantee": "ldp"}) == "ε-LDP (Chen et al. 2023)"
    assert short_claim({"claim": "ε-LDP", "guarantee": "ldp"}) == "ε-LDP"
    assert short_claim({"claim": None, "guarantee": None}) == "—"


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


def test_a_call_size_dependence_is_in_the_headline() -> None:
    row = _row(verdict="not-detected")
    text = "the output distribution of 'the' depends on the call's size"
    row["audit"]["calls"] = {
        "status": "same",
        "stage_one_size": {"status": "call-size-dependent", "text": text},
    }
    h = headline(row)
    assert h.startswith(f"no violation found; its output depends on the call's size ({text})")
    assert "covers only the call sizes it drew" in h
    row["audit"]["calls"]["stage_one_size"]["status"] = "same"
    assert "call's size" not in headline(row)
