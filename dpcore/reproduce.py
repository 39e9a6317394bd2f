"""The ``python -m dpcore`` command that reproduces a result, built in one place.

The dashboard's pages show, next to a result, the command line that gives the same numbers. Each
function here takes the parameters a page passes to the library and returns that command as an
argument list (``["python", "-m", "dpcore", SUBCOMMAND, ...]``); :func:`shell_command` quotes it
for display. Numbers are written so that they parse back to the same float (``0.1`` stays
``0.1``; ``1.0`` is written ``1``). ``tests/test_reproduce_commands.py`` runs every page's
command through :func:`dpcore.cli.main` and compares the numbers with the page's.

>>> from dpcore.reproduce import sanitize_command, shell_command
>>> shell_command(sanitize_command("santext+", 3.0, embedding="glove", params=[("p", 0.3)],
...                                vocab_size=2000, seed=7))
'python -m dpcore sanitize --mechanism santext+ --embedding glove --epsilon 3 --param p=0.3 \
--vocab-size 2000 --seed 7 --draw 1 --oov mask --input input.txt --output sanitized.txt'
"""

from __future__ import annotations

import math
import numbers
import shlex
from collections.abc import Iterable, Mapping, Sequence

from dpcore.validation import DPCoreError

__all__ = ["audit_rewriter_command", "audit_text_command", "number", "sanitize_command", "shell_command"]

#: The start of every command.
PREFIX = ("python", "-m", "dpcore")


