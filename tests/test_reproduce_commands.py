"""Every page's "reproduce this" command gives the page's numbers (issue 37, item 7).

Each case runs a page headless (Streamlit's ``AppTest``) with small settings, reads the command
the page shows (its ``st.code`` element), runs that exact command in this process through
:func:`dpcore.cli.main` (adding ``--json``, the CLI's machine-readable output) and compares the
CLI's numbers with the page's:

- ``audit_text`` (words, the screen, random pairs): the verdict, and per pair the words, the
  point estimate ε̂, the lower bound and whether it violates its claim (as shown: 4 digits);
- ``sanitize``: draw 1's sanitized lines and its counts (tokens, replaced, out of vocabulary);
- ``verdicts``: an opened row's recorded command gives the row's verdict, largest lower bound ÷
  claim, violating pairs and draws.
- ``audit_rewriter`` (a live run): the pair, the verdict, the lower bound and the largest
  certifiable bound (as shown: 3 digits), each test's event and counts; a shipped view shows the
  command recorded with it.
- ``rewriter_calibration`` (the shipped calibration): the command recorded in the file, which the
  CLI parses into the file's settings (rewriters, ε, rewrites, confidence, seed); it is not run
  here (11 to 50 minutes on 2 cores).

The pages that show a command are listed in :data:`PAGES_WITH_A_COMMAND`; a page that starts
showing one must join it (the last test checks the list against the pages' sources).
"""

from __future__ import annotations

import html
import json
import math
import re
import shlex
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from dpcore.reproduce import (
    audit_text_command,
    number,
    sanitize_command,
    shell_command,
)
from dpcore.textaudit.result import lower_bound_ratio
from dpcore.validation import DPCoreError
from pages._shared import escape_markdown
from tests.conftest import Cli

ROOT = Path(__file__).resolve().parents[1]
#: The pages that show a ``python -m dpcore`` command reproducing their result.
PAGES_WITH_A_COMMAND = {
    "audit_rewriter.py",
    "audit_text.py",
    "rewriter_calibration.py",
    "sanitize.py",
    "verdicts.py",
}


pytestmark = pytest.mark.usefixtures("clear_page_caches")


def _page(name: str, timeout: float, **query: str) -> AppTest:
    at = AppTest.from_file(str(ROOT / "pages" / name), default_timeout=timeout)
    for k, v in query.items():
        at.query_params[k] = v
    return at


def _shown_command(at: AppTest, subcommand: str) -> list[str]:
    """The one command the page shows, split as a shell would."""
    codes = [c.value for c in at.code if c.value.startswith("python -m dpcore ")]
    assert len(codes) == 1, [c.value for c in at.code]
    argv = shlex.split(codes[0])
    assert argv[:4] == ["python", "-m", "dpcore", subcommand], argv
    return argv


def _json_argv(argv: list[str]) -> list[str]:
    """The arguments of ``argv`` (``python -m dpcore …``) for dpcore.cli.main, with ``--json``."""
    return [*argv[3:], "--json"]


def _as_shown(shown: str, value: float) -> bool:
    """Whether the page's text ``shown`` is ``value`` as its tables write numbers: 4 significant
    digits, +∞ as "∞" with its reason in words, no number as blank."""
    if math.isnan(value):
        return shown == ""
    if math.isinf(value):
        return shown.startswith("∞" if value > 0 else "−∞")
    return shown == f"{value:.4g}"


def _num(v: Any) -> float:
    """A number of the page's table or of the CLI's JSON (∞ is ``"inf"`` there; None is NaN)."""
    return math.nan if v is None else float(v)


# ---------------------------------------------------------------------------------------------
# audit_text
# ---------------------------------------------------------------------------------------------
AUDIT_CASES = {
    # named words: a flawed sanitizer, every pair flagged
    "words": dict(
        mech="flawed:krr-overclaimed", vsize="500", words="house,car,money", nn="1", samples="5000"
    ),
    # the screen over a 500-word vocabulary, then its most suspicious pairs
    "screen": dict(
        mech="krr", eps="2", vsize="500", how="screen", budget="500000", pairs="3", samples="5000"
    ),
    # 9 named words with 2 neighbours: 54 candidates, all tested (the command names --pairs)
    "many-words": dict(
        mech="krr", eps="5", vsize="500", words="house,car,money,water,city,music,school,world,family",
        nn="2", samples="2000",
    ),
    # random pairs, another ε, confidence and seed
    "random": dict(
        mech="krr", eps="2.5", vsize="500", how="random", pairs="4", nn="0", samples="2000", conf="0.99",
        seed="11",
    ),
}  # fmt: skip


