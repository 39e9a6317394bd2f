"""Colour by role (issue 58, part 5): a colour means one mechanism everywhere.

Every name dpcore registers (vector and text mechanisms, the text audit's reference and controls,
rewriters, third-party adapters) has a colour no other registered name has, far enough from every
other to be told apart and from the colours that mean something else (verdicts, claims, text);
attackers have no colour of their own, only a marker and a dash; and a name dpcore does not
register never takes a registered name's colour. The names are read from the registries, never
listed here, so a newly registered mechanism without a colour of its own fails these tests.
"""

from __future__ import annotations

import itertools
from typing import Any

import pandas as pd
import plotly.graph_objects as go
import pytest

from dpcore.viz.attack_figure import ATTACK_LABELS, UNSANITIZED, epsilon_figure, tradeoff_figure
from dpcore.viz.comparison_figure import comparison_figure
from dpcore.viz.palette import (
    ADAPTERS,
    ATTACKER_INK,
    ATTACKERS,
    BAD,
    CLAIM,
    INK,
    MECHANISMS,
    MIN_CONTRAST,
    MIN_DIFFERENCE,
    NAMED,
    OK,
    SERIES,
    SOFT_INK,
    UNKNOWN,
    VERDICTS,
    _ciede2000,
    attacker_style,
    colour,
    colour_difference,
    contrast_ratio,
)

#: Colours that mean something other than a mechanism.
RESERVED = {"BAD": BAD, "OK": OK, "CLAIM": CLAIM, "INK": INK, "SOFT_INK": SOFT_INK, "UNKNOWN": UNKNOWN}
ADAPTER_PREFIXES = ("pypantera:", "mldp:", "dpmlm:", "diffractor:", "preempt:", "dp-fusion:", "invink:")


def _registries() -> dict[str, list[str]]:
    """Every name each registry lists, installed or not."""
    import dpcore.flawed.mechanisms  # noqa: F401  (registers the flawed vector reproductions)
    from dpcore.mechanisms import VECTOR_MECHANISMS
    from dpcore.rewriter.registry import available_rewriters
    from dpcore.text import TEXT_MECHANISMS
    from dpcore.textaudit.loaders import available_sanitizers
    from dpcore.verdicts.rows import catalogue

    return {
        "vector": VECTOR_MECHANISMS.names(),
        "text": TEXT_MECHANISMS.names(),
        "text audit": [c.name for c in available_sanitizers()],
        "verdict rows": [r.name for r in catalogue()],  # every adapter, installed or not
        "rewriters": [c.name for c in available_rewriters()],
    }


def _mechanism(name: str) -> str:
    """The mechanism a registered name runs: an adapter's dpcore counterpart, else the name."""
    key = name.lower()
    return ADAPTERS.get(key, key)


REGISTRIES = _registries()
REGISTERED = list(dict.fromkeys(n for names in REGISTRIES.values() for n in names))


def test_the_registries_are_read_whole() -> None:
    """The sweep below covers every kind of registered name (a registry read wrongly would make
    the other tests pass on nothing)."""
    assert all(REGISTRIES.values()), {k: len(v) for k, v in REGISTRIES.items()}
    import dpcore.flawed.mechanisms  # noqa: F401
    from dpcore.mechanisms import VECTOR_MECHANISMS

    assert any(e.flawed for e in VECTOR_MECHANISMS)  # the flawed reproductions are in
    for prefix in ("flawed:", "planted:", "pypantera:", "mldp:"):
        assert any(n.startswith(prefix) for n in REGISTERED), prefix


def test_every_registered_mechanism_has_a_colour_of_its_own() -> None:
    by_mechanism: dict[str, str] = {}
    for name in REGISTERED:
        c = colour(name)
        assert c != UNKNOWN, f"{name} has no colour of its own"
        assert by_mechanism.setdefault(_mechanism(name), c) == c, name
    problems = []
    for (m1, c1), (m2, c2) in itertools.combinations(by_mechanism.items(), 2):
        if c1.lower() == c2.lower() or colour_difference(c1, c2) < MIN_DIFFERENCE:
            problems.append(f"{m1} {c1} and {m2} {c2}: ΔE00 {colour_difference(c1, c2):.1f}")
    for m, c in by_mechanism.items():
        for role, r in RESERVED.items():
            if c.lower() == r.lower() or colour_difference(c, r) < MIN_DIFFERENCE:
                problems.append(f"{m} {c} is too close to {role} {r}: ΔE00 {colour_difference(c, r):.1f}")
    assert not problems, "\n".join(problems)
    # the colours the issue named as shared are now apart
    assert colour("dp-prompt") != colour("dptext") and colour("dp-mlm") != colour("copy")
    assert colour("laplace") != colour("santext") and colour("adept") != BAD


