"""Rewriter plugins for ``audit-rewriter`` tests (loaded as tests/plugins/rewriters.py:FACTORY)."""

from __future__ import annotations

import random

import numpy as np

from dpcore.rewriter import RewriterClaim


class _Base:
    name = "plugin"

    def __init__(self, epsilon: float) -> None:
        self.claim = RewriterClaim(float(epsilon), unit="document", citation="test plugin")


class Shuffle(_Base):
    """Shuffles the words of its input: a leak of every word, caught by word n-grams."""

    name = "plugin:shuffle"

    def rewrite(self, texts: list[str], rng: np.random.Generator) -> list[str]:
        return [" ".join(rng.permutation(t.split()).tolist()) for t in texts]


class GlobalRandom(_Base):
    """Draws from NumPy's global state (audited with it seeded from the handed rng per call)."""

    name = "plugin:global-random"

    def rewrite(self, texts: list[str], rng: np.random.Generator) -> list[str]:
        return [f"{t} {np.random.randint(1000)}" for t in texts]  # noqa: NPY002 (the flaw tested)


class PythonRandom(_Base):
    """Draws from Python's global state (audited with it seeded from the handed rng per call)."""

    name = "plugin:python-random"

    def rewrite(self, texts: list[str], rng: np.random.Generator) -> list[str]:
        return [f"{t} {random.randint(0, 1000)}" for t in texts]


class OnePerCall(_Base):
    """One draw per call, repeated for every copy (its copies are not independent)."""

    name = "plugin:one-per-call"

    def rewrite(self, texts: list[str], rng: np.random.Generator) -> list[str]:
        k = int(rng.integers(1_000_000))
        return [f"{t} {k}" for t in texts]


class WrongLength(_Base):
    name = "plugin:wrong-length"

    def rewrite(self, texts: list[str], rng: np.random.Generator) -> list[str]:
        return ["x"]


def shuffle(epsilon: float) -> Shuffle:
    return Shuffle(epsilon)


class OwnGenerator(_Base):
    """Draws from a generator of its own, seeded once from the OS: no seed reproduces it (refused)."""

    name = "plugin:own-generator"

    def __init__(self, epsilon: float) -> None:
        super().__init__(epsilon)
        self._rng = np.random.default_rng()

    def rewrite(self, texts: list[str], rng: np.random.Generator) -> list[str]:
        return [f"{t} {int(self._rng.integers(1000))}" for t in texts]


def own_generator(epsilon: float) -> OwnGenerator:
    return OwnGenerator(epsilon)


def global_random(epsilon: float) -> GlobalRandom:
    return GlobalRandom(epsilon)


def python_random(epsilon: float) -> PythonRandom:
    return PythonRandom(epsilon)


def one_per_call(epsilon: float) -> OnePerCall:
    return OnePerCall(epsilon)


def wrong_length(epsilon: float) -> WrongLength:
    return WrongLength(epsilon)


def not_a_rewriter(epsilon: float) -> object:
    return object()


class SharedWord(_Base):
    """One word per call, "alpha" or "beta", shared by all its copies, beside an independent word
    per copy: its output ignores its input, but its copies are not independent (the contract
    refuses it; batched, it would look like a leak)."""

    name = "plugin:shared-word"
    WORDS = tuple(f"w{i}" for i in range(200))

    def rewrite(self, texts: list[str], rng: np.random.Generator) -> list[str]:
        shared = ("alpha", "beta")[int(rng.integers(2))]
        own = rng.choice(np.asarray(self.WORDS), size=len(texts))
        return [f"{shared} {w}" for w in own.tolist()]


def shared_word(epsilon: float) -> SharedWord:
    return SharedWord(epsilon)


class DiesInWorker(_Base):
    """Rewrites like :class:`Shuffle` in the audit's own process, but a worker process that calls
    it ends at once (``os._exit``): what a crash in a pool looks like."""

    name = "plugin:dies-in-worker"

    def rewrite(self, texts: list[str], rng: np.random.Generator) -> list[str]:
        import multiprocessing
        import os

        if multiprocessing.parent_process() is not None:
            os._exit(3)
        return [" ".join(rng.permutation(t.split()).tolist()) for t in texts]


def dies_in_worker(epsilon: float) -> DiesInWorker:
    return DiesInWorker(epsilon)
