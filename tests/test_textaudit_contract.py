"""The rng contract and hostile plugins (issue 28, item 1).

A sanitizer must draw every random number from the ``rng`` it is handed; one that reads a global
state is reseeded or refused before any verdict (:mod:`dpcore.textaudit.contract`). A plugin
that prints, calls ``sys.exit``, raises or kills its worker process neither corrupts the output
nor ends the audit without a clear line.
"""

from __future__ import annotations

import json
import os
import pickle
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from dpcore.text import create_text_mechanism
from dpcore.text.vocab import build_vocabulary
from dpcore.textaudit import DpcoreSanitizer, KaryRandomizedResponse
from dpcore.textaudit import engine as engine_mod
from dpcore.textaudit.contract import (
    PROBE_DRAWS,
    GlobalStateReseeded,
    RngContract,
    enforce_rng_contract,
    unwrap,
)
from dpcore.textaudit.engine import DrawPlan, draw_words
from dpcore.textaudit.sampling import OutputCodebook, SanitizerRaised, draw_counts
from dpcore.textaudit.wrapping import stdout_to_stderr
from dpcore.validation import DPCoreError
from tests.cli_errors import error_lines
from tests.conftest import RAY_GROUP

ROOT = Path(__file__).resolve().parents[1]
FORK = "fork" in __import__("multiprocessing").get_all_start_methods()
needs_fork = pytest.mark.skipif(not FORK, reason="the forked checks need the fork start method")


@pytest.fixture(scope="module")
def vocab():
    return build_vocabulary("glove", size=300)


@pytest.fixture(scope="module")
def words(vocab):
    return vocab.words


PROBE = np.arange(8)


# --- sanitizers of the unit tests (module level: they pickle) -------------------------------


class _Base:
    epsilon, guarantee = 1.0, "ldp"

    def __init__(self, words) -> None:
        self.words = np.asarray(words, dtype=object)


class Copy(_Base):
    """Deterministic: every word is its own output."""

    name = "copy"

    def sample(self, words, rng):
        return list(words)


class GlobalNumpy(_Base):
    """Ignores its rng: NumPy's legacy global state (what pyPANTERA does)."""

    name = "global-numpy"
    citation = "nobody 2024"

    def sample(self, words, rng):
        return self.words[np.random.randint(0, len(self.words), size=len(words))]  # noqa: NPY002

    def claimed_bound(self, x, x_prime, distance):
        return 7.0

    def sample_ids(self, word_id, n, rng):  # the fast path, as flawed: hidden by the wrapper
        return np.random.randint(0, len(self.words), size=n)  # noqa: NPY002


class GlobalPython(_Base):
    """Ignores its rng: Python's ``random``."""

    name = "global-python"

    def sample(self, words, rng):
        import random

        return [self.words[random.randrange(len(self.words))] for _ in words]


_OWN = np.random.default_rng(0)


class OwnFixedSeed(_Base):
    """Its own module-level generator with a fixed seed: nothing the audit can reseed."""

    name = "flawed-x"

    def sample(self, words, rng):
        return self.words[_OWN.integers(0, len(self.words), size=len(words))]


class ReplaysInForks(_Base):
    """Draws from its rng in the process that built it, from the global state in any other."""

    name = "replays-in-forks"

    def __init__(self, words) -> None:
        super().__init__(words)
        self.pid = os.getpid()

    def sample(self, words, rng):
        if os.getpid() == self.pid:
            idx = rng.integers(0, len(self.words), size=len(words))
        else:  # every forked process replays the parent's global state
            idx = np.random.randint(0, len(self.words), size=len(words))  # noqa: NPY002
        return self.words[idx]


class RaisesOn(_Base):
    """Uniform over the vocabulary from its rng, but raises on some words."""

    name = "raises-on"

    def __init__(self, words, bad) -> None:
        super().__init__(words)
        self.bad = set(bad)

    def sample(self, words, rng):
        if words and words[0] in self.bad:
            raise RuntimeError(f"cannot sanitize {words[0]}")
        return self.words[rng.integers(0, len(self.words), size=len(words))]


class Prints(_Base):
    name = "prints"

    def sample(self, words, rng):
        print("plugin chatter")
        return self.words[rng.integers(0, len(self.words), size=len(words))]


class Exits(_Base):
    name = "exits"

    def sample(self, words, rng):
        sys.exit(3)


class Interrupted(_Base):
    name = "interrupted"

    def sample(self, words, rng):
        raise KeyboardInterrupt


