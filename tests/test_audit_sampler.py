"""Issue 11, part 1: Monte-Carlo runs the mechanism's real sampler; the shortcut is checked.

Two deliberately inconsistent mechanisms:

- ``WrongSampler`` declares the Laplace mechanism's per-coordinate probabilities (correct for
  ε-DP) but samples with DPText's never-negative noise (Habernal 2022, eqs. 8–9). The exact audit
  and a binomial shortcut would read the declaration and pass it; only running the sampler shows
  the infinite loss.
- ``WrongDeclaration`` samples correct Laplace noise but declares DPText's probabilities. The
  exact audit (which reads the declaration) calls it a violation; the real sampler shows no
  violation and reports that its draws contradict the declaration.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from dpcore.audit import audit
from dpcore.audit.montecarlo import check_declared_probabilities
from dpcore.flawed.samplers import dptext_noise
from dpcore.mechanisms.base import IIDAuditable, LaplaceNoiseMechanism
from dpcore.validation import DPCoreError

ROOT = Path(__file__).resolve().parents[1]


class WrongSampler(LaplaceNoiseMechanism):
    """Declares Lap(0, n/ε) probabilities; samples DPText's noise."""

    name = "wrong-sampler"

    def __init__(self, *, epsilon: float, dim: int) -> None:
        super().__init__(epsilon=epsilon, dim=dim)
        self.scale = self.dim / self.epsilon

    def noise(self, shape: tuple[int, ...], rng: np.random.Generator) -> np.ndarray:
        return dptext_noise(self.scale, shape, rng)


class WrongDeclaration(LaplaceNoiseMechanism):
    """Samples Lap(0, n/ε) correctly; declares DPText's probabilities (P(z ≥ 0.5 | 1ⁿ) = 1)."""

    name = "wrong-declaration"

    def __init__(self, *, epsilon: float, dim: int) -> None:
        super().__init__(epsilon=epsilon, dim=dim)
        self.scale = self.dim / self.epsilon

    def noise_log_sf(self, t: float) -> float:
        return 0.0 if t <= 0 else float(np.log(0.5) - t / self.scale)

    def noise_log_cdf(self, t: float) -> float:
        return -np.inf if t <= 0 else float(np.log1p(-0.5 * np.exp(-t / self.scale)))


def test_fixtures_are_what_they_claim() -> None:
    assert isinstance(WrongSampler(epsilon=1, dim=8), IIDAuditable)
    # The declaration of WrongSampler is the correct Laplace one: exact audit passes it.
    ex = audit(WrongSampler(epsilon=1.0, dim=8), method="exact")
    assert ex.verdict == "within-claim"
    # The declaration of WrongDeclaration is DPText's: exact audit (declaration only) fails it.
    assert audit(WrongDeclaration(epsilon=1.0, dim=8), method="exact").verdict == "violates"


def test_default_mc_catches_a_wrong_sampler_with_right_probabilities() -> None:
    r = audit(WrongSampler(epsilon=1.0, dim=8), method="mc", trials=200_000, seed=11)
    assert r.sampler == "real" and r.blackbox
    assert r.verdict == "violates", r
    assert r.verdict_lower_bound > 1.0
    assert r.declaration_disagrees  # draws under 1ⁿ never fall below 0.5, declared P < 1
    assert "disagree" in r.verdict_text


def test_default_mc_catches_right_sampler_with_wrong_probabilities() -> None:
    r = audit(WrongDeclaration(epsilon=1.0, dim=8), method="mc", trials=200_000, seed=12)
    assert r.sampler == "real"
    assert r.verdict == "not-detected"  # the real sampler is ε-DP: no false alarm
    assert r.declaration_disagrees
    assert r.to_dict()["declaration_disagrees"] is True
    assert "declared per-coordinate probabilities" in r.verdict_text


@pytest.mark.parametrize("cls", [WrongSampler, WrongDeclaration])
def test_model_based_refuses_when_sampler_and_declaration_disagree(cls: type) -> None:
    with pytest.raises(DPCoreError, match="model-based Monte-Carlo refused") as err:
        audit(cls(epsilon=1.0, dim=8), method="mc", trials=1_000_000, seed=3, model_based=True)
    assert "declared" in str(err.value) and "observed" in str(err.value)
    assert "\n" not in str(err.value)


