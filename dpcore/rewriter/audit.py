"""The rewriter audit: lower confidence bounds on a text rewriter's privacy loss, black box.

For each pair of neighbouring inputs (x, x′) (:mod:`dpcore.rewriter.pairs`) the rewriter
rewrites each N times (:mod:`dpcore.rewriter.draws`: batched, across workers or Ray, the same
for the same seed; one copy per call when the contract, :mod:`dpcore.rewriter.contract`, could
not show a call's copies independent, and every result says which independence it rests on).
The first half of each input's rewrites selects one event per direction
(:mod:`dpcore.rewriter.distinguish`: whole outputs, word and character n-grams, side channels
such as length and casing, the MiniLM sentence encoder); the second half bounds its privacy loss,

    ln Pr[M(x) ∈ S] − ln Pr[M(x′) ∈ S] ≥ ln CP⁻(a; α/2) − ln CP⁺(b; α/2),

with Clopper–Pearson bounds (:func:`dpcore.stats.cp_log_ratio_lower`). α is the family level
1 − confidence split by Bonferroni over both directions of every pair tested, so the chance that
any pair is wrongly flagged is ≤ 1 − confidence. A pair *violates* its claim when a direction's
lower bound exceeds the claimed bound for the pair (ε per document; ε per token composed over
the text's tokens, :class:`~dpcore.rewriter.interface.RewriterClaim`). Each event is also a box
in the trade-off plane, tested against the claim's curve (:mod:`dpcore.tradeoff`).

A Rényi-DP claim of order α (``claim.order``) bounds D_α(M(x) ‖ M(x′)) instead of the loss; its
lower bound is the Rényi divergence of the event's two Bernoulli laws at the same confidence
corner, CP⁻(a; α/2) against CP⁺(b; α/2) (:func:`dpcore.stats.cp_renyi_lower`), and its curve is
the region that claim implies (:func:`dpcore.tradeoff.tpr_ceiling` with ``order``).

Verdicts: ``violates``; ``not-detected`` (no violation detected by this test, which never means
private); ``out-of-reach`` (every claimed bound is at or above the largest loss N rewrites can
certify, :func:`dpcore.rewriter.power.reach`: the audit could not have shown a violation);
``untested`` (no pair within the claim's premise).
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from dpcore.formatting import percent
from dpcore.pairtest.budget import per_test
from dpcore.pairtest.verdicts import OUT_OF_REACH, decide
from dpcore.rewriter.contract import ContractReport, GlobalStateReseeded, check_contract
from dpcore.rewriter.distinguish import (
    DISTINGUISHERS,
    FORWARD,
    TITLES,
    Choice,
    choose_events,
    parse_distinguishers,
)
from dpcore.rewriter.draws import CHUNK, RewriterSource, draw_rewrites, plan_tasks
from dpcore.rewriter.interface import TextRewriter, check_rewriter, quantity_words
from dpcore.rewriter.power import log10_rewrites_needed, reach, rewrites_needed, statements
from dpcore.stats import bernoulli_renyi, cp_log_ratio_lower, cp_renyi_lower
from dpcore.tradeoff import Box, TradeoffPair
from dpcore.validation import DPCoreError, check_int, check_probability

__all__ = ["MAX_PAIRS", "MAX_REWRITES", "PairOutcome", "RewriterAuditResult", "audit_rewriter", "retest"]

#: Most pairs one audit tests.
MAX_PAIRS = 100
#: Most rewrites per input.
MAX_REWRITES = 1_000_000
#: Fewest rewrites per input (both halves need some).
MIN_REWRITES = 20
#: Rewrites of each input kept in the result, to show.
SHOWN = 5
#: Relative tolerance of the claim comparison.
_TOL = 1e-9


@dataclass(frozen=True)
class PairOutcome:
    """One pair's test.

    Attributes
    ----------
    x, x_prime:
        The inputs.
    tokens:
        Their token counts (per-token claims; None otherwise).
    claimed_bound:
        The claim's bound for this pair (+∞ outside its premise).
    outside:
        Why the pair is outside the claim's premise (None: inside; then it is tested).
    choices:
        The event chosen per direction, with its evaluation counts.
    lower_bound, estimate:
        The larger direction's Clopper–Pearson lower bound and its point estimate ε̂.
    direction:
        Which direction gave it.
    violates:
        lower_bound > claimed_bound.
    exact_loss:
        The pair's exact loss, when the rewriter knows it (planted rewriters).
    examples_x, examples_x_prime:
        The first evaluation rewrites of each input.
    """

    x: str
    x_prime: str
    tokens: tuple[int | None, int | None]
    claimed_bound: float
    outside: str | None = None
    choices: tuple[Choice, ...] = ()
    lower_bounds: tuple[float, ...] = ()
    estimates: tuple[float, ...] = ()
    lower_bound: float = -math.inf
    estimate: float = 0.0
    direction: str = ""
    violates: bool = False
    exact_loss: float | None = None
    examples_x: tuple[str, ...] = ()
    examples_x_prime: tuple[str, ...] = ()
    tradeoff: TradeoffPair | None = None

    @property
    def tested(self) -> bool:
        return self.outside is None

    @property
    def best(self) -> Choice | None:
        for c in self.choices:
            if c.direction == self.direction:
                return c
        return None

    def to_dict(self) -> dict[str, Any]:
        best = self.best
        return {
            "x": self.x,
            "x_prime": self.x_prime,
            "tokens": list(self.tokens),
            "claimed_bound": self.claimed_bound,
            "outside_premise": self.outside,
            "lower_bound": self.lower_bound,
            "point_estimate": self.estimate,
            "direction": self.direction,
            "violates": self.violates,
            "event": None if best is None else best.description,
            "distinguisher": None if best is None else best.distinguisher,
            "exact_loss": self.exact_loss,
            "tests": [
                {
                    "direction": c.direction,
                    "distinguisher": c.distinguisher,
                    "event": c.description,
                    "selection_bound": c.selection_bound,
                    "count_x": c.count_x,
                    "count_x_prime": c.count_x_prime,
                    "samples": c.samples,
                    "lower_bound": lb,
                    "point_estimate": est,
                }
                for c, lb, est in zip(self.choices, self.lower_bounds, self.estimates, strict=True)
            ],
            "tradeoff": None
            if self.tradeoff is None
            else {
                "epsilon": self.tradeoff.epsilon,
                "boxes": [b.to_dict() for b in self.tradeoff.boxes],
                "outside": self.tradeoff.outside(),
                "note": self.tradeoff.note,
            },
            "examples": {"x": list(self.examples_x), "x_prime": list(self.examples_x_prime)},
        }


@dataclass
class RewriterAuditResult:
    """Everything an audit of a rewriter found, with its size and confidence."""

    rewriter: str
    claim: dict[str, Any]
    pairs: list[PairOutcome]
    rewrites: int
    confidence: float
    alpha: float
    distinguishers: tuple[str, ...]
    seed: int
    reach: float
    power: list[dict[str, Any]]
    contract: ContractReport | None
    verdict: str
    verdict_text: str
    engine: str = "local"
    workers: int = 1
    seconds: float = 0.0
    described: dict[str, Any] = field(default_factory=dict)
    #: The independence the bounds rest on (:meth:`ContractReport.independence`).
    independence: str = ""
    #: Every rewrite, per tested pair: {(pair index among the tested, 0 for x / 1 for x′): texts}
    #: (only with ``keep_rewrites=True``; not in :meth:`to_dict`).
    drawn: dict[tuple[int, int], list[str]] | None = None

    @property
    def tested(self) -> list[PairOutcome]:
        return [p for p in self.pairs if p.tested]

    @property
    def worst(self) -> PairOutcome | None:
        tested = self.tested
        if not tested:
            return None
        return max(tested, key=lambda p: (p.violates, p.lower_bound - p.claimed_bound, p.lower_bound))

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready (numbers as numbers; ∞ kept for :func:`dpcore.jsonutil.dumps`)."""
        return {
            "rewriter": self.rewriter,
            "claim": self.claim,
            "verdict": self.verdict,
            "verdict_text": self.verdict_text,
            "rewrites_per_input": self.rewrites,
            "selection_rewrites": self.rewrites // 2,
            "evaluation_rewrites": self.rewrites - self.rewrites // 2,
            "confidence": self.confidence,
            "alpha_per_test": self.alpha,
            "tests": 2 * len(self.tested),
            "largest_certifiable_bound": self.reach,
            "power": self.power,
            "distinguishers": list(self.distinguishers),
            "contract": None if self.contract is None else self.contract.to_dict(),
            "independence": self.independence,
            "pairs": [p.to_dict() for p in self.pairs],
            "seed": self.seed,
            "engine": self.engine,
            "workers": self.workers,
            "seconds": self.seconds,
            "parameters": self.described,
        }

    def text(self) -> str:
        """The human summary the CLI prints."""
        lines = [
            f"rewriter: {self.rewriter}",
            f"claim: {self.claim['text']}",
            f"verdict: {self.verdict} — {self.verdict_text}",
            f"rewrites: {self.rewrites:,} per input ({self.rewrites // 2:,} select the event, "
            f"{self.rewrites - self.rewrites // 2:,} bound it); "
            f"confidence {percent(self.confidence, exact=True)} "
            f"family-wise over {2 * len(self.tested)} test(s)",
            f"distinguishers: {', '.join(self.distinguishers)}",
            f"rests on: {self.independence}",
            f"largest certifiable bound at this size: {self.reach:.3g}",
        ]
        for s in self.power:
            lines.append(f"power: {s['text']}")
        if not self.power and "order" in self.claim:
            lines.append("power: none stated (the power statement is checked for pure-DP claims only)")
        elif not self.power:
            lines.append(
                "power: none stated (the statement is for markers that whole outputs, word n-grams or side "
                "channels select, and none of those distinguishers ran)"
            )
        for k, p in enumerate(self.pairs, 1):
            lines.append(f"pair {k}: x = {p.x!r}")
            lines.append(f"        x′ = {p.x_prime!r}")
            if not p.tested:
                lines.append(f"        not tested: {p.outside}")
                continue
            best = p.best
            flag = "VIOLATES" if p.violates else "no violation detected"
            lb = f"{p.lower_bound:.3g}" if math.isfinite(p.lower_bound) else "none (event never seen)"
            lines.append(
                f"        lower bound {lb}, point estimate ε̂ {p.estimate:.3g}, "
                f"claimed {p.claimed_bound:.3g}: {flag}"
            )
            if best is not None:
                lines.append(
                    f"        event ({TITLES[best.distinguisher]}, {best.direction}): {best.description}; "
                    f"{best.count_x} of {best.samples} rewrites of x, {best.count_x_prime} of x′"
                )
            if p.exact_loss is not None:
                lines.append(f"        exact loss (known for this planted rewriter): {p.exact_loss:.3g}")
        return "\n".join(lines)


