"""``python -m dpcore mask-attack``: mask-token inference on (sanitized) text (SanText §5.3)."""

from __future__ import annotations

import argparse
from typing import Any

from dpcore.commands.common import emit_json, stderr_progress
from dpcore.formatting import percent
from dpcore.validation import DPCoreError, check_finite_float, check_int

TOKENIZERS = ("glove", "whitespace")


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "mask-attack",
        help="mask-token inference attack with a masked LM: defense rate of sanitized text",
        description=(
            "Yue et al. (2021), §5.3: mask every position of each sanitized sentence, let a masked "
            "LM predict it, and count the positions where the top-1 prediction differs from the "
            "original token (the defense rate, with a Clopper–Pearson interval). --input holds the "
            "original sentences (one per line); --sanitized the sanitized ones, tokens separated by "
            "spaces and aligned one to one (what `python -m dpcore sanitize` writes). Without "
            "--sanitized the original is attacked (ε → ∞: the attacker's own top-1). Default "
            "model: the shipped MiniLM masked LM; nothing is downloaded."
        ),
    )
    p.add_argument("--input", required=True, help="original text file, one sentence per line")
    p.add_argument("--sanitized", default=None, help="sanitized text file, aligned line by line")
    p.add_argument(
        "--tokenizer",
        default="glove",
        choices=TOKENIZERS,
        help="how to split the original lines (glove: as the sanitizer does; whitespace)",
    )
    p.add_argument(
        "--unit",
        default="word",
        choices=("word", "wordpiece"),
        help="compare whole words (default) or WordPieces (tokens are the model's pieces)",
    )
    p.add_argument("--mlm", default=None, help="fill-mask model: folder, or hub name in the local cache")
    p.add_argument(
        "--precision",
        default="auto",
        choices=("auto", "float32", "bfloat16"),
        help="model weights (auto: bfloat16 where the CPU has native bf16, else float32)",
    )
    p.add_argument("--max-sentences", default=1000, help="attack the first N lines (1..5000, default 1000)")
    p.add_argument("--batch-size", default=16, help="masked variants per forward pass (default 16)")
    p.add_argument("--threads", default=None, help="torch threads (default: torch's choice)")
    p.add_argument("--confidence", default=0.95, help="confidence of the interval (default 0.95)")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=run)


def _lines(path: str) -> list[str]:
    from dpcore.text.sanitize import read_text_file

    return read_text_file(path).splitlines()


def _is_jsonl(lines: list[str]) -> bool:
    first = next((ln for ln in lines if ln.strip()), "")
    return first.lstrip().startswith("{")


def _aligned_pairs(
    orig_lines: list[str], san_lines: list[str], n_max: int
) -> list[tuple[list[str], list[str]]]:
    """Pairs from ``sanitize --format jsonl``; every line must match --input and align one to one."""
    import json

    pairs: list[tuple[list[str], list[str]]] = []
    for i, (o, s) in enumerate(zip(orig_lines, san_lines, strict=True)):
        try:
            row = json.loads(s)
        except json.JSONDecodeError as exc:
            raise DPCoreError(f"--sanitized line {i + 1} is not JSON ({exc.msg})") from None
        if not isinstance(row, dict) or not {"text", "original", "sanitized"} <= set(row):
            raise DPCoreError(
                f"--sanitized line {i + 1} lacks text/original/sanitized (use sanitize --format jsonl)"
            )
        if row["text"] != o:
            raise DPCoreError(
                f"line {i + 1}: --sanitized was made from a different line than --input's; they must align"
            )
        ot, st = row["original"], row["sanitized"]
        if not (isinstance(ot, list) and isinstance(st, list) and all(isinstance(t, str) for t in ot + st)):
            raise DPCoreError(f"--sanitized line {i + 1}: original and sanitized must be lists of tokens")
        if len(ot) != len(st):
            raise DPCoreError(
                f"line {i + 1}: {len(ot)} original tokens but {len(st)} sanitized tokens; tokens must align"
            )
        if ot:
            pairs.append((ot, st))
        if len(pairs) == n_max:
            break
    return pairs


