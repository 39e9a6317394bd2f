"""What the text audit means for an observer: event boxes against the claim's trade-off curve, and
TPR at 1% and 5% FPR (dpcore.textaudit.tradeoffs, ``audit-text --json``'s ``tpr_at_fpr`` and
``tradeoff``).

The two audits of the issue run in full (about 4 s each): ``flawed:krr-overclaimed`` (k-RR kept
at 3ε while claiming ε) puts its measured events wholly outside the claim's curve, the correct
``krr`` puts none there.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpcore.stats import cp_log_ratio_lower
from dpcore.textaudit.observer import text_line, tpr_record
from dpcore.textaudit.result import PairResult
from dpcore.textaudit.tradeoffs import build, strongest_first, thin_curve
from dpcore.tradeoff import FPR_LEVELS, Box, box_outside, box_violation, roc_from_logpmfs, tpr_ceiling
from tests.conftest import Cli

ISSUE_ARGS = ["--epsilon", "1", "--vocab-size", "2000", "--seed", "0"]


def _audit_argv(mechanism: str) -> list[str]:
    """``audit-text`` of ``mechanism`` at the issue's settings, with ``--json``."""
    return ["audit-text", "--mechanism", mechanism, *ISSUE_ARGS, "--json"]


def test_krr_overclaimed_puts_its_events_outside_the_claims_curve(cli: Cli):
    out = cli(_audit_argv("flawed:krr-overclaimed")).json()
    assert out["verdict"] == "violates"
    for key in ("pairs", "verdict_text", "alpha_accounting", "declaration"):  # the existing record
        assert key in out
    rec, tr = out["tpr_at_fpr"], out["tradeoff"]
    # the pair with the strongest evidence is the verdict's worst pair
    assert f"({rec['null']!r}, {rec['alt']!r})" in out["verdict_text"] or (
        f"({rec['alt']!r}, {rec['null']!r})" in out["verdict_text"]
    )
    worst = tr["pairs"][0]
    assert (worst["null"], worst["alt"]) == (rec["null"], rec["alt"])
    assert tr["shown"] == len(tr["pairs"]) == min(tr["cap"], tr["total"]) and tr["total"] == len(out["pairs"])
    # the violating pair's measured point lies outside the claim's curve, its whole box included
    above = [o for o in worst["outside"] if o["where"] == "above"]
    assert above
    for o in above:
        assert o["tpr_low"] > float(tpr_ceiling(o["fpr_high"], worst["epsilon"]))
    # a full-cover LDP claim: the whole curve is tested, and k-RR at 3ε breaks it on the events
    # themselves (the branch the verdict's ratio test sees), not only on their complements
    assert worst["covers"] == "all" and "complement branch" in worst["tested"]
    assert {o["branch"] for p in tr["pairs"] for o in p["outside"]} == {"event"}
    # boxes at the verdict's per-test level: never looser than the verdict
    alpha = out["alpha_per_test"]
    assert all(b["confidence"] == pytest.approx(1.0 - alpha) for p in tr["pairs"] for b in p["boxes"])
    assert f"α = {alpha:.3g}" in worst["note"]
    # k-RR declares its rows and the declaration test agreed: the exact curve is there, above the claim
    assert worst["exact_curve"] is not None and worst["exact_outside"]
    # TPR at 1% and 5% FPR with bounds, the claim's ceiling and one sentence
    assert [e["fpr"] for e in rec["levels"]] == list(FPR_LEVELS)
    for e in rec["levels"]:
        assert e["how"] == "estimated" and e["lower"] <= e["tpr"] <= e["upper"]
        assert e["claim_ceiling"] == pytest.approx(min(1.0, math.e * e["fpr"]))
        assert rec["null"] in e["meaning"] and rec["alt"] in e["meaning"]
    one_in = rec["levels"][0]["meaning"]
    assert "for 1 in 100 inputs" in one_in and "at most 2.7%" in one_in
    # 3ε keeps the word with p = e³/(e³ + 1999), others 1/(e³ + 1999): the exact TPR at 1% FPR
    p, q = math.exp(3) / (math.exp(3) + 1999), 1 / (math.exp(3) + 1999)
    # (ROC: (q, p) for the output alt, then slope 1 over the 1,998 outputs equally likely under both)
    assert rec["exact"][0]["tpr"] == pytest.approx(p + 0.01 - q, rel=1e-9)
    assert rec["levels"][0]["lower"] <= rec["exact"][0]["tpr"] <= rec["levels"][0]["upper"]
    assert rec["outside"] == worst["outside"]


def test_krr_puts_no_event_outside_the_claims_curve(cli: Cli):
    out = cli(_audit_argv("krr")).json()
    assert out["verdict"] == "not-detected"
    tr = out["tradeoff"]
    assert tr["pairs"] and all(not p["outside"] and not p["exact_outside"] for p in tr["pairs"])
    for e in out["tpr_at_fpr"]["levels"]:
        assert not e["exceeds_claim"] and e["lower"] <= e["claim_ceiling"]
    # the text output counts every pair's boxes, not only the JSON's first ones
    code, text, _ = cli(["audit-text", "--mechanism", "krr", *ISSUE_ARGS])
    assert code == 0
    line = next(ln for ln in text.splitlines() if ln.startswith("observer: "))
    n_boxes = out["alpha_accounting"]["confirmation_tests"]  # one box per test of the Bonferroni count
    assert f"of {n_boxes} event boxes, 0 lie wholly beyond their pair's claim on the event itself" in line
    assert "and 0 beyond only its complement branch" in line and "cover only some outputs" not in line


