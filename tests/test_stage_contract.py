"""The rng-contract stage of the text audit (issue 37): ``contract.run(plan, sanitizer, words)``.

Tested from a plan and small sanitizers, without running an audit: which words are probed, what
the record keeps, and how the forked checks are set apart from it.
"""

from __future__ import annotations

import multiprocessing

import numpy as np
import pytest

from dpcore.text.vocab import Vocabulary
from dpcore.textaudit import contract
from dpcore.textaudit.contract import AUDIT_PROBE_WORDS, GlobalStateReseeded, split_fork_checks
from dpcore.textaudit.plan import AuditPlan
from dpcore.textaudit.reference import KaryRandomizedResponse
from dpcore.validation import DPCoreError
from tests.textaudit_helpers import word_vocab

WORDS = [f"w{i}" for i in range(30)]
FORK = "fork" in multiprocessing.get_all_start_methods()


def _vocab() -> Vocabulary:
    return word_vocab(WORDS)


class _Recording:
    """Uniform over the words from its rng; remembers every word it was asked to sanitize."""

    name, epsilon, guarantee = "recording", 1.0, "ldp"

    def __init__(self) -> None:
        self.words = np.asarray(WORDS, dtype=object)
        self.seen: set[str] = set()

    def sample(self, words, rng):
        self.seen.update(words)
        return self.words[rng.integers(0, len(self.words), size=len(words))]


class _GlobalNumpy:
    """Ignores its rng and reads NumPy's legacy global state."""

    name, epsilon, guarantee = "global-numpy", 1.0, "ldp"

    def sample(self, words, rng):
        return np.asarray(WORDS, dtype=object)[np.random.randint(0, len(WORDS), size=len(words))]  # noqa: NPY002


_OWN = np.random.default_rng(0)


class _OwnGenerator:
    """Its own module-level generator: nothing the audit can reseed."""

    name, epsilon, guarantee = "own-generator", 1.0, "ldp"

    def sample(self, words, rng):
        return np.asarray(WORDS, dtype=object)[_OWN.integers(0, len(WORDS), size=len(words))]


class _AlwaysRaises:
    name, epsilon, guarantee = "always-raises", 1.0, "ldp"

    def sample(self, words, rng):
        raise RuntimeError("no")


def test_an_rng_faithful_sanitizer_passes_unwrapped_and_the_record_keeps_no_forked_check():
    vocab = _vocab()
    krr = KaryRandomizedResponse(epsilon=1.0, words=WORDS)
    plan = AuditPlan.create(vocab=vocab, screen_budget=30 * 200, seed=4)
    out = contract.run(plan, krr, vocab.words)
    assert out.sanitizer is krr
    assert out.record["status"] == "ok"
    assert out.record["checks"] == {"same_seed_same_draws": True, "different_seeds_differ": True}
    assert out.record["probe_words"] == AUDIT_PROBE_WORDS  # 8 of the 30 screened words
    # one local worker: the forked checks are not made, and they live outside the record
    assert out.forked_checks == {"forked_streams_differ": None, "forked_same_as_parent": None}


def test_the_probe_words_are_a_seeded_choice_among_the_plan_words():
    vocab = _vocab()
    plan = AuditPlan.create(vocab=vocab, strategy="random", pairs=6, seed=21)
    plan_words = {WORDS[i] for i in plan.probe_ids}
    assert len(plan_words) > AUDIT_PROBE_WORDS  # so that a choice is made
    seen = []
    for _ in range(2):
        s = _Recording()
        out = contract.run(plan, s, vocab.words)
        assert out.record["status"] == "ok" and out.sanitizer is s
        seen.append(s.seen)
    assert seen[0] <= plan_words  # only the plan's candidate words are probed
    assert len(seen[0]) == AUDIT_PROBE_WORDS
    assert seen[0] == seen[1]  # the same seed probes the same words


def test_a_plan_with_few_words_probes_all_of_them():
    vocab = _vocab()
    plan = AuditPlan.create(vocab=vocab, words=["w2", "w17", "w25"], neighbors=0, pairs=3, seed=1)
    s = _Recording()
    out = contract.run(plan, s, vocab.words)
    assert s.seen == {"w2", "w17", "w25"}
    assert out.record["probe_words"] == 3


def test_a_global_state_sanitizer_is_handed_on_reseeded():
    vocab = _vocab()
    plan = AuditPlan.create(vocab=vocab, screen_budget=30 * 200, seed=2)
    s = _GlobalNumpy()
    out = contract.run(plan, s, vocab.words)
    assert isinstance(out.sanitizer, GlobalStateReseeded) and out.sanitizer.wrapped is s
    assert out.record["status"] == "global-state-reseeded"
    # the global state moves on between calls: the same seed gave different draws
    assert out.record["failed_checks"] == ["same_seed_same_draws"]
    assert out.record["checks"] == {"same_seed_same_draws": True, "different_seeds_differ": True}


def test_a_sanitizer_with_its_own_generator_is_refused():
    vocab = _vocab()
    plan = AuditPlan.create(vocab=vocab, screen_budget=30 * 200, seed=2)
    with pytest.raises(DPCoreError, match="own-generator does not draw from the rng it is handed"):
        contract.run(plan, _OwnGenerator(), vocab.words)


def test_a_sanitizer_failing_on_every_probe_word_is_unchecked_not_refused():
    vocab = _vocab()
    plan = AuditPlan.create(vocab=vocab, screen_budget=30 * 200, seed=2)
    s = _AlwaysRaises()
    out = contract.run(plan, s, vocab.words)
    assert out.sanitizer is s
    assert out.record["status"] == "unchecked" and out.record["probe_words"] == 0


@pytest.mark.skipif(not FORK, reason="the forked checks need the fork start method")
def test_forked_checks_go_apart_and_the_record_is_the_same_for_any_workers():
    vocab = _vocab()
    krr = KaryRandomizedResponse(epsilon=1.0, words=WORDS)
    one = contract.run(
        AuditPlan.create(vocab=vocab, screen_budget=6_000, seed=8, workers=1), krr, vocab.words
    )
    two = contract.run(
        AuditPlan.create(vocab=vocab, screen_budget=6_000, seed=8, workers=2), krr, vocab.words
    )
    assert two.forked_checks == {"forked_streams_differ": True, "forked_same_as_parent": True}
    assert two.record == one.record  # the result does not depend on the workers
    assert "forked" not in two.record["text"]


def test_split_fork_checks_moves_forked_keys_and_leaves_its_input_alone():
    rec = {
        "status": "ok",
        "checks": {
            "same_seed_same_draws": True,
            "forked_streams_differ": False,
            "forked_same_as_parent": None,
        },
        "text": "the same seed gave the same draws, in this process and in forked worker processes (x)",
    }
    kept, forked = split_fork_checks(rec)
    assert kept["checks"] == {"same_seed_same_draws": True}
    assert forked == {"forked_streams_differ": False, "forked_same_as_parent": None}
    assert kept["text"] == "the same seed gave the same draws, in this process (x)"
    assert "forked_streams_differ" in rec["checks"] and "forked" in rec["text"]  # not mutated
