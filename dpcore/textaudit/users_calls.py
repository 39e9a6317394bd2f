"""Stage 2's words at the other call sizes: in sentence calls, and at the size stage 1 drew.

The call check (:mod:`dpcore.textaudit.calls`) compares large, single-word and sentence calls on
two probe words. A sanitizer may change its output on small calls for some words only, and the
audit itself draws each word at more than one call size: stage 1 (the screen, or the adaptive
pilot) in calls of its m draws per word, stage 2 in calls of up to
:data:`~dpcore.textaudit.sampling.BLACKBOX_CHUNK`. So after stage 2, every word it drew is
compared with its stage-2 draws (large calls) twice, each by the call check's χ² homogeneity
test (:func:`~dpcore.textaudit.calls.homogeneity_counts`), all words together at the call
check's level (Bonferroni over the words):

- :func:`run`: the word drawn K more times, each output from its own call of
  :data:`~dpcore.textaudit.calls.SENTENCE_WORDS` words (the word at a random position among
  other words of V, :class:`~dpcore.textaudit.calls.SentenceCalls`), the way users call;
- :func:`at_stage_one_size`: the word drawn again at the call size of stage 1, from a stream of
  its own. Stage 1's own counts of the word are *not* reused: the word went to stage 2 because
  they looked extreme, so they are biased towards disagreeing with any fresh draws (a test on
  them would accuse a sound sanitizer); fresh draws of the same size are not.

A word that differs is *reported* as call-size dependent (word, call sizes, p-value): the
evidence stage 1 saw and the draws stage 2 judged come from different distributions, and the
verdict covers only the call sizes this run drew, and says so. Like the call check, this decides
no verdict and spends none of its α.

Sentence calls are one call per draw: :data:`SENTENCE_CALLS` per word; a fitted plan (whose
sizes follow the probed speed anyway) gets fewer when its speed says the stage would take more
than :data:`SENTENCE_SECONDS`, and when even :data:`MIN_SENTENCE_CALLS` per word would, that many
for as many of the most suspicious words as fit (at least one): the stage is never skipped for
time, and the verdict says which words it did not draw. The draws at stage 1's size are sized
the same way (:data:`SIZE_SECONDS`). A named plan always makes the same calls, so its result is
reproduced from its seed on any machine. Both are skipped when the run already drew one output
per call, and for dpcore's own mechanisms (independent by construction).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from dpcore.pairtest.budget import per_test
from dpcore.prose import and_list
from dpcore.textaudit.calls import CHECK_ALPHA, SENTENCE_WORDS, CallCheck, call_sizes, homogeneity_counts
from dpcore.textaudit.engine import DrawPlan, WordDraws

if TYPE_CHECKING:
    from dpcore.textaudit.confirm import Counts
    from dpcore.textaudit.sampling import OutputCodebook
    from dpcore.textaudit.timing import Speed

__all__ = [
    "MIN_SENTENCE_CALLS",
    "SENTENCE_CALLS",
    "SENTENCE_SECONDS",
    "SIZE_SECONDS",
    "at_stage_one_size",
    "run",
    "sentence_calls",
    "sentence_plan",
]

#: Sentence calls per stage-2 word, at most.
SENTENCE_CALLS = 50
#: Fewest sentence calls per word worth a test.
MIN_SENTENCE_CALLS = 20
#: Seconds the stage aims at, at most (from the call check's measured seconds per call).
SENTENCE_SECONDS = 5.0
#: Seconds a fitted plan's draws at stage 1's call size aim at.
SIZE_SECONDS = 5.0

#: Why a stage is not drawn, per call-check status (every draw is then independent of the call,
#: by construction, or was made in a call of its own).
_SKIP = {
    "by-construction": "dpcore's own sampler draws the same in any call",
    "within-call-dependent": "every draw of this run already came from its own call",
    "call-size-dependent": "every draw of this run already came from its own call",
}


def sentence_calls(speed: Speed | None, words: int) -> int:
    """K, sentence calls per stage-2 word: :data:`SENTENCE_CALLS` for a named plan; for a fitted
    one, fewer when its probed speed says they would take more than :data:`SENTENCE_SECONDS`
    (0: below :data:`MIN_SENTENCE_CALLS` for every word; :func:`sentence_plan` then draws some)."""
    if words <= 0:
        return 0
    if speed is None:
        return SENTENCE_CALLS
    k = int(SENTENCE_SECONDS / (words * max(_per_call(speed), 1e-12)))
    return min(SENTENCE_CALLS, k) if k >= MIN_SENTENCE_CALLS else 0


def sentence_plan(speed: Speed | None, words: int) -> tuple[int, int]:
    """(K calls per word, how many stage-2 words get them): :func:`sentence_calls` for every word
    when that reaches :data:`MIN_SENTENCE_CALLS`; else that many for as many words as fit
    :data:`SENTENCE_SECONDS` at the probed speed, at least one (the most suspicious first)."""
    if words <= 0:
        return 0, 0
    k = sentence_calls(speed, words)
    if k > 0 or speed is None:
        return k, words
    fit = int(SENTENCE_SECONDS / (MIN_SENTENCE_CALLS * max(_per_call(speed), 1e-12)))
    return MIN_SENTENCE_CALLS, int(min(words, max(1, fit)))


def _per_call(speed: Speed) -> float:
    return speed.per_word + SENTENCE_WORDS * speed.per_draw


def _words(sizes: Sequence[int]) -> str:
    """Call sizes as '34,464 and 65,536' (smallest first)."""
    named = [f"{int(n):,}" for n in sorted(sizes)]
    return and_list(named)


def _aligned(
    halves: tuple[np.ndarray, ...], small: WordDraws, codebook: OutputCodebook
) -> tuple[np.ndarray, np.ndarray]:
    """A word's stage-2 counts (both halves, over the codebook) and its other counts over the
    same outputs (its outputs outside the vocabulary coded by the same codebook).

    The halves may be of different lengths (an output outside V first seen in the second half
    grows the codebook after the first half was coded).
    """
    c2 = np.zeros(len(codebook), dtype=np.int64)
    c2[: small.counts[0].size] = small.counts[0]
    for label, v in small.extras[0].items():
        code = codebook.code(label)
        if code >= c2.size:
            c2 = np.pad(c2, (0, code + 1 - c2.size))
        c2[code] += v
    n = max(c2.size, *(h.size for h in halves))
    c1 = np.zeros(n, dtype=np.int64)
    for h in halves:
        c1[: h.size] += h
    return c1, np.pad(c2, (0, n - c2.size))


def _chosen(counts: Counts, priority: np.ndarray | None) -> np.ndarray:
    """Stage 2's drawn words, the most suspicious first (``priority``; the rest by id)."""
    drawn = np.asarray(sorted(counts.halves), dtype=np.int64)
    if priority is None:
        return drawn
    first = np.asarray([int(w) for w in priority if int(w) in counts.halves], dtype=np.int64)
    rest = np.setdiff1d(drawn, first, assume_unique=True)
    return np.concatenate([first, rest]).astype(np.int64)


