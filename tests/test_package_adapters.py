"""Published packages run as shipped in their own environments (issue 61).

The generic part (a rewriter built and run by dpcore's worker in another interpreter, the
substitutes' files) runs everywhere. The packages themselves run where their environments are
installed: ``.ci/run`` installs them (``python -m dpcore adapters install dpmlm``,
``… diffractor``, ``… preempt`` and ``… dpfusion``), so in CI a missing one fails
(:func:`tests.conftest.need`).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from dpcore.rewriter.interface import RewriterClaim
from dpcore.rewriter.package_preempt import claimed_bound, premise
from dpcore.rewriter.remote import SubprocessRewriter
from dpcore.textaudit.envs import MANAGED_ENVS, installed_env
from dpcore.textaudit.substitutes import prepare_substitutes
from dpcore.validation import DPCoreError
from dpcore.verdicts.rows import DPFUSION_PAIR, DPMLM_PAIR, PREEMPT_AGE_PAIR, PREEMPT_MONEY_PAIR
from tests.cli_errors import error_lines
from tests.conftest import VERDICTS_GROUP, Cli, CliRun, need

#: A rewriter that uses only the standard library: it appends a word drawn from the rng it is
#: handed, and one drawn from ``random``'s global state (seeded by the worker from the audit's rng).
TINY_REWRITER = """
import random

class Tiny:
    name = "tiny"

    def __init__(self, epsilon):
        self.epsilon = epsilon

    def rewrite(self, texts, rng):
        return [t + " " + rng.choice(["a", "b", "c", "d"]) + random.choice(["x", "y"]) for t in texts]

    def count_tokens(self, text):
        return len(text.split())


class Uncountable:
    name = "uncountable"

    def rewrite(self, texts, rng):
        return list(texts)


def build(epsilon, tag="t"):
    if tag == "boom":
        raise ValueError("the factory refused")
    return Tiny(epsilon)


def uncountable(epsilon):
    return Uncountable()
