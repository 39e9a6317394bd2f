"""Issue 24: the vector Monte-Carlo on both cores — same result for any number of workers, the
same result as before the change, a fused per-chunk count, bounded memory, in-place samplers."""

from __future__ import annotations

import json
import os
import re
import threading
import tracemalloc

import numpy as np
import pytest

import dpcore.audit.montecarlo as mc
from dpcore.audit import audit
from dpcore.audit.runner import blackbox_draws, plan_monte_carlo
from dpcore.flawed.samplers import dptext_noise, dptext_noise_raw, dptext_noise_resample
from dpcore.mechanisms import VECTOR_MECHANISMS, create_mechanism
from dpcore.mechanisms.base import BufferedSampler, LaplaceNoiseMechanism
from dpcore.mechanisms.samplers import laplace_sample_eq7, open_uniform
from dpcore.parallel import MAX_WORKERS, default_workers, resolve_workers
from dpcore.rng import spawn_rngs
from dpcore.validation import DPCoreError
from tests.conftest import Cli

ALL = VECTOR_MECHANISMS.names()
VOLATILE = {"elapsed_s", "workers"}


def _legacy_counts(mech, trials: int, seed: int) -> np.ndarray:  # type: ignore[no-untyped-def]
    """The single-threaded loop before issue 24: four streams, mech.sample, count, bincount."""
    n = mech.dim
    rngs = spawn_rngs(seed, 4)
    halves = (trials // 2, trials - trials // 2)
    hist = np.zeros((2, 2, n + 1), dtype=np.int64)
    rows = max(1, mc.CHUNK_ELEMENTS // n)
    for h in (0, 1):
        for b in (0, 1):
            x, done = np.full(n, float(b)), 0
            while done < halves[h]:
                m = min(rows, halves[h] - done)
                k = np.count_nonzero(mech.sample(x, m, rngs[2 * h + b]) >= 0.5, axis=1)
                hist[h, b] += np.bincount(k, minlength=n + 1)
                done += m
    return hist


@pytest.mark.parametrize("name", ALL)
@pytest.mark.parametrize("dim", [1, 9])
def test_same_histograms_for_any_workers_and_as_before(name: str, dim: int) -> None:
    mech = create_mechanism(name, epsilon=1.0, dim=dim)
    want = _legacy_counts(mech, 30_001, 7)
    for workers in (1, 2, 4):
        got = mc.sample_counts(mech, 30_001, 7, workers=workers)
        assert np.array_equal(got.hist, want), (name, dim, workers)
        assert got.workers == min(workers, mc.STREAMS)


def test_audit_result_does_not_depend_on_workers() -> None:
    runs = [
        audit("adept", dim=32, epsilon=1.0, method="mc", trials=200_000, seed=3, workers=w).to_dict()
        for w in (1, 2, 3)
    ]
    assert [r["workers"] for r in runs] == [1, 2, 3]
    strip = [{k: v for k, v in r.items() if k not in VOLATILE} for r in runs]
    assert strip[0] == strip[1] == strip[2]
    assert strip[0]["streams"] == mc.STREAMS == 4 and "spawn(4)" in strip[0]["stream_scheme"]


def test_cross_check_does_not_depend_on_workers() -> None:
    mech = create_mechanism("gaussian", epsilon=1.0, dim=5)
    a = mc.check_declared_probabilities(mech, 4, draws=200_000, workers=1)
    b = mc.check_declared_probabilities(mech, 4, draws=200_000, workers=2)
    assert a == b and a["agrees"]


@pytest.mark.parametrize("dim", [*range(1, 41), 63, 100, 255, 2040, 2041, 2048, 4095, 4096])
def test_fused_row_count_equals_count_nonzero(dim: int) -> None:
    rng = np.random.default_rng(dim)
    rows = max(3, 20_000 // dim)
    count = mc.RowCounter(dim, rows)
    for m in (rows, rows - 1, 1):
        z = rng.choice([-1.0, 0.4999999999, 0.5, 0.75, np.nan], size=(m, dim))
        z[0] = 1.0  # a row of all ones: bytes at their largest
        assert np.array_equal(count(z), np.count_nonzero(z >= 0.5, axis=1)), (dim, m)


@pytest.mark.parametrize("name", ALL)
def test_sample_into_gives_the_values_of_sample(name: str) -> None:
    mech = create_mechanism(name, epsilon=2.0, dim=6)
    assert isinstance(mech, BufferedSampler)
    for x in (np.zeros(6), np.ones(6), np.linspace(0, 1, 6)):
        want = mech.sample(x, 1001, np.random.default_rng(1))
        out, work = np.empty((1001, 6)), np.empty((1001, 6))
        got = mech.sample_into(x, out, np.random.default_rng(1), work)
        assert got is out and np.array_equal(got, want)
    with pytest.raises(DPCoreError, match="out must be"):
        mech.sample_into(np.zeros(6), np.empty((10, 6), dtype=np.float32), np.random.default_rng(0))


def test_a_subclass_is_audited_through_the_code_it_redefines() -> None:
    """An inherited in-place fast path must never bypass a subclass's own noise() or sample()."""

    class Shifted(LaplaceNoiseMechanism):
        name = "shifted"
        scale = 1.0

        def noise(self, shape, rng):  # type: ignore[no-untyped-def]
            return np.full(shape, 5.0)

    class Zeroed(LaplaceNoiseMechanism):
        name = "zeroed"
        scale = 1.0

        def sample(self, x, size, rng):  # type: ignore[no-untyped-def]
            return super().sample(x, size, rng) * 0.0

    out = np.empty((4, 3))
    assert np.all(Shifted(epsilon=1, dim=3).sample_into(np.zeros(3), out, np.random.default_rng(0)) == 5.0)
    assert np.all(Zeroed(epsilon=1, dim=3).sample_into(np.ones(3), out, np.random.default_rng(0)) == 0.0)
    assert mc.sample_counts(Shifted(epsilon=1, dim=3), 1000, 0, workers=2).total[0, 3] == 1000


def test_in_place_samplers_are_bit_identical_to_the_textbook_formulas() -> None:
    for seed in range(3):
        k = np.random.default_rng(seed).integers(0, 2**53, size=(400, 9), dtype=np.int64)
        u = (k.astype(np.float64) + 0.5) / 2**53
        assert open_uniform((400, 9), np.random.default_rng(seed)).tobytes() == u.tobytes()
        v = u - 0.5
        out, work = np.empty((400, 9)), np.empty((400, 9))
        got = laplace_sample_eq7(2.5, (400, 9), np.random.default_rng(seed), out=out, work=work)
        assert got is out and np.array_equal(got, -2.5 * np.sign(v) * np.log1p(-2.0 * np.abs(v)))
        raw = dptext_noise_raw(1.5, 5000, np.random.default_rng(seed))
        assert np.array_equal(dptext_noise(1.5, 5000, np.random.default_rng(seed), out=np.empty(5000)),
                              np.where(np.isnan(raw), 0.0, raw))  # fmt: skip
        # resampling: same draws, the finite ones kept in order (the pre-issue-24 algorithm)
        rng, want, filled = np.random.default_rng(seed), np.empty(777), 0
        while filled < 777:
            d = dptext_noise_raw(1.5, max(2 * (777 - filled), 16), rng)
            keep = d[~np.isnan(d)][: 777 - filled]
            want[filled : filled + keep.size] = keep
            filled += keep.size
        assert np.array_equal(dptext_noise_resample(1.5, 777, np.random.default_rng(seed)), want)


def test_memory_is_bounded_by_the_chunk_not_the_trials() -> None:
    mech = create_mechanism("laplace", epsilon=1.0, dim=32)
    rows, out, work = mc.chunk_buffers(mech, 10**9)
    assert rows * 32 <= mc.CHUNK_ELEMENTS and out is not None and out.nbytes == work.nbytes <= 2 * 2**20
    peaks = []
    for trials in (100_000, 1_000_000):
        tracemalloc.start()
        mc.sample_counts(mech, trials, 0, workers=2)
        peaks.append(tracemalloc.get_traced_memory()[1])
        tracemalloc.stop()
    # Two streams at once, each with out + work (2 MiB each) and a 256 KiB bit buffer.
    assert peaks[1] <= 1.1 * peaks[0] + 2**20, peaks
    assert peaks[1] < 16 * 2**20, peaks


def test_progress_is_reported_from_the_calling_thread() -> None:
    mech = create_mechanism("laplace", epsilon=1.0, dim=64)
    calls: list[tuple[int, int, int]] = []
    mc.sample_counts(
        mech, 300_000, 0, workers=2, progress=lambda d, t: calls.append((d, t, threading.get_ident()))
    )
    assert calls and calls[-1][:2] == (600_000, 600_000)
    assert {c[2] for c in calls} == {threading.get_ident()}


def test_an_exception_in_progress_stops_every_worker() -> None:
    class Stop(Exception):
        pass

    def progress(done: int, total: int) -> None:
        raise Stop

    before = threading.active_count()
    with pytest.raises(Stop):
        mc.sample_counts(
            create_mechanism("gaussian", epsilon=1.0, dim=64), 4_000_000, 0, workers=2, progress=progress
        )
    assert threading.active_count() == before


def test_a_failing_sampler_in_a_worker_is_a_clear_error() -> None:
    class Bad:
        name, epsilon, dim, claimed_epsilon, true_epsilon, delta = "bad", 1.0, 4, 1.0, None, 0.0

        def sample(self, x, size, rng):  # type: ignore[no-untyped-def]
            return np.zeros((size, 3))

    with pytest.raises(DPCoreError, match="returned shape"):
        audit(Bad(), method="mc", trials=1000, seed=0, workers=2)


@pytest.mark.parametrize("bad", [0, MAX_WORKERS + 1, "x", 2.5, -1])
def test_workers_are_validated(bad: object) -> None:
    with pytest.raises(DPCoreError, match="workers"):
        resolve_workers(bad)
    with pytest.raises(DPCoreError, match="workers"):
        audit("laplace", dim=2, epsilon=1.0, method="mc", trials=100, seed=0, workers=bad)  # type: ignore[arg-type]


def test_default_workers_are_the_machines_cores(monkeypatch: pytest.MonkeyPatch) -> None:
    assert resolve_workers(None) == default_workers() >= 1
    assert resolve_workers("3") == 3
    monkeypatch.delenv("DPCORE_WORKERS", raising=False)  # the suite sets 1 (tests/conftest.py)
    assert default_workers() == len(os.sched_getaffinity(0))


def test_dpcore_workers_sets_the_default_and_is_validated(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DPCORE_WORKERS", " 3 ")
    assert default_workers() == 3 and resolve_workers(None) == 3 and resolve_workers(2) == 2
    for bad in ("0", "65", "two", "1.5", "-1"):
        monkeypatch.setenv("DPCORE_WORKERS", bad)
        message = f"DPCORE_WORKERS must be a whole number from 1 to 64, not '{re.escape(bad)}'"
        with pytest.raises(DPCoreError, match=message):
            resolve_workers(None)
        assert resolve_workers(4) == 4  # an explicit count does not read it
    monkeypatch.setenv("DPCORE_WORKERS", "")
    assert default_workers() == len(os.sched_getaffinity(0))


def test_a_bad_dpcore_workers_is_one_line_and_exit_2(monkeypatch: pytest.MonkeyPatch, cli: Cli) -> None:
    monkeypatch.setenv("DPCORE_WORKERS", "many")
    argv = ["audit", "--mechanism", "laplace", "--dim", "2", "--epsilon", "1", "--method", "mc"]
    argv += ["--trials", "1000", "--seed", "0", "--json"]
    message = "DPCORE_WORKERS must be a whole number from 1 to 64, not 'many'"
    run = cli(argv[:-1])
    assert run.code == 2 and run.out == "" and run.err.strip() == f"dpcore: error: {message}"
    run = cli(argv)  # --json: the error as one JSON object
    assert run.code == 2 and run.out == ""
    assert json.loads(run.err) == {"error": message, "type": "invalid-input", "exit_code": 2}
    monkeypatch.setenv("DPCORE_WORKERS", "2")  # the same run with the variable set right
    two = cli(argv).json()
    monkeypatch.setenv("DPCORE_WORKERS", "1")
    one = cli(argv).json()
    assert two["workers"] == 2 and one["workers"] == 1
    same = ("empirical_epsilon", "lower_bound", "upper_bound", "verdict", "guess1_d", "streams")
    assert {k: two[k] for k in same} == {k: one[k] for k in same}  # not on the workers


def test_plan_for_the_link_from_issue_24() -> None:
    """mechs=laplace,gaussian, n = 1…1024, 10⁶ trials: 8.19e9 draws, over a 3e8 cap."""
    dims = [2**k for k in range(11)]
    assert blackbox_draws(["laplace", "gaussian"], dims, 1_000_000) == 8_188_000_000
    plan = plan_monte_carlo(
        ["laplace", "gaussian"], dims, trials=1_000_000, max_draws=300_000_000,
        trial_options=[1_000, 10_000, 20_000, 50_000],
    )  # fmt: skip
    assert plan.mc_dims == (1, 2, 4, 8, 16, 32) and plan.left_out == (64, 128, 256, 512, 1024)
    assert plan.draws == 4 * 1_000_000 * 63 <= 300_000_000
    assert plan.largest_trials == 20_000  # 4 · 2047 · 20,000 = 1.6e8 ≤ 3e8 < 4 · 2047 · 50,000
    note = plan.note()
    assert "left out for n = 64, 128, 256, 512, 1,024" in note and "8.19e+09" in note and "n = 1…32" in note
    exact = plan_monte_carlo(["laplace"], dims, trials=1_000, max_draws=300_000_000)
    assert exact.complete and exact.note() is None and exact.largest_trials == 300_000_000 // (2 * 2047)
    none = plan_monte_carlo(["laplace"], [4096], trials=10**8, max_draws=10**4)
    assert none.mc_dims == () and "no dimension fits" in none.note() and none.largest_trials is None
    model = plan_monte_carlo(["laplace"], dims, trials=10**8, max_draws=10**6, model_based=True)
    assert model.complete and model.draws == 0
