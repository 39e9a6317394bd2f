"""Results of a text audit, as dataclasses serialised one way (:meth:`TextAuditResult.to_dict`)."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field, replace
from typing import Any

import pandas as pd

from dpcore import __version__
from dpcore.formatting import epsilon_text, percent
from dpcore.pairtest.verdicts import (
    DECLARATION_MISMATCH,
    NOT_DETECTED,
    OUT_OF_REACH,
    UNTESTED,
    VIOLATES,
    WITHIN_CLAIM,
    decide,
)
from dpcore.prose import and_list

__all__ = ["PairResult", "TextAuditResult", "lower_bound_ratio"]


def lower_bound_ratio(lower_bound: float, claimed_bound: float) -> float:
    """Lower bound / claimed bound (∞ when the claim is 0 and the bound is positive)."""
    if claimed_bound > 0:
        return lower_bound / claimed_bound
    return math.inf if lower_bound > 0 else 0.0


@dataclass(frozen=True)
class PairResult:
    """One pair (x, x′): the claimed bound, the empirical loss and its lower confidence bound.

    Attributes
    ----------
    distance:
        Euclidean distance d(x, x′) in the audit's embedding.
    claimed_bound:
        ε (LDP) or ε·d(x, x′) + ε₀ (metric; ε₀ = 0 except UMLDP), from the claim model, or the
        sanitizer's own ``claimed_bound``; +∞ for a pair the claim does not cover.
    empirical_epsilon:
        ln Pr̂[M(x) ∈ S] − ln Pr̂[M(x′) ∈ S] on the evaluation half (the larger direction; ∞ when
        the event never occurred from the other word).
    lower_bound:
        One-sided Clopper–Pearson lower bound on the same loss (Bonferroni-corrected).
    violates:
        ``lower_bound`` > ``claimed_bound``.
    direction:
        ``"x>x'"`` when the event favours x, else ``"x'>x"``.
    event_size, count_x, count_x_prime:
        |S| and how often each word's evaluation samples fell in S.
    exact_epsilon, exact_violates:
        The exact worst-case loss and whether it exceeds the claim (sanitizers with exact rows).
    """

    x: str
    x_prime: str
    distance: float
    claimed_bound: float
    empirical_epsilon: float
    lower_bound: float
    violates: bool
    direction: str
    event_size: int
    count_x: int
    count_x_prime: int
    exact_epsilon: float | None = None
    exact_violates: bool | None = None
    error: str | None = None
    #: The smallest violation this pair's test flags with probability ≥ 0.9, on an event of the
    #: probability its own event had (:mod:`dpcore.textaudit.power`).
    detectable_violation: dict[str, Any] | None = None
    #: Where the reported event came from: ``selected`` (first half of stage 2), ``screen`` (the
    #: output the screen proposed the pair for) or ``declared`` (the sanitizer's declared rows).
    event_source: str = ""

    @property
    def ratio(self) -> float:
        if self.error is not None:
            return math.nan
        return lower_bound_ratio(self.lower_bound, self.claimed_bound)


@dataclass(frozen=True)
class TextAuditResult:
    """The outcome of :func:`~dpcore.textaudit.runner.audit_text`."""

    mechanism: str
    epsilon: float
    guarantee: str
    embedding: str
    vocab_size: int
    samples: int
    pilot_samples: int
    candidates: int
    strategy: str
    seed: int
    confidence: float
    alpha_per_test: float
    max_detectable_loss: float
    verdict: str
    verdict_text: str
    max_lower_bound_ratio: float
    exact_verdict: str | None
    samples_drawn: int
    elapsed_seconds: float
    pairs: list[PairResult] = field(default_factory=list)
    pairs_tested: int = 0
    sanitizer: dict[str, Any] = field(default_factory=dict)
    failures: dict[str, str] = field(default_factory=dict)
    #: What the run could have caught (:mod:`dpcore.textaudit.power`).
    detectable_violation: dict[str, Any] = field(default_factory=dict)
    #: The screen's stage 1 (``strategy="screen"``): words, draws per word, candidates, failures.
    screen: dict[str, Any] | None = None
    #: How the run was executed (engine, workers, per-stage seconds): the only part that may differ
    #: between two runs of the same seed.
    execution: dict[str, Any] = field(default_factory=dict)
    #: Per screened word, the best pilot score (pilot lower bound − claim) of its candidate pairs.
    word_scores: Any = field(default=None, repr=False, compare=False)
    #: Vocabulary ids of the screened words (same order as ``word_scores``).
    screened_ids: Any = field(default=None, repr=False, compare=False)
    #: The screened words themselves (same order).
    screened_words: Any = field(default=None, repr=False, compare=False)
    #: The pooled tests over the vocabulary (:mod:`dpcore.textaudit.pooled`), one dict per family.
    pooled: list[dict[str, Any]] = field(default_factory=list)
    #: The declared-distribution check (:mod:`dpcore.textaudit.declaration`), None when not declared.
    declaration: dict[str, Any] | None = None
    #: The rng contract check (:mod:`dpcore.textaudit.contract`) and the replay of the audit's
    #: own calls (:mod:`dpcore.textaudit.replay`, key ``replay``).
    rng_contract: dict[str, Any] = field(default_factory=dict)
    #: How the sanitizer may be called (:mod:`dpcore.textaudit.calls`): independence within a call,
    #: the call's size, and how the audit drew (``audited_as``).
    calls: dict[str, Any] = field(default_factory=dict)
    #: What the whole pipeline would have caught (:func:`dpcore.textaudit.power.pipeline_statements`).
    power: dict[str, Any] = field(default_factory=dict)
    #: How α = 1 − confidence is split between the declaration test, the pooled tests and stage 2.
    alpha_accounting: dict[str, Any] = field(default_factory=dict)
    #: One :class:`~dpcore.tradeoff.TradeoffPair` per tested pair, the verdict's worst first
    #: (:mod:`dpcore.textaudit.tradeoffs`); not in :meth:`to_dict`, see :meth:`observer`.
    tradeoff_pairs: tuple[Any, ...] = field(default=(), repr=False, compare=False)
    #: The claim the audit tested, as its paper states it (:mod:`dpcore.textaudit.claims`):
    #: which pairs and outputs it covers; None for a sanitizer without a claim model.
    claim: dict[str, Any] | None = None
    #: The check of the premise the claim rests on (:class:`dpcore.textaudit.claims.SharedOutputSets`),
    #: None when the claim has none. ``status`` ``"broken"``: the paper's guarantee does not apply
    #: to the implementation beyond the pairs the claim still covers.
    premise: dict[str, Any] | None = None
    dpcore_version: str = __version__
    #: Which vocabulary the audit ran over (:attr:`dpcore.text.vocab.Vocabulary.label`).
    vocabulary: str = ""
    test: str = (
        "pooled Chernoff tests over pairings of the vocabulary; per pair, output events chosen on half "
        "the samples (or fixed by the screen or a checked declaration) with their loss bounded by "
        "one-sided Clopper–Pearson bounds on fresh draws; Bonferroni over every test"
    )

    @classmethod
    def build(
        cls,
        *,
        sanitizer: Any,
        vocab: Any,
        pairs: list[PairResult],
        samples: int,
        pilot_samples: int,
        candidates: int,
        strategy: str,
        seed: int,
        confidence: float,
        alpha: float,
        max_detectable: float,
        samples_drawn: int,
        elapsed: float,
        failures: dict[str, str] | None = None,
        detectable: dict[str, Any] | None = None,
        screen: dict[str, Any] | None = None,
        execution: dict[str, Any] | None = None,
        word_scores: Any = None,
        screened_ids: Any = None,
        screened_words: Any = None,
        pooled: list[dict[str, Any]] | None = None,
        declaration: dict[str, Any] | None = None,
        rng_contract: dict[str, Any] | None = None,
        calls: dict[str, Any] | None = None,
        power: dict[str, Any] | None = None,
        alpha_accounting: dict[str, Any] | None = None,
        tradeoff_pairs: tuple[Any, ...] = (),
    ) -> TextAuditResult:
        failures = dict(failures or {})
        pooled = list(pooled or [])
        tested = [p for p in pairs if p.error is None]
        n = len(tested)
        ratios = [p.ratio for p in tested]
        max_ratio = max(ratios) if ratios else 0.0
        verdict, text = _verdict(
            float(sanitizer.epsilon),
            tested,
            pooled,
            failures,
            samples,
            confidence,
            max_detectable,
            uncovered=int((execution or {}).get("pairs_not_covered", 0) or 0),
        )
        det = dict(detectable or {})
        pw = dict(power or {})
        rc = dict(rng_contract or {})
        shape = dict(calls or {})
        text = _failure_lead(failures, screen, len(vocab)) + text
        text += _notes(verdict, pw, screen, declaration, rc, shape, failures, len(pairs) - n)
        exact = [p.exact_violates for p in tested if p.exact_violates is not None]
        exact_verdict = None if not exact else (VIOLATES if any(exact) else WITHIN_CLAIM)
        if declaration is not None and declaration.get("status") == "mismatch":
            exact_verdict = DECLARATION_MISMATCH
        describe = getattr(sanitizer, "describe", None)
        info: dict[str, Any] = describe() if callable(describe) else {"type": type(sanitizer).__name__}
        return cls(
            mechanism=str(sanitizer.name),
            epsilon=float(sanitizer.epsilon),
            guarantee=str(sanitizer.guarantee),
            embedding=str(vocab.embedding),
            vocab_size=len(vocab),
            vocabulary=str(getattr(vocab, "label", "") or ""),
            samples=samples,
            pilot_samples=pilot_samples,
            candidates=candidates,
            strategy=strategy,
            seed=seed,
            confidence=confidence,
            alpha_per_test=alpha,
            max_detectable_loss=max_detectable,
            verdict=verdict,
            verdict_text=text,
            max_lower_bound_ratio=float(max_ratio),
            exact_verdict=exact_verdict,
            samples_drawn=samples_drawn,
            elapsed_seconds=elapsed,
            pairs=pairs,
            pairs_tested=n,
            sanitizer=info,
            failures=failures,
            detectable_violation=det,
            screen=screen,
            execution=dict(execution or {}),
            word_scores=word_scores,
            screened_ids=screened_ids,
            screened_words=screened_words,
            pooled=pooled,
            declaration=declaration,
            rng_contract=rc,
            calls=shape,
            power=pw,
            alpha_accounting=dict(alpha_accounting or {}),
            tradeoff_pairs=tuple(tradeoff_pairs),
        )

    def with_claim(self, claim: dict[str, Any] | None, premise: dict[str, Any] | None) -> TextAuditResult:
        """This result with the claim it tested and its premise check; a broken premise leads the
        verdict's sentence (the verdict itself is about the pairs the claim still covers)."""
        text = self.verdict_text
        left_out = int(self.execution.get("pairs_not_covered", 0) or 0)
        if premise is not None and premise.get("status") == "broken":
            covered = (
                f" ({left_out:,} candidate pair(s) the claim does not cover were left out)"
                if left_out
                else ""
            )
            text = (
                "the premise of its claim does not hold: "
                + str(premise.get("text", ""))
                + ", so the paper's guarantee covers only the pairs with equal output sets"
                + covered
                + ". On those: "
                + text
            )
        return replace(self, claim=claim, premise=premise, verdict_text=text)

    @property
    def violations(self) -> int:
        return sum(p.violates for p in self.pairs)

    def to_dict(self) -> dict[str, Any]:
        out = asdict(replace(self, tradeoff_pairs=()))
        out.pop("word_scores", None)
        out.pop("screened_ids", None)
        out.pop("screened_words", None)
        out.pop("tradeoff_pairs", None)
        return out

    def observer(self, max_pairs: int | None = None) -> dict[str, Any]:
        """What the tested pairs mean for an observer of one sanitized word: ``tpr_at_fpr`` (the
        verdict's worst pair at 1% and 5% FPR: TPR, its bounds, the claim's ceiling, one sentence)
        and ``tradeoff`` (each pair's claim curve, event boxes, exact curve and violations, the
        first ``max_pairs``; :func:`dpcore.textaudit.observer.observer_record`)."""
        from dpcore.textaudit.observer import JSON_PAIRS, observer_record

        return observer_record(self.tradeoff_pairs, max_pairs=JSON_PAIRS if max_pairs is None else max_pairs)

    def to_frame(self) -> pd.DataFrame:
        """One row per pair."""
        rows = [asdict(p) | {"ratio": p.ratio} for p in self.pairs]
        return pd.DataFrame(rows)


