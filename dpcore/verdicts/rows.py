"""Which sanitizers the verdict table has a row for, and how each row is audited.

Five groups, in the table's order:

- **control**: dpcore's ``flawed:`` reproductions, each at a setting where its true loss exceeds
  its claim (docs/audit-text.md, "The flawed reproductions"); every one must come out
  ``violates``, or the audit is broken;
- **dpcore**: dpcore's registered text mechanisms and the k-RR reference, at ε = 1;
- **pyPANTERA**: pyPANTERA 1.0.2's mechanisms as shipped (``pypantera:``), at ε = 1;
- **mldp-text**: mldp-text 0.1.2's in its own environment (``mldp:``), at ε = 1;
- **packages**: the published packages of docs/packages/, each as shipped in its own environment:
  a word-level sanitizer (``diffractor:geometric``) or a rewriter (``dpmlm:rewrite``, audited by
  :func:`dpcore.rewriter.audit_rewriter` on its :class:`RewriterPlan`'s pair), or a row saying
  why the package does not run here.

A row is either *fitted* (its |V| and budget chosen for power within the run's minutes,
:func:`dpcore.verdicts.fit.plan_row`) or *fixed* (a control's setting, the same on every machine).
A row whose library is not installed stays in the table, with the one line that says how to
install it.
"""

from __future__ import annotations

import importlib.metadata
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from dpcore import __version__

#: The groups, in the table's order, and the library each group's rows come from.
GROUPS: tuple[str, ...] = ("control", "dpcore", "pyPANTERA", "mldp-text", "packages")


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
class RewriterPlan:
    """A rewriter row's audit: one pair of neighbouring texts, rewritten ``rewrites`` times each
    (half choose the event, half bound it), and its check at ``check_rewrites`` (the same
    deterministic audit, smaller, that ``verdicts --check`` reruns)."""

    x: str
    x_prime: str
    rewrites: int
    check_rewrites: int
    distinguishers: tuple[str, ...] = ()
    why: str = ""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def checked(self) -> RewriterPlan:
        """The check's plan: the same pair at ``check_rewrites``."""
        return replace(self, rewrites=self.check_rewrites)


def is_rewriter_plan(plan: dict[str, Any] | None) -> bool:
    """Whether a recorded plan is a rewriter row's (:class:`RewriterPlan`)."""
    return isinstance(plan, dict) and "x_prime" in plan and "rewrites" in plan


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
    rewriter: RewriterPlan | None = None  # a rewriter row (audit-rewriter), not a word-level one


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
    return rows + package_rows()


#: The pair the DP-MLM package's row rewrites: a stopword against a non-stopword at one place
#: (docs/packages/dpmlm.md), in lines of 3 tokens (each rewrite is one masked-LM pass per drawn
#: token, so a short line keeps the row's check within a minute).
DPMLM_PAIR = ("anna was ill", "anna felt ill")
#: The pairs the Prεεmpt package's rows sanitize (docs/packages/preempt.md): an amount one dollar
#: either side of the edge its range is chosen at (sanitizer.py:379–381), and one age repeated
#: against two ages a year apart (sanitizer.py:531 replaces every occurrence of a value).
PREEMPT_MONEY_PAIR = ("I paid $99 for the tickets", "I paid $100 for the tickets")
PREEMPT_AGE_PAIR = ("I am 31 and my wife is 31", "I am 31 and my wife is 32")
#: The pair the DP-Fusion package's row rewrites (docs/packages/dp-fusion.md): two private messages
#: with the same public context ("_"), the second telling where and when Ann was born, so that the
#: public prompt is padded by a different number of tokens, with no attention mask (utils.py:243–254).
DPFUSION_PAIR = ("I am Ann.", "I am Ann, born 12 March 1961 in Bad Homburg.")

#: The packages of docs/packages/ that dpcore does not run yet, and why (each page says what
#: reading the code found; none of it is a verdict).
NOT_RUN: dict[str, tuple[str, str, str]] = {
    "invink:generate": (
        "invink",
        "invink 0.1.0 (InvisibleInk, NeurIPS 2025): central-DP synthetic text",
        "not audited yet: it does not import on Python < 3.12 (invink/utils.py:349), and on Python 3.12 "
        "its torch would come from PyPI with gigabytes of CUDA libraries (this machine's package index has "
        "CPU torch for Python 3.11 only); what its audit would test is on its page "
        "(docs/packages/invisibleink.md)",
    ),
}


