"""Top-k success of the exact-channel Bayesian attack (issue 39, part 5).

Top-1 is the MAP guess of :func:`dpcore.attack.bayes.bayes_attack`; top-k success is
nondecreasing in k; ranks equal a brute-force sort of the dense posterior (ties by id); and the
Tong et al. bench script runs at a tiny size, with every command its docs page shows.
"""

from __future__ import annotations

import importlib.util
import json
import re
import shlex
import sys
from pathlib import Path

import numpy as np
import pytest

from dpcore.attack import bayes
from dpcore.text import create_text_mechanism
from dpcore.text.vocab import Vocabulary
from dpcore.validation import DPCoreError

ROOT = Path(__file__).resolve().parents[1]
WORDS = [f"w{i}" for i in range(30)]
PARAMS = {"santext+": {"p": 0.3, "w": 0.6}, "custext": {"k": 4}, "custext+": {"k": 4}}


def _vocab(seed: int = 0) -> Vocabulary:
    rng = np.random.default_rng(seed)
    words = [*WORDS[:-3], "the", "and", "of"]  # three stopwords for CusText+
    return Vocabulary.create(
        embedding="glove",
        words=words,
        vectors=rng.normal(size=(len(words), 3)),
        frequency=np.geomspace(1.0, 1e-3, len(words)),
        frequency_source="test",
    )


def _mech(name: str, eps: float, vocab: Vocabulary):
    return create_text_mechanism(name, vocab=vocab, epsilon=eps, **PARAMS.get(name, {}))


