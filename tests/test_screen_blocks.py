"""The screen's rows in blocks (issue 30): the same draws at any block size and worker count.

An exponential mechanism's words are drawn from rows that one matrix product computes for a block
of words (:class:`dpcore.text.mechanisms.RowBlocks`). BLAS rounds a matrix-vector product, and
the odd edge rows of a matrix product, differently from a product's full tiles, so every product
has the same fixed height whatever the block: a word's row, hence its draws, never depend on the
block size, the words beside it or the worker that draws it. Sanitizers without rows (k-RR,
noisy nearest neighbour, black boxes, subclasses with their own ``sample_ids``) are drawn word by
word, as before.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import dpcore.textaudit.engine as engine
from dpcore.text import create_text_mechanism
from dpcore.text.mechanisms import RowBlocks
from dpcore.text.sampling import (
    PREFIX_BLOCK,
    SEARCH_BLOCK,
    block_ends,
    cumulative_weights,
    log_weight_rows,
    product_rows,
    search_blocks,
)
from dpcore.text.vocab import build_vocabulary
from dpcore.textaudit import DpcoreSanitizer, KaryRandomizedResponse, audit_text
from dpcore.textaudit.contract import GlobalStateReseeded
from dpcore.textaudit.engine import DrawPlan, block_info, draw_words, row_blocks_of


@pytest.fixture(scope="module")
def vocab2000():
    return build_vocabulary("glove", size=2000)


def _rows(blocks: RowBlocks, ids: np.ndarray, size: int) -> np.ndarray:
    """Finished rows of ``ids`` drawn in blocks of ``size`` words: weights, then block totals."""
    out = []
    for s in range(0, len(ids), size):
        blk = blocks.block(ids[s : s + size])
        for k in range(len(blk.ids)):
            w, ends = blk._row(k)
            out.append(np.concatenate([w, ends]))
    return np.stack(out)


@pytest.mark.parametrize(
    ("name", "size", "params"),
    [
        ("santext", 2000, {}),
        ("santext", 15000, {}),
        ("santext+", 2000, {"p": 0.3, "w": 0.5}),
        ("tem", 2000, {}),
    ],
)
def test_a_words_row_is_the_same_in_any_block(name, size, params):
    vocab = build_vocabulary("glove", size=size)
    mech = create_text_mechanism(name, vocab=vocab, epsilon=1.0, **params)
    blocks = mech.row_blocks()
    assert blocks is not None and blocks.height == product_rows(len(mech._candidates))
    rng = np.random.default_rng(size)
    ids = rng.choice(size, 150, replace=False)
    ref = _rows(blocks, ids, 1)
    for b in (2, 3, 7, 8, 63, 64, 65, 150):
        assert np.array_equal(_rows(blocks, ids, b), ref), b
    # the same row in another order and among other words
    perm = rng.permutation(ids.size)
    assert np.array_equal(_rows(blocks, ids[perm], 7), ref[perm])
    # …and whatever BLAS threads the caller allows (the products run on one)
    threadpoolctl = pytest.importorskip("threadpoolctl")
    with threadpoolctl.threadpool_limits(limits=2, user_api="blas"):
        assert np.array_equal(_rows(blocks, ids, 5), ref)
    # …and close to the one-word sampler's weights (the products sum in another order: last bits)
    w = log_weight_rows(vocab.vectors, vocab.sq_norms, ids[:5], mech._cand, mech._em_epsilon, mech._truncate)
    w -= w.max(axis=1, keepdims=True)
    np.exp(w, out=w)
    n_c = w.shape[1]
    np.testing.assert_allclose(ref[:5, :n_c], w, rtol=1e-12, atol=1e-300)
    np.testing.assert_allclose(ref[:5, -1], w.sum(axis=1), rtol=1e-12)  # the last block total


@pytest.mark.parametrize("n", [1, 17, 63, 64, 65, 1000, 4099, 50_000])
def test_running_sums_by_blocks_are_cumsums_last_bits_and_never_decrease(n):
    """A row's cumulative weights are formed a block of columns at a time (one matrix product):
    within 10⁻¹³ of ``np.cumsum``, never decreasing (a search needs it), exact on integers, the
    same with or without scratch, and ``np.cumsum`` itself below four blocks."""
    rng = np.random.default_rng(n)
    for scale in (1.0, 40.0, 700.0):  # weights from flat to nearly all underflowed
        w = np.exp(-scale * rng.random(n))
        got = cumulative_weights(w.copy())
        want = np.cumsum(w)
        assert np.all(np.diff(got) >= 0)
        np.testing.assert_allclose(got, want, rtol=1e-13, atol=0)
        assert np.array_equal(cumulative_weights(w.copy(), np.empty(n + 3)), got)
        if n < 4 * PREFIX_BLOCK:
            assert np.array_equal(got, want)
    k = rng.integers(0, 1000, n).astype(np.float64)  # integer sums are exact in any order
    assert np.array_equal(cumulative_weights(k.copy()), np.cumsum(k))


@pytest.mark.parametrize("n", [16, 17, 47, 48, 1000, 50_001])
def test_the_two_level_search_is_the_inverse_cdf_of_the_weights(n):
    """search_blocks: the first column whose running weight passes the target, as np.cumsum and
    np.searchsorted give it (up to last-bit rounding of the sums), in any order of the targets;
    its draws follow the weights (chi-square, fixed seed); a zero weight is never drawn, even
    for targets at the blocks' totals themselves."""
    rng = np.random.default_rng(n)
    w = rng.random(n) ** 3
    w[rng.random(n) < 0.3] = 0.0  # zero weights everywhere, at block ends too
    w[SEARCH_BLOCK - 1 :: SEARCH_BLOCK] = 0.0
    w[0] = w[-1] = 0.5
    ends = block_ends(w)
    assert ends[0] == 0.0 and np.all(np.diff(ends) >= 0) and ends.size == -(-n // SEARCH_BLOCK) + 1
    assert ends[-1] == pytest.approx(w.sum(), rel=1e-13)
    ref = np.cumsum(w)
    t = np.sort(rng.random(20_000)) * ends[-1]
    got = search_blocks(w, ends, t)
    want = np.minimum(np.searchsorted(ref * (ends[-1] / ref[-1]), t, side="right"), n - 1)
    assert np.mean(got == want) > 0.999 and np.all(np.abs(got - want) <= SEARCH_BLOCK)
    perm = rng.permutation(t.size)
    assert np.array_equal(search_blocks(w, ends, t[perm]), got[perm])  # any order
    edges = np.concatenate([ends[1:-1], np.nextafter(ends[1:-1], 0), [0.0, np.nextafter(ends[-1], 0)]])
    for tt in (t, edges):
        assert np.all(w[search_blocks(w, ends, tt)] > 0)
    counts = np.bincount(search_blocks(w, ends, rng.random(200_000) * ends[-1]), minlength=n)
    if n <= 1000:
        expect = w / w.sum() * 200_000
        big = expect >= 5
        from scipy.stats import chisquare

        small = expect[~big].sum() > 0  # (the rest, pooled, when it is not all zeros)
        obs = np.append(counts[big], counts[~big].sum()) if small else counts[big]
        exp = np.append(expect[big], expect[~big].sum()) if small else expect[big]
        assert chisquare(obs, exp * obs.sum() / exp.sum()).pvalue > 1e-3
    assert counts[w == 0].sum() == 0


def test_a_blocks_draws_are_the_sanitizers_uniforms_on_its_row(vocab2000):
    """Same stream, same order (all coins, then all picks), same columns as the one-word sampler."""
    mech = create_text_mechanism("santext+", vocab=vocab2000, epsilon=2.0, p=0.3, w=0.5)
    blocks = mech.row_blocks()
    ids = np.asarray([0, 5, 1999, 1000, 17], dtype=np.int64)  # frequent (kept w.p. 1 − p) and rare
    blk = blocks.block(ids)
    for wid in ids:
        got = blk.sample_ids(int(wid), 3000, np.random.default_rng(int(wid)))
        want = mech.sample_ids(np.full(3000, wid), np.random.default_rng(int(wid)))
        # equal unless a uniform falls within the last bits of a row's cumulative weight
        assert np.mean(got == want) > 0.999
        rng_a, rng_b = np.random.default_rng(int(wid)), np.random.default_rng(int(wid))
        blocks.block(ids[::-1]).sample_ids(int(wid), 3000, rng_a)
        blk.sample_ids(int(wid), 3000, rng_b)
        assert rng_a.random() == rng_b.random()  # 2·n uniforms taken, as the sampler takes


@pytest.mark.parametrize(
    ("name", "params"), [("santext", {}), ("santext+", {"p": 0.3, "w": 0.5}), ("tem", {})]
)
def test_a_blocks_sorted_draws_are_its_draws_sorted_per_segment(vocab2000, name, params):
    """sample_ids_sorted: the same draws as sample_ids from the same stream, sorted within each
    segment (words kept by their coin included), and the same uniforms taken."""
    mech = create_text_mechanism(name, vocab=vocab2000, epsilon=2.0, **params)
    blk = mech.row_blocks().block(np.asarray([0, 5, 1999, 1000, 17], dtype=np.int64))
    cases = [(0, [0, 500, 1000]), (5, [0, 1, 2, 7]), (1999, [0, 0, 40]), (1000, [0, 300]), (3, [0, 9, 9])]
    for wid, bounds in cases:
        rng_a, rng_b = np.random.default_rng(wid), np.random.default_rng(wid)
        got = blk.sample_ids_sorted(wid, bounds, rng_a)  # word 3: not in the block, a block of its own
        want = blk.sample_ids(wid, bounds[-1], rng_b)
        assert got.dtype == np.int64 and got.shape == want.shape
        for lo, hi in itertools.pairwise(bounds):
            assert np.array_equal(got[lo:hi], np.sort(want[lo:hi])), (name, wid, lo, hi)
        assert rng_a.random() == rng_b.random()
    if name == "santext+":  # a frequent word is kept by some coins: it is among the sorted draws
        got = blk.sample_ids_sorted(0, [0, 1000], np.random.default_rng(1))
        assert 0 < int((got == 0).sum()) < 1000


def test_which_sanitizers_have_row_blocks(vocab2000):
    santext = DpcoreSanitizer(create_text_mechanism("santext", vocab=vocab2000, epsilon=1.0))
    assert row_blocks_of(santext) is not None
    info = block_info(santext)
    assert info["block_words"] == info["product_rows"] == 64
    assert info["block_bytes"] == 64 * 2000 * 8
    for name in ("random", "custext", "feyisetan"):
        s = DpcoreSanitizer(create_text_mechanism(name, vocab=vocab2000, epsilon=1.0))
        assert row_blocks_of(s) is None, name
        assert block_info(s)["block_words"] == 1

    class OwnSampler(DpcoreSanitizer):  # its draws are its own, not the mechanism's
        def sample_ids(self, word_id, n, rng):
            return super().sample_ids(word_id, n, rng)

    assert row_blocks_of(OwnSampler(santext.mechanism)) is None
    assert row_blocks_of(GlobalStateReseeded(santext)) is None  # draws through sample()
    assert row_blocks_of(KaryRandomizedResponse(epsilon=1.0, words=["a", "b", "c"])) is None


def test_the_engine_draws_the_same_at_any_block_size(vocab2000, monkeypatch):
    s = DpcoreSanitizer(create_text_mechanism("tem", vocab=vocab2000, epsilon=2.0))
    ids = np.arange(0, 300, dtype=np.int64)
    plan = DrawPlan("confirm", (700, 800))

    def run(block):
        monkeypatch.setattr(engine, "BLOCK_WORDS", block)
        return [np.concatenate(w.counts) for w in draw_words(s, vocab2000.words, ids, 3, plan)]

    ref = run(1)
    for block in (7, None, 300):
        assert all(np.array_equal(a, b) for a, b in zip(run(block), ref, strict=True)), block


def _comparable(res) -> dict:
    d = res.to_dict()
    d.pop("execution")
    d.pop("elapsed_seconds")
    return d


@pytest.mark.parametrize("which", ["santext", "krr", "feyisetan"])
def test_seeded_screen_results_are_identical_for_block_sizes_and_workers(vocab2000, which, monkeypatch):
    """The whole result (screen, pooled tests, confirmation) at blocks of 1, 7 and the default
    (64 words), with 1 and 2 workers. k-RR and Feyisetan have no rows: drawn word by word."""
    if which == "krr":
        sanitizer = KaryRandomizedResponse(epsilon=2.0, words=list(vocab2000.words))
        kw = {"screen_budget": 400_000}
    else:
        sanitizer = DpcoreSanitizer(create_text_mechanism(which, vocab=vocab2000, epsilon=2.0))
        kw = {"screen_budget": 400_000}
        if which == "feyisetan":  # a nearest-word search per draw: screen 300 words
            kw = {"screen_budget": 60_000, "screen_words": list(vocab2000.words[:300])}
    ref = None
    for block in (None, 1, 7):
        monkeypatch.setattr(engine, "BLOCK_WORDS", block)
        for workers in (1, 2):
            res = audit_text(
                sanitizer, vocab=vocab2000, seed=11, samples=2_000, pairs=5, workers=workers, **kw
            )
            if which == "santext":
                assert res.execution.get("workers") == workers
            got = _comparable(res)
            if ref is None:
                ref = got
                assert res.screen["draws_per_word"] >= 200
            else:
                assert got == ref, (block, workers)
