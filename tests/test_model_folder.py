"""A model folder never runs code, and every broken folder is one clear line (issue 16, item 2)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from dpcore.models.folder import validate_model_folder
from dpcore.models.masked_lm import DEFAULT_MLM_DIR, load_mlm
from dpcore.validation import DPCoreError

ROOT = Path(__file__).resolve().parents[1]
VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "cat", "sat", "on", "mat", "."] + [
    f"[unused{i}]" for i in range(110)
]


@pytest.fixture(scope="module")
def good(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A valid, small BERT fill-mask folder (safetensors, tokenizer.json, training record)."""
    import torch
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers
    from transformers import BertConfig, BertForMaskedLM, PreTrainedTokenizerFast

    folder = tmp_path_factory.mktemp("good")
    tk = Tokenizer(models.WordPiece({w: i for i, w in enumerate(VOCAB)}, unk_token="[UNK]"))
    tk.normalizer = normalizers.BertNormalizer(lowercase=True)
    tk.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok = PreTrainedTokenizerFast(
        tokenizer_object=tk, unk_token="[UNK]", pad_token="[PAD]", cls_token="[CLS]", sep_token="[SEP]",
        mask_token="[MASK]", model_max_length=32,
    )  # fmt: skip
    torch.manual_seed(0)
    cfg = BertConfig(
        vocab_size=len(VOCAB), hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
        intermediate_size=32, max_position_embeddings=32,
    )  # fmt: skip
    BertForMaskedLM(cfg).save_pretrained(folder, safe_serialization=True)
    tok.save_pretrained(folder)
    (folder / "training_record.json").write_text(json.dumps({"note": "test"}))
    return folder


def _copy(good: Path, tmp_path: Path) -> Path:
    dst = tmp_path / "model"
    shutil.copytree(good, dst)
    return dst


def _edit_config(folder: Path, **changes: object) -> None:
    cfg = json.loads((folder / "config.json").read_text())
    cfg.update(changes)
    (folder / "config.json").write_text(json.dumps(cfg))


def test_good_and_shipped_folders_validate(good: Path) -> None:
    assert validate_model_folder(good)["model_type"] == "bert"
    assert validate_model_folder(DEFAULT_MLM_DIR)["model_type"] == "bert"
    mlm = load_mlm(str(good), precision="float32")
    assert mlm.tokenizer.mask_token == "[MASK]" and mlm.training_record == {"note": "test"}


def _auto_map(folder: Path, marker: Path) -> None:
    (folder / "evil.py").write_text(
        f"open({str(marker)!r}, 'w').write('ran')\n"
        "from transformers import BertForMaskedLM\n"
        "class Evil(BertForMaskedLM):\n    pass\n"
    )
    _edit_config(folder, auto_map={"AutoModelForMaskedLM": "evil.Evil"})


BROKEN = {
    "auto_map": (None, "custom code"),
    "pickle-bin": (lambda f: (f / "pytorch_model.bin").write_bytes(b"\x80\x04K\x01."), "pickle weights"),
    "empty-safetensors": (lambda f: (f / "model.safetensors").write_bytes(b""), "empty or truncated"),
    "truncated-safetensors": (
        lambda f: (f / "model.safetensors").write_bytes((f / "model.safetensors").read_bytes()[:5000]),
        "truncated",
    ),
    "no-weights": (lambda f: (f / "model.safetensors").unlink(), r"no \*\.safetensors"),
    "record-not-json": (lambda f: (f / "training_record.json").write_text("{oops"), "not valid JSON"),
    "record-not-utf8": (lambda f: (f / "training_record.json").write_bytes(b"\xff\xfe{}"), "not UTF-8"),
    "tokenizer-empty-object": (lambda f: (f / "tokenizer.json").write_text("{}"), "not a tokenizer"),
    "tiny-vocab": (lambda f: _edit_config(f, vocab_size=3), "vocab_size = 3"),
    "tiny-positions": (lambda f: _edit_config(f, max_position_embeddings=2), "max_position_embeddings = 2"),
    "unknown-type": (lambda f: _edit_config(f, model_type="gpt2"), "model_type 'gpt2'"),
    "config-not-json": (lambda f: (f / "config.json").write_text("not json"), "not valid JSON"),
    "config-missing": (lambda f: (f / "config.json").unlink(), "config.json is missing"),
}


@pytest.mark.parametrize("case", list(BROKEN))
def test_every_broken_folder_is_refused_before_loading(good: Path, tmp_path: Path, case: str) -> None:
    folder = _copy(good, tmp_path)
    marker = tmp_path / "ran.txt"
    edit, match = BROKEN[case]
    if edit is None:
        _auto_map(folder, marker)
    else:
        edit(folder)
    with pytest.raises(DPCoreError, match=match):
        load_mlm(str(folder), precision="float32")
    assert not marker.exists()


def test_cli_never_runs_folder_code_even_when_stdin_says_yes(good: Path, tmp_path: Path) -> None:
    folder = _copy(good, tmp_path)
    marker = tmp_path / "ran.txt"
    _auto_map(folder, marker)
    text = tmp_path / "in.txt"
    text.write_text("the cat sat on the mat .\n")
    proc = subprocess.run(
        [sys.executable, "-m", "dpcore", "mask-attack", "--input", str(text), "--mlm", str(folder)],
        input="y\ny\ny\n",
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    assert proc.returncode == 2
    assert proc.stdout == ""  # no prompt
    err = proc.stderr.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("dpcore: error:") and "custom code" in err[0]
    assert not marker.exists()


@pytest.mark.parametrize(
    "case", ["pickle-bin", "truncated-safetensors", "tokenizer-empty-object", "tiny-vocab"]
)
def test_cli_broken_folder_is_one_line_exit_2(
    good: Path, tmp_path: Path, case: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # The CLI's own entry point, in this process (the test above runs it as a real subprocess;
    # here each case would otherwise pay 4–5 s of importing torch again).
    from dpcore.cli import main

    folder = _copy(good, tmp_path)
    BROKEN[case][0](folder)
    text = tmp_path / "in.txt"
    text.write_text("the cat sat on the mat .\n")
    status = main(["mask-attack", "--input", str(text), "--mlm", str(folder)])
    out, err_text = capsys.readouterr()
    assert status == 2
    err = err_text.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("dpcore: error:"), err_text
    assert "Traceback" not in err_text and out == ""
