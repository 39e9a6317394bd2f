"""The rewriter's contract, checked before any verdict (as the word-level audit checks its own).

1. **Its rng is its only randomness.** Two calls with generators of the same seed give the same
   rewrites, and a call leaves NumPy's and Python's global random states as they were (checked
   after a first call, which may load a model or import a library). The policy is the word
   audit's (:mod:`dpcore.textaudit.contract`): a rewriter that reads a global random state is
   audited as :class:`GlobalStateReseeded`, its global states seeded from the handed rng on every
   call (:func:`dpcore.rng.global_state_seeded_from`), and the whole check runs again on it; the
   result says so. A rewriter whose rewrites still differ for the same seed is refused: they
   could not be reproduced, and the audit's halves might not be independent.
2. **Calls of other sizes draw alike.** The audit asks for :data:`~dpcore.rewriter.draws.CHUNK`
   copies of an input per call and treats them as independent rewrites. :data:`PROBE` rewrites
   from one call are compared with as many single-copy calls by two permutation tests (2,000
   permutations): the number of distinct rewrites (a rewriter that repeats one rewrite within a
   call, or caches by input, fails it) and their mean length in words.
3. **Copies within a call are independent, on content.** Counts alone miss a rewriter whose
   copies share part of one draw (one word per call, shared by every copy, beside an independent
   one). :data:`GROUPS` more calls of :data:`GROUP_SIZE` copies are drawn. Every rewrite of the
   check (the call of :data:`PROBE` copies, these calls, the single calls) is compared with every
   other by the Jaccard similarity of their word sets (plus 1 when they are the same text). Under
   the contract the rewrites are independent and identically distributed whichever call drew
   them, so the calls' labels can be permuted; the statistic is the summed similarity of the
   pairs drawn by one call, against :data:`PERMUTATIONS` label permutations.

   Items 2 and 3 decide *how* the audit draws, never a verdict (the word audit's policy,
   :mod:`dpcore.textaudit.calls`): when any of their three p-values is below
   :data:`CONTRACT_ALPHA` the audit draws **one copy per call** (every rewrite its own call and
   stream: slower, but its bounds then rest only on item 1), and says why. A rewriter that keeps
   the contract is drawn one per call needlessly with probability ≤ 3·0.001. A rewriter whose
   copies may share randomness by design declares ``independent_copies = False`` and is drawn
   one per call without items 2–3. Every audit result states which independence its bounds
   rest on (:meth:`ContractReport.independence`).
4. **Different seeds.** When two seeds give the same rewrites the rewriter is deterministic; that
   is reported (a deterministic rewriter whose rewrites of x and x′ differ has an unbounded
   loss, which the audit then shows), not refused.
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace
from typing import Any

import numpy as np

from dpcore.rewriter.interface import TextRewriter, call_rewrite
from dpcore.rng import cell_seed_sequence, global_state_seeded_from
from dpcore.validation import DPCoreError

__all__ = [
    "CONTRACT_ALPHA",
    "GROUPS",
    "GROUP_SIZE",
    "PROBE",
    "UNBATCHED_PROBE",
    "ContractReport",
    "GlobalStateReseeded",
    "check_contract",
]

#: Rewrites per side of the size check.
PROBE = 24
#: Rewrites per side of items 1 and 4 for a rewriter drawn one copy per call by its own
#: declaration (``independent_copies = False``): a rewriter that draws from anything but its rng
#: differs in some of 8 rewrites unless it is all but deterministic.
UNBATCHED_PROBE = 8
#: Calls of :data:`GROUP_SIZE` copies drawn for the content check (besides the size check's).
GROUPS = 12
#: Copies per call of the content check.
GROUP_SIZE = 4
#: Permutations of the content check per block (bounded memory).
_BLOCK = 250
#: Level of each of the two permutation tests.
CONTRACT_ALPHA = 1e-3
PERMUTATIONS = 2000
_WORD = re.compile(r"\w+")


@dataclass(frozen=True)
class ContractReport:
    """What the contract check found: the rng rules held (or the audit would have been refused),
    and whether the audit may draw many copies per call (``batched``; else one copy per call,
    ``unbatched_because`` says why)."""

    reproducible: bool
    deterministic: bool
    distinct_p_value: float
    length_p_value: float
    probe: int
    #: p-value of the content check of independence within a call (item 3 of the module).
    content_p_value: float = 1.0
    #: Rewrites the content check compared, and in how many calls.
    content_rewrites: int = 0
    content_calls: int = 0
    #: Whether the audit draws many copies per call (False: one copy per call).
    batched: bool = True
    #: Why not: the check that failed (None: declared by the rewriter, or batched).
    unbatched_because: str | None = None
    #: The rewriter read NumPy's or Python's global random state (which one): it is audited with
    #: both seeded from the handed rng on every call (:class:`GlobalStateReseeded`).
    global_state_reseeded: str | None = None

    def independence(self) -> str:
        """The independence the audit's bounds rest on, in one sentence."""
        return self._independence() + (
            f"; it reads {self.global_state_reseeded} global random state, which the audit seeds from the "
            "handed rng on every call (as the word audit does)"
            if self.global_state_reseeded
            else ""
        )

    def _independence(self) -> str:
        if not self.batched:
            why = (
                f"the contract's check found that {self.unbatched_because}"
                if self.unbatched_because
                else "the rewriter declares independent_copies = False: its copies within a call are not "
                "relied on"
            )
            return f"one copy per rewrite call ({why}): every rewrite has its own call and random stream"
        return (
            "copies within one rewrite call are independent (the contract's content check: "
            f"{self.content_rewrites} rewrites in {self.content_calls} calls, "
            f"permutation p = {self.content_p_value:.2g}; "
            f"sizes: p = {min(self.distinct_p_value, self.length_p_value):.2g}); calls have their own random "
            "streams, and no call draws for both halves"
        )

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class GlobalStateReseeded:
    """A rewriter whose NumPy and Python global random states are seeded from the handed rng on
    every call (:func:`dpcore.rng.global_state_seeded_from`), so its rewrites are a function of
    that rng alone. Every other attribute is the wrapped rewriter's; it pickles when the wrapped
    one does (the audit's process pools and Ray).

    Parameters
    ----------
    rewriter:
        The rewriter to wrap.
    """

    def __init__(self, rewriter: TextRewriter) -> None:
        self.__dict__["wrapped"] = rewriter

    def __getattr__(self, name: str) -> Any:
        return getattr(self.__dict__["wrapped"], name)

    def __getstate__(self) -> dict[str, Any]:
        return dict(self.__dict__)

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)

    def rewrite(self, texts: list[str], rng: np.random.Generator) -> list[str]:
        """The wrapped ``rewrite(texts, rng)`` with the global states seeded from ``rng``."""
        with global_state_seeded_from(rng):
            return self.__dict__["wrapped"].rewrite(texts, rng)


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


