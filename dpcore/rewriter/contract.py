"""The rewriter's contract, checked before any verdict (as the word-level audit checks its own).

1. **Its rng is its only randomness.** Two calls with generators of the same seed give the same
   rewrites, and a call leaves NumPy's and Python's global random states as they were (checked
   after a first call, which may load a model or import a library). A
   rewriter that breaks either is refused: its rewrites could not be reproduced, and the
   audit's halves might not be independent.
2. **Calls of other sizes draw alike.** The audit asks for :data:`~dpcore.rewriter.draws.CHUNK`
   copies of an input per call and treats them as independent rewrites. :data:`PROBE` rewrites
   from one call are compared with as many single-copy calls by two permutation tests (2,000
   permutations): the number of distinct rewrites (a rewriter that repeats one rewrite within a
   call, or caches by input, fails it) and their mean length in words. Either p-value below
   :data:`CONTRACT_ALPHA` refuses the rewriter: a false refusal has probability ≤ 2·0.001.
3. **Different seeds.** When two seeds give the same rewrites the rewriter is deterministic; that
   is reported (a deterministic rewriter whose rewrites of x and x′ differ has an unbounded
   loss, which the audit then shows), not refused.
"""

from __future__ import annotations

import random
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from dpcore.rewriter.interface import TextRewriter, call_rewrite
from dpcore.rng import cell_seed_sequence
from dpcore.validation import DPCoreError

__all__ = ["CONTRACT_ALPHA", "PROBE", "ContractReport", "check_contract"]

#: Rewrites per side of the size check.
PROBE = 24
#: Level of each of the two permutation tests.
CONTRACT_ALPHA = 1e-3
PERMUTATIONS = 2000


@dataclass(frozen=True)
class ContractReport:
    """What the contract check found (all passed, or the audit would have been refused)."""

    reproducible: bool
    deterministic: bool
    distinct_p_value: float
    length_p_value: float
    probe: int

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _rng(seed: int, *key: str | int) -> np.random.Generator:
    return np.random.default_rng(cell_seed_sequence(int(seed), "rewriter-contract", *key))


def _perm_p(values: np.ndarray, k: int, stat, rng: np.random.Generator) -> float:
    """Two-sided permutation p-value of |stat(first k) − stat(rest)| (rows of permutations at once)."""
    idx = np.argsort(rng.random((PERMUTATIONS, values.size)), axis=1)
    perm = values[idx]
    observed = abs(stat(values[None, :k]) - stat(values[None, k:]))[0]
    hits = np.count_nonzero(np.abs(stat(perm[:, :k]) - stat(perm[:, k:])) >= observed - 1e-12)
    return float((hits + 1) / (PERMUTATIONS + 1))


def _distinct(codes: np.ndarray) -> np.ndarray:
    """Distinct values per row."""
    s = np.sort(codes, axis=1)
    return 1.0 + np.count_nonzero(np.diff(s, axis=1), axis=1)


def _mean(lengths: np.ndarray) -> np.ndarray:
    return lengths.mean(axis=1)


def check_contract(rewriter: TextRewriter, text: str, *, seed: int) -> ContractReport:
    """Check the contract on ``text`` (module docstring); raise :class:`DPCoreError` when broken."""
    # a first call loads what the rewriter loads lazily (a model, a library that seeds something
    # on import): only what a rewrite itself draws is the contract's business
    call_rewrite(rewriter, [text], _rng(seed, "warm-up"))
    np_state = np.random.get_state()  # noqa: NPY002 (the check reads the global state)
    py_state = random.getstate()
    first = call_rewrite(rewriter, [text] * PROBE, _rng(seed, "same"))
    np_after, py_after = np.random.get_state(), random.getstate()  # noqa: NPY002
    np.random.set_state(np_state)  # noqa: NPY002
    random.setstate(py_state)
    np_moved = any(
        not (np.array_equal(u, v) if isinstance(u, np.ndarray) else u == v)
        for u, v in zip(np_state, np_after, strict=True)
    )
    if np_moved or py_after != py_state:
        which = "NumPy's" if np_moved else "Python's"
        raise DPCoreError(
            f"{rewriter.name} draws from {which} global random state: it must use only the rng it is handed "
            "(rewrite(texts, rng)), or its rewrites cannot be reproduced"
        )
    again = call_rewrite(rewriter, [text] * PROBE, _rng(seed, "same"))
    if again != first:
        raise DPCoreError(
            f"{rewriter.name} gives other rewrites for the same seed: it must draw only from the rng it "
            "is handed"
        )
    other = call_rewrite(rewriter, [text] * PROBE, _rng(seed, "other"))
    deterministic = other == first
    singles = [call_rewrite(rewriter, [text], _rng(seed, "single", i))[0] for i in range(PROBE)]
    prng = _rng(seed, "permutations")
    both = [*other, *singles]
    codes = np.unique(np.asarray(both, dtype=object).astype(str), return_inverse=True)[1].ravel()
    lengths = np.asarray([len(t.split()) for t in both], dtype=np.float64)
    p_distinct = _perm_p(codes, PROBE, _distinct, prng)
    p_length = _perm_p(lengths, PROBE, _mean, prng)
    if min(p_distinct, p_length) < CONTRACT_ALPHA:
        what = "how many distinct rewrites" if p_distinct <= p_length else "how long the rewrites are"
        raise DPCoreError(
            f"{rewriter.name}: {PROBE} rewrites from one call differ from {PROBE} single calls in {what} "
            f"(permutation p = {min(p_distinct, p_length):.2g}): the copies of a call are not independent "
            "draws, so the audit cannot batch them"
        )
    return ContractReport(True, bool(deterministic), float(p_distinct), float(p_length), PROBE)
