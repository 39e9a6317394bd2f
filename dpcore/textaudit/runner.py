"""``audit_text``: the empirical word-level privacy loss of any sanitizer, pair by pair.

Stages
------
1. **Pairs.** Explicit words (each pair among them and each with its nearest neighbours) or a
   strategy over the vocabulary (:mod:`dpcore.textaudit.pairs`).
2. **Pilot** (``adaptive`` only, or when there are more candidates than ``pairs``): every
   candidate word gets ``pilot_samples`` draws, every candidate pair a pilot score (its lower
   bound minus its claimed bound, :mod:`dpcore.textaudit.estimator`), and the ``pairs`` best
   go on. The pilot decides nothing.
3. **Confirmation.** Every word of the chosen pairs gets ``samples`` *fresh* draws, split into
   a selection half and an evaluation half; each pair is tested in both directions with
   Clopper–Pearson bounds at α = (1 − confidence) / (2·pairs) (Bonferroni), and the pair
   *violates* when a lower bound exceeds its claimed bound.

A word's draws are shared by every pair it belongs to (the union bound needs no independence).
Every word's stream is derived from (seed, stage, word), so a result is reproduced from its
recorded seed. When the sanitizer knows its exact distribution, each pair's exact worst-case
loss max_y |ln Pr[M(x)=y] − ln Pr[M(x′)=y]| is reported beside (for pure and metric LDP the
worst event is a single output).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from dpcore.audit.bounds import cp_lower, cp_upper
from dpcore.parallel import resolve_workers
from dpcore.rng import cell_seed_sequence, resolve_seed
from dpcore.text.sampling import pair_distances
from dpcore.text.vocab import Vocabulary
from dpcore.textaudit.declaration import (
    DeclarationCheck,
    check_declaration,
    declares_rows,
    exact_rows,
    pad_log,
)
from dpcore.textaudit.engine import ENGINES, DrawPlan, WordDraws, block_info, draw_words
from dpcore.textaudit.estimator import (
    MAX_EVENT_CANDIDATES,
    best_prefix,
    best_prefix_event,
    estimate_direction,
)
from dpcore.textaudit.interface import check_sanitizer
from dpcore.textaudit.pairs import STRATEGIES, candidate_pairs, nearest_neighbors
from dpcore.textaudit.pooled import MATCH_NEIGHBOURS, family_tests, pairings_for
from dpcore.textaudit.power import DEFAULT_POWER, detectable_excess, pipeline_statements
from dpcore.textaudit.result import PairResult, TextAuditResult
from dpcore.textaudit.sampling import OutputCodebook, eligible_outputs
from dpcore.textaudit.screen import (
    DEFAULT_SCREEN_BUDGET,
    SCREEN_TOP,
    claims_function,
    draws_per_word,
    propose_pairs,
)
from dpcore.textaudit.timing import DEFAULT_SCREEN_MINUTES, fit_plan, probe_speed
from dpcore.validation import DPCoreError, check_finite_float, check_int

__all__ = ["MAX_PAIRS", "MAX_SAMPLES", "MAX_TOTAL_SAMPLES", "audit_text", "max_detectable_loss"]

MAX_SAMPLES = 10_000_000
MAX_PAIRS = 500
#: Draws in one audit (pilot and confirmation) for the API and the CLI.
MAX_TOTAL_SAMPLES = 2_000_000_000
#: Count cells held at once (distinct words × 2 halves × outputs), about 400 MB of int64.
MAX_COUNT_CELLS = 50_000_000
#: Relative slack when comparing a bound with a claim (float64 rounding of ε·d).
_TOL = 1e-9
#: Shares of α = 1 − confidence: the declaration test (when rows are declared) and the pooled
#: tests (the screen); stage 2's confirmations get the rest (docs/audit-text.md, "What a result
#: means").
ALPHA_DECLARATION = 0.1
ALPHA_POOLED = 0.2
#: Pairs named by a rejecting pooled family that go on to stage 2 (per family).
POOLED_CONFIRM = 5
#: Distinct words per confirmed pair, for the time estimate (proposed pairs share words: 50
#: pairs of pyPANTERA CMP at |V| = 2,000 drew 58 words, not 100).
CONFIRM_WORDS_PER_PAIR = 1.25


def max_detectable_loss(samples_per_half: int, alpha: float) -> float:
    """The largest lower bound this test can ever give: all of one side in S, none of the other."""

    n = samples_per_half
    return float(np.log(cp_lower(n, n, alpha / 2)) - np.log(cp_upper(0, n, alpha / 2)))


def _pad(a: np.ndarray, n: int) -> np.ndarray:
    return a if a.size >= n else np.pad(a, (0, n - a.size))


class _Counts:
    """One stage's draws per word, merged in word order (so independent of the engine)."""

    def __init__(
        self, draws: list[WordDraws], words: np.ndarray, codebook: OutputCodebook, n_sel: int, n_eval: int
    ) -> None:
        self.cb, self.n_sel, self.n_eval = codebook, n_sel, n_eval
        self.halves: dict[int, tuple[np.ndarray, ...]] = {}
        #: Words whose ``sample`` raised, with the message (their pairs are not tested).
        self.failures: dict[str, str] = {}
        for wd in draws:
            if wd.error is not None:
                self.failures[str(words[wd.wid])] = wd.error
                continue
            halves = []
            for c, extra in zip(wd.counts, wd.extras, strict=True):
                codes = [codebook.code(label) for label in sorted(extra)]
                full = np.zeros(len(codebook), dtype=np.int64)
                full[: c.size] = c
                for code, label in zip(codes, sorted(extra), strict=True):
                    full[code] = extra[label]
                halves.append(full)
            self.halves[wd.wid] = tuple(halves)

    def get(self, wid: int) -> tuple[np.ndarray, ...]:
        if wid not in self.halves:
            raise _SampleFailed(self.failures.get(str(self.cb.label(wid)), "not drawn"))
        return self.halves[wid]


