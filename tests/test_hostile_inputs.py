"""The hostile-input matrix (issue 6): bad input through the CLI, the API and the dashboard.

Every bad input must give one clear message (CLI: exit status 2 and exactly one stderr line
starting ``dpcore: error:``; API: a :class:`DPCoreError`; pages: ``st.error``/``st.warning``
and no exception), never hang, and never leave a partial output file. ``docs/hostile-inputs.md``
lists what the user sees for each case. Inputs are kept small so the whole file runs in well
under a minute.
"""

from __future__ import annotations

import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from dpcore.validation import DPCoreError
from tests.conftest import Cli

ROOT = Path(__file__).resolve().parents[1]
APP_TIMEOUT = 90

BAD_EPSILONS = [("0", "must be > 0"), ("-1", "must be > 0"), ("nan", "got NaN"), ("inf", "must be finite"),
                ("1e308", "must be ≤ 1000")]  # fmt: skip

RTL_EMOJI = "مرحبا بالعالم the cat\nשלום עולם\n😀 the 🎉 party 👍🏽\n"


pytestmark = pytest.mark.usefixtures("clear_page_caches")


def assert_one_error_line(code: int, out: str, err: str, needle: str) -> str:
    assert code == 2, (code, err)
    assert out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("dpcore: error: "), err
    assert needle in lines[0], (needle, lines[0])
    return lines[0]


# ============================================================================================
# CLI: ε ∈ {0, −1, NaN, ∞, 1e308} for every command that takes a privacy parameter
# ============================================================================================
def _eps_commands(tmp: Path) -> dict[str, list[str]]:
    inp = tmp / "in.txt"
    inp.write_text("the cat sat\n", encoding="utf-8")
    out = str(tmp / "out.txt")
    return {
        "audit": ["audit", "--mechanism", "laplace", "--dim", "8", "--epsilon"],
        "sanitize": ["sanitize", "--mechanism", "santext", "--input", str(inp), "--output", out, "--epsilon"],
        "metrics": ["metrics", "--mechanism", "santext", "--words", "the", "--epsilon"],
        "accounting-dpnr": ["accounting", "dpnr", "--k", "768", "--epsilon"],
        "accounting-binary": ["accounting", "binary", "--int-bits", "4", "--frac-bits", "5", "--bit-epsilon"],
        "sensitivity": ["sensitivity", "--clip", "1", "--dim", "8", "--epsilon"],
    }


@pytest.mark.parametrize(("eps", "needle"), BAD_EPSILONS, ids=[e for e, _ in BAD_EPSILONS])
@pytest.mark.parametrize(
    "command", ["audit", "sanitize", "metrics", "accounting-dpnr", "accounting-binary", "sensitivity"]
)
def test_bad_epsilon_on_every_command(cli: Cli, tmp_path: Path, command: str, eps: str, needle: str) -> None:
    argv = [*_eps_commands(tmp_path)[command], eps]
    line = assert_one_error_line(*cli(argv), needle)
    assert "epsilon" in line
    assert not (tmp_path / "out.txt").exists()


