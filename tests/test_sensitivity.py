"""Sensitivity geometry of ADePT (Habernal 2021, Theorem 5.1) and the violation simulation (§6)."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from scipy import optimize

import dpcore.sensitivity as sens
from dpcore.cli import main
from dpcore.sensitivity import (
    adept_pair_samples,
    adept_true_epsilon,
    adept_violation_fractions,
    clip_l1,
    clip_l2,
    dimension_grid,
    extreme_pair,
    l1_sensitivity_l1_clip,
    l1_sensitivity_l2_clip,
    parse_dims,
    sensitivity_report,
)
from dpcore.validation import DPCoreError


# --------------------------------------------------------------------------------------------
# Closed forms
# --------------------------------------------------------------------------------------------
def test_closed_forms_at_hand_computed_points() -> None:
    assert l1_sensitivity_l2_clip(1.5, 9) == pytest.approx(9.0)  # 2 · 1.5 · 3
    assert l1_sensitivity_l2_clip(1.0, 1) == pytest.approx(2.0)  # n = 1: the claim is right
    assert l1_sensitivity_l2_clip(10.0, 128) == pytest.approx(226.27416997969522)  # 20·√128
    assert l1_sensitivity_l1_clip(2.5) == 5.0
    assert adept_true_epsilon(1.0, 128) == pytest.approx(11.313708498984761)  # √128
    assert adept_true_epsilon(0.5, 16) == pytest.approx(2.0)


@pytest.mark.parametrize("n", [1, 2, 3, 7, 64, 4096])
def test_extreme_pair_lies_on_the_sphere_and_attains_2c_sqrt_n(n: int) -> None:
    c = 3.0
    x, xp = extreme_pair(c, n)
    assert np.linalg.norm(x) == pytest.approx(c, rel=1e-12)
    assert np.linalg.norm(xp) == pytest.approx(c, rel=1e-12)
    np.testing.assert_allclose(clip_l2(x, c), x)  # clipping leaves it unchanged
    assert np.abs(x - xp).sum() == pytest.approx(2 * c * math.sqrt(n), rel=1e-12)


def test_brute_force_grid_on_the_circle_n2() -> None:
    """n = 2: every pair of 720 × 720 boundary points; the max L1 distance is 2C√2."""
    c = 1.7
    theta = np.linspace(0.0, 2 * np.pi, 720, endpoint=False)
    pts = c * np.stack([np.cos(theta), np.sin(theta)], axis=1)
    d = np.abs(pts[:, None, :] - pts[None, :, :]).sum(axis=2)
    bound = l1_sensitivity_l2_clip(c, 2)
    assert d.max() <= bound * (1 + 1e-12)
    assert d.max() >= bound * (1 - 1e-4)


def test_random_points_in_the_ball_never_exceed_the_bound() -> None:
    rng = np.random.default_rng(11)
    c = 2.0
    for n in (2, 3, 5, 10):
        raw = rng.standard_normal((2, 20_000, n)) * rng.uniform(0, 3 * c, size=(2, 20_000, 1))
        x, y = clip_l2(raw[0], c), clip_l2(raw[1], c)
        assert np.all(np.linalg.norm(x, axis=1) <= c * (1 + 1e-12))
        d = np.abs(x - y).sum(axis=1)
        assert d.max() <= l1_sensitivity_l2_clip(c, n) * (1 + 1e-12)
        assert d.max() > 2 * c  # ... and the claimed 2C is exceeded for every n ≥ 2


@pytest.mark.parametrize("n", [2, 3, 4, 6])
def test_numerical_maximisation_finds_2c_sqrt_n(n: int) -> None:
    """Maximise ‖x − y‖₁ over the L2 ball by SLSQP from random starts (no theory used)."""
    c = 1.3
    rng = np.random.default_rng(n)

    def neg_l1(z: np.ndarray) -> float:
        d = z[:n] - z[n:]
        return -float(np.sum(np.sqrt(d * d + 1e-14)))

    cons = [
        {"type": "ineq", "fun": lambda z: c * c - np.dot(z[:n], z[:n])},
        {"type": "ineq", "fun": lambda z: c * c - np.dot(z[n:], z[n:])},
    ]
    best = 0.0
    for _ in range(12):
        z0 = rng.uniform(-c, c, 2 * n) / math.sqrt(n)
        res = optimize.minimize(neg_l1, z0, method="SLSQP", constraints=cons, options={"maxiter": 500})
        x, y = clip_l2(res.x[:n], c), clip_l2(res.x[n:], c)  # stay exactly feasible
        best = max(best, float(np.abs(x - y).sum()))
    bound = l1_sensitivity_l2_clip(c, n)
    assert best <= bound * (1 + 1e-9)
    assert best >= bound * (1 - 1e-4)


def test_l1_clipping_has_sensitivity_2c() -> None:
    rng = np.random.default_rng(3)
    c = 1.0
    raw = rng.standard_normal((2, 50_000, 8)) * 3
    d = np.abs(clip_l1(raw[0], c) - clip_l1(raw[1], c)).sum(axis=1)
    assert d.max() <= l1_sensitivity_l1_clip(c) * (1 + 1e-12)
    e1 = np.eye(8)[0] * c
    assert np.abs(e1 - (-e1)).sum() == l1_sensitivity_l1_clip(c)


def test_clip_l2_keeps_inner_points_and_zero() -> None:
    x = np.array([[0.3, 0.4], [3.0, 4.0], [0.0, 0.0]])
    out = clip_l2(x, 1.0)
    np.testing.assert_allclose(out, [[0.3, 0.4], [0.6, 0.8], [0.0, 0.0]])


def test_report_collects_everything() -> None:
    r = sensitivity_report(2.0, 16, epsilon=0.5).to_dict()
    assert r["l1_sensitivity_l2_clip"] == pytest.approx(16.0)
    assert r["l1_sensitivity_l1_clip"] == 4.0
    assert r["claimed_sensitivity"] == 4.0
    assert r["ratio"] == pytest.approx(4.0)
    assert r["true_epsilon"] == pytest.approx(2.0)
    assert r["extreme_pair"]["x"] == [0.5] * 16
    assert sensitivity_report(1.0, 3).true_epsilon is None


@pytest.mark.parametrize(
    ("clip", "dim"),
    [(0, 4), (-1, 4), (float("nan"), 4), (float("inf"), 4), ("abc", 4), (1, 0), (1, 4097), (1, 2.5)],
)
def test_bad_geometry_input_raises(clip: object, dim: object) -> None:
    with pytest.raises(DPCoreError):
        l1_sensitivity_l2_clip(clip, dim)  # type: ignore[arg-type]


# --------------------------------------------------------------------------------------------
# Dimension lists
# --------------------------------------------------------------------------------------------
def test_parse_dims() -> None:
    assert parse_dims("1-255") == list(range(1, 256))
    assert parse_dims("8,2, 1,2") == [1, 2, 8]
    assert parse_dims("1-4,32, 16") == [1, 2, 3, 4, 16, 32]
    for bad in ["", "0", "5-1", "a", "1-5000", "2.5", "-3", "1-2-3", "4097"]:
        with pytest.raises(DPCoreError):
            parse_dims(bad)


def test_dimension_grid() -> None:
    assert dimension_grid(10) == list(range(1, 11))
    g = dimension_grid(4096, "all", max_points=256)
    assert g[0] == 1 and g[-1] == 4096 and len(g) == 256
    lg = dimension_grid(4096, "log", max_points=48)
    assert lg[0] == 1 and lg[-1] == 4096 and lg == sorted(set(lg))
    with pytest.raises(DPCoreError):
        dimension_grid(16, "cubic")


# --------------------------------------------------------------------------------------------
# The violation simulation
# --------------------------------------------------------------------------------------------
def _slow_count(dim: int, **kw: object) -> int:
    """Test-only reference: loop over pairs, clip with math, sum |differences| one by one."""
    x, y = adept_pair_samples(dim, **kw)  # type: ignore[arg-type]
    c = float(kw["clip"])  # type: ignore[arg-type]
    count = 0
    for a_row, b_row in zip(x.tolist(), y.tolist(), strict=True):
        na = math.sqrt(sum(v * v for v in a_row))
        nb = math.sqrt(sum(v * v for v in b_row))
        fa = min(1.0, c / na) if na > 0 else 1.0
        fb = min(1.0, c / nb) if nb > 0 else 1.0
        dist = sum(abs(fa * u - fb * v) for u, v in zip(a_row, b_row, strict=True))
        count += dist > 2 * c
    return count


@pytest.mark.parametrize(
    "kw",
    [
        {"dist": "uniform", "clip": 10.0, "seed": 5},
        {"dist": "normal", "clip": 10.0, "seed": 6},
        {"dist": "normal", "clip": 2.0, "seed": 7, "std": 0.15},
        {"dist": "uniform", "clip": 1.0, "seed": 8, "spread": 0.6},
    ],
)
def test_simulation_agrees_with_slow_loop(kw: dict) -> None:
    dims = [1, 2, 3, 5, 8, 13, 21, 34, 60]
    pairs = 700  # two blocks of pairs, the second partial
    fast = adept_violation_fractions(dims, pairs=pairs, **kw)
    slow = [_slow_count(n, pairs=pairs, **kw) for n in dims]
    assert fast.violations == slow
    assert fast.seed == kw["seed"] and fast.pairs == pairs and fast.dims == dims


def test_screening_bounds_do_not_change_counts(monkeypatch: pytest.MonkeyPatch) -> None:
    """With a huge margin every pair goes through the coordinate-by-coordinate path."""
    dims = list(range(1, 90, 4))
    kw = {"clip": 1.0, "pairs": 1500, "seed": 21}
    screened = [adept_violation_fractions(dims, dist=d, **kw).violations for d in ("uniform", "normal")]
    monkeypatch.setattr(sens, "_SCREEN_TOL", 1e9)
    direct = [adept_violation_fractions(dims, dist=d, **kw).violations for d in ("uniform", "normal")]
    assert screened == direct


def test_uniform_is_near_certain_violation_by_n16_and_never_at_n1() -> None:
    res = adept_violation_fractions([1, 2, 16, 32, 255], clip=10.0, dist="uniform", pairs=10_000, seed=0)
    f = dict(zip(res.dims, res.fractions, strict=True))
    assert f[1] == 0.0  # in one dimension L1 = L2 ≤ 2C: mathematically impossible to violate
    assert 0.05 < f[2] < 0.5
    assert f[16] >= 0.99
    assert f[32] == 1.0 and f[255] == 1.0


def test_normal_grows_with_n() -> None:
    res = adept_violation_fractions([1, 8, 32, 128], clip=10.0, dist="normal", pairs=5000, seed=0)
    f = res.fractions
    assert f[0] == 0.0 and f[1] < 0.05 and f[2] > 0.5 and f[3] == 1.0


def test_result_for_n_does_not_depend_on_other_dims() -> None:
    kw = {"clip": 3.0, "dist": "normal", "pairs": 2000, "seed": 4, "std": 0.5}
    alone = adept_violation_fractions([24], **kw).violations[0]
    among = adept_violation_fractions([*range(1, 300, 23), 24], **kw)
    assert among.violations[among.dims.index(24)] == alone


def test_seed_reproduces_and_changes() -> None:
    kw = {"clip": 1.0, "dist": "uniform", "pairs": 3000}
    a = adept_violation_fractions([3, 4, 5], seed=1, **kw).violations
    b = adept_violation_fractions([3, 4, 5], seed=1, **kw).violations
    c = adept_violation_fractions([3, 4, 5], seed=2, **kw).violations
    assert a == b and a != c
    fresh = adept_violation_fractions([3], **kw)
    assert isinstance(fresh.seed, int)  # a fresh seed is recorded


def test_large_dimension_runs_with_bounded_memory() -> None:
    res = adept_violation_fractions([4096], clip=1.0, dist="normal", pairs=600, seed=0)
    assert res.violations == [600]


def test_result_records_parameters() -> None:
    res = adept_violation_fractions([1, 4], clip=2.0, dist="uniform", pairs=100, seed=9, spread=1.5)
    d = res.to_dict()
    assert d["seed"] == 9 and d["pairs"] == 100 and d["clip"] == 2.0 and d["half_width"] == 3.0
    assert d["results"][1]["theoretical_max_l1_distance"] == pytest.approx(8.0)
    assert d["claimed_sensitivity"] == 4.0


@pytest.mark.parametrize(
    "kw",
    [
        {"clip": 0.0},
        {"clip": float("nan")},
        {"clip": 1.0, "pairs": 0},
        {"clip": 1.0, "pairs": 2_000_000},
        {"clip": 1.0, "dist": "cauchy"},
        {"clip": 1.0, "spread": -1},
        {"clip": 1.0, "dist": "normal", "std": 0},
        {"clip": 1.0, "seed": -1},
    ],
)
def test_bad_simulation_input_raises(kw: dict) -> None:
    with pytest.raises(DPCoreError):
        adept_violation_fractions([2], **kw)


def test_bad_dims_raise() -> None:
    for dims in ([], [0], [5000]):
        with pytest.raises(DPCoreError):
            adept_violation_fractions(dims, clip=1.0, pairs=10, seed=0)


# --------------------------------------------------------------------------------------------
# CLI
# --------------------------------------------------------------------------------------------
def test_cli_sensitivity_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["sensitivity", "--clip", "1", "--dim", "4", "--epsilon", "2", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["l1_sensitivity_l2_clip"] == 4.0
    assert out["l1_sensitivity_l1_clip"] == 2.0
    assert out["true_epsilon"] == 4.0
    assert out["extreme_pair"]["x"] == [0.5] * 4


def test_cli_sensitivity_text(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["sensitivity", "--clip", "10", "--dim", "128"]) == 0
    assert "226.274" in capsys.readouterr().out


def test_cli_adept_sim_json_with_range(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["adept-sim", "--dist", "uniform", "--clip", "1", "--dims", "1-4,16"]
    assert main([*argv, "--pairs", "500", "--seed", "3", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["seed"] == 3 and out["pairs"] == 500 and out["dist"] == "uniform"
    assert [r["dim"] for r in out["results"]] == [1, 2, 3, 4, 16]
    direct = adept_violation_fractions([1, 2, 3, 4, 16], clip=1.0, pairs=500, seed=3)
    assert [r["fraction"] for r in out["results"]] == direct.fractions


@pytest.mark.parametrize(
    "argv",
    [
        ["sensitivity", "--clip", "0", "--dim", "4"],
        ["sensitivity", "--clip", "1", "--dim", "0"],
        ["sensitivity", "--clip", "nan", "--dim", "4"],
        ["sensitivity", "--clip", "1", "--dim", "4", "--epsilon", "-1"],
        ["adept-sim", "--dims", "1-5000"],
        ["adept-sim", "--dims", "1,2", "--pairs", "1e7"],
        ["adept-sim", "--dims", "1,2", "--dist", "laplace"],
        ["adept-sim", "--dims", "1,2", "--std", "1"],
        ["adept-sim", "--dims", "x"],
    ],
)
def test_cli_bad_arguments_exit_2_with_one_line(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("dpcore: error:") and err.count("\n") == 1
