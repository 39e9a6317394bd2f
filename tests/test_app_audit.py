"""AppTest: the audit page and the landing page, including bad input through the URL."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from dpcore.viz.palette import BAD, colour

ROOT = Path(__file__).resolve().parents[1]
AUDIT = str(ROOT / "pages" / "audit.py")


pytestmark = pytest.mark.usefixtures("clear_page_caches")


def _chart(at: AppTest, key: str) -> dict | None:
    """The spec of the chart with Streamlit key ``key`` (None when it is not drawn)."""
    found = [c for c in at.get("plotly_chart") if c.proto.id.endswith(f"-{key}")]
    assert len(found) <= 1
    return json.loads(found[0].proto.spec) if found else None


def _spec(at: AppTest) -> dict:
    """The page's one audit figure (the audit page also draws its trade-off figure)."""
    charts = [c for c in at.get("plotly_chart") if not c.proto.id.endswith("-audit-tradeoff")]
    assert len(charts) == 1
    return json.loads(charts[0].proto.spec)


def _traces(spec: dict) -> list[str]:
    return [t.get("name", "") for t in spec["data"]]


def _values(v: list | dict) -> list[float]:
    """A trace's array as Plotly's JSON holds it: a list, or a typed array ``{"dtype", "bdata"}``."""
    if isinstance(v, dict):
        return np.frombuffer(base64.b64decode(v["bdata"]), dtype=np.dtype(v["dtype"])).tolist()
    return list(v)


def _legend(spec: dict) -> list[str]:
    """The legend entries a chart shows when it is first drawn."""
    return [t["name"] for t in spec["data"] if t.get("name") and t.get("showlegend", True) is not False]


def _claim_line(spec: dict) -> float:
    shapes = spec["layout"]["shapes"]
    return shapes[0]["y0"]


def test_landing_page_links_every_page() -> None:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60).run()
    assert not at.exception
    from pages._shared import PAGES

    text = " ".join(m.value for m in at.markdown)
    assert "differential privacy" in text.lower()
    assert len(PAGES) >= 2


def test_default_shows_the_paper_mechanisms() -> None:
    at = AppTest.from_file(AUDIT, default_timeout=60).run()
    assert not at.exception
    spec = _spec(at)
    names = _traces(spec)
    for m in ("copy", "random", "laplace", "adept", "dptext"):
        assert f"{m} (exact)" in names
        assert f"{m} (Monte-Carlo)" in names
    # one legend entry per mechanism (not 15): how each was measured is the line style, told in
    # one note under the title
    assert _legend(spec) == ["copy", "random", "laplace", "adept", "dptext"]
    assert "dotted: best attack" in spec["layout"]["title"]["subtitle"]["text"]
    assert any("ADePT (flawed reproduction)" in e.value for e in at.error)  # the violation banner
    # the headline, above the figure: who breaks the promise, with the numbers the figure draws, in
    # the registry's display names (issue 58: "headlines use machine ids"), never "adept's"
    assert at.main.markdown[0].value == (
        "##### In this test, ADePT and DPText break the promise of ε = 1: ADePT's privacy loss "
        "reaches 13.7 at n = 128 and DPText's privacy loss is infinite; Random and Laplace stay "
        "within it; Copy claims no privacy."
    )
    assert at.query_params["eps"] == "1"
    # the table's verdicts are words, not codes (downloads keep the codes)
    rows = at.dataframe[0].value
    shown = set(rows["Exact verdict"]) | set(rows["MC verdict"])
    assert {"violates its claim", "claims no privacy"} <= shown, shown
    assert not shown & {"violates", "no-claim", "within-claim", "not-detected"}, shown


