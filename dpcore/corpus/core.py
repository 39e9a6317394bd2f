"""The per-batch work of corpus sanitization: a picklable spec, per-row seeding, the manifest's
privacy statement.

Every row's randomness comes from ``numpy.random.default_rng(SeedSequence([seed, row]))``, with
``row`` the row's index in the whole corpus (0-based, across all input files). A row's output
therefore depends only on the seed, the row's index and its text: never on the engine, the
number of workers or the batch size.

Fast path (``santext``, ``santext+``, ``random``, ``tem``: every
:class:`~dpcore.text.mechanisms.ExponentialTokenMechanism`): a row with k in-vocabulary tokens
draws ``g.random(2k)`` from its own generator (the first k are the keep/replace coins, the next
k the picks, exactly what ``sample_ids(row_ids, g)`` would draw), then all tokens of the batch
are mapped in one vectorised call
(:meth:`~dpcore.text.mechanisms.ExponentialTokenMechanism.sample_ids_from_uniforms`). Only the
generator set-up (about 15 µs) is a Python loop over rows.

Fallback (``feyisetan``, and any mechanism without ``sample_ids_from_uniforms``): one
``sample_ids`` call per row with that row's generator, which is much slower (one
nearest-neighbour search over V per row instead of one per batch).
"""

from __future__ import annotations

import functools
import hashlib
import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dpcore.blas import one_blas_thread
from dpcore.formatting import epsilon_text
from dpcore.validation import DPCoreError

__all__ = [
    "COUNT_COLUMNS",
    "ROW_COLUMN",
    "BatchSanitizer",
    "MechanismSpec",
    "privacy_statement",
    "row_generator",
    "vocabulary_digest",
]

#: Internal column holding each row's index in the whole corpus (never written out).
ROW_COLUMN = "__dpcore_row"
#: Internal per-row count columns returned by :meth:`BatchSanitizer.sanitize_table`.
COUNT_COLUMNS = ("__dpcore_tokens", "__dpcore_oov", "__dpcore_replaced")


@dataclass(frozen=True)
class MechanismSpec:
    """Everything needed to rebuild the same mechanism in another process (picklable).

    Parameters
    ----------
    mechanism:
        A registered text mechanism name (``santext``, ``santext+``, ``feyisetan``, …).
    epsilon:
        ε > 0.
    embedding:
        ``glove``, ``bert`` (whole words) or ``bert-wordpiece``.
    p, w:
        SanText+ parameters (None: the mechanism's defaults).
    params:
        Any other mechanism parameters, as ``(name, value)`` pairs (e.g. ``(("lam", 0.3),)``).
    vocab_size:
        Keep the N most frequent embedding words (None: the embedding's default).
    vocab_words:
        An explicit vocabulary (overrides ``vocab_size``).
    oov:
        ``"mask"`` (default) or ``"keep"`` (not private; see :mod:`dpcore.text.sanitize`).
    full_vocabulary:
        Keep the slurs and insults the default vocabulary leaves out (research;
        :mod:`dpcore.text.offensive`).
    """

    mechanism: str
    epsilon: float
    embedding: str = "glove"
    p: float | None = None
    w: float | None = None
    vocab_size: int | None = None
    vocab_words: tuple[str, ...] | None = field(default=None, repr=False)
    oov: str = "mask"
    params: tuple[tuple[str, float], ...] = ()
    full_vocabulary: bool = False

    def validate(self) -> MechanismSpec:
        """Cheap checks before any loading (one clear :class:`DPCoreError`)."""
        from dpcore.text import TEXT_MECHANISMS
        from dpcore.text.embeddings import check_embedding_name
        from dpcore.text.sanitize import OOV_POLICIES
        from dpcore.validation import check_epsilon

        TEXT_MECHANISMS.get(self.mechanism)
        check_embedding_name(self.embedding)
        check_epsilon(self.epsilon)
        if self.oov not in OOV_POLICIES:
            raise DPCoreError(f"oov must be one of {', '.join(OOV_POLICIES)}, got {self.oov!r}")
        from dpcore.text.mechanisms import mechanism_parameters

        given = [k for k, v in (("p", self.p), ("w", self.w)) if v is not None] + [k for k, _ in self.params]
        accepted = mechanism_parameters(self.mechanism)
        unknown = [k for k in given if k not in accepted]
        if unknown:
            has = ", ".join(accepted) if accepted else "none"
            raise DPCoreError(
                f"{', '.join(unknown)}: not a parameter of {self.mechanism} (its parameters: {has})"
            )
        return self

    def build(self) -> Any:
        """The mechanism (cached per process, so a worker loads V once)."""
        return _build_cached(self)


