"""The claim's curves, ceilings and box tests at any ε: no overflow, no NaN, no warning.

e^ε overflows above ε ≈ 709.78 and ∞·0 is NaN; every curve computes e^ε·x as
exp(min(0, ε + ln x)) instead (dpcore.tradeoff, dpcore.attack.ceiling), so its value at a huge
ε is its limit: the claim then allows every test with FPR > 0 (ceiling 1) and none at FPR = 0
(ceiling δ). Each test runs with warnings turned into errors.
"""

from __future__ import annotations

import dataclasses
import json
import math
import sys

import numpy as np
import pytest

from dpcore.attack.ceiling import claim_shape, ldp_success_ceiling
from dpcore.text import create_text_mechanism
from dpcore.text.vocab import Vocabulary
from dpcore.tradeoff import (
    Box,
    TradeoffPair,
    box_outside,
    box_violation,
    claim_curve,
    claim_tradeoff,
    tpr_at_fpr_entry,
    tpr_ceiling,
    tpr_floor,
)
from dpcore.viz.tradeoff_figure import tradeoff_figure
from tests.conftest import Cli, CliRun

HUGE = (709.0, 710.0, 1e6, 1e300, sys.float_info.max)
FPR = np.array([0.0, 1e-300, 1e-9, 0.01, 0.5, 1.0])

pytestmark = pytest.mark.filterwarnings("error")


@pytest.mark.parametrize("eps", HUGE)
def test_curves_are_their_limit_at_any_epsilon(eps: float) -> None:
    ceiling = tpr_ceiling(FPR, eps)
    assert np.array_equal(ceiling, np.where(FPR > 0, 1.0, 0.0))
    # f and the floor keep e^(−ε)·(1 − α) and e^(−ε)·α, at most e^(−709) ≈ 1.2·10⁻³⁰⁸ here
    assert np.allclose(claim_tradeoff(FPR, eps), np.where(FPR > 0, 0.0, 1.0), rtol=0.0, atol=1e-300)
    assert np.allclose(tpr_floor(FPR, eps), np.where(FPR < 1, 0.0, 1.0), rtol=0.0, atol=1e-300)
    assert np.array_equal(tpr_ceiling(FPR, eps, 1e-5), np.where(FPR > 0, 1.0, 1e-5))
    for covers in ("all", "events"):
        curve = claim_curve(eps, 1e-5, 21, covers=covers)
        assert all(math.isfinite(v) for key in ("tpr_ceiling", "tpr_floor") for v in curve[key])
        assert np.array_equal(tpr_ceiling(FPR, eps, covers=covers), ceiling)


@pytest.mark.parametrize("eps", (700.0, 710.0, 1e6, sys.float_info.max))
def test_a_test_that_names_x_prime_without_false_alarm_is_flagged_at_any_epsilon(eps: float) -> None:
    """(FPR 0, TPR 0.5) with tight intervals breaks every finite ε: Pr[M(x′) ∈ S] ≤ e^ε·0."""
    box = Box(0.0, 0.5, 0.0, 0.0, 0.49, 0.51)
    assert box_violation(box, eps) == ("above", "event")
    assert box_outside(box, eps, covers="events") == "above"
    mirror = Box(0.5, 0.0, 0.49, 0.51, 0.0, 0.0)
    assert box_violation(mirror, eps) == ("below", "event")
    assert box_outside(Box.exact(0.3, 0.9), eps) is None  # both rates positive: allowed in the limit
    assert box_outside(box, math.inf) is None  # no claim


def test_observer_entries_and_the_figure_are_finite_at_a_huge_epsilon() -> None:
    boxes = (
        Box(0.0, 0.5, 0.0, 0.0, 0.49, 0.51, label="never a false alarm"),
        Box.from_counts(0, 1_000, 500, 1_000, alpha=0.01),  # FPR ≤ 0.5%: allowed in the limit
        Box.from_counts(300, 1_000, 900, 1_000, alpha=0.01),
    )
    pair = TradeoffPair("0ⁿ", "1ⁿ", 1e300, boxes=boxes)
    d = pair.to_dict(curve_points=21)
    json.dumps(d, allow_nan=False)  # raises on NaN or ∞
    assert [(o["label"], o["branch"]) for o in d["outside"]] == [("never a false alarm", "event")]
    for e in d["tpr_at_fpr"]:
        assert e["claim_ceiling"] == 1.0 and not e["exceeds_claim"]
    entry = tpr_at_fpr_entry(boxes, epsilon=sys.float_info.max, alpha=0.01)
    assert entry["claim_ceiling"] == 1.0 and "allows at most 100%" in entry["meaning"]
    fig = tradeoff_figure([pair])
    assert all(np.all(np.isfinite(np.asarray(tr.y, dtype=float))) for tr in fig.data)


def _json(run: CliRun) -> object:
    """The JSON a ``cli(...)`` run printed, once it exited 0 with no warning on stderr (NaN and ∞
    refused)."""
    assert run.code == 0
    assert "Warning" not in run.err

    def no_nan(token: str) -> float:
        raise AssertionError(f"{token} in the JSON")

    return json.loads(run.out, parse_constant=no_nan)


@pytest.mark.parametrize("method", ["exact", "mc"])
def test_audit_at_the_largest_epsilon_the_cli_accepts(method: str, cli: Cli) -> None:
    """``audit --epsilon 1000`` (validation's MAX_EPSILON) used to print a RuntimeWarning and hold
    NaN in its claim curve; now every number is finite and no warning is raised."""
    extra = ["--method", "mc", "--trials", "100", "--seed", "0"] if method == "mc" else []
    d = _json(cli("audit", "--mechanism", "laplace", "--dim", "4096", "--epsilon", "1000", *extra, "--json"))
    assert isinstance(d, dict)
    curve = d["tradeoff"]["claim_curve"]
    assert curve["tpr_ceiling"] == [0.0] + [1.0] * (len(curve["fpr"]) - 1)
    assert all(e["claim_ceiling"] == 1.0 for e in d["tpr_at_fpr"])


def _shape():
    words = [f"w{i}" for i in range(12)]
    rng = np.random.default_rng(0)
    vocab = Vocabulary.create(
        embedding="glove",
        words=words,
        vectors=0.3 * rng.normal(size=(len(words), 4)),
        frequency=np.geomspace(1.0, 1e-2, len(words)),
        frequency_source="test",
    )
    mech = create_text_mechanism("santext", vocab=vocab, epsilon=1.0)
    return claim_shape(mech, rng.choice(12, size=200).astype(np.int64))


def test_attack_ceilings_are_their_limit_at_any_epsilon() -> None:
    """The metric and LDP success ceilings (dpcore.attack.ceiling) at huge ε: finite, no
    warning, and 1 (every secret's mass counted), top-1 and top-3 alike, also for a claim stated
    at twice the mechanism's ε (whose claim ε overflows to ∞ at the largest float)."""
    shape = _shape()
    for s in (shape, dataclasses.replace(shape, scale=2.0)):
        for k in (1, 3):
            vals = s.ceiling([0.01, *HUGE], top_k=k)
            assert np.all(np.isfinite(vals)) and vals[0] < 1.0
            assert np.array_equal(vals[1:], np.ones(len(HUGE)))
    probs = np.full(1_000, 1e-3)
    for eps in HUGE:
        assert ldp_success_ceiling(probs, eps) == 1.0 and ldp_success_ceiling(probs, eps, top_k=3) == 1.0
    assert ldp_success_ceiling(probs, 1.0) == pytest.approx(math.e * 1e-3)
