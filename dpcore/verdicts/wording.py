"""A verdict row in plain words: the headline, the claim, the largest certified violation, the power.

Nothing here says "private": a row with no violation says what a flaw would have had to be to be
caught, with the test, its size and its confidence (docs/audit-text.md, "What a result means").

One scale for "how much": every amount is in nats of privacy loss, and a violation is stated as
how far above its claim the loss is certified to be (:func:`nats` writes every such number, so the
table, the page and the figure give the same digits for the same row).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from dpcore.formatting import as_number, epsilon_text, percent
from dpcore.pairtest.verdicts import NOT_DETECTED, OUT_OF_REACH, label
from dpcore.verdicts.document import verdict_of
from dpcore.verdicts.rows import is_rewriter_plan, plan_full_vocabulary

#: The partner a pooled pairing gives each word (:mod:`dpcore.textaudit.pooled`), in words.
PARTNER_WORDS: dict[str, str] = {
    "nearest-neighbour": "its nearest neighbour",
    "random": "the word it is randomly paired with",
    "frequency-adjacent": "its neighbour in frequency rank",
}
#: The generic claims (a row without its own citation records one of these).
GENERIC_CLAIMS = ("ε-LDP", "ε·d metric LDP", "ε·d + ε₀ metric LDP")
#: How close the pairs' claimed bound − ε·d must agree to be read as one ε₀ (nats).
_E0_TOLERANCE = 1e-6


def _finite(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def _g(v: float, digits: int = 2) -> str:
    return "∞" if not math.isfinite(v) else f"{v:.{digits}g}"


def nats(v: Any) -> str:
    """An amount of privacy loss in nats as the table, the page and the figure write it: three
    significant figures (``5.35``, ``0.0171``), ``∞`` when it is infinite."""
    return _g(as_number(v), 3)


def _ratio(p: dict[str, Any]) -> float:
    lb, cb = as_number(p["lower_bound"]), as_number(p["claimed_bound"])
    return lb / cb if cb > 0 else math.inf


def largest_violation(row: dict[str, Any]) -> dict[str, Any] | None:
    """The strongest certified violation of a row, or None when there is none.

    The flagged pair with the largest lower bound over claim (the file's definition of the
    largest certified violation), else the pooled test with the largest certified excess. Either
    way ``excess`` is how far above its claim the loss is certified to be, in nats: the pair's
    lower bound − claimed bound, or the pooled test's certified excess.
    """
    if row["status"] != "ran":
        return None
    audit = row["audit"]
    flagged = [p for p in audit["pairs"] if p.get("violates")]
    if flagged:
        w = max(flagged, key=lambda p: (_ratio(p), as_number(p["lower_bound"])))
        return {
            "kind": "pair",
            "x": w["x"],
            "x_prime": w["x_prime"],
            "lower_bound": w["lower_bound"],
            "claimed_bound": w["claimed_bound"],
            "ratio": _ratio(w),
            "excess": as_number(w["lower_bound"]) - as_number(w["claimed_bound"]),
            "event_source": w.get("event_source"),
            "quantity": quantity(row),
        }
    rejecting = [t for t in audit["pooled"] if t.get("rejects")]
    if rejecting:
        t = max(rejecting, key=lambda t: as_number(t["excess_lower_bound"]))
        return {
            "kind": "pooled",
            "family": t["family"],
            "pairing": t["pairing"],
            "terms": t["terms"],
            "excess_lower_bound": t["excess_lower_bound"],
            "excess": as_number(t["excess_lower_bound"]),
        }
    return None


def quantity(row: dict[str, Any]) -> str:
    """What a row's bounds are of: "privacy loss", or for a Rényi-DP claim (a rewriter row whose
    claim has an order) "Rényi divergence of order 2"."""
    from dpcore.rewriter.interface import quantity_words

    return quantity_words((row.get("audit") or {}).get("claim_order"))


def violation_sentence(w: dict[str, Any]) -> str:
    """A certified violation (:func:`largest_violation`) in words, in nats above the claim: "violates
    its claim by at least 5.35 nats (privacy loss ≥ 6.35 nats where 1 is claimed)"."""
    by = f"violates its claim by at least {nats(w['excess'])} nats"
    if w["kind"] == "pair":
        loss, claim = nats(w["lower_bound"]), nats(w["claimed_bound"])
        return f"{by} ({w.get('quantity', 'privacy loss')} ≥ {loss} nats where {claim} is claimed)"
    pairing = f" {w['pairing']}" if w.get("pairing") else ""
    return f"{by} on some pair (pooled '{w['family']}' test over {int(w['terms']):,}{pairing} pairs)"