def test_changing_epsilon_changes_the_figure() -> None:
    at = AppTest.from_file(AUDIT, default_timeout=60).run()
    before = _spec(at)
    at.number_input(key="eps").set_value(3.0).run()
    assert not at.exception
    after = _spec(at)
    assert _claim_line(before) == 1.0 and _claim_line(after) == 3.0
    lap_before = next(t for t in before["data"] if t["name"] == "laplace (exact)")["y"]
    lap_after = next(t for t in after["data"] if t["name"] == "laplace (exact)")["y"]
    assert lap_before != lap_after
    assert at.query_params["eps"] == "3"


def test_changing_mechanisms_and_turning_off_mc() -> None:
    at = AppTest.from_file(AUDIT, default_timeout=60).run()
    at.multiselect(key="mechs").set_value(["laplace", "gaussian"])
    at.toggle(key="mc").set_value(False).run()
    assert not at.exception
    names = _traces(_spec(at))
    assert "gaussian (exact)" in names and "dptext (exact)" not in names
    assert not any("Monte-Carlo" in n for n in names)
    shown = " ".join(i.value for i in at.info)
    assert "No violation detected by this test (n = 1…128, ε = 1, exact values)" in shown
    assert "does not show that they are private" in shown
    assert not at.success  # no green "verified" banner, no shield icon


def test_deep_link_reproduces_configuration() -> None:
    at = AppTest.from_file(AUDIT, default_timeout=60)
    at.query_params.update({"mechs": "dpnr,laplace", "eps": "0.5", "nmin": "4", "nmax": "16", "mc": "false"})
    at.run()
    assert not at.exception and not at.warning
    spec = _spec(at)
    dpnr = next(t for t in spec["data"] if t["name"] == "dpnr (exact)")
    assert dpnr["x"] == [4, 8, 16]
    assert _claim_line(spec) == 0.5


@pytest.mark.parametrize(
    ("params", "bad_key"),
    [
        ({"eps": "nan"}, "eps"),
        ({"eps": "-1"}, "eps"),
        ({"eps": "1e308"}, "eps"),
        ({"nmax": "5000"}, "nmax"),
        ({"trials": "1000000000000"}, "trials"),
        ({"mechs": "laplace,<script>alert(1)</script>"}, "mechs"),
        ({"seed": "-3"}, "seed"),
        ({"conf": "2"}, "conf"),
    ],
)
def test_malformed_query_params_warn_and_fall_back(params: dict, bad_key: str) -> None:
    at = AppTest.from_file(AUDIT, default_timeout=60)
    at.query_params.update(params)
    at.run()
    assert not at.exception
    assert any(f"`{bad_key}` ignored" in w.value for w in at.warning)
    assert _spec(at) and _chart(at, "audit-tradeoff")


def test_inverted_dimension_range_is_an_error_not_a_traceback() -> None:
    at = AppTest.from_file(AUDIT, default_timeout=60)
    at.query_params.update({"nmin": "64", "nmax": "8"})
    at.run()
    assert not at.exception
    assert any("must not exceed" in e.value for e in at.error)


def _mc_dims(spec: dict, mech: str) -> list[int]:
    trace = next(t for t in spec["data"] if t["name"] == f"{mech} (Monte-Carlo)")
    return [x for x, y in zip(trace["x"], trace["y"], strict=True) if y is not None]


