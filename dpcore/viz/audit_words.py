"""The text audit's statuses and event sources in words: one home for the text-audit page
(:mod:`dpcore.viz.textaudit_figure`) and the verdict page (:mod:`dpcore.verdicts.page_view`).

Plain dictionaries, no imports: the verdict page reads them without loading the text audit.
"""

from __future__ import annotations

#: Where a pair's reported event came from (:attr:`PairResult.event_source`), in words.
EVENT_SOURCE_WORDS = {
    "selected": "the selection half",
    "screen": "the screen's output",
    "declared": "the declared distribution",
}

#: Pooled families (:data:`dpcore.textaudit.pooled.FAMILIES`): the event E_x, in words.
POOLED_FAMILY_WORDS = {
    "self": "the word itself",
    "partner": "its partner",
    "outside-V": "an output outside the vocabulary",
}

#: The rng contract's status (:mod:`dpcore.textaudit.contract`), in words.
RNG_STATUS_WORDS = {
    "ok": "passed",
    "deterministic": "deterministic, nothing random to check",
    "global-state-reseeded": "passed after reseeding the global random state before every call",
    "state-across-calls": "its first calls differed; it carries state from one call to the next",
    "not-reproducible": "the audit's own calls, drawn again from their seeds, gave other draws",
    "unchecked": "not checked",
}

#: The call check's status (:mod:`dpcore.textaudit.calls`), in words.
CALL_STATUS_WORDS = {
    "independent": "passed: draws within a call independent, one distribution at every call size",
    "by-construction": "dpcore's own sampler: independent by construction, not checked",
    "within-call-dependent": "draws within one call depend on each other: audited one output per call",
    "call-size-dependent": "the output depends on the call's size: audited one output per sentence call",
    "unchecked": "not checked",
}

#: Stage 2's sentence calls (:mod:`dpcore.textaudit.users_calls`), in words.
SENTENCE_STATUS_WORDS = {
    "same": "passed: every stage-2 word gave one distribution in large and sentence calls",
    "call-size-dependent": "some words differ in sentence calls: the verdict covers large calls only",
    "skipped": "not drawn",
}
#: Statuses the page shows as warnings.
WARNING_STATUSES = (
    "mismatch",
    "unchecked",
    "within-call-dependent",
    "call-size-dependent",
    "state-across-calls",
    "not-reproducible",
)

#: The declaration test's status (:mod:`dpcore.textaudit.declaration`), in words.
DECLARATION_STATUS_WORDS = {
    "agrees": "the sampler follows it",
    "mismatch": "the sampler does not follow it, so the declared rows are not used",
    "not-declared": "none declared, nothing to check",
}
