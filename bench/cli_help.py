"""Time ``dpcore --help`` and ``dpcore COMMAND --help`` for every command (fresh processes).

    python bench/cli_help.py            # median of 5 runs each
    python bench/cli_help.py --runs 9

Uses the ``dpcore`` console script when it is on PATH (``pip install .``), else
``python -m dpcore``. Prints each median and the slowest, against the 0.5 s target, with the
machine's load average (the 2 cores may be shared).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    from dpcore.cli import build_parser

    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    script = shutil.which("dpcore")
    base = [script] if script else [sys.executable, "-m", "dpcore"]
    print(f"command: {' '.join(base)}; load average {os.getloadavg()[0]:.2f}")
    worst = 0.0
    for argv in [["--help"]] + [[n, "--help"] for n in sub.choices]:
        times = []
        for _ in range(args.runs):
            t0 = time.perf_counter()
            subprocess.run(base + argv, cwd=ROOT, stdout=subprocess.DEVNULL, check=True)
            times.append(time.perf_counter() - t0)
        med = statistics.median(times)
        worst = max(worst, med)
        print(f"{' '.join(argv):28s} median {med:.3f} s (min {min(times):.3f}, max {max(times):.3f})")
    print(
        f"slowest median: {worst:.3f} s (target < 0.5 s: {'met' if worst < 0.5 else 'NOT met'}); "
        f"load average {os.getloadavg()[0]:.2f}"
    )


if __name__ == "__main__":
    main()
