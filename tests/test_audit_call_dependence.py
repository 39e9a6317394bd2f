"""An audit that cannot be fooled by how a sanitizer is called (issue 38), end to end.

Each plugin (:mod:`tests.call_plugins`) is k-RR changed in one way, audited at the default
settings of :func:`~dpcore.textaudit.audit_text` (and, where those are refused as too slow one
output per call, at a small explicit plan that runs that way):

- draws within one call that depend on each other (consistent replacement, a randomly refreshed
  output cache): never ``violates``; the dependence is detected and named;
- a flaw only on small calls, a pass-through only on sentence-sized calls: ``violates``, or a
  one-line refusal naming the call-size dependence;
- fresh entropy on large calls: not reported as reproducible.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import tests.call_plugins as plugins
from dpcore.text.vocab import build_vocabulary
from dpcore.textaudit import audit_text
from dpcore.validation import DPCoreError

ROOT = Path(__file__).resolve().parents[1]
VOCAB = build_vocabulary("glove", size=200)
W = VOCAB.words
SMALL_PLAN = {"screen_budget": 20_000, "samples": 1_000, "pairs": 5}
#: The runs drawn one output per call (about 10⁴ calls/s here) use the 100 most frequent words.
SMALL_VOCAB = build_vocabulary("glove", size=100)

WITHIN = {
    "consistent": lambda w: plugins.ConsistentReplacement(epsilon=1.0, words=w),
    "cache-0.1": lambda w: plugins.RefreshedCache(epsilon=1.0, words=w, rate=0.1),
    "cache-0.01": lambda w: plugins.RefreshedCache(epsilon=1.0, words=w, rate=0.01),
    "cache-0.001": lambda w: plugins.RefreshedCache(epsilon=1.0, words=w, rate=0.001),
}
SIZED = {
    "small-calls": (lambda w: plugins.PassThroughOnCalls(epsilon=1.0, words=w, low=1, high=64), "1 word(s)"),
    "sentence-calls": (
        lambda w: plugins.PassThroughOnCalls(epsilon=1.0, words=w, low=2, high=64),
        "16 word(s)",
    ),
}


@pytest.mark.parametrize("name", list(WITHIN))
def test_dependent_draws_at_the_default_settings_are_refused_in_one_line_naming_the_dependence(name):
    with pytest.raises(DPCoreError) as err:
        audit_text(WITHIN[name](W), vocab=VOCAB, seed=0)
    msg = str(err.value)
    assert "\n" not in msg
    assert "draws within one call" in msg and "depend on each other" in msg
    assert "one output per call" in msg and "--screen-budget" in msg


@pytest.mark.parametrize("name", ["consistent", "cache-0.01"])
def test_dependent_draws_are_audited_one_output_per_call_and_not_accused(name):
    r = audit_text(WITHIN[name](SMALL_VOCAB.words), vocab=SMALL_VOCAB, seed=0, **SMALL_PLAN)
    assert r.verdict != "violates"
    assert r.calls["status"] == "within-call-dependent"
    assert r.calls["audited_as"] == "one output per call of 16 words"
    assert "depend on each other" in r.verdict_text and "its own call" in r.verdict_text
    assert r.sanitizer["one_output_per_call"] == {"call_words": 16}


@pytest.mark.parametrize("name", list(SIZED))
def test_a_call_size_flaw_at_the_default_settings_is_refused_naming_the_call_size(name):
    make, size = SIZED[name]
    with pytest.raises(DPCoreError) as err:
        audit_text(make(W), vocab=VOCAB, seed=0)
    msg = str(err.value)
    assert "\n" not in msg
    assert "depends on the call's size" in msg and f"calls of {size} differ" in msg


@pytest.mark.parametrize("name", list(SIZED))
def test_a_call_size_flaw_drawn_the_way_users_call_violates(name):
    make, _ = SIZED[name]
    r = audit_text(make(SMALL_VOCAB.words), vocab=SMALL_VOCAB, seed=0, **SMALL_PLAN)
    assert r.calls["status"] == "call-size-dependent"
    assert r.verdict == "violates"
    assert "depends on the call's size" in r.verdict_text


def test_fresh_entropy_on_large_calls_is_not_reported_as_reproducible():
    r = audit_text(plugins.FreshEntropyOnLargeCalls(epsilon=1.0, words=W), vocab=VOCAB, seed=0)
    rc = r.rng_contract
    assert rc["status"] == "not-reproducible" and rc["probe_status"] == "ok"
    assert rc["replay"]["same"] is False
    assert "depend only on the rng" not in rc["text"] and "cannot be reproduced" in rc["text"]
    assert "cannot be reproduced from its seed" in r.verdict_text
    assert r.calls["status"] == "independent"  # its draws are independent: audited as usual
    assert r.verdict != "violates"


def test_the_control_passes_every_check():
    r = audit_text(
        plugins.BlackBoxKrr(epsilon=1.0, words=W),
        vocab=VOCAB,
        seed=0,
        **SMALL_PLAN | {"screen_budget": 40_000},
    )
    assert r.calls["status"] == "independent" and r.calls["audited_as"] == "large calls"
    assert r.rng_contract["status"] == "ok" and r.rng_contract["replay"]["same"] is True
    assert set(r.rng_contract["replay"]["stages"]) == {"screen", "confirm"}
    assert r.verdict == "not-detected"
    from dpcore.viz.textaudit_figure import checks_table

    table = checks_table(r).set_index("check")  # the page's table of checks before the verdict
    assert table.loc["How it is called (call check)", "status"] == "independent"
    assert table.loc["Random generator (rng contract)", "status"] == "ok"
    assert table.loc["Stage 2 in sentence calls", "status"] == "same"


# --- the CLI --------------------------------------------------------------------------------

PLUGIN = """
import numpy as np


