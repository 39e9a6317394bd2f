"""The verdict vocabulary: one code and one set of words per situation, for every audit and page.

Every audit (the vector audit, the word audit, the rewriter audit) and every table built on them
(the verdict table, the rewriter calibration) ends in one of these codes, and writes it with
these words. The same situation has the same word everywhere; ``docs/verdicts.md`` ("The verdict
words") lists them, and ``tests/test_verdict_vocabulary.py`` holds the docs, the audits and the
pages to this module.

=================  ==============================================================================
code               situation
=================  ==============================================================================
violates           a test certified, at the stated confidence, a loss above the claim
not-detected       tests within reach of the claim ran and none flagged it; never "private"
out-of-reach       every claimed bound tested was at or above the largest loss the run's size can
                   certify: it could not have shown a violation, and shows nothing either way
within-claim       dpcore computed the exact loss, and it is within the claim
untested           nothing could be tested (no pair within the claim's premise, no draw)
premise-broken     (verdict table) the sanitizer breaks a premise its claim rests on
cannot-run         (verdict table) the sanitizer could not run here; the row says why
no-claim           the mechanism claims no privacy
declaration-       (the word audit's exact verdict) the sanitizer's declared probabilities disagree
mismatch           with its own sampler
=================  ==============================================================================

:func:`decide` is the one rule that picks among the codes a pair test can end in, so the word
audit and the rewriter audit say ``out-of-reach`` in the same situation (the vector audit, which
tests one claim against one bound, applies the same rule through it).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "CANNOT_RUN",
    "CODES",
    "DECLARATION_MISMATCH",
    "NOT_DETECTED",
    "NO_CLAIM",
    "OUT_OF_REACH",
    "PREMISE_BROKEN",
    "UNTESTED",
    "VERDICTS",
    "VIOLATES",
    "WITHIN_CLAIM",
    "Verdict",
    "decide",
    "label",
]

VIOLATES = "violates"
NOT_DETECTED = "not-detected"
OUT_OF_REACH = "out-of-reach"
WITHIN_CLAIM = "within-claim"
UNTESTED = "untested"
PREMISE_BROKEN = "premise-broken"
CANNOT_RUN = "cannot-run"
NO_CLAIM = "no-claim"
DECLARATION_MISMATCH = "declaration-mismatch"


@dataclass(frozen=True)
class Verdict:
    """One verdict: its code (files, URLs, JSON), its words and what it means.

    Attributes
    ----------
    code:
        What files and JSON hold (``"not-detected"``).
    label:
        Its words in a table, a filter or a legend (``"no violation found"``).
    sentence:
        How a verdict's sentence starts (``"no violation detected by this test"``); the sentence
        then names the test, its size and its confidence.
    meaning:
        What it means, in one sentence (the docs' list).
    """

    code: str
    label: str
    sentence: str
    meaning: str


#: Every verdict, in the order tables and filters list them (worst news first).
VERDICTS: dict[str, Verdict] = {
    v.code: v
    for v in (
        Verdict(
            VIOLATES,
            "violates its claim",
            "violates its claim",
            "A test certified, at the stated confidence, a privacy loss above the claim.",
        ),
        Verdict(
            PREMISE_BROKEN,
            "premise of its claim broken",
            "the premise of its claim is broken",
            "The sanitizer breaks a premise its claim rests on (its claim does not apply as stated).",
        ),
        Verdict(
            NOT_DETECTED,
            "no violation found",
            "no violation detected by this test",
            "Tests within reach of the claim ran and none flagged it. This never means private: the "
            "result says what a flaw would have had to be to be caught.",
        ),
        Verdict(
            OUT_OF_REACH,
            "out of reach",
            "out of reach",
            "Every claimed bound tested was at or above the largest loss the run's size can certify, so "
            "it could not have shown a violation; nothing was shown either way.",
        ),
        Verdict(
            WITHIN_CLAIM,
            "within its claim (exact)",
            "no violation: the exact loss is within the claim",
            "dpcore computed the exact privacy loss of this test, and it is within the claim.",
        ),
        Verdict(
            UNTESTED,
            "untested",
            "untested",
            "Nothing could be tested (no pair within the claim's premise, or no draw succeeded).",
        ),
        Verdict(
            CANNOT_RUN,
            "cannot run",
            "cannot run",
            "The sanitizer could not run here; the row says why in one line.",
        ),
        Verdict(NO_CLAIM, "claims no privacy", "claims no privacy", "The mechanism claims no privacy."),
        Verdict(
            DECLARATION_MISMATCH,
            "declared distribution does not match its sampler",
            "its declared distribution does not match its sampler",
            "(The word audit's exact verdict) the probabilities a sanitizer declares disagree with what "
            "its own sampler draws, so exact values computed from them say nothing of it.",
        ),
    )
}
#: The codes, in :data:`VERDICTS`' order.
CODES: tuple[str, ...] = tuple(VERDICTS)


def label(code: str) -> str:
    """The words of verdict ``code`` in a table or a filter (an unknown code is returned as is)."""
    v = VERDICTS.get(code)
    return v.label if v is not None else str(code)


def decide(*, flagged: bool, tested: int, beyond_reach: int, others_in_reach: bool = False) -> str:
    """The verdict of a run of pair tests, by the one rule every audit applies.

    Parameters
    ----------
    flagged:
        Whether any test certified a loss above its claim.
    tested:
        How many claims were tested (pairs; the vector audit's one claim).
    beyond_reach:
        How many of them were at or above the largest loss the run's size can certify.
    others_in_reach:
        Whether another test ran that could have flagged a violation (the word audit's pooled tests).

    Returns
    -------
    str
        ``violates`` when a test flagged; ``untested`` when nothing was tested; ``out-of-reach``
        when every tested claim was beyond reach and no other test was within it; else
        ``not-detected``.
    """
    if flagged:
        return VIOLATES
    if tested <= 0 and not others_in_reach:
        return UNTESTED
    if tested > 0 and beyond_reach >= tested and not others_in_reach:
        return OUT_OF_REACH
    return NOT_DETECTED
