"""The text-audit figure: each pair's lower confidence bound against its claimed bound.

A point above the diagonal is a pair whose privacy loss is, at the stated confidence, larger
than the mechanism claims (a violation). The axes fit the pairs. The largest loss the sample size
can show at all (claims above it cannot be refuted by this run, whatever the mechanism does) is a
dotted line when it lies near the pairs, and a note above the chart when it lies far above them.
The figure is sized for the first screen of a 1280×720 projector under the page's one-sentence
verdict (:func:`headline`), its legend beside the plot; colours are the palette's
(:mod:`dpcore.viz.palette`): red for a violation, green for a pair within its claim.

:func:`pairs_in_words` is the pairs table as the page shows it: an infinite value says in words
what it means (the event never came out of the other word, the claim does not cover the pair).
"""

from __future__ import annotations

import math

import pandas as pd
import plotly.graph_objects as go

from dpcore.formatting import percent
from dpcore.pairtest.verdicts import NOT_DETECTED, OUT_OF_REACH, VIOLATES, label
from dpcore.textaudit.result import TextAuditResult
from dpcore.viz.audit_words import (
    CALL_STATUS_WORDS,
    DECLARATION_STATUS_WORDS,
    EVENT_SOURCE_WORDS,
    POOLED_FAMILY_WORDS,
    RNG_STATUS_WORDS,
    SENTENCE_STATUS_WORDS,
)
from dpcore.viz.palette import BAD, CLAIM, INK, SOFT_INK, colour

__all__ = [
    "FIGURE_HEIGHT",
    "checks_table",
    "headline",
    "pairs_in_words",
    "pairs_table",
    "pooled_pairs_table",
    "pooled_table",
    "power_table",
    "screen_figure",
    "textaudit_figure",
    "worst_words_table",
]

_OK = colour("within-claim")
_BAD = colour("violates")
_FONT = 16
#: The main figure's height (px): under the page's title, sentence and verdict on a 720-px screen.
FIGURE_HEIGHT = 380


def pairs_table(result: TextAuditResult) -> pd.DataFrame:
    """One row per pair with human column names (for the page and the CSV)."""
    rows = []
    for p in result.pairs:
        rows.append(
            {
                "word x": p.x,
                "word x′": p.x_prime,
                "distance d(x, x′)": p.distance,
                "claimed bound": p.claimed_bound,
                "empirical ε̂": p.empirical_epsilon,
                f"lower bound ({percent(result.confidence, exact=True)})": p.lower_bound,
                "exact loss": p.exact_epsilon,
                "violates": "not tested" if p.error else ("yes" if p.violates else "no"),
                "event size |S|": p.event_size,
                "x in S (of T/2)": p.count_x,
                "x′ in S (of T/2)": p.count_x_prime,
                "detectable loss (90%)": (p.detectable_violation or {}).get("loss"),
                "event chosen by": _EVENT_SOURCE.get(p.event_source, p.event_source),
                "note": p.error or "",
            }
        )
    return pd.DataFrame(rows)


def _num_words(v: float | None, infinite: str) -> str:
    """A number as the pairs table shows it: 4 significant digits, ``infinite`` for +∞, blank for
    none."""
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return ""
    return infinite if math.isinf(v) and v > 0 else ("−∞" if math.isinf(v) else f"{v:.4g}")


