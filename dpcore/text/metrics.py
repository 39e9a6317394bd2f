"""Privacy metrics of token sanitization (Yue et al. 2021, §5.5, Fig. 5) and an exact bound check.

For a token x and a mechanism M with exact rows Pr[M(x) = ·]:

N_x
    Pr[M(x) = x], exact. −log N_x is the paper's proxy for the min-entropy H_∞.
S_x
    Effective support: the smallest number of outputs whose total probability reaches a
    threshold (default 0.95), exact; plus the paper's Monte-Carlo estimate, the number of
    distinct outputs in T runs (default 1,000), and its exact expectation
    Σ_y 1 − (1 − Pr[M(x)=y])^T. log S_x approximates the Hartley entropy H_0.
S_y*
    Plausible deniability (§5.5): the number of distinct inputs x in a population (default: all
    of V) that produced y in T runs each; Monte-Carlo (multinomial counts, exact in
    distribution) and its exact expectation Σ_x 1 − (1 − Pr[M(x)=y])^T.
H_0, H_∞
    log S_x (threshold) and −log max_y Pr[M(x)=y].

The Feyisetan baseline has no closed-form distribution: its N_x and S_x are Monte-Carlo only,
and S_y* is not computed.

The bound check (:func:`bound_check`) recomputes, from exact row probabilities, the inequality of
each mechanism's privacy map on sampled triples (x, x', y):
log Pr[M(x)=y] − log Pr[M(x')=y] ≤ ε·d(x, x') + ε₀ (Def. 2 / Def. 3 (i)), and for SanText+ the
invertibility condition Def. 3 (ii) on unprotected outputs.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from dpcore.rng import make_rng
from dpcore.text.mechanisms import ExponentialTokenMechanism, TextMechanism
from dpcore.text.sampling import pair_distances
from dpcore.validation import DPCoreError, check_finite_float, check_int, check_probability

__all__ = [
    "BoundCheckResult",
    "bound_check",
    "metrics_over_epsilons",
    "token_metrics",
    "words_to_ids",
]

MAX_METRIC_WORDS = 200
MAX_TRIALS = 100_000


def words_to_ids(mech: TextMechanism, words: list[str]) -> np.ndarray:
    """Ids of ``words`` in the mechanism's vocabulary; unknown words raise :class:`DPCoreError`."""
    if not words:
        raise DPCoreError("give at least one word")
    if len(words) > MAX_METRIC_WORDS:
        raise DPCoreError(f"at most {MAX_METRIC_WORDS} words at once, got {len(words)}")
    ids = mech.vocab.ids(words)
    missing = [w for w, i in zip(words, ids, strict=True) if i < 0]
    if missing:
        raise DPCoreError(
            f"not in the {len(mech.vocab):,}-word {mech.vocab.embedding} vocabulary: "
            + ", ".join(repr(m) for m in missing[:5])
        )
    return ids


def _expected_distinct(logp: np.ndarray, trials: int, axis: int) -> np.ndarray:
    """Σ 1 − (1 − p)^T along ``axis``, computed as −expm1(T·log1p(−p))."""
    p = np.exp(logp)
    with np.errstate(divide="ignore"):
        return -np.expm1(trials * np.log1p(-np.minimum(p, 1.0))).sum(axis=axis)


def token_metrics(
    mech: TextMechanism,
    words: list[str],
    *,
    threshold: float = 0.95,
    trials: int = 1000,
    seed: int | np.random.Generator | None = 0,
    population: int | None = None,
    with_s_y: bool = True,
) -> list[dict[str, Any]]:
    """Per-token privacy metrics N_x, S_x, S_y*, H_0, H_∞ (Yue et al. 2021, §5.5).

    Parameters
    ----------
    mech:
        A text mechanism.
    words:
        Tokens to report (each must be in the vocabulary).
    threshold:
        Probability mass defining the effective support S_x (0 < threshold ≤ 1).
    trials:
        Runs per input for the Monte-Carlo counts (the paper uses 1,000).
    seed:
        Seed or generator for the Monte-Carlo counts (recorded in each row when an int).
    population:
        Inputs over which S_y* counts distinct producers: ``None`` = all of V, else a seeded
        uniform sample of that many words (always including ``words``).
    with_s_y:
        Compute S_y* (costs rows for the whole population).

    Returns
    -------
    list of dict
        One dict per word: ``word``, ``N_x``, ``S_x``, ``H0``, ``H_inf``, ``neg_log_N_x``,
        ``S_x_mc``, ``S_x_mc_expected``, ``S_y_star_mc``, ``S_y_star_expected``,
        ``sensitive`` (SanText+), ``method`` ("exact" or "mc"), ``threshold``, ``trials``.
    """
    threshold = check_probability(threshold, name="threshold", open_low=True)
    trials = check_int(trials, name="trials", min_value=1, max_value=MAX_TRIALS)
    rng = make_rng(seed)
    ids = words_to_ids(mech, list(words))
    sens = getattr(mech, "sensitive", None)
    base = {"threshold": threshold, "trials": trials, "seed": seed if isinstance(seed, int) else None}
    if not isinstance(mech, ExponentialTokenMechanism):
        return _mc_metrics(mech, words, ids, threshold, trials, rng, base)
    rows: list[dict[str, Any]] = []
    logp = np.vstack([r for _, r in mech.iter_log_rows(ids)])
    p = np.exp(logp)
    n_x = p[np.arange(len(ids)), ids]
    srt = -np.sort(-p, axis=1)
    cs = np.cumsum(srt, axis=1)
    s_x = np.argmax(cs >= threshold * (1 - 1e-12), axis=1) + 1
    s_x = np.where(cs[:, -1] >= threshold * (1 - 1e-12), s_x, p.shape[1])
    s_mc = np.count_nonzero(rng.multinomial(trials, p / p.sum(axis=1, keepdims=True)), axis=1)
    s_mc_exp = _expected_distinct(logp, trials, axis=1)
    sy_mc: np.ndarray | None = None
    sy_exp: np.ndarray | None = None
    if with_s_y:
        sy_mc, sy_exp = _s_y_star(mech, ids, trials, rng, population)
    for k, word in enumerate(words):
        rows.append(
            {
                "word": word,
                "sensitive": None if sens is None else bool(sens[ids[k]]),
                "method": "exact",
                "N_x": float(n_x[k]),
                "S_x": int(s_x[k]),
                "H0": math.log(int(s_x[k])),
                "H_inf": float(-np.log(srt[k, 0])),
                "neg_log_N_x": float(-np.log(n_x[k])) if n_x[k] > 0 else math.inf,
                "S_x_mc": int(s_mc[k]),
                "S_x_mc_expected": float(s_mc_exp[k]),
                "S_y_star_mc": None if sy_mc is None else int(sy_mc[k]),
                "S_y_star_expected": None if sy_exp is None else float(sy_exp[k]),
                **base,
            }
        )
    return rows