class _SampleFailed(Exception):
    """The sanitizer's ``sample`` raised for a word of this pair."""


def _test_pair(
    counter: _Counts,
    i: int,
    j: int,
    alpha: float,
    eligible_fn: Callable[[int], np.ndarray | None],
    rows: dict[int, np.ndarray] | None = None,
    screen_event: tuple[int, int] | None = None,
) -> tuple[float, float, int, int, int, int, str, str]:
    """(estimate, lower bound, event size, a, b, samples, direction, event source) of the strongest test.

    Without declared rows the event is chosen on the selection half and bounded on the
    evaluation half; with them (exact sanitizers whose sampler passed the declaration test) it is
    planned from the declaration and bounded on all draws (:func:`_planned_event`). A pair the
    screen proposed for one output y also tests {y} in the screen's direction on all draws
    (``screen_event`` = (favoured word id, output code)): that event was fixed before stage 2.
    Every test runs at ``alpha``; the caller counts them all in its Bonferroni correction.
    """
    si, ei = counter.get(i)
    sj, ej = counter.get(j)
    size = len(counter.cb)
    si, ei, sj, ej = (_pad(a, size) for a in (si, ei, sj, ej))
    elig = eligible_fn(size)
    planned = rows is not None and i in rows and j in rows
    n_all = counter.n_sel + counter.n_eval
    best: tuple[float, float, int, int, int, int, str, str] | None = None

    def keep(d: Any, label: str, source: str) -> None:
        nonlocal best
        cand = (d.estimate, d.lower_bound, d.event_size, d.count_x, d.count_x_prime, d.samples, label, source)
        if best is None or (cand[1], cand[0]) > (best[1], best[0]):
            best = cand

    for a_, b_, sel_a, ev_a, sel_b, ev_b, label in (
        (i, j, si, ei, sj, ej, "x>x'"),
        (j, i, sj, ej, si, ei, "x'>x"),
    ):
        if planned:
            assert rows is not None
            la, lb = pad_log(rows[a_], size), pad_log(rows[b_], size)
            event = _planned_event(la, lb, n_all, alpha, elig)
            keep(estimate_direction(event, sel_a + ev_a, sel_b + ev_b, n_all, alpha), label, "declared")
        else:
            event = best_prefix_event(sel_a, sel_b, counter.n_sel, alpha, elig)
            keep(estimate_direction(event, ev_a, ev_b, counter.n_eval, alpha), label, "selected")
            if screen_event is not None and screen_event[0] == a_ and 0 <= screen_event[1] < size:
                ev = np.array([screen_event[1]], dtype=np.int64)
                keep(estimate_direction(ev, sel_a + ev_a, sel_b + ev_b, n_all, alpha), label, "screen")
    assert best is not None
    return best