def _similarity(texts: Sequence[str]) -> np.ndarray:
    """Rewrites × rewrites: the Jaccard similarity of their sets of lower-cased words, plus 1 when
    the two rewrites are the same text (two rewrites without words count as sharing them all)."""
    words = [frozenset(_WORD.findall(str(t).lower())) for t in texts]
    vocab = {w: i for i, w in enumerate(sorted(frozenset().union(*words)))}
    x = np.zeros((len(texts), len(vocab)), dtype=np.float64)
    for r, ws in enumerate(words):
        x[r, [vocab[w] for w in ws]] = 1.0
    inter = x @ x.T
    size = x.sum(axis=1)
    union = size[:, None] + size[None, :] - inter
    sim = np.divide(inter, union, out=np.ones_like(inter), where=union > 0)
    codes = np.unique(np.asarray(texts, dtype=object).astype(str), return_inverse=True)[1].ravel()
    return sim + (codes[:, None] == codes[None, :])


def _within_call(sim: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """Σ of ``sim`` over pairs of rewrites drawn by one call, for each row of ``labels``."""
    same = labels[:, :, None] == labels[:, None, :]
    return np.einsum("pij,ij->p", same, sim) - np.trace(sim)


def content_p_value(texts: Sequence[str], calls: Sequence[int], rng: np.random.Generator) -> float:
    """Permutation p-value that rewrites of one call are more alike than rewrites of different
    calls (item 3 of the module docstring).

    Parameters
    ----------
    texts:
        Every rewrite of one input.
    calls:
        The call that drew each (any integer labels; calls of one copy count too, as the
        reference of what independent draws look like).
    rng:
        Draws the permutations.

    Returns
    -------
    float
        (1 + #{permutations at least as alike within calls}) / (1 + :data:`PERMUTATIONS`).
    """
    labels = np.unique(np.asarray(calls), return_inverse=True)[1].ravel()
    if labels.size < 3 or np.bincount(labels).max() < 2:
        return 1.0
    sim = _similarity(texts)
    observed = float(_within_call(sim, labels[None, :])[0])
    hits = 0
    for b in range(0, PERMUTATIONS, _BLOCK):
        perms = np.stack([rng.permutation(labels) for _ in range(min(_BLOCK, PERMUTATIONS - b))])
        hits += int(np.count_nonzero(_within_call(sim, perms) >= observed - 1e-9))
    return float((hits + 1) / (PERMUTATIONS + 1))


def check_contract(rewriter: TextRewriter, text: str, *, seed: int, batched: bool = True) -> ContractReport:
    """Check the contract on ``text`` (module docstring); raise :class:`DPCoreError` when broken.

    Parameters
    ----------
    rewriter, text:
        What is checked, on which input.
    seed:
        The audit's seed (the check's streams derive from it).
    batched:
        Whether the audit will draw many copies per call. ``False`` (a rewriter that declares
        ``independent_copies = False``: the audit then draws one copy per call) checks items 1
        and 4 only, on :data:`UNBATCHED_PROBE` rewrites: copies within a call are never used
        together.
    """
    probe = PROBE if batched else UNBATCHED_PROBE
    # a first call loads what the rewriter loads lazily (a model, a library that seeds something
    # on import): only what a rewrite itself draws is the contract's business
    outer = (np.random.get_state(), random.getstate())  # noqa: NPY002 (the caller's, put back below)
    call_rewrite(rewriter, [text], _rng(seed, "warm-up"))
    np_state = np.random.get_state()  # noqa: NPY002 (the check reads the global state)
    py_state = random.getstate()
    first = call_rewrite(rewriter, [text] * probe, _rng(seed, "same"))
    np_after, py_after = np.random.get_state(), random.getstate()  # noqa: NPY002
    np.random.set_state(np_state)  # noqa: NPY002
    random.setstate(py_state)
    np_moved = any(
        not (np.array_equal(u, v) if isinstance(u, np.ndarray) else u == v)
        for u, v in zip(np_state, np_after, strict=True)
    )
    if (np_moved or py_after != py_state) and not isinstance(rewriter, GlobalStateReseeded):
        which = "NumPy's" if np_moved else "Python's"
        report = check_contract(GlobalStateReseeded(rewriter), text, seed=seed, batched=batched)
        np.random.set_state(outer[0])  # noqa: NPY002 (its unseeded warm-up drew from the caller's)
        random.setstate(outer[1])
        return replace(report, global_state_reseeded=which)
    again = call_rewrite(rewriter, [text] * probe, _rng(seed, "same"))
    if again != first:
        reseeded = isinstance(rewriter, GlobalStateReseeded)
        seeded = " even with its global random states seeded from it" if reseeded else ""
        raise DPCoreError(
            f"{rewriter.name} gives other rewrites for the same seed{seeded}: it must draw only from the rng "
            "it is handed"
        )
    other = call_rewrite(rewriter, [text] * probe, _rng(seed, "other"))
    deterministic = other == first
    if not batched:
        return ContractReport(True, bool(deterministic), 1.0, 1.0, probe, batched=False)
    singles = [call_rewrite(rewriter, [text], _rng(seed, "single", i))[0] for i in range(PROBE)]
    prng = _rng(seed, "permutations")
    both = [*other, *singles]
    codes = np.unique(np.asarray(both, dtype=object).astype(str), return_inverse=True)[1].ravel()
    lengths = np.asarray([len(t.split()) for t in both], dtype=np.float64)
    p_distinct = _perm_p(codes, PROBE, _distinct, prng)
    p_length = _perm_p(lengths, PROBE, _mean, prng)
    groups = [call_rewrite(rewriter, [text] * GROUP_SIZE, _rng(seed, "group", g)) for g in range(GROUPS)]
    content = [*other, *(t for g in groups for t in g), *singles]
    labels = [0] * PROBE + [1 + g for g in range(GROUPS) for _ in range(GROUP_SIZE)]
    labels += [1 + GROUPS + i for i in range(PROBE)]
    p_content = content_p_value(content, labels, prng)
    found = []
    if p_content < CONTRACT_ALPHA:
        found.append(
            f"its copies of one call agree in content more than copies of different calls ({len(content)} "
            f"rewrites in {GROUPS + 1 + PROBE} calls, permutation p = {p_content:.2g}): they share randomness"
        )
    if min(p_distinct, p_length) < CONTRACT_ALPHA:
        what = "how many distinct rewrites they hold" if p_distinct <= p_length else "how long they are"
        found.append(
            f"{PROBE} rewrites from one call differ from {PROBE} single calls in {what} (permutation "
            f"p = {min(p_distinct, p_length):.2g})"
        )
    why = "; and ".join(found) or None
    return ContractReport(
        True,
        bool(deterministic),
        float(p_distinct),
        float(p_length),
        PROBE,
        content_p_value=p_content,
        content_rewrites=len(content),
        content_calls=GROUPS + 1 + PROBE,
        batched=why is None,
        unbatched_because=why,
    )