def retest(result: RewriterAuditResult, distinguishers: Sequence[str]) -> RewriterAuditResult:
    """The same audit's rewrites read by other distinguishers.

    The draws, α, reach and claims are the audit's (it must have kept its rewrites:
    ``keep_rewrites=True``); the events, bounds and verdict are the new distinguishers'. Each
    reading is a valid test alone; picking the best of several readings afterwards is not one
    test (compare families by their estimates, or audit once with them all).
    """
    if result.drawn is None:
        raise DPCoreError("retest needs an audit run with keep_rewrites=True")
    distinguishers = parse_distinguishers(list(distinguishers))
    order = result.claim.get("order")
    outcomes: list[PairOutcome] = []
    k = 0
    for p in result.pairs:
        if not p.tested:
            outcomes.append(p)
            continue
        outcomes.append(
            _test_pair(
                (p.x, p.x_prime), p.tokens, p.claimed_bound, result.drawn[(k, 0)], result.drawn[(k, 1)],
                result.alpha, distinguishers, p.exact_loss, order,
            )
        )  # fmt: skip
        k += 1
    verdict, text, power = _judged(
        outcomes, result.rewrites, result.confidence, result.alpha, result.reach,
        float(result.claim["epsilon"]), order, distinguishers,
    )  # fmt: skip
    return dataclasses.replace(
        result,
        pairs=outcomes,
        distinguishers=tuple(distinguishers),
        verdict=verdict,
        verdict_text=text,
        power=power,
    )


