"""A user's word sanitizer that passes 5% of words through with a fresh tag appended.

k-ary randomized response at ε over the vocabulary, except that with probability :data:`TAG_RATE`
the input word itself is returned with a random tag, ``f"{word}#{n}"``, n a fresh 62-bit number:
outputs outside V that never repeat. It claims ε-LDP and breaks it without bound: the event
"the output is ``cat`` followed by a tag" has probability 0.05 under M(cat) and 0 under M(x′)
for every other word x′.

Counted one output at a time, no tag is ever seen twice, so no count could show this; the audit
counts such outputs in the tag class of the word they begin with (``cat⟨+tag⟩``,
:func:`dpcore.textaudit.sampling.tag_classes`), and then flags it (issue 49, item 5). Audit it
with::

    python -m dpcore audit-text --mechanism tests/plugins/fresh_tags.py:make --epsilon 1 --seed 0
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

#: Share of words passed through with a fresh tag.
TAG_RATE = 0.05


class FreshTags:
    """k-RR at ε over ``vocab``; :data:`TAG_RATE` of the words passed through as ``word#n``."""

    guarantee = "ldp"

    def __init__(self, epsilon: float, vocab: Sequence[str]) -> None:
        self.name = "fresh-tags"
        self.epsilon = float(epsilon)
        self.words = np.asarray(list(vocab), dtype=object)
        self.index = {str(w): i for i, w in enumerate(self.words)}
        k = len(self.words)
        self.keep = float(np.exp(epsilon) / (np.exp(epsilon) + k - 1))

    def sample(self, words: Sequence[str], rng: np.random.Generator) -> np.ndarray:
        arr = np.asarray(list(words), dtype=object)
        uniq, inv = np.unique(arr, return_inverse=True)
        ids = np.asarray([self.index[str(w)] for w in uniq], dtype=np.int64)[inv]
        keep = rng.random(ids.size) < self.keep
        other = rng.integers(0, len(self.words) - 1, size=ids.size)
        other += other >= ids
        out = self.words[np.where(keep, ids, other)]
        tagged = np.flatnonzero(rng.random(ids.size) < TAG_RATE)
        tags = rng.integers(1 << 62, size=tagged.size)
        out[tagged] = [f"{w}#{t}" for w, t in zip(arr[tagged], tags, strict=True)]
        return out


def make(epsilon: float, vocab: Sequence[str]) -> FreshTags:
    """The CLI's factory (``--mechanism tests/plugins/fresh_tags.py:make``)."""
    return FreshTags(epsilon, vocab)
