"""The text-audit page's words (``dpcore.viz.textaudit_figure``): the verdict in one sentence with
its number, and the pairs table with every infinity said in words (issue 50: "Infinity" stood
beside "violates: no")."""

from __future__ import annotations

import dataclasses
import math

import pytest

from dpcore.flawed.text import OverclaimedRandomizedResponse
from dpcore.textaudit import KaryRandomizedResponse, audit_text
from dpcore.viz.textaudit_figure import FIGURE_HEIGHT, headline, pairs_in_words, pairs_table, textaudit_figure
from tests.test_textaudit import WORDS, _word_vocab


@pytest.fixture(scope="module")
def quiet() -> object:
    m = KaryRandomizedResponse(epsilon=0.5, words=WORDS)
    return audit_text(m, vocab=_word_vocab(WORDS), pairs=6, strategy="random", samples=5_000, seed=3)


def test_a_violation_is_one_sentence_with_the_worst_pair_and_its_number() -> None:
    m = OverclaimedRandomizedResponse(epsilon=1.0, words=WORDS[:6])  # samples at 3ε, claims ε
    r = audit_text(m, vocab=_word_vocab(WORDS[:6]), pairs=5, strategy="random", samples=20_000, seed=1)
    assert r.verdict == "violates"
    text = headline(r)
    viol = [p for p in r.pairs if p.violates]
    w = max(viol, key=lambda p: (p.ratio, p.lower_bound))
    assert text == (
        f"Violates its claim: {len(viol)} of {len(r.pairs)} pairs lose more privacy than claimed; for "
        f"({w.x}, {w.x_prime}) the loss is at least {w.lower_bound:.3g} nats where {w.claimed_bound:.3g} "
        "is claimed (95% confidence)."
    )


def test_no_violation_names_the_closest_pair_and_never_says_private(quiet) -> None:  # type: ignore[no-untyped-def]
    assert quiet.verdict == "not-detected"
    text = headline(quiet)
    assert text.startswith(f"No violation detected by this test: none of the {len(quiet.pairs)} pairs")
    assert text.endswith("this does not show the mechanism is private.")
    w = max(quiet.pairs, key=lambda p: (p.ratio, p.lower_bound))
    assert f"({w.x}, {w.x_prime}), loses at least {w.lower_bound:.3g} nats" in text


def test_infinities_in_the_pairs_table_say_what_they_mean(quiet) -> None:  # type: ignore[no-untyped-def]
    p0, p1, p2 = quiet.pairs[:3]
    pairs = [
        dataclasses.replace(p0, empirical_epsilon=math.inf, direction="x>x'", violates=False),
        dataclasses.replace(p1, empirical_epsilon=math.inf, direction="x'>x", exact_epsilon=math.inf),
        dataclasses.replace(p2, claimed_bound=math.inf, violates=False),
    ]
    result = dataclasses.replace(quiet, pairs=pairs)
    shown = pairs_in_words(result)
    assert list(shown.columns[3:7]) == ["claimed bound", "lower bound (95%)", "violates", "point estimate ε̂"]
    assert list(shown["point estimate ε̂"])[:2] == ["∞ (never from x′)", "∞ (never from x)"]
    assert shown["violates"].iloc[0] == "no"
    assert shown["exact loss"].iloc[1] == "∞ (an output only one word gives)"
    assert shown["claimed bound"].iloc[2] == "∞ (not covered by the claim)"
    assert not shown.astype(str).apply(lambda c: c.str.contains("inf", case=False)).any().any()
    # the finite numbers to four digits, and the downloads keep the numbers
    assert shown["lower bound (95%)"].iloc[0] == f"{p0.lower_bound:.4g}"
    assert pairs_table(result)["empirical ε̂"].iloc[0] == math.inf
    # an infinite claim does not stretch the figure's axes
    fig = textaudit_figure(result)
    assert math.isfinite(fig.layout.xaxis.range[1]) and fig.layout.height == FIGURE_HEIGHT