def number(value: float) -> str:
    """``value`` as the shortest text that parses back to the same number (``3``, ``0.3``, ``1e-05``).

    Raises
    ------
    DPCoreError
        A value that is not a finite number (no command line can carry it).
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise DPCoreError(f"a command line number must be an int or a float, got {value!r}")
    if isinstance(value, numbers.Integral):
        return str(int(value))
    value = float(value)
    if not math.isfinite(value):
        raise DPCoreError(f"a command line number must be finite, got {value!r}")
    short = f"{value:g}"
    return short if float(short) == value else repr(value)


def shell_command(argv: Sequence[str]) -> str:
    """``argv`` quoted for a POSIX shell (:func:`shlex.join`), as a page shows it.

    ``shlex.split(shell_command(argv)) == list(argv)`` for every argument list.
    """
    return shlex.join(argv)


def audit_text_command(
    mechanism: str,
    epsilon: float,
    *,
    embedding: str = "glove",
    vocab_size: int | None = None,
    words: Sequence[str] | None = None,
    strategy: str | None = None,
    pairs: int = 50,
    neighbors: int = 2,
    samples: int = 100_000,
    screen_budget: int | None = None,
    confidence: float = 0.95,
    seed: int,
) -> list[str]:
    """``python -m dpcore audit-text …`` giving the result of :func:`dpcore.textaudit.audit_text`
    with these parameters (a registered sanitizer, run with its default parameters).

    Parameters
    ----------
    mechanism
        The sanitizer's registered name (``santext``, ``krr``, ``flawed:…``, ``pypantera:…``).
    epsilon
        ε given to the sanitizer.
    embedding, vocab_size
        The vocabulary: the ``vocab_size`` most frequent words of ``embedding`` (None: the
        embedding's own default, the whole vocabulary for BERT).
    words
        Words to audit, with their ``neighbors`` nearest words; None to choose pairs over the
        vocabulary by ``strategy``.
    strategy
        As :func:`~dpcore.textaudit.audit_text` (None: ``screen`` without words, ``adaptive``
        with them).
    pairs
        Pairs the confirmation stage tests (with ``words``, a pilot keeps the best of more
        candidates).
    neighbors, samples, confidence, seed
        As :func:`~dpcore.textaudit.audit_text`.
    screen_budget
        The screen's total draws (required with the screen: the CLI would otherwise fit it to
        this machine's speed); ignored by the other strategies.

    Returns
    -------
    list of str
        The argument list, starting ``python -m dpcore audit-text``.

    Raises
    ------
    DPCoreError
        The screen without a budget (the command line would fit one to the machine's speed).

    Examples
    --------
    >>> audit_text_command("krr", 1.0, vocab_size=500, words=["house", "car"], neighbors=0,
    ...                    pairs=1, samples=2000, seed=3)[3:]  # doctest: +NORMALIZE_WHITESPACE
    ['audit-text', '--mechanism', 'krr', '--epsilon', '1', '--embedding', 'glove',
     '--vocab-size', '500', '--words', 'house,car', '--pairs', '1', '--neighbors', '0', '--samples', '2000',
     '--confidence', '0.95', '--seed', '3']
    """
    cmd = [*PREFIX, "audit-text", "--mechanism", mechanism, "--epsilon", number(float(epsilon))]
    cmd += ["--embedding", embedding]
    if vocab_size is not None:
        cmd += ["--vocab-size", number(int(vocab_size))]
    if words is not None:
        cmd += ["--words", ",".join(words), "--pairs", number(int(pairs))]
        if strategy not in (None, "adaptive"):
            cmd += ["--strategy", strategy]
        cmd += ["--neighbors", number(int(neighbors))]
    else:
        strategy = strategy or "screen"
        cmd += ["--pairs", number(int(pairs)), "--strategy", strategy, "--neighbors", number(int(neighbors))]
        if strategy == "screen":
            if screen_budget is None:
                raise DPCoreError(
                    "the screen needs its budget on the command line (without it the CLI fits one "
                    "to this machine's speed)"
                )
            cmd += ["--screen-budget", number(int(screen_budget))]
    cmd += ["--samples", number(int(samples)), "--confidence", number(float(confidence))]
    return [*cmd, "--seed", number(int(seed))]


def _option(name: str, value: str) -> list[str]:
    """``[name, value]``, or ``[name=value]`` when ``value`` starts with ``-`` (argparse would
    read a separate ``-…`` as an option)."""
    return [f"{name}={value}"] if value.startswith("-") else [name, value]


def audit_rewriter_command(
    rewriter: str,
    epsilon: float,
    *,
    x: str,
    x_prime: str,
    rewrites: int,
    seed: int,
    distinguishers: Sequence[str],
    confidence: float,
    options: Mapping[str, float | int | bool] | None = None,
) -> list[str]:
    """``python -m dpcore audit-rewriter …`` giving the result of
    :func:`dpcore.rewriter.audit_rewriter` on the one pair (``x``, ``x_prime``) with these
    parameters (a registered rewriter, with its default options unless ``options`` says
    otherwise).

    Parameters
    ----------
    rewriter
        The rewriter's registered name (``dp-mlm``, ``flawed:…``, ``planted:…``).
    epsilon
        ε given to the rewriter (DP-MLM: per token).
    x, x_prime
        The two inputs.
    rewrites, seed, distinguishers, confidence
        As :func:`~dpcore.rewriter.audit_rewriter`.
    options
        The rewriter's options that differ from their defaults
        (:func:`dpcore.rewriter.registry.rewriter_parameter_specs`), one ``--param NAME=VALUE``
        each.

    Returns
    -------
    list of str
        The argument list, starting ``python -m dpcore audit-rewriter``.

    Examples
    --------
    >>> audit_rewriter_command("planted:copy", 1.0, x="a cat", x_prime="a dog", rewrites=100, seed=0,
    ...                        distinguishers=["exact", "words"], confidence=0.95)[3:]
    ... # doctest: +NORMALIZE_WHITESPACE
    ['audit-rewriter', '--rewriter', 'planted:copy', '--epsilon', '1', '--x', 'a cat', '--x-prime', 'a dog',
     '--rewrites', '100', '--seed', '0', '--distinguishers', 'exact,words', '--confidence', '0.95']
    """
    cmd = [*PREFIX, "audit-rewriter", "--rewriter", rewriter, "--epsilon", number(float(epsilon))]
    cmd += [*_option("--x", x), *_option("--x-prime", x_prime)]
    cmd += ["--rewrites", number(int(rewrites)), "--seed", number(int(seed))]
    for name, value in sorted((options or {}).items()):
        text = ("true" if value else "false") if isinstance(value, bool) else number(value)
        cmd += ["--param", f"{name}={text}"]
    return [*cmd, "--distinguishers", ",".join(distinguishers), "--confidence", number(float(confidence))]


def sanitize_command(
    mechanism: str,
    epsilon: float,
    *,
    embedding: str,
    params: Iterable[tuple[str, float | int]] = (),
    vocab_size: int | None = None,
    seed: int,
    draw: int = 1,
    oov: str = "mask",
    full_vocabulary: bool = False,
    input_path: str = "input.txt",
    output_path: str = "sanitized.txt",
) -> list[str]:
    """``python -m dpcore sanitize …`` whose output is draw ``draw`` of
    :func:`dpcore.text.sanitize.sanitize_lines` over the lines of ``input_path``.

    Parameters
    ----------
    mechanism, epsilon, params
        The text mechanism, its ε and its own parameters (``(name, value)`` pairs, each given
        as ``--param name=value``).
    embedding
        The embedding the mechanism runs over.
    vocab_size
        The GloVe vocabulary's size (written for ``glove`` only: BERT's vocabularies are whole).
    seed, draw
        Draw 1 is the seed itself; draw K its child stream
        (:func:`dpcore.text.sanitize.draw_rng`), as on the page.
    oov
        ``mask`` or ``keep``.
    full_vocabulary
        Keep the offensive words in the vocabulary (``--full-vocabulary``); by default they are
        left out (:func:`dpcore.text.vocab.build_vocabulary`).
    input_path, output_path
        The text file to sanitize (one sentence per line) and where the result goes.

    Returns
    -------
    list of str
        The argument list, starting ``python -m dpcore sanitize``.
    """
    cmd = [*PREFIX, "sanitize", "--mechanism", mechanism, "--embedding", embedding]
    cmd += ["--epsilon", number(float(epsilon))]
    for name, value in params:
        cmd += ["--param", f"{name}={number(value)}"]
    if embedding == "glove" and vocab_size is not None:
        cmd += ["--vocab-size", number(int(vocab_size))]
    cmd += ["--seed", number(int(seed)), "--draw", number(int(draw)), "--oov", oov]
    if full_vocabulary:
        cmd.append("--full-vocabulary")
    return [*cmd, "--input", input_path, "--output", output_path]
