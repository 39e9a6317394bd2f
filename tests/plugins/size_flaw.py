"""A user's word sanitizer with a flaw on one word, only in calls of fewer than 4,096 words.

Written the way a new user would write one: k-ary randomized response at ε over the vocabulary
(ε-LDP: keep the word with probability e^ε/(e^ε + k − 1), else any other word), drawn as a
row sampler (each distinct word of a call gets its probability row over V, then ``rng.choice``).
Its flaw is a small-batch path: in a call of fewer than :data:`SMALL_CALL` words, the word
``target`` (the vocabulary's first word by default) emits the word ``output`` (the second) with
probability :data:`FLAW` on top of the row, a loss of about ln(0.3·(e + k − 1)) ≫ ε against any
other word. In larger calls it is a correct k-RR.

The audit draws its screen in calls of m words (a few hundred) and its stage 2 in calls of up to
65,536: the screen sees the flaw, stage 2 does not (issue 49, item 5). Audit it with::

    python -m dpcore audit-text --mechanism tests/plugins/size_flaw.py:make --epsilon 1 --seed 0
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

#: Calls with fewer words than this take the flawed path.
SMALL_CALL = 4096
#: Probability that the target emits the output on the flawed path.
FLAW = 0.3


class SmallCallFlaw:
    """k-RR at ε over ``vocab``, except ``target`` → ``output`` with probability :data:`FLAW` in
    calls of fewer than :data:`SMALL_CALL` words."""

    guarantee = "ldp"

    def __init__(self, epsilon: float, vocab: Sequence[str], *, target: int = 0, output: int = 1) -> None:
        self.name = "small-call-flaw"
        self.epsilon = float(epsilon)
        self.words = np.asarray(list(vocab), dtype=object)
        self.index = {str(w): i for i, w in enumerate(self.words)}
        k = len(self.words)
        self.keep = float(np.exp(epsilon) / (np.exp(epsilon) + k - 1))
        self.target, self.output = int(target), int(output)

    def row(self, wid: int, small: bool) -> np.ndarray:
        """The output distribution of word ``wid`` over the vocabulary (flawed on small calls)."""
        k = len(self.words)
        p = np.full(k, (1.0 - self.keep) / (k - 1))
        p[wid] = self.keep
        if small and wid == self.target:
            p *= 1.0 - FLAW
            p[self.output] += FLAW
        return p

    def sample(self, words: Sequence[str], rng: np.random.Generator) -> np.ndarray:
        uniq, inv = np.unique(np.asarray(list(words), dtype=object), return_inverse=True)
        small = len(inv) < SMALL_CALL
        out = np.empty(len(inv), dtype=np.int64)
        for u, w in enumerate(uniq):  # one row per distinct word of the call
            at = np.flatnonzero(inv == u)
            out[at] = rng.choice(len(self.words), size=at.size, p=self.row(self.index[str(w)], small))
        return self.words[out]


def make(epsilon: float, vocab: Sequence[str]) -> SmallCallFlaw:
    """The CLI's factory (``--mechanism tests/plugins/size_flaw.py:make``)."""
    return SmallCallFlaw(epsilon, vocab)
