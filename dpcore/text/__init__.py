"""Text sanitization: SanText, SanText+ and baselines over real word embeddings.

- :mod:`dpcore.text.embeddings` — GloVe 6B 50d and BERT WordPiece embeddings, offline.
- :mod:`dpcore.text.vocab` — vocabularies V and sensitive sets V_S.
- :mod:`dpcore.text.mechanisms` — ``santext``, ``santext+``, ``feyisetan``, ``random``
  (registered in :data:`TEXT_MECHANISMS`); :mod:`dpcore.text.tem` — ``tem``;
  :mod:`dpcore.text.truncated_gumbel` — ``truncated-gumbel``.
- :mod:`dpcore.text.metrics` — N_x, S_x, S_y*, entropies and the exact bound check.
- :mod:`dpcore.text.sanitize` — text in, sanitized text out (tokenize, map, detokenize).
- :mod:`dpcore.text.corpora` — corpora that ship inside installed packages.

Importing this package is cheap: embeddings load on first use.
"""

from dpcore.text import custext as _custext  # noqa: F401  (registers custext, custext+)
from dpcore.text import dpmlm as _dpmlm  # noqa: F401  (registers dp-mlm)
from dpcore.text import mahalanobis as _mahalanobis  # noqa: F401  (registers mahalanobis)
from dpcore.text import mechanisms as _mechanisms  # noqa: F401  (registers the mechanisms)
from dpcore.text import tem as _tem  # noqa: F401  (registers tem)
from dpcore.text import truncated_gumbel as _truncated_gumbel  # noqa: F401  (registers truncated-gumbel)
from dpcore.text import vickrey as _vickrey  # noqa: F401  (registers vickrey-*)
from dpcore.text.mechanisms import (
    Feyisetan,
    RandomReplacement,
    SanText,
    SanTextPlus,
    TextMechanism,
    TextPrivacy,
    create_text_mechanism,
)
from dpcore.text.registry import TEXT_MECHANISMS

__all__ = [
    "TEXT_MECHANISMS",
    "Feyisetan",
    "RandomReplacement",
    "SanText",
    "SanTextPlus",
    "TextMechanism",
    "TextPrivacy",
    "create_text_mechanism",
]
