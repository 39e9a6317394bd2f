"""The shipped verdict table (``dpcore/data/verdicts.json``): its schema, its rows, the versions it
records against what is installed, and ``verdicts --check`` on it (as CI runs it)."""

from __future__ import annotations

import json

import pytest

from dpcore.verdicts.document import SHIPPED_PATH, load_shipped, validate, verdict_of, version_problems
from dpcore.verdicts.rows import catalogue, library_version
from dpcore.verdicts.wording import headline, power_summary
from tests.conftest import VERDICTS_GROUP, CliRun

pytestmark = VERDICTS_GROUP


@pytest.fixture(scope="module")
def doc() -> dict:
    assert SHIPPED_PATH.is_file(), (
        f"{SHIPPED_PATH} is not shipped: python -m dpcore verdicts --output {SHIPPED_PATH}"
    )
    return load_shipped()


def test_schema_and_header(doc: dict) -> None:
    assert validate(doc) == []
    h = doc["header"]
    assert h["command"].startswith("python -m dpcore verdicts --minutes ")
    assert h["complete"] is True and "--only" not in h["command"]
    assert h["started"] <= h["finished"] and "cores" in h["machine"]


def test_every_row_of_the_catalogue_is_in_the_table(doc: dict) -> None:
    assert [r["name"] for r in doc["rows"]] == [s.name for s in catalogue()]


def test_recorded_versions_match_what_is_installed(doc: dict) -> None:
    diff, skipped = version_problems(doc)
    assert diff == []
    # dpcore and pyPANTERA are installed by requirements.txt: their rows are always compared
    assert "dpcore" not in skipped and "pypantera" not in skipped
    for r in doc["rows"]:
        have = library_version(r["library"])
        if have is not None and r["library_version"] is not None:
            assert r["library_version"] == have, r["name"]


def test_controls_violate_and_dpcore_mechanisms_state_their_power(doc: dict) -> None:
    rows = doc["rows"]
    controls = [r for r in rows if r["group"] == "control"]
    assert len(controls) == 4 and all(verdict_of(r) == "violates" for r in controls)
    ran = [r for r in rows if r["group"] == "dpcore" and r["status"] == "ran"]
    assert len(ran) >= 10
    for r in ran:
        assert verdict_of(r) == "not-detected", r["name"]
        p = power_summary(r)
        assert p["uniform_delta"] is not None or any(s["output_probability"] <= 1 for s in p["single_output"])
        assert "would have been caught with probability 0.9" in headline(r)
    for r in rows:
        assert "private" not in headline(r).replace("privacy", "")  # never "private"
        if r["status"] != "ran":
            assert r["why"] and "\n" not in r["why"]


def test_check_passes_on_the_shipped_file(verdicts_check: CliRun) -> None:
    """What CI checks: the controls and one row per installed library, rerun here."""
    report = json.loads(verdicts_check.out)
    assert verdicts_check.code == 0 and report["current"] is True, report["differences"]
    names = {e["name"] for e in report["rerun"]}
    assert {r["name"] for r in load_shipped()["rows"] if r["group"] == "control"} <= names


def test_the_dp_fusion_row_breaks_its_renyi_claim_and_its_check_reproduces_it(verdicts_check: CliRun) -> None:
    """DP-Fusion's claim is Rényi DP of order 2 (3 tokens at 4β each); the row's certified bound is
    on that divergence, above the claim, and ``verdicts --check`` reruns the row (issue 61)."""
    from dpcore.rewriter.package_dpfusion import MAX_NEW_TOKENS
    from dpcore.verdicts.rows import DPFUSION_PAIR

    row = next(r for r in load_shipped()["rows"] if r["name"] == "dp-fusion:generate")
    audit = row["audit"]
    assert row["status"] == "ran" and verdict_of(row) == "violates" and audit["claim_order"] == 2.0
    (pair,) = audit["pairs"]
    assert (pair["x"], pair["x_prime"]) == DPFUSION_PAIR
    assert pair["claimed_bound"] == pytest.approx(MAX_NEW_TOKENS * row["epsilon"])
    assert pair["lower_bound"] > pair["claimed_bound"] and pair["violates"], pair
    quantity = "Rényi divergence of order 2"
    assert quantity in audit["test"] and quantity in audit["verdict_text"]
    report = json.loads(verdicts_check.out)
    rerun = {e["name"]: e for e in report["rerun"]}
    assert "dp-fusion:generate" in rerun, sorted(rerun)
    assert rerun["dp-fusion:generate"]["check_now"] == "violates", rerun["dp-fusion:generate"]