"""


@pytest.fixture
def tiny(tmp_path: Path) -> Path:
    path = tmp_path / "tinyrewriter.py"
    path.write_text(TINY_REWRITER, encoding="utf-8")
    return path


def _tiny(path: Path, *, unit: str = "token", target: str = "build", **params: object) -> SubprocessRewriter:
    claim = RewriterClaim(1.0, unit=unit, same_length=unit == "token")
    return SubprocessRewriter(
        python=sys.executable, target=f"{path}:{target}", epsilon=1.0, claim=claim, name="tiny", params=params
    )


# --------------------------------------------------------------------------------------------
# the generic rewriter adapter


def test_a_rewriter_in_another_interpreter_draws_from_the_rng_it_is_handed(tiny: Path) -> None:
    with _tiny(tiny) as r:
        a = r.rewrite(["one two", "three"], np.random.default_rng(7))
        b = r.rewrite(["one two", "three"], np.random.default_rng(7))
        outs = {tuple(r.rewrite(["one"] * 8, np.random.default_rng(s))) for s in range(6)}
        assert a == b and len(a) == 2 and a[0].startswith("one two ")
        assert len(outs) == 6  # different seeds, different rewrites
        assert r.count_tokens("my neighbour anna") == 3
        assert r.remote["has_count_tokens"] is True and r.remote["method"] == "rewrite"


def test_a_rewriter_in_another_interpreter_is_audited(tiny: Path) -> None:
    from dpcore.rewriter.audit import audit_rewriter

    with _tiny(tiny) as r:
        res = audit_rewriter(r, [("one two", "one three")], rewrites=120, seed=3, distinguishers=["exact"])
    d = res.to_dict()
    # the outputs carry the input verbatim: the pair is told apart on every rewrite
    assert d["verdict"] == "violates", d["verdict_text"]
    assert d["pairs"][0]["claimed_bound"] == pytest.approx(2.0)  # ε per token, 2 tokens


def test_factory_errors_and_a_per_token_claim_without_counts_are_one_line(tiny: Path) -> None:
    with pytest.raises(DPCoreError, match="the factory refused") as e:
        _tiny(tiny, tag="boom")
    assert "\n" not in str(e.value)
    with pytest.raises(DPCoreError, match="count_tokens"):
        _tiny(tiny, target="uncountable")
    with _tiny(tiny, unit="document", target="uncountable") as r:  # a per-document claim needs no counts
        assert r.rewrite(["x"], np.random.default_rng(0)) == ["x"]


def test_a_metric_claim_takes_dpcore_s_premise_and_bound_never_the_package_s(tiny: Path) -> None:
    claim = RewriterClaim(0.5, unit="token", same_length=True, metric="|x − x′|")
    kwargs = dict(python=sys.executable, target=f"{tiny}:build", epsilon=1.0, claim=claim, name="tiny")
    with pytest.raises(DPCoreError, match="claimed_bound"):
        SubprocessRewriter(**kwargs)  # type: ignore[arg-type]
    bound = lambda a, b: 0.5  # noqa: E731
    with SubprocessRewriter(**kwargs, premise=premise, claimed_bound=bound) as r:  # type: ignore[arg-type]
        assert r.premise("I am 31", "I am 32") is None and r.claimed_bound("I am 31", "I am 32") == 0.5
        assert "outside their values" in str(r.premise("I am 31", "You are 32"))


def test_the_preempt_claim_is_epsilon_times_the_distance_between_the_values() -> None:
    x, x_prime = PREEMPT_MONEY_PAIR
    assert premise(x, x_prime) is None
    assert claimed_bound(x, x_prime, epsilon=0.1) == pytest.approx(0.1)  # one dollar
    assert claimed_bound(*PREEMPT_AGE_PAIR, epsilon=0.1) == pytest.approx(0.1)  # (31, 31) → (31, 32)
    assert claimed_bound("aged 30 and 40.5", "aged 33 and 40", epsilon=2) == pytest.approx(7.0)  # 2·(3 + 0.5)
    assert "2 and 1 values" in str(premise("aged 30 and 40", "aged 30 and forty"))
    assert "outside their values" in str(premise("I paid $99", "You paid $100"))
    assert "no value" in str(premise("no numbers", "none here"))


# --------------------------------------------------------------------------------------------
# the substitutes


def test_the_nltk_substitute_is_read_by_nltk(tmp_path: Path) -> None:
    env = prepare_substitutes(("nltk-data",), tmp_path)
    assert env["HF_HUB_OFFLINE"] == "1" and Path(env["NLTK_DATA"]).is_dir()
    code = (
        "import nltk; from nltk.corpus import stopwords; "
        "print(len(stopwords.words('english')), 'was' in stopwords.words('english'), "
        "nltk.word_tokenize('my neighbour anna was diagnosed. Then she left.'))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], env={**os.environ, **env}, capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.startswith("318 True ['my', 'neighbour', 'anna', 'was', 'diagnosed', '.', 'Then'")
    with pytest.raises(DPCoreError, match="unknown substitute"):
        prepare_substitutes(("weights",), tmp_path)


def test_adapters_list_names_every_package_environment(cli: Cli) -> None:
    rows = {r["name"]: r for r in cli("adapters", "list", "--json").json()}
    assert {"mldp", "dpmlm", "diffractor", "preempt", "dpfusion"} <= set(rows)
    assert MANAGED_ENVS["dpmlm"].kind == "rewriter" and MANAGED_ENVS["dpmlm"].system_site_packages
    assert rows["dpmlm"]["requirement"] == "dpmlm==1.3.0"
    assert rows["diffractor"]["requirement"] == "dp-diffractor==0.2.1"
    assert rows["preempt"]["requirement"] == "preempt==0.1.27" and MANAGED_ENVS["preempt"].kind == "rewriter"
    assert rows["dpfusion"]["requirement"] == "dp-fusion-lib==0.1.0"
    spec = MANAGED_ENVS["dpfusion"]
    assert spec.kind == "rewriter" and spec.substitutes == ("causal-lm",)


# --------------------------------------------------------------------------------------------
# dpmlm 1.3.0 and dp-diffractor 0.2.1, where their environments are installed

X = "my neighbour anna was diagnosed with diabetes"
X_PRIME = "my neighbour anna felt diagnosed with diabetes"


def _need(name: str) -> dict:
    info = installed_env(name)
    if info is None:
        need(f"{name}'s environment is not installed: python -m dpcore adapters install {name}")
    return info


def _checked(verdicts_check: CliRun, name: str, env: str) -> dict:
    """The shipped table's check of the rewriter row ``name``, as ``verdicts --check --json`` reran it
    (one run per pytest worker, :func:`tests.conftest.verdicts_check`): its one pair's evidence."""
    _need(env)
    report = json.loads(verdicts_check.out)
    entry = {e["name"]: e for e in report["rerun"]}[name]
    assert entry["check_now"] == "violates", entry
    (pair,) = entry["evidence"]
    assert pair["violates"] and pair["reproducible"] is True, pair
    return pair