def pairs_in_words(result: TextAuditResult) -> pd.DataFrame:
    """The pairs as the page shows them: the numbers that decide the verdict first (claimed bound,
    lower bound, violates), then the point estimate and the exact loss, and every infinity in words.

    - A point estimate ε̂ of ∞: the pair's event never came out of the other word in its draws, so
      the ratio of the observed frequencies is infinite; with finitely many draws the lower bound
      stays finite, and it alone decides the verdict ("∞ (never from x′)").
    - A claimed bound of ∞: the claim does not cover the pair ("∞ (not covered by the claim)").
    - An exact loss of ∞: one word gives an output the other never gives ("∞ (an output only one
      word gives)").

    The downloads keep the numbers (:func:`pairs_table`).
    """
    conf = f"lower bound ({percent(result.confidence, exact=True)})"
    rows = []
    for p in result.pairs:
        never = "x′" if p.direction == "x>x'" else "x"
        rows.append(
            {
                "word x": p.x,
                "word x′": p.x_prime,
                "distance d(x, x′)": _num_words(p.distance, "∞"),
                "claimed bound": _num_words(p.claimed_bound, "∞ (not covered by the claim)"),
                conf: _num_words(p.lower_bound, "∞"),
                "violates": "not tested" if p.error else ("yes" if p.violates else "no"),
                "point estimate ε̂": _num_words(p.empirical_epsilon, f"∞ (never from {never})"),
                "exact loss": _num_words(p.exact_epsilon, "∞ (an output only one word gives)"),
                "note": p.error or "",
            }
        )
    cols = ["word x", "word x′", "distance d(x, x′)", "claimed bound", conf, "violates", "point estimate ε̂"]
    return pd.DataFrame(rows, columns=[*cols, "exact loss", "note"])


def headline(result: TextAuditResult) -> str:
    """The verdict in one plain sentence with its number, for the top of the page.

    "Violates its claim: 3 of 6 pairs lose more privacy than claimed; for (house, car) the loss is
    at least 2.9 nats where 1 is claimed (95% confidence)."; "No violation detected by this test:
    none of the 14 pairs is certified above its claim (the closest, (cancer, breast), loses at
    least 1.17 nats where 3.46 is claimed); this does not show the mechanism is private."; an
    untested run is said to be one. The full verdict (power, what is not covered, the run's notes)
    is :attr:`TextAuditResult.verdict_text`.
    """
    tested = [p for p in result.pairs if p.error is None]
    conf = percent(result.confidence, exact=True)
    if result.verdict == "violates":
        viol = [p for p in tested if p.violates]
        if viol:
            w = max(viol, key=lambda p: (p.ratio, p.lower_bound))
            many = f"{len(viol)} of {len(tested)} pairs lose more privacy than claimed; for "
            return (
                f"Violates its claim: {many if len(tested) > 1 else 'for '}({w.x}, {w.x_prime}) the loss "
                f"is at least {w.lower_bound:.3g} nats where {w.claimed_bound:.3g} is claimed ({conf} "
                "confidence)."
            )
        rejected = [t for t in result.pooled if t.get("rejects")]
        t = max(rejected, key=lambda t: t.get("excess_lower_bound", 0.0), default={})
        return (
            f"Violates its claim: a pooled test over {int(t.get('terms', 0)):,} pairs of the vocabulary "
            f"shows some pair at least {float(t.get('excess_lower_bound', 0.0)):.3g} nats above its "
            f"claim ({conf} confidence)."
        )
    if result.verdict == "untested":
        return "Nothing could be tested, so this run shows neither a violation nor its absence."
    if result.verdict == OUT_OF_REACH:
        lowest = min(p.claimed_bound for p in tested)
        return (
            f"Out of reach: every claimed bound (≥ {lowest:.3g} nats) is at or above "
            f"{result.max_detectable_loss:.3g}, the largest loss {result.samples:,} samples per word can "
            f"certify at {conf} confidence, so this run could not have shown a violation and shows nothing "
            "either way."
        )
    if tested:
        w = max(tested, key=lambda p: (p.ratio, p.lower_bound))
        bound = f"loses at least {w.lower_bound:.3g} nats where {w.claimed_bound:.3g} is claimed"
        which = (
            f"none of the {len(tested)} pairs is certified above its claim (the closest, ({w.x}, "
            f"{w.x_prime}), {bound})"
            if len(tested) > 1
            else f"the pair ({w.x}, {w.x_prime}) is not certified above its claim (it {bound})"
        )
        return f"No violation detected by this test: {which}; this does not show the mechanism is private."
    return (
        "No violation detected by this test: no pooled test over the vocabulary found a loss above "
        "the claim; this does not show the mechanism is private."
    )


