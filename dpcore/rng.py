"""Seeds and random generators.

Every random function in dpcore takes an :class:`numpy.random.Generator` or an integer seed.
Results record the seed, so any figure or table can be reproduced exactly. Independent streams
(for example the two neighbouring datasets of an audit, or parallel workers) come from
:meth:`numpy.random.SeedSequence.spawn`, never from a shared global state.
"""

from __future__ import annotations

import contextlib
import random
import secrets
import struct
import threading
import zlib
from collections.abc import Iterator

import numpy as np

from dpcore.validation import check_int

__all__ = [
    "MAX_SEED",
    "cell_seed_sequence",
    "global_state_seeded_from",
    "make_rng",
    "resolve_seed",
    "spawn_rngs",
]

MAX_SEED = 2**63 - 1


def resolve_seed(seed: int | None) -> int:
    """Return ``seed`` validated, or a fresh random seed when ``seed`` is None.

    The returned value is what results record, so a run without a seed can still be repeated.
    """
    if seed is None:
        return secrets.randbits(63)
    return check_int(seed, name="seed", min_value=0, max_value=MAX_SEED)


def make_rng(seed: int | np.random.Generator | None) -> np.random.Generator:
    """Return a Generator: ``seed`` itself if it already is one, else ``default_rng(seed)``."""
    if isinstance(seed, np.random.Generator):
        return seed
    return np.random.default_rng(resolve_seed(seed))


def spawn_rngs(seed: int | np.random.SeedSequence, n: int) -> list[np.random.Generator]:
    """Return ``n`` statistically independent generators derived from one seed."""
    ss = seed if isinstance(seed, np.random.SeedSequence) else np.random.SeedSequence(seed)
    return [np.random.default_rng(s) for s in ss.spawn(n)]


def cell_seed_sequence(seed: int, *key: str | int | float) -> np.random.SeedSequence:
    """A SeedSequence for one cell of an experiment, from the user's seed and the cell's key.

    The same (seed, key) always gives the same stream, whatever else runs in the same grid, so a
    cell of a sweep is reproduced by auditing that cell alone with the recorded seed.
    """
    words: list[int] = [seed]
    for k in key:
        if isinstance(k, str):
            words.append(zlib.crc32(k.encode("utf-8")))
        elif isinstance(k, float):
            words.append(struct.unpack("<Q", struct.pack("<d", k))[0])
        else:
            words.append(int(k))
    return np.random.SeedSequence(words)


_GLOBAL_STATE_LOCK = threading.Lock()


@contextlib.contextmanager
def global_state_seeded_from(rng: np.random.Generator) -> Iterator[None]:
    """NumPy's legacy global state and Python's ``random`` seeded from ``rng`` for the block.

    The one policy both audits apply to code that reads a global random state (a third-party
    sanitizer or rewriter): two integers are drawn from ``rng``, seed ``np.random.seed`` and
    ``random.seed``, and both global states are put back as they were when the block ends, so the
    code's draws are a function of the handed ``rng`` and nothing else sees them. Blocks run one
    at a time per process (threads would otherwise reseed the one global state under each other).
    """
    a, b = (int(v) for v in rng.integers(0, 2**32, size=2))
    with _GLOBAL_STATE_LOCK:
        np_state = np.random.get_state()  # noqa: NPY002  (the state the wrapped code reads)
        py_state = random.getstate()
        np.random.seed(a)  # noqa: NPY002
        random.seed(b)
        try:
            yield
        finally:
            np.random.set_state(np_state)  # noqa: NPY002
            random.setstate(py_state)
