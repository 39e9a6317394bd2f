"""``python -m dpcore utility``: downstream accuracy on sanitized text (SanText §5.2, Table 1)."""

from __future__ import annotations

import argparse

from dpcore.commands.attack import add_common_arguments, load_data, mechanism_factory, parse_epsilons
from dpcore.commands.common import emit_json, stderr_progress, vocabulary_line
from dpcore.formatting import epsilon_text
from dpcore.validation import check_int


def register(sub: argparse._SubParsersAction) -> None:
    from dpcore.limits import UTILITY_CLASSIFIERS as CLASSIFIERS
    from dpcore.limits import UTILITY_N_TEST as DEFAULT_N_TEST
    from dpcore.limits import UTILITY_N_TRAIN as DEFAULT_N_TRAIN

    p = sub.add_parser(
        "utility",
        help="accuracy of a classifier trained and tested on sanitized text",
        description=(
            "Yue et al. (2021) §5.2: sanitize a fixed train/test split, train on sanitized "
            "training text, test on sanitized and on raw test text. Also reports the unsanitized "
            "upper line, uniform random replacement (lower line) and the majority class, with "
            "Clopper–Pearson intervals. Classifier: tfidf (TF-IDF + logistic regression, "
            "default) or minilm (MiniLM sentence embeddings + logistic regression, slower)."
        ),
    )
    add_common_arguments(p)
    p.add_argument(
        "--n-train", default=DEFAULT_N_TRAIN, help=f"training sentences (default {DEFAULT_N_TRAIN})"
    )
    p.add_argument("--n-test", default=DEFAULT_N_TEST, help=f"test sentences (default {DEFAULT_N_TEST})")
    p.add_argument("--split-seed", default=0, help="seed of the train/test split (default 0)")
    p.add_argument("--classifier", default="tfidf", choices=CLASSIFIERS, help="tfidf (default) or minilm")
    p.add_argument("--confidence", default=0.95, help="confidence of the intervals (default 0.95)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from dpcore.attack.datasets import HARD_CAP, split_dataset
    from dpcore.attack.utility import utility_sweep
    from dpcore.rng import resolve_seed

    eps, sweep = parse_epsilons(args)
    n_train = check_int(args.n_train, name="n-train", min_value=2, max_value=HARD_CAP)
    n_test = check_int(args.n_test, name="n-test", min_value=1, max_value=HARD_CAP)
    split_seed = check_int(args.split_seed, name="split-seed", min_value=0, max_value=2**63 - 1)
    seed = resolve_seed(check_int(args.seed, name="seed", min_value=0, max_value=2**63 - 1))
    make = mechanism_factory(args)
    split = split_dataset(load_data(args), n_train=n_train, n_test=n_test, split_seed=split_seed)
    res = utility_sweep(
        split,
        make,
        eps,
        seed=seed,
        classifier=args.classifier,
        confidence=args.confidence,
        progress=stderr_progress("training", enabled=True),
    )
    params = {k: v for k, v in res["parameters"].items() if k != "epsilons"}
    out = [{**row, **res["baselines"], **params, "input": args.input} for row in res["rows"]]
    if args.json:
        emit_json(out if sweep else out[0])
        return 0
    b = res["baselines"]
    print(
        f"{params['dataset']}: {params['n_train']:,} train / {params['n_test']:,} test sentences, "
        f"{args.classifier}; seed {seed}, split seed {split_seed}"
    )
    print(vocabulary_line(make.vocab))
    print(
        f"unsanitized {b['accuracy_unsanitized']:.4f}  random replacement {b['accuracy_random']:.4f}  "
        f"majority class {b['majority']:.4f}"
    )
    for o in out:
        print(
            f"ε = {epsilon_text(o['epsilon'])}: accuracy {o['accuracy']:.4f} [{o['ci_low']:.4f}, "
            f"{o['ci_high']:.4f}]  "
            f"(raw test text: {o['accuracy_raw_test']:.4f})"
        )
    return 0
