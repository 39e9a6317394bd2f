"""The vector audit's sentences: who breaks the claimed ε and by how much, and what an observer
of one release can do, each built beside its numbers (the Privacy-loss audit page shows them).

Every mechanism is named by its registry's display name (``"adept"`` → ``"ADePT"``); every ε and
percentage is written by :mod:`dpcore.formatting`.
"""

from __future__ import annotations

import math
from typing import Any

from dpcore.formatting import epsilon_text, percent, sentence
from dpcore.mechanisms import VECTOR_MECHANISMS
from dpcore.prose import and_list

__all__ = ["display", "headline", "observer_sentence", "shown_name", "worst_loss"]


def display(m: str) -> str:
    """A mechanism's name as a sentence writes it ("adept" → "ADePT"): the registry's display name."""
    return VECTOR_MECHANISMS.display_name(m)


def shown_name(m: str) -> str:
    """A mechanism in a verdict banner: its display name, with "(flawed reproduction)" if it is one."""
    return f"{display(m)} (flawed reproduction)" if VECTOR_MECHANISMS.get(m).flawed else display(m)


def worst_loss(rows: list[dict], m: str, eps: float) -> str:
    """How far ``m`` exceeds ``eps`` in words: the largest privacy loss the figure draws for it."""
    mine = [r for r in rows if r["mechanism"] == m]
    name = display(m)
    # the majority vote's exact value, else the exact best attack's, else the certified MC bound
    for col, what in (("exact", "privacy loss"), ("exact_lr", "privacy loss under the best attack")):
        vals = [(float(r[col]), r["dim"]) for r in mine if r.get(col) is not None and not math.isnan(r[col])]
        if vals and max(vals)[0] > eps:
            v, n = max(vals)
            return (
                f"{name}'s {what} is infinite"
                if math.isinf(v)
                else f"{name}'s {what} reaches {v:.3g} at n = {n}"
            )
    vals = [(float(r["mc_verdict_lower_bound"]), r["dim"]) for r in mine if r.get("mc_verdict") == "violates"]
    if vals:
        v, n = max(vals)
        return f"{name}'s privacy loss is at least {v:.3g} at n = {n} (lower confidence bound)"
    return f"{name} exceeds it"


def headline(
    rows: list[dict], mechs: list[str], eps: float, violators: list[str], no_claim: list[str]
) -> str:
    """The page's one sentence: who breaks the claimed ε in this test, and by how much.

    Each violator's number is the largest privacy loss the figure draws for it: the majority
    vote's exact value when that exceeds the claim, else the exact likelihood-ratio attack's, else
    the Monte-Carlo lower confidence bound (the certified value). At most three are named.
    """
    within = [m for m in mechs if m not in violators and m not in no_claim]
    bad, kept, free = ([display(m) for m in ms] for ms in (violators, within, no_claim))
    if violators:
        verb = "breaks" if len(violators) == 1 else "break"
        text = f"In this test, {and_list(bad)} {verb} the promise of ε = {epsilon_text(eps)}: "
        text += and_list([worst_loss(rows, m, eps) for m in violators[:3]])
        if within:
            text += f"; {and_list(kept)} {'stays' if len(within) == 1 else 'stay'} within it"
        if no_claim:
            text += f"; {and_list(free)} {'claims' if len(no_claim) == 1 else 'claim'} no privacy"
        return text + "."
    if within:
        return (
            f"In this test, no mechanism shown exceeds its promise of ε = {epsilon_text(eps)} "
            "(passing one test is not a proof of privacy)."
        )
    verb = "claims" if len(no_claim) == 1 else "claim"
    return sentence(f"{and_list(free)} {verb} no privacy: nothing to test.")


def observer_sentence(cells: dict[str, tuple[Any, list[dict]]], dim: int, eps: float) -> str:
    """One plain sentence from the cells' TPR at 1% FPR: how often an observer who wrongly accuses
    1 in 100 releases of 0ⁿ names 1ⁿ rightly, per mechanism, against what ε allows."""
    at1 = {
        m: next((e for e in entries if abs(e["fpr"] - 0.01) < 1e-12), None)
        for m, (_, entries) in cells.items()
    }
    at1 = {m: e for m, e in at1.items() if e is not None}
    if not at1:
        return ""
    parts = [f"{percent(e['tpr'])} of the time for {display(m)}" for m, e in at1.items()]
    ceiling = percent(next(iter(at1.values()))["claim_ceiling"])
    return (
        f"At n = {dim}, an observer who wrongly names 1ⁿ for 1 in 100 releases of 0ⁿ names it rightly "
        f"{and_list(parts)}; ε = {epsilon_text(eps)} allows at most {ceiling}."
    )