class KillsChildren(_Base):
    """``os._exit(1)`` in any forked process (on ``kill_words``, or every word); raises in this one."""

    name = "kills-children"

    def __init__(self, words, kill_words=None) -> None:
        super().__init__(words)
        self.pid = os.getpid()
        self.kill_words = None if kill_words is None else set(kill_words)
        self.parent_calls = 0

    def sample(self, words, rng):
        if self.kill_words is None or (words and words[0] in self.kill_words):
            if os.getpid() != self.pid:
                os._exit(1)
            self.parent_calls += 1
            raise RuntimeError("this would have ended the process")
        return self.words[rng.integers(0, len(self.words), size=len(words))]


def _draws(s, words, word: str, seed: int, n: int = 64) -> list:
    return list(s.sample([word] * n, np.random.default_rng(seed)))


# --- enforce_rng_contract --------------------------------------------------------------------


def test_krr_passes_with_status_ok(words):
    krr = KaryRandomizedResponse(epsilon=1.0, words=list(words))
    s, c = enforce_rng_contract(krr, words, PROBE, seed=0, workers=1, engine="local")
    assert s is krr and isinstance(c, RngContract)
    assert c.status == "ok" and c.probe_words == 8 and c.draws_per_word == PROBE_DRAWS
    assert c.checks["same_seed_same_draws"] is True and c.checks["different_seeds_differ"] is True
    assert c.checks["forked_streams_differ"] is None  # one worker: no forked check
    assert c.text.startswith("the sanitizer's draws depend only on the rng it is handed")
    d = c.to_dict()
    assert d["status"] == "ok" and d["checks"] == c.checks and json.dumps(d)


@needs_fork
def test_krr_passes_the_forked_check(words):
    krr = KaryRandomizedResponse(epsilon=1.0, words=list(words))
    s, c = enforce_rng_contract(krr, words, PROBE, seed=3, workers=2, engine="local")
    assert s is krr and c.status == "ok"
    assert c.checks["forked_streams_differ"] is True and c.checks["forked_same_as_parent"] is True
    assert "forked worker processes" in c.text


def test_a_deterministic_sanitizer_is_not_a_failure(words):
    s, c = enforce_rng_contract(Copy(words), words, PROBE, seed=0, workers=2, engine="local")
    assert isinstance(s, Copy) and c.status == "deterministic"
    assert c.checks["same_seed_same_draws"] is True and c.checks["different_seeds_differ"] is None
    assert "deterministic" in c.text


@pytest.mark.parametrize("cls", [GlobalNumpy, GlobalPython])
@pytest.mark.parametrize("workers", [1, 2])
def test_a_global_state_sanitizer_is_reseeded(words, cls, workers):
    raw = cls(words)
    assert _draws(raw, words, "the", 5) != _draws(raw, words, "the", 5)  # the flaw
    s, c = enforce_rng_contract(raw, words, PROBE, seed=0, workers=workers, engine="local")
    assert isinstance(s, GlobalStateReseeded) and unwrap(s) is raw
    assert c.status == "global-state-reseeded" and "same_seed_same_draws" in c.failed_checks
    assert c.checks["same_seed_same_draws"] is True and c.checks["different_seeds_differ"] is True
    if workers == 2 and FORK:
        assert c.checks["forked_streams_differ"] is True and c.checks["forked_same_as_parent"] is True
    assert "global random state" in c.text
    # wrapped: the same seed gives the same draws, different seeds different ones
    assert _draws(s, words, "the", 5) == _draws(s, words, "the", 5)
    assert _draws(s, words, "the", 5) != _draws(s, words, "the", 6)


def test_the_wrapper_forwards_hides_sample_ids_pickles_and_restores_global_state(words):
    raw = GlobalNumpy(words)
    s = GlobalStateReseeded(raw)
    assert (s.name, s.epsilon, s.guarantee, s.citation) == ("global-numpy", 1.0, "ldp", "nobody 2024")
    assert s.claimed_bound("a", "b", 1.0) == 7.0
    assert not hasattr(s, "sample_ids") and hasattr(raw, "sample_ids")
    assert not hasattr(s, "log_prob_row")  # absent on the wrapped one: absent here
    assert s.describe() == {"type": "GlobalNumpy", "global_state_reseeded": True}
    back = pickle.loads(pickle.dumps(s))
    assert isinstance(back, GlobalStateReseeded) and back.name == "global-numpy"
    assert _draws(back, words, "of", 9) == _draws(s, words, "of", 9)
    np.random.seed(123)  # noqa: NPY002
    before = np.random.get_state()[1].copy()  # noqa: NPY002
    s.sample(["the"] * 10, np.random.default_rng(0))
    assert np.array_equal(np.random.get_state()[1], before)  # noqa: NPY002
    # dpcore's own adapters forward their optional members too
    krr = GlobalStateReseeded(KaryRandomizedResponse(epsilon=1.0, words=list(words)))
    assert krr.exact is True and callable(krr.log_prob_row) and not hasattr(krr, "sample_ids")