class Consistent:
    name, guarantee = "consistent", "ldp"

    def __init__(self, epsilon, vocab):
        self.epsilon = epsilon
        self.words = np.asarray(list(vocab), dtype=object)
        self.index = {w: i for i, w in enumerate(self.words)}
        self.keep = np.exp(epsilon) / (np.exp(epsilon) + len(self.words) - 1)

    def sample(self, words, rng):
        ids = np.asarray([self.index[w] for w in words])
        uniq, inv = np.unique(ids, return_inverse=True)
        keep = rng.random(uniq.size) < self.keep
        other = rng.integers(0, len(self.words) - 1, size=uniq.size)
        other += other >= uniq
        return self.words[np.where(keep, uniq, other)[inv]]


def make(epsilon, vocab):
    return Consistent(epsilon, vocab)
"""


def _cli(tmp_path: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    path = tmp_path / "consistent.py"
    path.write_text(PLUGIN, encoding="utf-8")
    argv = [sys.executable, "-m", "dpcore", "audit-text", "--mechanism", f"{path}:make", "--epsilon", "1"]
    argv += ["--vocab-size", "200", "--pairs", "5", "--seed", "0", *extra]
    return subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=300)


def test_cli_refuses_a_dependent_sanitizer_in_one_line_when_its_plan_is_too_slow(tmp_path):
    p = _cli(tmp_path, "--screen-budget", "200000000")
    assert p.returncode == 2 and p.stdout == ""
    lines = [ln for ln in p.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and "depend on each other" in lines[0] and "Traceback" not in p.stderr


@pytest.mark.parametrize("mode", ["text", "json"])
def test_cli_audits_a_dependent_sanitizer_one_output_per_call(tmp_path, mode):
    """Text mode with a named plan; JSON with a fitted one (refitted at the one-call-per-draw speed)."""
    if mode == "json":
        p = _cli(tmp_path, "--screen-minutes", "0.05", "--samples", "500", "--json")
    else:
        p = _cli(tmp_path, "--screen-budget", "40000", "--samples", "500")
    assert p.returncode == 0, p.stderr[-2000:]
    if mode == "json":
        d = json.loads(p.stdout)
        assert d["calls"]["status"] == "within-call-dependent" and d["verdict"] != "violates"
        assert d["calls"]["audited_as"] == "one output per call of 16 words"
        assert d["execution"]["plan"]["samples"] == 500  # a fitted plan, recorded
    else:
        assert "calls: within-call-dependent (one output per call of 16 words)" in p.stdout
        assert "verdict: violates" not in p.stdout


def test_a_call_size_flaw_of_one_word_is_reported_by_stage_twos_sentence_calls():
    named = [str(w) for w in W[20:30]]
    target = named[3]
    s = plugins.WordPassThroughInSentences(epsilon=1.0, words=W, target=target)
    r = audit_text(s, vocab=VOCAB, words=named, neighbors=0, samples=4_000, seed=0)
    assert target not in r.calls["words"]  # the call check's probe words did not include it …
    assert r.calls["status"] == "independent"
    users = r.calls["stage_two"]  # … stage 2's words, drawn in sentences too, did
    assert users["status"] == "call-size-dependent" and users["calls_per_word"] == 50
    assert [x["word"] for x in users["rejected"]] == [target]
    assert "Sentence calls:" in r.verdict_text and "not the sentence calls users make" in r.verdict_text