# ============================================================================================
# CLI: sizes, counts, names and encodings out of range
# ============================================================================================
AUDIT = ["audit", "--mechanism", "laplace", "--epsilon", "1"]
CLI_CASES = [
    ("audit-dim-0", [*AUDIT, "--dim", "0"], "dim must be between 1 and 4,096, got 0"),
    ("audit-dim-4097", [*AUDIT, "--dim", "4097"], "dim must be between 1 and 4,096, got 4,097"),
    ("audit-dim-fraction", [*AUDIT, "--dim", "1.5"], "dim must be a whole number, got '1.5'"),
    ("audit-dim-400-digits", [*AUDIT, "--dim", "9" * 400], "dim must be a whole number"),
    ("audit-dims-range-syntax", [*AUDIT, "--dims", "1-8"], "dims must be a whole number, got '1-8'"),
    ("audit-dims-only-commas", [*AUDIT, "--dims", ",,,"], "dims must be a comma-separated list"),
    ("audit-dims-99-values", [*AUDIT, "--dims", ",".join(map(str, range(1, 100)))], "at most 64 values"),
    ("audit-trials-5", [*AUDIT, "--dim", "8", "--method", "mc", "--trials", "5"],
     "trials must be between 10 and 1,000,000,000, got 5"),
    ("audit-trials-1e12", [*AUDIT, "--dim", "8", "--method", "mc", "--trials", "1e12"],
     "trials must be between 10 and 1,000,000,000"),
    ("audit-trials-nan", [*AUDIT, "--dim", "8", "--method", "mc", "--trials", "nan"],
     "trials must be a whole number, got 'nan'"),
    ("audit-confidence-1", [*AUDIT, "--dim", "8", "--confidence", "1"], "confidence must be ≤ 0.999999"),
    ("audit-seed-negative", [*AUDIT, "--dim", "8", "--seed", "-5"], "seed must be between 0 and"),
    ("audit-text-mechanism", ["audit", "--mechanism", "santext", "--dim", "8", "--epsilon", "1"],
     "unknown mechanism 'santext'; choose one of: copy, random"),
    ("audit-empty-mechanism", ["audit", "--mechanism", "", "--dim", "8", "--epsilon", "1"],
     "unknown mechanism ''"),
    ("sanitize-vector-mechanism", ["sanitize", "--mechanism", "laplace", "--epsilon", "1", "--input", "x",
                                   "--output", "y"], "unknown text mechanism 'laplace'"),
    ("metrics-unknown-embedding", ["metrics", "--mechanism", "santext", "--embedding", "word2vec",
                                   "--epsilon", "1", "--words", "the"], "unknown embedding 'word2vec'"),
    ("metrics-no-words", ["metrics", "--mechanism", "santext", "--epsilon", "1", "--words", ",,,"],
     "--words must list at least one word"),
    ("metrics-threshold-2", ["metrics", "--mechanism", "santext", "--epsilon", "1", "--words", "the",
                             "--threshold", "2"], "threshold must lie in (0, 1], got 2"),
    ("sensitivity-clip-nan", ["sensitivity", "--clip", "nan", "--dim", "8"],
     "clip C must be a number, got NaN"),
    ("sensitivity-clip-1e308", ["sensitivity", "--clip", "1e308", "--dim", "8"], "clip C must be ≤ 1e+06"),
    ("accounting-k-1e30", ["accounting", "dpnr", "--k", "1e30", "--epsilon", "1"],
     "k (embedding dimension) must be between 1 and 1,000,000"),
    ("accounting-dropout-1.5", ["accounting", "dpnr", "--k", "8", "--epsilon", "1", "--dropout", "1.5"],
     "dropout rate μ must lie in [0, 1], got 1.5"),
    ("adept-sim-pairs-1e9", ["adept-sim", "--dims", "1,2", "--pairs", "1e9"],
     "pairs must be between 1 and 1,000,000"),
    ("adept-sim-dims-reversed", ["adept-sim", "--dims", "5-1"], "dims range '5-1' is empty (start > end)"),
    ("adept-sim-dims-100000", ["adept-sim", "--dims", "1-100000"], "dims must be between 1 and 4,096"),
    ("unknown-command", ["frobnicate"], "invalid choice: 'frobnicate'"),
    ("non-utf8-argument", ["metrics", "--mechanism", "santext", "--epsilon", "1", "--words", "\udce9,the"],
     "argument '\\xe9,the' is not valid UTF-8 text"),
]  # fmt: skip


@pytest.mark.parametrize(("argv", "needle"), [c[1:] for c in CLI_CASES], ids=[c[0] for c in CLI_CASES])
def test_cli_bad_arguments(cli: Cli, argv: list[str], needle: str) -> None:
    assert_one_error_line(*cli(argv), needle)


# ============================================================================================
# CLI: hostile files for `sanitize --input` (and bad --output); never a partial output file
# ============================================================================================
BAD_FILES = [
    ("empty", b"", "is empty"),
    ("whitespace-only", b"  \n\t\n", "is empty"),
    ("binary-NUL", b"abc\x00def\n", "looks binary (it contains NUL bytes); give UTF-8 text"),
    ("huge-10MB", b"word " * 2_000_000, "is 10.0 MB; the limit is 5 MB"),
    ("latin1-0xE9", b"caf\xe9 au lait\n", "is not UTF-8 text (bad byte at offset 3)"),
    ("utf16-BOM", "the cat\n".encode("utf-16"), "is UTF-16 text; save it as UTF-8"),
]