def power_summary(row: dict[str, Any]) -> dict[str, Any]:
    """The row's power statements: the smallest uniform Δ (None when none was stated) with its
    family and pairing, the single-output probabilities per claim level, the sentence and what is
    not covered."""
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
        "uniform_family": None if best is None else best.get("family", "self"),
        "uniform_pairing": None if best is None else best.get("pairing"),
        "single_output": singles,
        "text": power.get("text", ""),
        "not_covered": list(power.get("not_covered", [])),
    }


def partner_words(pairing: str | None) -> str:
    """The partner a pooled pairing gives a word, in words ("its nearest neighbour")."""
    if not pairing:
        return "its partner"
    return PARTNER_WORDS.get(pairing, f"its {pairing} partner")


def uniform_flaw(family: str | None, pairing: str | None, delta: float) -> str:
    """The flaw a uniform power statement is about, in plain words, to follow "had".

    A uniform statement plants the same excess Δ on every pair of one pooled test
    (:func:`dpcore.textaudit.pooled.uniform_power`): each word's event is e^Δ times as likely
    under the word as its claim allows against its partner. The event is the test's family
    (``self``: the word itself; ``partner``: its partner; ``outside-V``: an output outside the
    vocabulary) and the partner its pairing, e.g. for ``self`` over nearest neighbours at Δ =
    0.0171: "every word come out as itself e^0.0171 ≈ 1.02 times as often as its claim allows
    (relative to how often its nearest neighbour comes out as it)".
    """
    partner = partner_words(pairing)
    times = f"e^{nats(delta)} ≈ {_g(math.exp(delta), 3)} times as often as its claim allows"
    if family in (None, "self"):
        return f"every word come out as itself {times} (relative to how often {partner} comes out as it)"
    if family == "partner":
        return (
            f"every word come out as {partner} {times} (relative to how often that word comes out as itself)"
        )
    if family == "outside-V":
        return (
            f"every word given an output outside the vocabulary {times} (relative to how often {partner} "
            "gives one)"
        )
    return f"every word's '{family}' event been {times.replace('as often', 'as likely')} (against {partner})"


def _cannot_run(row: dict[str, Any]) -> str:
    return f"cannot run: {row['why']}"


def _untested(row: dict[str, Any]) -> str:
    return "untested: the sanitizer's sample() failed on every word tried, so nothing was shown"


def _violates(row: dict[str, Any]) -> str:
    w = largest_violation(row)
    assert w is not None  # the file's validation: a violating row holds its evidence
    return violation_sentence(w)


def call_size_dependence(row: dict[str, Any]) -> str:
    """ "its output depends on the call's size (…), so this covers only the call sizes it drew"
    when the row's audit found its draws differ between call sizes, else ""."""
    calls = (row.get("audit") or {}).get("calls") or {}
    found = [
        str(c.get("text"))
        for c in (calls.get("stage_one_size"), calls.get("stage_two"))
        if isinstance(c, dict) and c.get("status") == "call-size-dependent"
    ]
    if not found:
        return ""
    return f"its output depends on the call's size ({found[0]}), so this covers only the call sizes it drew"


def _out_of_reach(row: dict[str, Any]) -> str:
    a = row.get("audit") or {}
    per = "rewrites per text" if is_rewriter_row(row) else "samples per word"
    return (
        f"{label(OUT_OF_REACH)}: every claimed bound tested is at or above "
        f"{nats(a.get('max_detectable_loss'))}, the largest loss its {int(a.get('samples') or 0):,} "
        f"{per} can certify, so the run could not have shown a violation; nothing was shown "
        "either way"
    )


def is_rewriter_row(row: dict[str, Any]) -> bool:
    """Whether the row audited a rewriter (``audit-rewriter`` on a pair of texts), not a word-level
    sanitizer."""
    return (row.get("audit") or {}).get("unit") == "rewriter" or row.get("guarantee") == "rewriter"


