"""The nearest-word search of the noise-plus-nearest-word mechanisms (dpcore.text.nearest):
float32 products, decisions exactly those of the float64 reference, and seeded streams unchanged
from the float64-only implementation it replaced."""

from __future__ import annotations

import threading

import numpy as np
import pytest
import threadpoolctl
from threadpoolctl import threadpool_info

from dpcore.flawed.text import InputAwareVickrey
from dpcore.text.mahalanobis import Mahalanobis
from dpcore.text.mechanisms import Feyisetan
from dpcore.text.nearest import (
    POSITION_CHUNK,
    exact_sq_distances,
    nearest,
    nearest_k,
    nearest_reference,
    nearest_two,
    nearest_workers,
)
from dpcore.text.vickrey import VickreyCMP, VickreyMahalanobis, vickrey_first_probability
from dpcore.text.vocab import Vocabulary, build_vocabulary


@pytest.fixture(scope="module")
def glove() -> Vocabulary:
    return build_vocabulary("glove", size=2000)


def _noisy(vocab: Vocabulary, n: int, eps: float, rng: np.random.Generator) -> np.ndarray:
    z = rng.standard_normal((n, vocab.dim))
    z *= (rng.gamma(vocab.dim, 1.0 / eps, n) / np.linalg.norm(z, axis=1))[:, None]
    return vocab.vectors[rng.integers(0, len(vocab), n)] + z


def _assert_reference(points: np.ndarray, vocab: Vocabulary, k: int, **kw) -> None:
    ids, d2 = nearest_k(points, vocab, k, **kw)
    ref_ids, ref_d2 = nearest_reference(points, vocab, k)
    np.testing.assert_array_equal(ids, ref_ids)
    np.testing.assert_array_equal(d2, ref_d2)  # bit for bit


def test_exact_distances_are_per_pair_and_accurate(glove: Vocabulary) -> None:
    rng = np.random.default_rng(0)
    a, b = rng.normal(0, 5, (300, glove.dim)), glove.vectors[rng.integers(0, len(glove), 300)]
    d = exact_sq_distances(a, b)
    np.testing.assert_allclose(d, ((a - b) ** 2).sum(axis=1), rtol=1e-13)
    np.testing.assert_array_equal(exact_sq_distances(a[7:9], b[7:9]), d[7:9])  # no batch effect


@pytest.mark.parametrize("eps", [0.3, 1.0, 10.0, 100.0])
def test_decoder_equals_float64_reference_on_noisy_points(glove: Vocabulary, eps: float) -> None:
    pts = _noisy(glove, 150, eps, np.random.default_rng(int(eps * 10)))
    for k in (1, 2, 3):
        _assert_reference(pts, glove, k, max_elements=20 * len(glove))  # 8 blocks: workers share


def test_decoder_equals_reference_at_constructed_near_ties(glove: Vocabulary) -> None:
    """Points at the midpoint of a word and its nearest neighbour (a tie for the nearest) and on
    the bisector of a word's 2nd and 3rd neighbours (a tie for the second), each moved by
    offsets from 0 to 1e-6 of the pair's difference, both signs: below float32 resolution, the
    float32 gap cannot decide and the rows must be re-checked in float64."""
    rng = np.random.default_rng(1)
    v = glove.vectors
    a = rng.choice(len(glove), 60, replace=False)
    nbr = nearest_reference(v[a], glove, 3)[0]
    b, c = nbr[:, 1], nbr[:, 2]
    mid = (v[a] + v[b]) / 2
    cb = v[c] - v[b]
    lam = ((v[c] ** 2).sum(1) - (v[b] ** 2).sum(1) - 2 * (v[a] * cb).sum(1)) / (2 * (cb**2).sum(1))
    bisect = v[a] + lam[:, None] * cb
    offsets = np.array([0.0, 1e-16, 1e-15, 1e-13, 1e-11, 1e-9, 1e-7, 1e-6])
    sign = rng.choice([-1.0, 1.0], size=(len(offsets), 60, 1))
    tie1 = (mid[None] + offsets[:, None, None] * sign * (v[a] - v[b])[None]).reshape(-1, glove.dim)
    tie2 = (bisect[None] + offsets[:, None, None] * sign * cb[None]).reshape(-1, glove.dim)
    near1 = nearest(tie1, glove)
    assert np.all((near1 == np.tile(a, len(offsets))) | (near1 == np.tile(b, len(offsets))))  # real ties
    _assert_reference(tie1, glove, 1)
    _assert_reference(tie1, glove, 2)
    _assert_reference(tie2, glove, 2)
    _assert_reference(tie2, glove, 3)


