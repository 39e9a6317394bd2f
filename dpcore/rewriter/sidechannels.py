"""Text's side channels as binary events: the ``side`` distinguisher's features.

A rewriter can leak its input through what none of the other views reads: how long its output
is, how it is cased or punctuated, whether it holds digits, and where it puts the input words it
keeps. Each rewrite is read into a few numbers:

``tokens``
    whitespace-separated tokens (``len(text.split())``);
``characters``
    characters, spaces included (``len(text)``);
``capitals``
    upper-case letters (``str.isupper``);
``punctuation``
    punctuation marks and symbols: characters that are neither word characters nor whitespace
    (``[^\\w\\s]``);
``digits``
    decimal digits (``\\d``);
``positions``
    for each word of x or x′ (lower-cased runs of word characters, ``\\b\\w+\\b``) that the
    rewrite holds, the places it holds it at (word 1 is the rewrite's first such run).

The events are binary features of one rewrite, named by :func:`describe`: a count *equal to* v
and a count *at least* v for each value v seen in the audit's rewrites (their absences are
"not v" and "fewer than v"), and "word w is word i". The audit picks one of them, or thresholds a
naive-Bayes score over all of them, on the selection half, exactly as it does word n-grams
(:mod:`dpcore.rewriter.distinguish`): a side channel whose leak is one value of one count, a
count above or below a value, or one kept word's place is a marker of the power statement
(:data:`dpcore.rewriter.power.MARKERS`).

Not read: word lengths, whitespace other than the token count, a kept word's place counted from
the end or relative to another word, and a leak spread over several counts each too weak alone
(:data:`dpcore.rewriter.power.NOT_COVERED` says so).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

from dpcore.rewriter.ngrams import WORD, binary_matrix

__all__ = ["CHANNELS", "UNITS", "channel_counts", "describe", "side_matrix"]

#: The counted channels, in the order they are reported.
CHANNELS = ("tokens", "characters", "capitals", "punctuation", "digits")
#: What one unit of each channel is called (singular, plural).
UNITS = {
    "tokens": ("token", "tokens"),
    "characters": ("character", "characters"),
    "capitals": ("capital letter", "capital letters"),
    "punctuation": ("punctuation mark or symbol", "punctuation marks or symbols"),
    "digits": ("digit", "digits"),
}
_PUNCT = re.compile(r"[^\w\s]")
_DIGIT = re.compile(r"\d")
#: Separates the parts of a feature's name (a character no text feature is built from).
_SEP = "\x1f"


def channel_counts(texts: Sequence[str]) -> dict[str, np.ndarray]:
    """Each channel's count for each text (int64 arrays, one per channel of :data:`CHANNELS`).

    Examples
    --------
    >>> c = channel_counts(["Anna, 42!"])
    >>> [int(c[k][0]) for k in ("tokens", "characters", "capitals", "punctuation", "digits")]
    [2, 9, 1, 2, 2]
    """
    texts = [str(t) for t in texts]
    n = len(texts)
    return {
        "tokens": np.fromiter((len(t.split()) for t in texts), dtype=np.int64, count=n),
        "characters": np.fromiter(map(len, texts), dtype=np.int64, count=n),
        "capitals": np.fromiter((sum(map(str.isupper, t)) for t in texts), dtype=np.int64, count=n),
        "punctuation": np.fromiter((len(_PUNCT.findall(t)) for t in texts), dtype=np.int64, count=n),
        "digits": np.fromiter((len(_DIGIT.findall(t)) for t in texts), dtype=np.int64, count=n),
    }


def _kept_positions(text: str, words: frozenset[str]) -> set[str]:
    tokens = WORD.findall(text.lower())
    return {_SEP.join(("positions", w, str(i))) for i, w in enumerate(tokens) if w in words}


def side_matrix(texts: Sequence[str], inputs: Sequence[str] = ()) -> tuple[object | None, np.ndarray]:
    """The binary rewrites × events matrix (``scipy.sparse`` CSR) and the events' names.

    Parameters
    ----------
    texts:
        The rewrites.
    inputs:
        The audited inputs (x and x′), whose words' places are read; none: counts only.

    Returns
    -------
    tuple
        ``(matrix, names)``, channel by channel (each count's values ascending, "equal to" before
        "at least"), then the places, sorted; ``(None, empty)`` for no text. :func:`describe`
        turns a name into words.
    """
    from scipy.sparse import csr_matrix, hstack

    texts = [str(t) for t in texts]
    if not texts:
        return None, np.array([], dtype=object)
    counts = channel_counts(texts)
    blocks, names = [], []
    for channel in CHANNELS:
        c = counts[channel]
        values = np.unique(c)
        # "equal to" each seen value; "at least" each but the smallest (which every text is)
        blocks.append(csr_matrix(np.hstack([c[:, None] == values, c[:, None] >= values[1:]]), dtype=np.int64))
        names += [_SEP.join((channel, "=", str(v))) for v in values.tolist()]
        names += [_SEP.join((channel, ">=", str(v))) for v in values[1:].tolist()]
    words = frozenset(w for x in inputs for w in WORD.findall(str(x).lower()))
    if words:
        places, place_names = binary_matrix([_kept_positions(t, words) for t in texts])
        if places is not None:
            blocks.append(places)
            names += place_names.tolist()
    return hstack(blocks, format="csr"), np.asarray(names, dtype=object)


def describe(name: str, present: bool) -> str:
    """An event of :func:`side_matrix` (or its absence) in words.

    Examples
    --------
    >>> describe("tokens\\x1f=\\x1f7", True), describe("tokens\\x1f>=\\x1f7", False)
    ('output has exactly 7 tokens', 'output has fewer than 7 tokens')
    >>> describe("positions\\x1fanna\\x1f0", True)
    "output has 'anna' as word 1"
    """
    channel, op, value = str(name).split(_SEP)
    if channel == "positions":
        has = "has" if present else "does not have"
        return f"output {has} {op!r} as word {int(value) + 1}"
    v = int(value)
    unit = UNITS[channel][0 if v == 1 else 1]
    if op == "=":
        return f"output has exactly {v} {unit}" if present else f"output does not have exactly {v} {unit}"
    return f"output has ≥ {v} {unit}" if present else f"output has fewer than {v} {unit}"