@functools.lru_cache(maxsize=4)
def _build_cached(spec: MechanismSpec) -> Any:
    from dpcore.commands.sanitize import DEFAULT_VOCAB_SIZE
    from dpcore.text import create_text_mechanism
    from dpcore.text.vocab import build_vocabulary

    spec.validate()
    size = spec.vocab_size if spec.vocab_size is not None else DEFAULT_VOCAB_SIZE[spec.embedding]
    vocab = build_vocabulary(
        spec.embedding,
        size=size,
        words=None if spec.vocab_words is None else list(spec.vocab_words),
        full=spec.full_vocabulary,
    )
    return create_text_mechanism(
        spec.mechanism, vocab=vocab, epsilon=spec.epsilon, p=spec.p, w=spec.w, **dict(spec.params)
    )


def row_generator(seed: int, row: int) -> np.random.Generator:
    """The generator of corpus row ``row``: ``default_rng(SeedSequence([seed, row]))``."""
    return np.random.default_rng(np.random.SeedSequence([seed, row]))


def vocabulary_digest(vocab: Any) -> str:
    """SHA-256 over V's words, embedding vectors and frequencies (what the output depends on)."""
    h = hashlib.sha256()
    h.update(vocab.embedding.encode())
    h.update(b"\0")
    h.update("\n".join(str(w) for w in vocab.words).encode("utf-8"))
    h.update(b"\0")
    h.update(np.ascontiguousarray(vocab.vectors, dtype="<f8").tobytes())
    h.update(np.ascontiguousarray(vocab.frequency, dtype="<f8").tobytes())
    return "sha256:" + h.hexdigest()


#: Above this many multiply-adds (|V|²·dim) the diameter is bounded instead of computed: GloVe at
#: |V| = 15,000 (1.1·10¹⁰) is exact in about a second; BERT's 30,522 × 384 (3.6·10¹¹) is bounded.
DIAMETER_EXACT_WORK = 2 * 10**10