def _draw(mech, n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    x = rng.integers(0, len(mech.vocab), size=n)
    return x, mech.sample_ids(x, rng)


def _tied_prior(n: int) -> np.ndarray:
    """A prior with many exact ties (four levels), so the id tie-break is exercised."""
    lp = np.log(np.array([4.0, 1.0, 2.0, 1.0] * (n // 4 + 1))[:n])
    return lp - np.log(np.exp(lp).sum())


def _brute_ranks(mech, x: np.ndarray, y: np.ndarray, log_prior: np.ndarray) -> np.ndarray:
    """rank(x | y) from the dense channel, one Python sort per position (ties: lower id)."""
    n = len(mech.vocab)
    xs, ys = np.repeat(np.arange(n), n), np.tile(np.arange(n), n)
    logp = mech.log_prob(xs, ys).reshape(n, n)  # logp[x, y] = log Pr[M(x) = y]
    out = []
    for xi, yi in zip(x, y, strict=True):
        score = logp[:, yi] + log_prior
        order = sorted(range(n), key=lambda v: (-score[v], v))
        out.append(order.index(int(xi)))
    return np.asarray(out)


NAMES = ["santext", "santext+", "random", "custext", "custext+"]


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("eps", [0.5, 4.0])
def test_top1_equals_the_map_attack(name: str, eps: float) -> None:
    vocab = _vocab()
    mech = _mech(name, eps, vocab)
    x, y = _draw(mech, 400, seed=1)
    for lp in (bayes.unigram_log_prior(vocab), _tied_prior(len(vocab))):
        top = bayes.bayes_topk_attack(mech, x, y, ks=(1,), log_prior=lp)
        ref = bayes.bayes_attack(mech, x, y, log_prior=lp, keep_guesses=True)
        assert top.hits[0] == ref.n_tokens - ref.n_defended
        assert top.success[0] == pytest.approx(1.0 - ref.defense_rate, abs=1e-15)
        assert (top.ci_low[0], top.ci_high[0]) == pytest.approx((1 - ref.ci_high, 1 - ref.ci_low))
        assert top.n_kept == ref.n_kept
        ranks = bayes.posterior_ranks(bayes.channel_of(mech), x, y, lp, 1)
        guessed = vocab.ids(ref.guesses)
        np.testing.assert_array_equal(ranks == 0, guessed == x)


@pytest.mark.parametrize("name", NAMES)
def test_topk_success_is_nondecreasing_in_k(name: str) -> None:
    vocab = _vocab(2)
    mech = _mech(name, 2.0, vocab)
    x, y = _draw(mech, 500, seed=3)
    ks = list(range(1, len(vocab) + 1))
    res = bayes.bayes_topk_attack(mech, x, y, ks=ks)
    assert list(res.ks) == ks
    assert all(a <= b for a, b in zip(res.hits, res.hits[1:], strict=False))
    assert res.hits[-1] == res.n_tokens  # the whole vocabulary always holds the original
    d = res.to_dict()
    assert [t["k"] for t in d["top_k"]] == ks and d["tokens"] == 500


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("eps", [0.5, 3.0])
def test_ranks_equal_a_brute_force_sort_of_the_exact_channel(name: str, eps: float) -> None:
    vocab = _vocab(4)
    mech = _mech(name, eps, vocab)
    x, y = _draw(mech, 120, seed=5)
    for lp in (bayes.unigram_log_prior(vocab), _tied_prior(len(vocab))):
        want = _brute_ranks(mech, x, y, lp)
        for k_max in (1, 3, 10, len(vocab)):
            # tiny chunks too: columns one or two at a time give the same ranks
            for max_elements in (bayes.DEFAULT_MAX_ELEMENTS, 2 * len(vocab) * 4):
                got = bayes.posterior_ranks(
                    bayes.channel_of(mech), x, y, lp, k_max, max_elements=max_elements
                )
                np.testing.assert_array_equal(got, np.minimum(want, k_max))
        res = bayes.bayes_topk_attack(mech, x, y, ks=(1, 10), log_prior=lp)
        assert res.hits == (int(np.sum(want < 1)), int(np.sum(want < 10)))


def test_uniform_channel_and_prior_rank_by_id() -> None:
    """Every posterior is flat: the ranking is by id alone, so rank(x) = x."""
    vocab = _vocab()
    mech = _mech("random", 1.0, vocab)
    x, y = _draw(mech, 300, seed=6)
    flat = np.full(len(vocab), -np.log(len(vocab)))
    ranks = bayes.posterior_ranks(bayes.channel_of(mech), x, y, flat, len(vocab))
    np.testing.assert_array_equal(ranks, x)
    res = bayes.bayes_topk_attack(mech, x, y, ks=(1, 10), log_prior=flat)
    assert res.hits == (int(np.sum(x < 1)), int(np.sum(x < 10)))


def test_bad_k_and_misaligned_ids_are_refused() -> None:
    vocab = _vocab()
    mech = _mech("santext", 1.0, vocab)
    x, y = _draw(mech, 10, seed=0)
    with pytest.raises(DPCoreError, match="every k"):
        bayes.bayes_topk_attack(mech, x, y, ks=(0,))
    with pytest.raises(DPCoreError, match="every k"):
        bayes.bayes_topk_attack(mech, x, y, ks=(len(vocab) + 1,))
    with pytest.raises(DPCoreError, match="aligned"):
        bayes.bayes_topk_attack(mech, x, y[:-1])
    with pytest.raises(DPCoreError, match="no position"):
        bayes.bayes_topk_attack(mech, x[:0], y[:0])


# ---------------------------------------------------------------------------------------------
# The bench script and its docs page
# ---------------------------------------------------------------------------------------------
def _bench():
    name = "tong_optimal_attack_bench"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, ROOT / "bench" / "tong_optimal_attack.py")
    mod = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    sys.modules[name] = mod
    spec.loader.exec_module(mod)  # type: ignore[union-attr]
    return mod


#: Appended to every documented command: a tiny size (later options override earlier ones).
TINY = ["--sentences", "60", "--santext-epsilons", "2.0", "--custext-epsilons", "3.0"]


def test_bench_main_at_a_tiny_size(capsys: pytest.CaptureFixture[str]) -> None:
    out = _bench().main([*TINY, "--json"])
    printed = json.loads(capsys.readouterr().out)
    assert printed["rows"] == out["rows"]
    assert [(r["mechanism"], r["epsilon"]) for r in out["rows"]] == [("santext+", 2.0), ("custext+", 3.0)]
    st = out["setting"]
    assert st["sentences"] == 60 and st["seed"] == 0 and "SST-2" in st["sst2"]
    assert st["parameters"] == {"santext+": {"w": 0.999, "p": 0.0}, "custext+": {"k": 20}}
    for r in out["rows"]:
        (t1, t10) = r["top_k"]
        assert (t1["k"], t10["k"]) == (1, 10) and t1["hits"] <= t10["hits"] <= r["tokens"]
        assert t1["ci_low"] <= t1["success"] <= t1["ci_high"]
    again = _bench().run(sentences=60, epsilons={"santext+": [2.0], "custext+": [3.0]})

    def numbers(rows):  # every field but the wall time
        return [{k: v for k, v in r.items() if k != "seconds"} for r in rows]

    assert numbers(again["rows"]) == numbers(out["rows"])  # seeded: the same numbers every run


def _doc_commands() -> list[list[str]]:
    text = (ROOT / "docs" / "guides" / "optimal-attack.md").read_text(encoding="utf-8")
    cmds = []
    for block in re.findall(r"```bash\n(.*?)```", text, flags=re.S):
        for line in block.replace("\\\n", " ").splitlines():
            line = line.split("#", 1)[0].strip()
            if line.startswith("python bench/tong_optimal_attack.py"):
                cmds.append(shlex.split(line)[2:])
    return cmds


def test_every_command_of_the_docs_page_runs(capsys: pytest.CaptureFixture[str]) -> None:
    cmds = _doc_commands()
    assert cmds, "the page shows the bench command"
    for args in cmds:
        _bench().main([*args, *TINY])
        out = capsys.readouterr().out
        if "--json" in args:
            json.loads(out)
        else:
            assert "top-10" in out and "SST-2" in out