#: Where a pair's reported event came from, in words (the module-private name other code reads).
_EVENT_SOURCE = EVENT_SOURCE_WORDS


def pooled_table(result: TextAuditResult) -> pd.DataFrame:
    """One row per pooled test over the vocabulary (family × pairing), in the run's order.

    ``Σ e^(−claim)·count`` is X = Σ e^{−c_x}·A_x (how often each word's event came out of the
    word, weighted by its claim) and ``Σ partner count`` is Y = Σ B_x (how often it came out of
    the partner); a family violates its claim when the lower bound on E[X] exceeds the upper
    bound on E[Y] (docs/audit-text.md, "Pooled tests over the vocabulary").
    """
    rows = []
    for t in result.pooled:
        terms = int(t.get("terms", 0))
        if terms == 0:
            verdict = "not run: no pair to test"
        else:
            verdict = label(VIOLATES if t.get("rejects") else NOT_DETECTED)
        rows.append(
            {
                "event": POOLED_FAMILY_WORDS.get(t.get("family"), t.get("family")),
                "pairing": t.get("pairing"),
                "pairs": terms,
                "Σ e^(−claim)·count": _sig(t.get("x_sum")),
                "lower bound": _sig(t.get("lower")),
                "Σ partner count": round(t.get("y_sum", 0)),  # a count
                "upper bound": _sig(t.get("upper")),
                "verdict": verdict,
                "excess ≥ (nats)": t.get("excess_lower_bound") if t.get("rejects") else None,
                "draws per word": t.get("draws_per_word"),
                "level α": t.get("alpha"),
                "family": t.get("family"),
            }
        )
    return pd.DataFrame(rows)


def pooled_pairs_table(result: TextAuditResult) -> pd.DataFrame:
    """The pairs that carry most of the excess of each rejecting pooled test (``excess carried``:
    e^(−claim)·count from x − count from x′); they were confirmed on fresh draws with the
    proposed pairs."""
    rows = []
    for t in result.pooled:
        if not t.get("rejects"):
            continue
        for tp in t.get("top_pairs", []):
            event = {"x": tp["x"], "x'": tp["x_prime"]}.get(tp.get("event"), "an output outside V")
            claim = float(tp.get("claim", math.nan))
            rows.append(
                {
                    "pooled test": f"{POOLED_FAMILY_WORDS.get(t['family'], t['family'])}, {t['pairing']}",
                    "word x": tp["x"],
                    "partner x′": tp["x_prime"],
                    "event": event,
                    "count from x": tp.get("count_x"),
                    "count from x′": tp.get("count_x_prime"),
                    "claim": claim,
                    "excess carried": _sig(
                        math.exp(-claim) * tp.get("count_x", 0) - tp.get("count_x_prime", 0)
                    ),
                    "draws per word": t.get("draws_per_word"),
                }
            )
    return pd.DataFrame(rows)


