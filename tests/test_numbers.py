"""Numbers at their limits (issue 16, item 3): integers parsed exactly, ε at the float64 floor,
a scale-free simulation, and Monte-Carlo verdicts that say when a claim is out of reach."""

from __future__ import annotations

import json

import numpy as np
import pytest

from dpcore.audit import audit
from dpcore.cli import main
from dpcore.mechanisms import VECTOR_MECHANISMS
from dpcore.sensitivity import adept_violation_fractions
from dpcore.text import TEXT_MECHANISMS, create_text_mechanism
from dpcore.text.registry import required_embedding
from dpcore.text.vocab import build_vocabulary
from dpcore.validation import MIN_EPSILON, DPCoreError, check_epsilon, check_int

MAX63 = 2**63 - 1


@pytest.mark.parametrize(
    ("text", "value"),
    [("9223372036854775807", MAX63), ("12345678901234567", 12345678901234567), (" 1e6 ", 10**6), ("2.0", 2)],
)
def test_integers_are_parsed_exactly(text: str, value: int) -> None:
    assert check_int(text, name="seed", min_value=0, max_value=MAX63) == value


@pytest.mark.parametrize(
    "text", ["2.5", "nan", "inf", "1e999999999", "9" * 400, "abc", "9223372036854775808"]
)
def test_bad_integers_are_refused(text: str) -> None:
    with pytest.raises(DPCoreError, match="seed must be"):
        check_int(text, name="seed", min_value=0, max_value=MAX63)


def test_cli_records_the_seed_exactly(tmp_path, capsys, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "in.txt").write_text("the cat sat\n")
    for seed in (MAX63, 12345678901234567):
        argv = ["sanitize", "--mechanism", "random", "--epsilon", "1", "--vocab-size", "300",
                "--input", "in.txt", "--output", "out.txt", "--seed", str(seed), "--json"]  # fmt: skip
        assert main(argv) == 0
        assert json.loads(capsys.readouterr().out)["parameters"]["seed"] == seed
    assert main(["audit", "--mechanism", "laplace", "--dim", "2", "--epsilon", "1", "--method", "mc",
                 "--trials", "1000", "--seed", str(MAX63), "--json"]) == 0  # fmt: skip
    assert json.loads(capsys.readouterr().out)["seed"] == MAX63


@pytest.mark.parametrize("eps", [5e-324, 1e-310, 1e-200, 1e-7])
def test_epsilon_below_the_floor_is_refused_everywhere(eps: float) -> None:
    with pytest.raises(DPCoreError, match="floor"):
        check_epsilon(eps)
    for name in VECTOR_MECHANISMS.names():
        with pytest.raises(DPCoreError, match="floor"):
            VECTOR_MECHANISMS.create(name, epsilon=eps, dim=4)
    vocabs = {
        "glove": build_vocabulary("glove", size=300),
        "bert-wordpiece": build_vocabulary("bert-wordpiece"),
    }
    for name in TEXT_MECHANISMS.names():
        if name == "random":
            continue  # ignores ε by definition (0-LDP)
        vocab = vocabs[required_embedding(name) or "glove"]
        with pytest.raises(DPCoreError, match="floor"):
            create_text_mechanism(name, vocab=vocab, epsilon=eps)


@pytest.mark.parametrize("eps", ["5e-324", "1e-310"])
def test_cli_subnormal_epsilon_is_one_line(eps: str, capsys) -> None:
    assert main(["audit", "--mechanism", "dptext-resample", "--dim", "4", "--epsilon", eps,
                 "--method", "mc", "--trials", "1000"]) == 2  # fmt: skip
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("dpcore: error:") and "floor" in err[0]


def test_every_mechanism_works_at_the_floor() -> None:
    for name in VECTOR_MECHANISMS.names():
        r = audit(name, dim=4, epsilon=MIN_EPSILON, method="mc", trials=2_000, seed=0)
        assert not np.isnan(r.empirical_epsilon), name
    vocabs = {
        "glove": build_vocabulary("glove", size=300),
        "bert-wordpiece": build_vocabulary("bert-wordpiece"),
    }
    rng = np.random.default_rng(0)
    ids = np.arange(50)
    for name in TEXT_MECHANISMS.names():
        vocab = vocabs[required_embedding(name) or "glove"]
        floor = TEXT_MECHANISMS.get(name).factory.minimum_epsilon(vocab)
        if floor > 0:  # calibrated only above its own floor: a clear refusal that names it
            with pytest.raises(DPCoreError, match=f"{floor:.4g}"):
                create_text_mechanism(name, vocab=vocab, epsilon=MIN_EPSILON)
            continue
        mech = create_text_mechanism(name, vocab=vocab, epsilon=MIN_EPSILON)
        out = mech.sample_ids(ids, rng)
        assert out.shape == ids.shape and out.min() >= 0 and out.max() < len(vocab), name
        # at ε → 0 nothing should look like "everything maps to one word"
        assert len(set(out.tolist())) > 10, name


def test_adept_simulation_is_scale_free() -> None:
    a = adept_violation_fractions([1, 16, 64], clip=10.0, pairs=2_000, seed=0)
    b = adept_violation_fractions([1, 16, 64], clip=1e-200, pairs=2_000, seed=0)
    c = adept_violation_fractions([1, 16, 64], clip=1e5, dist="normal", pairs=2_000, seed=0)
    d = adept_violation_fractions([1, 16, 64], clip=1e-300, dist="normal", pairs=2_000, seed=0)
    assert a.violations == b.violations and a.violations[-1] > 1_900
    assert c.violations == d.violations


def test_mc_verdict_says_when_the_claim_is_out_of_reach(capsys) -> None:
    assert main(["audit", "--mechanism", "laplace", "--dim", "8", "--epsilon", "20", "--method", "mc",
                 "--trials", "1000", "--seed", "0", "--json"]) == 0  # fmt: skip
    out = json.loads(capsys.readouterr().out)
    assert out["verdict"] == "out-of-reach" and out["claim_reachable"] is False
    assert out["verdict_text"].startswith("out of reach: the claimed ε = 20 is at or above")
    assert "could not have shown a violation" in out["verdict_text"]
    assert out["max_detectable_loss"] < 20
    r = audit("laplace", dim=8, epsilon=1.0, method="mc", trials=100_000, seed=0)
    assert r.claim_reachable is True and "could not" not in r.verdict_text
    assert r.verdict_text.startswith("no violation detected by this test (n = 8, ε = 1, 100,000 trials")