def _judged(
    outcomes: list[PairOutcome],
    rewrites: int,
    confidence: float,
    alpha: float,
    top: float,
    epsilon: float,
    order: float | None,
    distinguishers: Sequence[str],
) -> tuple[str, str, list[dict[str, Any]]]:
    """The verdict, its text and the power statement of tested pair outcomes (an audit's, or a
    :func:`retest`'s): the statement at the smallest claimed bound tested (ε when none was), for the
    markers the distinguishers could select."""
    tested = [p for p in outcomes if p.tested]
    verdict, text = _verdict(tested, len(outcomes), rewrites, confidence, top, alpha, order)
    claims = sorted({p.claimed_bound for p in tested}) or [float(epsilon)]
    n_eval = rewrites - rewrites // 2
    return verdict, text, statements(n_eval, alpha, claims[0], order=order, distinguishers=distinguishers)


def _estimate(a: int, b: int, n: int, order: float | None) -> float:
    if order is not None:
        return float(bernoulli_renyi(a / n, b / n, order)) if a > b else 0.0
    if a == 0:
        return 0.0 if b == 0 else -math.inf
    if b == 0:
        return math.inf
    return math.log(a) - math.log(b)


def _test_pair(
    pair: tuple[str, str],
    tokens: tuple[int | None, int | None],
    claimed: float,
    rewrites_x: list[str],
    rewrites_xp: list[str],
    alpha: float,
    distinguishers: Sequence[str],
    exact_loss: float | None,
    order: float | None = None,
) -> PairOutcome:
    m = len(rewrites_x) // 2
    choices = choose_events(
        rewrites_x[:m],
        rewrites_xp[:m],
        rewrites_x[m:],
        rewrites_xp[m:],
        alpha=alpha,
        distinguishers=distinguishers,
        inputs=pair,
    )
    lbs, ests = [], []
    for c in choices:
        a, b = c.hits
        if a == 0:
            lb = -math.inf
        elif order is None:
            lb = float(cp_log_ratio_lower(a, b, c.samples, alpha))
        else:
            lb = float(cp_renyi_lower(a, b, c.samples, alpha, order))
        lbs.append(lb)
        ests.append(_estimate(a, b, c.samples, order))
    k = max(range(len(choices)), key=lambda i: lbs[i], default=None)
    n = len(rewrites_x) - m
    boxes = (
        Box.many_from_counts(
            [c.count_x_prime for c in choices],
            n,
            [c.count_x for c in choices],
            n,
            alpha=alpha,
            labels=[f"{c.direction}: {c.description}" for c in choices],
        )
        if choices
        else []
    )
    tradeoff = TradeoffPair(
        null="x′",
        alt="x",
        epsilon=claimed,
        boxes=tuple(boxes),
        unit="one rewrite",
        order=order,
        note=(
            f"Each box is an event chosen on the selection half and counted on the {n:,} evaluation rewrites "
            f"of each input; its two Clopper–Pearson intervals hold together with probability "
            f"≥ 1 − {alpha:.3g} (the verdict's α per test)."
        ),
    )
    lower = lbs[k] if k is not None else -math.inf
    return PairOutcome(
        x=pair[0],
        x_prime=pair[1],
        tokens=tokens,
        claimed_bound=claimed,
        choices=tuple(choices),
        lower_bounds=tuple(lbs),
        estimates=tuple(ests),
        lower_bound=lower,
        estimate=ests[k] if k is not None else 0.0,
        direction=choices[k].direction if k is not None else FORWARD,
        violates=bool(math.isfinite(lower) and lower > claimed * (1 + _TOL) + _TOL),
        exact_loss=exact_loss,
        examples_x=tuple(rewrites_x[m : m + SHOWN]),
        examples_x_prime=tuple(rewrites_xp[m : m + SHOWN]),
        tradeoff=tradeoff,
    )


