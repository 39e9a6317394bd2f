"""``preempt:money`` and ``preempt:age``: Prεεmpt's package (preempt 0.1.27) as shipped, in its own
environment.

``python -m dpcore adapters install preempt`` builds the environment (:mod:`dpcore.textaudit.envs`);
each rewrite is one call of the package's ``Sanitizer.encrypt`` on its metric-DP path
(:mod:`dpcore.textaudit._preempt_factory`), through
:class:`dpcore.rewriter.remote.SubprocessRewriter`.

The claim (Chowdhury et al., Prεεmpt, NDSS 2026, arXiv 2504.05147, abstract and §1): values "where
the response depends on specific values (such as age, salary)" are sanitized with metric
differential privacy, mDP: Pr[M(x) ∈ S] ≤ e^{ε·d(x, x′)}·Pr[M(x′) ∈ S], with d(x, x′) = |x − x′|
in the value's own unit (dollars, years). The package's docstring says the same of
``M_epsilon`` ("m-LDP for noising numerical values between bounds", ``sanitizer.py:79``). For a
prompt holding several values, dpcore composes the claim over them: ε·Σᵢ|xᵢ − x′ᵢ| (sequential
composition; this sum is dpcore's accounting, the paper states the claim for one value). The
premise: the two texts are the same apart from their values, and hold as many.

The values are marked by hand in place of the package's 7–8-billion-parameter NER model
(:data:`VALUE_PATTERN`: every number written in digits), so the claim tested is the one about what
happens to the values once found.
"""

from __future__ import annotations

import functools
import re
from typing import Any

from dpcore.rewriter.catalog import REWRITERS
from dpcore.rewriter.interface import RewriterClaim
from dpcore.validation import check_epsilon

__all__ = ["CITATION", "VALUE_PATTERN", "claimed_bound", "preempt_age", "preempt_money", "premise"]

CITATION = (
    "Chowdhury et al. 2026 (NDSS), Prεεmpt abstract and §1: values such as age and salary get metric DP, "
    "ε·|x − x′| per value (summed over a prompt's values by dpcore)"
)
#: What the NER is asked for, marked by hand: every number written in digits (with its decimals).
VALUE_PATTERN = r"\b\d+(?:\.\d+)?\b"
_VALUE = re.compile(VALUE_PATTERN)
#: The unit of d(x, x′) for each entity type.
UNITS = {"Money": "dollars", "Age": "years"}


def _split(text: str) -> tuple[list[str], list[float]]:
    """The text between the values, and the values."""
    return _VALUE.split(text), [float(v) for v in _VALUE.findall(text)]


def premise(x: str, x_prime: str) -> str | None:
    """Why the pair is outside the claim (None: inside it): the texts must be the same apart from
    their values, and hold as many."""
    (rest, vals), (rest_p, vals_p) = _split(x), _split(x_prime)
    if not vals:
        return "the texts hold no value written in digits (nothing is sanitized)"
    if len(vals) != len(vals_p):
        return f"the texts hold {len(vals)} and {len(vals_p)} values (the claim is about changing values)"
    if rest != rest_p:
        return "the texts differ outside their values (the claim covers changing the values only)"
    return None


def claimed_bound(x: str, x_prime: str, *, epsilon: float) -> float:
    """ε·Σᵢ|xᵢ − x′ᵢ| over the values of two texts within the :func:`premise`."""
    a, b = _split(x)[1], _split(x_prime)[1]
    return float(epsilon * sum(abs(u - v) for u, v in zip(a, b, strict=True)))


def _build(entity: str, epsilon: float) -> object:
    from dpcore.rewriter.remote import package_rewriter

    epsilon = check_epsilon(epsilon)
    claim = RewriterClaim(
        epsilon,
        unit="token",
        same_length=True,
        citation=CITATION,
        metric=f"|x − x′| between the values, in {UNITS[entity]}",
    )
    return package_rewriter(
        "preempt",
        name=f"preempt:{entity.lower()}",
        epsilon=epsilon,
        claim=claim,
        params={"entity": entity, "pattern": VALUE_PATTERN},
        premise=premise,
        claimed_bound=functools.partial(claimed_bound, epsilon=epsilon),
    )


def _register(entity: str, plural: str) -> Any:
    """Register ``preempt:<entity>``: the package's path for ``entity`` at ``epsilon`` per
    unit of :data:`UNITS` (module docstring); building it raises a one-line :class:`DPCoreError`
    when the environment is not installed or the package fails to build."""

    def factory(*, epsilon: float) -> object:
        return _build(entity, epsilon)

    unit = UNITS[entity].removesuffix("s")
    factory.__doc__ = f"The package's {plural} path at ``epsilon`` per {unit} (module docstring)."
    return REWRITERS.register(
        f"preempt:{entity.lower()}",
        summary=(
            f"preempt 0.1.27's Sanitizer.encrypt on {plural} (metric DP), as shipped "
            "(adapters install preempt)"
        ),
        citation=CITATION,
        tags=("kind:package", "needs-env"),
        display=f"the preempt 0.1.27 package, {plural}",
    )(factory)


preempt_money = _register("Money", "money")
preempt_age = _register("Age", "ages")