def _sanitize_argv(inp: Path | str, out: Path | str, *extra: str) -> list[str]:
    return ["sanitize", "--mechanism", "santext", "--epsilon", "3", "--seed", "0", "--vocab-size", "2000",
            "--input", str(inp), "--output", str(out), *extra]  # fmt: skip


@pytest.mark.parametrize(("data", "needle"), [c[1:] for c in BAD_FILES], ids=[c[0] for c in BAD_FILES])
def test_sanitize_bad_input_file_leaves_no_output(cli: Cli, tmp_path: Path, data: bytes, needle: str) -> None:
    inp, out = tmp_path / "in.txt", tmp_path / "out.txt"
    inp.write_bytes(data)
    line = assert_one_error_line(*cli(_sanitize_argv(inp, out)), needle)
    assert f"input file '{inp}'" in line
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.txt"]  # no output, no temp file


def test_sanitize_failure_keeps_an_existing_output_unchanged(cli: Cli, tmp_path: Path) -> None:
    inp, out = tmp_path / "in.txt", tmp_path / "out.txt"
    inp.write_bytes(b"caf\xe9\n")
    out.write_text("previous result\n", encoding="utf-8")
    assert_one_error_line(*cli(_sanitize_argv(inp, out)), "not UTF-8")
    assert out.read_text(encoding="utf-8") == "previous result\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.txt", "out.txt"]


@pytest.mark.parametrize(
    ("target", "needle"),
    [
        ("dir", "is a directory; give a file name"),
        ("missing-dir/out.txt", "output directory"),
        ("fifo", "exists and is not a regular file"),
    ],
    ids=["output-is-directory", "output-dir-missing", "output-is-fifo"],
)
def test_sanitize_bad_output_is_refused_before_any_work(
    cli: Cli, tmp_path: Path, target: str, needle: str
) -> None:
    # A FIFO stands in for a device such as /dev/null: never point a test at a real device
    # (without the check, os.replace would swap it for a regular file).
    inp = tmp_path / "in.txt"
    inp.write_text("the cat\n", encoding="utf-8")
    (tmp_path / "dir").mkdir()
    os.mkfifo(tmp_path / "fifo")
    assert_one_error_line(*cli(_sanitize_argv(inp, tmp_path / target)), needle)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dir", "fifo", "in.txt"]
    assert list((tmp_path / "dir").iterdir()) == []
    assert (tmp_path / "fifo").is_fifo()


def test_sanitize_input_is_a_directory(cli: Cli, tmp_path: Path) -> None:
    line = assert_one_error_line(*cli(_sanitize_argv(tmp_path, tmp_path / "o.txt")), "is not a regular file")
    assert str(tmp_path) in line and not (tmp_path / "o.txt").exists()


@pytest.mark.parametrize("oov", ["mask", "keep"])
def test_rtl_and_emoji_text_is_sanitized_per_oov_policy(cli: Cli, tmp_path: Path, oov: str) -> None:
    import json

    inp, out = tmp_path / "in.txt", tmp_path / "out.txt"
    inp.write_text(RTL_EMOJI, encoding="utf-8")
    code, stdout, err = cli(_sanitize_argv(inp, out, "--oov", oov, "--json"))
    assert code == 0, err
    counts = json.loads(stdout)["counts"]
    # Arabic (2), Hebrew (2) and emoji (😀, 🎉, 👍, skin tone 🏽) tokens are outside V.
    assert counts == {"lines": 3, "tokens": 12, "replaced": counts["replaced"], "oov": 8}
    lines = out.read_text(encoding="utf-8").split("\n")
    assert len(lines) == 4 and lines[-1] == ""  # three lines and the final newline
    if oov == "mask":
        assert lines[1] == "[UNK] [UNK]"
        assert lines[0].startswith("[UNK] [UNK] ") and "😀" not in lines[2]
    else:
        assert lines[1] == "שלום עולם"
        assert lines[0].startswith("مرحبا بالعالم ") and lines[2].startswith("😀 ")