def test_an_adapter_takes_the_colour_of_the_mechanism_it_runs() -> None:
    adapters = [n for n in REGISTERED if n.startswith(ADAPTER_PREFIXES)]
    assert adapters
    text = {n for n in REGISTERED if not n.startswith(ADAPTER_PREFIXES) and ":" not in n}
    for name in adapters:
        target = ADAPTERS.get(name.lower())
        if target is None:  # no dpcore counterpart: a colour of its own
            assert name.lower() in NAMED, name
        else:
            assert target in text, (name, target)
            assert colour(name) == colour(target), name
    # every entry of the table names an adapter that exists (no stale rows)
    assert set(ADAPTERS) <= {n.lower() for n in adapters}


def test_every_colour_is_legible_on_white() -> None:
    for name in REGISTERED:
        assert contrast_ratio(colour(name)) >= MIN_CONTRAST, (name, colour(name))
    for c in (*NAMED.values(), UNKNOWN, ATTACKER_INK):
        assert contrast_ratio(c) >= MIN_CONTRAST, c


def test_an_unknown_name_never_takes_a_registered_names_colour() -> None:
    taken = {colour(n) for n in REGISTERED}
    for name in ("my-own-sanitizer", "file.py:factory", "pypantera:SomethingNew", "flawed:not-there",
                 "subprocess:/usr/bin/python::m:f", "Adept2", "laplace-ish"):  # fmt: skip
        assert colour(name) == UNKNOWN, name
    assert UNKNOWN not in taken
    # spellings of a registered name are the name
    assert colour("ADePT") == colour("adept (exact)") == colour("adept")
    assert colour("Truncated Gumbel") == colour("truncated-gumbel")
    assert colour("pypantera:CMP") == colour("mldp:cmp") == colour("feyisetan")


def test_attackers_are_told_apart_by_marker_and_dash_never_by_colour() -> None:
    from dpcore.attack.experiment import ATTACKS

    attackers = [*ATTACKS, "unsanitized"]
    assert set(attackers) <= set(ATTACKERS)
    mechanism_colours = {colour(n) for n in REGISTERED}
    for a in attackers:
        assert colour(a) == ATTACKER_INK, a
    assert ATTACKER_INK not in mechanism_colours
    styles = [attacker_style(a) for a in attackers]
    assert len({s.symbol for s in styles}) == len({s.dash for s in styles}) == len(attackers)
    # an attacker dpcore does not know: a style no named attacker has, the same in every call
    other = attacker_style("my-attacker")
    assert other == attacker_style("my-attacker")
    assert other.symbol not in {s.symbol for s in styles} and other.dash not in {s.dash for s in styles}


def test_the_colour_difference_is_ciede2000() -> None:
    # Sharma, Wu & Dalal (2005), Table 1, pairs 1, 7 and 17
    assert _ciede2000((50, 2.6772, -79.7751), (50, 0, -82.7485)) == pytest.approx(2.0425, abs=1e-4)
    assert _ciede2000((50, 0, 0), (50, -1, 2)) == pytest.approx(2.3669, abs=1e-4)
    assert _ciede2000((60.2574, -34.0099, 36.2677), (60.4626, -34.1751, 39.4387)) == pytest.approx(
        1.2644, abs=1e-4
    )
    assert colour_difference("#000000", "#ffffff") == pytest.approx(100.0, abs=1e-3)
    assert colour_difference("#1f5fa0", "#1f5fa0") == 0.0
    assert colour_difference("#1f5fa0", "#b35806") == pytest.approx(colour_difference("#b35806", "#1f5fa0"))


def test_series_that_are_not_mechanisms_never_take_a_mechanisms_colour() -> None:
    """Words (the Sanitize chart), word pairs (the audit charts), input distributions and verdicts
    are drawn in colours no mechanism has: on the Sanitize page a blue word line read as SanText's,
    and the verdict "premise broken" was SanText+'s orange."""
    from dpcore.viz import tradeoff_figure as tradeoff
    from dpcore.viz.palette import DISTRIBUTIONS
    from dpcore.viz.sanitize_figure import WORD_STYLES

    mechanism_colours = set(MECHANISMS.values())
    reserved = (BAD, OK, INK, SOFT_INK, UNKNOWN)
    for c in SERIES:
        assert contrast_ratio(c) >= MIN_CONTRAST, c
        near = min(colour_difference(c, m) for m in mechanism_colours | set(reserved))
        assert near >= MIN_DIFFERENCE, (c, near)
        assert min(colour_difference(c, BAD), colour_difference(c, OK)) >= 25, c
    for a, b in itertools.combinations(SERIES, 2):
        assert colour_difference(a, b) >= MIN_DIFFERENCE, (a, b)
    assert {c for c, _, _ in WORD_STYLES} <= set(SERIES) and len(WORD_STYLES) == len(SERIES)
    assert len({(d, m) for _, d, m in WORD_STYLES}) == len(WORD_STYLES)  # told apart in grey too
    assert set(tradeoff._PALETTE) <= set(SERIES) and set(DISTRIBUTIONS.values()) <= set(SERIES)
    for verdict, c in VERDICTS.items():
        near = min(colour_difference(c, m) for m in mechanism_colours)
        assert near >= MIN_DIFFERENCE, (verdict, c, near)