def test_over_cap_link_from_issue_24_draws_what_fits(monkeypatch: pytest.MonkeyPatch) -> None:
    """/audit?mechs=laplace,gaussian&nmax=1024&mc=true&trials=1000000 would draw 8.19e9 values.

    It once showed only a red box. Now: the exact curves at every n, Monte-Carlo for the n that
    fit the cap, a note naming what was left out, and one click to the largest trial count at
    which every n fits. The page's cap is lowered here to 5·10⁷ draws (the link is over any cap
    the page could have; at the shipped 9·10⁸ the page draws for about 20 s): what fits, what is
    left out and the note follow from the cap the page reads.
    """
    import dpcore.limits
    import pages._shared as shared
    from dpcore.audit.runner import plan_monte_carlo

    given: list[dict] = []
    monkeypatch.setattr(shared, "download_buttons", lambda df, params, name, *, key: given.append(params))
    cap = 50_000_000
    assert cap < dpcore.limits.AUDIT_PAGE_MAX_DRAWS
    monkeypatch.setattr(dpcore.limits, "AUDIT_PAGE_MAX_DRAWS", cap)  # the page imports it on each run
    dims = [2**k for k in range(11)]
    plan = plan_monte_carlo(
        ["laplace", "gaussian"], dims, trials=1_000_000, max_draws=cap,
        trial_options=[m * 10**k for k in range(3, 8) for m in (1, 2, 5)],
    )  # fmt: skip
    assert plan.left_out and plan.mc_dims and plan.largest_trials  # the link is over the cap
    at = AppTest.from_file(AUDIT, default_timeout=120)
    at.query_params.update({"mechs": "laplace,gaussian", "nmax": "1024", "mc": "true", "trials": "1000000"})
    at.run()
    assert not at.exception and not at.error
    spec = _spec(at)
    for mech in ("laplace", "gaussian"):
        exact = next(t for t in spec["data"] if t["name"] == f"{mech} (exact)")
        assert exact["x"] == dims and None not in exact["y"]
        assert _mc_dims(spec, mech) == list(plan.mc_dims)
        band = next(t for t in spec["data"] if t["name"] == f"{mech}: CI band")
        assert None not in band["y"] and max(band["x"]) == plan.mc_dims[-1]
    assert [g["max_real_sampler_draws_per_request"] for g in given][:1] == [cap]  # the page read the cap
    (note,) = [w.value for w in at.warning]
    left = ", ".join(f"{d:,}" for d in plan.left_out)
    assert f"Monte-Carlo left out for n = {left}" in note and "8.19e+09" in note
    assert "Exact values are shown for every n" in note
    (button,) = at.button
    assert f"{plan.largest_trials:,} trials" in button.label
    rows = at.dataframe[0].value
    assert set(rows.loc[rows["n"].astype(int) > plan.mc_dims[-1], "MC ε̂"]) == {""}

    button.click().run()
    assert not at.exception and not at.warning and not at.button
    assert at.query_params["trials"] == str(plan.largest_trials)
    spec = _spec(at)
    assert _mc_dims(spec, "laplace") == dims and _mc_dims(spec, "gaussian") == dims


def test_real_sampler_cap_with_nothing_that_fits_still_draws_the_exact_curves() -> None:
    at = AppTest.from_file(AUDIT, default_timeout=60)
    at.query_params.update({"trials": "100000000", "nmax": "4096"})
    at.run()
    assert not at.exception
    assert not any("this server allows" in e.value for e in at.error)  # only the verdict banner
    names = _traces(_spec(at))
    assert "laplace (exact)" in names and not any("Monte-Carlo" in n for n in names)
    (note,) = [w.value for w in at.warning]
    assert "no dimension fits" in note and "this server allows" in note
    (button,) = at.button
    assert "trials per neighbour" in button.label


def test_monte_carlo_runs_the_real_samplers_by_default() -> None:
    at = AppTest.from_file(AUDIT, default_timeout=120)
    at.query_params.update({"mechs": "copy,laplace,dptext", "nmax": "8", "seed": "1"})
    at.run()
    assert not at.exception
    assert at.query_params["model"] == "false"
    rows = at.dataframe[0].value
    assert set(rows["Sampler run"]) == {"real"}
    (err,) = [e.value for e in at.error]
    assert "DPText (flawed reproduction)" in err and "Laplace" not in err
    assert "10,000 Monte-Carlo trials per neighbour from the real samplers, confidence 0.95" in err
    (info,) = [i.value for i in at.info]
    assert "No violation detected by this test (n = 1…8, ε = 1" in info and "for Laplace." in info
    assert "Copy claims no privacy" in info


