"""The mechanism-aware (Bayesian) attack: exact posterior against brute force, ε extremes, CLI."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from dpcore.attack import bayes
from dpcore.attack.experiment import PROGRESS_UNITS, attack_sweep
from dpcore.cli import main
from dpcore.text import create_text_mechanism
from dpcore.text.vocab import Vocabulary, build_vocabulary
from dpcore.validation import DPCoreError

WORDS = ["the", "cat", "sat", "on", "mat", "a", "dog", "ran", "to", "park", "playing", "."]


def _vocab(seed: int = 0) -> Vocabulary:
    rng = np.random.default_rng(seed)
    return Vocabulary.create(
        embedding="glove",
        words=WORDS,
        vectors=rng.normal(size=(len(WORDS), 3)),
        frequency=np.geomspace(1.0, 1e-4, len(WORDS)),
        frequency_source="test",
    )


def _mech(name: str, eps: float, vocab: Vocabulary):
    extra = {"p": 0.3, "w": 0.5} if name == "santext+" else {}
    return create_text_mechanism(name, vocab=vocab, epsilon=eps, **extra)


def _brute_channel(name: str, eps: float, vocab: Vocabulary) -> np.ndarray:
    """P[x, y] = Pr[M(x)=y] with explicit loops (Yue et al. 2021, eq. 1, eq. 2, Algorithm 2)."""
    n = len(vocab)
    vec = vocab.vectors
    if name == "santext+":
        sens = vocab.sensitive_mask(0.5)
        cand = [j for j in range(n) if sens[j]]
    else:
        sens = np.ones(n, dtype=bool)
        cand = list(range(n))
    e = 0.0 if name == "random" else eps
    P = np.zeros((n, n))
    for x in range(n):
        w = {y: math.exp(-0.5 * e * math.dist(vec[x], vec[y])) for y in cand}
        z = sum(w.values())
        q = 1.0 if sens[x] else 0.3
        for y in cand:
            P[x, y] += q * w[y] / z
        P[x, x] += 1.0 - q
    return P


@pytest.mark.parametrize("name", ["santext", "santext+", "random"])
@pytest.mark.parametrize("eps", [0.5, 3.0])
def test_posterior_sums_to_one_and_equals_brute_force(name: str, eps: float) -> None:
    vocab = _vocab(1)
    mech = _mech(name, eps, vocab)
    prior = np.random.default_rng(2).dirichlet(np.ones(len(vocab)))
    ys = np.arange(len(vocab))
    ch = bayes.channel_of(mech, max_elements=7)  # forces many chunks
    post = np.exp(bayes.posterior(ch, ys, np.log(prior), max_elements=5))
    P = _brute_channel(name, eps, vocab)
    for y in ys:
        joint = [prior[x] * P[x, y] for x in range(len(vocab))]
        total = sum(joint)
        if total == 0.0:  # santext+: a non-sensitive y is produced only by itself
            continue
        np.testing.assert_allclose(post[y], np.array(joint) / total, rtol=1e-10, atol=1e-14)
        assert post[y].sum() == pytest.approx(1.0, abs=1e-12)


@pytest.mark.parametrize("name", ["santext", "santext+"])
def test_likelihood_columns_match_the_mechanisms_exact_log_prob(name: str) -> None:
    vocab = build_vocabulary("glove", size=300)
    mech = _mech(name, 2.0, vocab)
    ys = np.array([0, 5, 77, 299, 150])
    ch = bayes.channel_of(mech, max_elements=1000)
    xs = np.arange(len(vocab))
    for sl, cols in bayes.log_likelihood_columns(ch, ys, max_elements=700):
        for r, y in enumerate(ys[sl]):
            ref = mech.log_prob(xs, np.full(xs.size, y))
            np.testing.assert_allclose(cols[r], ref, rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize(("name", "eps"), [("tem", 3.0), ("tem", 12.0), ("custext", 2.0), ("custext+", 2.0)])
def test_columns_of_tem_and_custext_equal_their_exact_rows(name: str, eps: float) -> None:
    """The Bayesian channel of every other exact mechanism: columns = transposed exact rows."""
    vocab = build_vocabulary("glove", size=300)
    mech = create_text_mechanism(name, vocab=vocab, epsilon=eps)
    if name == "tem":
        assert mech.gamma < 50  # truncation is live at these ε (γ below the largest distance)
    xs = np.arange(len(vocab))
    full = np.concatenate([rows for _, rows in mech.iter_log_rows(xs)])
    ys = np.array([0, 5, 77, 299, 150, 31])
    ch = bayes.channel_of(mech, max_elements=2_000)
    got = np.concatenate([cols for _, cols in bayes.log_likelihood_columns(ch, ys, max_elements=2_000)])
    np.testing.assert_allclose(got, full[:, ys].T, rtol=1e-9, atol=1e-9)
    # and the attack runs on them, scoring every position
    rng = np.random.default_rng(1)
    x = rng.integers(0, len(vocab), 500)
    res = bayes.bayes_attack(mech, x, mech.sample_ids(x, rng))
    assert res.n_tokens == 500 and 0.0 <= res.defense_rate <= 1.0


def test_tem_sweep_channels_share_a_pass_and_equal_single_channels() -> None:
    vocab = build_vocabulary("glove", size=300)
    mechs = [create_text_mechanism("tem", vocab=vocab, epsilon=e) for e in (2.0, 8.0)]
    bayes._CHANNEL_CACHE.clear()
    swept = bayes.prepare_channels(mechs)
    bayes._CHANNEL_CACHE.clear()
    for m, ch in zip(mechs, swept, strict=True):
        single = bayes.channel_of(m)
        assert ch.truncate == pytest.approx(m.gamma)
        np.testing.assert_allclose(ch.log_z, single.log_z, rtol=1e-12)


@pytest.mark.parametrize(
    ("name", "why"), [("feyisetan", "Monte-Carlo only"), ("mahalanobis", "Monte-Carlo only")]
)
def test_bayes_refuses_monte_carlo_mechanisms_with_the_reason(name: str, why: str) -> None:
    vocab = build_vocabulary("glove", size=300)
    mech = create_text_mechanism(name, vocab=vocab, epsilon=3.0)
    with pytest.raises(DPCoreError, match=why):
        bayes.bayes_attack(mech, np.arange(5), np.arange(5))


def test_bayes_refuses_dp_mlm_because_its_rows_read_the_line() -> None:
    mech = create_text_mechanism("dp-mlm", vocab=build_vocabulary("bert-wordpiece"), epsilon=3.0)
    with pytest.raises(DPCoreError, match="reads the whole private line"):
        bayes.channel_of(mech)


def test_normalizer_table_equals_per_mechanism_normalizers() -> None:
    vocab = build_vocabulary("glove", size=400)
    eps = [0.0, 1.0, 3.0, 1000.0]
    table = bayes.log_normalizer_table(vocab, np.arange(len(vocab)), eps, max_elements=5000)
    for i, e in enumerate(eps):
        ref = (
            np.full(len(vocab), math.log(len(vocab)))
            if e == 0
            else _mech("santext", e, vocab).log_normalizers(np.arange(len(vocab)))
        )
        np.testing.assert_allclose(table[i], ref, rtol=1e-12, atol=1e-12)
    assert np.all(np.isfinite(table))  # no underflow at ε = 1000


def test_map_guess_and_defense_counts_match_brute_force() -> None:
    vocab = _vocab(3)
    mech = _mech("santext", 2.0, vocab)
    rng = np.random.default_rng(4)
    x = rng.integers(0, len(vocab), 400)
    y = mech.sample_ids(x, rng)
    prior = np.log(np.asarray(vocab.frequency) / np.sum(vocab.frequency))
    res = bayes.bayes_attack(mech, x, y, log_prior=prior, keep_guesses=True)
    P = _brute_channel("santext", 2.0, vocab)
    guess = [int(np.argmax([math.exp(prior[c]) * P[c, yy] for c in range(len(vocab))])) for yy in y]
    assert res.guesses == [WORDS[g] for g in guess]
    assert res.n_defended == int(np.sum(np.array(guess) != x))
    assert res.n_tokens == 400 and res.n_kept == int(np.sum(x == y))
    assert res.ci_low <= res.defense_rate <= res.ci_high


@pytest.fixture(scope="module")
def tweets() -> list[str]:
    from dpcore.attack.datasets import load_labelled_dataset
    from dpcore.attack.experiment import sample_attack_sentences

    return sample_attack_sentences(load_labelled_dataset("tweets"), 40, seed=0)


def test_epsilon_to_infinity_defense_equals_one_minus_top1_bayes(tweets: list[str]) -> None:
    vocab = build_vocabulary("glove", size=3000)
    res = attack_sweep(
        tweets, lambda e: _mech("santext", e, vocab), [1000.0], attacks=["bayes-unigram"], seed=0
    )
    row = res["rows"][0]
    assert row["kept_by_sanitizer"] == row["tokens"] > 300
    assert row["defense_rate"] == pytest.approx(1.0 - row["attacker_top1_unsanitized"], abs=1e-12)
    # ε → 0 end: uniform replacement leaves only the prior, so defense = 1 − prior top-1.
    rnd = attack_sweep(tweets, lambda e: _mech("random", e, vocab), [1.0], attacks=["bayes-unigram"], seed=0)
    r = rnd["rows"][0]
    assert r["defense_rate"] == pytest.approx(1.0 - r["prior_top1"], abs=1e-12)
    assert 0.9 < r["defense_rate"] < 1.0
    # In between, the attacker does better than its prior alone.
    mid = attack_sweep(tweets, lambda e: _mech("santext", e, vocab), [4.0], attacks=["bayes-unigram"], seed=0)
    m = mid["rows"][0]
    assert m["ci_high"] < r["ci_low"]


# ---- with the tiny random masked LM of tests/test_attack_mlm.py -----------------------------
def _tiny():
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from tests.mlm_helpers import tiny_mlm

    return tiny_mlm(5)


SENTS = ["the cat sat on the mat .", "a dog ran to the park", "the dog sat", "cat playing"]


def test_mlm_numbers_from_the_shared_pass_equal_mask_token_inference() -> None:
    from dpcore.attack.mask_inference import mask_token_inference

    mlm = _tiny()
    vocab = _vocab(0)
    mech = _mech("santext", 1.0, vocab)
    from dpcore.attack.experiment import _pairs

    pairs, scored = _pairs(mech, SENTS, np.random.default_rng(0))
    out = bayes.mlm_bayes_attack(pairs, scored, mech, mlm, batch_size=3)
    ref = mask_token_inference(pairs, mlm, unit="word", keep_predictions=True, batch_size=5)
    hits = np.concatenate([np.asarray(h)[m] for h, m in zip(ref.hits, scored, strict=True)])
    np.testing.assert_array_equal(out.mlm_hit, hits)
    # Uniform channel: the posterior is the prior, so Bayes-MLM guesses what the prior guesses.
    rnd = _mech("random", 1.0, vocab)
    out_r = bayes.mlm_bayes_attack(pairs, scored, rnd, mlm, batch_size=4)
    np.testing.assert_array_equal(out_r.bayes_hit, out_r.prior_hit)


def test_epsilon_to_infinity_defense_equals_one_minus_top1_mlm() -> None:
    mlm = _tiny()
    vocab = _vocab(0)
    res = attack_sweep(
        SENTS, lambda e: _mech("santext", e, vocab), [1000.0], attacks=["mlm", "bayes-mlm"], mlm=mlm, seed=1
    )
    rows = {r["attack"]: r for r in res["rows"]}
    for a in ("mlm", "bayes-mlm"):
        assert rows[a]["defense_rate"] == pytest.approx(1.0 - rows[a]["attacker_top1_unsanitized"], abs=1e-12)
    assert rows["mlm"]["tokens"] == sum(len(s.split()) for s in SENTS)
    alone = attack_sweep(
        SENTS, lambda e: _mech("santext", e, vocab), [1000.0], attacks=["mlm"], mlm=mlm, seed=1
    )
    assert alone["rows"][0]["defense_rate"] == rows["mlm"]["defense_rate"]


# ---- CLI ------------------------------------------------------------------------------------
def test_attack_cli_json_single_and_sweep(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["attack", "--mechanism", "santext", "--dataset", "tweets", "--sentences", "20"]
    assert main([*args, "--epsilon", "3", "--vocab-size", "2000", "--seed", "7", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    for key in (
        "defense_rate",
        "ci_low",
        "ci_high",
        "attacker_top1_unsanitized",
        "tokens",
        "seed",
        "epsilon",
    ):
        assert key in out
    assert out["seed"] == 7 and out["mechanism"] == "santext" and out["attack"] == "bayes-unigram"
    assert out["ci_low"] <= out["defense_rate"] <= out["ci_high"]
    assert main([*args, "--epsilons", "1,3", "--vocab-size", "2000", "--json"]) == 0
    sweep = json.loads(capsys.readouterr().out)
    assert [r["epsilon"] for r in sweep] == [1.0, 3.0]
    assert sweep[1]["epsilon"] == out["epsilon"] and sweep[1]["seed"] == 0


@pytest.mark.parametrize(
    ("extra", "msg"),
    [
        (["--mechanism", "santext", "--epsilon", "0", "--dataset", "tweets"], "epsilon"),
        (["--mechanism", "nope", "--epsilon", "1", "--dataset", "tweets"], "nope"),
        (["--mechanism", "feyisetan", "--epsilon", "1", "--dataset", "tweets"], "exact"),
        (["--mechanism", "santext", "--epsilon", "1", "--dataset", "imdb"], "unknown dataset"),
        (
            ["--mechanism", "santext", "--epsilon", "1", "--dataset", "tweets", "--sentences", "0"],
            "sentences",
        ),
        (["--mechanism", "santext", "--epsilon", "1", "--dataset", "tweets", "--p", "0.3"], "santext+"),
        (["--mechanism", "santext", "--epsilons", "1,x", "--dataset", "tweets"], "epsilon"),
        (["--mechanism", "santext", "--epsilon", "1", "--input", "/nonexistent.tsv"], "does not exist"),
    ],
)
def test_attack_cli_bad_input_exits_2(extra: list[str], msg: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["attack", *extra]) == 2
    err = capsys.readouterr().err
    assert msg in err and err.count("\n") == 1


@pytest.mark.parametrize("attacks", [["mlm"], ["bayes-unigram", "mlm", "bayes-mlm"]])
def test_attack_sweep_reports_progress_between_batches(attacks: list[str]) -> None:
    """Progress arrives after every batch of forward passes (a dashboard stops between them)."""
    mlm = _tiny()
    vocab = _vocab(0)
    calls: list[tuple[int, int]] = []
    make = lambda e: _mech("santext", e, vocab)  # noqa: E731
    res = attack_sweep(
        SENTS,
        make,
        [1.0, 5.0],
        attacks=attacks,
        mlm=mlm,
        seed=1,
        batch_size=2,
        progress=lambda d, t: calls.append((d, t)),
    )
    runs = 3 * (2 if "bayes-unigram" in attacks else 1)  # (2 ε + reference) × attack groups
    totals = {t for _, t in calls}
    assert totals == {runs * PROGRESS_UNITS}
    done = [d for d, _ in calls]
    assert done == sorted(done) and done[-1] == runs * PROGRESS_UNITS
    positions = sum(len(s.split()) for s in SENTS)
    assert len(calls) >= runs + 3 * (positions // 2)  # one call per batch of 2 masked variants
    again = attack_sweep(SENTS, make, [1.0, 5.0], attacks=attacks, mlm=mlm, seed=1, batch_size=64)

    def untimed(rows: list[dict]) -> list[dict]:
        return [{k: v for k, v in r.items() if k != "seconds"} for r in rows]

    assert untimed(again["rows"]) == untimed(res["rows"])  # reporting and batch size change nothing
