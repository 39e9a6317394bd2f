"""calibrate-rewriters (dpcore.rewriter.calibrate): the table's numbers are the audit's, the
shipped view is what its command makes, and bad settings are refused clearly."""

from __future__ import annotations

import json
import math

import pytest

from dpcore.cli import main
from dpcore.rewriter.calibrate import (
    FPR,
    PAIR,
    SHIPPED_COMMAND,
    calibrate_rewriters,
    headline,
    load_shipped,
    render_text,
    tpr_reach,
)
from dpcore.rewriter.registry import load_rewriter
from dpcore.validation import DPCoreError


@pytest.fixture(scope="module")
def small():
    return calibrate_rewriters(
        rewriters=("santext-words", "planted:copy"), epsilons=(1.0, 10.0), rewrites=100
    )


def test_each_cell_holds_the_audits_numbers(small) -> None:
    d = small.to_dict()
    assert [(c["rewriter"], c["epsilon"]) for c in d["cells"]] == [
        ("santext-words", 1.0), ("santext-words", 10.0), ("planted:copy", 1.0), ("planted:copy", 10.0),
    ]  # fmt: skip
    sw = load_rewriter("santext-words", epsilon=1.0)
    for c in d["cells"]:
        t = c["tpr_at_fpr"]
        assert t["fpr"] == FPR and 0.0 <= t["lower"] <= t["tpr"] <= t["upper"] <= 1.0
        if c["rewriter"] == "santext-words":  # ε·d(diabetes, cancer), summed over the one changed word
            assert c["claimed_bound"] == pytest.approx(c["epsilon"] * sw.claimed_bound(*PAIR))
        else:  # planted:copy claims ε per document
            assert c["claimed_bound"] == pytest.approx(c["epsilon"])
        assert c["lower_bound"] <= c["largest_certifiable_bound"] + 1e-9
        assert len(c["samples"]) == 3 and all(len(s["rewrites"]) == 2 for s in c["samples"])
    lo, hi = d["cells"][0], d["cells"][1]
    # SanText at ε = 10 keeps "diabetes" almost always: one rewrite tells the sentences apart, and
    # the rewrites keep the meaning; at ε = 1 they are close to random words
    assert hi["tpr_at_fpr"]["tpr"] > 0.9 > lo["tpr_at_fpr"]["tpr"]
    assert hi["similarity"] > 0.9 > 0.5 > lo["similarity"]
    # the copy rewriter copies its input half the time (q = 0.5): caught above ε = 1
    assert d["cells"][2]["verdict"] == "violates"


def test_the_headline_reports_lower_bounds_at_the_epsilon_where_rewriters_differ_most(small) -> None:
    d = small.to_dict()
    text = d["headline"]
    assert text == headline(
        d["cells"], d["epsilons"], d["rewriters"], tpr_cap=d["tpr_reach"], confidence=d["confidence"]
    )
    assert d["tpr_reach"] == pytest.approx(tpr_reach(100, 0.95))
    by = {(c["rewriter"], c["epsilon"]): c["tpr_at_fpr"]["lower"] for c in d["cells"]}
    spread = {e: abs(by[("santext-words", e)] - by[("planted:copy", e)]) for e in (1.0, 10.0)}
    best = max(spread, key=spread.get)
    assert f"nominal ε = {best:g}" in text and "SanText (every word)" in text
    assert headline([], [1.0], ["a"]).startswith("Too few")


def test_text_and_json_agree_and_the_json_round_trips(small) -> None:
    d = json.loads(json.dumps(small.to_dict(), default=str))
    text = render_text(d)
    assert text.splitlines()[0] == d["headline"]
    assert text.count("SanText (every word)") >= 3 and "TPR@1%FPR" in text


def test_cli_text_json_and_save_agree(tmp_path, capsys) -> None:
    out = tmp_path / "cal.json"
    args = ["calibrate-rewriters", "--rewriters", "santext-words", "--epsilons", "10", "--rewrites", "60"]
    assert main([*args, "--json", "--save", str(out)]) == 0
    printed = json.loads(capsys.readouterr().out)
    saved = json.loads(out.read_text(encoding="utf-8"))
    assert printed["cells"] == saved["cells"] and saved["rewrites_per_input"] == 60
    assert main(args) == 0
    text = capsys.readouterr().out
    assert text.splitlines()[0] == saved["headline"]


