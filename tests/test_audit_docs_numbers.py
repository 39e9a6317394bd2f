"""Issue 11: every audit number the README and docs/audit.md show comes from the command they
give next to it. Each command is run here and the quoted figure compared with its output."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from tests.conftest import Cli

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
AUDIT_MD = " ".join((ROOT / "docs" / "audit.md").read_text(encoding="utf-8").split())


def _argv(command: str) -> list[str]:
    """The arguments of a command as the docs print it."""
    return shlex.split(command)[3:]  # drop "python -m dpcore"


A = "python -m dpcore audit --mechanism "
MC = " --method mc --trials 1e6 --seed 0 --json"
CASES = [
    # (command as printed in the docs, JSON key, quoted value, format)
    (A + "adept --dim 128 --epsilon 1 --json", "empirical_epsilon", "13.7432", ".4f"),
    (A + "copy --dim 8 --epsilon 1" + MC, "lower_bound", "12.3380", ".4f"),
    (A + "dptext-resample --dim 32 --epsilon 1" + MC, "lr_lower_bound", "10.8806", ".4f"),
    (A + "dptext-resample --dim 32 --epsilon 1" + MC, "verdict_lower_bound", "10.7079", ".4f"),
]


@pytest.mark.parametrize(("command", "key", "quoted", "fmt"), CASES)
def test_audit_md_numbers_come_from_their_commands(
    cli: Cli, command: str, key: str, quoted: str, fmt: str
) -> None:
    assert command.replace("python -m dpcore ", "") in AUDIT_MD or command in AUDIT_MD
    assert quoted in AUDIT_MD
    d = cli(_argv(command)).json()
    assert format(d[key], fmt) == quoted


def test_readme_adept_number(cli: Cli) -> None:
    assert A + "adept --dim 128 --epsilon 1 --json" in README
    d = cli(_argv(A + "adept --dim 128 --epsilon 1 --json")).json()
    assert f"{d['empirical_epsilon']:.3f}" == "13.743" and "13.743" in README


def test_laplace_numbers_and_verdict_texts(cli: Cli) -> None:
    out = cli(_argv(A + "laplace --dim 128 --epsilon 1")).ok()
    assert "empirical=0.07557" in out and "lr=0.9981" in out
    assert "majority-vote loss 0.0756 but LR loss 0.9981" in AUDIT_MD
    out = cli(_argv(A + "laplace --dim 8 --epsilon 1")).ok()
    verdict_line, observer_line = out.strip().splitlines()
    text = verdict_line.split("→ ", 1)[1].strip()
    assert f"`{text}`" in AUDIT_MD
    assert f"`{observer_line.strip()}`" in AUDIT_MD  # the observer line docs/audit.md quotes
    cmd = A + "dptext --dim 8 --epsilon 1" + MC
    assert cmd in AUDIT_MD
    d = cli(_argv(cmd)).json()
    assert d["sampler"] == "real" and f"`{d['verdict_text']}`" in AUDIT_MD


def test_readme_mc_example_runs_the_real_sampler(cli: Cli) -> None:
    cmd = A + "dptext --dims 1,2,8,32 --epsilon 1" + MC
    assert cmd in README
    rows = cli(_argv(cmd)).json()
    assert [r["sampler"] for r in rows] == ["real"] * 4
    assert all(r["verdict"] == "violates" for r in rows)


def test_tradeoff_numbers_come_from_their_commands(cli: Cli) -> None:
    """The section "What ε means" quotes TPRs at 1% and 5% FPR from the commands it shows."""
    adept = A + "adept --dim 128 --epsilon 1 --json"
    laplace = A + "laplace --dim 128 --epsilon 1 --json"
    mc = A + "laplace --dim 16 --epsilon 1 --method mc --trials 1e5 --seed 0 --json"
    for cmd in (adept, laplace, mc):
        assert cmd in AUDIT_MD
    a = cli(_argv(adept)).json()["tpr_at_fpr"]
    assert [f"{e['tpr']:.6f}" for e in a] == ["1.000000", "1.000000"]
    assert [f"{e['claim_ceiling']:.4f}" for e in a] == ["0.0272", "0.1359"]
    assert "probability 1.000000" in AUDIT_MD and "most 0.0272 (and 0.1359)" in AUDIT_MD
    assert all(e["exceeds_claim"] for e in a)
    lap = cli(_argv(laplace)).json()["tpr_at_fpr"]
    assert f"reaches {lap[0]['tpr']:.4f} at 1% and {lap[1]['tpr']:.4f} at 5%" in AUDIT_MD
    e = cli(_argv(mc)).json()["tpr_at_fpr"][0]
    quoted = (
        f"the TPR at 1% FPR is {e['tpr']:.4f}, between {e['lower']:.4f} and {e['upper']:.4f} at "
        f"confidence 0.95, where the exact value is {e['exact_tpr']:.4f}"
    )
    assert quoted in AUDIT_MD
