"""Use what the audit drew, and no crash (issue 49, item 5).

Two user plugins (``tests/plugins/``), loaded by the CLI as a new user would load them:

- ``size_flaw.py``: one word emits one output far too often, only in calls of fewer than 4,096
  words. The screen (calls of m words) sees it, stage 2 (calls of T) does not. The audit draws
  stage 2's words again at the screen's call size and names the word, both call sizes and the
  p-value in the result and in the verdict's headline.
- ``fresh_tags.py``: 5% of words passed through with a fresh tag (outputs outside V that never
  repeat). It crashed the sentence-call stage (``_aligned``); now every stage runs and the tag
  class of the word (``w⟨+tag⟩``) shows the violation.

Each runs at a small size here (a few seconds); the default settings are run by hand (the
report of issue 49 gives the commands, times and verdict lines).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd

from dpcore.text.vocab import build_vocabulary
from dpcore.textaudit import audit_text, users_calls
from dpcore.textaudit.calls import CHECK_ALPHA, CallCheck
from dpcore.textaudit.confirm import Counts
from dpcore.textaudit.engine import DrawPlan, WordDraws, draw_words
from dpcore.textaudit.result import _notes
from dpcore.textaudit.sampling import TAG_AFTER, OutputCodebook, tag_classes
from dpcore.textaudit.timing import Speed
from tests.conftest import Cli, CliRun

ROOT = Path(__file__).resolve().parents[1]
PLUGINS = ROOT / "tests" / "plugins"
VOCAB = build_vocabulary("glove", size=100)
SMALL = ["--vocab-size", "100", "--screen-budget", "40000", "--pairs", "5", "--seed", "0", "--workers", "1"]


def _argv(plugin: str, *extra: str) -> list[str]:
    """``audit-text`` of a plugin of ``tests/plugins/`` at the small settings."""
    return ["audit-text", "--mechanism", f"{PLUGINS / plugin}:make", "--epsilon", "1", *SMALL, *extra]


def _json(run: CliRun) -> dict:
    """The JSON a ``cli(...)`` run printed, once it exited 0 with no traceback."""
    assert "Traceback" not in run.err
    return run.json()


def _load(plugin: str):
    import importlib.util

    spec = importlib.util.spec_from_file_location(f"evidence_{plugin}", PLUGINS / f"{plugin}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


# --- outputs outside V that never repeat --------------------------------------------------------


def test_a_fresh_tag_is_counted_in_the_class_of_the_word_it_reveals():
    base = pd.Index(["cat", "dog", "u.s."])
    got = tag_classes(["cat#12", "9_dog", "u.s.#3", "[UNK]", "cats", "cat#", "cat⟨+tag⟩"], base)
    assert got.tolist() == ["cat⟨+tag⟩", "⟨tag+⟩dog", "u.s.⟨+tag⟩", "[UNK]", "cats", "cat#", "cat⟨+tag⟩"]
    cb = OutputCodebook(["cat", "dog"])
    rng = np.random.default_rng(0)
    outs = np.asarray([f"cat#{t}" for t in rng.integers(1 << 62, size=1000)] + ["dog"] * 5, dtype=object)
    codes = cb.codes(outs, outs.size)
    assert len(cb) == 3 and cb.label(2) == "cat" + TAG_AFTER  # 1,000 distinct tags: one code
    assert np.bincount(codes).tolist() == [0, 5, 1000]


def test_stage_two_counts_of_different_lengths_line_up_with_the_sentence_counts():
    # an output outside V first seen in the second half grows the codebook after the first half
    cb = OutputCodebook(["a", "b", "c"])
    wd = WordDraws(wid=0, counts=[np.array([3, 1, 0]), np.array([2, 0, 1])], extras=[{}, {"⊥": 4}])
    counts = Counts([wd], np.asarray(["a", "b", "c"], dtype=object), cb, 4, 7)
    assert [h.size for h in counts.halves[0]] == [3, 4]
    small = WordDraws(wid=0, counts=[np.array([1, 1, 0])], extras=[{"⊥": 2, "new": 1}])
    c1, c2 = users_calls._aligned(counts.halves[0], small, cb)
    assert c1.tolist() == [5, 1, 1, 4, 0] and c2.tolist() == [1, 1, 0, 2, 1]


def test_the_fresh_tags_plugin_violates_through_the_cli_with_no_traceback(cli: Cli):
    d = _json(cli(_argv("fresh_tags.py", "--samples", "2000", "--json")))
    assert d["verdict"] == "violates" and not d["failures"]
    assert all(p["violates"] for p in d["pairs"])  # every confirmed word reveals itself
    assert d["calls"]["stage_two"]["status"] == "same"  # the stage that crashed ran
    assert d["rng_contract"]["replay"]["same"] is True


def test_every_stage_runs_on_fresh_tags_the_pilot_and_a_declaration_too():
    mod = _load("fresh_tags")
    words = [str(w) for w in VOCAB.words]
    tagged = mod.make(1.0, words)
    r = audit_text(tagged, vocab=VOCAB, words=["the", "of"], samples=1_000, pilot_samples=400, seed=0)
    assert r.verdict == "violates" and r.strategy == "words (adaptive)"

    from dpcore.textaudit.reference import KaryRandomizedResponse

    class DeclaredTags(KaryRandomizedResponse):  # k-RR's rows, the tagging sampler
        sample_ids = None  # drawn through sample, as a black box

        def sample(self, ws, rng):
            return tagged.sample(ws, rng)

    declared = DeclaredTags(epsilon=1.0, words=words)
    decl = audit_text(declared, vocab=VOCAB, samples=4_000, screen_budget=30_000, pairs=5, seed=0)
    assert decl.declaration["status"] == "mismatch" and decl.verdict == "violates"


# --- a flaw on small calls of one word ----------------------------------------------------------


def test_the_small_call_flaw_is_named_with_the_word_both_call_sizes_and_the_p_value(cli: Cli):
    d = _json(cli(_argv("size_flaw.py", "--samples", "8192", "--json")))
    target = str(VOCAB.words[0])
    sized = d["calls"]["stage_one_size"]
    assert sized["status"] == "call-size-dependent" and sized["stage"] == "screen"
    assert sized["call_sizes"] == [400] and sized["stage_two_call_sizes"] == [8192]
    assert sized["rejected"][0]["word"] == target and sized["rejected"][0]["p_value"] < CHECK_ALPHA
    assert d["verdict"] == "not-detected"  # stage 2's large calls are correct …
    head = d["verdict_text"].split(". Power:")[0]  # … and the headline says what it does not cover
    assert "It covers only the call sizes this run drew (400 and 8,192 words)" in head
    assert f"{target!r} draws differently in calls of 400 words (the screen's) and of 8,192 words" in head


def test_the_same_plugin_without_its_flaw_shows_no_call_size_dependence():
    mod = _load("size_flaw")
    correct = mod.SmallCallFlaw(1.0, [str(w) for w in VOCAB.words], target=-1)  # no word is flawed
    r = audit_text(correct, vocab=VOCAB, samples=1_000, screen_budget=40_000, pairs=5, seed=0)
    assert r.calls["stage_one_size"]["status"] == "same" and r.calls["stage_two"]["status"] == "same"
    assert r.verdict == "not-detected" and "It covers only" not in r.verdict_text


# --- sentence calls too slow for the plan ----------------------------------------------------------


def test_slow_sentence_calls_still_draw_the_most_suspicious_words_and_the_verdict_says_so():
    import tests.call_plugins as plugins

    class PassesW7InSentences(plugins.BlackBoxKrr):  # w7 comes out as itself in 2..64-word calls
        def sample(self, ws, rng):
            ids = self._ids(ws)
            out = self._draw(ids, rng)
            return self.words[np.where((ids == 7) & (2 <= ids.size <= 64), 7, out)]

    words = np.asarray([f"w{i}" for i in range(200)], dtype=object)
    s = PassesW7InSentences(epsilon=1.0, words=words)
    ids = np.arange(10, dtype=np.int64)
    cb = OutputCodebook(words)
    counts = Counts(
        draw_words(s, words, ids, 0, DrawPlan("confirm", (2_000, 2_000))), words, cb, 2_000, 2_000
    )
    slow = Speed(per_word=0.05, per_draw=0.001, probe_seconds=1.0)  # 66 ms a sentence call
    assert users_calls.sentence_calls(slow, 10) == 0  # the old stage skipped them all
    assert users_calls.sentence_plan(slow, 10) == (users_calls.MIN_SENTENCE_CALLS, 3)

    from dpcore.textaudit.calls import SentenceCalls

    def in_sentences(wids, what):
        return draw_words(SentenceCalls(s, words), words, wids, 0, what)

    check = CallCheck(
        "independent", ("w1", "w2"), {"large": 4000, "single": 1, "sentence": 16}, 100, CHECK_ALPHA
    )
    priority = np.r_[7, np.arange(10)[np.arange(10) != 7]]  # the screen's most suspicious word first
    users = users_calls.run(counts, in_sentences, words, check, speed=slow, priority=priority)
    assert users["words"] == 3 and users["words_total"] == 10 and users["complete"] is False
    assert [r["word"] for r in users["rejected"]] == ["w7"]
    shape = {"stage_two": users, "verdict_call_sizes": {"stage_one": [500], "stage_two": [4000]}}
    text = _notes("violates", {}, None, None, {}, shape, {}, 0)
    assert (
        "This run drew calls of 500 and 4,000 words: 'w7' draws differently in 16-word sentence calls" in text
    )
    skipped = users_calls.run(counts, in_sentences, words, replace(check, status="unchecked"), speed=slow)
    text = _notes("not-detected", {}, None, None, {}, shape | {"stage_two": skipped}, {}, 0)
    assert text.startswith(
        ". It covers only the call sizes this run drew (500 and 4,000 words): sentence calls"
    )
    assert "were drawn for none of its 10 stage-2 words (the call check could not call the sanitizer)" in text


def test_only_the_call_sizes_stage_two_did_not_make_are_drawn_again():
    import tests.call_plugins as plugins

    words = np.asarray([f"w{i}" for i in range(50)], dtype=object)
    s = plugins.BlackBoxKrr(epsilon=1.0, words=words)
    cb = OutputCodebook(words)
    counts = Counts(
        draw_words(s, words, np.arange(3), 0, DrawPlan("confirm", (500, 500))), words, cb, 500, 500
    )
    check = CallCheck("independent", ("w1",), {"large": 1000, "single": 1, "sentence": 16}, 100, CHECK_ALPHA)
    plans: list[DrawPlan] = []

    def draw(wids, what):
        plans.append(what)
        return draw_words(s, words, wids, 0, what)

    kw = {"stage": "screen", "chunk": 100, "samples": 1_000}
    # stage 1 drew 250 per word in calls of 100, 100 and 50; stage 2 in calls of 100: only 50 again
    got = users_calls.at_stage_one_size(counts, draw, words, check, per_word=250, **kw)
    assert plans == [DrawPlan("stage-one-size", (50,))] and got["call_sizes"] == [50]
    assert got["stage_one_call_sizes"] == [100, 50] and got["status"] == "same" and got["words"] == 3
    same = users_calls.at_stage_one_size(counts, draw, words, check, per_word=300, **kw)
    assert same["status"] == "skipped" and "same sizes" in same["text"] and len(plans) == 1
