"""The text audit's results do not move when its code does (issue 37's golden results).

Every case of :mod:`tests.golden_audit` is run with 1 and with 2 workers and compared with its
kept result bit for bit; every kept error message must come back word for word.
"""

from __future__ import annotations

import pytest

from tests import golden_audit


@pytest.fixture(scope="module")
def vocab():
    return golden_audit.vocab()


@pytest.mark.parametrize("workers", [1, 2])
@pytest.mark.parametrize("case", golden_audit.cases())
def test_audit_result_is_the_kept_one(vocab, case, workers):
    got = golden_audit.run_case(case, vocab, workers)
    want = golden_audit.load(case, workers)
    assert sorted(got) == sorted(want)
    for key in want:
        assert got[key] == want[key], f"{case} with {workers} worker(s): {key} moved"


def test_error_messages_are_the_kept_ones(vocab):
    assert golden_audit.run_bad(vocab) == golden_audit.load_errors()


def test_golden_cases_cover_every_verdict_and_a_failing_sanitizer():
    """The kept results are not all alike: both verdicts, failures and a fitted plan are among them."""
    kept = [golden_audit.load(c, 1) for c in golden_audit.cases()]
    assert {k["verdict"] for k in kept} >= {"violates", "not-detected"}
    assert any(k["failures"] for k in kept)
    assert any(k["on_plan"] for k in kept)
    assert all(k["pairs"] for k in kept)