def _s_y_star(
    mech: ExponentialTokenMechanism,
    y_ids: np.ndarray,
    trials: int,
    rng: np.random.Generator,
    population: int | None,
) -> tuple[np.ndarray, np.ndarray]:
    n_v = len(mech.vocab)
    if population is None or population >= n_v:
        pop = np.arange(n_v, dtype=np.int64)
    else:
        population = check_int(population, name="population", min_value=1, max_value=n_v)
        pop = np.union1d(rng.choice(n_v, size=population, replace=False), y_ids).astype(np.int64)
    uy, inv_y = np.unique(y_ids, return_inverse=True)
    # column probabilities Pr[M(x) = y] for every x in the population and each distinct y
    xx = np.repeat(pop, len(uy))
    yy = np.tile(uy, len(pop))
    logp = mech.log_prob(xx, yy).reshape(len(pop), len(uy))
    pcol = np.exp(logp)
    rest = np.clip(1.0 - pcol.sum(axis=1, keepdims=True), 0.0, 1.0)
    pvals = np.hstack([pcol, rest])
    pvals /= pvals.sum(axis=1, keepdims=True)
    counts = rng.multinomial(trials, pvals)[:, : len(uy)]  # exact joint counts of the y's
    mc = np.count_nonzero(counts, axis=0)
    expected = _expected_distinct(logp, trials, axis=0)
    return mc[inv_y], expected[inv_y]


def _mc_metrics(
    mech: TextMechanism,
    words: list[str],
    ids: np.ndarray,
    threshold: float,
    trials: int,
    rng: np.random.Generator,
    base: dict[str, Any],
) -> list[dict[str, Any]]:
    out = mech.sample_ids(np.repeat(ids, trials), rng).reshape(len(ids), trials)
    rows = []
    for k, word in enumerate(words):
        _, counts = np.unique(out[k], return_counts=True)
        freq = np.sort(counts)[::-1] / trials
        s_x = int(np.argmax(np.cumsum(freq) >= threshold * (1 - 1e-12)) + 1)
        n_x = float(np.mean(out[k] == ids[k]))
        rows.append(
            {
                "word": word,
                "sensitive": None,
                "method": "mc",
                "N_x": n_x,
                "S_x": s_x,
                "H0": math.log(s_x),
                "H_inf": float(-np.log(freq[0])),
                "neg_log_N_x": float(-np.log(n_x)) if n_x > 0 else math.inf,
                "S_x_mc": len(counts),
                "S_x_mc_expected": None,
                "S_y_star_mc": None,
                "S_y_star_expected": None,
                **base,
            }
        )
    return rows


def metrics_over_epsilons(
    factory: Any,
    words: list[str],
    epsilons: list[float],
    *,
    threshold: float = 0.95,
    trials: int = 1000,
    seed: int = 0,
) -> list[dict[str, Any]]:
    """N_x and S_x of ``words`` for each ε (the curves of Fig. 5); ``factory(eps)`` builds M.

    S_y* is skipped (it needs the whole population per ε).
    """
    rows: list[dict[str, Any]] = []
    for eps in epsilons:
        mech = factory(eps)
        for r in token_metrics(mech, words, threshold=threshold, trials=trials, seed=seed, with_s_y=False):
            rows.append({"epsilon": float(eps), **r})
    return rows


