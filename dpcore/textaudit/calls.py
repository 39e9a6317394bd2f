"""How the audited sanitizer is called: independence within a call, and the call's size.

The audit's statistics count a word's draws as independent outputs of one distribution, and the
audit draws them in large calls, ``sample([x] * m, rng)``. Users call a sanitizer with
sentences. Two kinds of sanitizer break what the counts assume, and neither is rare:

- **draws within one call depend on each other**: every occurrence of a word in one call
  replaced the same way (consistent replacement within a document), an output cache refreshed at
  random. Each single output may keep its ε; the m outputs of one call are not m independent
  outputs, so Clopper–Pearson bounds over them are far too narrow, and a sound sanitizer would be
  accused;
- **the output distribution depends on the call** (its size, or the other words in it): a flaw
  only on sentence-sized calls is never seen in large calls, and the reverse.

:func:`check_calls` draws each probe word three ways, at the sizes the audit will use:

1. three large calls of ``L`` copies of the word (L: the audit's largest call);
2. ``K`` single-word calls, ``sample([x], rng)`` (or ``sample_ids(x, 1, rng)``);
3. ``K`` sentence-sized mixed calls: the word at a random position among
   :data:`SENTENCE_WORDS` − 1 other words of the vocabulary, drawn uniformly.

and tests, per probe word:

- **repeats**: disjoint adjacent pairs within one large call match as often as pairs drawn from
  two different large calls (both rates are Σ_y p(y)² when the draws are independent; an exact
  conditional binomial test, two-sided);
- **large vs single, large vs sentence**: the outputs of the large calls and of the small ones
  have one distribution (a χ² test of homogeneity; outputs expected fewer than
  :data:`MIN_EXPECTED` times among the small calls are pooled into one cell).

Every test is at :data:`CHECK_ALPHA` (Bonferroni over the tests made). The check decides *how*
the audit draws, never a verdict: a sanitizer that fails it is audited through
:class:`SentenceCalls`, each output from its own sentence-sized call (its draws are then
independent and drawn the way users call), or refused with one line naming the dependence when
that would take too long (:mod:`dpcore.textaudit.runner`). It is never judged as if its draws
were independent.

State carried from one call to the next is outside this check (every call here and in the audit
is made in one order on one object); the result's ``not_covered`` says so.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
from scipy import stats as sps

from dpcore.pairtest.budget import per_test
from dpcore.rng import cell_seed_sequence
from dpcore.text.vocab import index_positions
from dpcore.textaudit.contract import fork_available, in_forks
from dpcore.textaudit.sampling import BLACKBOX_CHUNK, FAST_CHUNK, output_keys
from dpcore.textaudit.wrapping import SanitizerWrapper, stdout_to_stderr

if TYPE_CHECKING:
    from dpcore.textaudit.plan import AuditPlan
    from dpcore.textaudit.timing import Speed

__all__ = [
    "CALL_STATUSES",
    "CHECK_ALPHA",
    "SENTENCE_WORDS",
    "CallCheck",
    "SentenceCalls",
    "check_calls",
    "run",
]

#: Words per sentence-sized call (the audited word and this many − 1 others).
SENTENCE_WORDS = 16
#: Single-word calls and sentence calls per probe word (fewer for a slow sanitizer, at least
#: :data:`MIN_CHECK_CALLS`).
CHECK_CALLS = 100
#: Fewest single-word and sentence calls per probe word.
MIN_CHECK_CALLS = 30
#: Probe words of the check.
CHECK_WORDS = 2
#: Seconds the small calls of a fitted plan's check aim at (the probed speed sets K for a slow
#: sanitizer; a named plan always makes :data:`CHECK_CALLS`, so that its result is reproduced).
CHECK_SECONDS = 5.0
#: Level of the whole check (Bonferroni over its tests). It decides how the audit draws, never a
#: verdict, so it spends none of the verdict's α; it is small so that an independent sanitizer
#: is almost never drawn the slow way.
CHECK_ALPHA = 1e-3
#: Outputs expected fewer times than this among the small calls share one χ² cell.
MIN_EXPECTED = 5.0
CALL_STATUSES = (
    "independent",
    "by-construction",
    "within-call-dependent",
    "call-size-dependent",
    "unchecked",
)


# --- drawing ---------------------------------------------------------------------------------


def _labels(out: Any, words: np.ndarray, n: int, fast: bool) -> np.ndarray | None:
    """Outputs as string labels (None: not one output per input)."""
    try:
        arr = np.asarray(out, dtype=np.int64 if fast else object)
    except Exception:
        return None
    if arr.ndim != 1 or arr.shape[0] != n:
        return None
    if fast:
        return np.asarray(words, dtype=object)[arr]
    return np.asarray([o if isinstance(o, str) else repr(o) for o in arr], dtype=object)


def _call(sanitizer: Any, words: np.ndarray, wid: int, n: int, rng: np.random.Generator) -> np.ndarray | None:
    """One call of ``n`` copies of word ``wid``, as the audit makes it (None: it failed)."""
    fast = callable(getattr(sanitizer, "sample_ids", None))
    try:
        with stdout_to_stderr():
            out = sanitizer.sample_ids(wid, n, rng) if fast else sanitizer.sample([str(words[wid])] * n, rng)
    except (Exception, SystemExit):
        return None
    return _labels(out, words, n, fast)


def sentences(
    pool: np.ndarray, word_ids: np.ndarray, size: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """Sentence-sized calls, one per entry of ``word_ids``: shape (n, size) ids and each word's position.

    The word sits at a uniform position among ``size`` − 1 other words drawn uniformly from
    ``pool`` (sorted, distinct vocabulary ids), never the word itself (ids < 0, outside the
    vocabulary, exclude nothing).
    """
    pool = np.asarray(pool, dtype=np.int64)
    ids = np.asarray(word_ids, dtype=np.int64)
    n = ids.size
    at = np.searchsorted(pool, ids)
    inside = (ids >= 0) & (at < pool.size) & (pool[np.minimum(at, pool.size - 1)] == ids)
    hi = np.where(inside, pool.size - 1, pool.size)
    j = np.floor(rng.random((n, size - 1)) * hi[:, None]).astype(np.int64)
    j += (j >= at[:, None]) & inside[:, None]  # skip the word itself
    fill = pool[j]
    pos = rng.integers(0, size, size=n)
    cols = np.arange(size)[None, :]
    src = np.minimum(cols - (cols > pos[:, None]), size - 2)  # column c: filler c, or c − 1 after the word
    out = np.take_along_axis(fill, src, axis=1)
    out[np.arange(n), pos] = ids
    return out, pos


#: Words the sentences' other words are drawn from: this many of V (a seeded choice), each kept
#: only if the sanitizer answers a single-word call of it (one that refuses some words of V must
#: not make every sentence call fail).
FILLER_WORDS = 64


def filler_pool(sanitizer: Any, words: np.ndarray, seed: int) -> np.ndarray:
    """The sorted vocabulary ids sentences take their other words from (see :data:`FILLER_WORDS`)."""
    rng = np.random.default_rng(cell_seed_sequence(seed, "text-audit", "call-check", "fillers"))
    n = len(words)
    cand = np.sort(rng.choice(n, size=min(FILLER_WORDS, n), replace=False))
    ok = [int(w) for w in cand if _call(sanitizer, words, int(w), 1, rng) is not None]
    return np.asarray(ok, dtype=np.int64)


#: A probe word's sentence calls stop after this many fail in a row (a worker process that dies,
#: a sanitizer that refuses the word in company): the word is then left out of the check.
MAX_FAILED_CALLS = 3


def _sentence_outputs(
    sanitizer: Any, words: np.ndarray, wid: int, k: int, size: int, rng: np.random.Generator, pool: np.ndarray
) -> np.ndarray | None:
    """``k`` outputs of word ``wid``, each from its own sentence-sized call (None: too many failed)."""
    ids, pos = sentences(pool, np.full(k, wid, dtype=np.int64), size, rng)
    text = np.asarray(words, dtype=object)[ids]
    got: list[str] = []
    failed = 0
    with stdout_to_stderr():
        for i in range(k):  # one call per draw: what is checked is the call itself
            try:
                out = _labels(sanitizer.sample(list(text[i]), rng), words, size, False)
            except (Exception, SystemExit):
                out = None
            if out is None:
                failed += 1
                if failed >= MAX_FAILED_CALLS:
                    return None
                continue
            failed = 0
            got.append(str(out[pos[i]]))
    return np.asarray(got, dtype=object) if got else None


def _single_outputs(
    sanitizer: Any, words: np.ndarray, wid: int, k: int, rng: np.random.Generator
) -> np.ndarray | None:
    """``k`` outputs of word ``wid`` from ``k`` single-word calls (None: one failed)."""
    got = []
    for _ in range(k):
        out = _call(sanitizer, words, wid, 1, rng)
        if out is None:
            return None
        got.append(out)
    return np.concatenate(got)


def _large_calls(sanitizer: Any, words: np.ndarray, wid: int, n: int, rngs: list) -> list[np.ndarray] | None:
    """Calls of ``n`` copies of word ``wid``, one per generator (None: one failed; no more are made)."""
    out = []
    for rng in rngs:
        got = _call(sanitizer, words, wid, n, rng)
        if got is None:
            return None
        out.append(got)
    return out


# --- the tests -------------------------------------------------------------------------------


def repeats_test(within: np.ndarray, across_a: np.ndarray, across_b: np.ndarray) -> dict[str, Any]:
    """Do disjoint adjacent pairs of one call match more (or less) often than pairs across calls?

    ``within``: one call's outputs (codes or labels); pairs (0, 1), (2, 3), … . ``across_a``,
    ``across_b``: two other calls' outputs, paired position by position. Independent draws of one distribution
    match at Σ p² either way: X ~ Bin(n₁, q), Y ~ Bin(n₂, q), so X given X + Y is
    Bin(X + Y, n₁ / (n₁ + n₂)) (exact); the p-value is two-sided.
    """
    h = within.size // 2
    x = int(np.sum(within[0 : 2 * h : 2] == within[1 : 2 * h : 2]))
    m = min(across_a.size, across_b.size)
    y = int(np.sum(across_a[:m] == across_b[:m]))
    t = x + y
    if h == 0 or m == 0 or t == 0:
        p = 1.0
    else:
        share = h / (h + m)
        lo, hi = sps.binom.cdf(x, t, share), sps.binom.sf(x - 1, t, share)
        p = float(min(1.0, 2.0 * min(lo, hi)))
    return {
        "test": "repeats",
        "within_pairs": h,
        "within_matches": x,
        "across_pairs": m,
        "across_matches": y,
        "p_value": p,
    }


def _cells(expected: np.ndarray) -> np.ndarray:
    """χ² cells over outputs listed in decreasing order of their total count: consecutive
    outputs share a cell until it is expected :data:`MIN_EXPECTED` times in the smaller sample
    (a short last cell joins the one before)."""
    cell = np.empty(expected.size, dtype=np.int64)
    k, acc = 0, 0.0
    for i, e in enumerate(expected):  # distinct outputs seen (not draws), once per test
        cell[i] = k
        acc += e
        if acc >= MIN_EXPECTED:
            k, acc = k + 1, 0.0
    if 0.0 < acc < MIN_EXPECTED and k > 0:
        cell[cell == k] = k - 1
    return cell


def homogeneity_test(large: np.ndarray, small: np.ndarray, what: str) -> dict[str, Any]:
    """χ² test that ``large`` and ``small`` (integer output codes ≥ 0) come from one distribution.

    Cells: the outputs seen, in decreasing order of their count in both samples (so an output
    the small calls favour shares a cell with a few frequent outputs), grouped so that each cell
    is expected at least :data:`MIN_EXPECTED` times in the smaller sample.
    """
    size = int(max(large.max(initial=-1), small.max(initial=-1))) + 1
    return homogeneity_counts(np.bincount(large, minlength=size), np.bincount(small, minlength=size), what)


def homogeneity_counts(large: np.ndarray, small: np.ndarray, what: str) -> dict[str, Any]:
    """:func:`homogeneity_test` on two samples given as counts over the same outputs."""
    c1 = np.asarray(large, dtype=np.float64)
    c2 = np.asarray(small, dtype=np.float64)
    n1, n2 = float(c1.sum()), float(c2.sum())
    seen = (c1 + c2) > 0
    c1, c2 = c1[seen], c2[seen]
    # cells from the column totals only (ties in a fixed random order): given its totals, a
    # column's split between the samples is hypergeometric under one distribution, so cells
    # chosen this way keep the test's level (ordering by one sample's counts would not)
    total = c1 + c2
    order = np.lexsort((np.random.default_rng(0).random(total.size), -total))
    cell = _cells(total[order] * min(n1, n2) / max(n1 + n2, 1))
    t1 = np.bincount(cell, weights=c1[order])
    t2 = np.bincount(cell, weights=c2[order])
    out: dict[str, Any] = {
        "test": what,
        "large_draws": int(n1),
        "small_draws": int(n2),
        "cells": int(t1.size),
    }
    if t1.size < 2 or n1 == 0 or n2 == 0:
        return out | {"statistic": 0.0, "p_value": 1.0}
    col = t1 + t2
    e1, e2 = col * n1 / (n1 + n2), col * n2 / (n1 + n2)
    stat = float(np.sum((t1 - e1) ** 2 / e1) + np.sum((t2 - e2) ** 2 / e2))
    return out | {"statistic": stat, "p_value": float(sps.chi2.sf(stat, t1.size - 1))}


# --- the check -------------------------------------------------------------------------------


@dataclass(frozen=True)
class CallCheck:
    """What :func:`check_calls` found.

    Attributes
    ----------
    status:
        ``"independent"`` (no test rejected), ``"by-construction"`` (dpcore's own sampler,
        :func:`independent_by_construction`: not checked),
        ``"within-call-dependent"`` (the repeats test
        rejected), ``"call-size-dependent"`` (only a homogeneity test rejected) or
        ``"unchecked"`` (no probe word could be drawn all three ways).
    words:
        The probe words checked.
    sizes:
        Call sizes drawn: ``large`` (L), ``single`` (1) and ``sentence``.
    calls:
        Single-word and sentence calls per probe word, K.
    alpha:
        The level of the whole check; each test is at ``alpha`` / (tests made).
    tests:
        Per probe word and test: counts, statistic, p-value and ``rejected``.
    text:
        One plain sentence.
    fillers:
        Vocabulary ids the sentences' other words were drawn from (:func:`filler_pool`).
    """

    status: str
    words: tuple[str, ...]
    sizes: dict[str, int]
    calls: int
    alpha: float
    tests: list[dict[str, Any]] = field(default_factory=list)
    text: str = ""
    fillers: tuple[int, ...] = ()

    @property
    def dependent(self) -> bool:
        """The draws of one call, or of calls of different sizes, cannot be pooled as independent."""
        return self.status in ("within-call-dependent", "call-size-dependent")

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["words"] = list(self.words)
        return out


def _describe(
    status: str, rejected: list[dict[str, Any]], sizes: dict[str, int], k: int, n_words: int
) -> str:
    drawn = (
        f"{n_words} probe word(s), each in 3 calls of {sizes['large']:,} copies, {k} single-word calls "
        f"and {k} calls of {sizes['sentence']} words"
    )
    if status == "independent":
        return (
            f"draws within one call looked independent and calls of {sizes['large']:,}, 1 and "
            f"{sizes['sentence']} words gave one output distribution ({drawn}; no test rejected)"
        )
    if status == "unchecked":
        return "how the sanitizer is called was not checked: no probe word could be drawn all three ways"
    parts = []
    for test in ("repeats", "large-vs-single", "large-vs-sentence"):
        hits = [t for t in rejected if t["test"] == test]
        if not hits:
            continue
        t = hits[0]
        more = f" (and {len(hits) - 1} more probe word)" if len(hits) > 1 else ""
        if test == "repeats":
            parts.append(
                f"draws within one call of {t['word']!r}{more} depend on each other: adjacent outputs "
                f"matched {t['within_matches']:,}/{t['within_pairs']:,} times, outputs of different calls "
                f"{t['across_matches']:,}/{t['across_pairs']:,} (p = {t['p_value']:.2g})"
            )
        else:
            size = 1 if test == "large-vs-single" else sizes["sentence"]
            parts.append(
                f"the output distribution of {t['word']!r}{more} depends on the call's size: calls of "
                f"{sizes['large']:,} copies and calls of {size} word(s) differ (χ² p = {t['p_value']:.2g})"
            )
    return "; ".join(parts) + f" ({drawn})"


def check_calls(
    sanitizer: Any,
    words: np.ndarray,
    probe_ids: Sequence[int] | np.ndarray,
    *,
    large: int,
    seed: int,
    calls: int = CHECK_CALLS,
    sentence: int = SENTENCE_WORDS,
) -> CallCheck:
    """Check that a word's draws within one call are independent and do not depend on the call.

    Parameters
    ----------
    sanitizer:
        The audited sanitizer (``sample(words, rng)``, optionally ``sample_ids``).
    words:
        The vocabulary's words (id → word); sentence calls draw their other words from it.
    probe_ids:
        Vocabulary ids of the probe words.
    large:
        L, the size of the audit's largest call (at least 2).
    seed:
        The audit's seed; every call's stream is derived from it (stage ``"call-check"``).
    calls:
        K, single-word and sentence calls per probe word (:func:`check_size`).
    sentence:
        Words per sentence-sized call (at least 2).

    Returns
    -------
    CallCheck

    Examples
    --------
    >>> import numpy as np
    >>> from dpcore.textaudit.calls import check_calls
    >>> from dpcore.textaudit.reference import KaryRandomizedResponse
    >>> words = np.asarray([f"w{i}" for i in range(50)], dtype=object)
    >>> krr = KaryRandomizedResponse(epsilon=1.0, words=list(words))
    >>> check_calls(krr, words, [0, 1], large=2000, seed=0).status
    'independent'
    """
    large, k, size = max(2, int(large)), max(1, int(calls)), max(2, int(sentence))
    sizes = {"large": large, "single": 1, "sentence": size}
    pool = filler_pool(sanitizer, words, seed)
    if pool.size < 2:
        text = (
            "how the sanitizer is called was not checked: it answered fewer than 2 of the words "
            "sentences are made of"
        )
        return CallCheck("unchecked", (), sizes, k, CHECK_ALPHA, [], text, tuple(int(i) for i in pool))
    found: list[dict[str, Any]] = []
    checked: list[str] = []
    index = pd.Index(np.asarray(words, dtype=object))
    for wid in (int(w) for w in probe_ids):
        word = str(words[wid])

        def rng(*key: Any, _word: str = word) -> np.random.Generator:
            return np.random.default_rng(cell_seed_sequence(seed, "text-audit", "call-check", _word, *key))

        # a word whose calls fail is left out at its first failure (a dying worker dies once)
        big = _large_calls(sanitizer, words, wid, large, [rng("large", c) for c in range(3)])
        single = None if big is None else _single_outputs(sanitizer, words, wid, k, rng("single"))
        sent = (
            None
            if single is None
            else _sentence_outputs(sanitizer, words, wid, k, size, rng("sentence"), pool)
        )
        if big is None or single is None or sent is None:
            continue
        checked.append(word)
        parts = [*big, single, sent]
        # labels → keys as the audit counts them (a fresh tag per draw: one class per word) →
        # integer codes (hashing, not sorting)
        codes = pd.factorize(output_keys(np.concatenate(parts), index))[0]
        a, b, c, one, sen = np.split(codes, np.cumsum([p.size for p in parts])[:-1])
        pooled = np.concatenate([a, b, c])
        for t in (
            repeats_test(a, b, c),
            homogeneity_test(pooled, one, "large-vs-single"),
            homogeneity_test(pooled, sen, "large-vs-sentence"),
        ):
            found.append({"word": word} | t)
    if not checked:
        text = _describe("unchecked", [], sizes, k, 0)
        return CallCheck("unchecked", (), sizes, k, CHECK_ALPHA, [], text, tuple(int(i) for i in pool))
    level = per_test(CHECK_ALPHA, len(found))
    for t in found:
        t["rejected"] = bool(t["p_value"] < level)
    rejected = [t for t in found if t["rejected"]]
    if any(t["test"] == "repeats" for t in rejected):
        status = "within-call-dependent"
    elif rejected:
        status = "call-size-dependent"
    else:
        status = "independent"
    text = _describe(status, rejected, sizes, k, len(checked))
    return CallCheck(status, tuple(checked), sizes, k, CHECK_ALPHA, found, text, tuple(int(i) for i in pool))


# --- auditing one output per call ------------------------------------------------------------


class SentenceCalls(SanitizerWrapper):
    """A sanitizer drawn one output per call: each input word in its own sentence-sized call.

    ``sample(words, rng)`` makes one call of :data:`SENTENCE_WORDS` words per input word: the
    word at a uniform position among other words of the vocabulary (:func:`sentences`), and
    keeps the output at its position. Draws of one word are then independent whatever the
    sanitizer does within a call (given no state carried between calls), and drawn the way
    users call it. One call per draw is the point, so it is slow: the audit fits or refuses
    the plan for its speed (:mod:`dpcore.textaudit.runner`).

    Parameters
    ----------
    sanitizer:
        The sanitizer to wrap.
    words:
        The vocabulary's words.
    size:
        Words per call.
    fillers:
        Vocabulary ids the other words of each sentence are drawn from (default: all of V; the
        audit passes the call check's :func:`filler_pool`).
    """

    describe_key = "one_output_per_call"

    def __init__(
        self,
        sanitizer: Any,
        words: Sequence[str] | np.ndarray,
        *,
        size: int = SENTENCE_WORDS,
        fillers: Sequence[int] | np.ndarray | None = None,
    ) -> None:
        super().__init__(sanitizer)
        self.__dict__["_words"] = np.asarray(words, dtype=object)
        self.__dict__["_index"] = pd.Index(self.__dict__["_words"])
        pool = np.arange(len(words)) if fillers is None else np.unique(np.asarray(fillers, dtype=np.int64))
        self.__dict__["_fillers"] = pool
        self.__dict__["_size"] = max(2, int(size))

    def described_as(self) -> dict[str, Any]:
        return {"call_words": self.__dict__["_size"]}

    def sample(self, words: Sequence[str], rng: np.random.Generator) -> np.ndarray:
        """One output per input word, each from its own call of :data:`SENTENCE_WORDS` words."""
        vocab, size = self.__dict__["_words"], self.__dict__["_size"]
        arr = np.asarray(list(words), dtype=object)
        ids = index_positions(self.__dict__["_index"], arr)
        rows, pos = sentences(self.__dict__["_fillers"], ids, size, rng)
        text = vocab[np.where(rows >= 0, rows, 0)]
        text[np.arange(arr.size), pos] = arr  # words outside the vocabulary keep their text
        out = np.empty(arr.size, dtype=object)
        inner = self.wrapped
        for i in range(arr.size):  # one call per draw, by design
            got = np.asarray(inner.sample(list(text[i]), rng), dtype=object)
            if got.ndim != 1 or got.shape[0] != size:
                raise ValueError(f"sample() returned {got.shape} outputs for a call of {size} words")
            out[i] = got[pos[i]]
        return out


# --- the audit's stage -----------------------------------------------------------------------


def call_chunk(sanitizer: Any) -> int:
    """The engine's largest call for this sanitizer (draws per ``sample`` or ``sample_ids`` call)."""
    return FAST_CHUNK if callable(getattr(sanitizer, "sample_ids", None)) else BLACKBOX_CHUNK


def call_sizes(n: int, chunk: int) -> tuple[int, ...]:
    """Numbers of words of the calls that draw ``n`` outputs of one word in chunks of ``chunk``
    (:func:`~dpcore.textaudit.sampling.draw_counts`), each size once, largest first."""
    if n <= 0:
        return ()
    return tuple(sorted({min(n, chunk)} | ({n % chunk} if n > chunk and n % chunk else set()), reverse=True))


def stage_sizes(plan: AuditPlan, sanitizer: Any, check: CallCheck) -> dict[str, list[int]]:
    """Numbers of words of the calls the verdict's draws were made in: ``stage_one`` (the screen's or
    the pilot's; empty without either) and ``stage_two``, each largest first (16 for both when the
    run drew one output per call)."""
    if check.dependent:
        one = [SENTENCE_WORDS] if plan.strategy == "screen" or plan.use_pilot else []
        return {"stage_one": one, "stage_two": [SENTENCE_WORDS]}
    chunk = call_chunk(sanitizer)
    first = plan.m_screen if plan.strategy == "screen" else plan.pilot if plan.use_pilot else 0
    return {"stage_one": list(call_sizes(first, chunk)), "stage_two": list(call_sizes(plan.samples, chunk))}


def largest_call(plan: AuditPlan, sanitizer: Any) -> int:
    """The largest call the plan makes (its draws per word, cut at the engine's chunk)."""
    chunk = call_chunk(sanitizer)
    per_word = max(plan.samples, plan.m_screen if plan.strategy == "screen" else 0)
    return int(min(chunk, max(per_word, 2)))


def sizes_drawn(plan: AuditPlan, sanitizer: Any, check: CallCheck) -> tuple[int, ...]:
    """Numbers of words of the ``sample`` calls the run made: its stages' calls (a word's draws in
    chunks of the engine's call size), or sentence calls alone when it drew one output per call,
    and the check's own calls."""
    if check.dependent:
        return (SENTENCE_WORDS,)
    chunk = FAST_CHUNK if callable(getattr(sanitizer, "sample_ids", None)) else BLACKBOX_CHUNK
    per_word = [plan.samples]
    if plan.strategy == "screen":
        per_word.append(plan.m_screen)
    if plan.use_pilot:
        per_word.append(plan.pilot)
    sizes = {min(n, chunk) for n in per_word if n > 0} | {
        n % chunk for n in per_word if n > chunk and n % chunk
    }
    if check.status != "by-construction":
        sizes |= set(check.sizes.values())
    return tuple(sorted(sizes))


def check_size(speed: Speed | None) -> int:
    """K for a plan: :data:`CHECK_CALLS`, fewer when the probed speed says the calls would take long."""
    if speed is None:
        return CHECK_CALLS
    per_pair = speed.per_word * 2 + speed.per_draw * (1 + SENTENCE_WORDS)  # a single and a sentence call
    k = int(CHECK_SECONDS / (CHECK_WORDS * max(per_pair, 1e-9)))
    return int(min(CHECK_CALLS, max(MIN_CHECK_CALLS, k)))


#: dpcore's own samplers and the methods through which they draw: a sanitizer of one of these
#: classes that overrides none of them draws every output from its own uniforms (or Gumbel noise)
#: in one vectorised call, whatever the call's size or the words in it.
_OWN_SAMPLERS = {
    "DpcoreSanitizer": ("sample", "sample_ids"),
    "KaryRandomizedResponse": ("sample", "sample_ids", "_draw", "_ids"),
}


def independent_by_construction(sanitizer: Any) -> bool:
    """dpcore's own sampler (:class:`~dpcore.textaudit.interface.DpcoreSanitizer`, or
    :class:`~dpcore.textaudit.reference.KaryRandomizedResponse`) with none of its draw methods
    overridden: each output comes from its own uniforms or Gumbel noise, drawn by one vectorised
    sampler whatever the call (each mechanism's distribution is tested in dpcore's suite), so
    there is nothing about the call to check."""
    from dpcore.textaudit.interface import DpcoreSanitizer
    from dpcore.textaudit.reference import KaryRandomizedResponse

    for base in (DpcoreSanitizer, KaryRandomizedResponse):
        if isinstance(sanitizer, base):
            t = type(sanitizer)
            return all(getattr(t, m) is getattr(base, m) for m in _OWN_SAMPLERS[base.__name__])
    return False


def run(plan: AuditPlan, sanitizer: Any, words: np.ndarray, speed: Speed | None = None) -> CallCheck:
    """Check how the sanitizer may be called, on :data:`CHECK_WORDS` of the plan's words (a seeded choice)."""
    if independent_by_construction(sanitizer):
        sizes = {"large": largest_call(plan, sanitizer), "single": 1, "sentence": SENTENCE_WORDS}
        text = (
            f"dpcore's own sampler ({type(sanitizer).__name__}, no draw method overridden): every output "
            "is drawn from its own uniforms or Gumbel noise by one vectorised sampler, whatever the call, "
            "so the calls were not checked"
        )
        return CallCheck("by-construction", (), sizes, 0, CHECK_ALPHA, [], text)
    ids = plan.probe_ids
    pick = np.random.default_rng(cell_seed_sequence(plan.seed, "text-audit", "call-check"))
    probe = pick.choice(ids, size=min(CHECK_WORDS, len(ids)), replace=False) if len(ids) else ids
    args = (sanitizer, words, probe, largest_call(plan, sanitizer), plan.seed, check_size(speed))
    if not (plan.engine == "local" and plan.workers > 1 and fork_available()):
        return _check(*args)
    # in a forked process, as the engine's workers draw: a sanitizer that ends its process must
    # not end this one
    (got,), sent, _ = in_forks([(_check, args)])
    if sent[0] and isinstance(got, CallCheck):
        return got
    sizes = {"large": int(args[3]), "single": 1, "sentence": SENTENCE_WORDS}
    text = (
        "how the sanitizer is called was not checked: the forked process drawing the check ended "
        "abruptly (os._exit, a crash, a kill) or ran too long"
    )
    return CallCheck("unchecked", (), sizes, int(args[5]), CHECK_ALPHA, [], text)


def _check(sanitizer: Any, words: np.ndarray, probe: np.ndarray, large: int, seed: int, k: int) -> CallCheck:
    return check_calls(sanitizer, words, probe, large=large, seed=seed, calls=k)


def per_call_refusal(check: CallCheck, name: str, seconds: float, draws: int, rate: float) -> str:
    """The one line refusing a sanitizer that must be drawn one output per call and would take too long."""
    return (
        f"{name}: {check.text}. Such a sanitizer is audited one output per call ({SENTENCE_WORDS}-word "
        f"sentences), which at the measured {rate:,.0f} draws/s would take about {seconds / 60:.0f} min for "
        f"this plan's {draws:,} draws; name a smaller screen budget and samples (--screen-budget, "
        "--samples), or leave --screen-budget out so that the plan is fitted to --screen-minutes"
    )