@pytest.mark.parametrize("case", list(AUDIT_CASES))
def test_audit_text_page_command_gives_the_page_numbers(case: str, cli: Cli) -> None:
    at = _page("audit_text.py", 180, **AUDIT_CASES[case]).run()
    assert not at.exception, at.exception
    argv = _shown_command(at, "audit-text")
    got = cli(_json_argv(argv)).json()

    # the verdict in full, as the page states it (Markdown-escaped, as shown)
    text = got["verdict_text"]
    full = escape_markdown(f"{text[:1].upper()}{text[1:]}.")
    shown_text = [m.value for m in at.markdown] + [a.value for a in [*at.error, *at.info, *at.warning]]
    assert any(full in v for v in shown_text), (shown_text, full)
    # the headline's worst pair and its lower bound are the CLI's
    alerts = [a.value for a in [*at.error, *at.info, *at.warning] if a.value.endswith(".")]
    tested = [p for p in got["pairs"] if not p["error"]]

    def rank(p: dict[str, Any]) -> tuple[float, float]:
        lower, claimed = _num(p["lower_bound"]), _num(p["claimed_bound"])
        return (lower_bound_ratio(lower, claimed), lower)

    worst = max(tested, key=rank)
    said = f"{_num(worst['lower_bound']):.3g} nats where {_num(worst['claimed_bound']):.3g} is claimed"
    assert any(escape_markdown(said) in a for a in alerts), (alerts, said)
    # every pair: its words, ε̂, lower bound and verdict (the page shows 4 significant digits)
    table = next(d.value for d in at.dataframe if "word x" in d.value.columns)
    lower = next(c for c in table.columns if c.startswith("lower bound"))
    shown = [
        (r["word x"], r["word x′"], r["point estimate ε̂"], r[lower], r["violates"])
        for r in table.to_dict(orient="records")
    ]
    ran = [
        (
            p["x"],
            p["x_prime"],
            _num(p["empirical_epsilon"]),
            _num(p["lower_bound"]),
            "not tested" if p["error"] else ("yes" if p["violates"] else "no"),
        )
        for p in got["pairs"]
    ]
    assert len(shown) == len(ran) > 0
    assert any(r[3] > 0 for r in ran)  # bounds above zero: the comparison is not of zeros
    for s, r in zip(shown, ran, strict=True):
        assert s[:2] == r[:2] and s[4] == r[4], (s, r)
        assert _as_shown(s[2], r[2]) and _as_shown(s[3], r[3]), (s, r)
    if case == "words":
        assert got["verdict"] == "violates"
    if case == "screen":
        assert got["screen"] is not None and "--screen-budget" in argv


