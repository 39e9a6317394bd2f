"""Which part of the claim's trade-off curve each box is tested against (dpcore.tradeoff's
``covers`` and ``box_violation``; dpcore.textaudit.tradeoffs), and what the sentences say.

The curve f_ε has two branches (Kairouz, Oh & Viswanath 2015, Thm 2.1): TPR ≤ e^ε·FPR is the
claim applied to the test's event S, 1 − TPR ≥ e^(−ε)·(1 − FPR) the claim applied to Ω∖S. A claim
that covers only some outputs (SanText+'s UMLDP on V_P) implies the first for events made of
covered outputs but not the second, so those boxes are tested against the event branch only.
Everything here is built from counts: no audit is run (each test takes milliseconds).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpcore.formatting import percent
from dpcore.stats import cp_log_ratio_lower
from dpcore.textaudit.observer import text_line
from dpcore.textaudit.result import PairResult
from dpcore.textaudit.tradeoffs import build
from dpcore.tradeoff import (
    TESTED,
    Box,
    TradeoffPair,
    box_outside,
    box_violation,
    claim_curve,
    tpr_at_fpr_entry,
    tpr_ceiling,
    tpr_floor,
)
from dpcore.viz.tradeoff_figure import tradeoff_figure

#: The issue's counterexample: half of x's draws and 99% of x′'s fall in S.
COMPLEMENT_ONLY = (5000, 10_000, 9900, 10_000)
ALPHA = 0.005625


def test_a_box_beyond_only_the_complement_branch_is_not_a_ratio_violation_of_its_event() -> None:
    """At ε = 1 the box of (5000/10⁴, 9900/10⁴) lies wholly above the full curve, but only through
    the complement branch: 1 − FPR ≈ 0.5 > e·(1 − TPR) ≈ 0.03 (the claim on Ω∖S), while the
    one-sided ratio bound on S for the same counts at the same α is 0.653 < 1."""
    box = Box.from_counts(*COMPLEMENT_ONLY, alpha=ALPHA)
    assert box_outside(box, 1.0) == "above"
    assert box_violation(box, 1.0) == ("above", "complement")
    ratio = float(cp_log_ratio_lower(9900, 5000, 10_000, ALPHA))
    assert ratio == pytest.approx(0.653, abs=5e-4) and ratio < 1.0
    # the event branch alone is not broken: with a partial cover the box is inside the claim
    assert box.tpr_low <= math.e * box.fpr_high
    assert box_violation(box, 1.0, covers="events") is None
    assert box_outside(box, 1.0, covers="events") is None
    # the mirror image (the same counts swapped) is below the floor, again only via the complement
    swapped = Box.from_counts(9900, 10_000, 5000, 10_000, alpha=ALPHA)
    assert box_violation(swapped, 1.0) == ("below", "complement")
    assert box_violation(swapped, 1.0, covers="events") is None


def test_a_box_beyond_the_event_branch_is_flagged_whatever_the_cover() -> None:
    """k-RR at 3ε against ε: Pr[M(x′) = x′] ≈ 1% against Pr[M(x) = x′] ≈ 0.05%: a ratio e³."""
    box = Box.from_counts(50, 100_000, 995, 100_000, alpha=0.05)
    for covers in ("all", "events"):
        assert box_violation(box, 1.0, covers=covers) == ("above", "event")
        swapped = Box.from_counts(995, 100_000, 50, 100_000, alpha=0.05)
        assert box_violation(swapped, 1.0, covers=covers) == ("below", "event")
    with pytest.raises(ValueError):
        box_violation(box, 1.0, covers="some")


def test_the_partial_curve_is_the_event_branch_and_its_mirror() -> None:
    eps, delta = 0.5, 1e-3
    f = np.linspace(0.0, 1.0, 101)
    steep, mirror = np.minimum(1.0, math.exp(eps) * f + delta), np.maximum(0.0, math.exp(-eps) * (f - delta))
    assert np.allclose(tpr_ceiling(f, eps, delta, covers="events"), steep)
    assert np.allclose(tpr_floor(f, eps, delta, covers="events"), mirror)
    # the full curve is never above it: a full claim constrains more
    assert np.all(tpr_ceiling(f, eps, delta) <= tpr_ceiling(f, eps, delta, covers="events") + 1e-15)
    assert np.all(tpr_floor(f, eps, delta) >= tpr_floor(f, eps, delta, covers="events") - 1e-15)
    assert tpr_ceiling(0.5, eps, covers="events") > tpr_ceiling(0.5, eps) + 0.1  # the branch left out
    curve = claim_curve(eps, delta, 11, covers="events")
    assert curve["covers"] == "events" and curve["tested"] == TESTED["events"]
    cf = np.asarray(curve["fpr"])
    assert np.allclose(curve["tpr_ceiling"], np.minimum(1.0, math.exp(eps) * cf + delta))


def test_the_pair_record_says_what_was_tested() -> None:
    box = Box.from_counts(*COMPLEMENT_ONLY, alpha=ALPHA, label="output in S")
    full = TradeoffPair("the", "of", 1.0, boxes=(box,))
    part = TradeoffPair("the", "of", 1.0, boxes=(box,), covers="events")
    assert full.covers == "all"  # the default: existing callers unchanged
    (o,) = full.outside()
    assert (o["where"], o["branch"], o["label"]) == ("above", "complement", "output in S")
    assert part.outside() == []
    d = part.to_dict(curve_points=11)
    assert d["covers"] == "events" and d["tested"] == TESTED["events"] and not d["outside"]
    assert "complement branch is not tested" in d["tested"] and "covers" in d["definitions"]
    f = np.asarray(d["claim_curve"]["fpr"])
    assert np.allclose(d["claim_curve"]["tpr_ceiling"], np.minimum(1.0, math.e * f))
    assert full.to_dict(curve_points=11)["tested"] == TESTED["all"]
    with pytest.raises(ValueError):
        TradeoffPair("the", "of", 1.0, covers="some")


def _result(direction: str, claim: float) -> PairResult:
    return PairResult("the", "of", 2.19, claim, 0.0, 0.0, False, direction, 27, 0, 0)


#: SanText+ at ε = 0.1 on 30 words (audit-text --words the --pairs 2 --samples 20000 --seed 0):
#: the pair (the, of), claim ε·d + ε₀ = 1.423, its four tests as stage 2 recorded them.
SANTEXT_TESTS = [
    (-1.2, -1.3, 10, 1144, 3679, 10_000, "x>x'", "selected"),
    (-1.2, -1.25, 26, 5748, 19_146, 20_000, "x>x'", "declared"),
    (1.2, 1.1, 7, 2633, 778, 10_000, "x'>x", "selected"),
    (1.2, 1.17, 27, 20_000, 6003, 20_000, "x'>x", "declared"),
]


def _santext_pairs(eligible: np.ndarray | None) -> tuple[TradeoffPair, ...]:
    return build(
        [_result("x'>x", 1.423)],
        [SANTEXT_TESTS],
        np.array([[0, 1]]),
        rows=None,
        eligible=eligible,
        alpha=1e-3,
        n_tests=8,
        family_alpha=0.035,
    )


def test_a_partial_claim_gets_no_red_cross_for_its_uncovered_complements() -> None:
    """The issue's SanText+ run: the declared events over V_P reach TPR ≈ 96–100% at FPR ≈ 29–30%,
    beyond the complement branch of a full claim, but Ω∖S holds *the* and *of* themselves, which
    UMLDP does not cover; with the sanitizer's protected set the pair is tested on the event
    branch only, and none of its boxes is outside."""
    eligible = np.ones(30, dtype=bool)
    eligible[:3] = False  # the three frequent words SanText+ releases unchanged
    (part,) = _santext_pairs(eligible)
    assert part.covers == "events" and part.outside() == []
    assert "event branch only" in part.note and "complement branch is not tested" in part.note
    line = text_line((part,))
    assert "of 4 event boxes, 0 lie wholly beyond" in line and "and 0 beyond only" in line
    assert "1 of 1 pairs' claims cover only some outputs, so only their event branch is tested" in line
    # the same counts under a claim on every output: both declared boxes are outside, via Ω∖S only
    (full,) = _santext_pairs(None)
    assert full.covers == "all"
    assert [(o["where"], o["branch"]) for o in full.outside()] == [("above", "complement")] * 2
    assert "and 2 beyond only its complement branch" in text_line((full,))
    assert "cover only some outputs" not in text_line((full,))


def test_the_box_label_names_the_word_its_counts_favour() -> None:
    """A test made for 'the' (direction x>x') whose event comes out of 'of' more often: its label
    says it favours 'of', and that it was chosen for 'the'; the box is the counts as measured."""
    (pair,) = _santext_pairs(None)
    b0, b1, b2, b3 = pair.boxes
    assert (pair.null, pair.alt) == ("the", "of")
    assert "favours 'of' (chosen for 'the')" in b0.label and "favours 'of' (chosen for 'the')" in b1.label
    assert "favours 'of'," in b2.label and "chosen" not in b2.label + b3.label
    assert (b0.fpr, b0.tpr) == (0.1144, 0.3679)  # null 'the', alt 'of': above the diagonal, as labelled
    tie = build(
        [_result("x'>x", 1.0)],
        [[(0.0, -1.0, 1, 7, 7, 100, "x>x'", "selected")]],
        np.array([[0, 1]]),
        rows=None,
        eligible=None,
        alpha=1e-3,
        n_tests=1,
        family_alpha=0.01,
    )
    assert "favours neither word" in tie[0].boxes[0].label


def test_the_observer_sentence_states_the_bound_before_the_estimate() -> None:
    boxes = [
        Box.from_counts(100, 10_000, 320, 10_000, alpha=0.01),
        Box.from_counts(900, 10_000, 1200, 10_000, alpha=0.01),
    ]
    e = tpr_at_fpr_entry(boxes, epsilon=2.0, alpha=0.01, null="hiv", alt="flu")
    low, best = percent(e["lower"]), percent(e["tpr"])
    assert e["lower"] < e["tpr"]
    assert (
        f"can name flu correctly at least {low} of the time (stated confidence; the best of the 2"
        in (e["meaning"])
    )
    assert f"measured tests reached {best}, a point estimate biased upward by the choice)" in e["meaning"]
    assert e["meaning"].index(low) < e["meaning"].index(best)
    diagonal = (np.array([0.0, 1.0]), np.array([0.0, 1.0]))
    exact = tpr_at_fpr_entry([], epsilon=2.0, alpha=0.01, exact_curve=diagonal)
    assert "correctly 1% of the time while" in exact["meaning"] and "at least" not in exact["meaning"]


def test_a_partial_claim_does_not_answer_its_tests_the_other_way_round() -> None:
    """A test far below the diagonal, answered the other way round, uses Ω∖S: under a partial
    claim it is not counted, and the ceiling at FPR α is the event branch's."""
    below = Box.exact(0.995, 0.2)
    full = tpr_at_fpr_entry([below], epsilon=1.0, alpha=0.01)
    part = tpr_at_fpr_entry([below], epsilon=1.0, alpha=0.01, covers="events")
    assert full["tpr"] > 0.5 and full["exceeds_claim"]  # (0.005, 0.8) mirrored, then randomised
    assert part["tpr"] == pytest.approx(0.01) and not part["exceeds_claim"]  # no better than guessing
    assert part["claim_ceiling"] == pytest.approx(math.e * 0.01)
    assert "using only outputs the claim covers" in part["meaning"]


def test_the_figure_draws_only_the_tested_branch_of_a_partial_claim() -> None:
    box = Box.from_counts(*COMPLEMENT_ONLY, alpha=ALPHA, label="declared event")
    part = TradeoffPair("the", "of", 1.0, boxes=(box,), covers="events")
    fig = tradeoff_figure([part], log_axes=False)
    names = [tr.name or "" for tr in fig.data]
    assert not any("violation" in n for n in names)
    (ceiling,) = [tr for tr in fig.data if "claim's ceiling" in (tr.name or "")]
    assert "event branch only" in ceiling.name and "made of covered outputs" in ceiling.name
    x = np.asarray(ceiling.x)
    assert np.allclose(np.asarray(ceiling.y), np.minimum(1.0, math.e * x))
    full = tradeoff_figure([TradeoffPair("the", "of", 1.0, boxes=(box,))], log_axes=False)
    (cross,) = [tr for tr in full.data if "violation" in (tr.name or "")]
    assert "beyond only the complement branch" in cross.text[0]