def _verdict(
    tested: list[PairOutcome],
    n_pairs: int,
    rewrites: int,
    confidence: float,
    top: float,
    alpha: float,
    order: float | None = None,
) -> tuple[str, str]:
    quantity = quantity_words(order)
    conf = percent(confidence, exact=True)
    size = (
        f"{len(tested)} pair(s), {rewrites:,} rewrites per input, Clopper–Pearson at {conf} confidence "
        "family-wise"
    )
    if not tested:
        return "untested", (
            f"untested: none of the {n_pairs} pair(s) is within the claim's premise, so nothing was tested"
        )
    viol = [p for p in tested if p.violates]
    if viol:
        w = max(viol, key=lambda p: (p.lower_bound - p.claimed_bound, p.lower_bound))
        best = w.best
        how = f" (event: {best.description})" if best is not None else ""
        return "violates", (
            f"violates its claim: for x = {w.x!r} and x′ = {w.x_prime!r} the {quantity} is "
            f"≥ {w.lower_bound:.3g} at {conf} confidence, above the claimed {w.claimed_bound:.3g}{how}; "
            f"{len(viol)} of {len(tested)} pair(s) flagged ({size})"
        )
    beyond = [p for p in tested if p.claimed_bound >= top]
    if decide(flagged=False, tested=len(tested), beyond_reach=len(beyond)) == OUT_OF_REACH:
        lowest = min(p.claimed_bound for p in tested)
        need = rewrites_needed(lowest, alpha, order=order)
        if need:
            more = f" about {need:,} rewrites per input would reach {lowest:.3g}"
        elif order is not None:
            more = f" reaching {lowest:.3g} would take more than 2^40 rewrites per input"
        else:
            digits = log10_rewrites_needed(lowest, alpha)
            more = (
                f" reaching {lowest:.3g} would take about 10^{digits:.0f} rewrites per input (what an audit "
                "can certify grows only with the logarithm of its rewrites), so no audit can tell"
            )
        return OUT_OF_REACH, (
            f"out of reach: the claimed bound{'s' if len(tested) > 1 else ''} (≥ {lowest:.3g}) "
            f"{'are' if len(tested) > 1 else 'is'} above {top:.3g}, the largest {quantity} "
            f"{rewrites:,} rewrites per input can certify at {conf} confidence, so this audit could not "
            f"have shown a violation;{more}. "
            "Nothing was shown either way"
        )
    text = f"no violation detected by this test ({size}); this does not show the rewriter is private"
    if beyond:
        text += (
            f". {len(beyond)} of the {len(tested)} claimed bounds are ≥ {top:.3g}, the largest loss this "
            "size can certify: those pairs could not have been flagged"
        )
    return "not-detected", text