@VERDICTS_GROUP
def test_the_dpmlm_package_keeps_a_stopword_in_every_rewrite(verdicts_check: CliRun) -> None:
    # the table's check: at ε = 0.1 per token the claim for 3 tokens is 0.3 nats, and the kept
    # stopword is certified beyond it with 20 rewrites per input
    pair = _checked(verdicts_check, "dpmlm:rewrite", "dpmlm")
    assert (pair["x"], pair["x_prime"]) == DPMLM_PAIR
    assert pair["tokens"] == [3, 3] and pair["claimed_bound"] == pytest.approx(0.3)
    assert pair["event"] and "was" in json.dumps(pair["event"])
    words = [line.split() for line in pair["examples"]["x"]]
    assert words and all(w[1] == "was" for w in words)  # the stopword, released verbatim
    assert all(line.split()[1] != "felt" for line in pair["examples"]["x_prime"])  # the other word, drawn


def test_the_diffractor_package_keeps_stopwords_next_to_each_other_in_its_list(cli: Cli) -> None:
    _need("diffractor")
    d = cli("audit-text", "--mechanism", "diffractor:geometric", "--epsilon", "1", "--vocab-size", "300",
            "--words", "was,had", "--neighbors", "0", "--pairs", "1", "--samples", "200", "--seed", "0",
            "--json").json()  # fmt: skip
    pair = d["pairs"][0]
    assert {pair["x"], pair["x_prime"]} == {"was", "had"}
    # the package's own list puts the two stopwords 1 or 2 places apart: a claim of 1–2 nats,
    # while each is released verbatim every time
    assert 0 < pair["claimed_bound"] <= 3 and pair["violates"], pair
    assert d["verdict"] == "violates" and d["sanitizer"]["library"]["library"] == "dp-diffractor"


def _amounts(lines: list[str]) -> list[int]:
    return [int(m) for line in lines for m in re.findall(r"\$(\d+)", line)]


def _preempt(verdicts_check: CliRun, cli: Cli, name: str, pair: tuple[str, str]) -> dict:
    """Prεεmpt's ``name`` path on ``pair`` at its default ε = 0.1, 200 rewrites per input: the
    shipped table's check of its row where the check reruns it (one row per package, the one whose
    check was cheapest when the table was written: either of the two), else the same audit from
    the CLI. Its one pair's evidence (:func:`_checked`), whose claim is one year or one dollar: 0.1."""
    _need("preempt")
    if name in {e["name"] for e in json.loads(verdicts_check.out)["rerun"]}:
        pair_seen = _checked(verdicts_check, name, "preempt")
    else:
        args = ["--epsilon", "0.1", "--x", pair[0], "--x-prime", pair[1], "--rewrites", "200", "--seed", "0"]
        d = cli("audit-rewriter", "--rewriter", name, *args, "--json").json()
        assert d["verdict"] == "violates", d["verdict_text"]
        pair_seen = {**d["pairs"][0], "reproducible": d["contract"]["reproducible"]}
    assert (pair_seen["x"], pair_seen["x_prime"]) == pair
    assert pair_seen["claimed_bound"] == pytest.approx(0.1), pair_seen
    assert pair_seen["reproducible"] is True, pair_seen
    return pair_seen