def checks_table(result: TextAuditResult) -> pd.DataFrame:
    """The checks of the sanitizer's contract made before any verdict: the rng contract (with the
    replay of the audit's own calls), how it may be called, and the declaration test, each with
    its status (machine and plain words) and its sentence."""
    rc = result.rng_contract or {}
    rc_status = rc.get("status", "unchecked")
    calls = getattr(result, "calls", None) or {}
    users = calls.get("stage_two") or {}
    decl = result.declaration or {"status": "not-declared"}
    d_status = decl.get("status", "not-declared")
    d_text = decl.get("text") if result.declaration is not None else None
    d_text = d_text or "the sanitizer declares no exact distribution (no log_prob_row): nothing to test"
    return pd.DataFrame(
        [
            {
                "check": "Random generator (rng contract)",
                "status": rc_status,
                "result": RNG_STATUS_WORDS.get(rc_status, rc_status),
                "what was found": rc.get("text") or "the rng contract was not checked",
            },
            {
                "check": "How it is called (call check)",
                "status": calls.get("status", "unchecked"),
                "result": CALL_STATUS_WORDS.get(calls.get("status", "unchecked"), calls.get("status")),
                "what was found": calls.get("text") or "the calls were not checked",
            },
            {
                "check": "Stage 2 in sentence calls",
                "status": users.get("status", "skipped"),
                "result": SENTENCE_STATUS_WORDS.get(users.get("status", "skipped"), users.get("status")),
                "what was found": users.get("text") or "not drawn",
            },
            {
                "check": "Declared distribution",
                "status": d_status,
                "result": DECLARATION_STATUS_WORDS.get(d_status, d_status),
                "what was found": d_text,
                "p-value": decl.get("p_value"),
                "level α": decl.get("alpha"),
            },
        ]
    )


def power_table(result: TextAuditResult) -> pd.DataFrame:
    """What the whole pipeline would have caught with probability ≥ its power, one row per
    statement of :attr:`TextAuditResult.power` (class, claim, excess and the sentence)."""
    pw = result.power or {}
    rows = []
    for s in pw.get("statements", []):
        cls = s.get("class")
        excess = float(s.get("excess", math.inf))
        claim = s.get("claim")
        if cls == "uniform":
            flaw = f"a flaw shared by the vocabulary ({s.get('pairing')} partners)"
            caught = (
                f"every word coming out as itself e^Δ times as often as its claim allows, relative to "
                f"how often its partner comes out as it, is caught for Δ ≥ {excess:.3g} nats "
                f"(partner rate {s.get('partner_rate', 0):.2g} "
                "per draw)"
                if math.isfinite(excess)
                else "cannot be caught at this run's size"
            )
        elif cls == "single-output":
            p = float(s.get("output_probability", math.inf))
            flaw = f"one pair, {excess:g} nat above its claim on one output"
            caught = (
                f"caught when that output has probability ≥ {p:.2g} under M(x) (claim {claim:.3g})"
                if math.isfinite(p) and p <= 1
                else f"cannot be caught at claim {claim:.3g}, whatever the output's probability"
            )
        elif cls == "tested-pairs":
            flaw = "a tested pair, on the event its selection half finds"
            caught = (
                f"flagged for a loss ≥ claim + {excess:.3g} on an event of probability "
                f"{s.get('event_probability', 0):g} (claim {claim:.3g})"
                if math.isfinite(excess)
                else f"cannot be flagged at claim {claim:.3g}"
            )
        else:
            flaw, caught = str(cls), ""
        rows.append(
            {
                "class": cls,
                "flaw": flaw,
                "caught when": caught,
                "claim": claim,
                "excess": excess,
                "output probability": s.get("output_probability"),
                "power": s.get("power", pw.get("power")),
            }
        )
    return pd.DataFrame(rows)


#: The T-limit line is drawn when it is at most this factor above the data, else it is a note.
T_LIMIT_NEAR = 1.3


