"""Declared rows never hide data (issue 38, item 4).

An exact k-RR subclass that keeps dpcore's declaration (``exact = True``, the inherited
``log_prob_row``) but whose sampler carries the *thin* flaw of docs/audit-text.md ("Scores on all
outputs"): one word spreads 95% of its mass uniformly over a random 10% of V, at |V| = 20,000.
Each flawed output has probability 4.75·10⁻⁴ against the declared 5·10⁻⁵, too little for the
declaration test on the screen's 1,000 draws per word, so the declaration *agrees* and stage 2
gets the declared rows. The events planned from them (k-RR's rows rank x itself first, which the
flawed word almost never outputs) never see the flaw; the event selected on the first half of the
flawed word's own draws does, and it is kept.

Before the fix, stage 2 tested only the planned events when a declaration agreed, and this
sanitizer was ``not-detected`` at seeds 0–3 (the same sampler without a declaration:
``violates``, ``tests/test_textaudit_pooled.py::test_thin_flaw_at_20000_is_found_by_default``).
One audit at the default settings of ``audit_text``: about 12 s on 2 cores (the screen's 2·10⁷
draws, drawn vectorised through the inherited ``sample_ids``).
"""

from __future__ import annotations

import numpy as np
import pytest

from dpcore.pairtest.budget import AlphaBudget
from dpcore.text.vocab import build_vocabulary
from dpcore.textaudit import audit_text
from tests.textaudit_helpers import ThinFlawKrr


class _DeclaredThin(ThinFlawKrr):
    """dpcore's exact k-RR, declaration and all (``sample_ids`` and ``log_prob_row`` inherited),
    except one word's sampler: 95% of its mass uniform over ``support``."""

    exact = True


@pytest.mark.slow
def test_a_declared_thin_flaw_at_20000_is_found_by_default():
    vocab = build_vocabulary("glove", size=20_000)
    rng = np.random.default_rng(2024)
    src = int(rng.integers(len(vocab)))
    support = rng.choice(len(vocab), size=len(vocab) // 10, replace=False)
    san = _DeclaredThin(epsilon=1.0, words=vocab.words, src=src, support=support)
    res = audit_text(san, vocab=vocab, seed=5)

    # the declared-rows path is the one exercised: the declaration test agreed (its smallest
    # adjusted p-value is 1.0 here), the rows gave every pair its exact loss, and stage 2 counted
    # both directions of a planned event per pair besides the selected ones (and screen outputs)
    assert res.declaration is not None and res.declaration["status"] == "agrees"
    assert res.exact_verdict == "within-claim"  # what the rows say; the draws say otherwise
    assert all(p.exact_epsilon is not None for p in res.pairs)
    n_screen = res.alpha_accounting["confirmation_tests"] - 4 * len(res.pairs)
    assert 0 <= n_screen <= len(res.pairs)
    assert res.alpha_accounting["confirmation_tests"] == AlphaBudget.confirmation_tests(
        len(res.pairs), n_screen, declared_events=True
    )

    # ... and the sampler is judged on its own draws
    assert res.verdict == "violates"
    flagged = [p for p in res.pairs if p.violates]
    assert flagged and all(vocab.words[src] in (p.x, p.x_prime) for p in flagged)
    # by the event selected from the data, of many outputs, not by one planned from k-RR's rows
    assert all(p.event_source == "selected" and p.event_size > 100 for p in flagged)
    assert not any(t["rejects"] for t in res.pooled)  # stage 2 decided it, not the pooled tests
