"""Which n-grams each rewrite contains: the binary document-term matrix of the ``words`` and
``chars`` distinguishers (:mod:`dpcore.rewriter.distinguish`).

The features, for a lower-cased text:

``words``
    Tokens are the runs of word characters (``\\b\\w+\\b``); the features are the tokens and the
    pairs of adjacent tokens joined by one space (word 1–2-grams).
``chars``
    Each whitespace-separated word is padded with one space on each side; the features are
    its substrings of 3 and 4 characters, and the padded word itself where it is shorter than 4
    (character 3–4-grams that never cross a word boundary).

Columns are the features in sorted order, the same matrix scikit-learn's ``CountVectorizer``
gives with ``binary=True`` and, for words, ``ngram_range=(1, 2)``,
``token_pattern=r"(?u)\\b\\w+\\b"``; for characters, ``analyzer="char_wb"``,
``ngram_range=(3, 4)`` (``tests/test_rewriter_ngrams.py`` compares the two on every text of
its corpus). dpcore used that class until it found that importing scikit-learn held 30 to 80
MiB in a dashboard server for four lines of work (issue 60's memory walk).

Reading the n-grams of a text is string work, one text at a time; the matrix is then built at
once (``np.unique`` over every feature of every text) and counted with sparse sums.
"""

from __future__ import annotations

import itertools
import re

import numpy as np

__all__ = ["KINDS", "WORD", "binary_matrix", "ngram_matrix", "text_ngrams"]

#: The two feature kinds.
KINDS = ("words", "chars")

#: A word: a run of word characters (the ``words`` n-grams' tokens, and the words the ``side``
#: distinguisher places).
WORD = re.compile(r"\b\w+\b")
_CHAR_SIZES = (3, 4)


def text_ngrams(text: str, kind: str) -> set[str]:
    """The n-grams of one text (see the module docstring).

    Examples
    --------
    >>> sorted(text_ngrams("The cat sat", "words"))
    ['cat', 'cat sat', 'sat', 'the', 'the cat']
    >>> sorted(text_ngrams("a Ox", "chars"))
    [' a ', ' ox', ' ox ', 'ox ']
    """
    lowered = text.lower()
    if kind == "words":
        tokens = WORD.findall(lowered)
        return {*tokens, *map(" ".join, itertools.pairwise(tokens))}
    if kind != "chars":
        raise ValueError(f"unknown n-gram kind {kind!r}; choose from {KINDS}")
    out: set[str] = set()
    for word in lowered.split():
        padded = f" {word} "
        for n in _CHAR_SIZES:
            out.update(padded[i : i + n] for i in range(max(1, len(padded) - n + 1)))
    return out


def ngram_matrix(texts: list[str], kind: str) -> tuple[object | None, np.ndarray]:
    """The binary texts × n-grams matrix (``scipy.sparse`` CSR, int64) and the n-grams, sorted.

    Returns
    -------
    tuple
        ``(matrix, names)``; ``(None, empty)`` when no text has any n-gram.
    """
    return binary_matrix([text_ngrams(t, kind) for t in texts])


def binary_matrix(per_text: list[set[str]]) -> tuple[object | None, np.ndarray]:
    """The binary texts × features matrix (``scipy.sparse`` CSR, int64) of each text's set of
    feature names, and the names, sorted (``(None, empty)`` when no text has any feature)."""
    from scipy.sparse import csr_matrix

    lengths = np.fromiter(map(len, per_text), dtype=np.int64, count=len(per_text))
    if lengths.sum() == 0:
        return None, np.array([], dtype=object)
    # a column per distinct name by hashing (sorting every occurrence as objects was most of the
    # time), then the distinct names sorted and the columns renumbered in that order
    index: dict[str, int] = {}
    first = np.fromiter(
        (index.setdefault(g, len(index)) for grams in per_text for g in grams),
        dtype=np.int64,
        count=int(lengths.sum()),
    )
    names = np.array(list(index), dtype=object)
    order = np.argsort(names, kind="stable")
    rank = np.empty_like(order)
    rank[order] = np.arange(order.size)
    names, columns = names[order], rank[first]
    indptr = np.concatenate(([0], np.cumsum(lengths)))
    data = np.ones(columns.size, dtype=np.int64)
    x = csr_matrix((data, columns.ravel().astype(np.int64), indptr), shape=(len(per_text), names.size))
    x.sort_indices()
    return x, names
