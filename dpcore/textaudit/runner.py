"""``audit_text``: the empirical word-level privacy loss of any sanitizer, pair by pair.

``audit_text`` is wiring. It makes one :class:`~dpcore.textaudit.plan.AuditPlan` (every
argument validated once), one :class:`~dpcore.pairtest.budget.AlphaBudget` (the only split of
α = 1 − confidence), starts the engine, and runs the stages, one module each:

1. **rng contract** (:mod:`~dpcore.textaudit.contract`): the sanitizer draws from the rng it is
   handed, or is reseeded, or refused. Then the **call check** (:mod:`~dpcore.textaudit.calls`):
   a word's draws within one call are independent and the same in large, single-word and
   sentence calls, or the sanitizer is drawn one output per sentence call (or refused).
2. **Pairs.** ``screen``: every word of the vocabulary is drawn (:mod:`~dpcore.textaudit.screen`),
   the pooled tests run over pairings of it (:mod:`~dpcore.textaudit.pooled`) and the most
   suspicious pairs go on. ``adaptive``: a pilot ranks neighbour and random candidates
   (:func:`~dpcore.textaudit.confirm.run_pilot`). ``neighbors``, ``random`` and named words: the
   plan's pairs. Nothing here decides a verdict but the pooled tests.
3. **Declaration** (:mod:`~dpcore.textaudit.declaration`): an exact sanitizer's declared rows are
   tested on draws made before stage 2; only if they agree are their planned events added to
   stage 2's (never in place of the events chosen from the draws).
4. **Confirmation** (:mod:`~dpcore.textaudit.confirm`): fresh draws of every chosen word; each
   pair tested in both directions with Clopper–Pearson bounds (Bonferroni over every test).
   Every stage-2 word is then also drawn in sentence calls, and at the call size of stage 1 (the
   screen's or the pilot's), and compared with its stage-2 draws
   (:mod:`~dpcore.textaudit.users_calls`; a difference is reported, and a verdict that is not
   ``violates`` then says that it covers only the call sizes this run drew).
5. **Statements** (:mod:`~dpcore.textaudit.power`): what the whole pipeline would have caught.
6. **Replay** (:mod:`~dpcore.textaudit.replay`): one word of every stage drawn again from its
   recorded stream and compared bit for bit.

Every word's stream is derived from (seed, stage, word), so a result is reproduced from its
recorded seed whatever the engine and the number of workers.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from dpcore.pairtest.budget import AlphaBudget
from dpcore.text.vocab import Vocabulary
from dpcore.textaudit import (
    calls,
    confirm,
    contract,
    declaration,
    pooled,
    power,
    screen,
    tradeoffs,
    users_calls,
)
from dpcore.textaudit.claims import check_premise
from dpcore.textaudit.confirm import max_detectable_loss
from dpcore.textaudit.declaration import declares_rows
from dpcore.textaudit.engine import DrawPlan, WordDraws, block_info, draw_words
from dpcore.textaudit.interface import check_sanitizer
from dpcore.textaudit.plan import MAX_PAIRS, MAX_SAMPLES, MAX_TOTAL_SAMPLES, AuditPlan
from dpcore.textaudit.replay import Recorder, replay
from dpcore.textaudit.result import TextAuditResult
from dpcore.textaudit.sampling import OutputCodebook, eligible_outputs
from dpcore.textaudit.screen import DEFAULT_SCREEN_BUDGET, claims_function
from dpcore.textaudit.timing import DEFAULT_SCREEN_MINUTES, WORKER_EFFICIENCY, probe_speed
from dpcore.validation import DPCoreError

__all__ = ["MAX_PAIRS", "MAX_SAMPLES", "MAX_TOTAL_SAMPLES", "audit_text", "max_detectable_loss"]


def audit_text(
    sanitizer: Any,
    *,
    vocab: Vocabulary,
    words: Sequence[str] | None = None,
    pairs: int = 50,
    strategy: str | None = None,
    neighbors: int = 2,
    samples: int | None = 100_000,
    pilot_samples: int | None = None,
    screen_budget: int | None = DEFAULT_SCREEN_BUDGET,
    screen_words: Sequence[str] | None = None,
    screen_minutes: float = DEFAULT_SCREEN_MINUTES,
    on_plan: Callable[[str], None] | None = None,
    seed: int | None = None,
    confidence: float = 0.95,
    progress: Callable[[int, int], None] | None = None,
    max_total_samples: int = MAX_TOTAL_SAMPLES,
    engine: str = "local",
    workers: int | None = 1,
    address: str | None = None,
) -> TextAuditResult:
    """Audit a word-level sanitizer: empirical ε per pair of words, with confidence bounds.

    Parameters
    ----------
    sanitizer:
        Any object with ``name``, ``epsilon``, ``guarantee`` (``"ldp"`` or ``"metric"``) and
        ``sample(words, rng)`` (:class:`~dpcore.textaudit.interface.TextSanitizer`); dpcore's own
        mechanisms via :class:`~dpcore.textaudit.interface.DpcoreSanitizer`.
    vocab:
        The vocabulary the words come from; its embedding gives d(x, x′) for metric claims.
    words:
        Words to audit (each pair among them, and each with its ``neighbors`` nearest words);
        None to choose pairs over the vocabulary by ``strategy``.
    pairs:
        How many pairs the confirmation stage tests, K (1..500).
    strategy:
        ``screen`` (the default without ``words``: every word of the vocabulary, or of
        ``screen_words``, is drawn and the K most suspicious pairs are confirmed,
        :mod:`dpcore.textaudit.screen`), ``adaptive`` (the default with ``words``: a pilot over
        neighbour and random pairs, then the best K), ``neighbors`` or ``random``.
    neighbors:
        Nearest neighbours per word for candidate pairs (0..20).
    samples:
        Draws of M(x) per word in the confirmation stage, T (100..10⁷; half select, half decide).
        None (with ``screen_budget=None``): fitted to ``screen_minutes``, at most 10⁵.
    pilot_samples:
        Draws per candidate word in the adaptive pilot (default max(1,000, T/10)).
    screen_budget:
        Total draws of the screen's stage 1; each screened word gets budget // words of them
        (at least 200, at most 10⁶).
        None: probe the sanitizer's speed and fit the budget to ``screen_minutes``
        (:mod:`dpcore.textaudit.timing`; at most the default 2·10⁷ draws).
    screen_words:
        Screen only these words (default: the whole vocabulary).
    screen_minutes:
        With ``screen_budget=None``: the time each stage should take, in minutes.
    on_plan:
        Called with one sentence (the fitted plan and its time estimate) before anything is drawn.
    seed:
        Seed; None draws one (recorded in the result).
    confidence:
        Family-wise confidence of the ``violates`` verdicts (Bonferroni over pairs and directions).
    progress:
        ``progress(done, total)`` over draws.
    max_total_samples:
        Refuse an audit that would draw more than this (screen, pilot and confirmation).
    engine:
        ``local`` or ``ray`` (:mod:`dpcore.textaudit.engine`); the result does not depend on it.
    workers:
        Processes (local) or CPUs (a local Ray); None: the machine's cores. The result does not
        depend on it.
    address:
        A Ray cluster to join (``engine="ray"``); default: a local Ray for this run.

    Returns
    -------
    TextAuditResult

    Examples
    --------
    >>> from dpcore.text import create_text_mechanism
    >>> from dpcore.text.vocab import build_vocabulary
    >>> from dpcore.textaudit import DpcoreSanitizer, audit_text
    >>> vocab = build_vocabulary("glove", size=2000)
    >>> mech = DpcoreSanitizer(create_text_mechanism("santext", vocab=vocab, epsilon=1.0))
    >>> res = audit_text(mech, vocab=vocab, pairs=5, samples=20_000, screen_budget=1_000_000, seed=0)
    >>> res.verdict
    'not-detected'
    """
    t0 = time.perf_counter()
    sanitizer = check_sanitizer(sanitizer)
    plan = AuditPlan.create(
        vocab=vocab,
        words=words,
        pairs=pairs,
        strategy=strategy,
        neighbors=neighbors,
        samples=samples,
        pilot_samples=pilot_samples,
        screen_budget=screen_budget,
        screen_words=screen_words,
        screen_minutes=screen_minutes,
        seed=seed,
        confidence=confidence,
        max_total_samples=max_total_samples,
        engine=engine,
        workers=workers,
        address=address,
    )
    run: dict[str, Any] = {"engine": plan.engine, "workers": plan.workers, "address": plan.address}
    t_engine = time.perf_counter()
    stop_engine = _start_engine(plan.engine, plan.workers, plan.address)
    if plan.engine == "ray":
        run["ray_start_seconds"] = time.perf_counter() - t_engine
    try:
        result = _audit(plan, sanitizer, vocab, run, _Progress(plan.estimated_draws, progress), on_plan, t0)
    finally:
        stop_engine()
    claim = getattr(sanitizer, "claim", None)
    if claim is None:
        return result
    return result.with_claim(claim.to_dict(), check_premise(sanitizer, vocab, seed=plan.seed))


def _audit(
    plan: AuditPlan,
    sanitizer: Any,
    vocab: Vocabulary,
    run: dict[str, Any],
    bar: _Progress,
    on_plan: Callable[[str], None] | None,
    t0: float,
) -> TextAuditResult:
    """The stages in order: contract, (fit), screen and pooled tests or pilot, declaration,
    confirmation, statements."""
    stages = _Stages()
    codebook = OutputCodebook(vocab.words)
    declared = declares_rows(sanitizer)
    budget = AlphaBudget.split(plan.confidence, declared=declared, screened=plan.strategy == "screen")
    checked = contract.run(plan, sanitizer, vocab.words)
    sanitizer = checked.sanitizer
    run["rng_contract_forked_checks"] = checked.forked_checks
    run.update(block_info(sanitizer))
    stages.done("rng contract", 0)
    speed = None
    if plan.fitted:
        speed = probe_speed(sanitizer, vocab.words, plan.probe_ids, plan.seed)
        plan, fit = plan.fit(speed)
        run["plan"] = fit.to_dict() | {"probe_seconds": speed.probe_seconds}
        bar.total = plan.estimated_draws
        stages.done("speed probe", 0)
    shape, sanitizer, plan = _call_check(plan, sanitizer, vocab.words, speed, run, bar)
    if on_plan is not None and "plan" in run:
        on_plan(run["plan"]["text"])
    stages.done("call check", 0)
    claims = claims_function(sanitizer, vocab)
    draw = recorder = Recorder(_drawer(sanitizer, vocab.words, plan, bar), plan.seed)
    ctx = {"sanitizer": sanitizer, "vocab": vocab, "codebook": codebook}
    cand, failures, scr, nn = plan.candidates, {}, None, None
    pool = pooled.PooledOutcome([], np.zeros((0, 2), dtype=np.int64))
    check = None
    if plan.strategy == "screen":
        sd = screen.run(plan, draw, **ctx)
        stages.done("screen", plan.screen_draws)
        prop = screen.propose(plan, sd, claims=claims, **ctx)
        pool = pooled.run(sd, plan.screen_ids, sanitizer=sanitizer, vocab=vocab, claims=claims, budget=budget)
        stages.done("proposals and pooled tests", 0)
        scr = screen.outcome(plan, sd, prop, pool.pairs, vocab.words)
        cand, failures, nn = scr.pairs, dict(sd.failures), sd.nn
        bar.total = bar.done + len(np.unique(cand)) * plan.samples if len(cand) else bar.done
        if declared:
            seen = (screen.observations(plan, sd, cand, codebook), plan.m_screen)
            check = declaration.run(plan, draw, cand, budget=budget, screened=seen, **ctx)
        del sd  # the screen's summaries: no longer needed
    else:
        if plan.use_pilot:
            pilot = confirm.run_pilot(plan, draw, claims=claims, budget=budget, **ctx)
            stages.done("pilot", pilot.draws)
            cand, failures = pilot.pairs, pilot.failures
            bar.total = bar.done + len(np.unique(cand)) * plan.samples
        if declared:
            own = len(np.unique(cand)) * declaration.own_draws_per_word(plan.samples) if len(cand) else 0
            bar.total += own
            check = declaration.run(plan, draw, cand, budget=budget, **ctx)
            if own:
                stages.done("declaration", own)
    cand = _covered_only(cand, claims, vocab, run)
    conf = confirm.run(
        plan,
        draw,
        cand,
        claims=claims,
        budget=budget,
        use_rows=check is not None and check.status == "agrees",
        screen_events=scr.events if scr is not None else {},
        **ctx,
    )
    stages.done("confirm", conf.draws)
    call_record = _users_calls(plan, sanitizer, vocab, shape, conf, cand, speed, bar, stages)
    for word, msg in conf.failures.items():
        failures.setdefault(word, msg)
    statements = power.run(
        strategy=plan.strategy,
        sanitizer=sanitizer,
        vocab=vocab,
        screen_ids=plan.screen_ids,
        screen_info=None if scr is None else scr.info,
        nn=nn,
        pooled=pool.tests,
        results=conf.results,
        samples=plan.samples,
        alpha_pair=conf.alpha,
        claims=claims,
        call_sizes=calls.sizes_drawn(plan, sanitizer, shape),
    )
    stages.done("power statements", 0)
    replayed = replay(recorder, sanitizer, vocab.words, plan.seed)
    rng_record = _with_replay(checked.record, replayed)
    stages.done("replay", replayed["draws"])
    bar.finish()
    run["stages"] = stages.record
    run["elapsed_seconds"] = time.perf_counter() - t0
    return TextAuditResult.build(
        sanitizer=sanitizer,
        vocab=vocab,
        pairs=conf.results,
        samples=plan.samples,
        pilot_samples=plan.pilot if plan.use_pilot else 0,
        candidates=scr.candidates if scr is not None else plan.n_candidates,
        strategy=plan.strategy_label,
        seed=plan.seed,
        confidence=plan.confidence,
        alpha=conf.alpha,
        max_detectable=conf.max_detectable,
        samples_drawn=bar.done,
        failures=failures,
        elapsed=run["elapsed_seconds"],
        detectable=confirm.detectable_on_own_events(conf.results, conf.n_bound, conf.alpha),
        screen=None if scr is None else scr.info,
        execution=run,
        word_scores=None if scr is None else scr.word_scores,
        screened_ids=plan.screen_ids,
        screened_words=None if plan.screen_ids is None else vocab.words[plan.screen_ids],
        pooled=[t.to_dict() | {"text": t.text()} for t in pool.tests],
        declaration=None if check is None else check.to_dict(),
        rng_contract=rng_record,
        calls=call_record,
        power=statements,
        alpha_accounting=budget.to_dict(pooled_per_test=pool.per_test_alpha, confirmation_tests=conf.n_tests),
        tradeoff_pairs=_tradeoff_pairs(conf, cand, sanitizer, len(codebook), budget.confirmation),
    )


def _covered_only(cand: np.ndarray, claims: Any, vocab: Vocabulary, run: dict[str, Any]) -> np.ndarray:
    """The candidate pairs the claim covers (a finite claimed bound): a pair the claim says
    nothing about (CusText's words with different output sets) is never confirmed, so no
    violation is reported for it. How many were left out goes into ``run``."""
    if len(cand) == 0:
        return cand
    cand = np.asarray(cand, dtype=np.int64).reshape(-1, 2)
    diff = vocab.vectors[cand[:, 0]].astype(np.float64) - vocab.vectors[cand[:, 1]]
    bound = claims(cand[:, 0], cand[:, 1], np.sqrt(np.einsum("ij,ij->i", diff, diff)))
    keep = np.isfinite(bound)
    if not keep.all():
        run["pairs_not_covered"] = int((~keep).sum())
    return cand[keep]


def _tradeoff_pairs(
    conf: confirm.ConfirmOutcome, cand: np.ndarray, sanitizer: Any, n_outputs: int, family_alpha: float
) -> tuple[Any, ...]:
    """Stage 2's tests as trade-off pairs (:mod:`dpcore.textaudit.tradeoffs`)."""
    return tradeoffs.build(
        conf.results,
        conf.events,
        cand,
        rows=conf.rows,
        eligible=eligible_outputs(sanitizer, n_outputs),
        alpha=conf.alpha,
        n_tests=conf.n_tests,
        family_alpha=family_alpha,
    )


class _Progress:
    """Draws done against the draws expected (``progress(done, total)``); the total is re-estimated
    after the screen or the pilot."""

    def __init__(self, total: int, callback: Callable[[int, int], None] | None) -> None:
        self.total, self.done, self._callback = total, 0, callback

    def tick(self, m: int) -> None:
        self.done += m
        if self._callback is not None:
            self._callback(min(self.done, self.total), self.total)

    def grow(self, draws: int) -> None:
        """More draws to come than estimated (a stage sized as it starts)."""
        self.total += int(draws)

    def finish(self) -> None:
        if self._callback is not None:
            self._callback(self.total, self.total)


class _Stages:
    """Seconds and draws per stage, for the result's ``execution`` record."""

    def __init__(self) -> None:
        self.t = time.perf_counter()
        self.record: dict[str, dict[str, float]] = {}

    def done(self, name: str, draws: int) -> None:
        now = time.perf_counter()
        dt = now - self.t
        self.record[name] = {
            "seconds": dt,
            "draws": int(draws),
            "draws_per_second": draws / dt if dt > 0 else math.inf,
        }
        self.t = now


def _drawer(
    sanitizer: Any, words: np.ndarray, plan: AuditPlan, bar: _Progress
) -> Callable[[np.ndarray, DrawPlan], list[WordDraws]]:
    """``draw(word ids, what)``: every stage's draws, through the plan's engine."""

    def draw(wids: np.ndarray, what: DrawPlan) -> list[WordDraws]:
        return draw_words(
            sanitizer,
            words,
            wids,
            plan.seed,
            what,
            engine=plan.engine,
            workers=plan.workers,
            address=plan.address,
            tick=bar.tick,
        )

    return draw


def _start_engine(engine: str, workers: int, address: str | None) -> Callable[[], None]:
    """Start (or join) Ray once for all stages of a run; nothing to start for the local engine."""
    if engine != "ray":
        return lambda: None
    from dpcore.executor import start_ray

    return start_ray(address, workers)


def _call_check(
    plan: AuditPlan, sanitizer: Any, words: np.ndarray, speed: Any, run: dict[str, Any], bar: _Progress
) -> tuple[calls.CallCheck, Any, AuditPlan]:
    """The call check; a sanitizer that fails it comes back drawn one output per call, its plan
    refitted (or refused)."""
    shape = calls.run(plan, sanitizer, words, speed)
    if shape.dependent:
        sanitizer, plan = _one_output_per_call(plan, sanitizer, words, shape, run)
        bar.total = plan.estimated_draws
    return shape, sanitizer, plan


def _one_output_per_call(
    plan: AuditPlan, sanitizer: Any, words: np.ndarray, shape: calls.CallCheck, run: dict[str, Any]
) -> tuple[Any, AuditPlan]:
    """A sanitizer whose draws cannot be pooled from large calls: audited one output per
    sentence-sized call (:class:`~dpcore.textaudit.calls.SentenceCalls`), its plan refitted to
    that speed, or refused with one line naming the dependence when it would take too long."""
    name = str(getattr(sanitizer, "name", type(sanitizer).__name__))
    wrapped = calls.SentenceCalls(sanitizer, words, fillers=shape.fillers)
    speed = probe_speed(wrapped, words, plan.probe_ids, plan.seed)
    if plan.fitted:
        try:
            plan, fit = plan.fit(speed)
        except DPCoreError as exc:
            raise DPCoreError(f"{name}: {shape.text}. Audited one output per call, {exc}") from None
        run["plan"] = fit.to_dict() | {"probe_seconds": speed.probe_seconds}
        return wrapped, plan
    eff = 1.0 if plan.workers <= 1 else plan.workers * WORKER_EFFICIENCY
    seconds = plan.estimated_seconds(speed) / eff
    if seconds > 2 * 60.0 * plan.screen_minutes:
        rate = eff / max(speed.per_draw, 1e-12)
        raise DPCoreError(calls.per_call_refusal(shape, name, seconds, plan.estimated_draws, rate))
    return wrapped, plan


def _users_calls(
    plan: AuditPlan,
    sanitizer: Any,
    vocab: Vocabulary,
    shape: calls.CallCheck,
    conf: confirm.ConfirmOutcome,
    cand: np.ndarray,
    speed: Any,
    bar: _Progress,
    stages: _Stages,
) -> dict[str, Any]:
    """Stage 2's words at the other call sizes (:mod:`~dpcore.textaudit.users_calls`): in sentence
    calls, and at stage 1's call size; the result's ``calls`` record with both."""
    first = _first_appearance(cand)  # the most suspicious words first (proposals are best first)
    in_sentences = _drawer(
        calls.SentenceCalls(sanitizer, vocab.words, fillers=shape.fillers), vocab.words, plan, bar
    )
    users = users_calls.run(
        conf.counts, in_sentences, vocab.words, shape, speed=speed, on_size=bar.grow, priority=first
    )
    stages.done("sentence calls", users["draws"])
    sized = users_calls.at_stage_one_size(
        conf.counts,
        _drawer(sanitizer, vocab.words, plan, bar),  # not recorded: the replay keeps the stages' own
        vocab.words,
        shape,
        stage="screen" if plan.strategy == "screen" else "pilot" if plan.use_pilot else "",
        per_word=plan.m_screen if plan.strategy == "screen" else plan.pilot if plan.use_pilot else 0,
        chunk=calls.call_chunk(sanitizer),
        samples=plan.samples,
        speed=speed,
        on_size=bar.grow,
        priority=first,
    )
    stages.done("stage-one call size", sized["draws"])
    return shape.to_dict() | {
        "audited_as": _audited_as(shape),
        "stage_two": users,
        "stage_one_size": sized,
        "verdict_call_sizes": calls.stage_sizes(plan, sanitizer, shape),
    }


def _first_appearance(pairs: np.ndarray) -> np.ndarray:
    """The word ids of ``pairs`` in the order they first appear (row by row)."""
    flat = np.asarray(pairs, dtype=np.int64).ravel()
    _, first = np.unique(flat, return_index=True)
    return flat[np.sort(first)]


def _audited_as(shape: calls.CallCheck) -> str:
    if shape.dependent:
        return f"one output per call of {calls.SENTENCE_WORDS} words"
    return "large calls"


def _with_replay(record: dict[str, Any], replayed: dict[str, Any]) -> dict[str, Any]:
    """The rng record with the replay of the audit's own calls (``not-reproducible`` when it differed)."""
    out = dict(record) | {"replay": replayed}
    if replayed["same"] is False:
        out["probe_status"] = out.get("status")
        out["status"] = "not-reproducible"
        out["text"] = replayed["text"]
    return out
