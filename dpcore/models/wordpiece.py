"""A WordPiece tokenizer from a ``tokenizer.json`` file, with the slice of the ``transformers``
tokenizer API that dpcore's attacks use, on top of the ``tokenizers`` package (no torch, no
transformers).

Only what :mod:`dpcore.attack.mask_inference`, :mod:`dpcore.attack.bayes` and
:mod:`dpcore.models.masked_lm` call is offered: special-token ids, ``get_vocab``,
``convert_tokens_to_ids`` / ``convert_ids_to_tokens``, ``backend_tokenizer`` (its normaliser)
and calling the tokenizer on a text, a batch of texts, or one pre-split list of words.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from dpcore.validation import DPCoreError

__all__ = ["Encoded", "WordPieceTokenizer"]


class Encoded(dict):
    """``{"input_ids": …}`` plus ``word_ids()`` for a single (pre-split) input."""

    def __init__(self, input_ids: Any, word_ids: list[int | None] | None = None) -> None:
        super().__init__(input_ids=input_ids)
        self._word_ids = word_ids

    def word_ids(self) -> list[int | None]:
        """Index of the word each id comes from (None for special tokens)."""
        if self._word_ids is None:
            raise DPCoreError("word_ids() is only available for a single input")
        return list(self._word_ids)


class WordPieceTokenizer:
    """WordPiece tokenizer read from ``folder/tokenizer.json`` (+ ``tokenizer_config.json``).

    Parameters
    ----------
    folder
        A folder holding ``tokenizer.json``; ``tokenizer_config.json`` (optional) gives
        ``model_max_length``.
    """

    def __init__(self, folder: str | Path) -> None:
        from tokenizers import Tokenizer

        folder = Path(folder)
        path = folder / "tokenizer.json"
        if not path.is_file():
            raise DPCoreError(f"no tokenizer.json in {str(folder)!r}")
        self._tok = Tokenizer.from_file(str(path))
        self._tok.no_padding()
        self._tok.no_truncation()
        self.model_max_length = 512
        cfg = folder / "tokenizer_config.json"
        if cfg.is_file():
            with open(cfg, encoding="utf-8") as fh:
                n = json.load(fh).get("model_max_length")
            if isinstance(n, int) and 0 < n < 10**6:
                self.model_max_length = n
        vocab = self._tok.get_vocab(with_added_tokens=True)
        self.unk_token, self.mask_token = "[UNK]", "[MASK]"
        ids = {t: vocab.get(t) for t in ("[CLS]", "[SEP]", "[PAD]", "[UNK]", "[MASK]")}
        if ids["[MASK]"] is None:
            raise DPCoreError(f"the tokenizer in {str(folder)!r} has no [MASK] token")
        self.cls_token_id, self.sep_token_id = ids["[CLS]"], ids["[SEP]"]
        self.pad_token_id, self.unk_token_id, self.mask_token_id = ids["[PAD]"], ids["[UNK]"], ids["[MASK]"]
        self.bos_token_id = self.eos_token_id = None
        self.all_special_ids = sorted(i for i in ids.values() if i is not None)

    @property
    def backend_tokenizer(self) -> Any:
        """The underlying ``tokenizers.Tokenizer`` (its ``normalizer`` is used by the attacks)."""
        return self._tok

    def __len__(self) -> int:
        return int(self._tok.get_vocab_size(with_added_tokens=True))

    def get_vocab(self) -> dict[str, int]:
        """Token → id."""
        return dict(self._tok.get_vocab(with_added_tokens=True))

    def convert_tokens_to_ids(self, tokens: str | list[str]) -> int | list[int]:
        """Id of each token (the unknown token's id when it is not in the vocabulary)."""
        if isinstance(tokens, str):
            tid = self._tok.token_to_id(tokens)
            return int(self.unk_token_id if tid is None else tid)
        return [self.convert_tokens_to_ids(t) for t in tokens]  # type: ignore[misc]

    def convert_ids_to_tokens(self, ids: int | list[int]) -> str | list[str]:
        """Token of each id."""
        if isinstance(ids, int):
            return str(self._tok.id_to_token(ids))
        return [str(self._tok.id_to_token(int(i))) for i in ids]

    def __call__(
        self,
        text: str | list[str],
        *,
        is_split_into_words: bool = False,
        add_special_tokens: bool = True,
    ) -> Encoded:
        """Encode one text, one pre-split word list, or (a list of texts) a batch."""
        if isinstance(text, str) or is_split_into_words:
            enc = self._tok.encode(
                text, is_pretokenized=is_split_into_words, add_special_tokens=add_special_tokens
            )
            return Encoded(list(enc.ids), list(enc.word_ids))
        encs = self._tok.encode_batch(list(text), add_special_tokens=add_special_tokens)
        return Encoded([list(e.ids) for e in encs])