def package_rows() -> list[RowSpec]:
    """The **packages** group: each published package as shipped (docs/packages/)."""
    from dpcore.rewriter.package_dpfusion import CITATION as DPFUSION_CITATION
    from dpcore.rewriter.package_dpmlm import CITATION as DPMLM_CITATION
    from dpcore.rewriter.package_preempt import CITATION as PREEMPT_CITATION
    from dpcore.textaudit.diffractor import CITATION as DIFFRACTOR_CITATION
    from dpcore.textaudit.envs import installed_env

    def missing(env: str) -> str | None:
        if installed_env(env) is not None:
            return None
        return f"its environment is not installed: python -m dpcore adapters install {env}"

    def rewriter_row(
        name: str, library: str, env: str, summary: str, epsilon: float, plan: RewriterPlan
    ) -> RowSpec:
        """A package's rewriter row: audited on ``plan``'s pair in its environment ``env``."""
        return RowSpec(
            name, "packages", library, summary, epsilon, embedding="", unavailable=missing(env), rewriter=plan
        )

    rows = [
        rewriter_row(
            "dpmlm:rewrite",
            "dpmlm",
            "dpmlm",
            f"dpmlm 1.3.0's dpmlm_rewrite as shipped, in its own environment; claim: {DPMLM_CITATION}",
            0.1,
            RewriterPlan(
                *DPMLM_PAIR,
                rewrites=200,
                check_rewrites=20,
                why="a stopword against a non-stopword at one place (core.py:308 keeps stopwords verbatim)",
            ),
        ),
        RowSpec(
            "diffractor:geometric",
            "packages",
            "dp-diffractor",
            f"dp-diffractor 0.2.1's Diffractor.rewrite as shipped, in its own environment; claim: "
            f"{DIFFRACTOR_CITATION}",
            1.0,
            fixed=FixedPlan(
                vocab_size=300,
                samples=300,
                words=("was", "had"),
                neighbors=2,
                pairs=50,
                why=(
                    "4–8 ms a word as shipped, so no whole-vocabulary screen fits: two stopwords "
                    "(core.py:121 releases them verbatim), each with its two nearest neighbours"
                ),
            ),
            unavailable=missing("diffractor"),
        ),
    ]
    preempt_why = {
        "money": "one dollar across the edge where the package picks the range it noises in from the value "
        "itself (sanitizer.py:379–381: [2, 1000] below 100, [100, 10000] from 100)",
        "ages": "an age written twice against two ages a year apart: sanitizer.py:531 replaces every "
        "occurrence of a value with its first noisy draw, so a repeated age shows one draw twice",
    }
    for name, what, pair in (
        ("preempt:money", "money", PREEMPT_MONEY_PAIR),
        ("preempt:age", "ages", PREEMPT_AGE_PAIR),
    ):
        rows.append(
            rewriter_row(
                name,
                "preempt",
                "preempt",
                f"preempt 0.1.27's Sanitizer.encrypt on {what} (metric DP) as shipped, the NER's answer "
                f"marked by hand; claim: {PREEMPT_CITATION}",
                0.1,
                RewriterPlan(*pair, rewrites=400, check_rewrites=200, why=preempt_why[what]),
            )
        )
    rows.append(
        rewriter_row(
            "dp-fusion:generate",
            "dp-fusion-lib",
            "dpfusion",
            "dp-fusion-lib 0.1.0's DPFusion.generate as shipped (β = ε/4 = 0.0025, at most 3 new tokens), "
            "the message marked private by hand, on SmolLM2-135M-Instruct; claim: "
            f"{DPFUSION_CITATION}",
            0.01,
            RewriterPlan(
                *DPFUSION_PAIR,
                rewrites=60,
                check_rewrites=20,
                why="two private messages of different lengths: the public prompt is padded to the private "
                "one's length, with no attention mask, so the public distribution depends on the secret's "
                "length (utils.py:243–254)",
            ),
        )
    )
    for name, (library, summary, why) in NOT_RUN.items():
        rows.append(RowSpec(name, "packages", library, summary, unavailable=why))
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
    envs = {
        "mldp-text": "mldp",
        "dpmlm": "dpmlm",
        "dp-diffractor": "diffractor",
        "preempt": "preempt",
        "dp-fusion-lib": "dpfusion",
    }
    if library in envs:
        from dpcore.textaudit.envs import installed_env

        info = installed_env(envs[library])
        return None if info is None else str(info.get("version"))
    if library in {lib for lib, _, _ in NOT_RUN.values()}:
        return None  # not installed by dpcore yet (NOT_RUN)
    raise ValueError(f"unknown library {library!r}")