def _text_pairs(
    orig_lines: list[str], san_lines: list[str], split: Any, n_max: int, *, attack_original: bool
) -> list[tuple[list[str], list[str]]]:
    """Pairs from plain text: --input tokenized, --sanitized split on spaces, counts must match.

    Plain text can only be checked by token count; `sanitize --format jsonl` carries the tokens
    themselves (needed for bert, whose text output joins WordPieces back into words).
    """
    pairs: list[tuple[list[str], list[str]]] = []
    for i, (o, s) in enumerate(zip(orig_lines, san_lines, strict=True)):
        ot = split(o)
        st = ot if attack_original else s.split()
        if not ot and not st:
            continue
        if len(ot) != len(st):
            raise DPCoreError(
                f"line {i + 1}: {len(ot)} original tokens but {len(st)} sanitized tokens; "
                "tokens must align one to one (for bert, write it with sanitize --format jsonl)"
            )
        pairs.append((ot, st))
        if len(pairs) == n_max:
            break
    return pairs


def run(args: argparse.Namespace) -> int:
    from dpcore.attack.mask_inference import MAX_SENTENCES, mask_token_inference

    n_max = check_int(args.max_sentences, name="max-sentences", min_value=1, max_value=MAX_SENTENCES)
    batch = check_int(args.batch_size, name="batch-size", min_value=1, max_value=4096)
    conf = check_finite_float(args.confidence, name="confidence", min_value=0.5, max_value=0.999999)
    threads = (
        None if args.threads is None else check_int(args.threads, name="threads", min_value=1, max_value=256)
    )
    if args.tokenizer == "glove":
        from dpcore.text.tokenize import GloveTokenizer

        split = GloveTokenizer().tokenize
    else:
        split = str.split
    orig_lines = _lines(args.input)
    san_lines = orig_lines if args.sanitized is None else _lines(args.sanitized)
    if len(san_lines) != len(orig_lines):
        raise DPCoreError(
            f"--input has {len(orig_lines)} lines but --sanitized has {len(san_lines)}; they must align"
        )
    aligned = args.sanitized is not None and _is_jsonl(san_lines)
    if args.sanitized is not None and not aligned and args.unit == "wordpiece":
        # Plain text carries words, not WordPieces: position i of the sanitized line need not be
        # the piece that replaced piece i of the original, so scoring it would be meaningless.
        raise DPCoreError(
            "--unit wordpiece needs aligned WordPieces: write --sanitized with sanitize --format jsonl"
        )
    pairs = (
        _aligned_pairs(orig_lines, san_lines, n_max)
        if aligned
        else _text_pairs(orig_lines, san_lines, split, n_max, attack_original=args.sanitized is None)
    )
    if not pairs:
        raise DPCoreError("no non-empty lines to attack")

    from dpcore.models.masked_lm import load_mlm

    mlm = load_mlm(args.mlm, precision=args.precision)
    if threads is not None:
        import torch

        torch.set_num_threads(threads)
    res = mask_token_inference(
        pairs,
        mlm,
        unit=args.unit,
        batch_size=batch,
        confidence=conf,
        progress=stderr_progress("attacking", enabled=True),
    )
    out = res.to_dict() | {"input": args.input, "sanitized": args.sanitized, "tokenizer": args.tokenizer}
    if args.json:
        emit_json(out)
        return 0
    lvl = percent(conf, exact=True)
    print(f"model: {res.model} ({res.precision})")
    print(f"{res.n_sentences} sentences, {res.n_tokens:,} positions ({res.unit} level)")
    print(
        f"defense rate: {res.defense_rate:.4f}  ({lvl} CI [{res.ci_low:.4f}, {res.ci_high:.4f}]); "
        f"attack success {res.attack_success_rate:.4f}"
    )
    print(
        f"kept by the sanitizer: {res.n_kept:,}; not predictable as one token: {res.n_unrepresentable:,} "
        f"(defense rate on the rest: {res.defense_rate_representable:.4f})"
    )
    print(f"{res.forward_passes} forward passes in {res.seconds:.1f} s")
    return 0