@pytest.mark.parametrize("name", ["laplace", "gaussian", "adept", "dptext", "dpnr", "random"])
def test_model_based_runs_after_a_passing_cross_check(name: str) -> None:
    r = audit(name, dim=32, epsilon=1.0, method="mc", trials=1_000_000, seed=5, model_based=True)
    assert r.sampler == "model-based" and not r.blackbox
    assert r.sampler_check["agrees"] and r.sampler_check["draws_per_input"] >= 1_000_000
    assert "model-based" in r.verdict_text


def test_cross_check_is_sensitive_to_a_small_bias() -> None:
    """A sampler whose P(z ≥ 0.5) is off by 1% (absolute) fails the 1e6-draw cross-check."""

    class Biased(LaplaceNoiseMechanism):
        name = "biased"

        def __init__(self) -> None:
            super().__init__(epsilon=1.0, dim=4)
            self.scale = 4.0

        def sample(self, x: np.ndarray, size: int, rng: np.random.Generator) -> np.ndarray:
            z = super().sample(x, size, rng)
            flip = rng.random(z.shape) < 0.02
            return np.where(flip, 0.0, z)  # moves ~1% of the mass from above 0.5 to below

    assert not check_declared_probabilities(Biased(), 0)["agrees"]
    assert check_declared_probabilities(
        type("Fine", (LaplaceNoiseMechanism,), {"name": "fine", "scale": 4.0})(epsilon=1.0, dim=4), 0
    )["agrees"]


def test_model_based_needs_a_declaration() -> None:
    class Opaque:
        name = "opaque"
        epsilon = 1.0
        dim = 4
        claimed_epsilon = 1.0
        true_epsilon = None
        delta = 0.0

        def sample(self, x: np.ndarray, size: int, rng: np.random.Generator) -> np.ndarray:
            return rng.laplace(0.0, 4.0, size=(size, 4)) + x

    with pytest.raises(DPCoreError, match="does not declare"):
        audit(Opaque(), method="mc", trials=1000, seed=0, model_based=True)
    r = audit(Opaque(), method="mc", trials=10_000, seed=0)
    assert r.sampler == "real" and r.sampler_check is None


def test_model_based_and_blackbox_together_is_an_error() -> None:
    with pytest.raises(DPCoreError, match="not both"):
        audit("laplace", dim=4, epsilon=1, method="mc", trials=1000, blackbox=True, model_based=True)


def _cli(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "dpcore", *argv], cwd=ROOT, capture_output=True, text=True, timeout=300
    )


def test_issue_command_runs_the_real_sampler_and_flags_dptext() -> None:
    p = _cli("audit", "--mechanism", "dptext", "--dim", "8", "--epsilon", "1", "--method", "mc",
             "--trials", "1e6", "--json", "--seed", "0")
    assert p.returncode == 0, p.stderr
    d = json.loads(p.stdout)
    assert d["sampler"] == "real" and d["blackbox"] is True
    assert d["trials"] == 1_000_000
    assert d["verdict"] == "violates" and d["verdict_lower_bound"] > 1
    assert d["verdict_text"].startswith("violates its claimed ε")
    assert "from the real sampler" in d["verdict_text"]


def test_cli_model_based_flag() -> None:
    p = _cli("audit", "--mechanism", "laplace", "--dim", "128", "--epsilon", "1", "--method", "mc",
             "--trials", "1e7", "--model-based", "--seed", "0")
    assert p.returncode == 0, p.stderr
    assert "(model-based sampler)" in p.stdout
    assert "no violation detected by this test (n = 128, ε = 1, 10,000,000 trials per neighbour drawn " \
        "from the declared probabilities (model-based), confidence 0.95)" in p.stdout
    bad = _cli("audit", "--mechanism", "laplace", "--dim", "8", "--epsilon", "1", "--model-based")
    assert bad.returncode != 0 and "only to --method mc" in bad.stderr


def test_in_place_eq7_sampler_gives_the_textbook_values_bit_for_bit() -> None:
    from dpcore.mechanisms.samplers import laplace_sample_eq7, open_uniform

    for seed in range(3):
        got = laplace_sample_eq7(3.7, (500, 7), np.random.default_rng(seed))
        v = open_uniform((500, 7), np.random.default_rng(seed)) - 0.5
        assert np.array_equal(got, -3.7 * np.sign(v) * np.log1p(-2.0 * np.abs(v)))
