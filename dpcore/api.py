"""The notebook entry points: ``import dpcore`` and call these (also exported as ``dpcore.NAME``).

Each function is a thin, documented path through the library, with the same defaults as the
CLI (``dpcore COMMAND``), so a notebook result can be reproduced from the shell and back.

=====================  ==========================================================  ===========
function               what it does                                                CLI
=====================  ==========================================================  ===========
:func:`audit`          Habernal's reconstruction check of a vector mechanism       ``audit``
:func:`audit_text`     black-box audit of any text sanitizer's ε claim             ``audit-text``
:func:`sanitize`       sanitize text with a registered text mechanism              ``sanitize``
:func:`attack`         defense rate of sanitized text against attackers            ``attack``
:func:`utility`        accuracy of a classifier on sanitized text                  ``utility``
=====================  ==========================================================  ===========

Mechanism factories: :func:`create_mechanism` (vector mechanisms) and
:func:`create_text_mechanism` (token-level text mechanisms); ``python -m dpcore list`` shows the
registered names.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from dpcore.validation import DPCoreError

if TYPE_CHECKING:
    from dpcore.mechanisms.base import VectorMechanism

__all__ = ["attack", "create_mechanism", "default_vocab_size", "sanitize", "text_mechanism", "utility"]

#: Default vocabulary sizes, as the CLI's: GloVe is cut to the 15,000 most frequent words (the
#: scale of SanText's SST-2 vocabulary, 14,730); BERT keeps its whole WordPiece vocabulary.
DEFAULT_VOCAB_SIZE: dict[str, int | None] = {"glove": 15_000, "bert": None, "bert-wordpiece": None}


def default_vocab_size(embedding: str) -> int | None:
    """The vocabulary size the CLI and these functions use for ``embedding`` by default."""
    from dpcore.text.embeddings import check_embedding_name

    check_embedding_name(embedding)
    return DEFAULT_VOCAB_SIZE[embedding]


def create_mechanism(name: str, **kwargs: object) -> VectorMechanism:
    """Build the registered vector mechanism ``name``, the fenced flawed reproductions included.

    :func:`dpcore.mechanisms.create_mechanism` after importing :mod:`dpcore.flawed` (which
    registers the flawed reproductions; :mod:`dpcore.mechanisms` never imports it).

    Parameters
    ----------
    name
        A registered vector mechanism (``python -m dpcore list``).
    **kwargs
        Keyword-only arguments of the mechanism, e.g. ``epsilon``, ``dim``.

    Examples
    --------
    >>> import dpcore
    >>> m = dpcore.create_mechanism("dptext", epsilon=1.0, dim=4)
    >>> m.claimed_epsilon, m.true_epsilon
    (1.0, inf)
    """
    from dpcore import flawed as _flawed  # noqa: F401  (registers the flawed reproductions)
    from dpcore.mechanisms import create_mechanism as create

    return create(name, **kwargs)


def text_mechanism(
    mechanism: str,
    *,
    epsilon: float,
    embedding: str = "glove",
    vocab_size: int | None = None,
    full_vocabulary: bool = False,
    **params: Any,
) -> Any:
    """Build a registered text mechanism over the default (or a sized) vocabulary.

    Parameters
    ----------
    mechanism
        A registered text mechanism (``santext``, ``santext+``, ``tem``, …).
    epsilon
        ε (per unit of embedding distance for metric mechanisms).
    embedding
        ``"glove"`` (default), ``"bert"`` (whole words) or ``"bert-wordpiece"`` (the paper's
        full WordPiece vocabulary).
    vocab_size
        Most frequent words kept; default :func:`default_vocab_size`.
    full_vocabulary
        Keep the slurs and insults the default vocabulary leaves out (research;
        :mod:`dpcore.text.offensive`). The mechanism's ``params()["vocabulary"]`` says which V it uses.
    **params
        Mechanism parameters, e.g. ``p=0.3, w=0.9`` for ``santext+``.

    Examples
    --------
    >>> import dpcore
    >>> m = dpcore.text_mechanism("santext", epsilon=3.0)
    >>> m.privacy.notion
    'MLDP'
    """
    from dpcore.text import create_text_mechanism
    from dpcore.text.vocab import build_vocabulary

    size = default_vocab_size(embedding) if vocab_size is None else vocab_size
    vocab = build_vocabulary(embedding, size=size, full=full_vocabulary)
    return create_text_mechanism(mechanism, vocab=vocab, epsilon=epsilon, **params)


def sanitize(
    text: str | Sequence[str],
    *,
    mechanism: str = "santext",
    epsilon: float,
    embedding: str = "glove",
    vocab_size: int | None = None,
    seed: int | None = 0,
    oov: str = "mask",
    full_vocabulary: bool = False,
    **params: Any,
) -> Any:
    """Sanitize text line by line, token by token (SanText, Yue et al. 2021, Algorithms 1–2).

    Parameters
    ----------
    text
        One string (split into lines) or a list of lines.
    mechanism, epsilon, embedding, vocab_size, full_vocabulary, **params
        As :func:`text_mechanism` (the vocabulary leaves out offensive words unless
        ``full_vocabulary``; ``parameters["vocabulary"]`` says which).
    seed
        Seed (recorded in the result's ``parameters``); ``None`` draws a fresh one.
    oov
        ``"mask"`` (default: out-of-vocabulary tokens become ``[UNK]``) or ``"keep"``.

    Returns
    -------
    dpcore.text.sanitize.SanitizedText
        ``.lines`` (the sanitized lines), per-token records and ``.parameters``.

    Examples
    --------
    >>> import dpcore
    >>> out = dpcore.sanitize("the patient has hiv", mechanism="santext", epsilon=3.0, seed=0)
    >>> len(out.lines)
    1
    """
    from dpcore.text.sanitize import check_text, sanitize_lines, split_lines

    if isinstance(text, str):
        lines = split_lines(check_text(text))
    elif isinstance(text, Sequence):
        lines = [check_text(str(t), what="line") for t in text]
    else:
        raise DPCoreError("text must be a string or a list of lines")
    mech = text_mechanism(
        mechanism,
        epsilon=epsilon,
        embedding=embedding,
        vocab_size=vocab_size,
        full_vocabulary=full_vocabulary,
        **params,
    )
    return sanitize_lines(lines, mech, seed=seed, oov=oov)


def attack(
    sentences: Sequence[str],
    *,
    mechanism: str = "santext",
    epsilons: Sequence[float],
    attacks: Sequence[str] = ("bayes-unigram",),
    embedding: str = "glove",
    vocab_size: int | None = None,
    seed: int | None = 0,
    full_vocabulary: bool = False,
    **params: Any,
) -> dict[str, Any]:
    """Defense rate of sanitized sentences against attackers, at each ε (SanText §5.3).

    Parameters
    ----------
    sentences
        The private sentences (raw text).
    mechanism, embedding, vocab_size, full_vocabulary, **params
        As :func:`text_mechanism`.
    epsilons
        ε values.
    attacks
        Any of ``"bayes-unigram"`` (exact Bayesian attacker, no model), ``"mlm"`` (the paper's
        masked-LM attacker, the shipped MiniLM on onnxruntime) and ``"bayes-mlm"``.
    seed
        Sanitization seed.

    Examples
    --------
    >>> import dpcore
    >>> res = dpcore.attack(["the movie was great"], mechanism="santext", epsilons=[1.0, 10.0])
    >>> sorted(r["epsilon"] for r in res["rows"])
    [1.0, 10.0]
    """
    from dpcore.attack.experiment import attack_sweep

    mlm = None
    if {"mlm", "bayes-mlm"} & set(attacks):
        from dpcore.models.masked_lm import load_mlm

        mlm = load_mlm()
    size = default_vocab_size(embedding) if vocab_size is None else vocab_size

    def make(e: float) -> Any:
        return text_mechanism(
            mechanism,
            epsilon=e,
            embedding=embedding,
            vocab_size=size,
            full_vocabulary=full_vocabulary,
            **params,
        )

    return attack_sweep(list(sentences), make, list(epsilons), attacks=tuple(attacks), mlm=mlm, seed=seed)


def utility(
    *,
    mechanism: str = "santext",
    epsilons: Sequence[float],
    dataset: str = "tweets",
    n_train: int | None = None,
    n_test: int | None = None,
    classifier: str = "tfidf",
    embedding: str = "glove",
    vocab_size: int | None = None,
    seed: int | None = 0,
    split_seed: int = 0,
    full_vocabulary: bool = False,
    **params: Any,
) -> dict[str, Any]:
    """Accuracy of a classifier trained and tested on sanitized text (SanText §5.2).

    Parameters
    ----------
    mechanism, embedding, vocab_size, full_vocabulary, **params
        As :func:`text_mechanism`.
    epsilons
        ε values.
    dataset
        A built-in labelled dataset (``"tweets"``).
    n_train, n_test
        Split sizes (defaults as the CLI: 4,000 and 1,000).
    classifier
        ``"tfidf"`` (default) or ``"minilm"`` (MiniLM sentence embeddings on onnxruntime).
    seed, split_seed
        Sanitization seed and the seed of the fixed train/test split.

    Examples
    --------
    >>> import dpcore
    >>> res = dpcore.utility(mechanism="santext", epsilons=[3.0], n_train=500, n_test=200)
    >>> 0.0 <= res["rows"][0]["accuracy"] <= 1.0
    True
    """
    from dpcore.attack.datasets import load_labelled_dataset, split_dataset
    from dpcore.attack.utility import DEFAULT_N_TEST, DEFAULT_N_TRAIN, utility_sweep

    split = split_dataset(
        load_labelled_dataset(dataset),
        n_train=DEFAULT_N_TRAIN if n_train is None else n_train,
        n_test=DEFAULT_N_TEST if n_test is None else n_test,
        split_seed=split_seed,
    )
    size = default_vocab_size(embedding) if vocab_size is None else vocab_size

    def make(e: float) -> Any:
        return text_mechanism(
            mechanism,
            epsilon=e,
            embedding=embedding,
            vocab_size=size,
            full_vocabulary=full_vocabulary,
            **params,
        )

    return utility_sweep(split, make, list(epsilons), seed=seed, classifier=classifier)
