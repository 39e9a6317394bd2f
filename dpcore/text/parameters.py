"""The parameter schemas of the registered text mechanisms (:class:`dpcore.parameters.ParameterSpec`)."""

from __future__ import annotations

from dpcore.parameters import ParameterSpec

__all__ = ["mechanism_parameter_specs"]


def mechanism_parameter_specs(name: str) -> tuple[ParameterSpec, ...]:
    """The :class:`ParameterSpec` tuple of a registered text mechanism (empty when it has none)."""
    from dpcore.text.registry import TEXT_MECHANISMS

    return tuple(getattr(TEXT_MECHANISMS.get(name).factory, "PARAMETERS", ()))
