"""A tiny generic registry: names → factories, with metadata for the CLI and the dashboard.

Modelled on Opacus' accountant registry. Adding a mechanism takes one file: define the class
and decorate it with ``@REGISTRY.register(...)``; the CLI's ``list`` command and every dashboard
dropdown read from the registry.

Each entry has two names: ``name``, the machine name (CLI arguments, URLs, JSON keys, legends), and
``display``, the name a sentence uses ("ADePT", "SanText+"). Every headline and caption that names a
mechanism in prose reads :meth:`Registry.display_name` (one home); the machine name never changes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from dpcore.validation import DPCoreError

__all__ = ["Registry", "RegistryEntry"]

T = TypeVar("T")


@dataclass(frozen=True)
class RegistryEntry(Generic[T]):
    """One registered name.

    Attributes
    ----------
    name:
        The public name (CLI and dashboard).
    factory:
        Callable building the object; receives keyword-only arguments.
    summary:
        One line for listings.
    flawed:
        True for reproductions of published, non-private mechanisms. These are never offered as
        private: listings label them, and the dashboard shows them as "flawed reproduction".
    citation:
        Paper and equation implemented.
    tags:
        Free-form labels (for example ``"paper-fig2"``).
    display:
        The human name a sentence uses ("ADePT", "SanText+", "DP-MLM"); empty means ``name``.
        Read it through :attr:`display_name`.
    """

    name: str
    factory: Callable[..., T]
    summary: str
    flawed: bool = False
    citation: str = ""
    tags: tuple[str, ...] = field(default_factory=tuple)
    display: str = ""

    @property
    def display_name(self) -> str:
        """The name as a sentence writes it: :attr:`display`, else the machine :attr:`name`."""
        return self.display or self.name


class Registry(Generic[T]):
    """Map names to factories. ``kind`` names the family in error messages."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._entries: dict[str, RegistryEntry[T]] = {}

    def register(
        self,
        name: str,
        *,
        summary: str,
        flawed: bool = False,
        citation: str = "",
        tags: tuple[str, ...] = (),
        display: str = "",
    ) -> Callable[[Callable[..., T]], Callable[..., T]]:
        """Class or function decorator that registers ``name``.

        ``display`` is the human name headlines use ("ADePT"); see :attr:`RegistryEntry.display_name`.
        """

        def deco(factory: Callable[..., T]) -> Callable[..., T]:
            if name in self._entries:
                raise RuntimeError(f"{self.kind} {name!r} is registered twice")
            self._entries[name] = RegistryEntry(
                name=name,
                factory=factory,
                summary=summary,
                flawed=flawed,
                citation=citation,
                tags=tuple(tags),
                display=display,
            )
            return factory

        return deco

    def get(self, name: str) -> RegistryEntry[T]:
        """Return the entry for ``name``; raise :class:`DPCoreError` listing the valid names."""
        try:
            return self._entries[name]
        except (KeyError, TypeError):
            valid = ", ".join(self._entries)
            raise DPCoreError(f"unknown {self.kind} {name!r}; choose one of: {valid}") from None

    def create(self, name: str, **kwargs: object) -> T:
        """Build the object registered as ``name`` with keyword-only arguments."""
        return self.get(name).factory(**kwargs)

    def display_name(self, name: str) -> str:
        """The human name of the registered ``name`` ("adept" → "ADePT"), for headlines and captions.

        Raises :class:`DPCoreError` listing the valid names when ``name`` is not registered.
        """
        return self.get(name).display_name

    def names(self, *, include_flawed: bool = True) -> list[str]:
        """Registered names, in registration order."""
        return [n for n, e in self._entries.items() if include_flawed or not e.flawed]

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def __iter__(self) -> Iterator[RegistryEntry[T]]:
        return iter(self._entries.values())

    def __len__(self) -> int:
        return len(self._entries)