def test_audit_text_download_is_the_library_record_and_the_page_choices(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import pages._shared as shared

    # AppTest keeps no download's bytes (no media server): record what the page hands over
    given: list[tuple[pd.DataFrame, dict]] = []
    monkeypatch.setattr(
        shared, "download_buttons", lambda df, params, name, *, key: given.append((df, params))
    )
    at = _page("audit_text.py", 180, **AUDIT_CASES["words"]).run()
    assert not at.exception
    ((table, params),) = given
    assert params["seed"] == 0 and params["mechanism"] == "flawed:krr-overclaimed"
    assert params["verdict"] == "violates" and params["samples"] == 5000
    assert (params["pairs_by"], params["words"], params["neighbors"]) == (
        "words",
        ["house", "car", "money"],
        1,
    )
    assert "pairs" not in params and "dpcore_version" in params  # the pairs are the results
    assert "word_scores" not in params  # the screen's arrays stay out (TextAuditResult.to_dict)
    assert len(table) == params["pairs_tested"]
    json.dumps(params, default=str)  # what download_buttons writes


def test_audit_text_command_refuses_only_the_screen_without_a_budget() -> None:
    base = dict(vocab_size=500, samples=1000, seed=0)
    ok = audit_text_command("krr", 1.0, words=["a", "b", "c"], neighbors=2, pairs=9, **base)
    assert ok[ok.index("--words") + 1] == "a,b,c" and ok[ok.index("--pairs") + 1] == "9"
    with pytest.raises(DPCoreError, match="budget"):
        audit_text_command("krr", 1.0, strategy="screen", **base)


def test_numbers_round_trip_and_commands_quote() -> None:
    for v in (1.0, 0.1, 3, 1e-5, 2.5e300, 1 / 3, 0.30000000000000004):
        assert float(number(v)) == v
    assert number(3.0) == "3" and number(0.3) == "0.3" and number(7) == "7"
    with pytest.raises(DPCoreError):
        number(math.inf)
    argv = sanitize_command("santext+", 3.0, embedding="glove", params=[("p", 0.3)], vocab_size=2000, seed=7)
    assert shlex.split(shell_command(argv)) == argv
    odd = ["python", "-m", "dpcore", "audit-text", "--words", "it's,u.s. a"]
    assert shlex.split(shell_command(odd)) == odd


# ---------------------------------------------------------------------------------------------
# sanitize
# ---------------------------------------------------------------------------------------------
TEXT = "the patient in boston was diagnosed with hiv last week\nwe loved the food but not the service"


def _lines_of(block: str) -> list[str]:
    """The sanitized lines of the page's highlighted draw 1 (tags dropped, entities decoded)."""
    inner = block.split(">", 1)[1].rsplit("</div>", 1)[0]
    return [html.unescape(re.sub(r"<[^>]+>", "", part)) for part in inner.split("<br>")]


@pytest.mark.parametrize(
    "query",
    [
        dict(mech="santext+", eps="3", seed="7", vsize="2000"),
        dict(mech="custext", eps="0.7", seed="3", vsize="2000", k="7", oov="keep"),
        dict(mech="santext", eps="2", seed="5", vsize="2000", fullvocab="1"),
    ],
    ids=["santext+", "custext-keep", "santext-full-vocabulary"],
)
def test_sanitize_page_command_gives_the_page_draw(
    query: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cli: Cli
) -> None:
    at = _page("sanitize.py", 120, source="paste", **query).run()
    at.text_area(key="text").set_value(TEXT).run()
    assert not at.exception, at.exception
    argv = _shown_command(at, "sanitize")
    assert ("--full-vocabulary" in argv) == ("fullvocab" in query)
    # the command reads input.txt and writes sanitized.txt in the working directory
    monkeypatch.chdir(tmp_path)
    (tmp_path / "input.txt").write_text(TEXT + "\n", encoding="utf-8")
    got = cli(_json_argv(argv)).json()
    lines = (tmp_path / "sanitized.txt").read_text(encoding="utf-8").splitlines()

    blocks = [m.value for m in at.markdown if "dp-sanitized" in m.value]
    assert _lines_of(blocks[-1]) == lines
    draws = next(d.value for d in at.dataframe if "Draw" in d.value.columns)
    first = draws.iloc[0]
    assert first["Sanitized text (first line; every line below)"] == lines[0]
    c = got["counts"]
    # the CLI counts an out-of-vocabulary token that became [UNK] as replaced; the page counts the
    # words the mechanism replaced, as its headline does (issue 58: the two numbers disagreed)
    masked = c["oov"] if got["parameters"]["oov_policy"] == "mask" else 0
    in_vocab, words = c["tokens"] - c["oov"], c["replaced"] - masked
    assert first[f"Words replaced (of {in_vocab})"] == words
    assert any(
        cap.value.startswith(
            f"{c['tokens']} tokens: {in_vocab} in the vocabulary, {words} of them replaced (draw 1); "
            f"{c['oov']} outside it"
        )
        for cap in at.caption
    )
    assert any(f"replaced {words} of {in_vocab} " in m.value for m in at.markdown)  # the headline
    assert got["parameters"]["seed"] == int(query["seed"])


# ---------------------------------------------------------------------------------------------
# audit_rewriter
# ---------------------------------------------------------------------------------------------
#: A live run (a button press): the planted copy rewriter, an x the shell and argparse must keep
#: whole (it starts with "-", so the command writes --x=…), another confidence and seed.
REWRITER_CASE = dict(
    rw="planted:copy", eps="0.5", x="- the cat sat on the mat", xp="- the dog sat on the mat",
    rewrites="200", dist="exact,words,chars", conf="0.9", seed="5",
)  # fmt: skip


def test_audit_rewriter_page_command_gives_the_page_numbers(cli: Cli) -> None:
    at = _page("audit_rewriter.py", 120, **REWRITER_CASE).run()
    at.button(key="run").click().run()
    assert not at.exception, at.exception
    argv = _shown_command(at, "audit-rewriter")
    got = cli(_json_argv(argv)).json()
    (pair,) = got["pairs"]
    assert (pair["x"], pair["x_prime"]) == (REWRITER_CASE["x"], REWRITER_CASE["xp"])
    assert got["verdict"] == "violates" and got["seed"] == 5 and got["confidence"] == 0.9
    text = got["verdict_text"]
    shown = [m.value for m in at.markdown]
    assert any(escape_markdown(f"{text[:1].upper()}{text[1:]}.") in v for v in shown), shown
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Lower bound on the loss"] == f"{_num(pair['lower_bound']):.3g}"
    assert metrics["Largest certifiable bound"] == f"{_num(got['largest_certifiable_bound']):.3g}"
    table = next(d.value for d in at.dataframe if "event" in d.value.columns)
    assert list(table["event"]) == [t["event"] for t in pair["tests"]]
    assert list(table["from x"]) == [t["count_x"] for t in pair["tests"]]
    assert list(table["from x′"]) == [t["count_x_prime"] for t in pair["tests"]]


def test_audit_rewriter_shipped_views_show_the_command_that_computed_them() -> None:
    from dpcore.rewriter.views import SHIPPED_PATH, VIEWS

    shipped = json.loads(SHIPPED_PATH.read_text(encoding="utf-8"))["views"]
    for key, view in VIEWS.items():
        at = _page("audit_rewriter.py", 60, rw=view["rewriter"]).run()
        assert not at.exception, at.exception
        assert _shown_command(at, "audit-rewriter") == shipped[key]["command"], key


# ---------------------------------------------------------------------------------------------
# rewriter_calibration
# ---------------------------------------------------------------------------------------------
def test_rewriter_calibration_page_shows_the_command_that_made_its_file() -> None:
    """The page shows the file's recorded command; the CLI parses it into the file's settings (the
    command is not run: the shipped calibration takes 11 to 50 minutes on 2 cores)."""
    from dpcore.cli import build_parser
    from dpcore.rewriter.calibrate import load_shipped

    doc = load_shipped()
    at = _page("rewriter_calibration.py", 60).run()
    assert not at.exception, at.exception
    argv = _shown_command(at, "calibrate-rewriters")
    assert argv == doc["command"]
    args = build_parser().parse_args(argv[3:])
    assert args.rewriters.split(",") == doc["rewriters"]
    assert [float(e) for e in args.epsilons.split(",")] == doc["epsilons"]
    assert int(args.rewrites) == doc["rewrites_per_input"]
    assert float(args.confidence) == doc["confidence"] and int(args.seed) == doc["seed"]
    assert int(args.max_new_tokens) == doc["max_new_tokens"]


# ---------------------------------------------------------------------------------------------
# verdicts
# ---------------------------------------------------------------------------------------------
def test_verdicts_page_command_gives_the_rows_record(cli: Cli) -> None:
    """The verdict page shows an opened row's recorded ``audit-text`` command; run here, it gives
    the row's verdict, its largest lower bound ÷ claim, its violating pairs and its draws (the
    shipped file's quickest control, a fixed setting: seconds)."""
    from dpcore.verdicts.document import load_shipped, verdict_of

    doc = load_shipped()
    row = min(
        (r for r in doc["rows"] if r["group"] == "control" and r["status"] == "ran"),
        key=lambda r: r["seconds"],
    )
    at = _page("verdicts.py", 60, row=row["name"]).run()
    assert not at.exception, at.exception
    argv = _shown_command(at, "audit-text")
    got = cli(_json_argv(argv)).json()
    audit = row["audit"]
    assert got["verdict"] == verdict_of(row) == "violates"
    assert got["max_lower_bound_ratio"] == audit["max_lower_bound_ratio"]
    assert sum(bool(p["violates"]) for p in got["pairs"]) == audit["violating_pairs_total"]
    assert got["samples_drawn"] == audit["samples_drawn"]


# ---------------------------------------------------------------------------------------------
# Which pages show a command
# ---------------------------------------------------------------------------------------------
def test_every_page_that_shows_a_command_is_tested_and_builds_it_with_the_library() -> None:
    for page in sorted((ROOT / "pages").glob("*.py")):
        src = page.read_text(encoding="utf-8")
        shows = "st.code(" in src
        assert shows == (page.name in PAGES_WITH_A_COMMAND), page.name
        if shows:  # the command comes from dpcore.reproduce, never from the page
            assert "from dpcore.reproduce import" in src and "shell_command(" in src, page.name
            assert "shlex" not in src and '"--' not in src, page.name


def test_docstring_examples() -> None:
    import doctest

    import dpcore.reproduce

    assert doctest.testmod(dpcore.reproduce).failed == 0
