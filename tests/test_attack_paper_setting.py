"""The paper's Fig. 4 setting (Yue et al. 2021, §5.3): ``attack``/``utility --paper-setting`` and
``--embedding``, their refusals, and every attack row's ceiling and kept share."""

from __future__ import annotations

import pytest

from dpcore.attack import paper_setting as paper
from dpcore.cli import main
from dpcore.models.masked_lm import default_mlm_available
from tests.cli_errors import error_lines
from tests.conftest import Cli


@pytest.mark.skipif(not default_mlm_available(), reason="the shipped masked-LM attacker is not installed")
def test_paper_setting_runs_santext_plus_over_bert_at_the_papers_epsilon(cli: Cli) -> None:
    argv = ["attack", "--mechanism", "santext+", "--paper-setting", "--attack", "mlm", "--sentences", "3"]
    rows = cli([*argv, "--json"]).json()
    assert isinstance(rows, list) and [r["epsilon"] for r in rows] == list(paper.PAPER_EPSILONS)
    for r in rows:
        assert r["embedding"] == "bert" and r["vocab_size"] > 20_000  # the whole BERT vocabulary
        assert (r["p"], r["w"]) == (0.3, 0.9) and r["attack"] == "mlm"
        assert 0 < r["attacker_top1_unsanitized"] < 1  # the ceiling, on every row
        assert r["kept_share"] == pytest.approx(r["kept_by_sanitizer"] / r["tokens"])
    assert rows[0]["kept_share"] <= rows[-1]["kept_share"]  # a larger ε keeps more
    code, out, _ = cli(argv)
    assert code == 0
    assert "unsanitized (ε = ∞)  mlm: defense rate" in out and out.count("kept unchanged:") == 3


@pytest.mark.skipif(not default_mlm_available(), reason="the shipped masked-LM attacker is not installed")
def test_embedding_option_and_utility_take_the_paper_setting(cli: Cli) -> None:
    rows = cli(
        [
            "attack",
            "--mechanism",
            "santext",
            "--embedding",
            "bert",
            "--epsilon",
            "14",
            "--sentences",
            "3",
            "--attack",
            "mlm",
            "--json",
        ]
    ).json()
    assert isinstance(rows, dict) and rows["embedding"] == "bert" and rows["attack"] == "mlm"
    util = cli(
        [
            "utility",
            "--mechanism",
            "santext",
            "--paper-setting",
            "--n-train",
            "40",
            "--n-test",
            "20",
            "--json",
        ]
    ).json()
    assert isinstance(util, list) and [u["epsilon"] for u in util] == list(paper.PAPER_EPSILONS)
    assert all(u["embedding"] == "bert" for u in util)


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--mechanism", "random", "--paper-setting"], "defined for santext and santext+"),
        (["--mechanism", "santext", "--paper-setting", "--embedding", "glove"], "drop --embedding"),
        (["--mechanism", "santext", "--paper-setting", "--vocab-size", "100"], "drop --vocab-size"),
        (["--mechanism", "santext+", "--paper-setting", "--p", "0.5"], "p = 0.3; drop --p"),
        (["--mechanism", "santext", "--paper-setting", "--epsilon", "1"], "not allowed with argument"),
        (["--mechanism", "santext", "--epsilon", "1", "--embedding", "word2vec"], "unknown embedding"),
        (
            ["--mechanism", "dp-mlm", "--epsilon", "1", "--embedding", "glove"],
            "bert-wordpiece embedding only",
        ),
        (["--mechanism", "santext"], "--paper-setting is required"),
    ],
)
def test_contradicting_options_are_one_clear_line(extra: list[str], message: str, capsys) -> None:
    capsys.readouterr()
    assert main(["attack", *extra, "--sentences", "3"]) == 2
    lines = error_lines(capsys.readouterr().err)
    assert len(lines) == 1 and message in lines[0], lines


def test_is_paper_setting_needs_all_of_it() -> None:
    eps = paper.PAPER_EPSILONS
    assert paper.is_paper_setting(["santext", "santext+"], eps, "bert", {"santext+": {"p": 0.3, "w": 0.9}})
    assert paper.is_paper_setting(["santext"], [16, 12, 14], "bert")
    assert not paper.is_paper_setting(["santext"], eps, "glove")
    assert not paper.is_paper_setting(["santext", "random"], eps, "bert")
    assert not paper.is_paper_setting(["santext"], [12, 14], "bert")
    assert not paper.is_paper_setting(["santext+"], eps, "bert", {"santext+": {"p": 0.5, "w": 0.9}})
    assert not paper.is_paper_setting([], eps, "bert")
