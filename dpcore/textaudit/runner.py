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
from dpcore.textaudit.engine import ENGINES, DrawPlan, WordDraws, draw_words
from dpcore.textaudit.estimator import (
    MAX_EVENT_CANDIDATES,
    best_prefix,
    best_prefix_event,
    estimate_direction,
)
from dpcore.textaudit.interface import check_sanitizer
from dpcore.textaudit.pairs import STRATEGIES, candidate_pairs
from dpcore.textaudit.power import DEFAULT_POWER, detectable_excess, screen_detectable
from dpcore.textaudit.result import PairResult, TextAuditResult
from dpcore.textaudit.sampling import OutputCodebook
from dpcore.textaudit.screen import (
    DEFAULT_SCREEN_BUDGET,
    SCREEN_TOP,
    claims_function,
    draws_per_word,
    propose_pairs,
)
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


def max_detectable_loss(samples_per_half: int, alpha: float) -> float:
    """The largest lower bound this test can ever give: all of one side in S, none of the other."""

    n = samples_per_half
    return float(np.log(cp_lower(n, n, alpha / 2)) - np.log(cp_upper(0, n, alpha / 2)))


def _eligible(sanitizer: Any, size: int) -> np.ndarray | None:
    fn = getattr(sanitizer, "protected_ids", None)
    mask = fn() if callable(fn) else None
    if mask is None:
        return None
    out = np.ones(size, dtype=bool)
    out[: len(mask)] = mask  # outputs outside the vocabulary are not protected by V_P either
    out[len(mask) :] = False
    return out


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
) -> tuple[float, float, int, int, int, int, str]:
    """(estimate, lower bound, event size, a, b, samples, direction) of the stronger direction.

    Without declared rows the event is chosen on the selection half and bounded on the
    evaluation half; with them (exact sanitizers) it is planned from the declaration and bounded
    on all draws (:func:`_planned_event`).
    """
    si, ei = counter.get(i)
    sj, ej = counter.get(j)
    size = len(counter.cb)
    si, ei, sj, ej = (_pad(a, size) for a in (si, ei, sj, ej))
    elig = eligible_fn(size)
    planned = rows is not None and i in rows and j in rows
    best: tuple[float, float, int, int, int, int, str] | None = None
    for a_, b_, sel_a, ev_a, sel_b, ev_b, label in (
        (i, j, si, ei, sj, ej, "x>x'"),
        (j, i, sj, ej, si, ei, "x'>x"),
    ):
        if planned:
            assert rows is not None
            n_all = counter.n_sel + counter.n_eval
            la, lb = _pad_log(rows[a_], size), _pad_log(rows[b_], size)
            event = _planned_event(la, lb, n_all, alpha, elig)
            d = estimate_direction(event, sel_a + ev_a, sel_b + ev_b, n_all, alpha)
        else:
            event = best_prefix_event(sel_a, sel_b, counter.n_sel, alpha, elig)
            d = estimate_direction(event, ev_a, ev_b, counter.n_eval, alpha)
        cand = (d.estimate, d.lower_bound, d.event_size, d.count_x, d.count_x_prime, d.samples, label)
        if best is None or (cand[1], cand[0]) > (best[1], best[0]):
            best = cand
    assert best is not None
    return best


def _exact_rows(
    sanitizer: Any, words: np.ndarray, ids: np.ndarray, codebook: OutputCodebook
) -> dict[int, np.ndarray] | None:
    """Exact ln Pr[M(x) = ·] over the codebook for each id (None when the sanitizer has none)."""
    fn = getattr(sanitizer, "log_prob_row", None)
    if not callable(fn) or not getattr(sanitizer, "exact", True):
        return None
    rows: dict[int, np.ndarray] = {}
    for wid in np.unique(ids):
        outs, lp = fn(str(words[wid]))
        lp = np.asarray(lp, dtype=np.float64)
        codes = codebook.codes(outs, len(lp))
        row = np.full(len(codebook), -np.inf)
        row[codes] = np.where(np.isnan(lp), -np.inf, lp)
        rows[int(wid)] = row
    return rows


def _pad_log(row: np.ndarray, n: int) -> np.ndarray:
    """A log-probability row extended to ``n`` outputs (outputs it never saw have probability 0)."""
    return row if row.size >= n else np.concatenate([row, np.full(n - row.size, -np.inf)])


