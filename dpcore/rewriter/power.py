"""What a rewriter audit can show: its reach (the largest certifiable bound) and its power.

**Reach.** A pair's test counts an event among n evaluation rewrites of each input, so its lower
bound is at most ln CP⁻(n; n, α/2) − ln CP⁺(0; n, α/2) (:func:`dpcore.stats.cp_max_log_ratio`),
about ln(n / ln(2/α)): a little below ln N for N rewrites per input. A claimed bound at or above
it cannot be shown broken by any rewriter, however leaky; the audit then says so
(:func:`rewrites_needed` says how many rewrites would reach it) instead of "no violation found".

**Power.** Suppose some *marker* (one whole output, one word 1–2-gram, or one side-channel
event: a count of tokens, characters, capitals, punctuation or digits equal to a value or at
least one, or an input word at one place, :mod:`dpcore.rewriter.sidechannels`; the events the
distinguishers select one by one) appears in x's rewrites with probability p and its privacy
loss is the claim c plus Δ: Pr[M(x′) shows it] = p·e^{−(c + Δ)}. If the selection half picks
that marker's event, the evaluation test flags the pair with
the exact probability of :func:`dpcore.textaudit.power.flag_probability`. :func:`statements`
gives, for a few p, the smallest loss c + Δ flagged with probability ≥ 90%. The statement is for
the pipeline, selection included: ``tests/test_rewriter_power.py`` and
``bench/rewriter_power.py`` run the whole audit on planted rewriters of known loss and check that
the caught rate is at least the stated one.

A marker only in characters (a suffix on a random word, a changed spelling) is **not** covered:
single character n-grams are not candidate events (they enter only through the naive-Bayes
score), and such a marker was caught 0 times in 100 at the statement's 90% point. Nor are the
side channels the audit does not read: word lengths, whitespace beyond the token count, a kept
word's place counted from the end, a count within a window of several values. Every statement
says so (:data:`NOT_COVERED`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from dpcore.formatting import percent
from dpcore.pairtest.power import DEFAULT_POWER, detectable_excess, flag_probability
from dpcore.stats import cp_max_log_ratio, cp_max_renyi

__all__ = [
    "MARKERS",
    "MARKER_PROBABILITIES",
    "NOT_COVERED",
    "at_reach",
    "log10_rewrites_needed",
    "reach",
    "rewrites_needed",
    "stated_power",
    "statements",
]

#: Marker probabilities the statement is given for.
MARKER_PROBABILITIES = (0.1, 0.3, 1.0)
#: What a marker of the statement may be (the events selected one by one).
MARKERS = (
    "one whole output",
    "one word 1–2-gram",
    "a count of tokens, characters, capitals, punctuation or digits (one value, or at least one)",
    "an input word at one place",
)
#: Which distinguisher selects each marker (a statement names only the markers its run could pick).
MARKER_SOURCES = {MARKERS[0]: "exact", MARKERS[1]: "words", MARKERS[2]: "side", MARKERS[3]: "side"}
#: The markers in few words, for the statement's text.
_SHORT = dict(
    zip(MARKERS, ("a whole output", "a word 1–2-gram", "a count", "a kept word's place"), strict=True)
)
#: What the statement does not cover.
NOT_COVERED = (
    "a marker only in characters (a suffix, a spelling) or in a side channel the audit does not read "
    "(word lengths, whitespace, a place counted from the end, a count within a window of values) "
    "is not covered by this statement"
)


def reach(n_eval: int, alpha: float, *, order: float | None = None) -> float:
    """The largest lower bound ``n_eval`` evaluation rewrites per input can certify at level α (of
    the Rényi divergence of ``order`` for a Rényi claim: :func:`dpcore.stats.cp_max_renyi`)."""
    if order is not None:
        return cp_max_renyi(int(n_eval), float(alpha), float(order))
    return float(cp_max_log_ratio(int(n_eval), float(alpha)))


def at_reach(lower_bound: float, largest: float) -> bool:
    """Whether a certified lower bound is as large as its run can certify (:func:`reach`): the real
    loss may then be much larger, and only more rewrites (about ln N) would show more."""
    return math.isfinite(lower_bound) and lower_bound >= largest * (1 - 1e-9)


def rewrites_needed(
    claim: float, alpha: float, *, limit: int = 1 << 40, order: float | None = None
) -> int | None:
    """The fewest rewrites per input (both halves) whose reach exceeds ``claim`` (None: beyond ``limit``)."""
    if not math.isfinite(claim):
        return None
    lo, hi = 1, 2
    while reach(hi, alpha, order=order) <= claim:
        lo, hi = hi, hi * 2
        if hi > limit:
            return None
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if reach(mid, alpha, order=order) > claim:
            hi = mid
        else:
            lo = mid
    return 2 * hi


def log10_rewrites_needed(claim: float, alpha: float) -> float:
    """log₁₀ of the rewrites per input (both halves) whose reach equals ``claim``, for any claim.

    :func:`reach` has a closed form in the evaluation size n: with r = (α/2)^{1/n} it is
    ln r − ln(1 − r), so reach(n) = c exactly when r = 1/(1 + e^{−c}), i.e.
    n = ln(2/α) / ln(1 + e^{−c}) ≈ ln(2/α)·e^{c}: the reach grows with the logarithm of the
    number of rewrites, so a claim of c nats needs about e^c of them.

    Examples
    --------
    >>> round(10 ** log10_rewrites_needed(3.0, 0.025))  # as rewrites_needed(3.0, 0.025) = 182
    180
    >>> round(log10_rewrites_needed(1000.0, 0.025))
    435
    """
    c = float(claim)
    if not math.isfinite(c):
        return math.inf
    # ln ln(1 + e^{-c}), stable for large c (where it is -c + ln(1 - e^{-c}/2 + ...))
    lnsp = math.log(math.log1p(math.exp(-c))) if c < 30 else -c - math.exp(-c) / 2
    ln_n = math.log(math.log(2.0 / float(alpha))) - lnsp
    return (ln_n + math.log(2.0)) / math.log(10.0)


def stated_power(n_eval: int, alpha: float, claim: float, p: float, loss: float) -> float:
    """The chance the pair is flagged when a marker of probability p has privacy loss ``loss``."""
    return flag_probability(int(n_eval), float(alpha), float(claim), float(p), float(loss) - float(claim))


def statements(
    n_eval: int,
    alpha: float,
    claim: float,
    *,
    power: float = DEFAULT_POWER,
    order: float | None = None,
    distinguishers: Sequence[str] | None = None,
) -> list[dict[str, Any]]:
    """For each p of :data:`MARKER_PROBABILITIES`: the smallest loss flagged with probability ≥ ``power``.

    None for a Rényi claim (``order``): the statement is shown for pure-DP claims only (the planted
    rewriters it is checked on have a privacy loss, not a Rényi divergence), so none is made. The
    markers named are those the run's ``distinguishers`` select (:data:`MARKER_SOURCES`; all of
    them by default); none when it ran none of those (``minilm`` or ``lm`` alone).
    """
    if order is not None:
        return []
    ran = set(distinguishers) if distinguishers is not None else set(MARKER_SOURCES.values())
    markers = [m for m in MARKERS if MARKER_SOURCES[m] in ran]
    if not markers:
        return []
    short = list(dict.fromkeys(_SHORT[m] for m in markers))
    kinds = short[0] if len(short) == 1 else f"{', '.join(short[:-1])} or {short[-1]}"
    out = []
    for p in MARKER_PROBABILITIES:
        d = detectable_excess(int(n_eval), float(alpha), float(claim), float(p), power=power)
        out.append(
            {
                "marker_probability": p,
                "detectable_loss": d.loss,
                "power": power,
                "claim": float(claim),
                "markers": markers,
                "not_covered": NOT_COVERED,
                "text": (
                    f"a marker ({kinds}) in "
                    f"{percent(p, exact=True)} of x's rewrites with "
                    f"privacy loss ≥ {d.loss:.3g} is flagged with probability ≥ {percent(power, exact=True)} "
                    f"(claim {claim:.3g}); {NOT_COVERED}"
                    if math.isfinite(d.loss)
                    else f"no marker in {percent(p, exact=True)} of x's rewrites can be flagged with "
                    f"probability ≥ {percent(power, exact=True)} at this size"
                ),
            }
        )
    return out
