"""dpcore.attack.plan: which (mechanism, ε, attack) cells can run, one rule for the attack CLI,
the mechanism comparison and the Attack page."""

from __future__ import annotations

from pathlib import Path

import pytest

from dpcore.attack import page_view as pv
from dpcore.attack.plan import MechanismPlan, plan_mechanism
from dpcore.cli import main
from dpcore.text import create_text_mechanism
from dpcore.text.vocab import build_vocabulary
from dpcore.validation import DPCoreError

ALL = ("bayes-unigram", "mlm", "bayes-mlm")


@pytest.fixture(scope="module")
def glove() -> object:
    return build_vocabulary("glove", size=500)


def _plan(
    name: str, eps: list[float], attacks: tuple[str, ...], vocab: object, **params: float
) -> MechanismPlan:
    return plan_mechanism(
        name, eps, attacks, lambda e: create_text_mechanism(name, vocab=vocab, epsilon=e, **params), vocab
    )


def test_an_exact_mechanism_runs_every_cell(glove: object) -> None:
    plan = _plan("santext", [3.0, 1.0], ALL, glove)
    assert plan.epsilons == (3.0, 1.0) and plan.undefined == () and plan.floor == 0.0
    assert plan.attacks == ALL and plan.bayes_reason is None
    assert not plan.contextual and not plan.refuted
    assert plan.probe.epsilon == 3.0  # built once, at the first ε
    assert plan.notes(ALL) == []


def test_a_monte_carlo_mechanism_keeps_only_the_masked_lm_attack(glove: object) -> None:
    plan = _plan("feyisetan", [1.0], ALL, glove)
    assert plan.attacks == ("mlm",)
    assert "Monte-Carlo only" in plan.bayes_reason
    assert plan.notes(ALL) == [f"**feyisetan**: no Bayesian attack. {plan.bayes_reason}."]
    assert plan.notes(("mlm",)) == []  # no Bayesian attack was asked: nothing to say


def test_epsilons_at_or_below_the_floor_are_undefined(glove: object) -> None:
    plan = _plan("truncated-gumbel", [1.0, 3.0, 1_000.0], ("bayes-unigram",), glove)
    assert plan.floor > 3.0 and plan.undefined == (1.0, 3.0) and plan.epsilons == (1_000.0,)
    assert plan.refuted and plan.probe.epsilon == 1_000.0
    notes = " ".join(plan.notes(("bayes-unigram",)))
    assert f"defined only for ε > {plan.floor:.4g}" in notes and "1, 3 skipped" in notes
    assert "refutes its published guarantee" in notes
    none = _plan("truncated-gumbel", [1.0], ("mlm",), glove)
    assert none.epsilons == () and none.probe is None and none.attacks == ("mlm",)


def test_a_contextual_mechanism_has_no_channel() -> None:
    vocab = build_vocabulary("bert-wordpiece")
    plan = _plan("dp-mlm", [50.0], ALL, vocab)
    assert plan.contextual and plan.attacks == ("mlm",)
    assert "reads the whole private line" in plan.bayes_reason


def test_unknown_names_are_refused(glove: object) -> None:
    with pytest.raises(DPCoreError, match="unknown attack 'bayes'"):
        _plan("santext", [1.0], ("bayes",), glove)
    with pytest.raises(DPCoreError):
        _plan("no-such-mechanism", [1.0], ("mlm",), glove)


def test_the_page_plans_as_the_library() -> None:
    """pages/attack.py plans through dpcore.attack.page_view.plan_view: the same cells."""
    view = pv.View(
        mechanisms=("santext", "feyisetan", "truncated-gumbel", "custext"),
        epsilons=(1.0, 3.0, 1_000.0),
        parameters=(("santext", ()), ("feyisetan", ()), ("truncated-gumbel", ()), ("custext", (("k", 5),))),
        dataset="tweets",
        sentences=5,
        attacks=ALL,
        vocab_size=2_000,
        n_train=500,
        n_test=200,
        seed=0,
    )
    res = pv.Resources()
    page, notes = pv.plan_view(res, view)
    for m, prm in view.parameters:
        vocab = res.get_vocab(view.vocab_size, pv.embedding_of(m, view.embedding))
        plan = plan_mechanism(
            m, view.epsilons, view.attacks, lambda e, m=m, prm=prm: res.mechanism(m, e, prm, 2_000), vocab
        )
        got = page[m]
        assert got["eps"] == plan.epsilons, m
        assert {*got["fast"], *got["slow"]} == set(plan.attacks), m
        assert got["utility"] == (not plan.contextual), m
        assert set(plan.notes(view.attacks)) <= set(notes), m


def test_the_attack_command_refuses_what_cannot_run(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    base = ["attack", "--vocab-size", "500", "--sentences", "5", "--seed", "0"]
    assert main([*base, "--mechanism", "feyisetan", "--epsilon", "1", "--attack", "bayes"]) == 2
    err = capsys.readouterr().err
    assert "Monte-Carlo only" in err and err.count("\n") == 1
    assert main([*base, "--mechanism", "truncated-gumbel", "--epsilons", "1,900", "--attack", "bayes"]) == 2
    err = capsys.readouterr().err
    assert "truncated-gumbel is defined only for ε >" in err and "ε = 1 given" in err
    assert main([*base, "--mechanism", "santext", "--epsilon", "3", "--attack", "bayes", "--json"]) == 0
    assert '"defense_rate"' in capsys.readouterr().out


def test_docstring_example() -> None:
    import doctest

    import dpcore.attack.plan

    assert doctest.testmod(dpcore.attack.plan).failed == 0
