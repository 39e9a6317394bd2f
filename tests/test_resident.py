"""The process's memory budget for heavy objects (:mod:`dpcore.models.resident`): least recently
used objects leave when a new one takes the total over the budget, the new one always stays, a
failed load is not cached, two threads load once, and vocabularies count their vectors only once
they are read."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from dpcore.models import resident
from dpcore.validation import DPCoreError

MIB = 2**20


class Blob:
    """A stand-in for a model: ``mib`` MiB that it reports through ``resident_bytes``."""

    def __init__(self, name: str, mib: int) -> None:
        self.name, self.mib = name, mib

    def resident_bytes(self) -> int:
        return self.mib * MIB


LOADS: list[str] = []


@resident.resident("test blob")
def load_blob(name: str, mib: int = 10) -> Blob:
    LOADS.append(name)
    return Blob(name, mib)


@pytest.fixture(autouse=True)
def _fresh(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv(resident.BUDGET_ENV, "32")
    load_blob.cache_clear()
    LOADS.clear()
    yield
    load_blob.cache_clear()


def _cached_blobs() -> list[str]:
    return [e.key for e in resident.entries() if e.kind == "test blob"]


def test_cached_by_arguments() -> None:
    a = load_blob("a")
    assert load_blob("a") is a and load_blob(name="a") is not None
    assert load_blob("b") is not a
    assert LOADS == ["a", "a", "b"]  # a keyword call is its own key, as with functools.lru_cache


def test_least_recently_used_leaves_first() -> None:
    load_blob("a")
    load_blob("b")
    load_blob("c")  # 30 MiB: fits
    load_blob("a")  # a is now the most recent
    load_blob("d")  # 40 MiB: b, the least recently used, leaves
    keys = _cached_blobs()
    assert not any("'b'" in k for k in keys) and len(keys) == 3
    assert resident.total_bytes() >= 30 * MIB
    load_blob("b")
    assert LOADS == ["a", "b", "c", "d", "b"]  # loaded again, identically


def test_the_new_object_always_stays() -> None:
    load_blob("a")
    big = load_blob("big", 100)  # over the whole budget: everything else leaves, it stays
    assert [k for k in _cached_blobs()] == ["tests.test_resident.load_blob('big', 100)"]
    assert load_blob("big", 100) is big


def test_a_failed_load_is_not_cached() -> None:
    calls = []

    @resident.resident("test blob")
    def flaky() -> Blob:
        calls.append(1)
        if len(calls) == 1:
            raise RuntimeError("disk hiccup")
        return Blob("ok", 1)

    with pytest.raises(RuntimeError):
        flaky()
    assert flaky().name == "ok" and len(calls) == 2
    flaky.cache_clear()


def test_two_threads_load_once() -> None:
    gate = threading.Event()
    calls = []

    @resident.resident("test blob")
    def slow() -> Blob:
        calls.append(1)
        gate.wait(10)
        return Blob("slow", 1)

    got: list[Blob] = []
    threads = [threading.Thread(target=lambda: got.append(slow())) for _ in range(2)]
    for t in threads:
        t.start()
    gate.set()
    for t in threads:
        t.join(10)
    assert len(calls) == 1 and len(got) == 2 and got[0] is got[1]
    slow.cache_clear()


@pytest.mark.parametrize("raw", ["0", "15", "lots", "1e3", str((1 << 20) + 1)])
def test_a_bad_budget_is_a_clear_error(monkeypatch: pytest.MonkeyPatch, raw: str) -> None:
    monkeypatch.setenv(resident.BUDGET_ENV, raw)
    with pytest.raises(DPCoreError, match="DPCORE_RESIDENT_MIB must be a whole number from 16"):
        resident.budget_bytes()


def test_default_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(resident.BUDGET_ENV)
    assert resident.budget_bytes() == resident.DEFAULT_BUDGET_MIB * MIB


def test_a_vocabulary_counts_its_vectors_once_read_and_reads_them_again_when_dropped() -> None:
    from dpcore.text.vocab import _build_cached

    # a fresh one: another test may have read the vectors of the cached one
    vocab = _build_cached.__wrapped__("glove", 300, None)
    words_only = vocab.resident_bytes()
    assert not vocab.rows.loaded
    assert vocab.dim == 50 and not vocab.rows.loaded  # the dimension needs no rows
    vectors = vocab.vectors
    assert vocab.rows.loaded and vectors.dtype == np.float64 and vectors.shape == (300, 50)
    assert not vectors.flags.writeable
    np.testing.assert_array_equal(vocab.sq_norms, np.einsum("ij,ij->i", vectors, vectors))
    assert vocab.resident_bytes() == words_only  # the rows count on their own
    (held,) = [e for e in resident.entries() if e.kind == "vocabulary vectors" and "300 rows" in e.key]
    assert held.bytes == vectors.nbytes + vocab.sq_norms.nbytes

    load_blob("big", 40)  # over the budget of 32 MiB: the rows are let go …
    assert not vocab.rows.loaded
    assert not [e for e in resident.entries() if e.kind == "vocabulary vectors" and "300 rows" in e.key]
    np.testing.assert_array_equal(vectors, vocab.rows.vectors)  # … the array handed out stays valid
    assert vocab.vectors is not vectors  # … and the next use reads the same values again
    np.testing.assert_array_equal(vocab.vectors, vectors)


def test_lazy_rows_equal_the_embedding_and_pickle_small() -> None:
    import pickle

    from dpcore.text.public_tables import load_glove_table
    from dpcore.text.vocab import _build_cached

    vocab = _build_cached.__wrapped__("glove", 2000, None, True)  # fresh: the table's first 2,000 rows
    lazy = pickle.dumps(vocab)
    table = np.asarray(load_glove_table().vectors[:2000], dtype=np.float64)
    np.testing.assert_array_equal(vocab.vectors, table)
    # rows of an embedding file travel as its path and the row ids, read or not
    assert len(lazy) == len(pickle.dumps(vocab)) < vocab.vectors.nbytes / 4
    back = pickle.loads(lazy)
    assert not back.rows.loaded
    np.testing.assert_array_equal(back.vectors, vocab.vectors)


def test_a_dropped_vocabulary_is_built_again_identically(monkeypatch: pytest.MonkeyPatch) -> None:
    from dpcore.text.vocab import build_vocabulary

    first = build_vocabulary("glove", size=400)
    kept = first.vectors.copy()
    monkeypatch.setenv(resident.BUDGET_ENV, "16")
    load_blob("fill", 17)  # over the budget: the vocabulary leaves
    again = build_vocabulary("glove", size=400)
    assert again is not first
    np.testing.assert_array_equal(again.vectors, kept)
    assert again.words.tolist() == first.words.tolist()


def test_room_is_made_before_an_expected_load() -> None:
    seen: list[list[str]] = []

    @resident.resident("test blob", expect=lambda mib: mib * MIB)
    def big(mib: int) -> Blob:
        seen.append(_cached_blobs())  # what is cached while this loads
        return Blob("big", mib)

    load_blob("a")
    load_blob("b")
    big(20)  # 20 + 20 > 32: a leaves before the load, b stays
    assert seen == [["tests.test_resident.load_blob('b')"]]
    big.cache_clear()