def test_model_based_option_is_labelled_and_cross_checked() -> None:
    at = AppTest.from_file(AUDIT, default_timeout=120)
    at.query_params.update({"mechs": "laplace", "nmax": "8", "model": "true", "trials": "1000000"})
    at.run()
    assert not at.exception
    assert set(at.dataframe[0].value["Sampler run"]) == {"model-based"}
    shown = " ".join(i.value for i in at.info)
    assert "drawn from the declared probabilities (model-based)" in shown
    assert "No violation detected by this test" in shown and not at.success


def test_no_mechanism_selected_is_explained() -> None:
    at = AppTest.from_file(AUDIT, default_timeout=60).run()
    at.multiselect(key="mechs").set_value([]).run()
    assert not at.exception
    assert any("at least one mechanism" in i.value for i in at.info)


def test_landing_page_glance_figure_shows_the_librarys_exact_audit() -> None:
    """The home page's figure carries dpcore.audit's exact values, and its caption quotes them."""
    from dpcore.audit import audit

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60).run()
    assert not at.exception
    spec = _spec(at)
    assert _claim_line(spec) == pytest.approx(1.0)
    # one legend entry per mechanism, in its colour on every chart; the data traces are not in it
    assert _legend(spec) == ["laplace", "adept"]
    traces = {t["name"]: t for t in spec["data"] if t.get("customdata")}
    assert set(traces) == {"laplace (exact)", "adept (exact)"}
    assert traces["adept (exact)"]["line"]["color"] == colour("adept") != colour("laplace")
    dims = [1, 2, 4, 8, 16, 32, 64, 128]
    for mech in ("laplace", "adept"):
        t = traces[f"{mech} (exact)"]
        assert list(t["x"]) == dims
        want = [audit(mech, dim=d, epsilon=1.0, method="exact").empirical_epsilon for d in dims]
        top = max(v for v in traces["adept (exact)"]["y"])  # values above the axis top are clamped
        assert list(t["y"]) == pytest.approx([min(w, top) for w in want])
    adept_peak = audit("adept", dim=128, epsilon=1.0, method="exact").empirical_epsilon
    caption = " ".join(c.value for c in at.caption)
    assert f"reaches {adept_peak:.2f} at n = 128" in caption
    assert "stays at or below its claim in this test" in caption
    # the headline, above the figure, carries the number and the factor in plain words
    head = at.markdown[0].value
    assert f"reaches **{adept_peak:.1f}** at n = 128, {adept_peak:.0f}× its promise" in head, head
    assert "Laplace mechanism stays at or below it" in head