def _not_detected(row: dict[str, Any]) -> str:
    if is_rewriter_row(row):
        sts = ((row.get("audit") or {}).get("power") or {}).get("rewriter_statements") or []
        said = next((str(s["text"]) for s in sts if _finite(s.get("detectable_loss"))), "")
        return f"{label(NOT_DETECTED)}; " + (said or "the run states no flaw it would have caught")
    p = power_summary(row)
    conf = f"{p['power']:g}"
    dep = call_size_dependence(row)
    dep = f"; {dep}" if dep else ""
    if p["uniform_delta"] is not None:
        flaw = uniform_flaw(p["uniform_family"], p["uniform_pairing"], p["uniform_delta"])
        return (
            f"{label(NOT_DETECTED)}{dep}; had {flaw}, that flaw would have been caught with probability "
            f"{conf}"
        )
    reachable = [s for s in p["single_output"] if s["output_probability"] <= 1]
    if reachable:
        s = reachable[len(reachable) // 2]
        return (
            f"{label(NOT_DETECTED)}{dep}; one output with loss claim + 1 nat and probability ≥ "
            f"{_g(s['output_probability'])} (claim {_g(s['claim'], 3)}) would have been caught with "
            f"probability {conf}"
        )
    return f"{label(NOT_DETECTED)}{dep}; the run states no flaw it would have caught"


def failed_share(row: dict[str, Any]) -> str:
    """ "12,491 of 15,000 words (83%) fail to sample (first 'the': …)" when more than 5% of the
    row's words failed, else ""."""
    a = row.get("audit") or {}
    failed = int(a.get("failed_words") or 0)
    screen = a.get("screen") or {}
    tried = int(screen.get("words_screened") or a.get("vocab_size") or 0)
    if failed == 0 or tried == 0 or failed / tried <= 0.05:
        return ""
    first = a.get("first_failure") or ""
    return f"{failed:,} of {tried:,} words ({percent(failed / tried)}) fail to sample" + (
        f" (first {first})" if first else ""
    )


def _premise_broken(row: dict[str, Any]) -> str:
    prem = (row.get("audit") or {}).get("premise") or {}
    e = prem.get("evidence")
    out = "premise broken: the paper's guarantee rests on a construction this implementation does not follow"
    if prem.get("premise"):
        out = f"premise broken: its paper's guarantee needs {prem['premise']}"
    if e:
        out += (
            f"; here {e['x']!r} and {e['x_prime']!r} share {e['shared']} of their {e['set_size_x']} outputs, "
            f"and in {e['draws']:,} draws {e['x']!r} produced {e['x_produced_only_x']:,} times an output "
            f"{e['x_prime']!r} cannot produce"
        )
    fails = failed_share(row)
    return out + (f"; {fails}" if fails else "")


def _with_failures(write: Callable[[dict[str, Any]], str]) -> Callable[[dict[str, Any]], str]:
    def fn(row: dict[str, Any]) -> str:
        fails = failed_share(row)
        return write(row) + (f"; {fails}" if fails else "")

    return fn


#: The headline of each verdict (:func:`dpcore.verdicts.document.verdict_of`); a new verdict adds
#: its own entry here.
HEADLINES: dict[str, Callable[[dict[str, Any]], str]] = {
    "cannot-run": _cannot_run,
    "untested": _untested,
    "violates": _with_failures(_violates),
    "not-detected": _with_failures(_not_detected),
    "out-of-reach": _with_failures(_out_of_reach),
    "premise-broken": _premise_broken,
}


def headline(row: dict[str, Any]) -> str:
    """The row's verdict in plain words.

    Parameters
    ----------
    row
        A verdict file row (:func:`dpcore.verdicts.run.run_row`'s record).

    Returns
    -------
    str
        For instance "violates its claim by at least 5.35 nats (privacy loss ≥ 6.35 nats where 1 is
        claimed)", or "no violation found; had every word come out as itself e^0.0171 ≈ 1.02 times
        as often as its claim allows (relative to how often its nearest neighbour comes out as
        it), that flaw would have been caught with probability 0.9". Each verdict's sentence is
        :data:`HEADLINES`'s; a verdict without one is named as it is.
    """
    v = verdict_of(row)
    write = HEADLINES.get(v)
    return v if write is None else write(row)


def test_sentence(row: dict[str, Any]) -> str:
    """The row's test, size and confidence in one sentence."""
    if row["status"] != "ran":
        return ""
    a = row["audit"]
    conf = percent(a["confidence"], exact=True)
    if is_rewriter_row(row):
        return (
            f"{a['test']}; {a['pairs_tested']} pair(s) of texts, {int(a['samples']):,} rewrites of each "
            f"({int(a.get('selection_rewrites') or 0):,} choose the event); "
            f"ε = {epsilon_text(row['epsilon'])}; confidence {conf} family-wise"
        )
    screen = a.get("screen")
    size = (
        f"{a['pairs_tested']} of {a['pairs_total']} pair(s) confirmed at T = {a['samples']:,} draws per word"
    )
    if screen:
        size = f"screen of {screen['words_screened']:,} words × {screen['draws_per_word']:,} draws, " + size
    where = f"ε = {epsilon_text(row['epsilon'])}, |V| = {a['vocab_size']:,}"
    return f"{a['test']}; {size}; {where}; confidence {conf} family-wise"


def epsilon0(row: dict[str, Any]) -> float | None:
    """ε₀ of a metric claim ε·d(x, x′) + ε₀ (SanText+'s UMLDP: ln 1/p, Yue et al. 2021, Thm 2;
    0 for plain metric LDP); None for an LDP row, or when the row does not tell.

    Read from what the row records: its ``epsilon0``, its audit's claim model
    (``audit.claim.epsilon0``, :mod:`dpcore.textaudit.claims`) or its sanitizer's
    (``audit.sanitizer.epsilon0``); else from its pairs: every kept pair's claimed bound −
    ε·d(x, x′) when they all agree (to 10⁻⁶ nats; a nonzero ε₀ needs two pairs to agree on it).
    They do not agree when the claim's d is not the recorded Euclidean distance (the Mahalanobis
    mechanisms' d_R). A row that records none and whose claim is not UMLDP (the only notion with
    an ε₀, Yue et al. 2021, Def. 3) has ε₀ = 0.
    """
    if row.get("guarantee") != "metric":
        return None
    audit = row.get("audit") or {}
    recorded = [row.get("epsilon0")]
    recorded += [
        (audit.get(k) or {}).get("epsilon0") for k in ("claim", "sanitizer") if isinstance(audit.get(k), dict)
    ]
    for v in recorded:
        if v is not None and not math.isnan(as_number(v)):
            return as_number(v)
    if "UMLDP" not in f"{row.get('summary') or ''} {row.get('claim') or ''}":
        return 0.0  # only UMLDP (Yue et al. 2021, Def. 3) adds an ε₀ to a metric claim
    eps = as_number(row.get("epsilon"))
    diffs = [
        cb - eps * d
        for p in audit.get("pairs", [])
        if math.isfinite(cb := as_number(p.get("claimed_bound")))
        and math.isfinite(d := as_number(p.get("distance")))
    ]
    if not diffs or not math.isfinite(eps) or max(diffs) - min(diffs) > _E0_TOLERANCE:
        return None
    e0 = sum(diffs) / len(diffs)
    if abs(e0) <= _E0_TOLERANCE:
        return 0.0
    return e0 if e0 > 0 and len(diffs) >= 2 else None


def claim_formula(row: dict[str, Any]) -> str:
    """The kind of claim with its formula: "ε-LDP", or "ε·d + ε₀ metric LDP" with its ε₀
    (":func:`epsilon0`": "ε₀ = 0", "ε₀ = 1.2", or "ε₀ not recorded"); "" when the row has no
    guarantee (it did not run)."""
    g = row.get("guarantee")
    if g == "ldp":
        return "ε-LDP"
    if g == "rewriter":
        audit = row.get("audit") or {}
        if audit.get("claim_order") is not None:  # a Rényi claim (RewriterClaim.order)
            order = float(audit["claim_order"])
            return f"Rényi DP of order {order:g}: D_α(M(x) ‖ M(x′)) ≤ the claimed bound per rewrite"
        if str(audit.get("claim_text") or "").startswith("ε·d"):  # RewriterClaim.describe, a metric claim
            return "ε·d(xᵢ, x′ᵢ) at each position, summed over the positions (metric)"
        per_token = audit.get("claim_unit") == "token"
        return "ε per token, n·ε for a text of n tokens" if per_token else "ε per document"
    if g != "metric":
        return ""
    e0 = epsilon0(row)
    return "ε·d + ε₀ metric LDP, " + ("ε₀ not recorded" if e0 is None else f"ε₀ = {_g(e0, 3)}")


def short_claim(row: dict[str, Any]) -> str:
    """The claim in a few words: its formula (:func:`claim_formula`) with the paper it cites where
    the row records one, e.g. "ε·d + ε₀ metric LDP, ε₀ = 1.2 (Yue et al. 2021, Thm 2)"; "—" when
    the row records neither."""
    claim = str(row.get("claim") or "")
    cited = claim if claim not in GENERIC_CLAIMS else ""
    kind = claim_formula(row)
    if kind and cited:
        return f"{kind} ({cited})"
    return kind or cited or "—"


def vocabulary_words(plan: dict[str, Any] | None) -> str:
    """Which vocabulary a recorded plan audited, in a few words."""
    if plan_full_vocabulary(plan):
        return "full vocabulary, offensive words included"
    return "offensive words left out"


def vocabulary_note(rows: list[dict[str, Any]]) -> str:
    """One sentence on the vocabularies a table's rows audited ("" when no row has a plan)."""
    plans = [r["plan"] for r in rows if r.get("plan") and not is_rewriter_plan(r["plan"])]
    if not plans:
        return ""
    full = [plan_full_vocabulary(p) for p in plans]
    if all(full):
        return (
            "Every row audited the full top-|V| vocabulary, offensive words included "
            "(--full-vocabulary in its command): the table was run before dpcore's default "
            "vocabularies left slurs and insults out."
        )
    if not any(full):
        return "Every row audited dpcore's default vocabulary, slurs and insults left out."
    return (
        "Rows whose command says --full-vocabulary audited the full vocabulary, offensive words "
        "included; the others, dpcore's default one, slurs and insults left out."
    )
