"""Builds dp-fusion-lib 0.1.0's ``DPFusion`` (DP-Fusion) *as shipped*, inside its own environment.

dpcore's worker (:mod:`dpcore.textaudit._subprocess_worker`) loads this file by path with the
managed environment's interpreter and calls :func:`build` (a rewriter: ``build_rewriter``). It
imports only the standard library, torch, transformers and safetensors (to load the model) and
``dp_fusion_lib``; no package code is copied here and nothing of it is changed. Each rewrite is
the package's message-based path, as its quick start shows it (``dp_fusion_lib/__init__.py``):
a fresh ``DPFusion(model, tokenizer)``, one ``add_message("user", text, is_private=True)`` and one
``generate(alpha=α, beta=β, max_new_tokens=T)``; its ``"text"`` is the rewrite.

The private span is marked by hand: the whole message is private, so the public context the
package builds is the message replaced by its placeholder ``_`` (``core.py`` ``_build_contexts``).
The package's tagger, which would find the spans, posts the text to a remote API
(``tagger.py``); the claim is about what happens to spans once marked, so it does not depend on
who marked them.

Offline substitute: the model. The package takes any Hugging Face causal LM (its examples load
``Qwen/Qwen2.5-0.5B-Instruct``); dpcore hands it SmolLM2-135M-Instruct, de-quantized to float32
(:func:`dpcore.textaudit.substitutes.causal_lm_folder`), with its own chat template.

Randomness: the package samples with ``torch.multinomial`` on torch's global generator; each
rewrite seeds it from the audit's rng (``torch.manual_seed``).
"""

from __future__ import annotations


def describe_library():
    """Name, version and entry points of the installed dp-fusion-lib (the worker's hello)."""
    from importlib import metadata

    import dp_fusion_lib  # noqa: F401  (the import is the check)

    version = metadata.version("dp-fusion-lib")
    return {"library": "dp-fusion-lib", "version": version, "mechanisms": ["generate"]}


class Shipped:
    """The package's ``DPFusion``, one ``generate`` call per rewrite (module docstring)."""

    def __init__(self, model, tokenizer, epsilon, alpha, max_new_tokens):
        self.model = model
        self.tokenizer = tokenizer
        self.epsilon = float(epsilon)
        self.alpha = float(alpha)
        self.beta = self.epsilon / 4.0  # the package charges 4β per token (epsilon.py:66)
        self.max_new_tokens = int(max_new_tokens)
        self.name = "dp-fusion:generate"

    def rewrite(self, texts, rng):
        import torch
        from dp_fusion_lib import DPFusion

        out = []
        for text in texts:
            dpf = DPFusion(model=self.model, tokenizer=self.tokenizer)
            dpf.add_message("user", str(text), is_private=True)
            torch.manual_seed(rng.getrandbits(63))
            released = dpf.generate(alpha=self.alpha, beta=self.beta, max_new_tokens=self.max_new_tokens)
            out.append(released["text"])
        return out


def build(epsilon, model, alpha, max_new_tokens):
    """The model and tokenizer from the folder ``model`` (float32, CPU), for :class:`Shipped`."""
    import warnings

    import torch
    from safetensors.torch import load_model
    from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer

    # generate() enters torch.amp.autocast("cuda") on every step; without CUDA torch warns and
    # disables it, which changes nothing here.
    warnings.filterwarnings("ignore", message=".*CUDA is not available.*")
    tokenizer = AutoTokenizer.from_pretrained(model, local_files_only=True, trust_remote_code=False)
    config = AutoConfig.from_pretrained(model, local_files_only=True, trust_remote_code=False)
    lm = AutoModelForCausalLM.from_config(config, dtype=torch.float32)
    load_model(lm, f"{model}/model.safetensors")
    lm.eval()
    return Shipped(lm, tokenizer, epsilon, alpha, max_new_tokens)
