"""``python -m dpcore sanitize``: sanitize a text file line by line (SanText, SanText+, baselines)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from dpcore.commands.common import (
    add_full_vocabulary_argument,
    add_param_argument,
    emit_json,
    mechanism_params,
    vocabulary_line,
)
from dpcore.formatting import epsilon_text
from dpcore.validation import check_epsilon, check_int, check_probability

#: Default vocabulary sizes of the CLI and the dashboard's Sanitize page: GloVe is cut to the 15,000
#: most frequent words (the scale of the paper's SST-2 vocabulary, 14,730); BERT keeps its whole
#: WordPiece vocabulary.
DEFAULT_VOCAB_SIZE = {"glove": 15_000, "bert": None, "bert-wordpiece": None}


def add_mechanism_arguments(p: argparse.ArgumentParser) -> None:
    """Options shared by ``sanitize`` and ``metrics``."""
    p.add_argument("--mechanism", required=True, help="santext, santext+, feyisetan or random")
    p.add_argument(
        "--embedding",
        default=None,
        help="glove, bert (whole words) or bert-wordpiece (the paper's WordPieces, ## pieces "
        "shown token by token) (default: glove, or the one the mechanism needs)",
    )
    p.add_argument("--epsilon", required=True, help="ε > 0 (per unit of embedding distance)")
    p.add_argument("--p", default=None, help="santext+: replacement probability of non-sensitive words (0.3)")
    p.add_argument("--w", default=None, help="santext+: fraction of V marked sensitive (0.9)")
    add_param_argument(p)
    g = p.add_mutually_exclusive_group()
    g.add_argument("--vocab", default=None, help="vocabulary file: one word per line, in that order")
    g.add_argument(
        "--vocab-size",
        default=None,
        help="keep the N most frequent embedding words (glove default 15000; bert, bert-wordpiece: all)",
    )
    add_full_vocabulary_argument(p)


def build_mechanism(args: argparse.Namespace) -> Any:
    """Validate the shared options (cheap checks first), then load V and build the mechanism."""
    from dpcore.text import TEXT_MECHANISMS, create_text_mechanism
    from dpcore.text.embeddings import check_embedding_name
    from dpcore.text.registry import required_embedding
    from dpcore.text.sanitize import read_text_file
    from dpcore.text.vocab import MAX_VOCAB_FILE_BYTES, build_vocabulary, parse_vocab_text

    TEXT_MECHANISMS.get(args.mechanism)
    embedding = check_embedding_name(args.embedding or required_embedding(args.mechanism) or "glove")
    check_epsilon(args.epsilon)
    params = mechanism_params(args.mechanism, args)
    for name in ("p", "w"):
        if name in params:
            params[name] = check_probability(params[name], name=name)
    words = None
    size = DEFAULT_VOCAB_SIZE[embedding]
    if args.vocab is not None:
        words = parse_vocab_text(
            read_text_file(args.vocab, max_bytes=MAX_VOCAB_FILE_BYTES, kind="vocabulary file")
        )
    elif args.vocab_size is not None:
        size = check_int(args.vocab_size, name="--vocab-size", min_value=2, max_value=10_000_000)
    return lambda: create_text_mechanism(
        args.mechanism,
        vocab=build_vocabulary(embedding, size=size, words=words, full=args.full_vocabulary),
        epsilon=args.epsilon,
        **params,
    )


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "sanitize",
        help="sanitize a text file token by token (SanText, SanText+, baselines)",
        description=(
            "Replace every token of every line with a sampled word (Yue et al. 2021). One line "
            "in, one line out; the output file is written atomically. Out-of-vocabulary tokens "
            "become [UNK] (--oov mask, default) or are kept (--oov keep, not private). The "
            "vocabulary leaves out slurs and insults (--full-vocabulary keeps them); the "
            "guarantee holds over that filtered vocabulary."
        ),
    )
    add_mechanism_arguments(p)
    p.add_argument("--seed", default=None, help="seed (default: fresh, printed in the summary)")
    p.add_argument(
        "--draw",
        default="1",
        help="which draw of the dashboard's repeated sampling to reproduce (default 1: the seed itself)",
    )
    p.add_argument("--input", required=True, help="UTF-8 text file, at most 5 MB")
    p.add_argument("--output", required=True, help="output file (replaced atomically)")
    p.add_argument("--oov", default="mask", choices=("mask", "keep"), help="out-of-vocabulary policy")
    p.add_argument(
        "--format",
        default="text",
        choices=("text", "jsonl"),
        help="text: sanitized lines (tokens joined by spaces; bert-wordpiece shows ## pieces "
        "token by token); jsonl: one JSON object per line with the line and its original and "
        "sanitized tokens aligned one to one (what mask-attack --sanitized needs for bert-wordpiece)",
    )
    p.add_argument("--json", action="store_true", help="print parameters and counts as JSON on stdout")
    p.set_defaults(func=run)


def aligned_jsonl(original_lines: list[str], result: Any) -> str:
    """One JSON object per line: ``{"text", "original", "sanitized"}``, tokens aligned."""
    import json

    rows = [
        json.dumps({"text": line, "original": list(o), "sanitized": list(t)}, ensure_ascii=False)
        for line, o, t in zip(original_lines, result.original_tokens, result.sanitized_tokens, strict=True)
    ]
    return "\n".join(rows) + ("\n" if rows else "")


def run(args: argparse.Namespace) -> int:
    from dpcore.rng import resolve_seed
    from dpcore.text.sanitize import (
        check_output_path,
        draw_rng,
        read_text_file,
        sanitize_lines,
        split_lines,
        write_atomic,
    )

    seed = resolve_seed(
        None if args.seed is None else check_int(args.seed, name="seed", min_value=0, max_value=2**63 - 1)
    )
    make = build_mechanism(args)
    inputs = [args.input, args.vocab]
    check_output_path(args.output, inputs=inputs)
    text = read_text_file(args.input)
    mech = make()
    lines = split_lines(text)
    draw = check_int(args.draw, name="--draw", min_value=1, max_value=1_000_000)
    # Draw 1 passes the int seed itself (recorded as such); later draws their child stream.
    result = sanitize_lines(lines, mech, seed=seed if draw == 1 else draw_rng(seed, draw), oov=args.oov)
    trailing = "\n" if text.endswith(("\n", "\r")) else ""
    body = aligned_jsonl(lines, result) if args.format == "jsonl" else "\n".join(result.lines) + trailing
    # disk full or permission denied: one clear error, nothing left behind (dpcore.files)
    write_atomic(args.output, body, inputs=inputs)
    report = {"parameters": result.parameters, "counts": result.summary(), "output": args.output}
    if args.json:
        emit_json(report)
    else:
        c = result.summary()
        print(
            f"dpcore: sanitized {c['lines']} lines, {c['tokens']} tokens ({c['replaced']} replaced, "
            f"{c['oov']} out of vocabulary, policy {args.oov}) with {mech.name} "
            f"ε={epsilon_text(mech.epsilon)}, "
            f"seed {seed} → {args.output}",
            file=sys.stderr,
        )
        print(f"dpcore: {vocabulary_line(mech.vocab)}", file=sys.stderr)
    return 0
