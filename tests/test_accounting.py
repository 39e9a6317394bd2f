"""DPNR and binary-encoding randomized response accounting (Lai et al. 2022, appendix, corrected Theorems 1–2,
eqs. 11 and 13–19)."""

from __future__ import annotations

import json
import math
import warnings

import numpy as np
import pytest

from dpcore.accounting import (
    binary_encoding_costs,
    dpnr_dropout_curve,
    dpnr_dropout_epsilon,
    dpnr_report,
    dpnr_true_epsilon,
)
from dpcore.cli import main
from dpcore.validation import DPCoreError


# --------------------------------------------------------------------------------------------
# DPNR
# --------------------------------------------------------------------------------------------
def test_dpnr_true_epsilon_is_k_times_epsilon() -> None:
    # Lai et al. (2022): "at least 0.05 × 768 = 38.4" for BERT embeddings
    assert dpnr_true_epsilon(768, 0.05) == pytest.approx(38.4)
    assert dpnr_true_epsilon(1, 0.7) == pytest.approx(0.7)


def test_dropout_at_hand_computed_points() -> None:
    # k = 2, ε = 0.5, μ = 0.25: ln(0.75·e¹ + 0.25) = ln(2.2887113713...) = 0.8279889...
    assert dpnr_dropout_epsilon(2, 0.5, 0.25) == pytest.approx(0.8279889, abs=1e-7)
    # k = 10, ε = 0.1, μ = 0.5: ln(0.5·e + 0.5) = ln(1.8591409142...) = 0.6201145...
    assert dpnr_dropout_epsilon(10, 0.1, 0.5) == pytest.approx(0.6201145, abs=1e-7)
    # k = 3, ε = 1, μ = 0.9: ln(0.1·e³ + 0.9) = ln(2.9085536923...) = 1.0676559...
    assert dpnr_dropout_epsilon(3, 1.0, 0.9) == pytest.approx(1.0676559, abs=1e-7)


def test_dropout_end_points() -> None:
    assert dpnr_dropout_epsilon(768, 0.05, 0.0) == pytest.approx(38.4, rel=1e-15)
    assert dpnr_dropout_epsilon(768, 0.05, 1.0) == 0.0


def test_dropout_large_k_epsilon_without_overflow() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        v = dpnr_dropout_epsilon(1_000_000, 1000.0, 0.5)  # kε = 1e9: e^{kε} overflows any float
        assert math.isfinite(v)
        # (1 − μ)e^{kε} dominates: ε′ = kε + ln(1 − μ) up to e^{−kε}
        assert v == pytest.approx(1e9 + math.log(0.5), rel=1e-15)
        small_mu = dpnr_dropout_epsilon(1000, 1.0, 1e-300)
        assert small_mu == pytest.approx(1000.0)
        almost_one = dpnr_dropout_epsilon(1000, 1.0, 1.0 - 2.0**-40)  # 1 − μ = 2⁻⁴⁰ exactly
        # ln(2⁻⁴⁰·e^{1000} + μ) = 1000 − 40 ln 2 up to e^{−972}
        assert almost_one == pytest.approx(1000 - 40 * math.log(2), rel=1e-15)


def test_dropout_curve_is_monotone_and_bounded() -> None:
    mu, eps = dpnr_dropout_curve(50, 0.2, points=101)
    assert mu[0] == 0.0 and mu[-1] == 1.0 and len(eps) == 101
    assert eps[0] == pytest.approx(10.0) and eps[-1] == 0.0
    assert np.all(np.diff(eps) <= 1e-12)
    assert np.all(eps <= 10.0 + 1e-12) and np.all(eps >= 0)


def test_dropout_array_matches_scalar() -> None:
    mus = np.array([[0.0, 0.2], [0.7, 1.0]])
    arr = dpnr_dropout_epsilon(4, 0.3, mus)
    assert arr.shape == (2, 2)
    for m, v in zip(mus.ravel(), arr.ravel(), strict=True):
        assert v == pytest.approx(math.log((1 - m) * math.exp(1.2) + m), rel=1e-12)


@pytest.mark.parametrize(
    ("k", "eps", "mu"),
    [
        (0, 1, 0.5),
        (10, 0, 0.5),
        (10, -1, 0.5),
        (10, 1, -0.1),
        (10, 1, 1.1),
        (10, 1, float("nan")),
        (2.5, 1, 0),
    ],
)
def test_dpnr_bad_input(k: object, eps: object, mu: object) -> None:
    with pytest.raises(DPCoreError):
        dpnr_report(k, eps, mu)  # type: ignore[arg-type]


def test_dpnr_report() -> None:
    r = dpnr_report(768, 0.05, 0.0).to_dict()
    assert r["claimed_epsilon"] == 0.05
    assert r["true_epsilon"] == pytest.approx(38.4)
    assert r["understatement"] == pytest.approx(768)


# --------------------------------------------------------------------------------------------
# Binary encoding + randomized response
# --------------------------------------------------------------------------------------------
def test_binary_per_bit_costs_by_hand() -> None:
    rep = binary_encoding_costs(sign_bits=1, int_bits=4, frac_bits=5, bit_epsilon=0.1)
    rows = rep.rows()
    assert [r["kind"] for r in rows] == ["sign"] + ["integer"] * 4 + ["fraction"] * 5
    true = [r["place_value_epsilon"] for r in rows]
    # sign: 2^(m+1)·0.1 = 3.2; integer i: 2^(i−1)·0.1; fraction i: 2^(−i)·0.1
    expected = [3.2, 0.1, 0.2, 0.4, 0.8, 0.05, 0.025, 0.0125, 0.00625, 0.003125]
    assert true == pytest.approx(expected, rel=1e-15)
    assert rep.claimed_per_feature == pytest.approx(1.0)  # 10 bits × 0.1, every ΔB_i = 1
    assert rep.place_value_per_feature == pytest.approx(4.796875)