def textaudit_figure(result: TextAuditResult) -> go.Figure:
    """Scatter of claimed bound (x) against lower bound (y), with the diagonal."""
    tested = [p for p in result.pairs if p.error is None]
    fig = go.Figure()
    finite = [p.claimed_bound for p in tested] + [p.lower_bound for p in tested]
    finite += [p.exact_epsilon for p in tested if p.exact_epsilon is not None]
    finite = [v for v in finite if math.isfinite(v)]
    # The axes fit the data; the largest loss T samples can show is a line only when it is near
    # them (within 1.3× the data), else a note above the plot (it once squeezed every pair into
    # the bottom fifth of the chart).
    data_top = max([1e-3, *finite]) * 1.15
    t_limit = float(result.max_detectable_loss)
    limit_in_range = math.isfinite(t_limit) and t_limit <= T_LIMIT_NEAR * data_top
    top = max(data_top, t_limit * 1.08) if limit_in_range else data_top
    fig.add_trace(
        go.Scatter(
            x=[0, top],
            y=[0, top],
            mode="lines",
            line={"color": CLAIM, "dash": "dash"},
            name="claimed bound (y = x)",
            hoverinfo="skip",
        )
    )
    limit_name = f"largest loss {result.samples:,} samples can show"
    if limit_in_range:
        fig.add_trace(
            go.Scatter(
                x=[0, top], y=[t_limit] * 2, mode="lines", line={"color": SOFT_INK, "dash": "dot"},
                name=limit_name, hoverinfo="skip",
            )
        )  # fmt: skip
    else:
        fig.add_annotation(
            x=0, xref="paper", xanchor="left", y=1, yref="paper", yanchor="bottom", showarrow=False,
            text=f"{limit_name}: {t_limit:.3g} (above this range)", font={"color": SOFT_INK},
        )  # fmt: skip
    det = result.detectable_violation or {}
    excess = det.get("excess", math.inf)
    if excess is not None and math.isfinite(excess) and excess > 0:
        e = min(excess, top)
        fig.add_trace(
            go.Scatter(
                x=[0, top, top, 0, 0],
                y=[0, top, min(top + e, top * 2), e, 0],
                mode="lines",
                fill="toself",
                fillcolor="rgba(178, 24, 43, 0.10)",
                line={"width": 0, "color": BAD},
                name=f"could be missed: excess < {excess:.2g}",
                hovertext=(
                    f"could be missed: a loss less than {excess:.2g} nats above the claim, on events of "
                    f"probability ≥ {det.get('event_probability', 0):.2g}; a larger one is flagged with "
                    f"probability ≥ {det.get('power', 0.9):g}"
                ),
                hoverinfo="text",
                hoveron="fills",
            )
        )
    for violates, color, name in (
        (False, _OK, "pair within its claim"),
        (True, _BAD, "pair violates its claim"),
    ):
        pts = [p for p in tested if p.violates == violates]
        if not pts:
            continue
        fig.add_trace(
            go.Scatter(
                x=[p.claimed_bound for p in pts],
                y=[p.lower_bound for p in pts],
                mode="markers",
                marker={"size": 12, "color": color, "symbol": "x" if violates else "circle"},
                name=f"{name} ({len(pts)})",
                text=[
                    f"{p.x} / {p.x_prime}<br>d = {p.distance:.3g}, claim {p.claimed_bound:.3g}<br>"
                    f"ε̂ = {_fmt(p.empirical_epsilon)}, lower bound {p.lower_bound:.3g}"
                    + ("" if p.exact_epsilon is None else f"<br>exact {_fmt(p.exact_epsilon)}")
                    for p in pts
                ],
                hovertemplate="%{text}<extra></extra>",
            )
        )
    exact = [p for p in tested if p.exact_epsilon is not None]
    if exact:
        fig.add_trace(
            go.Scatter(
                x=[p.claimed_bound for p in exact],
                y=[min(p.exact_epsilon, top) for p in exact],
                mode="markers",
                marker={"size": 10, "color": "rgba(0,0,0,0)", "line": {"color": INK, "width": 2}},
                name="exact loss (closed form)",
                text=[f"{p.x} / {p.x_prime}: exact {_fmt(p.exact_epsilon)}" for p in exact],
                hovertemplate="%{text}<extra></extra>",
            )
        )
    fig.update_layout(
        font={"size": _FONT},
        xaxis={"title": "claimed bound for the pair (nats)", "range": [0, top]},
        yaxis={"title": f"loss, lower bound at {percent(result.confidence, exact=True)}", "range": [0, top]},
        # the legend beside the plot, so that the figure fits under the page's verdict
        legend={"orientation": "v", "x": 1.02, "xanchor": "left", "y": 1.0, "yanchor": "top"},
        margin={"l": 70, "r": 20, "t": 36, "b": 40},
        height=FIGURE_HEIGHT,
    )
    return fig


