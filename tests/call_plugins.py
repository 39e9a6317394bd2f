"""Sanitizers that break how the text audit may call them (tests of :mod:`dpcore.textaudit.calls`
and :mod:`dpcore.textaudit.replay`).

Each is k-ary randomized response (ε-LDP on every single output) drawn through ``sample`` only
(no ``sample_ids``, no declared rows), changed in one way: how draws within one call relate, how
the call's size changes them, or where their randomness comes from.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from dpcore.textaudit.reference import KaryRandomizedResponse


class BlackBoxKrr(KaryRandomizedResponse):
    """k-RR seen only through ``sample`` (independent draws: the control)."""

    exact = False
    sample_ids = None  # type: ignore[assignment]

    def __getattribute__(self, name: str):  # no declared rows: the audit judges the draws alone
        if name == "log_prob_row":
            raise AttributeError(name)
        return super().__getattribute__(name)


class ConsistentReplacement(BlackBoxKrr):
    """Every occurrence of a word in one call replaced the same way (one draw per distinct word)."""

    def sample(self, words: Sequence[str], rng: np.random.Generator) -> np.ndarray:
        ids = self._ids(words)
        uniq, inv = np.unique(ids, return_inverse=True)
        return self.words[self._draw(uniq, rng)[inv]]


class RefreshedCache(BlackBoxKrr):
    """Within one call, a word's last output is reused; each occurrence refreshes it with
    probability ``rate`` (the first always draws)."""

    def __init__(self, *, epsilon: float, words: Sequence[str], rate: float) -> None:
        super().__init__(epsilon=epsilon, words=words)
        self.rate = rate

    def sample(self, words: Sequence[str], rng: np.random.Generator) -> np.ndarray:
        ids = self._ids(words)
        fresh = self._draw(ids, rng)
        order = np.argsort(ids, kind="stable")
        s = ids[order]
        refresh = rng.random(ids.size) < self.rate
        refresh[np.r_[True, s[1:] != s[:-1]]] = True  # each word's first occurrence draws
        src = np.maximum.accumulate(np.where(refresh, np.arange(ids.size), 0))
        out = np.empty_like(fresh)
        out[order] = fresh[order][src]
        return self.words[out]


class PassThroughOnCalls(BlackBoxKrr):
    """On calls of ``low``..``high`` words, each word is passed through unchanged with probability
    0.2 (about 5 nats over ε = 1 at |V| = 200); larger and smaller calls are correct."""

    def __init__(self, *, epsilon: float, words: Sequence[str], low: int, high: int) -> None:
        super().__init__(epsilon=epsilon, words=words)
        self.low, self.high = low, high

    def sample(self, words: Sequence[str], rng: np.random.Generator) -> np.ndarray:
        ids = self._ids(words)
        out = self._draw(ids, rng)
        if self.low <= ids.size <= self.high:
            out = np.where(rng.random(ids.size) < 0.2, ids, out)
        return self.words[out]


class FreshEntropyOnLargeCalls(BlackBoxKrr):
    """Draws from the rng it is handed on calls of up to 256 words, and above from a generator of
    its own that the audit's seed does not reach (the flaw under test). That generator is seeded
    once, when the object is made, so a test run is the same every time: OS entropy made the call
    check's χ² test fail one run in about a thousand (its level, 10⁻³)."""

    def __init__(self, *, epsilon: float, words: Sequence[str]) -> None:
        super().__init__(epsilon=epsilon, words=words)
        self._own = np.random.default_rng(20261206)

    def sample(self, words: Sequence[str], rng: np.random.Generator) -> np.ndarray:
        if len(words) > 256:
            rng = self._own  # the flaw under test: not the rng it is handed
        return self.words[self._draw(self._ids(words), rng)]


class ColdStart(BlackBoxKrr):
    """The first call that holds a word it has not seen draws one extra number first (a lazy
    per-word set-up: state carried between calls, no global random state)."""

    def __init__(self, *, epsilon: float, words: Sequence[str]) -> None:
        super().__init__(epsilon=epsilon, words=words)
        self.seen: set[str] = set()

    def sample(self, words: Sequence[str], rng: np.random.Generator) -> np.ndarray:
        new = set(words) - self.seen
        if new:
            self.seen |= new
            rng.random()
        return self.words[self._draw(self._ids(words), rng)]


class WordPassThroughInSentences(BlackBoxKrr):
    """Correct, except that ``target`` is passed through unchanged with probability 0.5 in calls
    of 2..64 words (a call-size flaw one word shows)."""

    def __init__(self, *, epsilon: float, words: Sequence[str], target: str) -> None:
        super().__init__(epsilon=epsilon, words=words)
        self.target = target

    def sample(self, words: Sequence[str], rng: np.random.Generator) -> np.ndarray:
        ids = self._ids(words)
        out = self._draw(ids, rng)
        if 2 <= ids.size <= 64:
            hit = (np.asarray(words, dtype=object) == self.target) & (rng.random(ids.size) < 0.5)
            out = np.where(hit, ids, out)
        return self.words[out]