def test_tradeoff_figure_shows_adept_beside_laplace_and_its_numbers_go_into_the_downloads(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The observer's figure defaults to ADePT at the largest n beside Laplace, with one sentence
    before it and the symbols in "How to read this"; the widget picks another cell; the TPR at
    1% and 5% FPR (the library's exact values) and the definitions are in the downloads."""
    import pages._shared as shared
    from dpcore.audit import audit

    given: list[dict] = []
    monkeypatch.setattr(shared, "download_buttons", lambda df, params, name, *, key: given.append(params))
    at = AppTest.from_file(AUDIT, default_timeout=60)
    at.query_params.update({"mc": "false"})
    at.run()
    assert not at.exception
    spec = _chart(at, "audit-tradeoff")
    names = [t.get("name") or "" for t in spec["data"]]
    assert "adept (n = 128): 0ⁿ vs 1ⁿ: exact optimal tests" in names
    assert "laplace (n = 128): 0ⁿ vs 1ⁿ: exact optimal tests" in names
    assert "adept (n = 128): 0ⁿ vs 1ⁿ: violation (whole box outside)" in names
    assert not any(n.startswith("laplace") and "violation" in n for n in names)
    assert any("claim's ceiling, ε = 1" in n for n in names)
    assert any(m.value.startswith("If a mechanism keeps its promise") for m in at.markdown)
    assert "How to read this" in [e.label for e in at.expander]
    # the plain sentence with the numbers is on the page, not in a collapsed expander
    sentence = (
        "At n = 128, an observer who wrongly names 1ⁿ for 1 in 100 releases of 0ⁿ names it rightly "
        "100% of the time for ADePT and 1.3% of the time for Laplace; ε = 1 allows at most 2.7%."
    )
    assert any(sentence in m.value for m in at.main.markdown), [m.value for m in at.markdown]
    assert not any(sentence in m.value for e in at.expander for m in e.markdown)
    # axes chosen for the story: FPR in plain percentages down past ADePT's cross, TPR from 0% to
    # 100% with room above, so that ADePT's curve (TPR ≈ 1) is not drawn on the frame
    xaxis, yaxis = spec["layout"]["xaxis"], spec["layout"]["yaxis"]
    assert xaxis["type"] == "log" and yaxis["type"] == "linear"
    assert "1e-06" not in " ".join(xaxis["ticktext"]) and "0.0001%" in xaxis["ticktext"]
    assert yaxis["ticktext"][-1] == "100%" and yaxis["range"][0] < 0 and yaxis["range"][1] > 1.03
    cross = next(t for t in spec["data"] if "violation" in (t.get("name") or ""))
    assert cross["cliponaxis"] is False and cross["marker"]["color"] == BAD
    assert min(cross["x"]) > 10 ** xaxis["range"][0] * 1.5  # well inside the plot, not on its edge
    adept = next(t for t in spec["data"] if t.get("name", "").startswith("adept") and "exact" in t["name"])
    assert adept["line"]["color"] == colour("adept") and max(_values(adept["y"])) < yaxis["range"][1] - 0.03
    params = given[-1]["tradeoff"]
    cells = {c["mechanism"]: c for c in params["cells"]}
    assert set(cells) == {"adept", "laplace"} and "fpr" in params["definitions"]
    want = audit("adept", dim=128, epsilon=1.0).to_dict()["tpr_at_fpr"]
    assert cells["adept"]["tpr_at_fpr"] == want and all(e["exceeds_claim"] for e in want)

    at.selectbox(key="tmech").set_value("laplace").run()
    at.selectbox(key="tn").set_value(8).run()
    assert not at.exception
    names = [t.get("name") or "" for t in _chart(at, "audit-tradeoff")["data"]]
    assert "laplace (n = 8): 0ⁿ vs 1ⁿ: exact optimal tests" in names
    assert not any(n.startswith("adept") for n in names)
    cells = given[-1]["tradeoff"]["cells"]
    assert [(c["mechanism"], c["dim"]) for c in cells] == [("laplace", 8)]
    assert not any(e["exceeds_claim"] for e in cells[0]["tpr_at_fpr"])


def test_tradeoff_widget_falls_back_when_its_choice_is_gone() -> None:
    at = AppTest.from_file(AUDIT, default_timeout=60)
    at.query_params.update({"mechs": "laplace,adept", "mc": "false", "nmax": "64"})
    at.run()
    at.selectbox(key="tn").set_value(16).run()
    at.multiselect(key="mechs").set_value(["laplace"])
    at.selectbox(key="nmax").set_value(8).run()
    assert not at.exception
    assert at.selectbox(key="tmech").value == "laplace"
    assert at.selectbox(key="tn").value == 8
    assert at.query_params["tmech"] == "laplace" and at.query_params["tn"] == "8"


def test_tradeoff_cell_comes_from_the_url() -> None:
    """A shared link reproduces the trade-off figure's cell."""
    at = AppTest.from_file(AUDIT, default_timeout=60)
    at.query_params.update(
        {"mechs": "laplace,adept", "mc": "false", "nmax": "64", "tmech": "laplace", "tn": "4"}
    )
    at.run()
    assert not at.exception
    assert at.selectbox(key="tmech").value == "laplace" and at.selectbox(key="tn").value == 4
    names = [t.get("name") or "" for t in _chart(at, "audit-tradeoff")["data"]]
    assert "laplace (n = 4): 0ⁿ vs 1ⁿ: exact optimal tests" in names