def worst_words_table(result: TextAuditResult) -> pd.DataFrame:
    """The screen's worst words (best pilot score first) and whether a confirmed violation has them."""
    flagged = {w for p in result.pairs if p.violates for w in (p.x, p.x_prime)}
    rows = [
        {
            "word": w["word"],
            "frequency rank": w["rank"] + 1,
            "pilot lower bound − claim": w["score"],
            "in a confirmed violation": "yes" if w["word"] in flagged else "no",
        }
        for w in (result.screen or {}).get("top_words", [])
    ]
    return pd.DataFrame(rows)


def screen_figure(result: TextAuditResult) -> go.Figure:
    """Per screened word, its worst pilot score (pilot lower bound − claim) against its rank.

    Words above 0 looked, on the screen's draws, like they exceed their claim; the screen only
    proposes, and the red crosses are the words of pairs the confirmation flagged.
    """
    import numpy as np

    fig = go.Figure()
    ids = np.asarray(result.screened_ids if result.screened_ids is not None else [], dtype=np.int64)
    scores = np.asarray(result.word_scores if result.word_scores is not None else [], dtype=np.float64)
    ok = np.isfinite(scores)
    shown = np.clip(scores[ok], -20.0, None)
    fig.add_trace(
        go.Scatter(
            x=ids[ok] + 1,
            y=shown,
            mode="markers",
            marker={"size": 4, "color": SOFT_INK, "opacity": 0.5},
            name=f"screened word ({int(ok.sum()):,})",
            hovertemplate="rank %{x}: %{y:.3g}<extra></extra>",
        )
    )
    kth = (result.screen or {}).get("kth_score")
    if kth is not None and math.isfinite(kth) and ids.size:
        fig.add_trace(
            go.Scatter(
                x=[1, int(ids.max()) + 1],
                y=[kth, kth],
                mode="lines",
                line={"color": SOFT_INK, "dash": "dot"},
                name="proposed for confirmation above this",
                hoverinfo="skip",
            )
        )
    flagged = {w for p in result.pairs if p.violates for w in (p.x, p.x_prime)}
    if flagged and ids.size:
        words = [str(w) for w in result.screened_words] if result.screened_words is not None else []
        pos = [k for k, w in enumerate(words) if w in flagged and ok[k]]
        if pos:
            fig.add_trace(
                go.Scatter(
                    x=ids[pos] + 1,
                    y=np.clip(scores[pos], -20.0, None),
                    mode="markers",
                    marker={"size": 13, "color": _BAD, "symbol": "x"},
                    name=f"in a confirmed violation ({len(pos)})",
                    text=[words[k] for k in pos],
                    hovertemplate="%{text}: %{y:.3g}<extra></extra>",
                )
            )
    fig.add_hline(y=0, line={"color": CLAIM, "dash": "dash"})
    fig.update_layout(
        font={"size": _FONT},
        xaxis={"title": "word, by frequency rank", "type": "log"},
        yaxis={"title": "worst pilot loss − claim (nats)"},
        legend={"orientation": "h", "yanchor": "top", "y": -0.2},
        margin={"l": 70, "r": 20, "t": 40, "b": 40},
        height=420,
    )
    return fig


def _sig(v: float | None, digits: int = 4) -> float | None:
    """``v`` to ``digits`` significant figures (tables: sums of counts need no more)."""
    if v is None or not math.isfinite(v):
        return v
    return float(f"{v:.{digits}g}")


def _fmt(v: float | None) -> str:
    if v is None:
        return ""
    return "∞" if math.isinf(v) else f"{v:.4g}"
