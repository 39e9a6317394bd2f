"""Which sanitizers the verdict table has a row for, and how each row is audited.

Four groups, in the table's order:

- **control**: dpcore's ``flawed:`` reproductions, each at a setting where its true loss exceeds
  its claim (docs/audit-text.md, "The flawed reproductions"); every one must come out
  ``violates``, or the audit is broken;
- **dpcore**: dpcore's registered text mechanisms and the k-RR reference, at ε = 1;
- **pyPANTERA**: pyPANTERA 1.0.2's mechanisms as shipped (``pypantera:``), at ε = 1;
- **mldp-text**: mldp-text 0.1.2's in its own environment (``mldp:``), at ε = 1.

A row is either *fitted* (its |V| and budget chosen for power within the run's minutes,
:func:`dpcore.verdicts.fit.plan_row`) or *fixed* (a control's setting, the same on every machine).
A row whose library is not installed stays in the table, with the one line that says how to
install it.
"""

from __future__ import annotations

import importlib.metadata
from dataclasses import asdict, dataclass, field
from typing import Any

from dpcore import __version__

#: The groups, in the table's order, and the library each group's rows come from.
GROUPS: tuple[str, ...] = ("control", "dpcore", "pyPANTERA", "mldp-text")


@dataclass(frozen=True)
class FixedPlan:
    """A control's setting: |V|, budget and T, or named words with their neighbours.

    ``full_vocabulary``: audit over the embedding's top-|V| words with the offensive ones kept
    (``audit-text --full-vocabulary``); False leaves them out, as every dpcore vocabulary does by
    default (:mod:`dpcore.text.offensive`).
    """

    vocab_size: int
    screen_budget: int | None = None
    samples: int | None = None
    words: tuple[str, ...] | None = None
    neighbors: int = 2
    pairs: int = 50
    why: str = ""
    full_vocabulary: bool = False

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def plan_full_vocabulary(plan: dict[str, Any] | None) -> bool:
    """Whether a recorded plan audited the full vocabulary (offensive words included).

    A plan without the key was written before dpcore left offensive words out of its
    vocabularies, so it audited the full one (the shipped table's rows, for instance).
    """
    return bool((plan or {}).get("full_vocabulary", True))


@dataclass(frozen=True)
class RowSpec:
    """One row of the table: a sanitizer name (as ``audit-text --mechanism`` takes it) and how
    it is audited."""

    name: str
    group: str
    library: str
    summary: str
    epsilon: float = 1.0
    embedding: str = "glove"
    fixed: FixedPlan | None = None
    expected: str | None = None  # "violates" for a control
    unavailable: str | None = None  # why the row cannot run here (its library is missing)
    params: dict[str, Any] = field(default_factory=dict)


#: The controls' settings (docs/audit-text.md, "The flawed reproductions: where each one breaks
#: its claim"; tests/test_flawed_settings.py checks each of them against its exact or simulated loss).
CONTROL_SETTINGS: dict[str, tuple[float, FixedPlan]] = {
    "flawed:krr-overclaimed": (
        1.0,
        FixedPlan(vocab_size=2_000, screen_budget=2_000_000, samples=20_000, why="keeps with 3ε, claims ε"),
    ),
    "flawed:vickrey-drops-input": (
        0.01,
        FixedPlan(
            vocab_size=300,
            screen_budget=3_000_000,
            samples=20_000,
            why="at ε = 0.01 the dropped input costs 0.35 nats against a claim of 0.054",
        ),
    ),
    "flawed:truncated-gumbel-one-word": (
        4.0,
        FixedPlan(
            vocab_size=300,
            screen_budget=3_000_000,
            samples=50_000,
            why="the one-word calibration accepts ε = 4 at |V| = 300; the true loss is ≥ 24 nats",
        ),
    ),
    "flawed:tem-bottom-returns-input": (
        4.5,
        FixedPlan(
            vocab_size=50,
            samples=10_000_000,
            words=(")", "("),
            neighbors=0,
            pairs=1,
            why=(
                "no default-audit setting reaches its flaw (probability 7.7·10⁻⁵): the named pair "
                "at T = 10⁷, as docs/audit-text.md shows"
            ),
        ),
    ),
}


def dpcore_embedding(name: str) -> str:
    """The embedding a dpcore mechanism's row runs on (DP-MLM draws WordPieces)."""
    return "bert-wordpiece" if name == "dp-mlm" else "glove"


def catalogue() -> list[RowSpec]:
    """Every row of the table, installed or not, in the table's order."""
    from dpcore.flawed.text import FLAWED_TEXT_SANITIZERS
    from dpcore.text import TEXT_MECHANISMS
    from dpcore.textaudit.mldp import MLDP_MECHANISMS, mldp_installed
    from dpcore.textaudit.pypantera import PYPANTERA_MECHANISMS, pypantera_available

    rows: list[RowSpec] = []
    for name, (_, summary) in FLAWED_TEXT_SANITIZERS.items():
        eps, plan = CONTROL_SETTINGS[name]
        rows.append(RowSpec(name, "control", "dpcore", summary, eps, fixed=plan, expected="violates"))
    for e in TEXT_MECHANISMS:
        rows.append(RowSpec(e.name, "dpcore", "dpcore", e.summary, embedding=dpcore_embedding(e.name)))
    rows.append(RowSpec("krr", "dpcore", "dpcore", "k-ary randomized response over V (reference ε-LDP)"))
    missing = None if pypantera_available() else "pyPANTERA is not installed: pip install pypantera==1.0.2"
    for k, spec in PYPANTERA_MECHANISMS.items():
        summary = f"pyPANTERA 1.0.2 as shipped; claim: {spec.citation}"
        rows.append(RowSpec(f"pypantera:{k}", "pyPANTERA", "pypantera", summary, unavailable=missing))
    missing = (
        None
        if mldp_installed()
        else "mldp-text's environment is not installed: python -m dpcore adapters install mldp"
    )
    for k, mspec in MLDP_MECHANISMS.items():
        summary = f"mldp-text 0.1.2 {mspec.cls} as shipped, in its own environment; claim: {mspec.citation}"
        rows.append(RowSpec(f"mldp:{k}", "mldp-text", "mldp-text", summary, unavailable=missing))
    return rows


def select(specs: list[RowSpec], only: list[str] | None) -> list[RowSpec]:
    """The rows named in ``only`` (names or group names), in the table's order; every name must exist."""
    from dpcore.validation import DPCoreError

    if only is None:
        return specs
    names = {s.name for s in specs}
    groups = {s.group for s in specs}
    unknown = [n for n in only if n not in names and n not in groups]
    if unknown:
        raise DPCoreError(
            f"--only: no row named {unknown[0]!r}; rows: {', '.join(sorted(names))}; groups: "
            f"{', '.join(GROUPS)}"
        )
    return [s for s in specs if s.name in only or s.group in only]


def library_version(library: str) -> str | None:
    """The installed version of a row's library (None when it is not installed)."""
    if library == "dpcore":
        return __version__
    if library == "pypantera":
        try:
            return importlib.metadata.version("pypantera")
        except importlib.metadata.PackageNotFoundError:
            return None
    if library == "mldp-text":
        from dpcore.textaudit.envs import installed_env

        info = installed_env("mldp")
        return None if info is None else str(info.get("version"))
    raise ValueError(f"unknown library {library!r}")
