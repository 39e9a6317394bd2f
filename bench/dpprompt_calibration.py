"""Recompute DP-Prompt's default clip (b₁, b₂) from its documented recipe and compare it with the
shipped constant, in one run.

``dpcore.rewriter.dpprompt.DEFAULT_CLIP`` comes from :func:`dpcore.rewriter.dpprompt.calibrate_clip`
with its defaults on SmolLM2-135M-Instruct: the first 50 Lee-corpus sentences, the first 16 steps of
each one's greedy paraphrase, b₁ = median of each step's 1st percentile of the logits over V and
b₂ = 95th percentile of each step's maximum, rounded outwards to 0.1. That is about 800 forward
passes plus the model's first load (15–30 s on 2 cores), too long for every CI run, so the recipe's
code is tested on a toy model against a literal reference (``tests/test_rewriter_dpprompt.py``)
and the constant itself is regenerated here (needs requirements-models.txt):

    python bench/dpprompt_calibration.py

Prints both pairs and writes ``bench/results/dpprompt_calibration.txt``. Exits 1 if the rounded
recomputed clip differs from the shipped one.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from dpcore.models.causal_lm import load_smollm2  # noqa: E402
from dpcore.rewriter.dpprompt import DEFAULT_CLIP, _round_clip, calibrate_clip  # noqa: E402
from dpcore.rewriter.pairs import corpus_sentences  # noqa: E402


def main() -> int:
    load0 = os.getloadavg()[0]
    t0 = time.perf_counter()
    lm = load_smollm2("cpu")
    raw = calibrate_clip(lm, corpus_sentences()[:50])
    seconds = time.perf_counter() - t0
    rounded = _round_clip(raw)
    same = rounded == tuple(DEFAULT_CLIP)
    lines = [
        f"DP-Prompt clip calibration (calibrate_clip defaults, SmolLM2-135M-Instruct); {seconds:.1f} s "
        f"with the model's load, load average {load0:.2f} → {os.getloadavg()[0]:.2f}",
        f"recomputed (b₁, b₂) = ({raw[0]:.4f}, {raw[1]:.4f}), "
        f"rounded outwards ({rounded[0]:.1f}, {rounded[1]:.1f})",
        f"shipped DEFAULT_CLIP = ({DEFAULT_CLIP[0]:.1f}, {DEFAULT_CLIP[1]:.1f}): "
        + ("the same" if same else "DIFFERENT"),
        f"Δu = b₂ − b₁ = {DEFAULT_CLIP[1] - DEFAULT_CLIP[0]:.1f}: temperature T = 2Δu/ε, so T = 1 is ε = "
        f"{2 * (DEFAULT_CLIP[1] - DEFAULT_CLIP[0]):.0f} per token",
    ]
    text = "\n".join(lines) + "\n"
    print(text, end="")
    (ROOT / "bench" / "results" / "dpprompt_calibration.txt").write_text(text, encoding="utf-8")
    return 0 if same else 1


if __name__ == "__main__":
    raise SystemExit(main())