def test_an_own_fixed_seed_generator_is_refused_in_one_line(words):
    with pytest.raises(DPCoreError, match="rng contract") as err:
        enforce_rng_contract(OwnFixedSeed(words), words, PROBE, seed=0, workers=1, engine="local")
    msg = str(err.value)
    assert "\n" not in msg and "flawed-x" in msg and "the same seed gave different draws" in msg
    assert "draw every random number from the `rng` argument of sample(words, rng)" in msg


@needs_fork
@RAY_GROUP
def test_the_forked_check_catches_draws_that_replay_in_forks(words, ray_runtime):
    _, c = enforce_rng_contract(ReplaysInForks(words), words, PROBE, seed=0, workers=1, engine="local")
    assert c.status == "ok"  # in one process nothing shows
    _, c = enforce_rng_contract(ReplaysInForks(words), words, PROBE, seed=0, workers=2, engine="ray")
    assert c.status == "ok" and c.checks["forked_streams_differ"] is None  # Ray: not forked
    with pytest.raises(DPCoreError, match="rng contract") as err:
        enforce_rng_contract(ReplaysInForks(words), words, PROBE, seed=0, workers=2, engine="local")
    assert "forked worker processes replayed the same draws" in str(err.value)


def test_exceptions_are_not_contract_failures(words, capsys):
    bad = {str(w) for w in words[:5]}
    _, c = enforce_rng_contract(RaisesOn(words, bad), words, PROBE, seed=0, workers=2, engine="local")
    assert c.status == "ok" and c.probe_words == 3  # the 5 failing words are left out
    every = {str(w) for w in words}
    _, c = enforce_rng_contract(RaisesOn(words, every), words, PROBE, seed=0, workers=2, engine="local")
    assert c.status == "unchecked" and c.probe_words == 0 and set(c.checks.values()) == {None}
    assert "failed on every probe word" in c.text
    _, c = enforce_rng_contract(Exits(words), words, PROBE, seed=0, workers=1, engine="local")
    assert c.status == "unchecked"
    _, c = enforce_rng_contract(Prints(words), words, PROBE, seed=0, workers=1, engine="local")
    assert c.status == "ok"
    out, err = capsys.readouterr()
    assert out == "" and "plugin chatter" in err
    with pytest.raises(KeyboardInterrupt):
        enforce_rng_contract(Interrupted(words), words, PROBE, seed=0, workers=1, engine="local")


@needs_fork
def test_a_sanitizer_that_ends_its_process_is_never_called_here(words):
    s = KillsChildren(words)
    out, c = enforce_rng_contract(s, words, PROBE, seed=0, workers=2, engine="local")
    assert out is s and c.status == "unchecked" and "ended abruptly" in c.text
    assert s.parent_calls == 0  # this process never drew: the probe processes died first


def test_probe_of_santext_at_15000_words_draws_in_batches_at_full_size(monkeypatch):
    """What makes the probe cheap for dpcore's own mechanisms (a state, not a clock; its time is
    bench's): every draw goes through the batched ``sample_ids`` path, never the word-list
    ``sample`` path, and no speed calibration shrinks it (all 8 words, full draws per word)."""
    vocab = build_vocabulary("glove", size=15_000)
    mech = DpcoreSanitizer(create_text_mechanism("santext", vocab=vocab, epsilon=1.0))
    ids = np.arange(0, 15_000, 1_875)
    batched: list[int] = []
    real = mech.sample_ids

    def counted(wid, n, rng):  # type: ignore[no-untyped-def]
        batched.append(int(n))
        return real(wid, n, rng)

    def refused(*_a, **_k):  # type: ignore[no-untyped-def]
        raise AssertionError("the probe fell back to the word-list sample() path")

    monkeypatch.setattr(mech, "sample_ids", counted)
    monkeypatch.setattr(mech, "sample", refused)
    s, c = enforce_rng_contract(mech, vocab.words, ids, seed=1, workers=1, engine="local")
    assert s is mech and c.status == "ok"
    assert c.probe_words == 8 and c.draws_per_word == PROBE_DRAWS
    assert batched and set(batched) == {PROBE_DRAWS}


