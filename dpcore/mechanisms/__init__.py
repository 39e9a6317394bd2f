"""Mechanisms on real vectors and their registry.

>>> from dpcore.mechanisms import VECTOR_MECHANISMS
>>> mech = VECTOR_MECHANISMS.create("laplace", epsilon=1.0, dim=8)
>>> mech.claimed_epsilon, mech.true_epsilon
(1.0, 1.0)

Importing this package registers the correct mechanisms (:mod:`dpcore.mechanisms.vector`). The
fenced flawed reproductions (:mod:`dpcore.flawed`, ``flawed=True``) register themselves when
:mod:`dpcore.flawed` is imported: this package never imports them. :mod:`dpcore.audit`, the CLI's
``list``, the dashboard and :func:`dpcore.create_mechanism` import it, so every listing they show
has both.
"""

from dpcore.mechanisms import vector as _vector  # noqa: F401  (registers correct mechanisms)
from dpcore.mechanisms.base import MAX_DIM, IIDAuditable, VectorMechanism
from dpcore.mechanisms.registry import PAPER_FIG2, VECTOR_MECHANISMS
from dpcore.mechanisms.vector import ADePTCorrected, Copy, Gaussian, Laplace, RandomBits
from dpcore.validation import DPCoreError

__all__ = [
    "MAX_DIM",
    "PAPER_FIG2",
    "VECTOR_MECHANISMS",
    "ADePTCorrected",
    "Copy",
    "Gaussian",
    "IIDAuditable",
    "Laplace",
    "RandomBits",
    "VectorMechanism",
    "create_mechanism",
]


def create_mechanism(name: str, **kwargs: object) -> VectorMechanism:
    """Build the registered mechanism ``name`` (keyword-only arguments, e.g. ``epsilon``, ``dim``).

    The flawed reproductions are registered once :mod:`dpcore.flawed` is imported
    (:func:`dpcore.create_mechanism` does that first).

    Examples
    --------
    >>> import numpy as np
    >>> from dpcore.mechanisms import create_mechanism
    >>> m = create_mechanism("laplace", epsilon=1.0, dim=4)
    >>> m.sample(np.zeros(4), 3, np.random.default_rng(0)).shape
    (3, 4)
    """
    import sys

    if name not in VECTOR_MECHANISMS and "dpcore.flawed" not in sys.modules:
        correct = ", ".join(VECTOR_MECHANISMS.names())
        raise DPCoreError(
            f"unknown mechanism {name!r} among the correct ones ({correct}); the flawed "
            "reproductions are registered by importing dpcore.flawed (dpcore.create_mechanism does "
            "it for you)"
        )
    return VECTOR_MECHANISMS.create(name, **kwargs)
