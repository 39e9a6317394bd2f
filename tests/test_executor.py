"""dpcore's one executor (:mod:`dpcore.executor`, issue 60 item 4).

Every engine gives the same results; a worker that dies is survived the same way by every pool
(the task is run again, or reported lost); a run whose workers keep dying ends with one error;
a run given up kills its workers at once. The pools of the word audit, the rewriter audit and
the corpus engine are this one (``tests/test_textaudit_structure.py`` keeps it so), and
``tests/test_no_orphans.py`` checks each of them against the real CLI.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest

from dpcore.executor import MAX_POOLS, Lost, WorkersDied, run_tasks
from dpcore.validation import DPCoreError
from tests.conftest import RAY_GROUP

needs_fork = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="fork start method (Linux)")


def square_plus(offset: int, x: int) -> int:
    return x * x + offset


def double(offset: int) -> int:
    return 2 * offset


def pid_of(_state: object, _x: int) -> int:
    return os.getpid()


def dies_once_per_item(folder: str, x: int) -> int:
    """Ends its process the first time it sees ``x`` (a mark on disk), then answers."""
    mark = Path(folder) / f"{x}.seen"
    if x % 5 == 0 and not mark.exists():
        mark.touch()
        os._exit(7)
    return x + 100


def always_dies(_state: object, x: int) -> int:
    if x % 10 == 2:
        os._exit(7)
    return x


def dies_from_two(_state: object, x: int) -> int:
    if x >= 2:
        os._exit(7)
    return x


def inverse(_state: object, x: int) -> float:
    return 1 / x


def sleeps(_state: object, x: int) -> int:
    if x > 0:
        time.sleep(3600)
    return os.getpid()


ITEMS = list(range(23))
EXPECTED = [x * x + 5 for x in ITEMS]


def _in_order(pairs) -> list:
    got = dict(pairs)
    return [got[i] for i in range(len(got))]


@needs_fork
@pytest.mark.parametrize(
    "settings",
    [
        {"workers": 1},
        {"workers": 2},
        {"workers": 2, "start": "spawn"},
        {"workers": 2, "ordered": True},
        {"workers": 2, "in_flight": 1},
    ],
    ids=lambda d: ",".join(f"{k}={v}" for k, v in d.items()),
)
def test_every_local_way_gives_the_same_results(settings) -> None:
    got = list(run_tasks(square_plus, ITEMS, state=5, **settings))
    assert sorted(i for i, _ in got) == list(range(len(ITEMS)))
    assert _in_order(got) == EXPECTED
    if settings.get("ordered"):
        assert [i for i, _ in got] == list(range(len(ITEMS)))


@needs_fork
def test_build_turns_the_state_into_the_tasks_state_once_per_worker() -> None:
    got = list(run_tasks(square_plus, ITEMS, state=2.5, build=double, workers=2, start="spawn"))
    assert _in_order(got) == EXPECTED
    assert _in_order(run_tasks(square_plus, ITEMS, state=2.5, build=double, workers=1)) == EXPECTED


@needs_fork
def test_two_runs_in_two_threads_each_fork_their_own_state() -> None:
    """A server runs requests in threads: each run's forked workers inherit that run's state."""
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(2) as threads:
        runs = [
            threads.submit(lambda k=k: _in_order(run_tasks(square_plus, ITEMS, state=k, workers=2)))
            for k in (5, 7)
        ]
        five, seven = (r.result() for r in runs)
    assert five == EXPECTED and seven == [x * x + 7 for x in ITEMS]


@needs_fork
def test_the_tasks_run_in_worker_processes() -> None:
    pids = {pid for _, pid in run_tasks(pid_of, range(50), workers=2)}
    assert pids and os.getpid() not in pids
    assert {pid for _, pid in run_tasks(pid_of, range(3), workers=1)} == {os.getpid()}


@needs_fork
@pytest.mark.parametrize("ordered", [False, True])
def test_a_task_lost_with_its_worker_is_run_again_by_a_fresh_pool(tmp_path: Path, ordered: bool) -> None:
    items = list(range(8))  # 0 and 5 each end a worker once: two pools break, a third finishes
    got = list(
        run_tasks(dies_once_per_item, items, state=str(tmp_path), workers=2, ordered=ordered, in_flight=2)
    )
    assert _in_order(got) == [x + 100 for x in items]
    if ordered:
        assert [i for i, _ in got] == items
    assert sorted(p.name for p in tmp_path.glob("*.seen")) == ["0.seen", "5.seen"]


@needs_fork
def test_workers_that_keep_dying_end_the_run_with_one_error() -> None:
    died = f"worker process of the test run ended abruptly .*{MAX_POOLS} times"
    with pytest.raises(WorkersDied, match=died):
        list(run_tasks(always_dies, range(6), workers=2, what="the test run"))


@needs_fork
def test_reported_losses_name_their_pool_and_the_rest_is_not_run() -> None:
    # every task from 2 on ends its worker: each pool loses at most the 2 tasks in flight
    got = dict(run_tasks(dies_from_two, range(40), workers=2, in_flight=2, on_lost="report"))
    assert sorted(got) == list(range(40))
    lost = {i: v.reason for i, v in got.items() if isinstance(v, Lost)}
    assert 2 in lost and "pool 1 of at most 3" in lost[2]
    assert all(got[i] == i for i in got if i not in lost)
    assert any("no further pool was started" in why for why in lost.values())


@needs_fork
def test_a_run_given_up_kills_its_workers_at_once() -> None:
    """A caller that stops reading (Ctrl-C, an error) leaves no worker finishing its task."""
    run = run_tasks(sleeps, [0, 0, 1, 1, 1, 1], workers=2, ordered=True)
    first = next(run)[1]  # a worker's pid; the others now sleep in their tasks
    run.close()
    deadline = time.monotonic() + 30  # a bound on waiting for a state, not a speed requirement
    while time.monotonic() < deadline:
        try:
            os.kill(first, 0)
        except ProcessLookupError:
            break
        time.sleep(0.05)
    else:
        pytest.fail(f"worker {first} still alive 30 s after the run was given up")


@pytest.mark.parametrize("workers", [1, pytest.param(2, marks=needs_fork)])
def test_a_task_error_is_raised_as_it_is(workers: int) -> None:
    with pytest.raises(ZeroDivisionError):
        list(run_tasks(inverse, [1, 0, 2], workers=workers))


@pytest.mark.parametrize(
    ("kwargs", "needle"),
    [
        ({"engine": "dask"}, "unknown engine 'dask'"),
        ({"start": "forkserver"}, "start must be"),
        ({"on_lost": "ignore"}, "on_lost must be"),
        ({"ordered": True, "on_lost": "report"}, "ordered results need"),
    ],
)
def test_bad_settings_are_one_clear_error(kwargs, needle) -> None:
    with pytest.raises(DPCoreError, match=needle):
        list(run_tasks(square_plus, ITEMS, state=5, workers=2, **kwargs))


@RAY_GROUP
def test_ray_gives_the_same_results(ray_runtime) -> None:
    assert _in_order(run_tasks(square_plus, ITEMS, state=5, workers=2, engine="ray")) == EXPECTED
    got = list(run_tasks(square_plus, ITEMS, state=2.5, build=double, workers=2, engine="ray", ordered=True))
    assert [i for i, _ in got] == list(range(len(ITEMS))) and [v for _, v in got] == EXPECTED


@RAY_GROUP
def test_ray_runs_a_task_lost_with_its_worker_again(ray_runtime, tmp_path: Path) -> None:
    items = [1, 5, 4]  # 5 ends its Ray worker once
    got = _in_order(run_tasks(dies_once_per_item, items, state=str(tmp_path), workers=2, engine="ray"))
    assert got == [101, 105, 104] and (tmp_path / "5.seen").exists()
