"""Downstream utility of sanitized text (Yue et al. 2021, §5.2, Table 1).

Protocol
--------
A fixed, recorded train/test split (:func:`dpcore.attack.datasets.split_dataset`) is drawn
once. For a mechanism M at ε:

1. the training texts and the test texts are sanitized token by token (independent streams
   spawned from ``seed``; out-of-vocabulary tokens become ``[UNK]``);
2. a classifier is trained on sanitized training text;
3. it is tested on sanitized test text (``accuracy``, the paper's setting: the service only
   ever sees sanitized text) and on raw test text (``accuracy_raw_test``: a model trained on
   sanitized data used on clean inputs).

Reference lines, computed on the same split: ``accuracy_unsanitized`` (train and test on raw
text: the upper line, Table 1's "Unsanitized"), ``accuracy_random`` (uniform random
replacement, 0-LDP: the lower line, Table 1's "Random") and the majority-class rate.

Classifiers
-----------
``tfidf`` (default)
    scikit-learn TF-IDF of word unigrams (tokens as the sanitizer wrote them, sublinear tf) +
    L2 logistic regression (liblinear, one-vs-rest for more than two classes; scikit-learn's
    default C = 1, not tuned): well under a second for 4,000 sentences (bigrams cost 10–50×
    more and scored no better on the tweets).
``minilm``
    Mean-pooled token embeddings of all-MiniLM-L6-v2 (shipped ONNX graph run with onnxruntime,
    :mod:`dpcore.models.minilm`; no torch) + logistic regression. Stronger and slower than ``tfidf``.

Accuracies carry two-sided Clopper–Pearson intervals over the test sentences.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from dpcore.attack.datasets import Split
from dpcore.limits import UTILITY_CLASSIFIERS, UTILITY_N_TEST, UTILITY_N_TRAIN
from dpcore.rng import cell_seed_sequence, resolve_seed
from dpcore.stats import cp_lower, cp_upper
from dpcore.text.mechanisms import TextMechanism
from dpcore.validation import DPCoreError, check_finite_float

__all__ = [
    "CLASSIFIERS",
    "DEFAULT_N_TEST",
    "DEFAULT_N_TRAIN",
    "accuracy_ci",
    "train_and_score",
    "utility_at_epsilon",
    "utility_baselines",
    "utility_sweep",
]

CLASSIFIERS = UTILITY_CLASSIFIERS
DEFAULT_N_TRAIN = UTILITY_N_TRAIN
DEFAULT_N_TEST = UTILITY_N_TEST

Progress = Callable[[int, int], None] | None


def accuracy_ci(correct: int, n: int, confidence: float = 0.95) -> tuple[float, float, float]:
    """(accuracy, lower, upper): two-sided Clopper–Pearson interval."""
    alpha = (1.0 - confidence) / 2.0
    return correct / n, float(cp_lower(correct, n, alpha)), float(cp_upper(correct, n, alpha))


def _minilm_embed(texts: Sequence[str]) -> np.ndarray:
    """Mean-pooled, L2-normalised all-MiniLM-L6-v2 sentence embeddings (onnxruntime, offline)."""
    from dpcore.models.minilm import encode_sentences

    return encode_sentences(list(texts))


def train_and_score(
    train_texts: Sequence[str],
    y_train: np.ndarray,
    test_sets: dict[str, tuple[Sequence[str], np.ndarray]],
    *,
    classifier: str = "tfidf",
    seed: int = 0,
) -> dict[str, int]:
    """Train one classifier and count correct predictions on each test set.

    Returns
    -------
    dict
        Test-set name → number of correct predictions.
    """
    if classifier not in CLASSIFIERS:
        raise DPCoreError(f"classifier must be one of {', '.join(CLASSIFIERS)}, got {classifier!r}")
    if np.unique(y_train).size < 2:
        raise DPCoreError("the training split holds a single class; use more training sentences")
    from sklearn.linear_model import LogisticRegression

    clf: Any = LogisticRegression(C=1.0, solver="liblinear", max_iter=2000, random_state=seed)
    if np.unique(y_train).size > 2:
        from sklearn.multiclass import OneVsRestClassifier

        clf = OneVsRestClassifier(clf)
    if classifier == "tfidf":
        from sklearn.feature_extraction.text import TfidfVectorizer

        vec = TfidfVectorizer(
            token_pattern=r"\S+", lowercase=False, ngram_range=(1, 1), sublinear_tf=True, min_df=1
        )
        clf.fit(vec.fit_transform(list(train_texts)), y_train)
        return {k: int((clf.predict(vec.transform(list(t))) == y).sum()) for k, (t, y) in test_sets.items()}
    clf.fit(_minilm_embed(train_texts), y_train)
    return {k: int((clf.predict(_minilm_embed(t)) == y).sum()) for k, (t, y) in test_sets.items()}


def _sanitize(
    texts: list[str], mech: TextMechanism, rng: np.random.Generator
) -> tuple[list[str], list[str], float]:
    """(sanitized lines, raw tokenized lines, share of tokens replaced); OOV → [UNK]."""
    from dpcore.text.sanitize import sanitize_lines

    res = sanitize_lines(texts, mech, seed=rng, oov="mask")
    raw = [" ".join(t) for t in res.original_tokens]
    san = [" ".join(t) for t in res.sanitized_tokens]
    c = res.summary()
    return san, raw, c["replaced"] / max(1, c["tokens"])


def _utility_rng(seed: int, *key: str | float) -> np.random.Generator:
    return np.random.default_rng(cell_seed_sequence(seed, "utility", *key))


def utility_at_epsilon(
    split: Split,
    mechanism: TextMechanism,
    *,
    seed: int = 0,
    classifier: str = "tfidf",
    confidence: float = 0.95,
) -> dict[str, Any]:
    """One (mechanism, ε) row of :func:`utility_sweep`, computed alone (same streams, same row).

    Parameters
    ----------
    split
        The fixed train/test split.
    mechanism
        The sanitizer at this ε.
    seed
        The resolved sanitization seed (an int).
    classifier, confidence
        As in :func:`utility_sweep`.

    Returns
    -------
    dict
        The row: ``epsilon``, ``accuracy``, ``ci_low``, ``ci_high``, ``accuracy_raw_test``, ….
    """
    conf = check_finite_float(confidence, name="confidence", min_value=0.5, max_value=0.999999)
    eps = float(mechanism.epsilon)
    s = int(seed)
    y_tr, y_te = split.y_train, split.y_test
    n_te = int(y_te.size)
    san_tr, _, _ = _sanitize(split.train_texts, mechanism, _utility_rng(s, mechanism.name, "train", eps))
    san_te, raw_te, replaced = _sanitize(
        split.test_texts, mechanism, _utility_rng(s, mechanism.name, "test", eps)
    )
    c = train_and_score(
        san_tr, y_tr, {"san": (san_te, y_te), "raw": (raw_te, y_te)}, classifier=classifier, seed=s
    )
    acc, lo, hi = accuracy_ci(c["san"], n_te, conf)
    acc_raw, lo_raw, hi_raw = accuracy_ci(c["raw"], n_te, conf)
    return {
        "epsilon": eps,
        "accuracy": acc,
        "ci_low": lo,
        "ci_high": hi,
        "accuracy_raw_test": acc_raw,
        "raw_test_ci_low": lo_raw,
        "raw_test_ci_high": hi_raw,
        "test_tokens_replaced": replaced,
    }


def utility_baselines(
    split: Split,
    vocab: Any,
    *,
    seed: int = 0,
    classifier: str = "tfidf",
    confidence: float = 0.95,
    progress: Progress = None,
) -> dict[str, Any]:
    """The reference lines of :func:`utility_sweep` (unsanitized, random replacement, majority).

    They depend on the split, V and the seed, not on the mechanism or ε, so a caller that caches
    per unit computes them once.

    Parameters
    ----------
    split
        The fixed train/test split.
    vocab
        The vocabulary V (the random-replacement line draws uniformly from it; OOV → ``[UNK]``).
    seed
        The resolved sanitization seed (an int).
    classifier, confidence
        As in :func:`utility_sweep`.
    progress
        ``progress(done, 2)`` after each classifier fit.

    Returns
    -------
    dict
        ``majority``, ``accuracy_unsanitized`` (+ CI) and ``accuracy_random`` (+ CI).
    """
    from dpcore.text import create_text_mechanism

    conf = check_finite_float(confidence, name="confidence", min_value=0.5, max_value=0.999999)
    s = int(seed)
    y_tr, y_te = split.y_train, split.y_test
    n_te = int(y_te.size)
    rnd = create_text_mechanism("random", vocab=vocab, epsilon=1.0)
    base: dict[str, Any] = {"majority": accuracy_ci(int(np.bincount(y_te).max()), n_te, conf)[0]}
    # One random-replacement pass also gives the raw lines, tokenized as every sanitizer does.
    r_tr, raw_tr, _ = _sanitize(split.train_texts, rnd, _utility_rng(s, "random", "train"))
    r_te, raw_te, _ = _sanitize(split.test_texts, rnd, _utility_rng(s, "random", "test"))
    c = train_and_score(raw_tr, y_tr, {"raw": (raw_te, y_te)}, classifier=classifier, seed=s)
    a, lo, hi = accuracy_ci(c["raw"], n_te, conf)
    base.update(accuracy_unsanitized=a, unsanitized_ci_low=lo, unsanitized_ci_high=hi)
    if progress is not None:
        progress(1, 2)
    c = train_and_score(r_tr, y_tr, {"san": (r_te, y_te)}, classifier=classifier, seed=s)
    a, lo, hi = accuracy_ci(c["san"], n_te, conf)
    base.update(accuracy_random=a, random_ci_low=lo, random_ci_high=hi)
    if progress is not None:
        progress(2, 2)
    return base


def utility_sweep(
    split: Split,
    make_mechanism: Callable[[float], TextMechanism],
    epsilons: Sequence[float],
    *,
    seed: int | None = 0,
    classifier: str = "tfidf",
    confidence: float = 0.95,
    baselines: bool = True,
    progress: Progress = None,
) -> dict[str, Any]:
    """Accuracy on sanitized text for each ε, with the unsanitized and random reference lines.

    Parameters
    ----------
    split
        The fixed train/test split.
    make_mechanism
        ε ↦ mechanism over the vocabulary V (e.g. ``lambda e: create_text_mechanism(...)``).
    epsilons
        The ε values. Each (mechanism, train/test, ε) cell has its own stream
        (:func:`dpcore.rng.cell_seed_sequence`), so one ε of a sweep equals a run at that ε.
    seed
        Sanitization seed (recorded; None draws a fresh one).
    classifier
        ``"tfidf"`` or ``"minilm"`` (module docstring).
    baselines
        Also compute the unsanitized and random-replacement lines.
    progress
        ``progress(done, total)`` over the classifier fits.

    Returns
    -------
    dict
        ``{"parameters": …, "rows": [per ε: accuracy, ci_low, ci_high, accuracy_raw_test, …],
        "baselines": {…}}``.
    """
    conf = check_finite_float(confidence, name="confidence", min_value=0.5, max_value=0.999999)
    eps_list = [float(e) for e in epsilons]
    if not eps_list:
        raise DPCoreError("give at least one ε")
    s = resolve_seed(seed)
    t0 = time.monotonic()

    total = len(eps_list) + (2 if baselines else 0)
    rows: list[dict[str, Any]] = []
    mech0 = None
    for i, eps in enumerate(eps_list):
        mech = make_mechanism(eps)
        mech0 = mech0 or mech
        rows.append(utility_at_epsilon(split, mech, seed=s, classifier=classifier, confidence=conf))
        if progress is not None:
            progress(i + 1, total)
    assert mech0 is not None
    n_te = int(split.y_test.size)
    base: dict[str, Any] = {"majority": accuracy_ci(int(np.bincount(split.y_test).max()), n_te, conf)[0]}
    if baselines:
        k = len(eps_list)
        tick = None if progress is None else (lambda d, t: progress(k + d, total))
        base = utility_baselines(
            split, mech0.vocab, seed=s, classifier=classifier, confidence=conf, progress=tick
        )
    params = {
        **{k: v for k, v in mech0.params().items() if k not in {"epsilon", "privacy"}},
        **split.record(),
        "epsilons": eps_list,
        "seed": s,
        "seed_streams": "cell_seed_sequence(seed, 'utility', mechanism, 'train'|'test', ε)",
        "classifier": classifier,
        "confidence": conf,
        "oov_policy": "mask",
        "seconds": round(time.monotonic() - t0, 3),
    }
    return {"parameters": params, "rows": rows, "baselines": base}
