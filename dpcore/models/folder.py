"""Validate a model folder before any loader sees it: a model folder must never run code.

``transformers`` can execute Python shipped in a folder (a ``config.json`` whose ``auto_map``
names a module, loaded with ``trust_remote_code``), and pickle weights (``*.bin``, ``*.pt``,
``*.ckpt``) execute code when unpickled. dpcore loads only folders that pass
:func:`validate_model_folder`, and always with ``trust_remote_code=False`` and
``use_safetensors=True``. Every problem is one :class:`~dpcore.validation.DPCoreError` line:

- ``config.json`` missing, not UTF-8, not a JSON object, or naming custom code (``auto_map``);
- a ``model_type`` outside :data:`KNOWN_MODEL_TYPES`;
- an implausible config: ``vocab_size`` < 100, ``max_position_embeddings`` < 16, or sizes that
  are not positive integers within bounds;
- pickle weight files, or no ``*.safetensors`` weights;
- a safetensors file that is empty, truncated, or whose header is not valid JSON or points past
  the end of the file;
- ``tokenizer.json`` that is not a JSON object with a ``model`` (``{}``), and no ``vocab.txt``;
- ``training_record.json`` that is not UTF-8 JSON.

Reading is bounded: headers and JSON files larger than a few MB are refused, nothing is
deserialised beyond JSON.
"""

from __future__ import annotations

import json
import os
import struct
from pathlib import Path
from typing import Any

from dpcore.validation import DPCoreError

__all__ = ["KNOWN_MODEL_TYPES", "PICKLE_SUFFIXES", "validate_model_folder"]

#: Architectures with a masked-LM head in transformers that dpcore accepts.
KNOWN_MODEL_TYPES = frozenset(
    {
        "bert",
        "distilbert",
        "roberta",
        "xlm-roberta",
        "albert",
        "electra",
        "camembert",
        "deberta",
        "deberta-v2",
        "mpnet",
        "modernbert",
    }
)
#: Weight formats that unpickle (and so may run code) when loaded.
PICKLE_SUFFIXES = (".bin", ".pt", ".pth", ".pkl", ".pickle", ".ckpt", ".h5", ".msgpack")
_MAX_JSON_BYTES = 8_000_000
_MAX_HEADER_BYTES = 100_000_000


def _read_json(path: Path, what: str, *, required: bool) -> Any:
    if not path.is_file():
        if required:
            raise DPCoreError(f"{what} is missing from the model folder {str(path.parent)!r}")
        return None
    size = path.stat().st_size
    if size > _MAX_JSON_BYTES:
        raise DPCoreError(f"{what} is {size / 1e6:.1f} MB; a model folder's {what} is at most 8 MB")
    try:
        return json.loads(path.read_bytes().decode("utf-8"))
    except UnicodeDecodeError:
        raise DPCoreError(f"{what} in {str(path.parent)!r} is not UTF-8 text") from None
    except json.JSONDecodeError as exc:
        raise DPCoreError(
            f"{what} in {str(path.parent)!r} is not valid JSON ({exc.msg}, line {exc.lineno})"
        ) from None


def _check_int(cfg: dict[str, Any], key: str, lo: int, hi: int) -> None:
    v = cfg.get(key)
    if v is None:
        return
    if isinstance(v, bool) or not isinstance(v, int) or not lo <= v <= hi:
        raise DPCoreError(
            f"config.json: {key} = {v!r} is not plausible (expected a whole number in {lo:,}..{hi:,})"
        )


def _check_safetensors(path: Path) -> None:
    size = path.stat().st_size
    if size < 8:
        raise DPCoreError(f"weights {path.name!r} are empty or truncated ({size} bytes)")
    with path.open("rb") as fh:
        (n,) = struct.unpack("<Q", fh.read(8))
        if n == 0 or n > _MAX_HEADER_BYTES or 8 + n > size:
            raise DPCoreError(
                f"weights {path.name!r} are truncated or not safetensors (header of {n:,} bytes)"
            )
        raw = fh.read(n)
    try:
        header = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise DPCoreError(f"weights {path.name!r} have a corrupt safetensors header") from None
    if not isinstance(header, dict):
        raise DPCoreError(f"weights {path.name!r} have a corrupt safetensors header")
    data = size - 8 - n
    tensors = 0
    for name, info in header.items():
        if name == "__metadata__":
            continue
        offs = info.get("data_offsets") if isinstance(info, dict) else None
        if not (isinstance(offs, list) and len(offs) == 2 and all(isinstance(o, int) for o in offs)):
            raise DPCoreError(f"weights {path.name!r}: tensor {name!r} has no valid data offsets")
        if not 0 <= offs[0] <= offs[1] <= data:
            raise DPCoreError(
                f"weights {path.name!r} are truncated: tensor {name!r} ends past the end of the file"
            )
        tensors += 1
    if tensors == 0:
        raise DPCoreError(f"weights {path.name!r} hold no tensors")


def validate_model_folder(folder: str | os.PathLike[str]) -> dict[str, Any]:
    """Check a fill-mask model folder (see the module docstring); return its config.

    Raises
    ------
    DPCoreError
        One line naming the first problem found.
    """
    root = Path(folder)
    if not root.is_dir():
        raise DPCoreError(f"no model folder at {str(folder)!r}")
    cfg = _read_json(root / "config.json", "config.json", required=True)
    if not isinstance(cfg, dict):
        raise DPCoreError("config.json must be a JSON object")
    if "auto_map" in cfg or cfg.get("trust_remote_code"):
        raise DPCoreError(
            "config.json names custom code (auto_map); dpcore never runs code from a model folder"
        )
    mtype = cfg.get("model_type")
    if mtype not in KNOWN_MODEL_TYPES:
        raise DPCoreError(
            f"config.json: model_type {mtype!r} is not a known masked-LM architecture "
            f"({', '.join(sorted(KNOWN_MODEL_TYPES))})"
        )
    _check_int(cfg, "vocab_size", 100, 2_000_000)
    if "vocab_size" not in cfg:
        raise DPCoreError("config.json has no vocab_size")
    _check_int(cfg, "max_position_embeddings", 16, 1_000_000)
    for key in ("hidden_size", "num_hidden_layers", "num_attention_heads", "intermediate_size"):
        _check_int(cfg, key, 1, 1_000_000)
    files = [p for p in root.iterdir() if p.is_file()]
    pickles = sorted(p.name for p in files if p.name.lower().endswith(PICKLE_SUFFIXES))
    if pickles:
        raise DPCoreError(
            f"the model folder holds pickle weights ({', '.join(pickles[:3])}), which can run code when "
            "loaded; dpcore loads safetensors only (convert them, then remove the pickle files)"
        )
    weights = sorted(p for p in files if p.name.endswith(".safetensors"))
    if not weights:
        raise DPCoreError(f"no *.safetensors weights in the model folder {str(root)!r}")
    for w in weights:
        _check_safetensors(w)
    tok = _read_json(root / "tokenizer.json", "tokenizer.json", required=False)
    if tok is not None and not (isinstance(tok, dict) and isinstance(tok.get("model"), dict)):
        raise DPCoreError("tokenizer.json is not a tokenizer (no 'model' section)")
    vocab_txt = root / "vocab.txt"
    if tok is None and not (vocab_txt.is_file() and vocab_txt.stat().st_size > 0):
        raise DPCoreError("the model folder has neither tokenizer.json nor vocab.txt")
    rec = _read_json(root / "training_record.json", "training_record.json", required=False)
    if rec is not None and not isinstance(rec, dict):
        raise DPCoreError("training_record.json must be a JSON object")
    return cfg
