"""Regenerate the mechanism comparison: every registered text mechanism on one privacy–utility
chart (defense rate of the Bayesian and masked-LM attackers against accuracy, over a grid of ε,
on the same sentences and split). Writes CSV, JSON and an interactive HTML chart.

    python bench/compare_mechanisms.py                       # every mechanism, ε ∈ {1, 3, 10, 30, 100}
    python bench/compare_mechanisms.py --mechanisms santext,tem --epsilons 1,3 --sentences 20
    python bench/compare_mechanisms.py --mechanisms dp-mlm --append   # add dp-mlm to the shipped run

By default masked-LM mechanisms (dp-mlm) are left out and named in the JSON: they run one LM
forward pass per token, about 40 tokens/s here, so the utility split alone takes many minutes per
ε; ``--append`` runs only the named mechanisms with the same sentences, split, ε grid and seed
and merges their rows into the existing JSON (refusing if any of those settings differ), recording
that run's time and load. Outputs ``bench/results/mechanism_comparison.{csv,json}`` (and
``.html``, not committed). The JSON records every parameter and the seed; ε is on different
scales for ε-LDP and metric mechanisms (each row says which).
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


#: Settings that must agree for two runs to share one chart.
SHARED = ("epsilons", "dataset", "sentences", "n_train", "n_test", "split_seed", "vocab_size", "seed")


def merge_runs(base: dict, extra: dict) -> dict:
    """``base`` with ``extra``'s mechanisms added (their old rows replaced); same data required."""
    bp, ep = base["parameters"], extra["parameters"]
    diff = [k for k in SHARED if bp.get(k) != ep.get(k)]
    if diff:
        raise SystemExit(f"--append needs the same {', '.join(diff)} as the existing run")
    names = list(ep["mechanisms"])
    rows = [r for r in base["rows"] if r["mechanism"] not in names] + list(extra["rows"])
    params = dict(bp)
    params["mechanisms"] = [m for m in bp["mechanisms"] if m not in names] + names
    left = {k: v for k, v in (bp.get("not_in_this_run") or {}).items() if k not in names}
    params.pop("not_in_this_run", None)
    if left:
        params["not_in_this_run"] = left
    params["appended_runs"] = [
        *bp.get("appended_runs", []),
        {"mechanisms": names, "seconds": ep.get("seconds"), "load_average": ep.get("load_average")},
    ]
    return {"parameters": params, "rows": rows}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--mechanisms",
        default=None,
        help="comma-separated names (default: every registered mechanism except masked-LM ones such as "
        "dp-mlm, whose one forward pass per token makes the utility split take many minutes per ε)",
    )
    ap.add_argument("--epsilons", default="1,3,10,30,100")
    ap.add_argument("--sentences", type=int, default=30)
    ap.add_argument("--n-train", type=int, default=1000)
    ap.add_argument("--n-test", type=int, default=300)
    ap.add_argument("--vocab-size", type=int, default=15000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default=str(ROOT / "bench" / "results"))
    ap.add_argument("--append", action="store_true", help="merge into the existing JSON in --out")
    args = ap.parse_args()

    out = Path(args.out)
    if args.append:  # refuse before the run, not after it (dp-mlm's run takes most of an hour)
        existing = out / "mechanism_comparison.json"
        if not existing.is_file():
            raise SystemExit(f"--append: no existing run to add to at {existing}")
        planned = {
            "epsilons": [float(e) for e in args.epsilons.split(",")],
            "sentences": args.sentences,
            "n_train": args.n_train,
            "n_test": args.n_test,
            "vocab_size": args.vocab_size,
            "seed": args.seed,
        }
        have = json.loads(existing.read_text(encoding="utf-8"))["parameters"]
        diff = [k for k, v in planned.items() if have.get(k) != v]
        if diff:
            raise SystemExit(f"--append needs the same {', '.join(diff)} as the existing run")

    from dpcore.attack.comparison import compare_mechanisms
    from dpcore.jsonutil import dumps
    from dpcore.viz.comparison_figure import comparison_figure, comparison_table

    def progress(done: int, total: int) -> None:
        print(f"  {done}/{total} (mechanism, ε) cells", file=sys.stderr, flush=True)

    from dpcore.text import TEXT_MECHANISMS
    from dpcore.text.registry import required_embedding

    if args.mechanisms is None:
        names = [n for n in TEXT_MECHANISMS.names() if required_embedding(n) is None]
        skipped = [n for n in TEXT_MECHANISMS.names() if n not in names]
    else:
        names, skipped = args.mechanisms.split(","), []
    res = compare_mechanisms(
        names,
        [float(e) for e in args.epsilons.split(",")],
        sentences=args.sentences,
        n_train=args.n_train,
        n_test=args.n_test,
        vocab_size=args.vocab_size,
        seed=args.seed,
        progress=progress,
    )
    res["parameters"]["load_average"] = round(os.getloadavg()[0], 2)
    if skipped:
        res["parameters"]["not_in_this_run"] = {
            n: "one masked-LM forward pass per token; add it with --mechanisms" for n in skipped
        }
    out.mkdir(parents=True, exist_ok=True)
    if args.append:
        res = merge_runs(json.loads((out / "mechanism_comparison.json").read_text(encoding="utf-8")), res)
    (out / "mechanism_comparison.json").write_text(dumps(res, indent=2), encoding="utf-8")
    table = comparison_table(res["rows"])
    with (out / "mechanism_comparison.csv").open("w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=list(table[0]))
        w.writeheader()
        w.writerows(table)
    comparison_figure(res["rows"]).write_html(out / "mechanism_comparison.html", include_plotlyjs="cdn")
    print(json.dumps(res["parameters"], ensure_ascii=False))
    head = list(table[0])
    print(" | ".join(head))
    for row in table:
        print(" | ".join("n/a" if row[h] is None else str(row[h]) for h in head))


if __name__ == "__main__":
    main()
