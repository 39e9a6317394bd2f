"""Loading a masked language model offline: the attacker of SanText's §5.3 attack.

dpcore ships a fine-tuned MiniLM masked LM (``dpcore/attack/models/minilm-mlm``, trained by
``python -m dpcore train-attacker``; see its ``training_record.json``) in two forms:

- ``model.onnx``, run with **onnxruntime** and tokenized with ``tokenizers``: the default, and
  all the app and the CLI need (no torch, no transformers). Its weights are stored in float16
  and computed in float32 (:mod:`dpcore.attack.onnx_export`); ``bench/attack.py`` measures its
  speed and its top-1 agreement with the torch model.
- ``model.safetensors`` for torch (``requirements-dev.txt``): training, export, and the
  comparison in ``bench/attack.py`` (``load_mlm(backend="torch")``).

Any other fill-mask model can be used instead (``--mlm NAME_OR_PATH``) where torch and
transformers are installed: a local folder, or a hub name that is already in the local Hugging
Face cache. Nothing is downloaded at run time (``HF_HUB_OFFLINE=1``, ``local_files_only=True``),
and no folder runs code: every folder passes
:func:`dpcore.models.folder.validate_model_folder` first (no ``auto_map``, no pickle
weights, sane config and files), and loaders get ``trust_remote_code=False`` and
``use_safetensors=True``.

Precision of the torch backend: ``"float32"``, ``"bfloat16"`` or ``"auto"`` (bfloat16 where the
CPU has native bf16 instructions, else float32). The onnxruntime backend computes in float32.
Results record the backend and precision used.

torch, transformers and onnxruntime are imported inside functions only, never when dpcore is
imported.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from dpcore.memory import release_after_pass
from dpcore.models.folder import validate_model_folder
from dpcore.models.onnx_session import onnx_session_bytes
from dpcore.models.resident import parameter_bytes, resident
from dpcore.validation import DPCoreError, check_int

__all__ = [
    "BACKENDS",
    "DEFAULT_MLM_DIR",
    "MaskedLM",
    "default_mlm_available",
    "fill_mask",
    "load_mlm",
    "masked_position_logits",
    "mlm_from_objects",
]

#: Accepted values of ``precision``.
PRECISIONS = ("auto", "float32", "bfloat16")
#: Masked variants per forward pass, unless the caller says otherwise. Results do not depend on
#: it; memory does. The shipped attacker on onnxruntime, 4,520 masked positions of 150 tweets
#: (2 cores): batch 8, 16, 32, 64, 128, 256 held 40-50, 100-107, 190-203, 326-349, 560 and
#: 1,555 MiB above the loaded model, at 96-109, 110-112, 105, 103-113, 99 and 82 positions/s.
DEFAULT_BATCH_SIZE = 16

#: Accepted values of ``backend``: ``"auto"`` is onnxruntime for the shipped model, torch for
#: any other folder or hub name.
BACKENDS = ("auto", "onnxruntime", "torch")

#: The shipped attacker (config, tokenizer files, model.onnx, fp16 model.safetensors,
#: training_record.json).
DEFAULT_MLM_DIR = Path(__file__).resolve().parents[1] / "attack" / "models" / "minilm-mlm"

_HUB_NAME = re.compile(r"[A-Za-z0-9][\w.-]*(/[A-Za-z0-9][\w.-]*)?")

_NEEDS_TORCH = (
    "needs torch and transformers, which the runtime requirements leave out; install them with "
    "`pip install -r requirements-dev.txt` (or `pip install 'dpcore[torch]'`)"
)


@dataclass
class MaskedLM:
    """A masked LM and its tokenizer, ready for inference on the CPU.

    Attributes
    ----------
    name
        What the user asked for (folder or hub name), recorded in results.
    model
        The ``transformers`` ``*ForMaskedLM`` model (torch backend), or the onnxruntime
        ``InferenceSession`` (onnxruntime backend).
    tokenizer
        Its tokenizer: a ``transformers`` fast tokenizer, or a
        :class:`~dpcore.models.wordpiece.WordPieceTokenizer`.
    training_record
        The shipped model's ``training_record.json``, when present.
    precision
        ``"float32"`` or ``"bfloat16"``: the dtype inference runs in.
    backend
        ``"torch"`` or ``"onnxruntime"``.
    vocab_size
        Number of output logits.
    max_positions
        Longest input the model accepts, special tokens included (before the tokenizer's cap).
    """

    name: str
    model: Any
    tokenizer: Any
    training_record: dict[str, Any] | None = None
    precision: str = "float32"
    backend: str = "torch"
    vocab_size: int = 0
    max_positions: int = 512

    def resident_bytes(self) -> int:
        """About the bytes the loaded model holds (:mod:`dpcore.models.resident`): an ONNX graph
        stored in float16 is held in float32 (twice the file, plus the session's 16 MiB); a torch
        model, its parameters."""
        if self.backend == "onnxruntime":
            return onnx_session_bytes(Path(self.name) / "model.onnx")
        return parameter_bytes(self.model)

    @property
    def max_length(self) -> int:
        """Longest input the model accepts, special tokens included."""
        n = self.max_positions or 512
        tok_max = getattr(self.tokenizer, "model_max_length", n) or n
        return int(min(n, tok_max, 4096))

    def masked_logits(
        self, input_ids: np.ndarray, attention_mask: np.ndarray, positions: np.ndarray
    ) -> np.ndarray:
        """float32 logits (batch × vocab_size) at ``positions[r]`` of each row ``r``.

        ``input_ids`` and ``attention_mask`` are int64 (batch × length), right-padded.
        """
        if self.backend == "onnxruntime":
            (out,) = self.model.run(
                ["logits"],
                {"input_ids": input_ids, "attention_mask": attention_mask, "positions": positions},
            )
            return np.asarray(out, dtype=np.float32)
        import torch

        model = self.model
        inp, att = torch.from_numpy(input_ids), torch.from_numpy(attention_mask)
        rows, cols = torch.arange(len(positions)), torch.from_numpy(positions)
        with torch.inference_mode():
            if hasattr(model, "bert") and hasattr(model, "cls"):
                hidden = model.bert(input_ids=inp, attention_mask=att).last_hidden_state
                logits = model.cls(hidden[rows, cols])
            else:
                logits = model(input_ids=inp, attention_mask=att).logits[rows, cols]
            return logits.float().numpy()


def default_mlm_available() -> bool:
    """True if the shipped attacker is present (its ONNX graph and tokenizer)."""
    return (DEFAULT_MLM_DIR / "model.onnx").is_file() and (DEFAULT_MLM_DIR / "tokenizer.json").is_file()


def torch_available() -> bool:
    """True if torch and transformers can be imported (needed for ``backend="torch"``)."""
    import importlib.util

    try:
        return all(importlib.util.find_spec(m) is not None for m in ("torch", "transformers"))
    except (ImportError, ValueError):  # a module set to None in sys.modules
        return False


def mlm_from_objects(model: Any, tokenizer: Any, *, name: str = "custom") -> MaskedLM:
    """Wrap an already constructed torch model and tokenizer (used by tests and notebooks)."""
    if getattr(tokenizer, "mask_token_id", None) is None:
        raise DPCoreError(f"model {name!r} has no mask token: it is not a fill-mask model")
    model.eval()
    dtype = str(next(model.parameters()).dtype).replace("torch.", "")
    cfg = model.config
    return MaskedLM(
        name=name,
        model=model,
        tokenizer=tokenizer,
        precision=dtype,
        backend="torch",
        vocab_size=int(cfg.vocab_size),
        max_positions=int(getattr(cfg, "max_position_embeddings", 512) or 512),
    )


def _resolve_precision(precision: str) -> str:
    if precision not in PRECISIONS:
        raise DPCoreError(f"precision must be one of {', '.join(PRECISIONS)}, got {precision!r}")
    if precision != "auto":
        return precision
    import torch

    try:
        native = bool(torch.ops.mkldnn._is_mkldnn_bf16_supported())
    except (AttributeError, RuntimeError):
        native = False
    return "bfloat16" if native else "float32"


def _read_record(folder: str | Path) -> dict[str, Any] | None:
    rec_path = os.path.join(folder, "training_record.json")
    if os.path.isfile(rec_path):  # validated: UTF-8 JSON object
        with open(rec_path, encoding="utf-8") as fh:
            return json.load(fh)
    return None


def _onnx_expected(folder: str, fuse_decoder: bool = False) -> int:
    return onnx_session_bytes(Path(folder) / "model.onnx")


@resident("masked LM", expect=_onnx_expected)
def _load_onnx(folder: str, fuse_decoder: bool = False) -> MaskedLM:
    """The shipped attacker on onnxruntime (cached within the process's memory budget,
    :mod:`dpcore.models.resident`).

    The shipped graph computes its tied decoder so that onnxruntime keeps no pre-packed copy of
    the word-embedding matrix (:func:`dpcore.attack.onnx_export.unpack_tied_decoder`); the
    ``GemmTransposeFusion`` optimisation, which would fold it back, is turned off. That saves
    45 MiB at the same speed. ``fuse_decoder=True`` leaves it on: the previous behaviour, for
    ``bench/attack.py``'s comparison.
    """
    import onnxruntime as ort

    from dpcore.memory import release_free_memory
    from dpcore.models.onnx_session import session_options
    from dpcore.models.wordpiece import WordPieceTokenizer

    opts = session_options()
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    session = ort.InferenceSession(
        os.path.join(folder, "model.onnx"),
        sess_options=opts,
        providers=["CPUExecutionProvider"],
        disabled_optimizers=[] if fuse_decoder else ["GemmTransposeFusion"],
    )
    # Loading casts the float16-stored weights to float32 and frees the parsed graph: about
    # 25 MiB that glibc would otherwise keep in its heaps.
    release_free_memory()
    with open(os.path.join(folder, "config.json"), encoding="utf-8") as fh:
        cfg = json.load(fh)
    return MaskedLM(
        name=folder,
        model=session,
        tokenizer=WordPieceTokenizer(folder),
        training_record=_read_record(folder),
        precision="float32",
        backend="onnxruntime",
        vocab_size=int(cfg["vocab_size"]),
        max_positions=int(cfg.get("max_position_embeddings", 512)),
    )


@resident("masked LM")
def _load_torch(name: str, precision: str) -> MaskedLM:
    os.environ["HF_HUB_OFFLINE"] = "1"
    from transformers import AutoModelForMaskedLM, AutoTokenizer

    looks_like_path = os.path.isdir(name) or not _HUB_NAME.fullmatch(name)
    if looks_like_path and not os.path.isdir(name):
        raise DPCoreError(f"no model folder at {name!r}")
    folder = name if looks_like_path else _cached_snapshot(name)
    validate_model_folder(folder)  # before any loader: no custom code, no pickle, sane files
    from transformers.utils import logging as hf_logging

    verbosity, bars = hf_logging.get_verbosity(), hf_logging.is_progress_bar_enabled()
    hf_logging.set_verbosity_error()  # no load reports or progress bars on the user's terminal
    hf_logging.disable_progress_bar()
    try:
        tokenizer = AutoTokenizer.from_pretrained(folder, local_files_only=True, trust_remote_code=False)
        model = AutoModelForMaskedLM.from_pretrained(
            folder, local_files_only=True, trust_remote_code=False, use_safetensors=True
        )
    except Exception as exc:  # a folder that passed validation can still hold inconsistent weights
        msg = str(exc).strip().splitlines()[0][:300] if str(exc).strip() else type(exc).__name__
        raise DPCoreError(f"cannot load a fill-mask model from {name!r}: {msg}") from None
    finally:
        hf_logging.set_verbosity(verbosity)
        if bars:
            hf_logging.enable_progress_bar()
    import torch

    model = model.to(getattr(torch, precision)).eval()
    mlm = mlm_from_objects(model, tokenizer, name=name)
    mlm.training_record = _read_record(folder)
    return mlm


def _cached_snapshot(name: str) -> str:
    """The local folder of a hub model already in the Hugging Face cache (never downloads)."""
    try:
        from huggingface_hub import snapshot_download

        return str(snapshot_download(repo_id=name, local_files_only=True))
    except Exception:
        raise DPCoreError(
            f"model {name!r} is neither a folder nor in the local Hugging Face cache; dpcore never "
            "downloads at run time: fetch it once (e.g. `hf download NAME`) or pass a folder"
        ) from None


def load_mlm(
    name_or_path: str | os.PathLike[str] | None = None,
    *,
    precision: str = "auto",
    backend: str = "auto",
) -> MaskedLM:
    """Load a fill-mask model offline (cached within the process's memory budget,
    :mod:`dpcore.models.resident`: the same name returns the same object until the budget drops it).

    Parameters
    ----------
    name_or_path
        A folder, or a hub name already in the local Hugging Face cache. Default: the shipped
        attacker :data:`DEFAULT_MLM_DIR`.
    precision
        ``"auto"`` (default), ``"float32"`` or ``"bfloat16"``: the torch backend's dtype
        (see the module docstring). The onnxruntime backend accepts ``"auto"`` and
        ``"float32"``.
    backend
        ``"auto"`` (default: onnxruntime for the shipped model, torch for any other model),
        ``"onnxruntime"`` (the shipped model only) or ``"torch"``.

    Raises
    ------
    DPCoreError
        If the folder does not exist, the name is not cached locally, the model has no mask
        token, torch is needed but not installed, or the precision or backend is unknown.

    Examples
    --------
    >>> from dpcore.models.masked_lm import fill_mask, load_mlm
    >>> mlm = load_mlm()                      # the shipped attacker, on onnxruntime
    >>> [w for w, _ in fill_mask(mlm, "this movie was [MASK] and too long .", top_k=3)]  # doctest: +SKIP
    ['boring', 'good', 'funny']
    """
    if precision not in PRECISIONS:
        raise DPCoreError(f"precision must be one of {', '.join(PRECISIONS)}, got {precision!r}")
    if backend not in BACKENDS:
        raise DPCoreError(f"backend must be one of {', '.join(BACKENDS)}, got {backend!r}")
    if name_or_path is None:
        name = str(DEFAULT_MLM_DIR)
        shipped = True
    else:
        name = str(name_or_path).strip()
        if not name:
            raise DPCoreError("the masked-LM name or path is empty")
        shipped = os.path.isdir(name) and os.path.samefile(name, DEFAULT_MLM_DIR)
    if backend == "onnxruntime" and not shipped:
        raise DPCoreError("the onnxruntime backend runs the shipped attacker only; use backend='torch'")
    if shipped and backend != "torch":
        if precision == "bfloat16":
            raise DPCoreError("the onnxruntime backend computes in float32; bfloat16 needs backend='torch'")
        if not default_mlm_available():
            raise DPCoreError(
                f"the shipped attacker is missing from {DEFAULT_MLM_DIR}; rebuild it with "
                "`python -m dpcore train-attacker` then `python -m dpcore export-onnx`, or pass --mlm"
            )
        return _load_onnx(str(DEFAULT_MLM_DIR))
    if not torch_available():
        what = "the shipped attacker on torch" if shipped else f"the masked LM {name!r}"
        raise DPCoreError(f"running {what} {_NEEDS_TORCH}")
    if shipped and not (DEFAULT_MLM_DIR / "model.safetensors").is_file():
        raise DPCoreError(f"the shipped attacker's torch weights are missing from {DEFAULT_MLM_DIR}")
    return _load_torch(name, _resolve_precision(precision))


def masked_position_logits(mlm: MaskedLM, variants: list[tuple[list[int], int]]) -> np.ndarray:
    """float32 logits (numpy) at the mask position of each ``(ids, position)`` variant, one pass.

    Variants are right-padded into one batch. The output head is computed only at the masked
    positions (:meth:`MaskedLM.masked_logits`), on either backend.
    """
    tok = mlm.tokenizer
    pad = tok.pad_token_id if tok.pad_token_id is not None else 0
    width = max(len(ids) for ids, _ in variants)
    inp = np.full((len(variants), width), pad, dtype=np.int64)
    att = np.zeros((len(variants), width), dtype=np.int64)
    for r, (ids, _) in enumerate(variants):
        inp[r, : len(ids)] = ids
        att[r, : len(ids)] = 1
    cols = np.fromiter((p for _, p in variants), dtype=np.int64, count=len(variants))
    logits = mlm.masked_logits(inp, att, cols)
    # The forward pass's activations were freed inside the heaps of the runtime's worker threads;
    # hand them back to the OS so a long-running server does not keep them (dpcore.memory): now,
    # or once at the end of the caller's loop of passes (trim_after).
    release_after_pass()
    return logits


def fill_mask(mlm: MaskedLM, text: str, *, top_k: int = 5) -> list[tuple[str, float]]:
    """Top-k tokens (with probabilities) for the first mask token in ``text``.

    ``text`` contains the model's mask token, e.g. ``"i went to the [MASK] to buy some milk ."``.
    """
    k = check_int(top_k, name="top_k", min_value=1, max_value=1000)
    tok = mlm.tokenizer
    if tok.mask_token not in text:
        raise DPCoreError(f"text must contain the mask token {tok.mask_token!r}")
    ids = list(tok(text)["input_ids"])[: mlm.max_length]
    if tok.mask_token_id not in ids:
        raise DPCoreError("the mask token lies beyond the model's longest input")
    pos = ids.index(tok.mask_token_id)
    inp = np.asarray([ids], dtype=np.int64)
    logits = mlm.masked_logits(inp, np.ones_like(inp), np.asarray([pos], dtype=np.int64))[0].astype(
        np.float64
    )
    probs = np.exp(logits - logits.max())
    probs /= probs.sum()
    top = np.argsort(-probs, kind="stable")[: min(k, probs.size)]
    return [(str(tok.convert_ids_to_tokens(int(i))), float(probs[i])) for i in top]
