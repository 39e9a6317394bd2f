"""The language-model distinguisher: how much likelier x is than x′ as the original of a rewrite.

An attacker who holds a rewrite y and a language model asks the model to recover the original
and reads how likely it finds each candidate (the reconstruction attack of Pang et al., arXiv
2410.12443, turned into a test between two known inputs). The score of a rewrite y is

    s(y) = ln p_LM(x | prompt(y)) − ln p_LM(x′ | prompt(y)),

the log-likelihoods of x and of x′ as the model's reply to :data:`PROMPT` with y in it
(:meth:`ScoringLM.log_likelihoods`: the sum of the reply's token log-probabilities, its end of
turn included, so that "x and nothing more" is what is scored). The audit thresholds s on the
selection rewrites and counts the event {s ≥ t} (or {s ≤ t}) on the held-out ones, with the
same Clopper–Pearson bounds as every other event (:mod:`dpcore.rewriter.distinguish`, ``lm``).
Any model, any prompt gives a valid bound: the model only chooses the event.

The shipped model is SmolLM2-135M-Instruct (:mod:`dpcore.models.causal_lm`), which needs torch:
``lm`` is a CLI and bench distinguisher, never the dashboard's (which shows its results from
shipped files). Each distinct rewrite is scored once.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Callable, Iterator, Sequence
from typing import Protocol, runtime_checkable

import numpy as np

from dpcore.validation import DPCoreError

__all__ = ["PROMPT", "ScoringLM", "default_model", "reconstruction_scores", "reporting"]

#: The reconstruction prompt (the user turn of the model's chat format).
PROMPT = (
    "The text below is a privatised rewrite of a private sentence. "
    "Reply with the original sentence only.\n\nRewrite: {rewrite}"
)


@runtime_checkable
class ScoringLM(Protocol):
    """What the LM distinguisher needs of a causal language model.

    ``prompt_ids(prompt)`` is a user turn as the model's input ids, ending where its reply starts;
    ``answer_ids(text)`` is ``text`` as its reply (its end of turn included);
    ``log_likelihoods(prompts, answers)`` is ln p(answer | prompt) for each prompt and answer
    (``len(prompts) × len(answers)``, float64).
    """

    name: str

    def prompt_ids(self, prompt: str) -> np.ndarray: ...

    def answer_ids(self, text: str) -> np.ndarray: ...

    def log_likelihoods(self, prompts: Sequence[np.ndarray], answers: Sequence[np.ndarray]) -> np.ndarray: ...


#: Where the scores of an audit report their progress (:func:`reporting`); None: nowhere.
_PROGRESS: contextvars.ContextVar[Callable[[int, int], None] | None] = contextvars.ContextVar(
    "lm_progress", default=None
)


@contextlib.contextmanager
def reporting(progress: Callable[[int, int], None] | None) -> Iterator[None]:
    """Within the block, the LM distinguisher reports ``progress(done, total)`` in distinct rewrites
    scored (an audit's scoring runs inside its selection, which takes no callback)."""
    token = _PROGRESS.set(progress)
    try:
        yield
    finally:
        _PROGRESS.reset(token)


def default_model() -> ScoringLM:
    """The shipped SmolLM2-135M-Instruct, loaded once per process
    (:func:`dpcore.models.causal_lm.load_smollm2`)."""
    from dpcore.models.causal_lm import load_smollm2

    return load_smollm2()


def reconstruction_scores(
    rewrites: Sequence[str],
    x: str,
    x_prime: str,
    *,
    model: ScoringLM | None = None,
    chunk: int = 64,
    progress: Callable[[int, int], None] | None = None,
) -> np.ndarray:
    """s(y) = ln p(x | prompt(y)) − ln p(x′ | prompt(y)) for each rewrite y (module docstring).

    Parameters
    ----------
    rewrites:
        The rewrites (each distinct one is scored once).
    x, x_prime:
        The two candidate originals.
    model:
        The scoring model (default: :func:`default_model`).
    chunk:
        Distinct rewrites scored per step (``progress`` is called after each).
    progress:
        ``progress(done, total)`` in distinct rewrites (default: the one :func:`reporting` set).

    Returns
    -------
    numpy.ndarray
        float64 scores, one per rewrite, in nats.
    """
    if str(x) == str(x_prime):
        raise DPCoreError("the LM distinguisher needs two different inputs")
    model = default_model() if model is None else model
    progress = _PROGRESS.get() if progress is None else progress
    unique, rows = np.unique(np.asarray([str(r) for r in rewrites], dtype=object), return_inverse=True)
    answers = [model.answer_ids(str(x)), model.answer_ids(str(x_prime))]
    scores = np.empty(unique.size, dtype=np.float64)
    for lo in range(0, unique.size, int(chunk)):
        part = unique[lo : lo + int(chunk)]
        prompts = [model.prompt_ids(PROMPT.format(rewrite=r)) for r in part]
        ll = np.asarray(model.log_likelihoods(prompts, answers), dtype=np.float64)
        scores[lo : lo + part.size] = ll[:, 0] - ll[:, 1]
        if progress is not None:
            progress(lo + part.size, unique.size)
    return scores[rows.ravel()]