def test_exact_ties_and_many_equidistant_words() -> None:
    """Duplicate vectors (exact ties: the lower id wins) and a point equidistant, up to rounding,
    from every word (the centre of a sphere of words: every word is a candidate, and rows beyond
    the re-check budget take the reference path)."""
    rng = np.random.default_rng(2)
    m, n_v = 8, 700
    vec = rng.standard_normal((n_v, m))
    vec /= np.linalg.norm(vec, axis=1)[:, None]
    vec[1::7] = vec[0::7][: len(vec[1::7])]  # duplicates
    vocab = Vocabulary.create(
        embedding="test", words=[f"w{i}" for i in range(n_v)], vectors=vec,
        frequency=np.ones(n_v), frequency_source="uniform",
    )  # fmt: skip
    dup = vec[0::7][:40] + rng.normal(0, 1e-3, (40, m))
    centre = rng.normal(0, 1e-17, (120, m))  # 120 × 700 candidates > the re-check budget
    for pts in (dup, centre):
        for k in (1, 2, 3):
            _assert_reference(pts, vocab, k)
    first = nearest(vec[0::7][:40], vocab)
    np.testing.assert_array_equal(first, np.arange(0, n_v, 7)[:40])  # the lower of two equal words


def test_embeddings_beyond_float32_range_take_the_float64_path() -> None:
    rng = np.random.default_rng(3)
    vec = rng.standard_normal((300, 6)) * 1e17  # ‖v‖² ≈ 1e35: scores would overflow float32
    vocab = Vocabulary.create(
        embedding="test", words=[f"w{i}" for i in range(300)], vectors=vec,
        frequency=np.ones(300), frequency_source="uniform",
    )  # fmt: skip
    pts = vec[rng.integers(0, 300, 30)] + rng.standard_normal((30, 6)) * 1e17
    _assert_reference(pts, vocab, 2)