def _tests(counts: Counts, drawn: list[WordDraws], words: np.ndarray, what: str) -> list[dict[str, Any]]:
    return [
        {"word": str(words[s.wid])} | homogeneity_counts(*_aligned(counts.halves[s.wid], s, counts.cb), what)
        for s in drawn
        if s.error is None
    ]


def _first_rejected(rejected: list[dict[str, Any]]) -> tuple[dict[str, Any], str]:
    """The first word a homogeneity test rejected, and " and N more word(s)" for the others."""
    more = f" and {len(rejected) - 1} more word(s)" if len(rejected) > 1 else ""
    return rejected[0], more


def run(
    counts: Counts,
    draw_sentences: Callable[[np.ndarray, DrawPlan], list[WordDraws]],
    words: np.ndarray,
    check: CallCheck,
    speed: Speed | None = None,
    on_size: Callable[[int], None] | None = None,
    priority: np.ndarray | None = None,
) -> dict[str, Any]:
    """Draw stage 2's words in sentence calls and test each against its stage-2 draws.

    Parameters
    ----------
    counts:
        Stage 2's counts per word and half (:attr:`~dpcore.textaudit.confirm.ConfirmOutcome.counts`).
    draw_sentences:
        The audit's draw function over :class:`~dpcore.textaudit.calls.SentenceCalls` of the
        sanitizer (stage ``"sentences"``: every word from its own stream).
    words:
        The vocabulary's words.
    check:
        The call check (its status decides whether this runs).
    speed:
        A fitted plan's probed speed (sizes K and the words; None for a named plan:
        :data:`SENTENCE_CALLS` for every word).
    on_size:
        Called with the number of sentence draws before they are made (the progress total).
    priority:
        Vocabulary ids, the most suspicious first (the order in which a slow plan draws words).

    Returns
    -------
    dict
        ``status`` (``"same"``, ``"call-size-dependent"`` or ``"skipped"``), ``calls_per_word``,
        ``words`` (tested), ``words_drawn`` (drawn; a word whose calls failed is not tested),
        ``words_total`` (stage 2's), ``alpha``, ``rejected`` (word, p-value), ``draws``, ``text``
        and ``complete`` (every stage-2 word was tested in sentence calls, or needed not be).
    """
    ids = _chosen(counts, priority)
    out: dict[str, Any] = {
        "calls_per_word": 0,
        "words": 0,
        "words_total": int(ids.size),
        "alpha": CHECK_ALPHA,
        "rejected": [],
        "draws": 0,
    }
    if check.status in _SKIP:
        return out | {"status": "skipped", "complete": True, "text": f"not drawn: {_SKIP[check.status]}"}
    if check.status == "unchecked":
        why = "the call check could not call the sanitizer"
        return out | {"status": "skipped", "complete": False, "text": f"not drawn: {why}"}
    if ids.size == 0:
        return out | {"status": "skipped", "complete": True, "text": "not drawn: no stage-2 word"}
    k, n_words = sentence_plan(speed, int(ids.size))
    ids = ids[:n_words]
    if on_size is not None:
        on_size(k * n_words)
    sent = draw_sentences(ids, DrawPlan("sentences", (k,)))
    tests = _tests(counts, sent, words, "stage-2-vs-sentence")
    drawn = k * n_words
    if not tests:
        text = "not drawn: every word's sentence calls failed"
        return out | {"status": "skipped", "complete": False, "text": text, "draws": drawn}
    level = per_test(CHECK_ALPHA, len(tests))
    rejected = [{"word": t["word"], "p_value": t["p_value"]} for t in tests if t["p_value"] < level]
    total = int(out["words_total"])
    out |= {
        "calls_per_word": k,
        "words": len(tests),
        "rejected": rejected,
        "draws": drawn,
        "words_drawn": n_words,
        "complete": len(tests) == total,
    }
    if n_words < total:
        size = (
            f"{k} calls of {SENTENCE_WORDS} words for each of {len(tests)} of the {total} stage-2 words, "
            "the most suspicious first (sentence calls are too slow for this plan to draw them all)"
        )
    else:
        size = f"{k} calls of {SENTENCE_WORDS} words for each of {len(tests)} stage-2 word(s)"
    if not rejected:
        text = f"stage 2's words gave one output distribution in large and sentence calls ({size})"
        return out | {"status": "same", "text": text}
    first, more = _first_rejected(rejected)
    return out | {
        "status": "call-size-dependent",
        "text": (
            f"the output distribution of {first['word']!r}{more} depends on the call's size: its stage-2 "
            f"draws in large calls and its draws in {SENTENCE_WORDS}-word sentences differ "
            f"(χ² p {_p(first['p_value'])}; {size}); the verdict covers the large calls this run drew, "
            "not the sentence calls users make"
        ),
    }


