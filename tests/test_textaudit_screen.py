"""The whole-vocabulary screen, the power statement and the draw engines of the text audit.

The planted flaws sit at words drawn by each test's own seed: nothing here names the flawed
word to the audit, which has to find it by screening the vocabulary with its default settings.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from scipy.stats import binom

from dpcore.cli import main
from dpcore.pairtest.power import detectable_excess, flag_probability
from dpcore.text import create_text_mechanism
from dpcore.text.sampling import pair_distances
from dpcore.text.vocab import Vocabulary, build_vocabulary
from dpcore.textaudit import DpcoreSanitizer, KaryRandomizedResponse, audit_text
from dpcore.textaudit.engine import DrawPlan, draw_words, summarize
from dpcore.validation import DPCoreError
from tests.conftest import RAY_GROUP
from tests.test_textaudit import _word_vocab


@pytest.fixture(scope="module")
def vocab2000() -> Vocabulary:
    return build_vocabulary("glove", size=2000)


class _PlantedRemap(KaryRandomizedResponse):
    """Correct k-RR at ε, except that one word is sent to one other word with probability p.

    A user's plugin: no declared distribution (``exact = False``), so the audit sees only draws.
    """

    exact = False

    def __init__(self, *, epsilon: float, words, src: int, dst: int, p: float) -> None:
        super().__init__(epsilon=epsilon, words=words)
        self.src, self.dst, self.p = src, dst, p

    def _draw(self, ids, rng):
        out = super()._draw(ids, rng)
        hit = (ids == self.src) & (rng.random(ids.size) < self.p)
        return np.where(hit, self.dst, out)


class _PlantedLeak(_PlantedRemap):
    """Correct k-RR, except that one word is passed through unchanged with probability p."""

    def _draw(self, ids, rng):
        out = KaryRandomizedResponse._draw(self, ids, rng)
        hit = (ids == self.src) & (rng.random(ids.size) < self.p)
        return np.where(hit, ids, out)


class _RaisesOnSome(KaryRandomizedResponse):
    """Correct k-RR through ``sample`` only, raising on a few words (a black box's own bug)."""

    exact = False
    sample_ids = None  # type: ignore[assignment]  # black-box path

    def __init__(self, *, epsilon: float, words, bad: set[str]) -> None:
        super().__init__(epsilon=epsilon, words=words)
        self.bad = bad

    def sample(self, words, rng):
        if words and words[0] in self.bad:
            raise ValueError(f"cannot sanitize {words[0]!r}")
        return super().sample(words, rng)


def _pair_words(r) -> set[str]:
    return {w for p in r.pairs if p.violates for w in (p.x, p.x_prime)}


@pytest.mark.parametrize("kind", ["remap", "leak"])
def test_the_screen_finds_a_planted_flaw_on_a_word_nobody_named(vocab2000, kind):
    rng = np.random.default_rng({"remap": 101, "leak": 202}[kind])
    src, dst = (int(i) for i in rng.choice(len(vocab2000), 2, replace=False))
    cls = _PlantedRemap if kind == "remap" else _PlantedLeak
    s = cls(epsilon=1.0, words=list(vocab2000.words), src=src, dst=dst, p=0.2)
    r = audit_text(s, vocab=vocab2000, seed=int(rng.integers(1 << 31)), workers=1)  # default settings
    assert r.strategy == "screen"
    assert r.screen["words_screened"] == 2000 and r.screen["draws_per_word"] == 10_000
    assert r.verdict == "violates"
    assert str(vocab2000.words[src]) in _pair_words(r)
    # the screen ranks the flawed word first, and the confirmed bound is well above the claim
    assert r.screen["top_words"][0]["word"] == str(vocab2000.words[src])
    assert r.max_lower_bound_ratio > 3.0
    # the same mechanism without the flaw: nothing flagged by the same default run
    ok = KaryRandomizedResponse(epsilon=1.0, words=list(vocab2000.words))
    assert audit_text(ok, vocab=vocab2000, seed=1, workers=1).verdict == "not-detected"


def test_words_that_fail_to_sample_stay_in_failures_and_the_rest_is_audited(vocab2000):
    rng = np.random.default_rng(303)
    small = _word_vocab(list(vocab2000.words[:300]))
    bad = {str(w) for w in rng.choice(small.words, 5, replace=False)}
    s = _RaisesOnSome(epsilon=1.0, words=list(small.words), bad=bad)
    r = audit_text(s, vocab=small, pairs=10, samples=2_000, screen_budget=300 * 400, seed=0, workers=1)
    assert set(r.failures) == bad
    assert r.screen["failed_words"] == 5
    assert r.pairs_tested == len(r.pairs) > 0  # failed words are never proposed
    assert not bad & {w for p in r.pairs for w in (p.x, p.x_prime)}
    assert "failed on 5 word(s)" in r.verdict_text


# --- calibration of screen + confirmation ----------------------------------------------------
@pytest.mark.parametrize("mech", ["krr", "santext"])
def test_screen_false_violation_rate_stays_under_one_minus_confidence(vocab2000, mech):
    """Correct mechanisms screened and confirmed over many seeds at confidence 0.8."""
    vocab = build_vocabulary("glove", size=200)
    if mech == "krr":
        s = KaryRandomizedResponse(epsilon=1.0, words=list(vocab.words))
    else:
        s = DpcoreSanitizer(create_text_mechanism("santext", vocab=vocab, epsilon=3.0))
    runs = 60
    flagged = sum(
        audit_text(
            s, vocab=vocab, pairs=10, samples=4_000, screen_budget=200 * 1_000, seed=seed, confidence=0.8
        ).verdict
        == "violates"
        for seed in range(runs)
    )
    limit = int(binom.isf(1e-4, runs, 0.2))  # P(Bin(60, 0.2) ≥ limit) < 1e-4
    assert flagged < limit


# --- the power statement ---------------------------------------------------------------------
class _TwoOutputs:
    """x → "y1" with probability p, x′ → "y1" with probability q (else "y2"): loss ln(p/q) on {y1}."""

    guarantee = "ldp"
    name = "two-outputs"

    def __init__(self, epsilon: float, p: float, q: float) -> None:
        self.epsilon, self.p, self.q = epsilon, p, q

    def sample(self, words, rng):
        pr = np.where(np.asarray(words, dtype=object) == "x", self.p, self.q)  # per word, in any call
        return np.where(rng.random(len(words)) < pr, "y1", "y2")


def test_planted_violations_of_the_stated_size_are_flagged_at_the_stated_rate():
    vocab = _word_vocab(["x", "x2"])
    eps, p, samples, conf = 1.0, 0.3, 2_000, 0.95
    n, alpha = samples // 2, (1 - conf) / 2
    det = detectable_excess(n, alpha, eps, p)
    assert math.isfinite(det.excess) and det.excess > 0
    runs = 300

    def rate(excess: float) -> int:
        s = _TwoOutputs(eps, p, p * math.exp(-(eps + excess)))
        return sum(
            audit_text(s, vocab=vocab, words=["x", "x2"], neighbors=0, samples=samples, seed=k).verdict
            == "violates"
            for k in range(runs)
        )

    at = rate(det.excess)
    # not significantly below the stated 0.9 (one-sided, 1e-3)
    assert at >= binom.ppf(1e-3, runs, 0.9)
    # and the statement is not vacuous: half the excess is flagged clearly less often, as the
    # exact flag probability says (two-sided binomial band at 1e-4)
    half = flag_probability(n, alpha, eps, p, det.excess / 2)
    assert half < 0.8
    got = rate(det.excess / 2)
    assert binom.ppf(1e-4, runs, half) <= got <= binom.isf(1e-4, runs, half)


def test_detectable_excess_is_the_smallest_excess_with_the_stated_power():
    n, alpha, c = 50_000, 0.05 / 100, 1.0
    for p in (0.5, 0.05, 0.005):
        d = detectable_excess(n, alpha, c, p)
        assert flag_probability(n, alpha, c, p, d.excess) >= 0.9
        assert flag_probability(n, alpha, c, p, max(0.0, d.excess - 0.01)) < 0.9
    # events too rare for n draws: no violation is detectable, said as ∞
    assert math.isinf(detectable_excess(1_000, alpha, c, 1e-4).excess)


def test_results_carry_the_power_statement(vocab2000):
    s = KaryRandomizedResponse(epsilon=1.0, words=list(vocab2000.words))
    r = audit_text(s, vocab=vocab2000, pairs=5, samples=20_000, screen_budget=2_000_000, seed=0)
    d = r.to_dict()
    assert d["detectable_violation"]["power"] == 0.9
    assert d["detectable_violation"]["excess"] > 0
    # the whole pipeline's statements, class by class, and what they do not cover
    classes = {st["class"] for st in d["power"]["statements"]}
    assert {"uniform", "single-output"} <= classes
    single = next(st for st in d["power"]["statements"] if st["class"] == "single-output")
    assert 0 < single["output_probability"] < 1 and single["claim"] == 1.0
    assert d["power"]["not_covered"] and "Not covered" in d["power"]["text"]
    for p in d["pairs"]:
        dv = p["detectable_violation"]
        assert dv["loss"] == pytest.approx(dv["claim"] + dv["excess"])
        # k-RR declares its rows: a planned (or screen) event uses all T draws, a selected one T/2
        assert dv["samples"] == (10_000 if p["event_source"] == "selected" else 20_000)
    assert "with probability ≥ 0.9 (whole pipeline)" in r.verdict_text
    assert "word_scores" not in d and len(r.word_scores) == 2000


# --- engines ---------------------------------------------------------------------------------
def _comparable(r) -> dict:
    d = r.to_dict()
    d.pop("execution")
    d.pop("elapsed_seconds")
    return d


def test_the_result_does_not_depend_on_the_number_of_workers(vocab2000):
    s = _PlantedRemap(epsilon=1.0, words=list(vocab2000.words), src=3, dst=9, p=0.05)
    kw = dict(vocab=vocab2000, pairs=8, samples=5_000, screen_budget=1_000_000, seed=12)
    one, two = audit_text(s, workers=1, **kw), audit_text(s, workers=2, **kw)
    assert _comparable(one) == _comparable(two)
    assert one.execution["workers"] == 1 and two.execution["workers"] == 2
    assert np.array_equal(one.word_scores, two.word_scores)


def test_draws_are_per_word_streams_whatever_the_shards():
    words = np.asarray([f"w{i}" for i in range(30)], dtype=object)
    s = KaryRandomizedResponse(epsilon=1.0, words=list(words))
    plan = DrawPlan("confirm", (500, 500))
    a = draw_words(s, words, np.arange(30), 7, plan, workers=1)
    b = draw_words(s, words, np.arange(29, -1, -1), 7, plan, workers=2)[::-1]
    assert all(
        np.array_equal(x, y)
        for u, v in zip(a, b, strict=True)
        for x, y in zip(u.counts, v.counts, strict=True)
    )


def test_summaries_list_the_top_outputs_and_bound_the_rest():
    counts = np.array([0, 5, 9, 1, 9, 0, 2], dtype=np.int64)
    s = summarize(counts, {"⊥": 4}, wid=3, top=3)
    assert list(s.codes) == [2, 4, 1] and list(s.counts) == [9, 9, 5]
    assert s.residual == 5 and s.self_count == 1 and s.distinct == 6 and s.labels == ()
    s2 = summarize(counts, {"⊥": 7}, wid=0, top=10)
    assert s2.residual == 0 and s2.labels == ("⊥",) and -1 in s2.codes


def test_vectorised_claims_equal_the_claim_of_each_pair():
    vocab = build_vocabulary("glove", size=3000)
    rng = np.random.default_rng(0)
    x, y = rng.integers(0, 3000, 300), rng.integers(0, 3000, 300)
    d = pair_distances(vocab.vectors, x, y)
    for name in ("santext", "santext+", "custext", "mahalanobis", "random"):
        s = DpcoreSanitizer(create_text_mechanism(name, vocab=vocab, epsilon=2.0))
        one = [
            s.claimed_bound(str(vocab.words[i]), str(vocab.words[j]), float(e))
            for i, j, e in zip(x, y, d, strict=True)
        ]
        np.testing.assert_allclose(s.claimed_bounds_ids(x, y, d), np.asarray(one), rtol=1e-12, err_msg=name)


# --- CLI -------------------------------------------------------------------------------------
def test_cli_screen_in_text_and_json(tmp_path, capsys):
    words = tmp_path / "words.txt"
    words.write_text("the\nof\nand\nto\nin\nhouse\nmoney\nworld\n", encoding="utf-8")
    base = ["audit-text", "--mechanism", "krr", "--epsilon", "1", "--vocab-size", "500", "--seed", "3"]
    base += ["--screen-words", f"@{words}", "--screen-budget", "8000", "--pairs", "4", "--samples", "2000"]
    assert main([*base, "--workers", "1"]) == 0
    out = capsys.readouterr().out
    assert "screen: 8 words × 1,000 draws" in out and "worst words" in out and "detect" in out
    assert main([*base, "--workers", "2", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["strategy"] == "screen" and d["screen"]["words_screened"] == 8
    assert d["execution"]["engine"] == "local" and d["execution"]["workers"] == 2


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--screen-budget", "0"], "--screen-budget"),
        (["--screen-budget", "1000"], "raise the budget"),
        (["--workers", "0"], "workers"),
        (["--address", "127.0.0.1:1"], "--engine ray"),
        (["--screen-words", "@/nonexistent/words.txt"], "no such file"),
        (["--screen-words", "the,zzzqqq"], "not in the"),
    ],
)
def test_cli_screen_bad_input_is_one_clear_line(capsys, extra, message):
    argv = ["audit-text", "--mechanism", "krr", "--epsilon", "1", "--vocab-size", "500", *extra]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


@RAY_GROUP
def test_ray_engine_gives_the_same_result(tmp_path, capsys, ray_runtime):
    vocab = build_vocabulary("glove", size=400)
    s = KaryRandomizedResponse(epsilon=1.0, words=list(vocab.words))
    kw = dict(vocab=vocab, pairs=4, samples=2_000, screen_budget=400 * 500, seed=5)
    local = audit_text(s, workers=1, **kw)
    plugin = tmp_path / "mine.py"  # the user's own file: Ray's workers cannot import it
    plugin.write_text(
        "import numpy as np\n"
        "class Leaky:\n"
        "    guarantee, name = 'ldp', 'leaky'\n"
        "    def __init__(self, epsilon, vocab):\n"
        "        self.epsilon, self.words = epsilon, np.asarray(vocab, dtype=object)\n"
        "    def sample(self, words, rng):\n"
        "        out = self.words[rng.integers(0, len(self.words), size=len(words))]\n"
        "        out[rng.random(len(words)) < 0.3] = words[0]\n"
        "        return out\n"
        "def make(epsilon, vocab):\n"
        "    return Leaky(epsilon, vocab)\n"
    )
    argv = ["audit-text", "--mechanism", f"{plugin}:make", "--epsilon", "1", "--vocab-size", "400"]
    argv += ["--screen-budget", "80000", "--pairs", "3", "--samples", "2000", "--seed", "1", "--json"]
    assert main([*argv, "--workers", "1"]) == 0
    cli_local = json.loads(capsys.readouterr().out)
    ray_run = audit_text(s, engine="ray", workers=2, **kw)  # both on the worker's one local Ray
    assert main([*argv, "--engine", "ray", "--workers", "2"]) == 0
    cli_ray = json.loads(capsys.readouterr().out)
    assert _comparable(local) == _comparable(ray_run)
    assert ray_run.execution["engine"] == "ray"
    for d in (cli_local, cli_ray):
        d.pop("execution")
        d.pop("elapsed_seconds")
    assert cli_local == cli_ray and cli_ray["verdict"] == "violates"
    with pytest.raises(DPCoreError, match="address"):
        audit_text(s, address="127.0.0.1:1", **kw)