#: Share of the words tried that failed to sample above which the failures lead the verdict.
FAILURE_SHARE_LEAD = 0.05


def _failure_lead(failures: dict[str, str], screen: dict[str, Any] | None, vocab_size: int) -> str:
    """The failed words, first in the sentence, when they are more than :data:`FAILURE_SHARE_LEAD`
    of the words tried (the screened words, else the vocabulary): how many and which error."""
    if not failures:
        return ""
    tried = int(screen["words_screened"]) if screen else int(vocab_size)
    share = len(failures) / max(tried, len(failures), 1)
    if share <= FAILURE_SHARE_LEAD:
        return ""
    word, msg = next(iter(failures.items()))
    return (
        f"the sanitizer's sample() failed on {len(failures):,} of the {tried:,} words tried "
        f"({percent(share)}; first {word!r}: {msg}), so this covers only the others; "
    )


def _verdict(
    epsilon: float,
    tested: list[PairResult],
    pooled: list[dict[str, Any]],
    failures: dict[str, str],
    samples: int,
    confidence: float,
    max_detectable: float,
    uncovered: int = 0,
) -> tuple[str, str]:
    """(verdict, its sentence) from the tested pairs and the pooled tests (``uncovered``: the
    candidate pairs left out because the claim does not cover them)."""
    n = len(tested)
    viol = [p for p in tested if p.violates]
    pooled_run = [t for t in pooled if t.get("terms", 0) > 0]
    pooled_viol = [t for t in pooled_run if t.get("rejects")]
    conf = percent(confidence, exact=True)
    size = (
        f"ε = {epsilon_text(epsilon)}, {n} pair(s), {samples:,} samples per word, confidence {conf} "
        "family-wise"
    )
    if pooled_run:
        size += f", {len(pooled_run)} pooled test(s)"
    if viol or pooled_viol:
        parts = []
        if viol:
            worst = max(viol, key=lambda p: (p.ratio, p.lower_bound))
            parts.append(
                f"for ({worst.x!r}, {worst.x_prime!r}) the privacy loss is ≥ {worst.lower_bound:.3g} at "
                f"{conf} confidence, above the claimed {worst.claimed_bound:.3g}; {len(viol)} of {n} "
                "pair(s) flagged"
            )
        if pooled_viol:
            t = max(pooled_viol, key=lambda t: t["excess_lower_bound"])
            parts.append(
                f"the pooled '{t['family']}' test over {t['terms']:,} {t['pairing']} pairs shows that "
                f"some pair's loss exceeds its claim by ≥ {t['excess_lower_bound']:.3g}"
                + (
                    f" ({len(pooled_viol)} of {len(pooled_run)} pooled tests reject)"
                    if len(pooled_run) > 1
                    else ""
                )
            )
        text = "violates its claim: " + "; ".join(parts) + f" ({size})"
        verdict = "violates"
    elif n == 0 and not pooled_run:
        if uncovered:
            why = f"the claim covers none of the {uncovered:,} candidate pair(s) the audit found"
        elif failures:
            why = f"the sanitizer's sample() failed on {len(failures)} word(s)"
        else:
            why = "no pair could be drawn"
        text = f"untested: {why}, so no pair and no pooled test could be tested and nothing was shown"
        verdict = "untested"
    else:
        unreachable = sum(1 for p in tested if p.claimed_bound >= max_detectable)
        verdict = decide(flagged=False, tested=n, beyond_reach=unreachable, others_in_reach=bool(pooled_run))
        if verdict == OUT_OF_REACH:
            lowest = min(p.claimed_bound for p in tested)
            text = (
                f"out of reach: the claimed bound{'s' if n > 1 else ''} (≥ {lowest:.3g}) "
                f"{'are' if n > 1 else 'is'} at or above {max_detectable:.3g}, the largest loss "
                f"{samples:,} samples per word can show, so this run could not have shown a violation "
                f"({size}); raise the samples to test them. Nothing was shown either way"
            )
        else:
            text = f"no violation detected by this test ({size}); this does not show the mechanism is private"
            if unreachable:
                text += (
                    f". {unreachable} of the {n} claimed bounds are ≥ {max_detectable:.3g}, the largest loss "
                    f"{samples:,} samples per word can show: raise the samples to test them"
                )
    return verdict, text