@pytest.mark.parametrize(
    ("args", "match"),
    [
        (["--rewriters", "nope"], "unknown rewriter 'nope'"),
        (["--rewriters", "santext-words,santext-words"], "each rewriter once"),
        (["--epsilons", "1,x"], "--epsilons"),
        (["--epsilons", "0"], "epsilon"),
        (["--epsilons", ",".join(str(i) for i in range(1, 10))], "1 to 8 values"),
        (["--x", "a b c"], "both --x and --x-prime"),
        (["--x", "a b c", "--x-prime", "a  b c"], "two different"),
        (["--rewrites", "5"], "rewrites"),
        (["--device", "tpu"], "device"),
    ],
)
def test_bad_settings_exit_2_with_one_clear_line(args, match, capsys) -> None:
    assert main(["calibrate-rewriters", *args]) == 2
    err = capsys.readouterr().err
    assert match in err and "Traceback" not in err


def test_the_shipped_view_is_what_its_command_makes() -> None:
    shipped = load_shipped()
    assert shipped["command"] == SHIPPED_COMMAND
    assert {"santext-words", "dp-mlm", "dp-prompt"} <= set(shipped["rewriters"])
    assert len(shipped["epsilons"]) >= 3
    assert len(shipped["cells"]) == len(shipped["rewriters"]) * len(shipped["epsilons"])
    for c in shipped["cells"]:
        t = c["tpr_at_fpr"]
        assert 0.0 <= t["lower"] <= t["tpr"] <= t["upper"] <= 1.0 and c["similarity"] is not None
    # recompute the SanText cells (seconds) with the shipped settings: the same numbers
    again = calibrate_rewriters(
        rewriters=["santext-words"],
        epsilons=shipped["epsilons"],
        pair=tuple(shipped["pair"]),
        rewrites=shipped["rewrites_per_input"],
        confidence=shipped["confidence"],
        seed=shipped["seed"],
    ).to_dict()
    ship = [c for c in shipped["cells"] if c["rewriter"] == "santext-words"]
    for a, b in zip(again["cells"], ship, strict=True):
        for key in ("claimed_bound", "lower_bound", "similarity", "verdict", "event", "samples"):
            want, got = b[key], a[key]
            if isinstance(want, float):
                assert got == pytest.approx(want, rel=1e-9), key
            else:
                assert json.loads(json.dumps(got, default=str)) == want, key
        assert a["tpr_at_fpr"] == pytest.approx(b["tpr_at_fpr"], rel=1e-9)
    dp = [c for c in shipped["cells"] if c["rewriter"] == "dp-prompt"]
    assert all(c["parameters"]["model"] == "SmolLM2-135M-Instruct" for c in dp)
    assert all(math.isclose(c["claimed_bound"], c["epsilon"] * shipped["max_new_tokens"]) for c in dp)


def test_tpr_reach_is_the_bound_of_a_perfect_event_and_grows_with_the_rewrites() -> None:
    from dpcore.tradeoff import Box, tpr_at_fpr_entry

    n = 200
    box = Box.many_from_counts([0], n, [n], n, alpha=0.025, labels=["perfect"])
    direct = tpr_at_fpr_entry(box, epsilon=1.0, alpha=FPR)["lower"]
    assert tpr_reach(400, 0.95) == pytest.approx(direct)
    assert 0.3 < tpr_reach(400, 0.95) < tpr_reach(2000, 0.95) < tpr_reach(20_000, 0.95) < 1.0
    # a perfect test's point estimate is 100%: the cap is the size's, not the rewriter's
    assert tpr_reach(20_000, 0.95) > 0.95


def test_the_cli_defaults_are_the_apis() -> None:
    from dpcore.commands import calibrate_rewriters as cmd
    from dpcore.rewriter.calibrate import DEFAULT_EPSILONS, DEFAULT_REWRITERS

    assert cmd.DEFAULT_REWRITERS.split(",") == list(DEFAULT_REWRITERS)
    assert [float(e) for e in cmd.DEFAULT_EPSILONS.split(",")] == list(DEFAULT_EPSILONS)


def test_a_missing_shipped_file_says_which_command_makes_it(tmp_path) -> None:
    with pytest.raises(DPCoreError, match="calibrate-rewriters --save"):
        load_shipped(tmp_path / "absent.json")