def test_unicode_line_separators_do_not_add_lines(cli: Cli, tmp_path: Path) -> None:
    inp, out = tmp_path / "in.txt", tmp_path / "out.txt"
    inp.write_text("a\x0cb the\r\nc\u2028d\x85e\n", encoding="utf-8")
    code, _, err = cli(_sanitize_argv(inp, out))
    assert code == 0, err
    assert out.read_text(encoding="utf-8").count("\n") == 2  # two lines in, two lines out
    assert "sanitized 2 lines" in err


def test_real_subprocess_bad_file_and_non_utf8_argv(tmp_path: Path) -> None:
    inp, out = tmp_path / "in.txt", tmp_path / "out.txt"
    inp.write_bytes(b"caf\xe9\n")
    cases = [
        ([sys.executable, "-m", "dpcore", *_sanitize_argv(inp, out)], "is not UTF-8 text"),
        ([sys.executable.encode(), b"-m", b"dpcore", b"audit", b"--mechanism", b"laplace", b"--dim", b"8",
          b"--epsilon", b"\xe9"], "argument '\\xe9' is not valid UTF-8 text"),
    ]  # fmt: skip
    for argv, needle in cases:
        proc = subprocess.run(argv, capture_output=True, cwd=ROOT, timeout=60, check=False)
        err = proc.stderr.decode("utf-8", "replace")
        assert proc.returncode == 2, err
        assert proc.stdout == b""
        assert "Traceback" not in err
        lines = err.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("dpcore: error: ") and needle in lines[0], err
    assert not out.exists()


# ============================================================================================
# API
# ============================================================================================
def _vocab():
    from dpcore.text.vocab import build_vocabulary

    return build_vocabulary("glove", size=2000)


def _api_cases() -> list[tuple[str, object, str]]:
    from dpcore.accounting import dpnr_report
    from dpcore.audit import audit
    from dpcore.mechanisms import create_mechanism
    from dpcore.sensitivity import sensitivity_report
    from dpcore.text import create_text_mechanism
    from dpcore.text.sanitize import check_text, decode_text, sanitize_lines

    def santext():
        return create_text_mechanism("santext", vocab=_vocab(), epsilon=1)

    rng = np.random.default_rng(0)
    return [
        ("audit-eps-nan", lambda: audit("laplace", dim=8, epsilon=math.nan),
         "epsilon must be a number, got NaN"),
        ("audit-eps-1e308", lambda: audit("laplace", dim=8, epsilon=1e308), "epsilon must be ≤ 1000"),
        ("audit-int-as-mechanism", lambda: audit(3, dim=8, epsilon=1),
         "mechanism must be a registered name or a mechanism object, got int"),
        ("audit-None-as-mechanism", lambda: audit(None, dim=8, epsilon=1), "got NoneType"),
        ("audit-trials-inf", lambda: audit("laplace", dim=8, epsilon=1, method="mc", trials=math.inf),
         "trials must be a whole number"),
        ("audit-blackbox-too-big", lambda: audit("laplace", dim=4096, epsilon=1, method="mc", trials=1e9,
                                                 blackbox=True), "limit 2e+10"),
        ("mechanism-dim-True", lambda: create_mechanism("laplace", epsilon=1, dim=True),
         "dim must be a whole number, got True"),
        ("sample-nan-input", lambda: create_mechanism("laplace", epsilon=1, dim=2).sample(
            np.array([math.nan, 0.0]), 5, rng), "input must be finite"),
        ("sensitivity-eps-inf", lambda: sensitivity_report(1, 8, math.inf), "epsilon must be finite"),
        ("dpnr-eps-negative", lambda: dpnr_report(768, -1, 0), "epsilon must be > 0"),
        ("text-eps-inf", lambda: create_text_mechanism("santext", vocab=_vocab(), epsilon=math.inf),
         "epsilon must be finite"),
        ("text-unknown-mechanism", lambda: create_text_mechanism("SanText", vocab=_vocab(), epsilon=1),
         "unknown text mechanism 'SanText'"),
        ("sanitize-one-string", lambda: sanitize_lines("the cat", santext(), seed=0),
         "lines must be a list of strings, not one string"),
        ("sanitize-None-line", lambda: sanitize_lines(["the", None], santext(), seed=0),
         "line 2 is a NoneType, not a string"),
        ("check-text-NUL", lambda: check_text("a\x00b"), "contains NUL bytes"),
        ("decode-latin1", lambda: decode_text(b"caf\xe9", what="upload"), "upload is not UTF-8 text"),
    ]  # fmt: skip