def test_bad_probe_ids_are_one_clear_error(words):
    with pytest.raises(DPCoreError, match="probe ids"):
        enforce_rng_contract(Copy(words), words, np.array([0, 300]), seed=0, workers=1, engine="local")


def test_stdout_redirect_is_safe_across_threads(capsys):
    real = sys.stdout
    barrier = threading.Barrier(4)

    def job() -> None:
        with stdout_to_stderr():
            barrier.wait()
            print("from a thread")
            time.sleep(0.01)

    threads = [threading.Thread(target=job) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sys.stdout is real
    out, err = capsys.readouterr()
    assert out == "" and err.count("from a thread") == 4


# --- draw_counts and the local pool ----------------------------------------------------------


def test_draw_counts_reports_sys_exit_and_keeps_stdout_clean(words, capsys):
    cb = OutputCodebook(words)
    rng = np.random.default_rng(0)
    with pytest.raises(SanitizerRaised, match=r"the sanitizer's sample\(\) called sys.exit\(3\) on 'the'"):
        draw_counts(Exits(words), "the", 0, 100, rng, cb)
    with pytest.raises(KeyboardInterrupt):
        draw_counts(Interrupted(words), "the", 0, 100, rng, cb)
    c = draw_counts(Prints(words), "the", 0, 100, rng, cb)
    assert c.sum() == 100
    out, err = capsys.readouterr()
    assert out == "" and "plugin chatter" in err


@needs_fork
def test_a_dying_worker_fails_its_shards_words_and_the_rest_is_drawn(words, monkeypatch):
    monkeypatch.setattr(engine_mod, "SHARD_DRAWS", 500)  # 10 words per shard: 30 shards
    wids = np.arange(len(words))
    plan = DrawPlan("confirm", (50,))
    s = KillsChildren(words, kill_words=[str(words[0])])
    pooled = draw_words(s, words, wids, 11, plan, workers=2)
    assert [wd.wid for wd in pooled] == list(wids)  # in word order
    failed = [wd.wid for wd in pooled if wd.error is not None]
    # the shards in flight when word 0 ended its process: at most 4 (2 per worker) of 10 words
    assert 0 in failed and len(failed) <= 40 and len(failed) % 10 == 0
    assert all("the worker process died while sampling this word" in pooled[w].error for w in failed)
    assert "pool 1 of at most 3" in pooled[0].error
    here = draw_words(s, words, wids, 11, plan, workers=1)  # word 0 raises here instead
    for a, b in zip(pooled, here, strict=True):
        if a.error is None:
            assert np.array_equal(a.counts[0], b.counts[0])


@needs_fork
def test_three_broken_pools_mark_every_remaining_word(words, monkeypatch):
    monkeypatch.setattr(engine_mod, "SHARD_DRAWS", 500)
    wids = np.arange(len(words))
    out = draw_words(KillsChildren(words), words, wids, 0, DrawPlan("confirm", (50,)), workers=2)
    assert [wd.wid for wd in out] == list(wids) and all(wd.error is not None for wd in out)
    pools = {p for wd in out for p in (1, 2, 3, 4) if f"pool {p} of at most 3" in wd.error}
    assert pools == {1, 2, 3}
    assert any("no further pool was started" in wd.error for wd in out)


# --- the CLI, end to end ---------------------------------------------------------------------

_HEAD = (
    "import os, sys\n"
    "import numpy as np\n"
    "class S:\n"
    "    guarantee = 'ldp'\n"
    "    def __init__(self, epsilon, vocab):\n"
    "        self.epsilon, self.name = epsilon, 'plugin'\n"
    "        self.words = np.asarray(vocab, dtype=object)\n"
    "        self.index = {w: i for i, w in enumerate(vocab)}\n"
    "        k = len(vocab)\n"
    "        self.keep = np.exp(epsilon) / (np.exp(epsilon) + k - 1)\n"
    "    def sample(self, words, rng):\n"
)
_FOOT = "def make(epsilon, vocab):\n    return S(epsilon, vocab)\n"
_KRR_FROM = (  # k-RR at its claimed ε, drawing from GEN
    "        ids = np.asarray([self.index[w] for w in words])\n"
    "        keep = GEN.random(len(words)) < self.keep\n"
    "        other = GEN.integers(0, len(self.words) - 1, size=len(words))\n"
    "        other += other >= ids\n"
    "        return self.words[np.where(keep, ids, other)]\n"
)
PLUGINS = {
    "global_numpy": "GEN = None\n"
    + _HEAD
    + _KRR_FROM.replace("GEN.random(", "np.random.random(").replace("GEN.integers(", "np.random.randint(")
    + _FOOT,
    "prints": _HEAD
    + "        print('plugin chatter on stdout', len(words))\n"
    + "        os.write(1, b'plugin bytes on fd 1\\n')\n"
    + _KRR_FROM.replace("GEN", "rng")
    + _FOOT,
    "exits": _HEAD + "        sys.exit(3)\n" + _FOOT,
    "raises": _HEAD + "        raise RuntimeError('cannot sanitize ' + words[0])\n" + _FOOT,
    "os_exit": _HEAD + "        os._exit(1)\n" + _FOOT,
    "exit_on_import": "import sys\nsys.exit(3)\n" + _FOOT,
}


def _cli(tmp_path: Path, plugin: str, *extra: str) -> subprocess.CompletedProcess[str]:
    path = tmp_path / f"{plugin}.py"
    path.write_text(PLUGINS[plugin], encoding="utf-8")
    argv = [sys.executable, "-m", "dpcore", "audit-text", "--mechanism", f"{path}:make", "--epsilon", "1"]
    argv += ["--vocab-size", "300", "--screen-budget", "120000", "--samples", "2000", "--pairs", "5"]
    argv += ["--seed", "0", *extra]
    return subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=120)