def audit_rewriter(
    rewriter: TextRewriter,
    pairs: Sequence[tuple[str, str]],
    *,
    rewrites: int = 1000,
    confidence: float = 0.95,
    distinguishers: Sequence[str] = DISTINGUISHERS,
    seed: int = 0,
    workers: int = 1,
    engine: str = "local",
    address: str | None = None,
    source: RewriterSource | None = None,
    check: bool = True,
    progress: Callable[[int, int], None] | None = None,
    keep_rewrites: bool = False,
) -> RewriterAuditResult:
    """Audit ``rewriter`` on ``pairs`` (module docstring).

    Parameters
    ----------
    rewriter:
        Any object with the :class:`~dpcore.rewriter.interface.TextRewriter` interface.
    pairs:
        Neighbouring inputs (x, x′); :func:`dpcore.rewriter.pairs.build_pairs` builds them.
    rewrites:
        Rewrites per input (half select, half bound), 20..1,000,000.
    confidence:
        Family-wise confidence of the verdict.
    distinguishers:
        Which distinguishers choose events (:data:`~dpcore.rewriter.distinguish.DISTINGUISHERS`, or
        any of :data:`~dpcore.rewriter.distinguish.ALL_DISTINGUISHERS`: ``lm`` needs torch).
    seed:
        Every rewrite's stream derives from it (:mod:`dpcore.rewriter.draws`).
    workers, engine, address, source:
        Where the rewrites are drawn (:func:`dpcore.rewriter.draws.draw_rewrites`); the result
        does not depend on them.
    check:
        Check the rewriter's contract first (:mod:`dpcore.rewriter.contract`).
    progress:
        ``progress(done, total)`` in rewrites.
    keep_rewrites:
        Keep every rewrite in :attr:`RewriterAuditResult.drawn` (for utility measures).
    """
    t0 = time.perf_counter()
    rewriter = check_rewriter(rewriter)
    rewrites = check_int(rewrites, name="rewrites", min_value=MIN_REWRITES, max_value=MAX_REWRITES)
    confidence = check_probability(confidence, name="confidence", open_low=True, open_high=True)
    seed = check_int(seed, name="seed", min_value=0, max_value=2**63 - 1)
    distinguishers = parse_distinguishers(list(distinguishers))
    pairs = [(str(a), str(b)) for a, b in pairs]
    if not pairs:
        raise DPCoreError("give at least one pair of inputs")
    if len(pairs) > MAX_PAIRS:
        raise DPCoreError(f"at most {MAX_PAIRS} pairs per audit, got {len(pairs)}")
    for a, b in pairs:
        if not a.strip() or not b.strip():
            raise DPCoreError("every input of a pair must be a non-empty text")
        if a == b:
            raise DPCoreError(f"the two inputs of a pair must differ, got {a!r} twice")
    claim = rewriter.claim
    count = getattr(rewriter, "count_tokens", None) if claim.unit == "token" or claim.same_length else None
    premise = getattr(rewriter, "premise", None)
    plans: list[tuple[tuple[int | None, int | None], float, str | None]] = []
    for a, b in pairs:
        tokens = (int(count(a)), int(count(b))) if callable(count) else (None, None)
        outside = premise(a, b) if callable(premise) else None
        if outside is None and claim.same_length and tokens[0] != tokens[1]:
            outside = (
                f"the texts have {tokens[0]} and {tokens[1]} tokens (the claim is for texts of one length)"
            )
        if outside is not None:
            bound = math.inf
        elif claim.metric:
            bound = float(rewriter.claimed_bound(a, b))  # type: ignore[attr-defined]
        else:
            bound = claim.bound(*tokens)
        plans.append((tokens, bound, outside))
    tested_idx = [i for i, (_, _, o) in enumerate(plans) if o is None]
    alpha = per_test(1.0 - confidence, max(1, 2 * len(tested_idx)))  # Bonferroni: both directions
    batched = getattr(rewriter, "independent_copies", True) is not False
    contract = (
        check_contract(rewriter, pairs[tested_idx[0]][0], seed=seed, batched=batched)
        if check and tested_idx
        else None
    )
    if contract is not None:
        batched = contract.batched  # copies of a call not shown independent: one copy per call
        if contract.global_state_reseeded:  # the word audit's policy: seed its global states per call
            rewriter = GlobalStateReseeded(rewriter)  # type: ignore[assignment]
            if source is not None and source.pickled is None:
                source = replace(source, reseeded=True)
            elif source is not None:
                source = None  # the wrapper pickles (RewriterSource.of)
    tested_pairs = [pairs[i] for i in tested_idx]
    tasks = plan_tasks(tested_pairs, rewrites, CHUNK if batched else 1)
    total = sum(t.count for t in tasks)
    done = [0]

    def tick(k: int) -> None:
        done[0] += k
        if progress is not None:
            progress(done[0], total)

    drawn = draw_rewrites(
        rewriter,
        tasks,
        seed=seed,
        workers=workers,
        engine=engine,
        address=address,
        source=source,
        progress=tick,
    )
    outcomes: list[PairOutcome] = []
    exact = getattr(rewriter, "exact_loss", None)
    for i, (pair, (tokens, bound, outside)) in enumerate(zip(pairs, plans, strict=True)):
        if outside is not None:
            outcomes.append(
                PairOutcome(x=pair[0], x_prime=pair[1], tokens=tokens, claimed_bound=bound, outside=outside)
            )
            continue
        k = tested_idx.index(i)
        outcomes.append(
            _test_pair(
                pair, tokens, bound, drawn[(k, 0)], drawn[(k, 1)], alpha, distinguishers,
                float(exact(*pair)) if callable(exact) else None, claim.order,
            )
        )  # fmt: skip
    top = reach(rewrites - rewrites // 2, alpha, order=claim.order)
    verdict, text, power = _judged(
        outcomes, rewrites, confidence, alpha, top, float(claim.epsilon), claim.order, distinguishers
    )
    if contract is not None:
        independence = contract.independence()
    elif batched:
        independence = (
            f"copies within one rewrite call ({CHUNK} at a time) are assumed independent: the contract was "
            "not checked"
        )
    else:
        independence = "one copy per rewrite call: every rewrite has its own call and random stream"
    describe = getattr(rewriter, "describe", None)
    return RewriterAuditResult(
        rewriter=str(rewriter.name),
        claim=claim.to_dict(),
        pairs=outcomes,
        rewrites=rewrites,
        confidence=confidence,
        alpha=alpha,
        distinguishers=tuple(distinguishers),
        seed=seed,
        reach=top,
        power=power,
        contract=contract,
        verdict=verdict,
        verdict_text=text,
        engine=engine,
        workers=int(workers),
        seconds=time.perf_counter() - t0,
        described=dict(describe()) if callable(describe) else {},
        drawn=dict(drawn) if keep_rewrites else None,
        independence=independence,
    )