@VERDICTS_GROUP
def test_the_preempt_package_noises_99_and_100_dollars_in_ranges_that_never_meet(
    verdicts_check: CliRun, cli: Cli
) -> None:
    pair = _preempt(verdicts_check, cli, "preempt:money", PREEMPT_MONEY_PAIR)
    assert pair["lower_bound"] > 1.0, pair
    # $99 is noised in [2, 1000), $100 in [100, 10000): 100 bins each, on grids that never meet
    a, b = _amounts(pair["examples"]["x"]), _amounts(pair["examples"]["x_prime"])
    assert a and b and max(a) < 1000 and min(b) >= 100 and not set(a) & set(b), (a, b)
    assert all(ln.startswith("I paid $") and ln.endswith(" for the tickets") for ln in pair["examples"]["x"])


@VERDICTS_GROUP
def test_the_preempt_package_shows_one_draw_for_an_age_written_twice(
    verdicts_check: CliRun, cli: Cli
) -> None:
    pair = _preempt(verdicts_check, cli, "preempt:age", PREEMPT_AGE_PAIR)
    ages = [re.findall(r"\d+", line) for line in pair["examples"]["x"]]
    assert ages and all(len(a) == 2 and a[0] == a[1] for a in ages), ages  # one draw, shown twice
    assert all(10 <= int(a[0]) < 99 for a in ages)  # drawn in the package's [10, 99] range


@VERDICTS_GROUP
def test_the_dp_fusion_package_releases_its_public_prompt_and_new_tokens(verdicts_check: CliRun) -> None:
    # The table's check of its row (20 rewrites per input): what the adapter hands the audit is the
    # package's own text, the same for the same rng (the contract's probe), never the secret.
    from dpcore.rewriter.package_dpfusion import MAX_NEW_TOKENS

    pair = _checked(verdicts_check, "dp-fusion:generate", "dpfusion")
    assert (pair["x"], pair["x_prime"]) == DPFUSION_PAIR
    assert pair["claimed_bound"] == pytest.approx(MAX_NEW_TOKENS * 0.01)
    assert pair["lower_bound"] > pair["claimed_bound"]
    outputs = pair["examples"]["x"] + pair["examples"]["x_prime"]
    for out in outputs:
        # the package returns the public prompt (the message replaced by "_") and what follows
        _, sep, new = out.partition("\nuser\n_\nassistant\n")
        assert sep and "Homburg" not in out and "1961" not in out, out  # the secret stays out
        assert len(new.split()) <= MAX_NEW_TOKENS  # a word takes at least one token


def test_a_package_whose_environment_is_missing_says_how_to_install_it(
    cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DPCORE_CACHE_DIR", str(tmp_path / "empty-cache"))
    status, _, err = cli("audit-rewriter", "--rewriter", "dpmlm:rewrite", "--epsilon", "1", "--x", X,
                         "--x-prime", X_PRIME, "--rewrites", "20")  # fmt: skip
    lines = error_lines(err)
    assert status == 2 and len(lines) == 1 and "adapters install dpmlm" in lines[0], err
    status, _, err = cli("audit-text", "--mechanism", "diffractor:geometric", "--epsilon", "1",
                         "--vocab-size", "300", "--words", "was,had")  # fmt: skip
    lines = error_lines(err)
    assert status == 2 and len(lines) == 1 and "adapters install diffractor" in lines[0], err
    status, _, err = cli("audit-rewriter", "--rewriter", "preempt:money", "--epsilon", "0.1",
                         "--x", "I paid $99", "--x-prime", "I paid $100", "--rewrites", "20")  # fmt: skip
    lines = error_lines(err)
    assert status == 2 and len(lines) == 1 and "adapters install preempt" in lines[0], err
    assert json.dumps(lines)  # plain strings
