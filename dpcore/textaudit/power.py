"""What a text audit could have caught: the smallest violation flagged with probability ≥ 0.9.

One test's power (:func:`~dpcore.pairtest.power.flag_probability`, the detectable violation
:func:`~dpcore.pairtest.power.detectable_excess`) is the pair test's, in
:mod:`dpcore.pairtest.power`.

:func:`pipeline_statements` states what the whole pipeline would have caught, class by class:
:func:`proposal_probability` (the screen proposing a pair for one output, at the largest residual
bound of a screened word and an upper quantile of the screen's K-th score), less the chance that
quantile is exceeded, times :func:`flag_probability` (stage 2 flagging it on fresh draws) for a
single-output violation, and :func:`~dpcore.textaudit.pooled.uniform_power` for a flaw shared by
the vocabulary.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
from scipy.special import gammaln

from dpcore.pairtest.power import DEFAULT_POWER, _range, detectable_excess, flag_probability
from dpcore.stats import cp_lower, cp_upper
from dpcore.text.sampling import pair_distances
from dpcore.textaudit.pairs import nearest_neighbors
from dpcore.textaudit.screen import BOTTOM_PRODUCERS, LOW_RESIDUAL_PARTNERS

__all__ = [
    "pipeline_statements",
    "proposal_probability",
    "single_output_probability",
]

#: The single-output statement is for a loss this many nats above the claim.
SINGLE_OUTPUT_EXCESS = 1.0


def proposal_probability(
    m: int, p: float, q: float, claim: float, threshold: float, residual: float
) -> float:
    """Chance that the screen scores a single violating output y above ``threshold``.

    x produces y with probability p, x′ with q, among m draws each. The screen's score of y is
    ln CP⁻(A; m, 0.05) − ln CP⁺(B̂; m, 0.05) − claim, B̂ being x′'s count when y is listed for x′
    (then B ≥ x′'s residual bound) and x′'s residual bound r′ otherwise, so B̂ ≤ max(B, r′); y must
    be listed for x (A above x's residual bound). Computed exactly over A ~ Bin(m, p),
    B ~ Bin(m, q) with B̂ = max(B, r) and A > r: for any r at least both words' residual bounds
    (the power statement passes the largest of the run) this only lowers the score, so the chance
    is not overstated.
    """
    from dpcore.textaudit.screen import SCREEN_ALPHA

    if not math.isfinite(threshold):
        return 1.0 if threshold < 0 else 0.0
    r = round(residual)
    a = np.arange(*_span(m, p))
    b = np.arange(*_span(m, q))
    with np.errstate(divide="ignore"):
        la = np.log(cp_lower(a, m, SCREEN_ALPHA))
        lb = np.log(cp_upper(np.maximum(b, r), m, SCREEN_ALPHA))
    pa = _pmf(a, m, p)
    pb = _pmf(b, m, q)
    ok = (la[:, None] - lb[None, :] - claim > threshold) & (a[:, None] > r)
    return float(np.clip(pa @ ok.astype(np.float64) @ pb, 0.0, 1.0))


def _span(n: int, p: float) -> tuple[int, int]:
    lo, hi = _range(n, p)
    return lo, hi + 1


def _pmf(k: np.ndarray, n: int, p: float) -> np.ndarray:
    if p <= 0:
        return (k == 0).astype(np.float64)
    if p >= 1:
        return (k == n).astype(np.float64)
    lg = gammaln(n + 1.0) - gammaln(k + 1.0) - gammaln(n - k + 1.0)
    return np.exp(lg + k * math.log(p) + (n - k) * math.log1p(-p))


def single_output_probability(
    *,
    m: int,
    threshold: float,
    residual: float,
    samples: int,
    alpha: float,
    claim: float,
    excess: float = SINGLE_OUTPUT_EXCESS,
    power: float = DEFAULT_POWER,
    miss: float = 0.0,
) -> float:
    """Smallest p: a pair violating its claim by ``excess`` on one output of probability p is flagged.

    The whole pipeline: the screen proposes the pair (:func:`proposal_probability`, m draws), then
    stage 2 tests the output the screen proposed it for on all T = ``samples`` fresh draws at the
    per-test ``alpha`` (:func:`flag_probability`, exact). The pair is proposed when its score
    clears the K-th score of the other pairs; that bar varies from run to run, so ``threshold``
    is an upper quantile of it that a run exceeds with chance at most ``miss``, and
    Pr[proposed] ≥ Pr[score > threshold] − ``miss``. The two stages use independent draws, so the
    flag probability is at least (Pr[score > threshold] − miss) · Pr[flag]. ∞ when no p reaches
    ``power``.
    """
    if not math.isfinite(claim):
        return math.inf

    def flagged(p: float) -> float:
        q = p * math.exp(-(claim + excess))
        prop = max(0.0, proposal_probability(m, p, q, claim, threshold, residual) - miss)
        return prop * flag_probability(samples, alpha, claim, p, excess)

    if flagged(1.0) < power:
        return math.inf
    lo, hi = 0.0, 1.0
    for _ in range(40):
        mid = math.sqrt(max(lo, 1e-12) * hi) if lo > 0 else hi / 8
        if flagged(mid) >= power:
            hi = mid
        else:
            lo = mid
        if hi - lo < 0.02 * hi:
            break
    return hi


def pipeline_statements(
    *,
    strategy: str,
    guarantee: str,
    screen: dict[str, Any] | None,
    pooled: list[Any],
    claims_tested: list[float],
    samples: int,
    alpha_pair: float,
    candidate_claims: np.ndarray | None,
    power: float = DEFAULT_POWER,
    call_sizes: tuple[int, ...] = (),
) -> dict[str, Any]:
    """What the whole audit would have caught with probability ≥ ``power``, class by class.

    Classes covered (each with its own computation, all for the pipeline as run, selection
    included):

    ``uniform``
        A flaw shared by every word of a pooled family: each word's event (itself, its partner)
        is e^{Δ} times more likely than its claim allows against its partner. The pooled test has
        no data-dependent selection, so its rejection probability is the pipeline's lower bound;
        it is simulated at the partner rate this run observed
        (:func:`~dpcore.textaudit.pooled.uniform_power`).
    ``single-output``
        One pair whose loss exceeds its claim by :data:`SINGLE_OUTPUT_EXCESS` nats on one output:
        the smallest probability of that output under M(x), per claim level
        (:func:`single_output_probability`), whichever pair it is: the partner's unlisted outputs
        are scored at the largest residual bound of any screened word (``residual_max``), and the
        bar is the screen's upper quantile of the K-th score (``kth_score_upper``, exceeded by a
        rerun with chance ≤ :data:`~dpcore.textaudit.screen.THRESHOLD_MISS`, which is subtracted).
        A record without these keys (built by hand) is stated at its ``residual_median`` and
        ``kth_score``.

    What is not covered is listed in ``not_covered``; ``call_sizes`` are the sizes of the
    ``sample`` calls the run made (named there).
    """
    from dpcore.textaudit.pooled import uniform_power

    statements: list[dict[str, Any]] = []
    texts: list[str] = []
    if screen is not None:
        m = int(screen["draws_per_word"])
        for t in pooled:
            if t.family != "self" or t.terms == 0:
                continue
            q = t.y_sum / (m * t.terms)
            delta = uniform_power(t.claim_groups, q, m, t.alpha, power=power)
            statements.append(
                {
                    "class": "uniform",
                    "family": t.family,
                    "pairing": t.pairing,
                    "terms": t.terms,
                    "partner_rate": q,
                    "excess": delta,
                    "power": power,
                }
            )
        unif = [s for s in statements if s["class"] == "uniform" and math.isfinite(s["excess"])]
        if unif:
            b = min(unif, key=lambda s: s["excess"])
            texts.append(
                "a flaw shared by the vocabulary (every word coming out as itself e^Δ times as often as "
                f"its claim allows, relative to how often its {b['pairing']} partner comes out as it) is "
                f"caught for Δ ≥ {b['excess']:.3g} "
                f"nats (pooled '{b['family']}' test, at the partner rate this run observed, "
                f"{b['partner_rate']:.2g} per draw)"
            )
        singles = _single_statements(
            screen, _claim_levels(guarantee, candidate_claims, claims_tested), samples, alpha_pair, power
        )
        statements += singles
        shown = [s for s in singles if math.isfinite(s["output_probability"])]
        if shown:
            lv = ", ".join(f"p ≥ {s['output_probability']:.2g} at claim {s['claim']:.3g}" for s in shown)
            texts.append(
                f"a pair whose loss exceeds its claim by ≥ {SINGLE_OUTPUT_EXCESS:g} nat on one output is "
                f"caught when that output has probability under M(x) of {lv} (any pair: its partner's "
                f"unlisted outputs counted at the largest residual bound, {shown[0]['residual']:g} of "
                f"{m:,} draws; the screen's bar at {shown[0]['threshold']:.3g}, which a rerun's K-th "
                f"score exceeds with chance ≤ {shown[0]['threshold_miss']:g}, counted as a miss)"
            )
        not_covered = [
            "a violation on a pair the screen never scored (not a nearest neighbour, random or pooled "
            "partner, nor a top producer of the output)",
            "a violation spread over outputs each below the single-output probability above, on a pair "
            "that is not one of the side-by-side pairs scored on all outputs",
            "a flaw shared by the vocabulary on an event other than the word itself, its partner or an "
            "output outside V",
            "anything on outputs the sanitizer's guarantee does not protect",
            "a single output against a word other than the top producer's "
            f"{LOW_RESIDUAL_PARTNERS} lowest-residual words and {BOTTOM_PRODUCERS} rarest producers, "
            "unless it is its neighbour or random partner",
            *_run_limits(call_sizes),
        ]
    else:
        levels = sorted({round(c, 6) for c in claims_tested if math.isfinite(c)})[:3]
        for c in levels:
            det = detectable_excess(samples // 2, alpha_pair, c, 0.5)
            statements.append(
                {
                    "class": "tested-pairs",
                    "claim": c,
                    "excess": det.excess,
                    "event_probability": 0.5,
                    "power": power,
                }
            )
        not_covered = [
            "any pair not in the tested list",
            "a violation whose best event the selection half does not find (the statement is for the "
            "tests' own events)",
            *_run_limits(call_sizes),
        ]
        if levels:
            texts.append(
                "only the named pairs were tested; for them, a loss above claim + Δ on an event of "
                "probability 0.5 that the selection half finds is flagged for Δ ≥ "
                + ", ".join(f"{s['excess']:.3g} (claim {s['claim']:.3g})" for s in statements)
            )
    text = "; ".join(texts) if texts else "no class of flaw can be stated for this run"
    text += ". Not covered: " + "; ".join(not_covered)
    return {
        "power": power,
        "statements": statements,
        "not_covered": not_covered,
        "text": f"with probability ≥ {power:g} (whole pipeline): " + text,
    }


def _single_statements(
    screen: dict[str, Any], levels: list[float], samples: int, alpha: float, power: float
) -> list[dict[str, Any]]:
    """The single-output statements at each claim level (:func:`single_output_probability`)."""
    from dpcore.textaudit.screen import THRESHOLD_MISS

    upper = "kth_score_upper" in screen
    threshold = float(screen["kth_score_upper"] if upper else screen["kth_score"])
    residual = float(screen.get("residual_max", screen["residual_median"]))
    miss = THRESHOLD_MISS if upper else 0.0
    out = []
    for c in levels:
        p = single_output_probability(
            m=int(screen["draws_per_word"]),
            threshold=threshold,
            residual=residual,
            samples=samples,
            alpha=alpha,
            claim=c,
            power=power,
            miss=miss,
        )
        out.append(
            {
                "class": "single-output",
                "claim": c,
                "excess": SINGLE_OUTPUT_EXCESS,
                "output_probability": p,
                "power": power,
                "threshold": threshold,
                "threshold_miss": miss,
                "residual": residual,
            }
        )
    return out


def _run_limits(call_sizes: tuple[int, ...]) -> list[str]:
    """What no run of this kind can see: other call sizes, outputs that never repeat, carried state."""
    sizes = sorted({int(n) for n in call_sizes})
    named = f" (this run's calls had {', '.join(f'{n:,}' for n in sizes)} words)" if sizes else ""
    return [
        f"calls to sample with other numbers of words than this run made{named}",
        "a dependence on the call (its size, the words around it, draws within it) that only words "
        "other than the call check's probe words show",
        "outputs outside V that never repeat and neither begin nor end with a word of V after a "
        "separator (a random token, say; a word passed through with a fresh tag is counted in that "
        "word's tag class): no count here can show them",
        "state the sanitizer carries from one call to the next (the run makes its calls in one order "
        "on one object)",
    ]


def _claim_levels(guarantee: str, candidate: np.ndarray | None, tested: list[float]) -> list[float]:
    """The claims the single-output statement is given at: ε (LDP), or the 10%, 50% and 90%
    quantiles of the screen's nearest-neighbour claims (metric)."""
    vals = np.asarray(candidate if candidate is not None else tested, dtype=np.float64)
    vals = vals[np.isfinite(vals)]
    if vals.size == 0:
        return []
    if guarantee == "ldp" or np.ptp(vals) < 1e-9:
        return [float(vals[0])]
    return [float(v) for v in np.quantile(vals, [0.1, 0.5, 0.9])]


# --- the audit's stage -----------------------------------------------------------------------


def run(
    *,
    strategy: str,
    sanitizer: Any,
    vocab: Any,
    screen_ids: np.ndarray | None,
    screen_info: dict[str, Any] | None,
    nn: np.ndarray | None,
    pooled: list[Any],
    results: list[Any],
    samples: int,
    alpha_pair: float,
    claims: Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray],
    call_sizes: tuple[int, ...] = (),
) -> dict[str, Any]:
    """The statements stage: what the whole pipeline would have caught (the result's ``power``).

    ``results`` are stage 2's pair results, ``pooled`` the screen's pooled tests, ``nn`` the
    screened words' nearest screened words (positions), when the screen found them;
    ``call_sizes`` the numbers of words of the ``sample`` calls the run made (named in
    ``not_covered``).
    """
    if not any(r.error is None for r in results) and not any(t.terms for t in pooled):
        return {
            "power": DEFAULT_POWER,
            "statements": [],
            "not_covered": ["everything: no pair and no pooled test could be tested"],
            "text": "nothing was tested, so nothing can be stated",
        }
    return pipeline_statements(
        strategy=strategy,
        guarantee=str(sanitizer.guarantee),
        screen=screen_info,
        pooled=pooled,
        claims_tested=[r.claimed_bound for r in results if r.error is None],
        samples=samples,
        alpha_pair=alpha_pair,
        candidate_claims=candidate_claims(sanitizer, vocab, screen_ids, claims, nn)
        if screen_info is not None
        else None,
        call_sizes=tuple(call_sizes),
    )


def candidate_claims(
    sanitizer: Any,
    vocab: Any,
    ids: np.ndarray | None,
    claims: Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray],
    nn_pos: np.ndarray | None = None,
) -> np.ndarray | None:
    """Claims of the screen's nearest-neighbour pairs (metric) or ε (LDP): the claim levels stated."""
    if ids is None or len(ids) < 2:
        return None
    if sanitizer.guarantee == "ldp":
        sub = ids[:2]
        return np.asarray(claims(sub[:1], sub[1:], np.ones(1)), dtype=np.float64)
    pick = np.sort(np.random.default_rng(0).choice(len(ids), size=min(2_000, len(ids)), replace=False))
    sub = ids[pick].astype(np.int64)
    nn = ids[nn_pos[pick, 0]] if nn_pos is not None else nearest_neighbors(vocab, sub, 1, among=ids)[:, 0]
    d = pair_distances(vocab.vectors, sub, nn)
    return np.asarray(claims(sub, nn, d), dtype=np.float64)