def _notes(
    verdict: str,
    pw: dict[str, Any],
    screen: dict[str, Any] | None,
    declaration: dict[str, Any] | None,
    rc: dict[str, Any],
    shape: dict[str, Any],
    failures: dict[str, str],
    untested: int,
) -> str:
    """What the verdict's sentence adds: the call sizes it covers (first, when nothing was
    detected), power, the screen, the declaration, the rng, failures."""
    text = ""
    found = _call_size_findings(shape)
    sizes = _sizes_text(shape)
    if found and verdict in (NOT_DETECTED, OUT_OF_REACH):  # right after the headline: what it does not cover
        text += f". It covers only the call sizes this run drew ({sizes}): " + "; ".join(found)
    if pw.get("text") and verdict != "untested":
        text += f". Power: {pw['text']}"
    if screen is not None:
        m, n_w = screen["draws_per_word"], screen["words_screened"]
        text += (
            f". The screen drew {m:,} outputs of each of {n_w:,} words and confirmed its "
            f"{screen['proposed']} most suspicious pairs"
        )
    if declaration is not None and declaration.get("status") == "mismatch":
        text += f". Declaration: {declaration.get('text')}"
    if shape.get("status") in ("within-call-dependent", "call-size-dependent"):
        text += (
            f". Calls: {shape.get('text')}; so every draw came from its own call ({shape.get('audited_as')})"
        )
    users = shape.get("stage_two") or {}
    if users.get("status") == "call-size-dependent":
        text += f". Sentence calls: {users.get('text')}"
    sized = shape.get("stage_one_size") or {}
    if sized.get("status") == "call-size-dependent":
        text += f". Call sizes: {sized.get('text')}"
    if found and verdict not in (NOT_DETECTED, OUT_OF_REACH, UNTESTED):
        text += f". This run drew calls of {sizes}: " + "; ".join(found)
    if rc.get("status") in ("global-state-reseeded", "state-across-calls", "not-reproducible"):
        text += f". rng: {rc.get('text', 'the global random state was reseeded from the audit rng per call')}"
    if failures:
        msg = next(iter(failures.values()))
        text += (
            f". The sanitizer's sample() failed on {len(failures)} word(s), so {untested} pair(s) "
            f"were not tested (first: {msg})"
        )
    return text


