"""Does ``train-attacker --resume`` survive a killed run? An uninterrupted run against a killed one.

Runs the same ``train-attacker`` command twice into two folders: once to its end (A), and once
killed with SIGKILL (no clean-up, as when a session or a machine is cut off) as soon as its first
epoch's checkpoint is on disk plus ``--kill-after`` seconds, then resumed with ``--resume`` (B).
Prints both records' steps, seconds and held-out top-1/top-5, where B resumed, and the largest
difference between A's and B's fp16 weights (0 on the CPU; on a GPU cuBLAS may sum in another
order, so a few ulps).

    python bench/attacker_resume.py --device cuda   # a GPU: 3 epochs of public tweets
    python bench/attacker_resume.py --device cpu --epochs 2 --batch-size 64 --sources pang_lee   # a CPU

Needs ``requirements-dev.txt`` (torch, transformers).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]


def train(argv: list[str], env: dict[str, str]) -> str:
    """Run one ``train-attacker`` command; its stdout (its stderr shown if it fails)."""
    done = subprocess.run(argv, env=env, capture_output=True, text=True, cwd=ROOT)
    if done.returncode != 0:
        sys.exit(f"{' '.join(argv)} exited {done.returncode}:\n{done.stderr[-3000:]}")
    return done.stdout


def main() -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--epochs", default="3")
    ap.add_argument("--batch-size", default="128")
    ap.add_argument("--sources", default="tweets")
    ap.add_argument("--init", default="dpcore/attack/models/minilm-mlm")
    ap.add_argument("--kill-after", type=float, default=2.0, help="seconds after the first checkpoint")
    ap.add_argument("--workdir", default=None)
    args = ap.parse_args()
    work = Path(args.workdir or tempfile.mkdtemp(prefix="dpcore-resume-"))
    work.mkdir(parents=True, exist_ok=True)
    common = [sys.executable, "-m", "dpcore", "train-attacker", "--sources", args.sources]
    common += ["--epochs", args.epochs, "--batch-size", args.batch_size, "--lr", "2e-4"]
    common += ["--warmup-steps", "100", "--device", args.device, "--threads", "4", "--seed", "0"]
    common += ["--eval-words", "2000", "--json"]
    if args.init:
        common += ["--init", args.init]
    path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)
    env = {**os.environ, "PYTHONPATH": path, "HF_HUB_OFFLINE": "1"}

    t0 = time.monotonic()
    a = json.loads(train([*common, "--output", str(work / "A")], env))
    t_a = time.monotonic() - t0

    ckpt = work / "B" / "checkpoint" / "state.pt"
    proc = subprocess.Popen(
        [*common, "--output", str(work / "B")],
        env=env,
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    while not ckpt.exists() and proc.poll() is None:
        time.sleep(0.2)
    time.sleep(args.kill_after)
    killed = proc.poll() is None
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    t1 = time.monotonic()
    b = json.loads(train([*common, "--output", str(work / "B"), "--resume"], env))
    t_b = time.monotonic() - t1

    from safetensors.numpy import load_file

    wa, wb = (
        load_file(str(work / "A" / "model.safetensors")),
        load_file(str(work / "B" / "model.safetensors")),
    )
    diff = max(float(np.max(np.abs(wa[k].astype(np.float64) - wb[k].astype(np.float64)))) for k in wa)
    print(
        f"# python bench/attacker_resume.py --device {args.device} --epochs {args.epochs} "
        f"--batch-size {args.batch_size} --sources {args.sources}  ({a['device']})"
    )
    print(
        f"A uninterrupted: {a['steps']} steps, {a['train_seconds']} s training, {t_a:.0f} s in all; "
        f"held-out top-1 {a['heldout_top1']:.4f}, top-5 {a['heldout_top5']:.4f}"
    )
    print(
        f"B killed (SIGKILL) {'while running' if killed else 'after it had ended (raise --epochs)'}, "
        f"resumed at step(s) {b['resumed_at_steps']}: {b['steps']} steps, {b['train_seconds']} s "
        f"training (both parts), resumed part {t_b:.0f} s in all; held-out top-1 "
        f"{b['heldout_top1']:.4f}, top-5 {b['heldout_top5']:.4f}"
    )
    print(
        f"largest |A − B| over the fp16 weights: {diff:.3g}; checkpoint left behind: "
        f"{(work / 'B' / 'checkpoint').exists()}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
