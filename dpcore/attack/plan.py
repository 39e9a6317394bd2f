"""Which (mechanism, ε, attack) cells of an attack run can run, decided in one place.

``python -m dpcore attack``, the mechanism comparison (:mod:`dpcore.attack.comparison`) and the
Attack page (:mod:`dpcore.attack.page_view`) all ask, for each mechanism, the same questions
before they sanitize anything:

- **ε**: a mechanism calibrated only above a floor on this vocabulary (``truncated-gumbel``,
  :meth:`~dpcore.text.mechanisms.TextMechanism.minimum_epsilon`) is undefined at or below it;
- **the Bayesian attacks** (``bayes-unigram``, ``bayes-mlm``) need the mechanism's exact channel
  Pr[M(x)=y] (:func:`dpcore.attack.bayes.bayes_unsupported_reason`); the masked-LM attack
  (``mlm``) runs on every mechanism;
- **contextual** mechanisms (dp-mlm) read the whole line: one language-model pass per token.

:func:`plan_mechanism` answers them for one mechanism; each caller then applies its own policy
(the CLI refuses what cannot run, the comparison records it in its rows, the page notes it and
skips it).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from dpcore.formatting import epsilon_text
from dpcore.validation import DPCoreError

__all__ = ["ATTACKS", "CHANNEL_ATTACKS", "MechanismPlan", "plan_mechanism"]

#: Every attack (:data:`dpcore.attack.experiment.ATTACKS`).
ATTACKS = ("mlm", "bayes-unigram", "bayes-mlm", "llm")
#: The attacks that need the mechanism's exact channel.
CHANNEL_ATTACKS = ("bayes-unigram", "bayes-mlm")


@dataclass(frozen=True)
class MechanismPlan:
    """What one mechanism can run (:func:`plan_mechanism`).

    Attributes
    ----------
    mechanism
        The registered name.
    epsilons
        The ε values it is defined at, in the order asked.
    undefined
        The ε values at or below its floor (not run).
    floor
        Its smallest ε, excluded (0: any ε).
    attacks
        The attacks asked for that can run, in the order asked.
    bayes_reason
        Why the Bayesian attacks have no channel for it (one line), or None.
    contextual
        Whether it reads the whole line (one language-model pass per token).
    refuted
        Whether dpcore refutes its published guarantee (its ``refuted`` tag).
    probe
        The mechanism at the first ε of ``epsilons`` (None when none is defined).
    """

    mechanism: str
    epsilons: tuple[float, ...]
    undefined: tuple[float, ...]
    floor: float
    attacks: tuple[str, ...]
    bayes_reason: str | None
    contextual: bool
    refuted: bool
    probe: Any = field(default=None, repr=False, compare=False)

    def notes(self, asked: Sequence[str]) -> list[str]:
        """One Markdown line per limit met, for the attacks ``asked``: the ε skipped, the
        Bayesian attacks dropped, a refuted guarantee."""
        out = []
        if self.undefined:
            skipped = ", ".join(epsilon_text(e) for e in self.undefined)
            out.append(
                f"**{self.mechanism}** is defined only for ε > {epsilon_text(self.floor, digits=4)} on "
                "this vocabulary: "
                f"{skipped} skipped."
            )
        if self.bayes_reason and any(a in CHANNEL_ATTACKS for a in asked):
            out.append(f"**{self.mechanism}**: no Bayesian attack. {self.bayes_reason}.")
        if self.refuted:
            out.append(
                f"**{self.mechanism}**: dpcore refutes its published guarantee: not private as claimed."
            )
        return out


def plan_mechanism(
    mechanism: str,
    epsilons: Sequence[float],
    attacks: Sequence[str],
    make: Callable[[float], Any],
    vocab: Any,
) -> MechanismPlan:
    """The ε values and attacks ``mechanism`` can run (module docstring).

    Parameters
    ----------
    mechanism
        A registered text mechanism.
    epsilons
        The ε values asked for.
    attacks
        Any of :data:`ATTACKS`.
    make
        ε ↦ the mechanism (with its parameters) over ``vocab``; called once, at the first
        defined ε.
    vocab
        The vocabulary it runs over (its floor depends on it).

    Returns
    -------
    MechanismPlan

    Raises
    ------
    DPCoreError
        An unknown mechanism or attack.

    Examples
    --------
    >>> from dpcore.text import create_text_mechanism
    >>> from dpcore.text.vocab import build_vocabulary
    >>> vocab = build_vocabulary("glove", size=500)
    >>> plan = plan_mechanism("feyisetan", [1.0, 3.0], ["bayes-unigram", "mlm"],
    ...                       lambda e: create_text_mechanism("feyisetan", vocab=vocab, epsilon=e), vocab)
    >>> plan.epsilons, plan.attacks
    ((1.0, 3.0), ('mlm',))
    """
    from dpcore.attack.bayes import bayes_unsupported_reason
    from dpcore.text import TEXT_MECHANISMS

    entry = TEXT_MECHANISMS.get(mechanism)
    unknown = [a for a in attacks if a not in ATTACKS]
    if unknown:
        raise DPCoreError(f"unknown attack {unknown[0]!r}; choose among {', '.join(ATTACKS)}")
    floor = float(entry.factory.minimum_epsilon(vocab))
    eps = [float(e) for e in epsilons]
    ok = tuple(e for e in eps if e > floor)
    probe = make(ok[0]) if ok else None
    reason = bayes_unsupported_reason(probe) if probe is not None else None
    return MechanismPlan(
        mechanism=mechanism,
        epsilons=ok,
        undefined=tuple(e for e in eps if e <= floor),
        floor=floor,
        attacks=tuple(a for a in attacks if a not in CHANNEL_ATTACKS or reason is None),
        bayes_reason=reason,
        contextual=bool(getattr(probe, "contextual", False)),
        refuted="refuted" in entry.tags,
        probe=probe,
    )
