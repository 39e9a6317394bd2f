"""Builds preempt 0.1.27's ``Sanitizer`` (Prεεmpt) *as shipped*, inside its own environment.

dpcore's worker (:mod:`dpcore.textaudit._subprocess_worker`) loads this file by path with the
managed environment's interpreter and calls :func:`build` (a rewriter: ``build_rewriter``). It
imports only the standard library and ``preempt``; no preempt code is copied here, and one name is
replaced (below). Each rewrite is one call of the package's own entry point,
``Sanitizer.encrypt([text], epsilon=ε, entity=E, use_mdp=True, use_fpe=False)``: its metric-DP
path for ``Money`` and ``Age`` (``encypt_money`` / ``encrypt_age`` → ``M_epsilon``, then the
values are put back into the text by ``encrypt`` itself).

Offline substitute: the named-entity model. ``Sanitizer`` asks its ``NER`` (UniNER-7B or
Llama-3-8B-Instruct on a GPU) for the values of one entity type. :class:`MarkedNER` answers in
the model's place with the values marked by hand, here every number written in digits, in
order of appearance (the pattern is dpcore's, handed in as ``pattern``), formatted as the list a
model answers with; the package's own ``postprocess_output`` parses that answer, as it parses the
model's. The claim is about what happens to the values once found, so it does not depend on
which model found them.

Not loaded: ``names_dataset.NameDataset``, which ``Sanitizer.__init__`` builds (1.9 GB of memory and
17 s on 2 cores) and only the ``Name`` path reads. :class:`UnusedNameDataset` stands in for it
and fails loudly if anything reads it, so a run that needed it could not pass unnoticed.

Randomness: ``M_epsilon`` draws with NumPy's global state (``np.random.choice``); the worker
seeds that state from the audit's rng before every call.
"""

from __future__ import annotations

import re


def describe_library():
    """Name, version and entry points of the installed preempt (the worker's hello)."""
    from importlib import metadata

    import preempt.sanitizer  # noqa: F401  (the import is the check)

    return {"library": "preempt", "version": metadata.version("preempt"), "mechanisms": ["money", "age"]}


class MarkedNER:
    """Stands in for ``preempt.ner.NER``: the values of the text are marked by hand (module docstring)."""

    def __init__(self, pattern):
        self.pattern = re.compile(pattern)

    def values(self, text):
        return self.pattern.findall(text)

    def extract(self, prompts, entity_type, batch_size=1, output_dict=None):
        from preempt.utils import postprocess_output

        output_dict = {} if output_dict is None else output_dict
        output_dict[entity_type] = []
        for text in prompts:
            answer = str(self.values(text))  # a model's answer: "['3', '31']"
            output_dict = postprocess_output([answer], output_dict, entity_type)
        return output_dict


class UnusedNameDataset:
    """Stands in for ``NameDataset`` on the Money and Age paths, which never read it."""

    def __getattr__(self, name):
        raise RuntimeError(f"NameDataset.{name} was read: the Name path is not supported by dpcore's adapter")


class Shipped:
    """preempt's own ``Sanitizer``, sanitizing one text per ``encrypt`` call."""

    def __init__(self, sanitizer, ner, epsilon, entity):
        self.sanitizer = sanitizer
        self.ner = ner
        self.epsilon = float(epsilon)
        self.entity = entity
        self.name = f"preempt:{entity.lower()}"

    def rewrite(self, texts, rng):
        # rng is unused: M_epsilon draws from NumPy's global state, seeded by the worker.
        out = []
        for text in texts:
            released, _invalid = self.sanitizer.encrypt(
                [text], epsilon=self.epsilon, entity=self.entity, use_mdp=True, use_fpe=False
            )
            out.append(released[0])
        return out

    def count_tokens(self, text):
        """The values the claim is about: the marked numbers of ``text``."""
        return len(self.ner.values(text))


def build(epsilon, entity, pattern):
    """``preempt.sanitizer.Sanitizer(ner)`` with its default key and tweak, ``ner`` the hand-marked one."""
    import preempt.sanitizer
    from preempt.sanitizer import Sanitizer

    if entity not in ("Money", "Age"):
        raise ValueError(f"entity must be Money or Age (the metric-DP paths), got {entity!r}")
    ner = MarkedNER(pattern)
    preempt.sanitizer.NameDataset = UnusedNameDataset  # module docstring: only the Name path reads it
    return Shipped(Sanitizer(ner), ner, epsilon, entity)
