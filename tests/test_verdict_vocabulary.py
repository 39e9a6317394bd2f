"""One verdict vocabulary (issue 60): one home, the same word for the same situation in every
audit, every label from the home, and the docs' list equal to it."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from dpcore.pairtest.verdicts import (
    CODES,
    NOT_DETECTED,
    OUT_OF_REACH,
    UNTESTED,
    VERDICTS,
    VIOLATES,
    decide,
    label,
)

ROOT = Path(__file__).resolve().parents[1]


def test_the_rule_picks_one_code_per_situation() -> None:
    assert decide(flagged=True, tested=3, beyond_reach=3) == VIOLATES
    assert decide(flagged=False, tested=0, beyond_reach=0) == UNTESTED
    assert decide(flagged=False, tested=3, beyond_reach=3) == OUT_OF_REACH
    assert decide(flagged=False, tested=3, beyond_reach=2) == NOT_DETECTED
    # another test within reach (the word audit's pooled tests): the run could have flagged
    assert decide(flagged=False, tested=3, beyond_reach=3, others_in_reach=True) == NOT_DETECTED
    assert decide(flagged=False, tested=0, beyond_reach=0, others_in_reach=True) == NOT_DETECTED
    assert label("out-of-reach") == "out of reach" and label("no-such-code") == "no-such-code"


def test_every_audit_says_out_of_reach_for_a_claim_beyond_its_size() -> None:
    """The same situation, a claim above what the run's size can certify, in the vector audit, the
    word audit and the rewriter audit: the same code, and a sentence that starts with its words."""
    from dpcore.audit import audit
    from dpcore.rewriter.audit import audit_rewriter
    from dpcore.rewriter.registry import load_rewriter
    from dpcore.text.vocab import build_vocabulary
    from dpcore.textaudit import KaryRandomizedResponse, audit_text

    vocab = build_vocabulary("glove", size=50)
    vector = audit("laplace", dim=8, epsilon=20.0, method="mc", trials=1_000, seed=0)
    words = audit_text(
        KaryRandomizedResponse(epsilon=20.0, words=vocab.words),
        vocab=vocab,
        words=vocab.words[:3],
        samples=1_000,
        seed=0,
    )
    rewriter = audit_rewriter(
        load_rewriter("santext-words", epsilon=30.0),
        [("the cat sat on the mat", "the dog sat on the mat")],
        rewrites=200,
        distinguishers=("exact", "words"),
        seed=0,
    )
    for verdict, text in (
        (vector.verdict, vector.verdict_text),
        (words.verdict, words.verdict_text),
        (rewriter.verdict, rewriter.verdict_text),
    ):
        assert verdict == OUT_OF_REACH, text
        assert text.startswith(VERDICTS[OUT_OF_REACH].sentence + ":"), text
        assert "could not have shown a violation" in text and "private" not in text
    # within reach, the same audits say not-detected, never out-of-reach
    near = audit("laplace", dim=8, epsilon=1.0, method="mc", trials=100_000, seed=0)
    assert near.verdict == NOT_DETECTED


def test_every_verdict_label_in_the_library_and_pages_comes_from_the_home() -> None:
    """No module but :mod:`dpcore.pairtest.verdicts` spells a verdict's words as a string of its
    own (a second spelling is how one situation got two words)."""
    spelled = {v.label for v in VERDICTS.values()} | {v.sentence for v in VERDICTS.values()}
    spelled -= set(CODES)  # "untested" is its own code
    home = ROOT / "dpcore" / "pairtest" / "verdicts.py"
    found = []
    sources = [*ROOT.joinpath("dpcore").rglob("*.py"), *ROOT.joinpath("pages").rglob("*.py"), ROOT / "app.py"]
    for path in sources:
        if path == home:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in spelled:
                found.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.value!r}")
    assert found == []


def test_the_docs_list_every_verdict_with_its_words() -> None:
    text = (ROOT / "docs" / "verdicts.md").read_text(encoding="utf-8")
    section = text.split("## The verdict words", 1)[1].split("\n## ", 1)[0]
    rows = re.findall(r"^\| `([a-z-]+)` \| ([^|]+) \| ([^|]+) \|$", section, flags=re.M)
    assert [(c, w.strip(), m.strip()) for c, w, m in rows] == [
        (v.code, v.label, v.meaning) for v in VERDICTS.values()
    ]


@pytest.mark.parametrize("code", CODES)
def test_every_verdict_has_a_colour_of_the_verdict_role_or_the_table_says_why_not(code: str) -> None:
    """Each verdict the verdict table can show has a headline writer; each verdict an audit can
    end in has a colour in the verdicts' role."""
    from dpcore.verdicts.page_view import VERDICT_KINDS
    from dpcore.verdicts.wording import HEADLINES
    from dpcore.viz.palette import VERDICTS as COLOURS

    if code in VERDICT_KINDS:
        assert code in HEADLINES
    if code in (VIOLATES, NOT_DETECTED, OUT_OF_REACH, "within-claim", "no-claim", "premise-broken"):
        assert code in COLOURS
