"""Distinguishers: choose an event on the selection half of the rewrites, count it on the other.

For a pair of inputs (x, x′) the audit holds N rewrites of each, split into a *selection* half
(m each) and an *evaluation* half (n each). A distinguisher turns the selection half into one
event S per direction (a set of possible outputs, fixed before the evaluation half is looked at);
the evaluation half then gives a = #{M(x) ∈ S} and b = #{M(x′) ∈ S} among n, and the lower
bound ln CP⁻(a; α/2) − ln CP⁺(b; α/2) on ln Pr[M(x) ∈ S] − ln Pr[M(x′) ∈ S] (Clopper and
Pearson 1934, :func:`dpcore.stats.cp_log_ratio_lower`) holds with probability ≥ 1 − α whatever
the selection did, because the evaluation rewrites are independent of it.

The events, each scored on the selection half by the same lower bound (which keeps an output
seen once from winning), the best of all of them taken per direction:

``exact``
    A set of whole outputs: a prefix of the outputs ordered by their likelihood ratio (the
    Neyman–Pearson shape, as the word-level audit's :func:`dpcore.pairtest.estimator.best_prefix`),
    the order taken on one half of the selection rewrites and the prefix on the other, since a
    rewriter's outputs may never repeat. Catches a rewriter that copies its input.
``words`` / ``chars``
    Word 1–2-grams or character 3–4-grams (lower-cased). Words give one n-gram's presence or
    absence (catches a rewriter whose only leak is one word), picked on the selection half and
    scored cross-fitted in five folds (each fold counts the pick made on the others); both
    give a threshold on a Bernoulli naive-Bayes score fitted on one half of the selection
    rewrites and thresholded on the other (cross-fitted, so the rewrites' own rare n-grams do
    not inflate the scores the threshold is chosen on). Single character n-grams are not
    candidates: a leaked word is already a word n-gram, and thousands of its fragments as
    candidates made the selection pick a noisy one on few rewrites (the caught rate at 100
    rewrites fell from 0.905 to 0.86, ``bench/rewriter_power.py``).
``side``
    Text's side channels (:mod:`dpcore.rewriter.sidechannels`): the counts of tokens, characters,
    capitals, punctuation and digits (each one value, or at least a value), and the places of
    x's and x′'s words in the rewrite. One of them is picked and scored like a single word
    n-gram (a rewriter whose output length follows its input's leaks through nothing else),
    and a naive-Bayes score over all of them is thresholded like the n-grams' score.
``lm`` (only when asked for: it needs torch)
    A threshold on the language-model reconstruction score ln p(x | rewrite) − ln p(x′ | rewrite)
    (:mod:`dpcore.rewriter.lmscore`): how much likelier the shipped SmolLM2 finds x than x′ as
    the original of the rewrite. Its direction is known, so its threshold is chosen on all the
    selection rewrites.
``minilm``
    A threshold on the projection of the shipped all-MiniLM-L6-v2 sentence embedding
    (:func:`dpcore.models.minilm.encode_sentences`) onto the difference of the two inputs' mean
    embeddings, cross-fitted in the same way: what a paraphrase keeps of the meaning.

Counting and selection are vectorised over rewrites and n-grams; only reading each rewrite's
n-grams is string work, one text at a time (:mod:`dpcore.rewriter.ngrams`).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from dpcore.pairtest.estimator import SORT_ALPHA, best_prefix
from dpcore.rewriter.ngrams import ngram_matrix
from dpcore.rewriter.sidechannels import describe as side_describe
from dpcore.rewriter.sidechannels import side_matrix
from dpcore.stats import cp_log_ratio_lower, log_cp_lower, log_cp_upper
from dpcore.validation import DPCoreError

__all__ = [
    "ALL_DISTINGUISHERS",
    "DISTINGUISHERS",
    "OPTIONAL_DISTINGUISHERS",
    "Choice",
    "choose_events",
    "parse_distinguishers",
]

#: The default distinguishers, in the order they are tried (each runs without torch).
DISTINGUISHERS = ("exact", "words", "chars", "side", "minilm")
#: Distinguishers run only when asked for: ``lm`` needs torch and a causal LM (CLI and bench only).
OPTIONAL_DISTINGUISHERS = ("lm",)
#: Every distinguisher a run may name.
ALL_DISTINGUISHERS = DISTINGUISHERS + OPTIONAL_DISTINGUISHERS
#: What each is called in reports.
TITLES = {
    "exact": "whole output",
    "words": "word n-grams",
    "chars": "character n-grams",
    "side": "side channels",
    "minilm": "MiniLM sentence embedding",
    "lm": "language model (SmolLM2 reconstruction score)",
}
#: Folds that cross-fit the score of a single n-gram event (:func:`_single_ngram_candidates`).
SINGLE_FOLDS = 5
#: Directions, as the word-level audit writes them.
FORWARD, BACKWARD = "x>x'", "x'>x"


@dataclass(frozen=True)
class Choice:
    """The event chosen for one direction, and its counts on the evaluation half.

    Attributes
    ----------
    direction:
        ``"x>x'"`` (S is likelier under x) or ``"x'>x"``.
    distinguisher:
        Which distinguisher made S (:data:`DISTINGUISHERS`).
    description:
        S in words (``output contains "anna"``).
    selection_bound:
        Its lower bound on the selection half (what chose it; no verdict is drawn from it).
    count_x, count_x_prime:
        #{M(x) ∈ S} and #{M(x′) ∈ S} among the ``samples`` evaluation rewrites of each.
    samples:
        Evaluation rewrites per input.
    """

    direction: str
    distinguisher: str
    description: str
    selection_bound: float
    count_x: int
    count_x_prime: int
    samples: int

    @property
    def hits(self) -> tuple[int, int]:
        """(#S among the favoured input's rewrites, #S among the other's)."""
        if self.direction == FORWARD:
            return self.count_x, self.count_x_prime
        return self.count_x_prime, self.count_x


def parse_distinguishers(value: str | Sequence[str] | None) -> tuple[str, ...]:
    """``None`` → the defaults; a comma-separated string or a list of names → those, validated."""
    if value is None:
        return DISTINGUISHERS
    names = [v.strip() for v in (value.split(",") if isinstance(value, str) else value)]
    names = [n for n in names if n]
    bad = [n for n in names if n not in ALL_DISTINGUISHERS]
    if bad or not names:
        raise DPCoreError(
            f"unknown distinguisher(s) {', '.join(map(repr, bad)) or '(none given)'}; "
            f"choose from {', '.join(ALL_DISTINGUISHERS)}"
        )
    return tuple(dict.fromkeys(names))


@dataclass(frozen=True)
class _Candidate:
    distinguisher: str
    description: str
    bound: float
    eval_x: np.ndarray  # bool: evaluation rewrites of x in S
    eval_xp: np.ndarray


def _bound(a: np.ndarray | int, b: np.ndarray | int, n: int, alpha: float) -> np.ndarray:
    out = np.asarray(cp_log_ratio_lower(a, b, n, alpha), dtype=np.float64)
    return np.where(np.asarray(a) > 0, np.nan_to_num(out, nan=-np.inf), -np.inf)


def _best_threshold(sa: np.ndarray, sb: np.ndarray, alpha: float) -> tuple[float, float]:
    """The t maximising the lower bound of {score ≥ t} with ``sa`` favoured (same sizes)."""
    n = sa.size
    thresholds = np.unique(sa)[::-1]  # only values of the favoured side can open an event
    a = n - np.searchsorted(np.sort(sa), thresholds, side="left")
    b = n - np.searchsorted(np.sort(sb), thresholds, side="left")
    k = best_prefix(a.astype(np.float64), b.astype(np.float64), n, alpha)
    return float(thresholds[k]), float(_bound(int(a[k]), int(b[k]), n, alpha))


def _score_candidates(
    name: str,
    what: str,
    fit: Callable[[np.ndarray, np.ndarray], np.ndarray],
    features: Callable[[np.ndarray], np.ndarray],
    m: int,
    n_eval: int,
    alpha: float,
) -> dict[str, _Candidate]:
    """Cross-fitted threshold events: a direction fitted on the first half of the selection
    rewrites, its threshold chosen on the second half, counted on the evaluation half.

    ``features(rows)`` gives the representation of rewrites by row index (0..m−1 selection of
    x, m..2m−1 of x′, 2m..2m+n−1 evaluation of x, then of x′); ``fit(fx, fxp)`` a weight vector.
    """
    h = m // 2
    if h < 1 or m - h < 1:
        return {}
    fold_a_x, fold_a_xp = np.arange(h), m + np.arange(h)
    fold_b_x, fold_b_xp = np.arange(h, m), m + np.arange(h, m)
    w = fit(features(fold_a_x), features(fold_a_xp))
    if not np.any(w):
        return {}
    sb_x, sb_xp = features(fold_b_x) @ w, features(fold_b_xp) @ w
    ev_x = features(2 * m + np.arange(n_eval)) @ w
    ev_xp = features(2 * m + n_eval + np.arange(n_eval)) @ w
    out = {}
    for direction, sign in ((FORWARD, 1.0), (BACKWARD, -1.0)):
        fav, other = (sb_x, sb_xp) if sign > 0 else (sb_xp, sb_x)
        if fav.size != other.size:  # odd m: compare equal sizes
            k = min(fav.size, other.size)
            fav, other = fav[:k], other[:k]
        t, bound = _best_threshold(sign * fav, sign * other, alpha)
        rel = "≥" if sign > 0 else "≤"
        out[direction] = _Candidate(
            name,
            f"{what} {rel} {sign * t:.4g} (fitted on {h} selection rewrites per input)",
            bound,
            sign * ev_x >= t,
            sign * ev_xp >= t,
        )
    return out


def _exact_candidates(texts: list[str], m: int, n_eval: int, alpha: float) -> dict[str, _Candidate]:
    """Sets of whole outputs, cross-fitted: outputs ranked on the first half of the selection
    rewrites, the prefix length chosen on the second half (an output seen once would otherwise
    make every rewriter whose outputs never repeat look perfectly distinguishable)."""
    _, codes = np.unique(np.asarray(texts, dtype=object).astype(str), return_inverse=True)
    codes = codes.ravel()
    k = int(codes.max()) + 1 if codes.size else 0
    h = m // 2
    if h < 1:
        return {}
    fold_a = (np.bincount(codes[:h], minlength=k), np.bincount(codes[m : m + h], minlength=k))
    nb = min(m - h, h)  # equal sizes on the half that picks the prefix
    fold_b = (
        np.bincount(codes[h : h + nb], minlength=k),
        np.bincount(codes[m + h : m + h + nb], minlength=k),
    )
    ev_x_codes, ev_xp_codes = codes[2 * m : 2 * m + n_eval], codes[2 * m + n_eval :]
    out = {}
    for direction, side in ((FORWARD, 0), (BACKWARD, 1)):
        a_fav, a_other = fold_a[side], fold_a[1 - side]
        b_fav, b_other = fold_b[side], fold_b[1 - side]
        cand = np.flatnonzero(a_fav > 0)
        if cand.size == 0:
            continue
        key = log_cp_lower(a_fav[cand], h, SORT_ALPHA) - log_cp_upper(a_other[cand], h, SORT_ALPHA)
        cand = cand[np.argsort(-key, kind="stable")]
        pa, pb = np.cumsum(b_fav[cand]), np.cumsum(b_other[cand])
        j = best_prefix(pa.astype(np.float64), pb.astype(np.float64), nb, alpha)
        bound = float(_bound(int(pa[j]), int(pb[j]), nb, alpha))
        event = cand[: j + 1]
        member = np.zeros(k, dtype=bool)
        member[event] = True
        shown = texts[int(np.flatnonzero(codes == event[0])[0])]
        shown = shown if len(shown) <= 60 else shown[:57] + "…"
        desc = f"output is {shown!r}" + (
            f" or one of {event.size - 1} other outputs" if event.size > 1 else ""
        )
        out[direction] = _Candidate("exact", desc, bound, member[ev_x_codes], member[ev_xp_codes])
    return out


def _single_ngram_candidates(
    kind: str, x, names: np.ndarray, describe: Callable[[str, bool], str], m: int, n_eval: int, alpha: float
) -> dict[str, _Candidate]:
    """One n-gram's presence or absence, picked on the selection half and scored cross-fitted.

    The event is the n-gram (present or absent) with the best bound on all m selection rewrites
    per input. Its score, the bound it competes with, is cross-fitted in :data:`SINGLE_FOLDS`
    folds, so that no count is read on the rewrites that picked it: each fold's rewrites count
    the pick made on the other folds, and the bound is taken on the m held-out counts together.
    Scoring the pick on the rewrites it was picked from would let the luckiest of thousands of
    n-grams beat the other distinguishers' held-out bounds (its own rewrites are the ones a
    fold's pick cannot see); a real marker is every fold's pick, so its score is its count on
    all m rewrites. Five folds, not two: a pick on half the rewrites misses the marker often
    enough to lower the caught rate at the power statement's 90% point (``bench/rewriter_power.py``).
    """
    folds = min(SINGLE_FOLDS, m)
    if folds < 2:
        return {}
    bounds = np.linspace(0, m, folds + 1).astype(np.int64)

    def side_counts(offset: int) -> np.ndarray:
        """Per fold, each n-gram's count among one input's selection rewrites (folds × n-grams)."""
        spans = itertools.pairwise(bounds)
        return np.vstack([np.asarray(x[offset + lo : offset + hi].sum(axis=0)).ravel() for lo, hi in spans])

    per_fold = (side_counts(0), side_counts(m))  # x's, x′'s
    sizes = np.diff(bounds)

    def pick(c_fav: np.ndarray, c_other: np.ndarray, size: int) -> tuple[int, bool] | None:
        """The best (column, present?) with ``c_fav`` favoured, on ``size`` rewrites per input."""
        present = _bound(c_fav, c_other, size, alpha)
        absent = _bound(size - c_fav, size - c_other, size, alpha)
        f_p, f_a = int(np.argmax(present)), int(np.argmax(absent))
        if max(present[f_p], absent[f_a]) == -np.inf:
            return None
        return (f_p, True) if present[f_p] >= absent[f_a] else (f_a, False)

    def hits(event: tuple[int, bool], counts: np.ndarray, size: int) -> int:
        col, present = event
        return int(counts[col]) if present else size - int(counts[col])

    ev = x[2 * m :]
    out: dict[str, _Candidate] = {}
    for direction, side in ((FORWARD, 0), (BACKWARD, 1)):
        fav, other = per_fold[side], per_fold[1 - side]
        all_fav, all_other = fav.sum(axis=0), other.sum(axis=0)
        event = pick(all_fav, all_other, m)
        if event is None:
            continue
        held_fav = held_other = 0
        for j in range(folds):
            fold_event = pick(all_fav - fav[j], all_other - other[j], m - int(sizes[j]))
            if fold_event is not None:  # an empty pick counts nothing on its held-out fold
                held_fav += hits(fold_event, fav[j], int(sizes[j]))
                held_other += hits(fold_event, other[j], int(sizes[j]))
        bound = float(_bound(held_fav, held_other, m, alpha))
        col, present = event
        member = np.asarray(ev[:, col].todense()).ravel() > 0
        if not present:
            member = ~member
        out[direction] = _Candidate(
            kind, describe(str(names[col]), present), bound, member[:n_eval], member[n_eval:]
        )
    return out


def _ngram_candidates(
    kind: str, texts: list[str], m: int, n_eval: int, alpha: float
) -> dict[str, _Candidate]:
    x, names = ngram_matrix(texts, kind)
    unit = "word n-gram" if kind == "words" else "character n-gram"

    def describe(name: str, present: bool) -> str:
        return f"output {'contains' if present else 'lacks'} the {unit} {name!r}"

    # single n-grams: words only (a character n-gram of a leaked word is one of its words, and
    # thousands of them as candidates make the selection pick a noisy one on few rewrites)
    return _binary_candidates(
        kind,
        x,
        names,
        describe if kind == "words" else None,
        f"naive-Bayes score over {unit}s",
        m,
        n_eval,
        alpha,
    )


def _side_candidates(
    texts: list[str], inputs: Sequence[str], m: int, n_eval: int, alpha: float
) -> dict[str, _Candidate]:
    """Side channels (:mod:`dpcore.rewriter.sidechannels`): one count's value or threshold, or one
    kept word's place, picked like a word n-gram; and a naive-Bayes score over all of them."""
    x, names = side_matrix(texts, inputs)
    return _binary_candidates(
        "side", x, names, side_describe, "naive-Bayes score over side channels", m, n_eval, alpha
    )


def _binary_candidates(
    kind: str,
    x,
    names: np.ndarray,
    describe: Callable[[str, bool], str] | None,
    what: str,
    m: int,
    n_eval: int,
    alpha: float,
) -> dict[str, _Candidate]:
    """Events of a binary rewrites × features matrix: one feature's presence or absence (when
    ``describe`` names them) and a threshold on a cross-fitted naive-Bayes score."""
    if x is None or x.shape[1] == 0:
        return {}
    out: dict[str, _Candidate] = {}
    if describe is not None:
        out.update(_single_ngram_candidates(kind, x, names, describe, m, n_eval, alpha))

    def fit(fx, fxp) -> np.ndarray:
        h = fx.shape[0]
        ax = np.asarray(fx.sum(axis=0)).ravel()
        axp = np.asarray(fxp.sum(axis=0)).ravel()
        w1 = np.log((ax + 0.5) / (axp + 0.5))
        w0 = np.log((h - ax + 0.5) / (h - axp + 0.5))
        return w1 - w0  # Bernoulli naive Bayes: the constant Σ w0 does not move a threshold

    scored = _score_candidates(kind, what, fit, lambda rows: x[rows], m, n_eval, alpha)
    for direction, cand in scored.items():
        if direction not in out or cand.bound > out[direction].bound:
            out[direction] = cand
    return out


def _minilm_candidates(texts: list[str], m: int, n_eval: int, alpha: float) -> dict[str, _Candidate]:
    from dpcore.models.minilm import encode_sentences

    # each distinct text once (a rewriter's outputs often repeat), then every row from its text
    unique, rows = np.unique(np.asarray(texts, dtype=object).astype(str), return_inverse=True)
    emb = encode_sentences(unique.tolist())[rows.ravel()]

    def fit(fx: np.ndarray, fxp: np.ndarray) -> np.ndarray:
        return fx.mean(axis=0) - fxp.mean(axis=0)

    return _score_candidates(
        "minilm", "MiniLM projection on the mean difference", fit, lambda rows: emb[rows], m, n_eval, alpha
    )


def _lm_candidates(
    texts: list[str], inputs: Sequence[str], m: int, n_eval: int, alpha: float
) -> dict[str, _Candidate]:
    """A threshold on the LM reconstruction score (:mod:`dpcore.rewriter.lmscore`). Its direction is
    known (a high score favours x), so the threshold is chosen on all m selection rewrites."""
    from dpcore.rewriter import lmscore

    if len(inputs) != 2:
        raise DPCoreError("the lm distinguisher needs the audited pair (x, x′)")
    s = lmscore.reconstruction_scores(texts, str(inputs[0]), str(inputs[1]))
    sel_x, sel_xp = s[:m], s[m : 2 * m]
    ev_x, ev_xp = s[2 * m : 2 * m + n_eval], s[2 * m + n_eval :]
    out = {}
    for direction, sign in ((FORWARD, 1.0), (BACKWARD, -1.0)):
        fav, other = (sel_x, sel_xp) if sign > 0 else (sel_xp, sel_x)
        t, bound = _best_threshold(sign * fav, sign * other, alpha)
        rel = "≥" if sign > 0 else "≤"
        out[direction] = _Candidate(
            "lm",
            f"LM score ln p(x | rewrite) − ln p(x′ | rewrite) {rel} {sign * t:.4g} (reconstruction prompt)",
            bound,
            sign * ev_x >= t,
            sign * ev_xp >= t,
        )
    return out


def choose_events(
    sel_x: Sequence[str],
    sel_x_prime: Sequence[str],
    eval_x: Sequence[str],
    eval_x_prime: Sequence[str],
    *,
    alpha: float,
    distinguishers: Sequence[str] = DISTINGUISHERS,
    inputs: Sequence[str] = (),
) -> list[Choice]:
    """One event per direction, the best of every distinguisher on the selection half.

    Parameters
    ----------
    sel_x, sel_x_prime:
        The selection rewrites of x and x′ (the same number of each).
    eval_x, eval_x_prime:
        The evaluation rewrites (the same number of each), counted once S is fixed.
    alpha:
        The level of the evaluation test, also used to score events on the selection half.
    distinguishers:
        Which to use (:data:`ALL_DISTINGUISHERS`; the default :data:`DISTINGUISHERS`).
    inputs:
        x and x′, whose words' places in the rewrites the ``side`` distinguisher reads (none:
        it reads counts only).

    Returns
    -------
    list of Choice
        Up to two (a direction none of whose events was ever seen from the favoured input has
        no choice).
    """
    m, n = len(sel_x), len(eval_x)
    if len(sel_x_prime) != m or len(eval_x_prime) != n or m < 1 or n < 1:
        raise DPCoreError("each input needs the same number (≥ 1) of selection and of evaluation rewrites")
    texts = [*map(str, sel_x), *map(str, sel_x_prime), *map(str, eval_x), *map(str, eval_x_prime)]
    best: dict[str, _Candidate] = {}
    for name in distinguishers:
        if name == "exact":
            cands = _exact_candidates(texts, m, n, alpha)
        elif name in ("words", "chars"):
            cands = _ngram_candidates(name, texts, m, n, alpha)
        elif name == "side":
            cands = _side_candidates(texts, inputs, m, n, alpha)
        elif name == "minilm":
            cands = _minilm_candidates(texts, m, n, alpha)
        elif name == "lm":
            cands = _lm_candidates(texts, inputs, m, n, alpha)
        else:
            raise DPCoreError(f"unknown distinguisher {name!r}")
        for direction, c in cands.items():
            if math.isfinite(c.bound) and (direction not in best or c.bound > best[direction].bound):
                best[direction] = c
    return [
        Choice(
            direction=d,
            distinguisher=c.distinguisher,
            description=c.description,
            selection_bound=c.bound,
            count_x=int(np.count_nonzero(c.eval_x)),
            count_x_prime=int(np.count_nonzero(c.eval_xp)),
            samples=n,
        )
        for d, c in sorted(best.items())
    ]
