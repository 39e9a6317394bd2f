"""A verdict row in plain words: the headline, the largest certified violation, the power.

Nothing here says "private": a row with no violation says what a flaw would have had to be to be
caught, with the test, its size and its confidence (docs/audit-text.md, "What a result means").
"""

from __future__ import annotations

import math
from typing import Any

from dpcore.verdicts.document import verdict_of


def _ratio(p: dict[str, Any]) -> float:
    return p["lower_bound"] / p["claimed_bound"] if p["claimed_bound"] > 0 else math.inf


def largest_violation(row: dict[str, Any]) -> dict[str, Any] | None:
    """The strongest certified violation of a row: the flagged pair with the largest lower bound
    over claim, else the pooled test with the largest certified excess; None when there is none."""
    if row["status"] != "ran":
        return None
    audit = row["audit"]
    flagged = [p for p in audit["pairs"] if p.get("violates")]
    if flagged:
        w = max(flagged, key=lambda p: (_ratio(p), p["lower_bound"]))
        return {
            "kind": "pair",
            "x": w["x"],
            "x_prime": w["x_prime"],
            "lower_bound": w["lower_bound"],
            "claimed_bound": w["claimed_bound"],
            "ratio": _ratio(w),
            "event_source": w.get("event_source"),
        }
    rejecting = [t for t in audit["pooled"] if t.get("rejects")]
    if rejecting:
        t = max(rejecting, key=lambda t: t["excess_lower_bound"])
        return {
            "kind": "pooled",
            "family": t["family"],
            "pairing": t["pairing"],
            "terms": t["terms"],
            "excess_lower_bound": t["excess_lower_bound"],
        }
    return None


def power_summary(row: dict[str, Any]) -> dict[str, Any]:
    """The row's power statements: the smallest uniform Δ (None when none was stated), the
    single-output probabilities per claim level, the sentence and what is not covered."""
    power = (row.get("audit") or {}).get("power") or {}
    sts = power.get("statements", [])
    uniform = [s for s in sts if s["class"] == "uniform" and _finite(s["excess"])]
    best = min(uniform, key=lambda s: s["excess"]) if uniform else None
    singles = [
        {"claim": s["claim"], "output_probability": s["output_probability"]}
        for s in sts
        if s["class"] == "single-output"
    ]
    return {
        "power": power.get("power", 0.9),
        "uniform_delta": None if best is None else float(best["excess"]),
        "uniform_pairing": None if best is None else best.get("pairing"),
        "single_output": singles,
        "text": power.get("text", ""),
        "not_covered": list(power.get("not_covered", [])),
    }


def _finite(v: Any) -> bool:
    return isinstance(v, (int, float)) and math.isfinite(v)


def _g(v: float, digits: int = 2) -> str:
    return "∞" if not math.isfinite(v) else f"{v:.{digits}g}"


def headline(row: dict[str, Any]) -> str:
    """The row's verdict in plain words, e.g. "violates its claim by at least ×6.4" or "no
    violation found; a flaw of Δ = 0.41 nats shared by the vocabulary would have been caught with
    probability 0.9"."""
    v = verdict_of(row)
    if v == "cannot-run":
        return f"cannot run: {row['why']}"
    if v == "untested":
        return "untested: the sanitizer's sample() failed on every word tried, so nothing was shown"
    if v == "violates":
        w = largest_violation(row)
        assert w is not None
        if w["kind"] == "pair":
            if math.isfinite(w["ratio"]):
                return f"violates its claim by at least ×{_g(w['ratio'])}"
            return f"violates its claim: a loss ≥ {_g(w['lower_bound'], 3)} nats where it claims 0"
        return (
            f"violates its claim: some pair's loss exceeds it by at least {_g(w['excess_lower_bound'])} "
            f"nats (pooled '{w['family']}' test over {w['terms']:,} pairs)"
        )
    p = power_summary(row)
    conf = f"{p['power']:g}"
    if p["uniform_delta"] is not None:
        return (
            f"no violation found; a flaw of Δ = {_g(p['uniform_delta'])} nats shared by the vocabulary "
            f"would have been caught with probability {conf}"
        )
    reachable = [s for s in p["single_output"] if s["output_probability"] <= 1]
    if reachable:
        s = reachable[len(reachable) // 2]
        return (
            f"no violation found; one output with loss claim + 1 nat and probability ≥ "
            f"{_g(s['output_probability'])} (claim {_g(s['claim'], 3)}) would have been caught with "
            f"probability {conf}"
        )
    return "no violation found; the run states no flaw it would have caught"


def test_sentence(row: dict[str, Any]) -> str:
    """The row's test, size and confidence in one sentence."""
    if row["status"] != "ran":
        return ""
    a = row["audit"]
    conf = f"{100 * a['confidence']:g}%"
    screen = a.get("screen")
    size = (
        f"{a['pairs_tested']} of {a['pairs_total']} pair(s) confirmed at T = {a['samples']:,} draws per word"
    )
    if screen:
        size = f"screen of {screen['words_screened']:,} words × {screen['draws_per_word']:,} draws, " + size
    where = f"ε = {row['epsilon']:g}, |V| = {a['vocab_size']:,}"
    return f"{a['test']}; {size}; {where}; confidence {conf} family-wise"


def short_claim(row: dict[str, Any]) -> str:
    """The claim in a few words: ε-LDP or ε·d metric LDP, with the paper where known."""
    claim = row.get("claim") or ""
    g = row.get("guarantee")
    kind = "ε-LDP" if g == "ldp" else ("ε·d metric LDP" if g == "metric" else "")
    if claim and claim not in ("ε-LDP", "ε·d metric LDP"):
        return claim
    return kind or claim or "—"