def test_search_restores_blas_threads_also_when_concurrent(glove: Vocabulary) -> None:
    def blas_threads() -> list[int]:
        return [i["num_threads"] for i in threadpool_info() if i.get("user_api") == "blas"]

    pts = _noisy(glove, 600, 3.0, np.random.default_rng(4))
    want = nearest_reference(pts[:40], glove, 2)[0]
    got: list[np.ndarray] = []

    def run() -> None:
        got.append(nearest_k(pts, glove, 2, max_elements=10 * len(glove))[0])

    # a test about threads sets its own (tests/conftest.py gives each pytest worker one): with two
    # BLAS threads the search runs on two worker threads, each with single-threaded BLAS
    with threadpoolctl.threadpool_limits(limits=2, user_api="blas"):
        before = blas_threads()
        assert nearest_workers() == 2
        threads = [threading.Thread(target=run) for _ in range(3)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert blas_threads() == before
    assert len(got) == 3 and all(np.array_equal(g, got[0]) for g in got)
    np.testing.assert_array_equal(got[0][:40], want)


# ---- seeded streams: the same ids as the float64-only implementation ---------------------------
def _old_scores(points: np.ndarray, vocab: Vocabulary) -> np.ndarray:
    s = points @ vocab.vectors.T
    s *= -2.0
    s += vocab.sq_norms[None, :]
    return s


def _old_nearest_two(points: np.ndarray, vocab: Vocabulary):
    s = _old_scores(points, vocab)
    two = np.argpartition(s, 1, axis=1)[:, :2]
    s2 = np.take_along_axis(s, two, axis=1)
    o = np.argsort(s2, axis=1, kind="stable")
    two, s2 = np.take_along_axis(two, o, axis=1), np.take_along_axis(s2, o, axis=1)
    dist = np.sqrt(np.maximum(s2 + np.einsum("ij,ij->i", points, points)[:, None], 0.0))
    return two[:, 0], two[:, 1], dist[:, 0], dist[:, 1]


def _old_feyisetan(mech: Feyisetan, ids: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    n, m = ids.size, mech.vocab.dim
    radius = rng.gamma(shape=float(m), scale=1.0 / mech.epsilon, size=n)
    out = np.empty(n, dtype=np.int64)
    step = (1 << 22) // len(mech.vocab)
    for s in range(0, n, step):
        sl = slice(s, min(n, s + step))
        z = rng.standard_normal((sl.stop - sl.start, m))
        z *= (radius[sl] / np.linalg.norm(z, axis=1))[:, None]
        z += mech.vocab.vectors[ids[sl]]
        out[sl] = np.argmin(_old_scores(z, mech.vocab), axis=1)
    return out


def _old_vickrey(mech, ids: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    pts = mech.noisy_points(ids, rng)  # n ≤ POSITION_CHUNK: one chunk
    first, second, d1, d2 = _old_nearest_two(pts, mech.vocab)
    return np.where(rng.random(ids.size) < vickrey_first_probability(d1, d2, mech.t), first, second)


def _old_flawed(san: InputAwareVickrey, wid: int, n: int, rng: np.random.Generator) -> np.ndarray:
    v, sq, m = san.vocab.vectors, san.vocab.sq_norms, san.vocab.dim
    out = np.empty(n, dtype=np.int64)
    step = (1 << 22) // len(san.vocab)
    for s in range(0, n, step):
        k = min(n, s + step) - s
        z = rng.standard_normal((k, m))
        z *= (rng.gamma(m, 1.0 / san.epsilon, size=k) / np.linalg.norm(z, axis=1))[:, None]
        z += v[wid]
        d2 = sq[None, :] - 2.0 * (z @ v.T)
        top = np.argpartition(d2, 2, axis=1)[:, :3]
        top = np.take_along_axis(top, np.argsort(np.take_along_axis(d2, top, axis=1), axis=1), axis=1)
        drop = top[:, 0] == wid
        first, second = np.where(drop, top[:, 1], top[:, 0]), np.where(drop, top[:, 2], top[:, 1])
        zz, r = np.einsum("ij,ij->i", z, z), np.arange(k)
        d1 = np.sqrt(np.maximum(d2[r, first] + zz, 0.0))
        d2b = np.sqrt(np.maximum(d2[r, second] + zz, 0.0))
        den = san.t * d1 + (1 - san.t) * d2b
        p2 = np.where(den > 0, san.t * d1 / np.where(den > 0, den, 1.0), 0.0)
        out[s : s + k] = np.where(rng.random(k) < p2, second, first)
    return out


@pytest.mark.parametrize("eps", [1.0, 10.0])
def test_seeded_ids_unchanged_from_the_float64_implementation(glove: Vocabulary, eps: float) -> None:
    rng = np.random.default_rng(5)
    same = np.full(4000, int(glove.ids(["money"])[0]))
    mixed = rng.integers(0, len(glove), 4000)
    for ids in (same, mixed):
        f = Feyisetan(vocab=glove, epsilon=eps)  # 4,000 draws: two of the old code's chunks
        np.testing.assert_array_equal(
            f.sample_ids(ids, np.random.default_rng(6)), _old_feyisetan(f, ids, np.random.default_rng(6))
        )
        ids = ids[:1500]
        for mech in (VickreyCMP(vocab=glove, epsilon=eps), VickreyMahalanobis(vocab=glove, epsilon=eps)):
            new = mech.sample_ids(ids, np.random.default_rng(7))
            np.testing.assert_array_equal(new, _old_vickrey(mech, ids, np.random.default_rng(7)))
        maha = Mahalanobis(vocab=glove, epsilon=eps)
        pts = maha.noisy_points(ids, np.random.default_rng(8))
        np.testing.assert_array_equal(
            maha.sample_ids(ids, np.random.default_rng(8)), np.argmin(_old_scores(pts, glove), axis=1)
        )


def test_flawed_vickrey_stream_unchanged_across_search_blocks() -> None:
    """The flawed reproduction draws its stream in its old steps of ⌊2²²/|V|⌋ draws; 30,000 draws
    over |V| = 500 span two search blocks of whole steps."""
    vocab = build_vocabulary("glove", size=500)
    wid = int(vocab.ids(["money"])[0])
    n = 30_000
    assert n > POSITION_CHUNK - POSITION_CHUNK % ((1 << 22) // len(vocab))
    for eps in (1.0, 10.0):
        san = InputAwareVickrey(vocab=vocab, epsilon=eps)
        new = san.sample_ids(wid, n, np.random.default_rng(9))
        np.testing.assert_array_equal(new, _old_flawed(san, wid, n, np.random.default_rng(9)))


def test_flawed_vickrey_sample_searches_many_words_at_once_with_the_same_outputs() -> None:
    """sample() draws each distinct word's noise from the stream in id order, as sample_ids
    word by word, and searches many words' points together: the same outputs. 36,000 positions
    of 300 words span two search blocks, and one word drawn 30,000 times takes its own path."""
    vocab = build_vocabulary("glove", size=500)
    rng = np.random.default_rng(11)
    ids = np.concatenate([rng.integers(0, 300, 36_000), np.full(30_000, 400)])
    rng.shuffle(ids)
    words = vocab.words[ids]
    san = InputAwareVickrey(vocab=vocab, epsilon=5.0)
    got = san.sample(list(words), np.random.default_rng(12))
    want = np.empty(ids.size, dtype=object)
    stream = np.random.default_rng(12)
    for wid in np.unique(ids):
        at = np.flatnonzero(ids == wid)
        want[at] = vocab.words[san.sample_ids(int(wid), at.size, stream)]
    assert (got == want).all()
    assert (got != words).mean() > 0.5  # ε = 5 moves most words: the check is not on copies


def test_nearest_two_distances_are_float64(glove: Vocabulary) -> None:
    pts = _noisy(glove, 50, 5.0, np.random.default_rng(10))
    first, second, d1, d2 = nearest_two(pts, glove)
    np.testing.assert_allclose(d1, np.linalg.norm(pts - glove.vectors[first], axis=1), rtol=1e-14)
    np.testing.assert_allclose(d2, np.linalg.norm(pts - glove.vectors[second], axis=1), rtol=1e-14)
    assert np.all(d1 <= d2)