def _exact_losses(
    rows: dict[int, np.ndarray] | None, pairs: np.ndarray, elig: np.ndarray | None
) -> np.ndarray:
    """max_y |ln p_x(y) − ln p_x′(y)| per pair over protected outputs (nan when not exact)."""
    if rows is None:
        return np.full(len(pairs), np.nan)
    size = max(r.size for r in rows.values())
    out = np.empty(len(pairs))
    for k, (i, j) in enumerate(pairs):
        a, b = _pad_log(rows[int(i)], size), _pad_log(rows[int(j)], size)
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
    samples: int = 100_000,
    pilot_samples: int | None = None,
    screen_budget: int = DEFAULT_SCREEN_BUDGET,
    screen_words: Sequence[str] | None = None,
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
    pilot_samples:
        Draws per candidate word in the adaptive pilot (default max(1,000, T/10)).
    screen_budget:
        Total draws of the screen's stage 1; each screened word gets budget // words of them
        (at least 200, at most 10⁶).
    screen_words:
        Screen only these words (default: the whole vocabulary).
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
    samples = check_int(samples, name="samples", min_value=100, max_value=MAX_SAMPLES)
    pilot = max(1_000, samples // 10) if pilot_samples is None else pilot_samples
    pilot = check_int(pilot, name="pilot samples", min_value=100, max_value=MAX_SAMPLES)
    screen_budget = check_int(screen_budget, name="screen budget", min_value=1, max_value=max_total_samples)
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
        return _eligible(sanitizer, size)

    stop_engine = _start_engine(engine, n_workers, address)
    try:
        claims = claims_function(sanitizer, vocab)
        stages: dict[str, dict[str, float]] = {}
        failures: dict[str, str] = {}
        screen_info: dict[str, Any] | None = None
        word_scores: np.ndarray | None = None
        if strategy == "screen":
            assert screen_ids is not None
            ts = time.perf_counter()
            sdraws = draw(screen_ids, DrawPlan("screen", (m_screen,), top=SCREEN_TOP))
            for wd in sdraws:
                if wd.summary is not None:
                    for label in wd.summary.labels:
                        codebook.code(label)
                else:
                    failures[str(words_arr[wd.wid])] = str(wd.error)
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
                eligible=_eligible(sanitizer, len(codebook)),
            )
            cand = prop.pairs
            n_candidates = prop.candidates
            word_scores = prop.word_scores
            stages["screen"] = _stage(ts, len(screen_ids) * m_screen)
            screen_info = {
                "words_screened": len(screen_ids),
                "draws_per_word": int(m_screen),
                "budget": int(screen_budget),
                "draws": int(len(screen_ids) * m_screen),
                "candidates_scored": int(prop.candidates),
                "proposed": len(cand),
                "failed_words": int(sum(wd.error is not None for wd in sdraws)),
                "kth_score": float(prop.scores[-1]) if len(prop.scores) else -math.inf,
                "residual_median": prop.residual_median,
                "top_words": _top_words(words_arr, screen_ids, word_scores, 20),
            }
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
        n_tests = max(1, len(cand))
        alpha = (1.0 - confidence) / (2 * n_tests)
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
        rows = _exact_rows(sanitizer, words_arr, cand, codebook)
        exact = _exact_losses(rows, cand, _eligible(sanitizer, len(codebook)))
        n_bound = samples if rows is not None else samples - n_sel  # draws that bound an event
        results: list[PairResult] = []
        for k, (i, j) in enumerate(cand):
            x, xp = str(words_arr[i]), str(words_arr[j])
            bound = float(bounds[k])
            try:
                est, lb, size, a, b, _n, direction = _test_pair(counter, int(i), int(j), alpha, elig_fn, rows)
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
            det = detectable_excess(n_bound, alpha, bound, a / n_bound if n_bound else 0.0)
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
                )
            )
        for word, msg in counter.failures.items():
            failures.setdefault(word, msg)
        detectable = _run_detectable(results, n_bound, alpha)
        if screen_info is not None:
            claims_prop = [
                p.claimed_bound for p in results if p.error is None and math.isfinite(p.claimed_bound)
            ]
            c_ref = float(np.median(claims_prop)) if claims_prop else float(sanitizer.epsilon)
            p_s = screen_detectable(m_screen, screen_info["kth_score"], c_ref, screen_info["residual_median"])
            screen_info["detectable_output_probability"] = p_s
            screen_info["detectable_claim"] = c_ref
            detectable["screen_output_probability"] = p_s
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
        )
    finally:
        stop_engine()


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
    """One statement for every tested pair, at the median event probability of the tests."""
    tested = [r for r in results if r.error is None and math.isfinite(r.claimed_bound)]
    probs = [r.count_x / n for r in tested if r.count_x > 0]
    out: dict[str, Any] = {"power": DEFAULT_POWER, "samples": int(n)}
    if not tested or not probs:
        return out | {"event_probability": None, "excess": math.inf, "text": "no tested event"}
    p = float(np.median(probs))
    excess = max(detectable_excess(n, alpha, r.claimed_bound, p).excess for r in tested)
    out |= {"event_probability": p, "excess": excess}
    if math.isfinite(excess):
        out["text"] = (
            f"every tested pair would have been flagged with probability ≥ {DEFAULT_POWER:g} had its loss "
            f"exceeded its claim by {excess:.3g} on an event of probability ≥ {p:.3g} under M(x)"
        )
    else:
        out["text"] = (
            f"at events of probability {p:.3g} (the tests' median) some tested pair could not flag any "
            f"violation with {n:,} draws per word"
        )
    return out
