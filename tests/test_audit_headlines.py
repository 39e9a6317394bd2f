"""The vector audit's sentences, built in the library beside their numbers (issue 60 item 8:
thin pages): :mod:`dpcore.audit.headlines`, which the Privacy-loss audit page shows."""

from __future__ import annotations

import math

from dpcore.audit.headlines import headline, observer_sentence, shown_name, worst_loss

ROWS = [
    {"mechanism": "adept", "dim": 8, "exact": 5.0, "exact_lr": 7.0},
    {"mechanism": "adept", "dim": 128, "exact": 106.5, "exact_lr": 106.5},
    {"mechanism": "laplace", "dim": 128, "exact": 0.07, "exact_lr": 0.998},
]


def test_a_violator_is_named_with_its_largest_drawn_loss() -> None:
    text = headline(ROWS, ["adept", "laplace"], 1.0, ["adept"], [])
    assert text == (
        "In this test, ADePT breaks the promise of ε = 1: ADePT's privacy loss reaches 106 at n = 128; "
        "Laplace stays within it."
    )


def test_the_best_attack_and_then_the_certified_bound_speak_when_the_vote_does_not() -> None:
    lr_only = [{"mechanism": "adept", "dim": 4, "exact": 0.5, "exact_lr": 3.0}]
    assert worst_loss(lr_only, "adept", 1.0) == (
        "ADePT's privacy loss under the best attack reaches 3 at n = 4"
    )
    inf = [{"mechanism": "adept", "dim": 4, "exact": math.inf, "exact_lr": math.inf}]
    assert worst_loss(inf, "adept", 1.0) == "ADePT's privacy loss is infinite"
    mc = [{"mechanism": "adept", "dim": 64, "mc_verdict": "violates", "mc_verdict_lower_bound": 2.345}]
    assert worst_loss(mc, "adept", 1.0) == (
        "ADePT's privacy loss is at least 2.35 at n = 64 (lower confidence bound)"
    )
    assert worst_loss([], "adept", 1.0) == "ADePT exceeds it"


def test_no_violation_is_never_called_privacy_and_no_claim_is_said() -> None:
    within = headline(ROWS, ["laplace"], 1.0, [], [])
    assert within == (
        "In this test, no mechanism shown exceeds its promise of ε = 1 (passing one test is not a proof "
        "of privacy)."
    )
    assert "private" not in within.replace("privacy", "")
    assert headline([], ["copy"], 1.0, [], ["copy"]).endswith("claims no privacy: nothing to test.")
    assert shown_name("adept") == "ADePT (flawed reproduction)" and shown_name("laplace") == "Laplace"


def test_the_observer_sentence_gives_each_rate_and_the_claims_ceiling() -> None:
    cells = {
        "adept": (None, [{"fpr": 0.01, "tpr": 1.0, "claim_ceiling": 0.0272}]),
        "laplace": (
            None,
            [{"fpr": 0.01, "tpr": 0.0126, "claim_ceiling": 0.0272}, {"fpr": 0.05, "tpr": 0.06}],
        ),
    }
    assert observer_sentence(cells, 128, 1.0) == (
        "At n = 128, an observer who wrongly names 1ⁿ for 1 in 100 releases of 0ⁿ names it rightly 100% "
        "of the time for ADePT and 1.3% of the time for Laplace; ε = 1 allows at most 2.7%."
    )
    assert observer_sentence({"laplace": (None, [{"fpr": 0.05, "tpr": 0.06}])}, 8, 1.0) == ""