def _one_line(err: str) -> str:
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1 and len(error_lines(lines[0])) == 1, err[-2000:]
    lines = error_lines(lines[0])
    assert "Traceback" not in err
    return lines[0]


def test_cli_global_state_plugin_is_reseeded_or_refused(tmp_path):
    p = _cli(tmp_path, "global_numpy", "--json", "--workers", "2")
    if p.returncode == 2:
        assert "rng contract" in _one_line(p.stderr)
        return
    assert p.returncode == 0, p.stderr[-2000:]
    d = json.loads(p.stdout)
    assert d["rng_contract"]["status"] == "global-state-reseeded"
    assert d["verdict"] != "violates" and not d["failures"]


@pytest.mark.parametrize("workers", ["1", "2"])
def test_cli_a_printing_plugin_cannot_corrupt_json(tmp_path, workers):
    p = _cli(tmp_path, "prints", "--json", "--workers", workers)
    assert p.returncode == 0, p.stderr[-2000:]
    d = json.loads(p.stdout)  # stdout holds the JSON alone
    assert d["mechanism"] == "plugin" and not d["failures"]
    assert "plugin chatter on stdout" in p.stderr and "plugin bytes on fd 1" in p.stderr
    assert "chatter" not in p.stdout and "bytes on fd 1" not in p.stdout


@pytest.mark.parametrize("mode", ["text", "json"])
def test_cli_a_plugin_calling_sys_exit_is_untested_not_a_bare_exit(tmp_path, mode):
    p = _cli(tmp_path, "exits", *(["--json"] if mode == "json" else []), "--workers", "1")
    assert p.returncode == 3, (p.returncode, p.stderr[-2000:])
    line = _one_line(p.stderr)
    assert "nothing could be tested" in line and "sys.exit(3)" in line
    if mode == "json":
        d = json.loads(p.stdout)
        assert d["verdict"] == "untested" and len(d["failures"]) == 300
        assert all("called sys.exit(3)" in m for m in d["failures"].values())
    else:
        assert "verdict: untested" in p.stdout and "failed words: 300" in p.stdout


def test_cli_a_plugin_raising_on_every_word_is_untested(tmp_path):
    p = _cli(tmp_path, "raises", "--json", "--workers", "2")
    assert p.returncode == 3, (p.returncode, p.stderr[-2000:])
    d = json.loads(p.stdout)
    assert d["verdict"] == "untested" and len(d["failures"]) == 300
    assert "RuntimeError" in _one_line(p.stderr)


@needs_fork
def test_cli_a_plugin_ending_its_worker_is_one_clear_line(tmp_path):
    p = _cli(tmp_path, "os_exit", "--workers", "2")
    assert p.returncode in (2, 3), (p.returncode, p.stderr[-2000:])
    line = _one_line(p.stderr)
    assert "worker process died" in line or "ended abruptly" in line
    if p.returncode == 3:
        assert "verdict: untested" in p.stdout


def test_cli_a_plugin_exiting_on_import_is_one_clear_line(tmp_path):
    p = _cli(tmp_path, "exit_on_import", "--json")
    assert p.returncode == 2 and p.stdout == ""
    assert "called sys.exit(3)" in _one_line(p.stderr)


def test_cli_help_documents_the_exit_statuses(capsys):
    from dpcore.cli import main

    with pytest.raises(SystemExit):
        main(["audit-text", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "exit status 3: nothing could be tested" in text and "rng contract" in text