def at_stage_one_size(
    counts: Counts,
    draw: Callable[[np.ndarray, DrawPlan], list[WordDraws]],
    words: np.ndarray,
    check: CallCheck,
    *,
    stage: str,
    per_word: int,
    chunk: int,
    samples: int,
    speed: Speed | None = None,
    on_size: Callable[[int], None] | None = None,
    priority: np.ndarray | None = None,
) -> dict[str, Any]:
    """Draw stage 2's words again at stage 1's call size and test each against its stage-2 draws.

    Each word gets fresh draws (stage ``"stage-one-size"``, a stream of its own) in one call of
    each size stage 1 made and stage 2 did not (stage 1 draws ``per_word`` in chunks of ``chunk``:
    all of it when it is at most a chunk, else one chunk and the remainder, the chunk only where
    stage 2 made none), so that they differ from its stage-2 draws only in the size of the calls.
    Stage 1's own counts are not used: they chose the word.

    Parameters
    ----------
    counts:
        Stage 2's counts per word and half.
    draw:
        The audit's draw function.
    words:
        The vocabulary's words.
    check:
        The call check (dpcore's own samplers and runs drawn one output per call skip this).
    stage:
        Stage 1's name for the record and the text (``"screen"`` or ``"pilot"``; ``""``: none,
        nothing to compare).
    per_word:
        Stage 1's draws per word (its calls: chunks of ``chunk``).
    chunk:
        The engine's call size for this sanitizer.
    samples:
        Stage 2's draws per word, T.
    speed:
        A fitted plan's probed speed: the words drawn are as many as fit :data:`SIZE_SECONDS`
        (at least one, the most suspicious first); None (a named plan): every stage-2 word.
    on_size:
        Called with the number of draws before they are made.
    priority:
        Vocabulary ids, the most suspicious first.

    Returns
    -------
    dict
        ``status`` (``"same"``, ``"call-size-dependent"`` or ``"skipped"``), ``stage``,
        ``stage_one_call_sizes``, ``call_sizes`` (those of stage 1 that stage 2 did not make: the
        calls drawn again), ``stage_two_call_sizes``, ``draws_per_word``, ``words``,
        ``words_total``, ``alpha``, ``rejected`` (word, p-value), ``draws`` and ``text``.
    """
    ids = _chosen(counts, priority)
    first, two = call_sizes(per_word, chunk), call_sizes(samples, chunk)
    one = tuple(n for n in first if n not in two)  # the sizes to draw again, one call each
    n_draw = int(sum(one))
    out: dict[str, Any] = {
        "stage": stage,
        "stage_one_call_sizes": list(first),
        "call_sizes": list(one),
        "stage_two_call_sizes": list(two),
        "draws_per_word": n_draw if stage else 0,
        "words": 0,
        "words_total": int(ids.size),
        "alpha": CHECK_ALPHA,
        "rejected": [],
        "draws": 0,
    }
    if check.status in _SKIP:
        return out | {"status": "skipped", "text": f"not drawn: {_SKIP[check.status]}"}
    if not stage or not first:
        return out | {"status": "skipped", "text": "not drawn: no stage before stage 2 drew these words"}
    if not one:
        text = f"not drawn: the {stage} and stage 2 made calls of the same sizes ({_words(two)} words)"
        return out | {"status": "skipped", "text": text}
    if ids.size == 0:
        return out | {"status": "skipped", "text": "not drawn: no stage-2 word"}
    n_words = int(ids.size)
    if speed is not None:
        cost = n_draw * speed.per_draw + len(one) * speed.per_word
        n_words = int(min(ids.size, max(1, SIZE_SECONDS // max(cost, 1e-12))))
    ids = ids[:n_words]
    if on_size is not None:
        on_size(n_draw * n_words)
    again = draw(ids, DrawPlan("stage-one-size", (n_draw,)))  # draw_counts: one call per size
    tests = _tests(counts, again, words, f"stage-2-vs-{stage}-size")
    drawn = n_draw * n_words
    out["draws"] = drawn
    if not tests:
        text = f"not drawn: every word's calls at the {stage}'s size failed"
        return out | {"status": "skipped", "text": text}
    level = per_test(CHECK_ALPHA, len(tests))
    rejected = [{"word": t["word"], "p_value": t["p_value"]} for t in tests if t["p_value"] < level]
    out |= {"words": len(tests), "rejected": rejected}
    total = int(out["words_total"])
    which = f"{len(tests)} of the {total}" if len(tests) < total else f"{len(tests)}"
    size = f"{n_draw:,} fresh draws in calls of {_words(one)} words for each of {which} stage-2 word(s)"
    if not rejected:
        text = (
            f"stage 2's words gave one output distribution in calls of {_words(two)} words (stage 2) and of "
            f"{_words(one)} words (the {stage}'s) ({size})"
        )
        return out | {"status": "same", "text": text}
    first, more = _first_rejected(rejected)
    return out | {
        "status": "call-size-dependent",
        "text": (
            f"the output distribution of {first['word']!r}{more} depends on the call's size: its draws in "
            f"calls of {_words(one)} words (the {stage}'s) and in calls of {_words(two)} words (stage 2's) "
            f"differ (χ² p {_p(first['p_value'])}; {size}), so what the {stage} saw of it and what stage 2 "
            "judged come from different distributions"
        ),
    }


def _p(p: float) -> str:
    """A p-value as '= 0.0012', or '< 1e-300' where it underflows to 0."""
    return f"= {float(p):.2g}" if float(p) > 0 else "< 1e-300"
