"""Stage 2 drawn the way users call: every confirmed word also in sentence-sized calls.

The call check (:mod:`dpcore.textaudit.calls`) compares large, single-word and sentence calls on
two probe words. A sanitizer may change its output on small calls for some words only. So after
stage 2, every word it drew is drawn K more times, each output from its own call of
:data:`~dpcore.textaudit.calls.SENTENCE_WORDS` words (the word at a random position among other
words of V, :class:`~dpcore.textaudit.calls.SentenceCalls`), and its stage-2 outputs (large
calls) and its sentence outputs are compared by the call check's χ² homogeneity test
(:func:`~dpcore.textaudit.calls.homogeneity_counts`), all words together at the call check's
level (Bonferroni over the words). A word that differs is *reported* as call-size dependent: the
verdict then covers only the large calls the run drew, and says so. Like the call check, this
decides no verdict and spends none of its α.

Sentence calls are one call per draw: :data:`SENTENCE_CALLS` per word; a fitted plan (whose
sizes follow the probed speed anyway) gets fewer when its speed says the stage would take more
than :data:`SENTENCE_SECONDS`, and none (the stage is skipped, and says so) below
:data:`MIN_SENTENCE_CALLS`. A named plan always makes the same calls, so its result is
reproduced from its seed on any machine. It is skipped too when the run already drew one output per call, and
for dpcore's own mechanisms (independent by construction).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from dpcore.textaudit.budget import per_test
from dpcore.textaudit.calls import CHECK_ALPHA, SENTENCE_WORDS, CallCheck, homogeneity_counts
from dpcore.textaudit.engine import DrawPlan, WordDraws

if TYPE_CHECKING:
    from dpcore.textaudit.confirm import Counts
    from dpcore.textaudit.sampling import OutputCodebook
    from dpcore.textaudit.timing import Speed

__all__ = ["MIN_SENTENCE_CALLS", "SENTENCE_CALLS", "SENTENCE_SECONDS", "run", "sentence_calls"]

#: Sentence calls per stage-2 word, at most.
SENTENCE_CALLS = 50
#: Fewest sentence calls per word worth a test (below it the stage is skipped).
MIN_SENTENCE_CALLS = 20
#: Seconds the stage aims at, at most (from the call check's measured seconds per call).
SENTENCE_SECONDS = 5.0


def sentence_calls(speed: Speed | None, words: int) -> int:
    """K, sentence calls per stage-2 word: :data:`SENTENCE_CALLS` for a named plan; for a fitted
    one, fewer when its probed speed says they would take more than :data:`SENTENCE_SECONDS`
    (0: skip, below :data:`MIN_SENTENCE_CALLS`)."""
    if words <= 0:
        return 0
    if speed is None:
        return SENTENCE_CALLS
    per_call = speed.per_word + SENTENCE_WORDS * speed.per_draw
    k = int(SENTENCE_SECONDS / (words * max(per_call, 1e-12)))
    return min(SENTENCE_CALLS, k) if k >= MIN_SENTENCE_CALLS else 0


def _aligned(
    halves: tuple[np.ndarray, ...], small: WordDraws, codebook: OutputCodebook
) -> tuple[np.ndarray, np.ndarray]:
    """A word's stage-2 counts (both halves, over the codebook) and its sentence counts over the
    same outputs (its outputs outside the vocabulary coded by the same codebook)."""
    c2 = np.zeros(len(codebook), dtype=np.int64)
    c2[: small.counts[0].size] = small.counts[0]
    for label, v in small.extras[0].items():
        code = codebook.code(label)
        if code >= c2.size:
            c2 = np.pad(c2, (0, code + 1 - c2.size))
        c2[code] += v
    c1 = np.sum(halves, axis=0)
    n = max(c1.size, c2.size)
    return np.pad(c1, (0, n - c1.size)), np.pad(c2, (0, n - c2.size))


def run(
    counts: Counts,
    draw_sentences: Callable[[np.ndarray, DrawPlan], list[WordDraws]],
    words: np.ndarray,
    check: CallCheck,
    speed: Speed | None = None,
    on_size: Callable[[int], None] | None = None,
) -> dict[str, Any]:
    """Draw every stage-2 word in sentence calls and test it against its stage-2 draws.

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
        A fitted plan's probed speed (sizes K; None for a named plan: :data:`SENTENCE_CALLS`).
    on_size:
        Called with the number of sentence draws before they are made (the progress total).

    Returns
    -------
    dict
        ``status`` (``"same"``, ``"call-size-dependent"`` or ``"skipped"``), ``calls_per_word``,
        ``words``, ``alpha``, ``rejected`` (word, p-value), ``draws`` and ``text``.
    """
    ids = np.asarray(sorted(counts.halves), dtype=np.int64)
    out: dict[str, Any] = {"calls_per_word": 0, "words": 0, "alpha": CHECK_ALPHA, "rejected": [], "draws": 0}
    skip = {
        "by-construction": "dpcore's own sampler draws the same in any call",
        "within-call-dependent": "every draw of this run already came from its own call",
        "call-size-dependent": "every draw of this run already came from its own call",
        "unchecked": "the call check could not call the sanitizer",
    }
    if check.status in skip:
        return out | {"status": "skipped", "text": f"not drawn: {skip[check.status]}"}
    k = sentence_calls(speed, ids.size)
    if ids.size == 0 or k == 0:
        why = "no stage-2 word" if ids.size == 0 else "sentence calls are too slow for this plan"
        return out | {"status": "skipped", "text": f"not drawn: {why}"}
    if on_size is not None:
        on_size(k * int(ids.size))
    sent = draw_sentences(ids, DrawPlan("sentences", (k,)))
    tests = [
        {"word": str(words[s.wid])}
        | homogeneity_counts(*_aligned(counts.halves[s.wid], s, counts.cb), "stage-2-vs-sentence")
        for s in sent
        if s.error is None
    ]
    if not tests:
        return out | {
            "status": "skipped",
            "text": "not drawn: every word's sentence calls failed",
            "draws": k * int(ids.size),
        }
    level = per_test(CHECK_ALPHA, len(tests))
    rejected = [{"word": t["word"], "p_value": t["p_value"]} for t in tests if t["p_value"] < level]
    out |= {"calls_per_word": k, "words": len(tests), "rejected": rejected, "draws": k * int(ids.size)}
    size = f"{k} calls of {SENTENCE_WORDS} words for each of {len(tests)} stage-2 word(s)"
    if not rejected:
        text = f"stage 2's words gave one output distribution in large and sentence calls ({size})"
        return out | {"status": "same", "text": text}
    first = rejected[0]
    more = f" and {len(rejected) - 1} more word(s)" if len(rejected) > 1 else ""
    return out | {
        "status": "call-size-dependent",
        "text": (
            f"the output distribution of {first['word']!r}{more} depends on the call's size: its stage-2 "
            f"draws in large calls and its draws in {SENTENCE_WORDS}-word sentences differ "
            f"(χ² p = {first['p_value']:.2g}; {size}); the verdict covers the large calls this run drew, "
            "not the sentence calls users make"
        ),
    }