# ---- the attack page's charts: colour is the mechanism, marker and dash the attacker -----------

MECHS = ("santext", "santext+")
ATTACKS_DRAWN = ("bayes-unigram", "mlm")


def _frames() -> tuple[pd.DataFrame, pd.DataFrame, dict[str, Any]]:
    attack = pd.DataFrame(
        [
            {"mechanism": m, "attack": a, "epsilon": e, "defense_rate": d, "ci_low": d - 0.05,
             "ci_high": d + 0.05, "attacker_top1_unsanitized": 1.0 if a == "bayes-unigram" else 0.3,
             **({"claim_defense_floor": 0.1} if a == "bayes-unigram" else {})}
            for m in MECHS for a in ATTACKS_DRAWN for e, d in ((1.0, 0.9), (10.0, 0.4))
        ]
    )  # fmt: skip
    utility = pd.DataFrame(
        [{"mechanism": m, "epsilon": e, "accuracy": a, "ci_low": a - 0.02, "ci_high": a + 0.02}
         for m in MECHS for e, a in ((1.0, 0.66), (10.0, 0.72))]
    )  # fmt: skip
    return attack, utility, {"accuracy_unsanitized": 0.78, "accuracy_random": 0.6}


def _trace(fig: go.Figure, name: str) -> Any:
    found = [t for t in fig.data if t.name == name]
    assert len(found) == 1, (name, [t.name for t in fig.data])
    return found[0]


def _symbols(t: Any) -> list[str]:
    s = t.marker.symbol
    return list(s) if isinstance(s, list | tuple) else [s]


@pytest.mark.parametrize("which", ["tradeoff", "epsilon"])
def test_the_attack_charts_colour_the_mechanism_and_mark_the_attacker(which: str) -> None:
    attack, utility, base = _frames()
    if which == "tradeoff":
        fig = tradeoff_figure(attack, utility, base)
        prefix = ""
    else:
        fig = epsilon_figure(attack, utility, base)
        prefix = "defense rate, "
    for mech in MECHS:
        looks = set()
        for atk in ATTACKS_DRAWN:
            t = _trace(fig, f"{prefix}{mech}, {ATTACK_LABELS[atk]}")
            assert t.line.color == t.marker.color == colour(mech), (t.name, t.line.color)
            assert (t.marker.symbol, t.line.dash) == tuple(attacker_style(atk)), t.name
            looks.add((t.marker.symbol, t.line.dash))
        assert len(looks) == len(ATTACKS_DRAWN)  # one mechanism's attackers differ by marker and dash
    # what belongs to an attacker alone (ε = ∞) is neutral ink, with the attacker's marker
    for atk in ATTACKS_DRAWN:
        t = _trace(fig, f"{UNSANITIZED}, {ATTACK_LABELS[atk]}")
        assert (t.line.color if "lines" in t.mode else None) in (None, ATTACKER_INK)
        assert t.marker.color == ATTACKER_INK and attacker_style(atk).symbol in _symbols(t)
    # no trace takes a colour of its own for an attacker: every colour is a mechanism's, the claim's
    # or a neutral ink
    allowed = {colour(m) for m in MECHS} | {CLAIM, ATTACKER_INK}
    for t in fig.data:
        for c in (t.line.color if "lines" in (t.mode or "") else None, t.marker.color):
            assert c is None or c in allowed, (t.name, c)


def test_the_comparison_chart_colours_each_panel_by_its_mechanism() -> None:
    rows = [
        {"mechanism": m, "epsilon": e, "notion": "MLDP", "defense_bayes": 0.5, "defense_mlm": 0.8,
         "accuracy": 0.7, "accuracy_unsanitized": 0.78, "attacker_top1_unsanitized_bayes": 1.0,
         "attacker_top1_unsanitized_mlm": 0.32}
        for m in MECHS for e in (1.0, 10.0)
    ]  # fmt: skip
    fig = comparison_figure(rows)
    for mech in MECHS:
        series = [t for t in fig.data if (t.name or "").startswith(f"{mech} (") and t.x[0] is not None]
        assert len(series) == 2
        assert {t.line.color for t in series} == {t.marker.color for t in series} == {colour(mech)}
        assert {t.marker.symbol for t in series} == {attacker_style(a).symbol for a in ATTACKS_DRAWN}
    for label, atk in (("Bayesian attacker", "bayes-unigram"), ("masked-LM attacker", "mlm")):
        key = _trace(fig, label)  # the attacker's legend entry: its marker, in neutral ink
        assert key.marker.color == ATTACKER_INK and key.marker.symbol == attacker_style(atk).symbol