# --- the module, from arrays ---------------------------------------------------------------------
def _result(x: str, xp: str, direction: str, lb: float, claim: float = 1.0, **kw) -> PairResult:
    return PairResult(x, xp, 1.0, claim, lb, lb, lb > claim, direction, 1, 0, 0, **kw)


def test_boxes_name_the_favoured_word_and_keep_the_verdicts_level():
    alpha = 1e-3
    r = _result("hiv", "flu", "x'>x", 2.0)
    tests = [
        (2.2, 2.0, 1, 900, 90, 50_000, "x'>x", "selected"),  # favours flu: flu's hits are the TPR
        (0.1, -1.0, 3, 300, 280, 50_000, "x>x'", "selected"),  # favours hiv: below the diagonal
    ]
    (pair,) = build(
        [r], [tests], np.array([[0, 1]]), rows=None, eligible=None, alpha=alpha, n_tests=4, family_alpha=0.04
    )
    assert (pair.null, pair.alt) == ("hiv", "flu")
    b0, b1 = pair.boxes
    assert (b0.fpr, b0.tpr) == (90 / 50_000, 900 / 50_000)
    assert (b1.fpr, b1.tpr) == (300 / 50_000, 280 / 50_000)
    assert b0.confidence == b1.confidence == 1.0 - alpha
    assert "favours 'flu'" in b0.label and "favours 'hiv'" in b1.label
    assert pair.exact_fpr is None and "No exact curve" in pair.note and "4 tests" in pair.note


def test_a_box_beyond_the_event_branch_is_a_violation_of_the_verdicts_own_test():
    """Wherever a box lies wholly beyond ε's event branch (above it, or below its mirror for the
    same counts swapped), the verdict's one-sided bound at the same α exceeds ε too (random counts,
    both kinds of event size). Beyond only the complement branch it need not:
    tests/test_tradeoff_coverage.py."""
    rng = np.random.default_rng(0)
    alpha, eps, n = 1e-3, 1.0, 20_000
    seen = 0
    for _ in range(2_000):
        b = int(rng.integers(0, 300))
        a = int(min(n, b * rng.uniform(0.5, 12.0) + rng.integers(0, 40)))
        box = Box.from_counts(b, n, a, n, alpha=alpha)
        hit = box_violation(box, eps)
        if hit == ("above", "event"):
            seen += 1
            assert float(cp_log_ratio_lower(a, b, n, alpha)) > eps
            assert box_violation(Box.from_counts(a, n, b, n, alpha=alpha), eps) == ("below", "event")
        assert (hit is not None) == (box_outside(box, eps) is not None)
    assert seen > 100


def test_the_strongest_pair_comes_first_and_the_exact_curve_is_thinned_exactly():
    k = 3_000
    rng = np.random.default_rng(1)
    logits = rng.standard_normal((2, k))
    rows = {i: logits[i] - np.logaddexp.reduce(logits[i]) for i in range(2)}
    rows[2] = rows[1]
    results = [
        _result("a", "c", "x>x'", 0.2),
        _result("a", "b", "x>x'", 1.5),  # the only violation: first
        _result("b", "c", "x>x'", 0.9),
        _result("b", "z", "x>x'", math.nan, error="failed"),
    ]
    assert strongest_first(results) == [1, 2, 0]
    tests = [[(0.5, r.lower_bound, 1, 50, 20, 1_000, "x>x'", "declared")] for r in results[:3]] + [[]]
    ids = np.array([[0, 2], [0, 1], [1, 2], [1, 3]])
    pairs = build(results, tests, ids, rows=rows, eligible=None, alpha=1e-3, n_tests=9, family_alpha=0.04)
    assert [(p.null, p.alt) for p in pairs] == [("b", "a"), ("c", "b"), ("c", "a")]
    full = roc_from_logpmfs(rows[1], rows[0])
    thin = pairs[0].exact_curve
    assert full[0].size > 1_000 and thin[0].size < 200
    for a in FPR_LEVELS:  # the TPR read at each level is the exact curve's
        assert np.interp(a, *thin) == pytest.approx(np.interp(a, *full), abs=1e-12)
    grid = np.linspace(0, 1, 501)  # chords: never above the exact curve
    assert np.all(np.interp(grid, *thin) <= np.interp(grid, *full) + 1e-12)
    # a partial cover of the outputs: no exact curve
    (p,) = build(
        results[1:2],
        tests[1:2],
        ids[1:2],
        rows=rows,
        eligible=np.ones(k, bool),
        alpha=1e-3,
        n_tests=1,
        family_alpha=0.04,
    )
    assert p.exact_fpr is None and "covers only some outputs" in p.note
    rec = tpr_record(pairs[0])
    assert rec["exact"] is not None and len(rec["levels"]) == len(FPR_LEVELS)
    assert text_line(pairs).startswith("observer: telling 'b' from 'a'") and text_line(()) is None


def test_thinning_keeps_an_exceedance():
    f = np.linspace(0, 1, 2_001) ** 2
    t = np.sqrt(f)  # far above ε = 0.1's ceiling at small FPR
    tf, tt = thin_curve(f, t, 0.1, keep=20)
    excess = t - tpr_ceiling(f, 0.1)
    assert tf.size < 40 and float(np.max(tt - tpr_ceiling(tf, 0.1))) == pytest.approx(float(excess.max()))


def test_the_result_record_is_unchanged():
    """``to_dict`` (what the golden results compare) holds none of the new keys."""
    from dpcore.textaudit.result import TextAuditResult

    assert "tradeoff_pairs" in TextAuditResult.__dataclass_fields__
    assert not TextAuditResult.__dataclass_fields__["tradeoff_pairs"].compare
