"""Defense rate (masked-LM and Bayesian attacks) and accuracy against ε, SanText and SanText+ on
the tweets (GloVe, |V| = 15,000): the figure of issue 5.

    python bench/attack_utility_sweep.py                     # shipped attacker, 200 sentences
    python bench/attack_utility_sweep.py --sentences 60 --mlm PATH

Writes bench/results/attack_utility_sweep.{csv,json,html,png} and prints the table and the
equivalent CLI commands. The PNG is rendered from the HTML by headless Chromium (no kaleido or
matplotlib needed). Without the shipped attacker and without --mlm, the masked LM is
all-MiniLM-L6-v2 with an *untrained* MLM head (a floor, not an attacker), and the output says so.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

EPSILONS = [1.0, 2.0, 3.0, 6.0, 10.0, 14.0]
MECHANISMS = ["santext", "santext+"]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sentences", type=int, default=200)
    ap.add_argument("--mlm", default=None, help="fill-mask model folder (default: the shipped attacker)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default=str(ROOT / "bench" / "results"))
    args = ap.parse_args()

    import pandas as pd

    from dpcore.attack.datasets import load_labelled_dataset, split_dataset
    from dpcore.attack.experiment import attack_sweep, sample_attack_sentences
    from dpcore.attack.utility import DEFAULT_N_TEST, DEFAULT_N_TRAIN, utility_sweep
    from dpcore.jsonutil import dumps
    from dpcore.models.masked_lm import default_mlm_available, load_mlm
    from dpcore.text import create_text_mechanism
    from dpcore.text.vocab import build_vocabulary
    from dpcore.viz.attack_figure import epsilon_figure, tradeoff_figure

    mlm_note = ""
    if args.mlm is None and not default_mlm_available():
        raise SystemExit("the shipped attacker is missing (dpcore/attack/models/minilm-mlm/model.onnx)")
    mlm_path = args.mlm
    mlm = load_mlm(mlm_path)
    vocab = build_vocabulary("glove", size=15_000)
    data = load_labelled_dataset("tweets")
    sentences = sample_attack_sentences(data, args.sentences, seed=args.seed)
    split = split_dataset(data, n_train=DEFAULT_N_TRAIN, n_test=DEFAULT_N_TEST, split_seed=0)

    attack_rows, utility_rows, base = [], [], {}
    timing = {}
    for mech in MECHANISMS:

        def make(e: float, m: str = mech):
            return create_text_mechanism(m, vocab=vocab, epsilon=e)

        t0 = time.monotonic()
        res = attack_sweep(
            sentences, make, EPSILONS, attacks=["mlm", "bayes-unigram", "bayes-mlm"], mlm=mlm, seed=args.seed
        )
        timing[f"attack {mech}"] = time.monotonic() - t0
        attack_rows += [{"mechanism": mech, **r} for r in res["rows"]]
        t0 = time.monotonic()
        ures = utility_sweep(split, make, EPSILONS, seed=args.seed)
        timing[f"utility {mech}"] = time.monotonic() - t0
        utility_rows += [{"mechanism": mech, **r} for r in ures["rows"]]
        base = ures["baselines"]

    adf, udf = pd.DataFrame(attack_rows), pd.DataFrame(utility_rows)
    table = adf.pivot_table(index=["mechanism", "epsilon"], columns="attack", values="defense_rate")
    table = table.join(udf.set_index(["mechanism", "epsilon"])[["accuracy", "accuracy_raw_test"]])
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    table.reset_index().to_csv(out / "attack_utility_sweep.csv", index=False, float_format="%.4f")
    top1 = adf.groupby("attack")["attacker_top1_unsanitized"].first().to_dict()
    meta = {
        "mlm": "shipped minilm-mlm (dpcore/attack/models/minilm-mlm)" if mlm_path is None else mlm.name,
        "mlm_note": mlm_note,
        "sentences": args.sentences,
        "scored_positions": int(adf["tokens"].iloc[0]),
        "seed": args.seed,
        "epsilons": EPSILONS,
        "vocab_size": 15_000,
        "baselines": base,
        "attacker_top1_unsanitized": top1,
        "mlm_prior_top1_unsanitized": float(adf.loc[adf["attack"] == "bayes-mlm", "prior_top1"].iloc[0]),
        "timing_seconds": {k: round(v, 1) for k, v in timing.items()},
        "mlm_backend": mlm.backend,
    }
    (out / "attack_utility_sweep.json").write_text(
        dumps({"meta": meta, "attack": attack_rows, "utility": utility_rows}, indent=2), encoding="utf-8"
    )
    title = (
        f"tweets, GloVe |V|=15,000, {args.sentences} sentences, seed {args.seed}; MLM: {Path(mlm.name).name}"
    )
    if mlm_note:
        title += f" — {mlm_note}"
    f1, f2 = tradeoff_figure(adf, udf, base), epsilon_figure(adf, udf, base)
    f1.update_layout(title=title, width=1100, height=560)
    f2.update_layout(width=1100, height=700)
    html = out / "attack_utility_sweep.html"
    html.write_text(
        "<html><head><meta charset='utf-8'></head><body style='margin:0;background:white'>"
        + f1.to_html(full_html=False, include_plotlyjs=True)
        + f2.to_html(full_html=False, include_plotlyjs=False)
        + "</body></html>",
        encoding="utf-8",
    )
    png = out / "attack_utility_sweep.png"
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium:
        import tempfile

        home = tempfile.mkdtemp(prefix="dpcore-chromium-")
        subprocess.run(
            [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
             "--window-size=1120,1300", f"--screenshot={png}", html.as_uri()],
            check=False, capture_output=True, timeout=120, env={**os.environ, "HOME": home},
        )  # fmt: skip
        shutil.rmtree(home, ignore_errors=True)
    pd.set_option("display.width", 160)
    print(table.round(3).to_string())
    print(json.dumps(meta, indent=1, default=str))
    print(f"wrote {out}/attack_utility_sweep.{{csv,json,html}}" + (" and .png" if png.exists() else ""))
    eps = ",".join(f"{e:g}" for e in EPSILONS)
    mlm_arg = "" if mlm_path is None else f" --mlm {mlm_path}"
    print("\nThe same numbers from the CLI:")
    for mech in MECHANISMS:
        for a in ("--attack mlm", "--attack bayes --prior unigram", "--attack bayes --prior mlm"):
            extra = mlm_arg if "unigram" not in a else ""
            print(
                f"python -m dpcore attack --mechanism {mech} --epsilons {eps} --dataset tweets "
                f"--sentences {args.sentences} {a}{extra} --seed {args.seed} --json"
            )
        print(
            f"python -m dpcore utility --mechanism {mech} --epsilons {eps} --dataset tweets "
            f"--seed {args.seed} --json"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