def _joined(sizes: Any) -> str:
    """Call sizes as '424, 34,464 and 65,536' (smallest first, each once)."""
    named = [f"{n:,}" for n in sorted({int(n) for n in sizes})]
    if not named:
        return "unrecorded sizes of"
    return and_list(named)


def _sizes_text(shape: dict[str, Any]) -> str:
    """The numbers of words of the calls the verdict's draws were made in (``verdict_call_sizes``)."""
    rec = shape.get("verdict_call_sizes") or {}
    return f"{_joined([n for part in rec.values() for n in part])} words"


def _call_size_findings(shape: dict[str, Any]) -> list[str]:
    """What this run saw of a dependence on the call's size, and which of users' call sizes it did
    not draw: a word whose draws at stage 1's call size or in sentence calls differ from its
    stage-2 draws (word, sizes, p-value), and sentence calls not drawn for every stage-2 word
    (dpcore's own samplers and runs drawn one output per call need none)."""
    out: list[str] = []
    sized = shape.get("stage_one_size") or {}
    if sized.get("status") == "call-size-dependent" and sized.get("rejected"):
        r = sized["rejected"][0]
        more = f" (and {len(sized['rejected']) - 1} more word(s))" if len(sized["rejected"]) > 1 else ""
        one, two = _joined(sized.get("call_sizes", [])), _joined(sized.get("stage_two_call_sizes", []))
        out.append(
            f"{r['word']!r}{more} draws differently in calls of {one} words (the {sized.get('stage')}'s) "
            f"and of {two} words (stage 2's) (χ² p {_p(r['p_value'])})"
        )
    users = shape.get("stage_two") or {}
    sentence = int((shape.get("sizes") or {}).get("sentence", 16))
    if users.get("status") == "call-size-dependent" and users.get("rejected"):
        r = users["rejected"][0]
        more = f" (and {len(users['rejected']) - 1} more word(s))" if len(users["rejected"]) > 1 else ""
        out.append(
            f"{r['word']!r}{more} draws differently in {sentence}-word sentence calls than in stage 2's "
            f"(χ² p {_p(r['p_value'])})"
        )
    elif users.get("complete") is False:
        n, total = int(users.get("words", 0)), int(users.get("words_total", 0))
        drawn = "none" if n == 0 else f"only {n}"
        why = str(users.get("text", ""))
        if n == 0:
            why = why.removeprefix("not drawn: ")
        elif int(users.get("words_drawn", total)) < total:
            why = "the rest would take too long"
        else:
            why = "the others' sentence calls failed"
        out.append(
            f"sentence calls ({sentence} words, as users call) were drawn for {drawn} of its {total} stage-2 "
            f"words ({why})"
        )
    return out


def _p(p: float) -> str:
    """A p-value as '= 0.0012', or '< 1e-300' where it underflows to 0."""
    return f"= {float(p):.2g}" if float(p) > 0 else "< 1e-300"