API_IDS = [c[0] for c in _api_cases()]


@pytest.mark.parametrize("index", range(len(API_IDS)), ids=API_IDS)
def test_api_bad_input_raises_dpcore_error(index: int) -> None:
    _, call, needle = _api_cases()[index]
    with pytest.raises(DPCoreError) as info:
        call()  # type: ignore[operator]
    assert needle in str(info.value)


def test_api_rtl_and_emoji_lines_are_sanitized() -> None:
    from dpcore.text import create_text_mechanism
    from dpcore.text.sanitize import sanitize_lines

    mech = create_text_mechanism("feyisetan", vocab=_vocab(), epsilon=1000)
    res = sanitize_lines(RTL_EMOJI.splitlines(), mech, seed=0)
    assert res.lines[1] == "[UNK] [UNK]" and res.n_oov == 8
    assert res.original_tokens[2][0] == "😀" and res.sanitized_tokens[2][0] == "[UNK]"


# ============================================================================================
# Dashboard: malformed URL parameters on every page
# ============================================================================================
#: Per page: the URL keys attacked (a number, a choice and, where present, a list).
PAGE_KEYS = {
    "audit": ("pages/audit.py", ["eps", "nmin", "mechs", "seed"]),
    "audit_text": ("pages/audit_text.py", ["eps", "mech", "samples", "words"]),
    "audit_rewriter": ("pages/audit_rewriter.py", ["eps", "rw", "rewrites", "x", "dist"]),
    "rewriter_calibration": ("pages/rewriter_calibration.py", ["rw", "eps"]),
    "sensitivity": ("pages/sensitivity.py", ["clip", "n", "dists"]),
    "accounting": ("pages/accounting.py", ["k", "eps", "mu"]),
    "sanitize": ("pages/sanitize.py", ["eps", "mech", "seed", "source"]),
    "attack": ("pages/attack.py", ["p", "n", "mechs", "data"]),
}
#: Keep the costly pages small whatever else the URL says.
PAGE_BASE = {
    "audit_text": {"vsize": "500", "words": "house,car", "nn": "0"},
    "sanitize": {"vsize": "2000", "draws": "1"},
    "attack": {"vsize": "2000", "n": "10", "ntrain": "500", "ntest": "200", "attacks": "bayes-unigram"},
}
PAYLOADS = {
    "html-script": "<script>alert(1)</script>",
    "markdown-link": "[click me](https://evil.example)",
    "100k-chars": "9" * 100_000,
    "garbage-bytes": "%00%ff\x00\u202e",
}


def _page(rel: str, query: dict[str, object]) -> AppTest:
    at = AppTest.from_file(str(ROOT / rel), default_timeout=APP_TIMEOUT)
    for k, v in query.items():
        at.query_params[k] = v
    return at.run()


def _all_text(at: AppTest) -> str:
    parts = [e.value for e in (*at.warning, *at.error, *at.info, *at.success, *at.markdown, *at.caption)]
    return "\n".join(str(p) for p in parts)


#: (page, payload) pairs: every payload on every page, but only two on the slow attack page.
PAGE_PAYLOADS = [
    (page, payload)
    for page in PAGE_KEYS
    for payload in PAYLOADS
    if page != "attack" or payload in ("html-script", "markdown-link")
]


@pytest.mark.parametrize(("page", "payload"), PAGE_PAYLOADS, ids=[f"{p}-{q}" for p, q in PAGE_PAYLOADS])
def test_malformed_query_params_warn_without_echo(page: str, payload: str) -> None:
    rel, keys = PAGE_KEYS[page]
    value = PAYLOADS[payload]
    at = _page(rel, {**PAGE_BASE.get(page, {}), **dict.fromkeys(keys, value)})
    assert not at.exception
    warned = " ".join(w.value for w in at.warning)
    for key in keys:
        assert f"URL parameter `{key}` ignored: must be" in warned
    shown = _all_text(at)
    assert "evil.example" not in shown and "<script>" not in shown and "9" * 200 not in shown
    assert "could not convert" not in shown
    for key in keys:  # the URL is rewritten with valid values
        assert at.query_params[key] != value


