"""dpcore's n-gram matrix (:mod:`dpcore.rewriter.ngrams`) against scikit-learn's
``CountVectorizer`` with the settings the distinguishers used before: the same columns, in the
same order, and the same rows, on the rewriter corpus and on texts made to find differences."""

from __future__ import annotations

import numpy as np
import pytest

from dpcore.rewriter.ngrams import KINDS, ngram_matrix, text_ngrams
from dpcore.rewriter.pairs import corpus_sentences

ODD = [
    "",
    "   ",
    "!!! ... ???",
    "a",
    "I",
    "ab",
    "abc",
    "A  b\tc\nd",
    "Don't stop—believing, ok?",
    "naïve café ÉCOLE straße",
    "ΑΘΗΝΑ και Σίσυφος",
    "東京 タワー",
    "x_y z9 _ 42",
    "ﬁne Ǆ İstanbul",  # lower() changes the length of some of these
    "word\u2028next\u00a0nbsp",
    "the the the cat cat",
]


def _sklearn(texts: list[str], kind: str):
    from sklearn.feature_extraction.text import CountVectorizer

    if kind == "words":
        vec = CountVectorizer(binary=True, lowercase=True, ngram_range=(1, 2), token_pattern=r"(?u)\b\w+\b")
    else:
        vec = CountVectorizer(binary=True, lowercase=True, analyzer="char_wb", ngram_range=(3, 4))
    try:
        return vec.fit_transform(texts).tocsr(), vec.get_feature_names_out()
    except ValueError:
        return None, np.array([], dtype=object)


@pytest.mark.parametrize("kind", KINDS)
def test_same_matrix_as_count_vectorizer(kind: str) -> None:
    texts = [*corpus_sentences()[:400], *ODD]
    ours, names = ngram_matrix(texts, kind)
    ref, ref_names = _sklearn(texts, kind)
    assert ours is not None and ref is not None
    assert names.tolist() == ref_names.tolist()
    assert ours.shape == ref.shape and ours.dtype == ref.dtype
    assert (ours != ref).nnz == 0
    assert set(np.unique(ours.data).tolist()) == {1}


@pytest.mark.parametrize("kind", KINDS)
def test_each_odd_text_alone(kind: str) -> None:
    for text in ODD:
        ours, names = ngram_matrix([text, text.upper()], kind)
        ref, ref_names = _sklearn([text, text.upper()], kind)
        assert names.tolist() == ref_names.tolist(), text
        assert (ours is None) == (ref is None), text
        if ours is not None:
            assert (ours != ref).nnz == 0, text


def test_no_ngrams_at_all() -> None:
    assert ngram_matrix(["", "  ", "!?"], "words")[0] is None
    assert ngram_matrix([], "chars")[0] is None


def test_unknown_kind() -> None:
    with pytest.raises(ValueError, match="unknown n-gram kind"):
        text_ngrams("x", "letters")