@dataclass(frozen=True)
class BoundCheckResult:
    """Outcome of :func:`bound_check` (all numbers exact from row probabilities)."""

    mechanism: str
    notion: str
    epsilon: float
    epsilon0: float
    triples: int
    protected_triples: int
    violations: int
    max_excess: float
    worst: tuple[str, str, str] | None
    invertibility_violations: int
    tolerance: float
    seed: int | None

    @property
    def passed(self) -> bool:
        return self.violations == 0 and self.invertibility_violations == 0

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["passed"] = self.passed
        return out


def bound_check(
    mech: TextMechanism,
    *,
    triples: int = 2000,
    seed: int | np.random.Generator | None = 0,
    epsilon: float | None = None,
    epsilon0: float | None = None,
    tolerance: float = 1e-8,
) -> BoundCheckResult:
    """Check Pr[M(x)=y] ≤ exp(ε·d(x,x') + ε₀)·Pr[M(x')=y] exactly on sampled triples.

    Yue et al. 2021, Def. 2 (MLDP, ε₀ = 0) and Def. 3 (UMLDP) (i); for SanText+ also (ii): an
    unprotected output y ∈ V_U = V_N has probability 0 from every x' ≠ y and > 0 from y.

    Triples: x ≠ x' uniform over V; y is x, x', a uniform word of V or a uniform word of the
    protected outputs, each a quarter of the time (y = x is where SanText's bound is tight).

    Parameters
    ----------
    mech:
        A mechanism with an exact distribution (santext, santext+, random).
    triples:
        Number of (x, x', y) triples.
    seed:
        Seed or generator for the triples.
    epsilon, epsilon0:
        Check against these instead of the mechanism's own privacy map (to test a claim).
    tolerance:
        Allowed excess on the log scale, relative: ``tolerance·(1 + ε·d + |log p|)``.

    Raises
    ------
    DPCoreError
        For mechanisms without a closed-form distribution (feyisetan).
    """
    if not isinstance(mech, ExponentialTokenMechanism):
        raise DPCoreError(
            f"{mech.name} has no closed-form output distribution; the exact bound check needs one"
        )
    triples = check_int(triples, name="triples", min_value=1, max_value=1_000_000)
    tolerance = check_finite_float(tolerance, name="tolerance", min_value=0.0)
    priv = mech.privacy
    eps = priv.epsilon if epsilon is None else check_finite_float(epsilon, name="epsilon", min_value=0.0)
    e0 = priv.epsilon0 if epsilon0 is None else float(epsilon0)
    rng = make_rng(seed)
    n_v = len(mech.vocab)
    pairs = getattr(mech, "bound_pairs", None)
    if pairs is not None:  # the guarantee holds on a narrower scope (CusText: one group)
        x, x2 = pairs(rng, triples)
    else:
        x = rng.integers(0, n_v, size=triples)
        x2 = (x + rng.integers(1, n_v, size=triples)) % n_v  # x' ≠ x, uniform over the rest
    cand = mech._candidates
    kind = rng.integers(0, 4, size=triples)
    y = np.select(
        [kind == 0, kind == 1, kind == 2],
        [x, x2, rng.integers(0, n_v, size=triples)],
        cand[rng.integers(0, len(cand), size=triples)],
    )
    lp_x = mech.log_prob(x, y)
    lp_x2 = mech.log_prob(x2, y)
    if priv.notion == "LDP":  # pure LDP: the bound is ε for every x ≠ x'
        d = np.ones(triples)
    else:
        d = pair_distances(mech.vocab.vectors, x, x2)
    protected = np.isin(y, cand)
    # (i) on protected outputs; a −inf denominator with a finite numerator is an infinite excess
    with np.errstate(invalid="ignore"):
        diff = np.where(np.isneginf(lp_x), -np.inf, lp_x - lp_x2)
    bound = eps * d + e0
    tol = tolerance * (1.0 + eps * d + np.abs(np.where(np.isfinite(lp_x), lp_x, 0.0)))
    excess = np.where(protected, diff - bound, -np.inf)
    bad = excess > tol
    # (ii) on unprotected outputs: only y itself may produce y, and it must
    unprot = ~protected
    inv_bad = unprot & (((x != y) & np.isfinite(lp_x)) | ((x2 != y) & np.isfinite(lp_x2)))
    inv_bad |= unprot & (x == y) & ~np.isfinite(lp_x) & (getattr(mech, "p", 0.0) < 1.0)
    worst = None
    max_excess = float(np.max(excess)) if protected.any() else -math.inf
    if protected.any():
        k = int(np.argmax(excess))
        words = mech.vocab.words
        worst = (str(words[x[k]]), str(words[x2[k]]), str(words[y[k]]))
    return BoundCheckResult(
        mechanism=mech.name,
        notion=priv.notion,
        epsilon=eps,
        epsilon0=e0,
        triples=triples,
        protected_triples=int(protected.sum()),
        violations=int(bad.sum()),
        max_excess=max_excess,
        worst=worst,
        invertibility_violations=int(inv_bad.sum()),
        tolerance=tolerance,
        seed=seed if isinstance(seed, int) else None,
    )
