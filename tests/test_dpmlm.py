"""DP-MLM (Meisenbacher et al. 2024): sampler against the exact distribution, the ε-LDP bound
for any two lines, an overclaimed ε caught, edge cases and bad input."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from dpcore.models.masked_lm import default_mlm_available
from dpcore.text import create_text_mechanism
from dpcore.text.dpmlm import DEFAULT_CLIP, DPMLM, calibrate_clip
from dpcore.text.vocab import build_vocabulary
from dpcore.validation import MIN_EPSILON, DPCoreError

pytestmark = pytest.mark.skipif(not default_mlm_available(), reason="the shipped attacker is absent")


@pytest.fixture(scope="module")
def vocab():
    return build_vocabulary("bert-wordpiece")


def ids(vocab, words: list[str]) -> np.ndarray:
    out = vocab.ids(np.asarray(words, dtype=object))
    assert (out >= 0).all(), words
    return out


def binned_chisquare(logp: np.ndarray, draws: np.ndarray, k: int = 40) -> float:
    """p-value of a chi-square test of ``draws`` against ``exp(logp)``: the k most likely
    outputs as cells, everything else pooled into one."""
    p = np.exp(logp)
    top = np.argsort(-p)[:k]
    cell = np.full(p.size, k)
    cell[top] = np.arange(k)
    expected = np.bincount(cell, weights=p, minlength=k + 1) * draws.size
    observed = np.bincount(cell[draws], minlength=k + 1)
    keep = expected >= 5
    obs = np.append(observed[keep], observed[~keep].sum())
    exp = np.append(expected[keep], expected[~keep].sum())
    if exp[-1] == 0:
        obs, exp = obs[:-1], exp[:-1]
    return float(stats.chisquare(obs, exp).pvalue)


def test_line_sampler_matches_its_exact_distribution(vocab) -> None:
    mech = DPMLM(vocab=vocab, epsilon=60.0)
    line = ids(vocab, "diagnosed with hiv".split())
    (rows,) = mech.log_prob_lines([line])
    assert rows.shape == (3, len(vocab)) and np.allclose(np.exp(rows).sum(axis=1), 1.0)
    # The same line 2,000 times in one call: every draw is given the whole line.
    draws = np.stack(mech.sample_lines([line] * 2000, np.random.default_rng(0)))
    for pos in range(3):
        assert binned_chisquare(rows[pos], draws[:, pos]) > 1e-3


def test_token_sampler_matches_the_one_word_rows(vocab) -> None:
    mech = DPMLM(vocab=vocab, epsilon=80.0)
    x = ids(vocab, ["privacy", "movie"])
    rows = np.vstack([r for _, r in mech.iter_log_rows(x)])
    draws = mech.sample_ids(np.repeat(x, 4000), np.random.default_rng(1)).reshape(2, 4000)
    for r in range(2):
        assert binned_chisquare(rows[r], draws[r]) > 1e-3
    # The test has power: draws at twice the ε are rejected against these rows.
    hot = DPMLM(vocab=vocab, epsilon=160.0).sample_ids(np.repeat(x[:1], 4000), np.random.default_rng(2))
    assert binned_chisquare(rows[0], hot) < 1e-3
    # log_prob agrees with the rows
    y = draws[:, :5]
    lp = mech.log_prob(np.repeat(x, 5), y.ravel())
    assert np.allclose(lp, rows[np.repeat([0, 1], 5), y.ravel()])


def test_any_two_lines_stay_within_epsilon_and_an_overclaim_is_caught(vocab) -> None:
    eps = 4.0
    mech = DPMLM(vocab=vocab, epsilon=eps)
    a = ids(vocab, "the patient was diagnosed with hiv".split())
    b = ids(vocab, "the patient was diagnosed with flu".split())
    c = ids(vocab, "my friend likes long walks .".split())
    ra, rb, rc = mech.log_prob_lines([a, b, c])
    worst = max(np.max(np.abs(ra - rb)), np.max(np.abs(ra - rc)))
    # One-word lines (the token-level API) obey the same bound.
    x = ids(vocab, ["hiv", "flu", "the", "walks"])
    one = np.vstack([r for _, r in mech.iter_log_rows(x)])
    worst_one = max(np.max(np.abs(one[i] - one[j])) for i in range(4) for j in range(i + 1, 4))
    assert worst <= eps + 1e-9 and worst_one <= eps + 1e-9
    # The clip is what makes it private: the realised loss uses much of the budget, so a claim
    # of ε/3 is refuted by these exact rows.
    assert max(worst, worst_one) > eps / 3


def test_edge_epsilons_give_finite_sensible_distributions(vocab) -> None:
    x = ids(vocab, ["privacy"])
    tiny = DPMLM(vocab=vocab, epsilon=MIN_EPSILON)
    (_, row), *_ = list(tiny.iter_log_rows(x))
    assert np.all(np.isfinite(row)) and np.ptp(row) <= MIN_EPSILON + 1e-12  # ≈ uniform over V
    huge = DPMLM(vocab=vocab, epsilon=1000.0)
    (_, row), *_ = list(huge.iter_log_rows(x))
    assert np.all(np.isfinite(row)) and np.isclose(np.exp(row).sum(), 1.0)
    assert np.exp(row).max() > 100 / len(vocab)  # concentrated on the LM's best tokens


def test_sanitize_uses_the_whole_line_and_records_parameters(vocab) -> None:
    from dpcore.api import sanitize

    out = sanitize(
        ["the patient was diagnosed with hiv", "ok"],
        mechanism="dp-mlm",
        epsilon=50,
        embedding="bert-wordpiece",
        seed=3,
    )
    again = sanitize(
        ["the patient was diagnosed with hiv", "ok"],
        mechanism="dp-mlm",
        epsilon=50,
        embedding="bert-wordpiece",
        seed=3,
    )
    assert out.lines == again.lines and len(out.sanitized_tokens[0]) == len(out.original_tokens[0])
    assert out.parameters["clip"] == list(DEFAULT_CLIP) and out.parameters["privacy"].startswith("50-LDP")


def test_bad_input_is_refused(vocab) -> None:
    with pytest.raises(DPCoreError, match="bert-wordpiece embedding"):
        create_text_mechanism("dp-mlm", vocab=build_vocabulary("glove", size=2000), epsilon=1.0)
    with pytest.raises(DPCoreError, match="clip_high"):
        DPMLM(vocab=vocab, epsilon=1.0, clip_low=2.0, clip_high=1.0)
    with pytest.raises(DPCoreError):
        DPMLM(vocab=vocab, epsilon=float("nan"))


@pytest.mark.slow
def test_calibration_follows_its_documented_recipe(vocab) -> None:
    """``calibrate_clip`` against the recipe done by hand, one unpadded forward pass per masked
    position, on three sentences. (The shipped DEFAULT_CLIP, from all 50 default sentences, is
    regenerated by ``python bench/dpmlm_calibration.py``: ~1,450 forward passes.)"""
    from dpcore.models.masked_lm import load_mlm, masked_position_logits

    mlm = load_mlm()
    tok = mlm.tokenizer
    sents = ["The patient was admitted to hospital.", "Stocks fell sharply on Monday", "hi"]
    cand = tok.convert_tokens_to_ids(list(vocab.words))
    lows, highs = [], []
    for s in sents:
        line = tok(s, add_special_tokens=False)["input_ids"][:40]
        for i in range(len(line)):
            masked = [*line[:i], tok.mask_token_id, *line[i + 1 :]]
            seq = [tok.cls_token_id, *line, tok.sep_token_id, *masked, tok.sep_token_id]
            z = masked_position_logits(mlm, [(seq, len(line) + 2 + i)])[0, cand].astype(np.float64)
            lows.append(np.percentile(z, 1.0))
            highs.append(z.max())
    lo, hi = calibrate_clip(mlm, sentences=sents, vocab=vocab)
    assert len(lows) >= 10  # every position of every sentence (a one-piece line included)
    assert lo == pytest.approx(np.median(lows), abs=1e-4) and hi == pytest.approx(np.median(highs), abs=1e-4)
    # the documented constant lies where the recipe's values do (it is not a made-up pair)
    assert min(lows) < DEFAULT_CLIP[0] < DEFAULT_CLIP[1] < max(highs)
