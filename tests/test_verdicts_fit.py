"""A fitted row's plan: the speed probed again at the |V| it would choose, and a probe that moves
on when the sanitizer fails on its first words."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest

from dpcore.text.vocab import build_vocabulary
from dpcore.textaudit.timing import Speed
from dpcore.verdicts import fit


def test_the_speed_is_probed_again_at_the_chosen_size(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[int] = []

    def constant(sanitizer: object, vocab: Sequence[str]) -> Speed:
        seen.append(len(vocab))
        return Speed(per_word=0.0, per_draw=1e-8, probe_seconds=0.0)

    monkeypatch.setattr(fit, "_probe", constant)
    # the pilot's screen is fitted to these fast speeds, which k-RR does not reach: a pilot of
    # 0.6 s at them, not 6 s (what the pilot measures is not this test's subject)
    monkeypatch.setattr(fit, "PILOT_MINUTES", 0.01)
    fast = fit.plan_row("krr", minutes=0.2, workers=1)
    assert fast.vocab_size == max(fit.CANDIDATE_SIZES) and seen == [300, max(fit.CANDIDATE_SIZES)]

    def nearest_word(sanitizer: object, vocab: Sequence[str]) -> Speed:  # cost ∝ |V| per draw
        return Speed(per_word=0.0, per_draw=1e-11 * len(vocab) ** 2, probe_seconds=0.0)

    monkeypatch.setattr(fit, "_probe", nearest_word)
    slow = fit.plan_row("krr", minutes=0.2, workers=1)
    assert min(fit.CANDIDATE_SIZES) < slow.vocab_size < fast.vocab_size  # at 300 it looked like 15,000
    assert slow.reaches_class and slow.estimate_seconds <= 60 * 0.2 * 1.1


@pytest.mark.parametrize(
    ("minutes", "pilot"), [(0.05, 0.05), (0.2, fit.PILOT_MINUTES), (10.0, fit.PILOT_MINUTES)]
)
def test_the_pilot_takes_at_most_the_rows_minutes(
    minutes: float, pilot: float, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The pilot's plan is fitted to PILOT_MINUTES, or to the row's minutes when they are fewer."""
    asked: list[float] = []

    class Stop(Exception):
        pass

    def first_fit(speed: Speed, size: int, mins: float, workers: int) -> None:
        asked.append(mins)
        raise Stop

    monkeypatch.setattr(fit, "fit_size", first_fit)
    with pytest.raises(Stop):
        fit.plan_row("krr", minutes=minutes, workers=1)
    assert asked == [pilot]


class _FailsOnFrequentWords:
    """A black box whose sample() raises on the 200 most frequent words."""

    name, epsilon, guarantee = "picky", 1.0, "ldp"

    def __init__(self, words: Sequence[str]) -> None:
        self.bad = set(words[:200])
        self.words = list(words)

    def sample(self, words: Sequence[str], rng: np.random.Generator) -> list[str]:
        if any(w in self.bad for w in words):
            raise ValueError("probabilities do not sum to 1")
        return [self.words[i] for i in rng.integers(0, len(self.words), len(words))]


def test_a_probe_moves_on_past_words_the_sanitizer_fails_on() -> None:
    vocab = build_vocabulary("glove", size=300)
    speed = fit._probe(_FailsOnFrequentWords(list(vocab.words)), vocab)
    assert speed.per_draw > 0


def test_a_sanitizer_that_fails_on_every_word_cannot_be_probed() -> None:
    from dpcore.validation import DPCoreError

    vocab = build_vocabulary("glove", size=300)
    s = _FailsOnFrequentWords(list(vocab.words))
    s.bad = set(vocab.words)
    with pytest.raises(DPCoreError, match="failed on every word probed"):
        fit._probe(s, vocab)