def test_binary_paper_setting_l10() -> None:
    # Lyu et al. (2020b) use l = 10 bits; e.g. 1 sign, 4 integer, 5 fraction bits, r = 768 features
    rep = binary_encoding_costs(int_bits=4, frac_bits=5, bit_epsilon=0.01, features=768)
    assert rep.claimed_total == pytest.approx(768 * 10 * 0.01)
    assert rep.place_value_total == pytest.approx(768 * 0.4796875)


def test_binary_integer_bits_explode_and_fraction_bits_are_overcharged() -> None:
    big = binary_encoding_costs(sign_bits=1, int_bits=20, frac_bits=0, bit_epsilon=1.0)
    assert big.place_value_per_feature == pytest.approx(2.0**21 + (2.0**20 - 1))
    frac = binary_encoding_costs(sign_bits=0, int_bits=0, frac_bits=10, bit_epsilon=1.0)
    assert frac.place_value_per_feature == pytest.approx(1 - 2.0**-10)
    assert frac.place_value_per_feature < frac.claimed_per_feature == 10.0


def test_binary_per_bit_epsilons() -> None:
    rep = binary_encoding_costs(sign_bits=1, int_bits=2, frac_bits=1, bit_epsilon=[0.5, 1.0, 2.0, 4.0])
    assert [b.place_value_epsilon for b in rep.bits] == [0.5 * 8, 1.0 * 1, 2.0 * 2, 4.0 * 0.5]
    assert rep.claimed_per_feature == 7.5


@pytest.mark.parametrize(
    "kw",
    [
        {"sign_bits": 2, "int_bits": 1, "frac_bits": 1, "bit_epsilon": 1},
        {"sign_bits": 1, "int_bits": 65, "frac_bits": 1, "bit_epsilon": 1},
        {"sign_bits": 0, "int_bits": 0, "frac_bits": 0, "bit_epsilon": 1},
        {"sign_bits": 1, "int_bits": 1, "frac_bits": 1, "bit_epsilon": 0},
        {"sign_bits": 1, "int_bits": 1, "frac_bits": 1, "bit_epsilon": [1, 2]},
        {"sign_bits": 1, "int_bits": 1, "frac_bits": 1, "bit_epsilon": "nan"},
        {"sign_bits": 1, "int_bits": -1, "frac_bits": 1, "bit_epsilon": 1},
    ],
)
def test_binary_bad_input(kw: dict) -> None:
    with pytest.raises(DPCoreError):
        binary_encoding_costs(**kw)


# --------------------------------------------------------------------------------------------
# CLI
# --------------------------------------------------------------------------------------------
def test_cli_dpnr_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["accounting", "dpnr", "--k", "2", "--epsilon", "0.5", "--dropout", "0.25", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["claimed_epsilon"] == 0.5 and out["true_epsilon"] == 1.0
    assert out["true_epsilon_dropout"] == pytest.approx(0.8279889, abs=1e-7)


def test_cli_binary_json(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["accounting", "binary", "--sign-bits", "1", "--int-bits", "4", "--frac-bits", "5"]
    assert main([*argv, "--bit-epsilon", "0.1", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["claimed_total"] == pytest.approx(1.0)
    assert out["place_value_total"] == pytest.approx(4.796875)
    assert out["exact_ldp_total"] == pytest.approx(1.0)
    assert not any(k.startswith("true") for k in out) and "true_epsilon" not in out["bits"][0]
    assert len(out["bits"]) == 10 and out["bits"][0]["equation"] == "eq. 18"


@pytest.mark.parametrize(
    "argv",
    [
        ["accounting"],
        ["accounting", "dpnr", "--k", "10", "--epsilon", "1", "--dropout", "1.5"],
        ["accounting", "dpnr", "--k", "0", "--epsilon", "1"],
        ["accounting", "dpnr", "--k", "10", "--epsilon", "inf"],
        ["accounting", "binary", "--int-bits", "100", "--frac-bits", "1", "--bit-epsilon", "1"],
        ["accounting", "binary", "--int-bits", "1", "--frac-bits", "1", "--bit-epsilon", "x"],
    ],
)
def test_cli_bad_arguments(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("dpcore: error:") and err.count("\n") == 1


def test_binary_rr_exact_ldp_equals_enumeration_and_the_sum() -> None:
    """Per-bit RR is exactly Σ ε_i-LDP over the encoded domain (closed form vs brute force)."""
    import numpy as np

    from dpcore.accounting import binary_rr_exact_ldp, binary_rr_exact_ldp_enumerated

    rng = np.random.default_rng(0)
    for b in (1, 2, 5, 8, 11):
        eps = rng.uniform(0.05, 3.0, size=b)
        assert abs(binary_rr_exact_ldp(eps) - binary_rr_exact_ldp_enumerated(eps)) < 1e-9
        assert abs(binary_rr_exact_ldp(eps) - eps.sum()) < 1e-12


def test_binary_report_shows_exact_ldp_beside_the_place_value_figure() -> None:
    from dpcore.accounting import binary_encoding_costs

    rep = binary_encoding_costs(int_bits=2, frac_bits=2, bit_epsilon=0.5, features=3)
    d = rep.to_dict()
    assert d["exact_ldp_per_feature"] == 2.5 == d["claimed_per_feature"]
    assert d["place_value_per_feature"] == 0.5 * (8 + 1 + 2 + 0.5 + 0.25)
    assert d["exact_ldp_total"] == 7.5
    assert "only the first is an LDP loss" in d["note"]