def _exact_losses(
    rows: dict[int, np.ndarray] | None, pairs: np.ndarray, elig: np.ndarray | None
) -> np.ndarray:
    """max_y |ln p_x(y) − ln p_x′(y)| per pair over protected outputs (nan when not exact)."""
    if rows is None:
        return np.full(len(pairs), np.nan)
    size = max(r.size for r in rows.values())
    out = np.empty(len(pairs))
    for k, (i, j) in enumerate(pairs):
        a, b = pad_log(rows[int(i)], size), pad_log(rows[int(j)], size)
        if elig is not None:
            m = _pad(elig, size).astype(bool)
            a, b = a[m], b[m]
        both = np.isfinite(a) & np.isfinite(b)
        one = np.isfinite(a) ^ np.isfinite(b)
        out[k] = np.inf if one.any() else (float(np.max(np.abs(a[both] - b[both]))) if both.any() else 0.0)
    return out


def _planned_event(
    la: np.ndarray, lb: np.ndarray, n: int, alpha: float, elig: np.ndarray | None
) -> np.ndarray:
    """The event S fixed in advance from the *declared* distribution (no sample is looked at).

    Outputs are sorted by the declared ratio ln p_x(y) − ln p_x′(y); the prefix maximising the
    lower bound expected at n draws per side is chosen. Because S does not depend on the draws,
    every draw of both halves can be used to bound its loss (twice the evaluation samples), and
    a sampler that departs from its declared distribution is still judged on its own draws.
    """
    ok = np.isfinite(la)
    if elig is not None:
        ok &= elig
    cand = np.flatnonzero(ok)
    if cand.size == 0:
        return cand
    ratio = la[cand] - lb[cand]  # +inf where x′ cannot produce y
    if cand.size > MAX_EVENT_CANDIDATES:
        top = np.argpartition(-ratio, MAX_EVENT_CANDIDATES - 1)[:MAX_EVENT_CANDIDATES]
        cand, ratio = cand[top], ratio[top]
    order = np.argsort(-ratio, kind="stable")
    cand = cand[order]
    pa = np.cumsum(np.exp(la[cand]))
    pb = np.cumsum(np.exp(lb[cand]))
    k = best_prefix(np.minimum(n * pa, n), np.minimum(n * pb, n), n, alpha)
    return cand[: k + 1]


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
    if not isinstance(vocab, Vocabulary):
        raise DPCoreError("vocab must be a dpcore.text.vocab.Vocabulary")
    if strategy is None:
        strategy = "screen" if words is None else "adaptive"
    if strategy not in STRATEGIES:
        raise DPCoreError(f"unknown pair strategy {strategy!r}; choose one of: {', '.join(STRATEGIES)}")
    if strategy == "screen" and words is not None:
        raise DPCoreError("the screen covers the vocabulary; name words with screen_words, not words")
    pairs = check_int(pairs, name="pairs", min_value=1, max_value=MAX_PAIRS)
    neighbors = check_int(neighbors, name="neighbors", min_value=0, max_value=20)
    fitted = screen_budget is None and (strategy == "screen")
    fit_samples = samples is None
    if fit_samples and not fitted:
        raise DPCoreError("samples=None (fitted to the time budget) needs the screen with screen_budget=None")
    samples = 100_000 if samples is None else samples
    samples = check_int(samples, name="samples", min_value=100, max_value=MAX_SAMPLES)
    pilot = max(1_000, samples // 10) if pilot_samples is None else pilot_samples
    pilot = check_int(pilot, name="pilot samples", min_value=100, max_value=MAX_SAMPLES)
    if screen_budget is None:
        screen_budget = DEFAULT_SCREEN_BUDGET
    screen_budget = check_int(screen_budget, name="screen budget", min_value=1, max_value=max_total_samples)
    screen_minutes = check_finite_float(
        screen_minutes, name="screen minutes", min_value=0.05, max_value=600.0
    )
    confidence = check_finite_float(confidence, name="confidence", min_value=0.5, max_value=0.999999)
    if confidence >= 1.0:
        raise DPCoreError("confidence must be < 1")
    if engine not in ENGINES:
        raise DPCoreError(f"unknown engine {engine!r}; choose one of: {', '.join(ENGINES)}")
    n_workers = resolve_workers(workers)
    if address is not None and engine != "ray":
        raise DPCoreError("address is for engine='ray'")
    seed = resolve_seed(seed)
    rng = np.random.default_rng(cell_seed_sequence(seed, "text-audit", "pairs"))
    words_arr = vocab.words

    word_ids = None
    if words is not None:
        word_ids = _word_ids(vocab, words, limit=200, what="audit")
        if len(word_ids) == 1 and neighbors == 0:
            raise DPCoreError("one word needs neighbours to pair with (neighbors ≥ 1) or a second word")
    screen_ids = None
    m_screen = 0
    if strategy == "screen":
        screen_ids = (
            np.arange(len(vocab), dtype=np.int64)
            if screen_words is None
            else _word_ids(vocab, screen_words, limit=len(vocab), what="screen")
        )
        if len(screen_ids) < 2:
            raise DPCoreError("the screen needs at least two words")
        if fitted:  # the real m comes from the speed probe; check the largest it can be
            m_screen = max(1, min(screen_budget // len(screen_ids), 1_000_000))
        else:
            m_screen = draws_per_word(len(screen_ids), screen_budget)
        cand = np.zeros((0, 2), dtype=np.int64)
        n_candidates = 0
        use_pilot = False
        total = len(screen_ids) * m_screen + min(len(screen_ids), 2 * pairs) * samples
    else:
        cand = candidate_pairs(
            vocab, strategy=strategy, n_pairs=pairs, rng=rng, word_ids=word_ids, neighbors=neighbors
        )
        n_candidates = len(cand)
        use_pilot = n_candidates > pairs and strategy == "adaptive"
        if not use_pilot:
            cand = cand[:pairs]
        n_pilot_words = len(np.unique(cand)) if use_pilot else 0
        total = n_pilot_words * pilot + min(len(np.unique(cand)), 2 * pairs) * samples
    if total > max_total_samples:
        raise DPCoreError(
            f"this audit would draw about {total:,.0f} samples; the limit is {max_total_samples:,} "
            "(lower samples, pilot samples, the screen budget or pairs)"
        )
    held = (
        min(len(np.unique(cand)) if len(cand) else 2 * pairs, 2 * pairs)
        if not use_pilot
        else len(np.unique(cand))
    )
    cells = max(held, 1) * 2 * (len(vocab) + 16)
    if cells > MAX_COUNT_CELLS:
        raise DPCoreError(
            f"this audit would hold {cells:,} output counts at once (words × 2 × |V|); the limit is "
            f"{MAX_COUNT_CELLS:,}: use a smaller vocabulary or fewer pairs"
        )

    done = [0]

    def tick(m: int) -> None:
        done[0] += m
        if progress is not None:
            progress(min(done[0], total), total)

    codebook = OutputCodebook(words_arr)
    run = {"engine": engine, "workers": n_workers, "address": address}

    def draw(wids: np.ndarray, plan: DrawPlan) -> list[WordDraws]:
        return draw_words(
            sanitizer,
            words_arr,
            wids,
            seed,
            plan,
            engine=engine,
            workers=n_workers,
            address=address,
            tick=tick,
        )

    def elig_fn(size: int) -> np.ndarray | None:
        return eligible_outputs(sanitizer, size)

    t_engine = time.perf_counter()
    stop_engine = _start_engine(engine, n_workers, address)
    if engine == "ray":
        run["ray_start_seconds"] = time.perf_counter() - t_engine
    try:
        alpha_total = 1.0 - confidence
        declared = declares_rows(sanitizer)
        a_decl = ALPHA_DECLARATION * alpha_total if declared else 0.0
        a_pool = ALPHA_POOLED * alpha_total if strategy == "screen" else 0.0
        a_conf = alpha_total - a_decl - a_pool
        probe = (screen_ids if screen_ids is not None else np.unique(cand)).astype(np.int64)
        sanitizer, rng_contract = _rng_contract(sanitizer, words_arr, probe, seed, n_workers, engine)
        rng_contract, run["rng_contract_forked_checks"] = _split_fork_checks(rng_contract)
        run.update(block_info(sanitizer))
        if fitted:
            assert screen_ids is not None
            speed = probe_speed(sanitizer, words_arr, probe, seed)
            plan_fit = fit_plan(
                speed,
                screen_words=len(screen_ids),
                confirm_words=min(len(screen_ids), round(CONFIRM_WORDS_PER_PAIR * pairs) + POOLED_CONFIRM),
                minutes=screen_minutes,
                workers=n_workers,
                max_budget=DEFAULT_SCREEN_BUDGET,
                samples=None if fit_samples else samples,
                max_samples=100_000,
            )
            m_screen, screen_budget, samples = plan_fit.draws_per_word, plan_fit.budget, plan_fit.samples
            run["plan"] = plan_fit.to_dict() | {"probe_seconds": speed.probe_seconds}
            total = len(screen_ids) * m_screen + min(len(screen_ids), 2 * pairs) * samples
            if on_plan is not None:
                on_plan(plan_fit.text())
        claims = claims_function(sanitizer, vocab)
        stages: dict[str, dict[str, float]] = {}
        failures: dict[str, str] = {}
        screen_info: dict[str, Any] | None = None
        word_scores: np.ndarray | None = None
        screen_events: dict[tuple[int, int], tuple[int, int]] = {}
        pooled: list[Any] = []
        declaration: DeclarationCheck | None = None
        decl_obs: dict[int, tuple[np.ndarray, np.ndarray, int]] = {}
        m_decl = 0
        if strategy == "screen":
            assert screen_ids is not None
            ts = time.perf_counter()
            # the screened words' nearest screened words, once (matching, candidates, claim levels)
            k_nn = max(neighbors, MATCH_NEIGHBOURS if sanitizer.guarantee == "metric" else 0)
            k_nn = min(len(screen_ids) - 1, k_nn)
            nn_pos = None
            if k_nn > 0:
                row_of = np.full(len(vocab), -1, dtype=np.int64)
                row_of[screen_ids] = np.arange(len(screen_ids))
                nn_pos = row_of[
                    nearest_neighbors(vocab, screen_ids, k_nn, among=screen_ids, workers=n_workers)
                ]
            pairings = pairings_for(
                sanitizer.guarantee,
                vocab,
                screen_ids,
                np.random.default_rng(cell_seed_sequence(seed, "text-audit", "pairings")),
                nn=nn_pos,
            )
            partners = np.full((len(pairings), len(vocab)), -1, dtype=np.int64)
            for k, pr in enumerate(pairings):
                has = pr.partner >= 0
                partners[k, screen_ids[has]] = screen_ids[pr.partner[has]]
            # pairing 0's pairs side by side (so a worker scores each on all its outputs)
            p0 = pairings[0].partner
            first = np.flatnonzero(p0 > np.arange(len(p0)))
            order = np.concatenate(
                [np.stack([first, p0[first]], axis=1).ravel(), np.flatnonzero(p0 < 0)]
            ).astype(np.int64)
            halves = (m_screen // 2, m_screen - m_screen // 2)
            plan = DrawPlan("screen", halves, top=SCREEN_TOP, partners=partners, colocated=True)
            drawn = draw(screen_ids[order], plan)
            sdraws: list[WordDraws] = [drawn[0]] * len(order)
            for k, pos in enumerate(order):
                sdraws[pos] = drawn[k]
            del drawn
            for wd in sdraws:
                if wd.summary is not None:
                    for label in wd.summary.labels:
                        codebook.code(label)
                else:
                    failures[str(words_arr[wd.wid])] = str(wd.error)
            stages["screen"] = _stage(ts, len(screen_ids) * m_screen)
            tp = time.perf_counter()
            elig_codes = eligible_outputs(sanitizer, len(codebook))
            prop = propose_pairs(
                sdraws,
                vocab=vocab,
                m=m_screen,
                k_pairs=pairs,
                neighbors=neighbors,
                rng=rng,
                label_code=codebook.code,
                n_codes=len(codebook),
                claims=claims,
                eligible=elig_codes,
                colocated=p0,
                nn=nn_pos,
            )
            pooled, confirm = family_tests(
                sdraws,
                pairings,
                screen_ids,
                vocab=vocab,
                claims=claims,
                eligible=eligible_outputs(sanitizer, len(vocab)),
                alpha=a_pool,
                halves=halves,
            )
            stages["proposals and pooled tests"] = _stage(tp, 0)
            cand = prop.pairs
            if prop.events is not None:
                for (x_id, y_id), ev in zip(cand, prop.events, strict=True):
                    if ev[0] >= 0:
                        screen_events[(int(x_id), int(y_id))] = (int(ev[0]), int(ev[1]))
            if len(confirm):
                seen = {tuple(sorted(map(int, pr))) for pr in cand}
                extra = [pr for pr in confirm if tuple(sorted(map(int, pr))) not in seen]
                extra = np.unique(np.asarray(extra, dtype=np.int64).reshape(-1, 2), axis=0)[
                    : 4 * POOLED_CONFIRM
                ]
                if len(extra):
                    cand = np.concatenate([cand, extra])
            n_candidates = prop.candidates
            word_scores = prop.word_scores
            screen_info = {
                "words_screened": len(screen_ids),
                "draws_per_word": int(m_screen),
                "budget": int(screen_budget),
                "budget_source": f"fitted to {screen_minutes:g} min" if fitted else "given",
                "draws": int(len(screen_ids) * m_screen),
                "candidates_scored": int(prop.candidates),
                "proposed": len(prop.pairs),
                "confirmed_from_pooled": int(len(cand) - len(prop.pairs)),
                "failed_words": int(sum(wd.error is not None for wd in sdraws)),
                "kth_score": float(prop.scores[-1]) if len(prop.scores) else -math.inf,
                "residual_median": prop.residual_median,
                "pairings": [{"name": pr.name, "pairs": pr.pairs} for pr in pairings],
                "top_words": _top_words(words_arr, screen_ids, word_scores, 20),
            }
            if declared:
                pos_of = np.full(len(vocab), -1, dtype=np.int64)
                pos_of[screen_ids] = np.arange(len(screen_ids))
                look = np.unique(np.concatenate([cand.ravel(), _spread(screen_ids, seed)]))
                for wid in look:
                    sm = sdraws[pos_of[int(wid)]].summary
                    if sm is None:
                        continue
                    codes = np.asarray(
                        [int(c) if c >= 0 else codebook.code(sm.labels[-1 - int(c)]) for c in sm.codes],
                        dtype=np.int64,
                    )
                    decl_obs[int(wid)] = (
                        np.append(codes, int(wid)),
                        np.append(sm.counts, sm.self_count),
                        int(sm.residual),
                    )
                m_decl = m_screen
            del sdraws
            total = done[0] + len(np.unique(cand)) * samples if len(cand) else done[0]
        elif use_pilot:
            ts = time.perf_counter()
            pw = np.unique(cand)
            pc = _Counts(
                draw(pw, DrawPlan("pilot", (pilot // 2, pilot - pilot // 2))),
                words_arr,
                codebook,
                pilot // 2,
                pilot - pilot // 2,
            )
            alpha_p = (1.0 - confidence) / (2 * len(cand))
            d_c = pair_distances(vocab.vectors, cand[:, 0], cand[:, 1])
            b_c = claims(cand[:, 0], cand[:, 1], d_c)
            score = np.empty(len(cand))
            for k, (i, j) in enumerate(cand):
                try:
                    est, lb, *_ = _test_pair(pc, int(i), int(j), alpha_p, elig_fn)
                except _SampleFailed:
                    score[k] = -np.inf
                    continue
                bound = float(b_c[k])
                # rank by excess over the claim; break ties by the point estimate's excess
                score[k] = (lb - bound) + 1e-6 * np.tanh(est - bound if math.isfinite(est) else 50.0)
            failures = dict(pc.failures)
            del pc
            order = np.argsort(-score, kind="stable")[:pairs]
            cand = cand[np.sort(order)]
            stages["pilot"] = _stage(ts, len(pw) * pilot)
            total = done[0] + len(np.unique(cand)) * samples
        if declared and strategy != "screen" and len(cand):
            # no screen: the declaration is tested on draws of its own, before stage 2
            td = time.perf_counter()
            m_decl = max(1_000, samples // 10)
            dw = np.unique(cand)
            total += len(dw) * m_decl
            for wd in draw(dw, DrawPlan("declaration", (m_decl,))):
                if wd.error is not None:
                    continue
                c = _pad(wd.counts[0], len(codebook))
                for label, v in sorted(wd.extras[0].items()):
                    code = codebook.code(label)
                    c = _pad(c, code + 1)
                    c[code] += v
                nz = np.flatnonzero(c)
                decl_obs[int(wd.wid)] = (nz, c[nz], 0)
            stages["declaration"] = _stage(td, len(dw) * m_decl)
        if declared:
            n_family = len(screen_ids) if screen_ids is not None else max(1, len(decl_obs))
            declaration = check_declaration(
                sanitizer, words_arr, codebook, decl_obs, m=m_decl, alpha=a_decl, screened=n_family
            )
        tests_per_pair = [2 + (1 if (int(i), int(j)) in screen_events else 0) for i, j in cand]
        n_tests = max(1, int(sum(tests_per_pair)))
        use_rows = declared and declaration is not None and declaration.status == "agrees"
        if use_rows:
            n_tests = max(1, 2 * len(cand))
        alpha = a_conf / n_tests
        tc = time.perf_counter()
        n_sel = samples // 2
        cw = np.unique(cand) if len(cand) else np.zeros(0, dtype=np.int64)
        counter = _Counts(
            draw(cw, DrawPlan("confirm", (n_sel, samples - n_sel))),
            words_arr,
            codebook,
            n_sel,
            samples - n_sel,
        )
        stages["confirm"] = _stage(tc, len(cw) * samples)
        dist = pair_distances(vocab.vectors, cand[:, 0], cand[:, 1])
        bounds = claims(cand[:, 0], cand[:, 1], dist) if len(cand) else np.zeros(0)
        rows = exact_rows(sanitizer, words_arr, cand, codebook) if use_rows else None
        exact = _exact_losses(rows, cand, eligible_outputs(sanitizer, len(codebook)))
        n_bound = samples if rows is not None else samples - n_sel  # draws that bound an event
        results: list[PairResult] = []
        for k, (i, j) in enumerate(cand):
            x, xp = str(words_arr[i]), str(words_arr[j])
            bound = float(bounds[k])
            try:
                est, lb, size, a, b, n_used, direction, source = _test_pair(
                    counter, int(i), int(j), alpha, elig_fn, rows, screen_events.get((int(i), int(j)))
                )
            except _SampleFailed as exc:
                results.append(
                    PairResult(
                        x, xp, float(dist[k]), bound, math.nan, math.nan, False, "", 0, 0, 0, error=str(exc)
                    )
                )
                continue
            lb = max(0.0, lb)
            est = max(0.0, est)
            ex = None if math.isnan(exact[k]) else float(exact[k])
            det = detectable_excess(n_used, alpha, bound, a / n_used if n_used else 0.0)
            results.append(
                PairResult(
                    x=x,
                    x_prime=xp,
                    distance=float(dist[k]),
                    claimed_bound=bound,
                    empirical_epsilon=est,
                    lower_bound=lb,
                    violates=bool(lb > bound * (1 + _TOL) + _TOL),
                    direction=direction,
                    event_size=size,
                    count_x=a,
                    count_x_prime=b,
                    exact_epsilon=ex,
                    exact_violates=None if ex is None else bool(ex > bound * (1 + 1e-7) + 1e-9),
                    detectable_violation=det.to_dict(),
                    event_source=source,
                )
            )
        for word, msg in counter.failures.items():
            failures.setdefault(word, msg)
        tw = time.perf_counter()
        detectable = _run_detectable(results, n_bound, alpha)
        power = pipeline_statements(
            strategy=strategy,
            guarantee=str(sanitizer.guarantee),
            screen=screen_info,
            pooled=pooled,
            claims_tested=[r.claimed_bound for r in results if r.error is None],
            samples=samples,
            alpha_pair=alpha,
            candidate_claims=_candidate_claims(sanitizer, vocab, screen_ids, claims, nn_pos)
            if screen_info is not None
            else None,
        )
        if not any(r.error is None for r in results) and not any(t.terms for t in pooled):
            power = {
                "power": DEFAULT_POWER,
                "statements": [],
                "not_covered": ["everything: no pair and no pooled test could be tested"],
                "text": "nothing was tested, so nothing can be stated",
            }
        stages["power statements"] = _stage(tw, 0)
        if progress is not None:
            progress(total, total)
        elapsed = time.perf_counter() - t0
        run["stages"] = stages
        run["elapsed_seconds"] = elapsed
        return TextAuditResult.build(
            sanitizer=sanitizer,
            vocab=vocab,
            pairs=results,
            samples=samples,
            pilot_samples=pilot if use_pilot else 0,
            candidates=n_candidates,
            strategy=strategy if words is None else f"words ({strategy})",
            seed=seed,
            confidence=confidence,
            alpha=alpha,
            # a planned event (exact sanitizers) is bounded on all T draws, a selected one on T/2
            max_detectable=max_detectable_loss(n_bound, alpha),
            samples_drawn=done[0],
            failures=failures,
            elapsed=elapsed,
            detectable=detectable,
            screen=screen_info,
            execution=run,
            word_scores=word_scores,
            screened_ids=screen_ids,
            screened_words=None if screen_ids is None else words_arr[screen_ids],
            pooled=[t.to_dict() | {"text": t.text()} for t in pooled],
            declaration=None if declaration is None else declaration.to_dict(),
            rng_contract=rng_contract,
            power=power,
            alpha_accounting={
                "confidence": confidence,
                "alpha": alpha_total,
                "declaration": a_decl,
                "pooled": a_pool,
                "pooled_per_test": pooled[0].alpha if pooled else 0.0,
                "confirmation": a_conf,
                "confirmation_tests": n_tests,
                "per_confirmation_test": alpha,
            },
        )
    finally:
        stop_engine()


def _rng_contract(
    sanitizer: Any, words: np.ndarray, ids: np.ndarray, seed: int, workers: int, engine: str
) -> tuple[Any, dict[str, Any]]:
    """Check that the sanitizer draws from the rng it is handed (:mod:`dpcore.textaudit.contract`)."""
    from dpcore.textaudit.contract import enforce_rng_contract

    probe_rng = np.random.default_rng(cell_seed_sequence(seed, "text-audit", "rng-contract"))
    probe = probe_rng.choice(ids, size=min(8, len(ids)), replace=False) if len(ids) else ids
    wrapped, contract = enforce_rng_contract(
        sanitizer, words, np.asarray(probe, dtype=np.int64), seed=seed, workers=workers, engine=engine
    )
    return wrapped, contract.to_dict()


def _split_fork_checks(contract: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The rng record without its forked-worker checks (they run only with several local workers,
    so they go to ``execution``: the result itself stays the same for any engine and workers)."""
    out = dict(contract)
    checks = dict(out.get("checks", {}))
    forked = {k: checks.pop(k) for k in list(checks) if k.startswith("forked")}
    out["checks"] = checks
    if isinstance(out.get("text"), str):
        out["text"] = out["text"].replace(" and in forked worker processes", "")
    return out, forked


def _spread(ids: np.ndarray, seed: int, k: int = 64) -> np.ndarray:
    """A seeded sample of ``k`` screened words (the declaration test looks at them too)."""
    rng = np.random.default_rng(cell_seed_sequence(seed, "text-audit", "declaration-words"))
    return rng.choice(ids, size=min(k, len(ids)), replace=False).astype(np.int64)


def _candidate_claims(
    sanitizer: Any,
    vocab: Vocabulary,
    ids: np.ndarray | None,
    claims: Callable[..., np.ndarray],
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


def _start_engine(engine: str, workers: int, address: str | None) -> Callable[[], None]:
    """Start (or join) Ray once for all stages of a run; nothing to start for the local engine."""
    if engine != "ray":
        return lambda: None
    from dpcore.corpus.engines import start_ray

    return start_ray(address, workers)


def _word_ids(vocab: Vocabulary, words: Sequence[str], *, limit: int, what: str) -> np.ndarray:
    wl = list(dict.fromkeys(str(w).strip() for w in words if str(w).strip()))
    if not wl:
        raise DPCoreError(f"give at least one word to {what}")
    if len(wl) > limit:
        raise DPCoreError(f"at most {limit:,} words to {what} at once, got {len(wl):,}")
    ids = vocab.ids(wl)
    missing = [w for w, i in zip(wl, ids, strict=True) if i < 0]
    if missing:
        shown = ", ".join(repr(m) for m in missing[:5])
        raise DPCoreError(f"{len(missing)} word(s) are not in the {len(vocab):,}-word vocabulary: {shown}")
    return ids


def _stage(t_start: float, draws: int) -> dict[str, float]:
    dt = time.perf_counter() - t_start
    return {"seconds": dt, "draws": int(draws), "draws_per_second": draws / dt if dt > 0 else math.inf}


def _top_words(words: np.ndarray, ids: np.ndarray, scores: np.ndarray, k: int) -> list[dict[str, Any]]:
    order = np.argsort(-scores, kind="stable")[:k]
    return [
        {"word": str(words[ids[o]]), "rank": int(ids[o]), "score": float(scores[o])}
        for o in order
        if np.isfinite(scores[o])
    ]


def _run_detectable(results: list[PairResult], n: int, alpha: float) -> dict[str, Any]:
    """One statement for the tested pairs' own events, at the median event probability of the tests.

    This is the per-test statement (the events the tests used); the whole pipeline's statement
    is :func:`dpcore.textaudit.power.pipeline_statements`.
    """
    tested = [r for r in results if r.error is None and math.isfinite(r.claimed_bound)]
    probs = [r.count_x / n for r in tested if r.count_x > 0]
    out: dict[str, Any] = {"power": DEFAULT_POWER, "samples": int(n)}
    if not tested or not probs:
        return out | {"event_probability": None, "excess": math.inf, "text": "no tested event"}
    p = float(np.median(probs))
    # Δ grows with the claim at a fixed p: the smallest, median and largest claims stand for all
    claims = np.sort([r.claimed_bound for r in tested])
    levels = {float(claims[0]), float(claims[len(claims) // 2]), float(claims[-1])}
    excess = max(detectable_excess(n, alpha, c, p).excess for c in levels)
    out |= {"event_probability": p, "excess": excess}
    if math.isfinite(excess):
        out["text"] = (
            f"on the tests' own events, every tested pair would have been flagged with probability ≥ "
            f"{DEFAULT_POWER:g} had its loss exceeded its claim by {excess:.3g} on such an event of "
            f"probability ≥ {p:.3g} under M(x)"
        )
    else:
        out["text"] = (
            f"at events of probability {p:.3g} (the tests' median) some tested pair could not flag any "
            f"violation with {n:,} draws per word"
        )
    return out
