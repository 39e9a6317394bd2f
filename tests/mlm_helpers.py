"""A tiny randomly initialised BertForMaskedLM for tests (no download, no training)."""

from __future__ import annotations

from dpcore.models.masked_lm import MaskedLM, mlm_from_objects

VOCAB = [
    "[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]",
    "the", "cat", "sat", "on", "mat", "a", "dog", "ran", "to", "park",
    "play", "##ing", ".", "[unused0]",
]  # fmt: skip
ID = {w: i for i, w in enumerate(VOCAB)}


def tiny_mlm(seed: int = 0) -> MaskedLM:
    """A 1-layer BERT over the 19-piece ``VOCAB``, seeded."""
    import torch
    from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors
    from transformers import BertConfig, BertForMaskedLM, PreTrainedTokenizerFast

    tk = Tokenizer(models.WordPiece(dict(ID), unk_token="[UNK]"))
    tk.normalizer = normalizers.BertNormalizer(lowercase=True)
    tk.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tk.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", special_tokens=[("[CLS]", ID["[CLS]"]), ("[SEP]", ID["[SEP]"])]
    )
    tk.decoder = decoders.WordPiece()
    tok = PreTrainedTokenizerFast(
        tokenizer_object=tk,
        unk_token="[UNK]",
        pad_token="[PAD]",
        cls_token="[CLS]",
        sep_token="[SEP]",
        mask_token="[MASK]",
        model_max_length=32,
    )
    torch.manual_seed(seed)
    cfg = BertConfig(
        vocab_size=len(VOCAB),
        hidden_size=16,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=32,
        max_position_embeddings=32,
    )
    return mlm_from_objects(BertForMaskedLM(cfg).eval(), tok, name="tiny")