def vocabulary_diameter(vocab: Any, *, max_elements: int = 1 << 22) -> tuple[float, bool]:
    """(D, exact): the largest Euclidean distance between two words of V, or an upper bound.

    Exact (chunked) when ``|V|²·dim`` is at most :data:`DIAMETER_EXACT_WORK`; otherwise
    ``2·max‖φ(x) − c‖`` with c the centroid, which is ≥ every d(x, y) by the triangle inequality.
    """
    vec, sq = vocab.vectors, vocab.sq_norms
    n = len(vocab)
    if n * n * vocab.dim > DIAMETER_EXACT_WORK:
        centred = vec - vec.mean(axis=0)
        return 2.0 * float(np.sqrt(np.einsum("ij,ij->i", centred, centred).max())), False
    step = max(1, max_elements // n)
    best = 0.0
    for start in range(0, n, step):
        rows = vec[start : start + step]
        d2 = sq[start : start + step, None] + sq[None, :] - 2.0 * (rows @ vec.T)
        best = max(best, float(d2.max()))
    return math.sqrt(max(best, 0.0)), True


def privacy_statement(mech: Any, *, max_tokens: int, oov: str) -> dict[str, Any]:
    """The privacy spent per document, by sequential composition over its tokens.

    Each in-vocabulary token is sanitized independently with the mechanism's per-token guarantee
    (:class:`~dpcore.text.mechanisms.TextPrivacy`); a document of n tokens therefore satisfies
    the n-fold composition, stated in the same terms (a metric bound stays a metric bound).
    """
    pr = mech.privacy
    eps, e0 = float(pr.epsilon), float(pr.epsilon0)
    out: dict[str, Any] = {"notion": pr.notion, "per_token": pr.describe(), "epsilon": eps}
    if pr.notion == "LDP":
        out["per_document"] = (
            f"{eps:g}·n-LDP for a document of n in-vocabulary tokens (sequential composition of "
            "the per-token guarantee)"
        )
        worst = eps * max_tokens
        out["diameter"] = None
    else:
        diameter, exact = vocabulary_diameter(mech.vocab)
        d_name = "the diameter of V" if exact else "an upper bound on the diameter of V"
        e0_text = "" if e0 == 0 else f" + n·ε₀ (ε₀ = {epsilon_text(e0, digits=4)})"
        out["per_document"] = (
            f"for documents x = (x₁…xₙ), x′ = (x′₁…x′ₙ) of n in-vocabulary tokens, the log-ratio of "
            f"any output's probability is at most ε·Σᵢ d(xᵢ, x′ᵢ){e0_text} with ε = {epsilon_text(eps)} "
            "per unit "
            f"of {pr.metric} (sequential composition of the per-token {pr.notion} guarantee); "
            f"since d ≤ D = {diameter:.4g} ({d_name}), at most n·(ε·D{' + ε₀' if e0 else ''})"
        )
        out["epsilon0"] = e0
        out["diameter"] = diameter
        out["diameter_exact"] = exact
        worst = max_tokens * (eps * diameter + e0) if max_tokens else 0.0
    out["max_tokens_per_document"] = int(max_tokens)
    out["worst_case_epsilon_longest_document"] = worst
    out["not_covered"] = (
        "the number of tokens of each document and the positions of out-of-vocabulary tokens are "
        "released as they are"
        + (
            "; out-of-vocabulary tokens are released IN CLEAR (--oov keep): no guarantee for them"
            if oov == "keep"
            else ""
        )
    )
    return out


class BatchSanitizer:
    """Sanitize batches of rows: tokens of each row drawn from the row's own generator.

    Parameters
    ----------
    spec:
        The mechanism to build (once per process).
    seed:
        The run's seed (every row's seed is ``[seed, row]``).
    mechanism:
        An already built mechanism (skips ``spec.build()``; used by the Python API).
    """

    def __init__(self, spec: MechanismSpec, seed: int, *, mechanism: Any = None) -> None:
        from dpcore.text.embeddings import load_tokenizer

        self.spec = spec
        self.seed = int(seed)
        self.mech = mechanism if mechanism is not None else spec.build()
        self.tokenizer = load_tokenizer(self.mech.vocab.embedding)
        self.fast = hasattr(self.mech, "sample_ids_from_uniforms")

    def sanitize(
        self, texts: list[str | None], rows: np.ndarray
    ) -> tuple[list[str | None], np.ndarray, np.ndarray, np.ndarray]:
        """Sanitize ``texts`` (None stays None) whose corpus row indices are ``rows``.

        Returns the sanitized texts and, per row, the numbers of tokens, OOV tokens and
        replaced tokens.
        """
        from dpcore.text.sanitize import OOV_TOKEN

        rows = np.asarray(rows, dtype=np.int64)
        if len(texts) != len(rows):
            raise DPCoreError("texts and row indices differ in length")
        tok = self.tokenizer
        vocab = self.mech.vocab
        tok_lists = [tok.tokenize(t) if t is not None else [] for t in texts]
        lengths = np.fromiter((len(t) for t in tok_lists), dtype=np.int64, count=len(tok_lists))
        n = int(lengths.sum())
        flat = np.fromiter((x for ts in tok_lists for x in ts), dtype=object, count=n)
        ids = vocab.ids(flat)
        known = ids >= 0
        row_of = np.repeat(np.arange(len(texts)), lengths)
        n_known = np.bincount(row_of[known], minlength=len(texts)).astype(np.int64)
        new_ids = self._draw(ids[known], n_known, rows)
        out = flat.copy()
        if new_ids.size:
            out[known] = vocab.words[new_ids]
        if self.spec.oov == "mask":
            out[~known] = OOV_TOKEN
        replaced = np.zeros(n, dtype=bool)
        replaced[known] = new_ids != ids[known]
        cuts = np.cumsum(lengths)[:-1]
        parts = np.split(out, cuts) if len(texts) else []
        result: list[str | None] = [
            None if t is None else tok.detokenize(list(p)) for t, p in zip(texts, parts, strict=True)
        ]
        oov = np.bincount(row_of[~known], minlength=len(texts)).astype(np.int64)
        rep = np.bincount(row_of[replaced], minlength=len(texts)).astype(np.int64)
        return result, lengths, oov, rep

    def _draw(self, ids: np.ndarray, n_known: np.ndarray, rows: np.ndarray) -> np.ndarray:
        """New ids for the in-vocabulary tokens of the batch (grouped by row, in row order)."""
        if ids.size == 0:
            return np.zeros(0, dtype=np.int64)
        seed = self.seed
        if self.fast:
            u_coin = np.empty(ids.size)
            u_pick = np.empty(ids.size)
            off = 0
            for k, row in zip(n_known.tolist(), rows.tolist(), strict=True):
                if k:
                    u = np.random.default_rng(np.random.SeedSequence([seed, row])).random(2 * k)
                    u_coin[off : off + k] = u[:k]
                    u_pick[off : off + k] = u[k:]
                    off += k
            return self.mech.sample_ids_from_uniforms(ids, u_coin, u_pick)
        out = np.empty(ids.size, dtype=np.int64)
        off = 0
        for k, row in zip(n_known.tolist(), rows.tolist(), strict=True):
            if k:
                out[off : off + k] = self.mech.sample_ids(ids[off : off + k], row_generator(seed, row))
                off += k
        return out

    def sanitize_table(self, table: Any, text_column: str) -> Any:
        """A pyarrow Table with :data:`ROW_COLUMN`: the text column replaced, counts appended.

        BLAS runs single-threaded here: one worker is one core. (Measured on 2 cores: a second
        BLAS thread made a batch no faster, and its busy-waiting slowed two workers to less
        than one.)
        """
        import pyarrow as pa

        texts = table.column(text_column).to_pylist()
        rows = table.column(ROW_COLUMN).to_numpy()
        with one_blas_thread():
            out, n_tok, n_oov, n_rep = self.sanitize(texts, rows)
        i = table.schema.get_field_index(text_column)
        col_type = table.schema.field(i).type
        table = table.set_column(i, table.schema.field(i), pa.array(out, type=col_type))
        for name, values in zip(COUNT_COLUMNS, (n_tok, n_oov, n_rep), strict=True):
            table = table.append_column(name, pa.array(values, type=pa.int64()))
        return table
