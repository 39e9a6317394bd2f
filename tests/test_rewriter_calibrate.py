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
    meaning_reference,
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
        # both know their exact loss, which the certified bound never exceeds; SanText's keeps its
        # claim (Thm 1), the copying control's is infinite (a copy of x is never a rewrite of x′)
        assert c["lower_bound"] <= c["exact_loss"]
        assert (
            c["exact_loss"] <= c["claimed_bound"] + 1e-9
            if c["rewriter"] == "santext-words"
            else (math.isinf(c["exact_loss"]))
        )
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
        d["cells"], d["epsilons"], d["rewriters"], tpr_cap=d["tpr_reach"], confidence=d["confidence"],
        rewrites=d["rewrites_per_input"],
    )  # fmt: skip
    assert d["tpr_reach"] == pytest.approx(tpr_reach(100, 0.95))
    by = {(c["rewriter"], c["epsilon"]): c["tpr_at_fpr"]["lower"] for c in d["cells"]}
    spread = {e: abs(by[("santext-words", e)] - by[("planted:copy", e)]) for e in (1.0, 10.0)}
    best = max(spread, key=spread.get)
    assert f"nominal ε = {best:g}" in text and "SanText (every word)" in text
    # the claims first, then what was certified (the exact loss beside it), then the estimates
    cells = {c["rewriter"]: c for c in d["cells"] if c["epsilon"] == best}
    claim = f"the claim for this pair is {cells['santext-words']['claimed_bound']:.3g} nats under SanText"
    certified = "certified (100 rewrites each, 95% confidence): "
    exact = f"(exact {cells['santext-words']['exact_loss']:.3g})"
    order = [text.index(claim), text.index(certified), text.index(exact), text.index("Estimates (the best")]
    assert order == sorted(order), text
    assert "private" not in text.replace("does not show that any of them is private", "")
    assert headline([], [1.0], ["a"]) == "No rewriter was measured."


def test_text_and_json_agree_and_the_json_round_trips(small) -> None:
    d = json.loads(json.dumps(small.to_dict(), default=str))
    text = render_text(d)
    assert text.splitlines()[0] == d["headline"]
    assert text.count("SanText (every word)") >= 3 and "TPR@1%FPR" in text


def test_lm_reads_each_audits_rewrites_again_and_the_table_names_the_best_family(cli, toy_lm) -> None:  # type: ignore[no-untyped-def]
    args = ["calibrate-rewriters", "--rewriters", "santext-words", "--epsilons", "1,10", "--rewrites", "60"]
    run = cli(*args, "--lm", "--json")
    assert run.code == 0, run.err
    d = run.json()
    assert d["lm"] is True and toy_lm.prompts_scored > 0
    for c in d["cells"]:
        assert c["family"] in ("exact", "words", "chars", "side", "minilm") and c["family_title"]
        assert c["lm"]["event"].startswith("LM score") and c["lm"]["tpr_at_fpr"]["fpr"] == FPR
    # SanText at ε = 10 keeps "diabetes": the copying toy model reads it from the rewrite
    assert d["cells"][1]["lm"]["tpr_at_fpr"]["tpr"] > 0.9 and d["cells"][1]["lm"]["lower_bound"] > 0
    text = render_text(d)  # what the CLI prints without --json
    assert "the LM distinguisher's reading of the same rewrites" in text and "; LM " in text


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
        keys = (
            "claimed_bound",
            "lower_bound",
            "exact_loss",
            "similarity",
            "verdict",
            "event",
            "family",
            "samples",
        )
        for key in keys:
            want, got = b[key], a[key]
            if isinstance(want, float):
                assert got == pytest.approx(want, rel=1e-9), key
            else:
                assert json.loads(json.dumps(got, default=str)) == want, key
        assert a["tpr_at_fpr"] == pytest.approx(b["tpr_at_fpr"], rel=1e-9)
    assert shipped["meaning"] == pytest.approx(again["meaning"])
    # the LM distinguisher read every cell's rewrites again (SmolLM2: not recomputed here, minutes)
    assert shipped["lm"] is True and all(c["lm"]["tpr_at_fpr"]["fpr"] == FPR for c in shipped["cells"])
    for c in shipped["cells"]:
        t = c["lm"]["tpr_at_fpr"]
        assert 0.0 <= t["lower"] <= t["tpr"] <= t["upper"] <= 1.0
        assert c["lm"]["lower_bound"] <= c["largest_certifiable_bound"] + 1e-9
    assert {c["title"] for c in shipped["cells"] if c["rewriter"] == "dp-mlm"} == {"DP-MLM (dpcore variant)"}
    dp = [c for c in shipped["cells"] if c["rewriter"] == "dp-prompt"]
    assert all(c["parameters"]["model"] == "SmolLM2-135M-Instruct" for c in dp)
    assert all(math.isclose(c["claimed_bound"], c["epsilon"] * shipped["max_new_tokens"]) for c in dp)


def test_santext_s_exact_loss_is_the_largest_log_ratio_of_its_output_distributions() -> None:
    """The exact loss the calibration shows beside SanText's bound, recomputed another way: the
    pointwise log-probabilities of every output (``log_prob``, not the rows the method reads)."""
    import numpy as np

    rw = load_rewriter("santext-words", epsilon=10.0)
    vocab = rw.mechanism.vocab
    ys = np.arange(len(vocab))

    def word_loss(a: str, b: str) -> tuple[float, float]:
        ia, ib = (int(vocab.ids(np.asarray([w], dtype=object))[0]) for w in (a, b))
        la = rw.mechanism.log_prob(np.full(ys.size, ia), ys)
        lb = rw.mechanism.log_prob(np.full(ys.size, ib), ys)
        return float(np.max(la - lb)), float(np.max(lb - la))

    f, b = word_loss("diabetes", "cancer")
    assert rw.exact_loss(*PAIR) == pytest.approx(max(f, b), rel=1e-9)
    assert 0 < rw.exact_loss(*PAIR) <= rw.claimed_bound(*PAIR)  # Yue et al., Thm 1: ≤ ε·d
    # two changed words: each direction sums over the positions (independent draws)
    f2, b2 = word_loss("neighbour", "friend")
    two = ("my neighbour anna was diagnosed with diabetes", "my friend anna was diagnosed with cancer")
    assert rw.exact_loss(*two) == pytest.approx(max(f + f2, b + b2), rel=1e-9)
    assert rw.exact_loss(PAIR[0], PAIR[0]) == 0.0


def test_meaning_retained_is_read_between_unrelated_sentences_and_the_neighbour() -> None:
    from dpcore.models.minilm import encode_sentences
    from dpcore.rewriter.pairs import corpus_sentences

    m = meaning_reference(PAIR)
    e = encode_sentences(list(PAIR))
    assert m["ceiling"] == pytest.approx(float(e[0] @ e[1]), abs=1e-6) and 0.7 < m["ceiling"] < 0.9
    public = encode_sentences(corpus_sentences()[:10])
    some = [float(public[i] @ public[j]) for i in range(10) for j in range(i + 1, 10)]
    assert m["floor"] < 0.2 and abs(m["floor"] - sum(some) / len(some)) < 0.1  # unrelated: near 0
    assert "Lee corpus" in m["floor_of"] and m["ceiling_of"] == "x′ against x"


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
    with pytest.raises(DPCoreError, match="calibrate-rewriters --lm --save"):
        load_shipped(tmp_path / "absent.json")
