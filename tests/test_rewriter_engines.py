"""The same seed gives the same rewriter audit in this process, on 2 local workers and on Ray."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from dpcore.rewriter import audit_rewriter, load_rewriter
from dpcore.rewriter.draws import RewriterSource, draw_rewrites, plan_tasks
from dpcore.rewriter.pairs import corpus_sentences
from dpcore.validation import DPCoreError
from tests.conftest import RAY_GROUP

POOL = corpus_sentences()[:20]
PAIRS = [(POOL[0], POOL[1]), (POOL[2], POOL[3])]
SOURCE = RewriterSource(name="planted:copy", epsilon=1.0, options={"q": 0.3})
KW: dict[str, Any] = {"rewrites": 240, "seed": 11, "distinguishers": ("exact", "words", "chars")}


def _essence(result: Any) -> dict[str, Any]:
    d = result.to_dict()
    for k in ("seconds", "workers", "engine"):
        d.pop(k)
    return d


@pytest.fixture(scope="module")
def rewriter():
    return SOURCE.build()


@pytest.fixture(scope="module")
def local(rewriter):
    return _essence(audit_rewriter(rewriter, PAIRS, **KW))


def test_two_local_workers_give_the_same_result(rewriter, local) -> None:
    assert _essence(audit_rewriter(rewriter, PAIRS, workers=2, source=SOURCE, **KW)) == local


def test_a_pickled_rewriter_gives_the_same_result_on_workers(rewriter, local) -> None:
    assert _essence(audit_rewriter(rewriter, PAIRS, workers=2, **KW)) == local


def test_the_rewrites_do_not_depend_on_the_seed_of_other_chunks(rewriter) -> None:
    tasks = plan_tasks(PAIRS, 120)
    full = draw_rewrites(rewriter, tasks, seed=5)
    # the second pair alone draws what it drew among the others (its own streams)
    alone = draw_rewrites(rewriter, [t for t in tasks if t.pair == 1], seed=5)
    assert alone[(1, 0)] == full[(1, 0)] and alone[(1, 1)] == full[(1, 1)]
    assert draw_rewrites(rewriter, tasks, seed=6) != full


@RAY_GROUP
def test_ray_gives_the_same_result(rewriter, local, ray_runtime) -> None:
    assert _essence(audit_rewriter(rewriter, PAIRS, workers=2, engine="ray", source=SOURCE, **KW)) == local


def test_an_unknown_engine_is_refused(rewriter) -> None:
    with pytest.raises(DPCoreError, match="engine"):
        audit_rewriter(rewriter, PAIRS, engine="dask", **KW)


def test_a_rewriter_that_cannot_be_pickled_says_so() -> None:
    rw = load_rewriter("planted:copy", epsilon=1.0)
    rw.hook = lambda: None  # a lambda does not pickle
    with pytest.raises(DPCoreError, match="cannot be sent to workers"):
        audit_rewriter(rw, PAIRS, workers=2, check=False, **KW)


def test_a_worker_that_dies_ends_the_audit_with_one_clear_error() -> None:
    plugin = f"{Path(__file__).resolve().parent / 'plugins' / 'rewriters.py'}:dies_in_worker"
    source = RewriterSource(name=plugin, epsilon=1.0, allow_user_code=True)
    rw = source.build()
    with pytest.raises(DPCoreError, match="worker process of the rewriter audit ended abruptly"):
        audit_rewriter(rw, PAIRS, workers=2, source=source, **KW)
