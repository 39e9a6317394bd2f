"""Does a sanitizer sample what it declares? A goodness-of-fit test before any declared row is used.

A sanitizer that declares its exact output distribution (``log_prob_row`` and ``exact`` true)
gets two privileges in the audit: stage 2 adds events planned from the declared rows (bounded on
all draws) to the events it selects from the draws and the screen's outputs (it never drops
those: a sampler that departs from its declaration in a way this test misses is still judged on
its own draws), and the result reports an ``exact_verdict`` computed from the rows. Both are void
when the sampler does not follow the declaration, for instance a subclass of an exact mechanism
whose ``sample`` was changed but whose ``log_prob_row`` was inherited.

The test
--------
On draws made *before* stage 2 (the screen's m draws per word, or the pilot's), for a set of
words W and, per word, the outputs whose counts are known (the listed outputs of the screen's
summary, the word itself) and its 8 most probable declared outputs:

- a listed output y with count c: two-sided binomial p-value 2·min(Pr[Bin(m, p) ≥ c],
  Pr[Bin(m, p) ≤ c]) at the declared p = Pr[M(x) = y] (0 when p = 0 < c);
- a declared output not listed: its count is at most the summary's residual r, so
  Pr[Bin(m, p) ≤ r] is a conservative lower-tail p-value.

The family is every (screened word, output) cell, whichever were looked at, so the Bonferroni
threshold α_decl / (|screened words| · (|outputs| + 9)) is valid however W and the listed outputs
were chosen from the data. A mismatch voids the declaration for the whole audit: events are then
chosen from data and no ``exact_verdict`` is reported. Because the test uses only draws made
before stage 2, stage 2's verdicts keep their level whichever way it goes; stage 2 counts the
planned events among its tests only when it agrees
(:meth:`~dpcore.pairtest.budget.AlphaBudget.confirmation_tests`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from scipy.special import bdtr, bdtrc

from dpcore.textaudit.engine import DrawPlan, WordDraws
from dpcore.textaudit.sampling import OutputCodebook

if TYPE_CHECKING:
    from dpcore.pairtest.budget import AlphaBudget
    from dpcore.text.vocab import Vocabulary
    from dpcore.textaudit.plan import AuditPlan

__all__ = ["DeclarationCheck", "check_declaration", "declares_rows", "exact_rows", "pad_log"]

#: Most probable declared outputs tested per word besides the observed ones.
DECLARED_TOP = 8


@dataclass(frozen=True)
class DeclarationCheck:
    """The outcome of the declaration test.

    Attributes
    ----------
    status:
        ``"agrees"`` (no mismatch found), ``"mismatch"`` (the sampler departs from its declared
        rows: they are not used) or ``"not-declared"`` (nothing to check).
    p_value:
        The smallest Bonferroni-adjusted p-value (min(1, p·family)).
    alpha:
        The test's share of the audit's α.
    words_tested, cells_tested, family:
        Words and (word, output) cells looked at; the Bonferroni family size.
    draws_per_word:
        m, the draws per word behind the counts.
    worst:
        The cell with the smallest p-value: word, output, count, expected count.
    """

    status: str
    p_value: float
    alpha: float
    words_tested: int
    cells_tested: int
    family: int
    draws_per_word: int
    worst: dict[str, Any] | None
    test: str = "two-sided exact binomial per (word, output) cell, Bonferroni over every cell"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self) | {"text": self.text()}

    def text(self) -> str:
        if self.status == "not-declared":
            return "the sanitizer declares no exact distribution"
        w = self.worst or {}
        where = (
            f"{w.get('word')!r} → {w.get('output')!r}: {w.get('count')} of {self.draws_per_word:,} draws "
            f"where the declaration expects {w.get('expected', 0):.3g}"
        )
        if self.status == "mismatch":
            return (
                f"the sampler does not follow its declared distribution ({where}; adjusted p = "
                f"{self.p_value:.2g} < {self.alpha:.2g}): its declared rows are not used"
            )
        return (
            f"the sampler agrees with its declared distribution on {self.words_tested} words "
            f"({self.cells_tested:,} outputs; smallest adjusted p = {self.p_value:.2g})"
        )


def declares_rows(sanitizer: Any) -> bool:
    """True when the sanitizer declares exact rows (``log_prob_row`` and ``exact`` not false)."""
    return callable(getattr(sanitizer, "log_prob_row", None)) and bool(getattr(sanitizer, "exact", True))


def pad_log(row: np.ndarray, n: int) -> np.ndarray:
    """A log-probability row extended to ``n`` outputs (outputs it never saw have probability 0)."""
    return row if row.size >= n else np.concatenate([row, np.full(n - row.size, -np.inf)])


def exact_rows(
    sanitizer: Any, words: np.ndarray, ids: np.ndarray, codebook: OutputCodebook
) -> dict[int, np.ndarray] | None:
    """Declared ln Pr[M(x) = ·] over the codebook for each id (None when nothing is declared)."""
    if not declares_rows(sanitizer):
        return None
    rows: dict[int, np.ndarray] = {}
    for wid in np.unique(ids):
        outs, lp = sanitizer.log_prob_row(str(words[wid]))
        lp = np.asarray(lp, dtype=np.float64)
        codes = codebook.codes(outs, len(lp))
        row = np.full(len(codebook), -np.inf)
        row[codes] = np.where(np.isnan(lp), -np.inf, lp)
        rows[int(wid)] = row
    return rows


def check_declaration(
    sanitizer: Any,
    words: np.ndarray,
    codebook: OutputCodebook,
    observations: dict[int, tuple[np.ndarray, np.ndarray, int]],
    *,
    m: int,
    alpha: float,
    screened: int,
) -> DeclarationCheck:
    """Test the declared rows against counts drawn before stage 2.

    Parameters
    ----------
    sanitizer:
        The audited sanitizer.
    words, codebook:
        The vocabulary's words and the audit's output codes.
    observations:
        Word id → (codes, counts, residual): the outputs whose counts are known, and a bound on
        every other output's count (0 when every output is listed).
    m:
        Draws per word behind the counts.
    alpha:
        The test's level.
    screened:
        Words the observations could have come from (the Bonferroni family is every cell of them).
    """
    if not declares_rows(sanitizer) or not observations:
        return DeclarationCheck("not-declared", 1.0, float(alpha), 0, 0, 0, int(m), None)
    wids = np.fromiter(observations, dtype=np.int64)
    rows = exact_rows(sanitizer, words, wids, codebook)
    assert rows is not None
    size = len(codebook)
    family = int(max(1, screened) * (size + DECLARED_TOP + 1))
    best_p, worst, cells = 1.0, None, 0
    for wid in wids:
        codes, counts, residual = observations[int(wid)]
        row = pad_log(rows[int(wid)], size)
        codes = np.asarray(codes, dtype=np.int64)
        counts = np.asarray(counts, dtype=np.int64)
        p = np.exp(row[codes])
        up = np.where(counts > 0, bdtrc(counts - 1, m, p), 1.0)
        up = np.where((p <= 0) & (counts > 0), 0.0, up)
        lo = bdtr(counts, m, p)
        pv = np.minimum(1.0, 2.0 * np.minimum(up, lo))
        # the most probable declared outputs that are not listed: count ≤ residual
        top = np.argsort(-row, kind="stable")[:DECLARED_TOP]
        top = top[np.isfinite(row[top]) & ~np.isin(top, codes)]
        pt = np.exp(row[top])
        pv_top = np.minimum(1.0, bdtr(residual, m, pt))
        cells += codes.size + top.size
        all_p = np.concatenate([pv, pv_top])
        if all_p.size == 0:
            continue
        k = int(np.argmin(all_p))
        if all_p[k] < best_p or worst is None:
            best_p = float(all_p[k])
            out_code = int(codes[k]) if k < codes.size else int(top[k - codes.size])
            count = int(counts[k]) if k < codes.size else f"≤ {int(residual)}"
            worst = {
                "word": str(words[wid]),
                "output": codebook.label(out_code),
                "count": count,
                "expected": float(m * math.exp(row[out_code])) if np.isfinite(row[out_code]) else 0.0,
                "p_value": float(all_p[k]),
            }
    adjusted = min(1.0, best_p * family)
    status = "mismatch" if best_p * family < alpha else "agrees"
    return DeclarationCheck(
        status, float(adjusted), float(alpha), int(wids.size), int(cells), family, int(m), worst
    )


# --- the audit's stage -----------------------------------------------------------------------

#: Word id → (output codes, their counts, a bound on any other output's count).
Observations = dict[int, tuple[np.ndarray, np.ndarray, int]]


def own_draws_per_word(samples: int) -> int:
    """Draws per word of the declaration's own draws (no screen): max(1,000, T/10)."""
    return max(1_000, samples // 10)


def observe(
    draw: Callable[[np.ndarray, DrawPlan], list[WordDraws]],
    wids: np.ndarray,
    m: int,
    codebook: OutputCodebook,
) -> Observations:
    """Draws of their own for the declaration test (no screen): ``m`` per word of ``wids``."""
    obs: Observations = {}
    for wd in draw(wids, DrawPlan("declaration", (m,))):
        if wd.error is not None:
            continue
        c = wd.counts[0]
        c = c if c.size >= len(codebook) else np.pad(c, (0, len(codebook) - c.size))
        for label, v in sorted(wd.extras[0].items()):
            code = codebook.code(label)
            c = c if c.size >= code + 1 else np.pad(c, (0, code + 1 - c.size))
            c[code] += v
        nz = np.flatnonzero(c)
        obs[int(wd.wid)] = (nz, c[nz], 0)
    return obs


def run(
    plan: AuditPlan,
    draw: Callable[[np.ndarray, DrawPlan], list[WordDraws]],
    pairs: np.ndarray,
    *,
    sanitizer: Any,
    vocab: Vocabulary,
    codebook: OutputCodebook,
    budget: AlphaBudget,
    screened: tuple[Observations, int] | None = None,
) -> DeclarationCheck:
    """The declaration stage: test the declared rows on draws made before stage 2.

    ``screened``: the screen's observations and its draws per word; without a screen the words
    of ``pairs`` are drawn :func:`own_draws_per_word` times each here.
    """
    if screened is not None:
        obs, m = screened
    elif len(pairs):
        m = own_draws_per_word(plan.samples)
        obs = observe(draw, np.unique(pairs), m, codebook)
    else:
        obs, m = {}, 0
    n_family = len(plan.screen_ids) if plan.screen_ids is not None else max(1, len(obs))
    return check_declaration(
        sanitizer, vocab.words, codebook, obs, m=m, alpha=budget.declaration, screened=n_family
    )