def test_home_page_ignores_any_query_params() -> None:
    at = _page("app.py", {"x": "<script>alert(1)</script>", "eps": "nan", "page": "9" * 10_000})
    assert not at.exception
    assert "<script>" not in _all_text(at)


def test_repeated_query_keys_last_value_wins() -> None:
    ok = _page("pages/audit.py", {"eps": ["abc", "2"], "nmax": ["4096", "8"]})
    assert not ok.exception and not ok.warning
    assert ok.number_input(key="eps").value == 2.0 and ok.selectbox(key="nmax").value == 8
    bad = _page("pages/audit.py", {"eps": ["2", "abc"]})
    assert not bad.exception
    assert [w.value for w in bad.warning] == ["URL parameter `eps` ignored: must be a number in [0.01, 100]."]
    assert bad.number_input(key="eps").value == 1.0  # the default


@pytest.mark.parametrize("eps", ["0", "-1", "nan", "inf", "1e308"])
def test_bad_epsilon_in_the_url_falls_back_to_the_default(eps: str) -> None:
    at = _page("pages/sensitivity.py", {"eps": eps})
    assert not at.exception
    assert [w.value for w in at.warning] == ["URL parameter `eps` ignored: must be a number in [0.01, 100]."]
    assert at.number_input(key="eps").value == 1.0


# ============================================================================================
# Dashboard: uploads and widget values on the "Sanitize text" page
# ============================================================================================
UPLOADS = [
    ("empty", b"", "the uploaded file is empty"),
    ("binary-NUL", b"abc\x00def", "the uploaded file looks binary (it contains NUL bytes); give UTF-8 text"),
    ("latin1-0xE9", b"caf\xe9 au lait", "the uploaded file is not UTF-8 text (bad byte at offset 3)"),
    ("utf16-BOM", "the cat".encode("utf-16"), "the uploaded file is UTF-16 text; save it as UTF-8"),
    ("pdf", b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n", "the uploaded file is not UTF-8 text (bad byte at offset 10)"),
    ("huge-10MB", b"word " * 2_000_000, "the uploaded file is 10.0 MB; the limit is 0.08 MB"),
]


def _upload(data: bytes) -> AppTest:
    at = _page("pages/sanitize.py", {"source": "upload", "vsize": "2000", "mech": "santext", "draws": "1"})
    assert any("Choose a text file" in i.value for i in at.info)
    return at.file_uploader(key="upload").set_value(("f.txt", data, "text/plain")).run()


def _sanitized(at: AppTest) -> list[str]:
    return [m.value for m in at.markdown if "dp-sanitized" in m.value]


@pytest.mark.parametrize(("data", "message"), [u[1:] for u in UPLOADS], ids=[u[0] for u in UPLOADS])
def test_bad_upload_is_one_error(data: bytes, message: str) -> None:
    at = _upload(data)
    assert not at.exception
    assert [e.value for e in at.error] == [message]
    assert _sanitized(at) == [] and not at.get("plotly_chart")


def test_rtl_and_emoji_upload_is_sanitized_with_oov_greyed() -> None:
    at = _upload(RTL_EMOJI.encode("utf-8"))
    assert not at.exception and not at.error
    (html,) = _sanitized(at)
    lines = html.split("<br>")
    assert len(lines) == 3
    assert lines[1].count('title="out of vocabulary">[UNK]</span>') == 2  # the Hebrew line
    assert "8 outside it (masked as [UNK])" in " ".join(c.value for c in at.caption)


@pytest.mark.parametrize(
    "value", [0.0, -1.0, math.nan, math.inf, 1e308], ids=["0", "-1", "nan", "inf", "1e308"]
)
def test_out_of_range_epsilon_widget_value_never_reaches_dpcore(value: float) -> None:
    at = _page("pages/sanitize.py", {"vsize": "2000", "mech": "santext", "draws": "1", "source": "paste"})
    at.number_input(key="eps").set_value(value).run()
    assert not at.exception and not at.error
    eps = at.number_input(key="eps").value
    assert 0.01 <= eps <= 1000.0
    assert 0.01 <= float(at.query_params["eps"]) <= 1000.0
    assert len(_sanitized(at)) == 1
