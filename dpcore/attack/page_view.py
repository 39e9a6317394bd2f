"""The "Attack & utility" page's computation, without Streamlit, and its shipped default view.

The page (``pages/attack.py``) computes its results in *units* so that a widget change reuses
every unit it does not touch:

- the ε = ∞ reference of one attack group (:func:`reference_unit`; depends on V and the
  sentences, not on the mechanism);
- one (mechanism, ε, attack group) attack unit (:func:`attack_unit`);
- one (mechanism, ε) utility unit (:func:`utility_unit`) and the utility baselines once
  (:func:`baselines_unit`).

:func:`plan_view` says which units a view needs (a mechanism's ε floor, whether the Bayesian
attack has a channel for it, whether utility runs on a server). The page wraps each unit in a
Streamlit cache; ``python -m dpcore precompute-attack-page`` runs the same units for the page's
default view (:func:`default_view`) and writes them, with the view, the seed, the dpcore version
and the SHA-256 of the shipped attacker's ONNX graph, to ``dpcore/data/attack_page_default.json``.
It writes the view after the "Paper's Fig. 4 setting" button (:func:`paper_view`) the same way,
to ``dpcore/data/attack_page_paper_fig4.json`` (:data:`SHIPPED_VIEWS`, :func:`shipped_path`), so
that setting, whose utility over the BERT vocabulary alone takes a minute, opens at once too.
The page uses those files only while the attacker on disk has the SHA-256 they record
(:func:`load_shipped`) and the vocabulary it builds has the label they record (which public
vocabulary, with or without the offensive words: :class:`ShippedSet`), and only for units whose
every parameter equals the shipped view's (:class:`ShippedView`'s ``attack_unit``,
``utility_unit``, ``baselines_unit``): at a shipped view every unit, one widget change away (an ε
removed, another mechanism added) every unit the change does not touch; everything else is
computed as before. A unit is a deterministic function of its parameters
(``tests/test_app_attack_units.py``), so a shipped unit equals the one the page would compute.

The words the page shows come from here too, so that they can be tested without Streamlit: the
headline above the trade-off chart (:func:`headline`, one plain sentence with the main numbers),
the chart's two-sentence caption (:func:`tradeoff_caption`, which names only lines the chart
draws, and the masked-LM attacker's strength as the chart's ε = ∞ marker shows it), and the
attacker's own description (:func:`attacker_caption`, from its ``training_record.json``: what it
was trained on, stages on the same data told once, and why its held-out top-1 differs from the
marker's).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from dpcore.formatting import epsilon_text, percent

__all__ = [
    "ATTACKER_GRAPH",
    "COMPARISON_DEFAULTS",
    "EPSILON_GRID",
    "MAX_MLM_SENTENCE_RUNS",
    "MLM_ATTACKS",
    "SHIPPED_FOR",
    "SHIPPED_PATH",
    "SHIPPED_VIEWS",
    "TRAINING_RECORD",
    "UNSANITIZED",
    "Resources",
    "ShippedSet",
    "ShippedView",
    "View",
    "attack_unit",
    "attacker_caption",
    "attacker_sha256",
    "baselines_unit",
    "ceiling_rows",
    "claim_unit",
    "claim_view",
    "compare_documents",
    "comparison_ceiling",
    "compute_view",
    "default_parameters",
    "default_view",
    "embedding_of",
    "headline",
    "load_shipped",
    "load_shipped_set",
    "paper_view",
    "plan_view",
    "reference_unit",
    "sentences_unit",
    "shipped_for",
    "shipped_path",
    "shipped_view",
    "split_unit",
    "tradeoff_caption",
    "utility_unit",
    "view_document",
    "vocabulary_labels",
    "with_comparison_ceiling",
    "with_comparison_claims",
]

#: Attacks that need the masked LM (one group: they share forward passes).
MLM_ATTACKS = ("mlm", "bayes-mlm")
#: The shipped results of the page's default view (package data); the other shipped views lie
#: beside it (:func:`shipped_path`).
SHIPPED_PATH = Path(__file__).resolve().parents[1] / "data" / "attack_page_default.json"
#: The views that ship precomputed, by name: the page's defaults, its "Paper's Fig. 4 setting"
#: button, and the grid of every mechanism at every ε of :data:`EPSILON_GRID` with the other
#: defaults (:func:`grid_view`: a speaker's added ε or mechanism opens at once)
#: (:func:`shipped_view`).
SHIPPED_VIEWS = ("default", "paper-fig4", "grid")
#: The ε values the page offers (its ε box).
EPSILON_GRID = ("0.5", "1", "2", "3", "6", "10", "12", "14", "16", "20")
#: Sentences × (ε values + 1) × mechanisms a masked-LM attack may run per page request: about
#: 0.05 s each on 2 cores (one forward pass per word), so ≈ 35 s plus the utility part at most.
MAX_MLM_SENTENCE_RUNS = 480
#: The shipped attacker's graph: the shipped results are used only while its SHA-256 matches.
ATTACKER_GRAPH = Path(__file__).resolve().parent / "models" / "minilm-mlm" / "model.onnx"
#: The attacker's training record (read only).
TRAINING_RECORD = ATTACKER_GRAPH.parent / "training_record.json"
#: Format of the shipped file (bumped when its layout changes).
FORMAT = 1

Params = tuple[tuple[str, float | int], ...]
Progress = Callable[[int, int], None] | None


@dataclass(frozen=True)
class View:
    """Everything the page's results depend on (its widgets' values).

    ``parameters`` holds, per mechanism, its own parameters as sorted ``(name, value)`` pairs.
    """

    mechanisms: tuple[str, ...]
    epsilons: tuple[float, ...]
    parameters: tuple[tuple[str, Params], ...]
    dataset: str
    sentences: int
    attacks: tuple[str, ...]
    vocab_size: int
    n_train: int
    n_test: int
    seed: int
    #: The embedding of mechanisms that do not need their own (``glove``, or ``bert``: the
    #: paper's Fig. 4 setting).
    embedding: str = "glove"

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready form (mechanism parameters as a mapping)."""
        return {
            "mechanisms": list(self.mechanisms),
            "epsilons": [float(e) for e in self.epsilons],
            "mechanism_parameters": {m: dict(p) for m, p in self.parameters},
            "dataset": self.dataset,
            "sentences": int(self.sentences),
            "attacks": list(self.attacks),
            "vocab_size": int(self.vocab_size),
            "n_train": int(self.n_train),
            "n_test": int(self.n_test),
            "seed": int(self.seed),
            "embedding": self.embedding,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> View:
        """Inverse of :meth:`to_dict`."""
        return cls(
            mechanisms=tuple(d["mechanisms"]),
            epsilons=tuple(float(e) for e in d["epsilons"]),
            parameters=tuple((m, tuple(sorted(p.items()))) for m, p in d["mechanism_parameters"].items()),
            dataset=str(d["dataset"]),
            sentences=int(d["sentences"]),
            attacks=tuple(d["attacks"]),
            vocab_size=int(d["vocab_size"]),
            n_train=int(d["n_train"]),
            n_test=int(d["n_test"]),
            seed=int(d["seed"]),
            embedding=str(d.get("embedding", "glove")),
        )


#: The page's default widget values (the page's URL specs read them from here).
DEFAULT_MECHANISMS = ("santext", "santext+")
DEFAULT_EPSILONS = ("1", "3", "10")
DEFAULT_DATASET = "tweets"
DEFAULT_SENTENCES = 20
DEFAULT_ATTACKS = ("bayes-unigram", "mlm")
DEFAULT_VOCAB_SIZE = 5_000
DEFAULT_N_TRAIN = 1_000
DEFAULT_N_TEST = 500
DEFAULT_SEED = 0
DEFAULT_EMBEDDING = "glove"


def default_parameters(mechanism: str) -> Params:
    """A mechanism's parameters at their schema defaults (what the page's widgets start at)."""
    from dpcore.text.parameters import mechanism_parameter_specs

    return tuple(sorted((sp.name, sp.default) for sp in mechanism_parameter_specs(mechanism)))


@lru_cache(maxsize=1)
def default_view() -> View:
    """The page's view when no widget has been changed."""
    return View(
        mechanisms=DEFAULT_MECHANISMS,
        epsilons=tuple(sorted(float(e) for e in DEFAULT_EPSILONS)),
        parameters=tuple((m, default_parameters(m)) for m in DEFAULT_MECHANISMS),
        dataset=DEFAULT_DATASET,
        sentences=DEFAULT_SENTENCES,
        attacks=DEFAULT_ATTACKS,
        vocab_size=DEFAULT_VOCAB_SIZE,
        n_train=DEFAULT_N_TRAIN,
        n_test=DEFAULT_N_TEST,
        seed=DEFAULT_SEED,
        embedding=DEFAULT_EMBEDDING,
    )


def paper_view(base: View | None = None) -> View:
    """The view after the page's "Paper's Fig. 4 setting" button (:mod:`dpcore.attack.paper_setting`).

    SanText and SanText+ (the paper's p, w) over the BERT embedding at the paper's ε, with the
    masked-LM attacker, on ``base``'s data, split, seed and sentences (fewer if
    :data:`MAX_MLM_SENTENCE_RUNS` requires); ``base`` defaults to :func:`default_view`, which
    gives the shipped Fig. 4 view.
    """
    from dpcore.attack import paper_setting as paper

    base = base or default_view()
    runs = len(paper.PAPER_MECHANISMS) * (len(paper.PAPER_EPSILONS) + 1)
    parameters = []
    for m in paper.PAPER_MECHANISMS:
        prm = dict(default_parameters(m))
        if m == "santext+":
            prm.update(paper.PAPER_SANTEXT_PLUS)
        parameters.append((m, tuple(sorted(prm.items()))))
    return View(
        mechanisms=tuple(paper.PAPER_MECHANISMS),
        epsilons=tuple(sorted(float(e) for e in paper.PAPER_EPSILONS)),
        parameters=tuple(parameters),
        dataset=base.dataset,
        sentences=min(int(base.sentences), MAX_MLM_SENTENCE_RUNS // runs),
        attacks=("mlm",),
        vocab_size=base.vocab_size,
        n_train=base.n_train,
        n_test=base.n_test,
        seed=base.seed,
        embedding=paper.PAPER_EMBEDDING,
    )


@lru_cache(maxsize=1)
def grid_view() -> View:
    """The page's defaults with every registered mechanism (its default parameters) at every ε of
    :data:`EPSILON_GRID`: the units one or two widget changes away from the default view (an ε
    added, a mechanism added) that a speaker tries on stage. Shipped as ``…_grid.json``."""
    from dpcore.text import TEXT_MECHANISMS

    base = default_view()
    names = tuple(TEXT_MECHANISMS.names())
    return dataclasses.replace(
        base,
        mechanisms=names,
        epsilons=tuple(sorted(float(e) for e in EPSILON_GRID)),
        parameters=tuple((m, default_parameters(m)) for m in names),
    )


def shipped_view(name: str) -> View:
    """The view shipped under ``name`` (one of :data:`SHIPPED_VIEWS`)."""
    if name == "default":
        return default_view()
    if name == "paper-fig4":
        return paper_view()
    if name == "grid":
        return grid_view()
    raise ValueError(f"no shipped view {name!r}; choose one of {', '.join(SHIPPED_VIEWS)}")


def shipped_path(name: str = "default", base: Path | None = None) -> Path:
    """Where the view ``name`` ships: ``base`` (default :data:`SHIPPED_PATH`, read when called)
    for the default view, and beside it, ``…_paper_fig4.json`` and ``…_grid.json``, for the others."""
    base = Path(base) if base is not None else SHIPPED_PATH
    if name == "default":
        return base
    shipped_view(name)  # an unknown name is refused
    return base.with_name(f"{base.stem.removesuffix('_default')}_{name.replace('-', '_')}{base.suffix}")


# --------------------------------------------------------------------------------------------
# Resources and units
# --------------------------------------------------------------------------------------------
def embedding_of(mechanism: str, chosen: str = "glove") -> str:
    """The embedding a mechanism works over: the one it needs, else the chosen one."""
    from dpcore.text.registry import required_embedding

    return required_embedding(mechanism) or chosen


@dataclass
class Resources:
    """Loaders of the vocabularies, the masked LM, the sentences and the split.

    The page passes its cached loaders; the command uses these defaults (memoized here).
    """

    vocab: Callable[[int, str], Any] | None = None
    mlm: Callable[[], Any] | None = None
    _memo: dict[Any, Any] = field(default_factory=dict)

    def get_vocab(self, vsize: int, emb: str = "glove") -> Any:
        if self.vocab is not None:
            return self.vocab(vsize, emb)
        key = ("vocab", vsize, emb)
        if key not in self._memo:
            from dpcore.text.vocab import build_vocabulary

            self._memo[key] = build_vocabulary(emb, size=vsize if emb == "glove" else None)
        return self._memo[key]

    def get_mlm(self) -> Any:
        if self.mlm is not None:
            return self.mlm()
        if "mlm" not in self._memo:
            from dpcore.models.masked_lm import load_mlm

            self._memo["mlm"] = load_mlm()
        return self._memo["mlm"]

    def mechanism(self, mech: str, eps: float, params: Params, vsize: int, emb: str = "glove") -> Any:
        from dpcore.text import create_text_mechanism

        return create_text_mechanism(
            mech, vocab=self.get_vocab(vsize, embedding_of(mech, emb)), epsilon=eps, **dict(params)
        )


def sentences_unit(data: str, n: int, seed: int) -> list[str]:
    """The attacked sentences."""
    from dpcore.attack.datasets import load_labelled_dataset
    from dpcore.attack.experiment import sample_attack_sentences

    return sample_attack_sentences(load_labelled_dataset(data), n, seed=seed)


def split_unit(data: str, ntrain: int, ntest: int) -> Any:
    """The fixed train/test split (split seed 0)."""
    from dpcore.attack.datasets import load_labelled_dataset, split_dataset

    return split_dataset(load_labelled_dataset(data), n_train=ntrain, n_test=ntest, split_seed=0)


def reference_unit(
    res: Resources,
    sentences: Sequence[str],
    group: Sequence[str],
    vsize: int,
    emb: str = "glove",
    progress: Progress = None,
) -> dict:
    """ε = ∞ reference of one attack group: depends on V and the sentences, not the mechanism."""
    from dpcore.attack.experiment import attack_reference
    from dpcore.text import create_text_mechanism

    mlm = res.get_mlm() if set(MLM_ATTACKS) & set(group) else None
    mech = create_text_mechanism("santext", vocab=res.get_vocab(vsize, emb), epsilon=1.0)
    return attack_reference(list(sentences), mech, attacks=tuple(group), mlm=mlm, progress=progress)


def attack_unit(
    res: Resources,
    mech: str,
    eps: float,
    params: Params,
    sentences: Sequence[str],
    reference: dict,
    group: Sequence[str],
    vsize: int,
    seed: int,
    progress: Progress = None,
    emb: str = "glove",
) -> dict:
    """One (mechanism, ε, attack group) unit (:func:`dpcore.attack.experiment.attack_at_epsilon`)."""
    from dpcore.attack.experiment import attack_at_epsilon

    mlm = res.get_mlm() if set(MLM_ATTACKS) & set(group) else None
    return attack_at_epsilon(
        list(sentences),
        res.mechanism(mech, eps, params, vsize, emb),
        reference,
        attacks=tuple(group),
        mlm=mlm,
        seed=seed,
        progress=progress,
    )


def utility_unit(
    res: Resources,
    split: Any,
    mech: str,
    eps: float,
    params: Params,
    vsize: int,
    seed: int,
    emb: str = "glove",
) -> dict:
    """One (mechanism, ε) utility row."""
    from dpcore.attack.utility import utility_at_epsilon

    return utility_at_epsilon(split, res.mechanism(mech, eps, params, vsize, emb), seed=seed)


def baselines_unit(res: Resources, split: Any, vsize: int, seed: int, emb: str = "glove") -> dict:
    """Unsanitized, random-replacement (over the chosen embedding's V) and majority-class accuracy."""
    from dpcore.attack.utility import utility_baselines

    return utility_baselines(split, res.get_vocab(vsize, emb), seed=seed)


def plan_view(res: Resources, view: View) -> tuple[dict[str, dict[str, Any]], list[str]]:
    """Which units each mechanism of ``view`` runs, and a note for each limit met.

    Returns
    -------
    tuple
        ``{mechanism: {"params", "eps", "fast", "slow", "utility"}}`` (``fast``: the Bayesian
        unigram attack; ``slow``: the masked-LM group) and the notes (Markdown, one line each).
    """
    from dpcore.attack.plan import plan_mechanism

    fast = [a for a in view.attacks if a not in MLM_ATTACKS]
    slow = tuple(a for a in view.attacks if a in MLM_ATTACKS)
    params = dict(view.parameters)
    plan: dict[str, dict[str, Any]] = {}
    notes: list[str] = []
    for m in view.mechanisms:
        prm = params[m]
        pl = plan_mechanism(
            m,
            view.epsilons,
            view.attacks,
            lambda e, m=m, prm=prm: res.mechanism(m, e, prm, view.vocab_size, view.embedding),
            res.get_vocab(view.vocab_size, embedding_of(m, view.embedding)),
        )
        lines = pl.notes(view.attacks)
        if pl.contextual:  # the page's own policy: no utility for a contextual mechanism
            lines.insert(
                len(lines) - int(pl.refuted),
                f"**{m}**: utility is not computed on this server (one masked-LM pass per token of "
                f"{view.n_train + view.n_test:,} sentences); run `python -m dpcore utility --mechanism {m}`.",
            )
        notes += lines
        plan[m] = {
            "params": prm,
            "eps": pl.epsilons,
            "fast": [a for a in fast if a in pl.attacks],
            "slow": tuple(a for a in slow if a in pl.attacks),
            "utility": not pl.contextual,
            "mechanism_parameters": pl.probe.params() if pl.probe is not None else {},
        }
    return plan, notes


def compute_view(view: View, res: Resources | None = None, progress: Progress = None) -> dict[str, Any]:
    """Every unit of ``view``, in the page's order (the results part of the shipped file).

    Returns
    -------
    dict
        ``baselines``, ``attack_units`` (``mechanism``, ``epsilon``, ``attacks``, ``result``),
        ``utility_units`` (``mechanism``, ``epsilon``, ``row``), ``mechanism_parameters``,
        ``vocabulary`` (:func:`vocabulary_labels`: which public vocabulary the rows used) and,
        for the default view only, ``comparison_ceiling`` (the ε = ∞ end of the shipped
        mechanism comparison, which older comparison files lack).
    """
    res = res or Resources()
    plan, _ = plan_view(res, view)
    sents = sentences_unit(view.dataset, view.sentences, view.seed)
    split = split_unit(view.dataset, view.n_train, view.n_test)
    total = 2 + sum(len(p["eps"]) * (bool(p["fast"]) + bool(p["slow"]) + p["utility"]) for p in plan.values())
    done = [0]

    def tick() -> None:
        done[0] += 1
        if progress is not None:
            progress(done[0], total)

    emb = view.embedding
    out: dict[str, Any] = {"baselines": baselines_unit(res, split, view.vocab_size, view.seed, emb)}
    tick()
    refs: dict[tuple[tuple[str, ...], str], dict] = {}
    attack_units: list[dict] = []
    utility_units: list[dict] = []
    for mech, pl in plan.items():
        for e in pl["eps"]:
            for group in (tuple(pl["fast"]), pl["slow"]):
                if not group:
                    continue
                key = (group, embedding_of(mech, emb))
                if key not in refs:
                    refs[key] = reference_unit(res, sents, group, view.vocab_size, key[1])
                unit = attack_unit(
                    res, mech, e, pl["params"], sents, refs[key], group, view.vocab_size, view.seed, emb=emb
                )
                attack_units.append({"mechanism": mech, "epsilon": e, "attacks": list(group), "result": unit})
                tick()
            if pl["utility"]:
                row = utility_unit(res, split, mech, e, pl["params"], view.vocab_size, view.seed, emb)
                utility_units.append({"mechanism": mech, "epsilon": e, "row": row})
                tick()
    out["attack_units"] = attack_units
    out["utility_units"] = utility_units
    out["mechanism_parameters"] = {m: pl["mechanism_parameters"] for m, pl in plan.items()}
    out["vocabulary"] = vocabulary_labels(res, view)
    if view == default_view():  # the ε = ∞ end of the shipped mechanism comparison
        out["comparison_ceiling"] = comparison_ceiling(res)
    tick()
    return _jsonable(out)


def vocabulary_labels(res: Resources, view: View) -> dict[str, str | None]:
    """Embedding → the label of the public vocabulary its mechanisms drew from in ``view`` (which
    words, and whether the offensive ones were left out: ``Vocabulary.label``; None where the
    vocabulary has no label)."""
    embs = dict.fromkeys(embedding_of(m, view.embedding) for m in view.mechanisms)
    return {e: getattr(res.get_vocab(view.vocab_size, e), "label", None) for e in embs}


# --------------------------------------------------------------------------------------------
# The shipped file
# --------------------------------------------------------------------------------------------
def _jsonable(obj: Any) -> Any:
    """``obj`` as it reads back from JSON (tuples → lists, numpy scalars → Python numbers)."""
    from dpcore.jsonutil import dumps

    return json.loads(dumps(obj))


_SHA_CACHE: dict[tuple[str, int, int], str] = {}


def attacker_sha256(path: Path = ATTACKER_GRAPH) -> str | None:
    """SHA-256 of the attacker's ONNX graph (None when it is not installed); cached per file state."""
    try:
        st = path.stat()
    except OSError:
        return None
    key = (str(path), st.st_size, st.st_mtime_ns)
    if key not in _SHA_CACHE:
        h = hashlib.sha256()
        with path.open("rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                h.update(block)
        _SHA_CACHE[key] = h.hexdigest()
    return _SHA_CACHE[key]


#: What each shipped view is, in words (the file's ``what``; the page's caption names it).
_VIEW_WORDS = {
    "default": "default view",
    "paper-fig4": '"Paper\'s Fig. 4 setting" view',
    "grid": "grid of every mechanism at every ε (other settings at their defaults)",
}


#: What each shipped view holds, as the page's caption says it ("… precomputed for …").
SHIPPED_FOR = {
    "default": "the default settings",
    "paper-fig4": "the paper's Fig. 4 setting",
    "grid": "every mechanism at every ε with the other settings at their defaults",
}


def shipped_listing(names: Sequence[str]) -> str:
    """The shipped views ``names`` in words, for the page's caption.

    Examples
    --------
    >>> shipped_listing(["default", "paper-fig4"])
    "the default settings and the paper's Fig. 4 setting"
    """
    kinds = [SHIPPED_FOR.get(n, n) for n in names]
    return kinds[0] if len(kinds) == 1 else f"{', '.join(kinds[:-1])} and {kinds[-1]}"


def _view_name(view: View) -> str | None:
    return next((n for n in SHIPPED_VIEWS if shipped_view(n) == view), None)


def view_document(view: View, results: dict[str, Any]) -> dict[str, Any]:
    """The shipped file's content: the view (and its name in :data:`SHIPPED_VIEWS`), its seed,
    versions, the attacker's hash, results."""
    from dpcore import __version__

    name = _view_name(view)
    return {
        "format": FORMAT,
        "what": f"the Attack & utility page's {_VIEW_WORDS.get(name or '', 'view')}: "
        "python -m dpcore precompute-attack-page",
        "name": name,
        "dpcore_version": __version__,
        "attacker": {
            "graph": "dpcore/attack/models/minilm-mlm/model.onnx",
            "sha256": attacker_sha256(),
        },
        "parameters": view.to_dict(),
        "seed": view.seed,
        "results": results,
    }


@dataclass(frozen=True)
class ShippedView:
    """The shipped results, indexed by unit."""

    view: View
    document: dict[str, Any]

    @property
    def name(self) -> str:
        """The view's name in :data:`SHIPPED_VIEWS` (older files name none: the default)."""
        return str(self.document.get("name") or "default")

    @property
    def baselines(self) -> dict:
        return self.document["results"]["baselines"]

    @property
    def vocabulary(self) -> dict[str, str | None]:
        """Embedding → the vocabulary label the results were computed with (empty in older files)."""
        return dict(self.document["results"].get("vocabulary") or {})

    def _same(self, mech: str, params: Params, data: str, vsize: int, seed: int, emb: str) -> bool:
        v = self.view
        used = embedding_of(mech, emb)
        return (
            mech in v.mechanisms
            and tuple(sorted(params)) == dict(v.parameters)[mech]
            and (data, int(seed)) == (v.dataset, v.seed)
            and used == embedding_of(mech, v.embedding)
            # the vocabulary size is GloVe's only (BERT's vocabulary is whole)
            and (used != "glove" or int(vsize) == v.vocab_size)
        )

    def attack_unit(
        self,
        mech: str,
        eps: float,
        params: Params,
        data: str,
        n: int,
        group: Sequence[str],
        vsize: int,
        seed: int,
        emb: str = "glove",
    ) -> dict | None:
        """The shipped unit with exactly these parameters (any view that shares it), or None."""
        if not self._same(mech, params, data, vsize, seed, emb) or int(n) != self.view.sentences:
            return None
        return self.attack(mech, eps, group)

    def utility_unit(
        self,
        mech: str,
        eps: float,
        params: Params,
        data: str,
        vsize: int,
        ntrain: int,
        ntest: int,
        seed: int,
        emb: str = "glove",
    ) -> dict | None:
        """The shipped utility row with exactly these parameters, or None."""
        if not self._same(mech, params, data, vsize, seed, emb) or (int(ntrain), int(ntest)) != (
            self.view.n_train,
            self.view.n_test,
        ):
            return None
        return self.utility(mech, eps)

    def baselines_unit(
        self, data: str, vsize: int, ntrain: int, ntest: int, seed: int, emb: str = "glove"
    ) -> dict | None:
        """The shipped baselines for exactly this split, V and seed, or None."""
        v = self.view
        if (data, int(ntrain), int(ntest), int(seed), emb) != (
            v.dataset,
            v.n_train,
            v.n_test,
            v.seed,
            v.embedding,
        ):
            return None
        if emb == "glove" and int(vsize) != v.vocab_size:
            return None
        return self.baselines

    def attack(self, mech: str, eps: float, group: Sequence[str]) -> dict | None:
        """The (mechanism, ε, attack group) unit, or None when the file does not hold it."""
        for u in self.document["results"]["attack_units"]:
            if (
                u["mechanism"] == mech
                and float(u["epsilon"]) == float(eps)
                and tuple(u["attacks"]) == tuple(group)
            ):
                return u["result"]
        return None

    def utility(self, mech: str, eps: float) -> dict | None:
        """The (mechanism, ε) utility row, or None."""
        for u in self.document["results"]["utility_units"]:
            if u["mechanism"] == mech and float(u["epsilon"]) == float(eps):
                return u["row"]
        return None


def load_shipped(path: Path = SHIPPED_PATH, *, check_attacker: bool = True) -> ShippedView | None:
    """The shipped default view, or None when the file is missing, unreadable, of another format,
    or made with another attacker (its SHA-256 differs from the graph on disk)."""
    try:
        doc = json.loads(Path(path).read_text(encoding="utf-8"))
        if doc.get("format") != FORMAT:
            return None
        view = View.from_dict(doc["parameters"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if check_attacker and doc.get("attacker", {}).get("sha256") != attacker_sha256():
        return None
    return ShippedView(view=view, document=doc)


@dataclass
class ShippedSet:
    """Every shipped view (:data:`SHIPPED_VIEWS`), asked for a unit as one.

    ``vocabulary_label(vsize, embedding)`` gives the label of the vocabulary the page would build
    now; a shipped view is used only while the labels it records are those (checked once per
    view, when a unit is first looked up in it), so results computed over another vocabulary
    (the full one, an older list of offensive words) are never shown as today's.
    """

    views: tuple[ShippedView, ...]
    vocabulary_label: Callable[[int, str], str | None] | None = None
    _usable: dict[str, bool] = field(default_factory=dict)

    def usable(self, shipped: ShippedView, mechanism: str | None = None) -> bool:
        """Whether ``shipped`` was computed over the vocabularies the page builds now: the one
        ``mechanism`` draws from, or (None) every one its view uses. Checked per embedding, so
        that a unit over GloVe never builds the BERT vocabulary to check the label of another."""
        v = shipped.view
        mechs = v.mechanisms if mechanism is None else (mechanism,)
        return all(
            self._same_vocabulary(shipped, e)
            for e in dict.fromkeys(embedding_of(m, v.embedding) for m in mechs)
        )

    def _same_vocabulary(self, shipped: ShippedView, embedding: str) -> bool:
        """Whether the label ``shipped`` records for ``embedding`` is the page's now (once each)."""
        if self.vocabulary_label is None:
            return True
        key = f"{shipped.name}|{embedding}"
        if key not in self._usable:
            label = self.vocabulary_label(shipped.view.vocab_size, embedding)
            self._usable[key] = shipped.vocabulary.get(embedding) == label
        return self._usable[key]

    def _first(
        self, ask: Callable[[ShippedView], dict | None], mechanism: str | None = None
    ) -> tuple[dict | None, ShippedView | None]:
        for shipped in self.views:
            found = ask(shipped)
            if found is not None and self.usable(shipped, mechanism):
                return found, shipped
        return None, None

    def attack_unit(self, mech: str, *args: Any, **kwargs: Any) -> dict | None:
        """:meth:`ShippedView.attack_unit` of the first shipped view that holds it, or None."""
        return self._first(lambda s: s.attack_unit(mech, *args, **kwargs), mech)[0]

    def utility_unit(self, mech: str, *args: Any, **kwargs: Any) -> dict | None:
        """:meth:`ShippedView.utility_unit` of the first shipped view that holds it, or None."""
        return self._first(lambda s: s.utility_unit(mech, *args, **kwargs), mech)[0]

    def baselines_unit(self, *args: Any, **kwargs: Any) -> dict | None:
        """:meth:`ShippedView.baselines_unit` of the first shipped view that holds it, or None
        (the baselines run over the view's own embedding: only its label is checked)."""
        for shipped in self.views:
            found = shipped.baselines_unit(*args, **kwargs)
            if found is not None and self._same_vocabulary(shipped, shipped.view.embedding):
                return found
        return None

    def named(self, view: View) -> ShippedView | None:
        """The shipped view that is exactly ``view`` (and usable), or None."""
        return next((s for s in self.views if s.view == view and self.usable(s)), None)


def load_shipped_set(
    base: Path | None = None, vocabulary_label: Callable[[int, str], str | None] | None = None
) -> ShippedSet:
    """Every shipped view that loads (:func:`load_shipped` of each :func:`shipped_path`)."""
    views = [load_shipped(shipped_path(n, base)) for n in SHIPPED_VIEWS]
    return ShippedSet(tuple(v for v in views if v is not None), vocabulary_label)


def shipped_for(view: View, path: Path = SHIPPED_PATH) -> ShippedView | None:
    """The shipped results when ``view`` is exactly the shipped (default) view and the attacker
    on disk is the one they were computed with; None otherwise (compute as usual)."""
    if view != default_view():
        return None
    shipped = load_shipped(path)
    if shipped is None or shipped.view != view:
        return None
    return shipped


def compare_documents(old: Any, new: Any, *, where: str = "results", rel: float = 1e-9) -> list[str]:
    """Differences between two result trees (``seconds`` keys ignored; floats to ``rel``)."""
    if isinstance(old, dict) and isinstance(new, dict):
        out: list[str] = []
        for k in sorted(set(old) | set(new)):
            if k == "seconds":
                continue
            if k not in old or k not in new:
                out.append(f"{where}.{k}: only in the {'new' if k in new else 'shipped'} results")
            else:
                out += compare_documents(old[k], new[k], where=f"{where}.{k}", rel=rel)
        return out
    if isinstance(old, list) and isinstance(new, list):
        if len(old) != len(new):
            return [f"{where}: {len(old)} items shipped, {len(new)} recomputed"]
        return [
            d
            for i, (a, b) in enumerate(zip(old, new, strict=True))
            for d in compare_documents(a, b, where=f"{where}[{i}]", rel=rel)
        ]
    if (
        isinstance(old, bool)
        or isinstance(new, bool)
        or not (isinstance(old, (int, float)) and isinstance(new, (int, float)))
    ):
        return [] if old == new else [f"{where}: shipped {old!r}, recomputed {new!r}"]
    if math.isclose(float(old), float(new), rel_tol=rel, abs_tol=1e-12):
        return []
    return [f"{where}: shipped {old!r}, recomputed {new!r}"]


# --------------------------------------------------------------------------------------------
# What the attacker is
# --------------------------------------------------------------------------------------------
_SOURCE_WORDS = {
    "pang_lee": "movie-review sentences (Pang & Lee)",
    "wiki": "Wikipedia sentences",
    "wordnet": "WordNet glosses and examples",
    "tweets": "public tweets",
    "lee": "Lee news sentences",
}


_NUMBER_WORDS = {1: "one", 2: "two", 3: "three", 4: "four", 5: "five", 6: "six", 7: "seven", 8: "eight"}


def _count(n: int, one: str, many: str | None = None) -> str:
    """``n`` things in words: "one CPU thread", "4 CPU threads"."""
    return f"{_NUMBER_WORDS.get(n, f'{n:,}')} {one if n == 1 else (many or one + 's')}"


def _stage_groups(stages: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Consecutive training stages on the same sources and the same kind of device, as one
    (their epochs, minutes and runs added up): two GPU runs on the same tweets are told once."""
    groups: list[dict[str, Any]] = []
    for rec in stages:
        corpus, cfg = rec["corpus"], rec["config"]
        gpu = str(rec.get("device", "cpu")).startswith("cuda")
        key = (tuple(sorted(corpus["sources"].items())), gpu)
        minutes = float(rec.get("train_seconds", 60 * cfg.get("minutes", 0))) / 60
        epochs = float(cfg["epochs"]) if cfg.get("epochs") else None
        if groups and groups[-1]["key"] == key:
            g = groups[-1]
            g["runs"] += 1
            g["minutes"] += minutes
            g["epochs"] = None if g["epochs"] is None or epochs is None else g["epochs"] + epochs
            g["threads"] = max(g["threads"], int(cfg.get("threads", 1)))
        else:
            groups.append(
                {
                    "key": key,
                    "sources": corpus["sources"],
                    "gpu": gpu,
                    "runs": 1,
                    "minutes": minutes,
                    "epochs": epochs,
                    "threads": int(cfg.get("threads", 1)),
                }
            )
    return groups


def _group_words(g: dict[str, Any]) -> str:
    """One group of training stages in words: how long, where, on what."""
    items = sorted(g["sources"].items(), key=lambda kv: -kv[1])
    sources = ", ".join(f"{v:,} {_SOURCE_WORDS.get(k, k)}" for k, v in items)
    where = "on a GPU" if g["gpu"] else f"on {_count(g['threads'], 'CPU thread')}"
    minutes = f"{max(g['minutes'], 1):.0f} min"
    runs = f"{_count(g['runs'], 'run')}, " if g["runs"] > 1 else ""
    how_long = (
        f"{g['epochs']:g} epochs ({runs}{minutes})"
        if g["epochs"]
        else f"{minutes}" + (f" ({runs.rstrip(', ')})" if runs else "")
    )
    return f"for {how_long} {where} on {sources}"


def attacker_caption(
    record_path: Path = TRAINING_RECORD, *, top1_here: float | None = None, sentences: int | None = None
) -> str:
    """What the shipped masked-LM attacker is, from its training record (Markdown, one paragraph).

    Says what it was trained on (sources, epochs, time, device; stages on the same data told
    once), how much of held-out text it names (top-1 and top-5), why that differs from its top-1
    on the chart (``top1_here``: its top-1 on the attacked ``sentences``, unsanitized, which the
    chart's ε = ∞ marker shows), and what it is not: a small model with no world knowledge, so a
    high defense rate says this attacker failed, not that no attacker could succeed.
    """
    try:
        rec = json.loads(Path(record_path).read_text(encoding="utf-8"))
        from dpcore.attack.training import training_stages

        stages = training_stages(rec, limit=8)
        base = str(stages[0].get("base_model", "a small sentence encoder"))
        if "(" in base:  # "gt-… (sentence-transformers/all-MiniLM-L6-v2), …": the public name
            base = base.split("(", 1)[1].split(")", 1)[0].split("/")[-1]
        groups = _stage_groups(stages)
        trained = ("fine-tuned first " if len(groups) > 1 else "fine-tuned ") + _group_words(groups[0])
        if len(groups) > 1:
            trained += ", then " + ", then ".join(_group_words(g) for g in groups[1:])
        on_pool = "tweets" in rec["corpus"]["sources"]
        n_held = int(rec.get("heldout_eval_words", 0))
        held = (
            f"{n_held:,} tweets the attack draws from (none of which it trained on)"
            if on_pool
            else f"{n_held:,} held-out sentences of its training sources"
        )
        top1 = float(rec["heldout_top1"])
        what = (
            f"**The masked-LM attacker** is {base}, a small model (6 layers) {trained}. "
            f"Masking one word in each of {held}, it names {percent(top1)} at its first guess "
            f"and {percent(float(rec['heldout_top5']))} within five guesses. "
        )
        if top1_here is not None:
            what += (
                f"On the chart it names {percent(top1_here)} of the original words (its ε = ∞ "
                f"marker), because there it is scored on every vocabulary word of the "
                f"{sentences or 'attacked'} attacked sentences, and a word it cannot spell as one "
                "piece of its own vocabulary counts as missed, where its training test masked only "
                "such one-piece words. "
            )
        seen = "" if on_pool else " and never saw tweets"
    except (OSError, ValueError, KeyError, TypeError):
        what, seen = "**The masked-LM attacker**'s training record is not installed. ", ""
    return (
        what + f"It is not a large language model: it has no world knowledge{seen}, so the ε = ∞ "
        "point (its top-1 on **unsanitized** text) is its ceiling. "
        "**A high defense rate says this attacker failed, not that no attacker could succeed**; "
        "the Bayesian attacker, which knows the sanitizer, is the stronger reference."
    )


# --------------------------------------------------------------------------------------------
# The page's words: a headline above the trade-off chart and a two-sentence caption under it
# --------------------------------------------------------------------------------------------
#: Each attacker in a sentence.
_ATTACKER_WORDS = {
    "bayes-unigram": "the Bayesian attacker",
    "bayes-mlm": "the Bayesian attacker with a masked-LM prior",
    "mlm": "the masked-LM attacker",
}


def _attacker(a: str) -> str:
    return _ATTACKER_WORDS.get(a, a)


def _shown(attack_rows: Sequence[dict[str, Any]], utility_rows: Sequence[dict[str, Any]]) -> list[dict]:
    """The attack rows the trade-off chart draws: those whose (mechanism, ε) has an accuracy."""
    acc = {(u["mechanism"], float(u["epsilon"])): float(u["accuracy"]) for u in utility_rows}
    return [
        {**r, "accuracy": acc[(r["mechanism"], float(r["epsilon"]))]}
        for r in attack_rows
        if (r["mechanism"], float(r["epsilon"])) in acc
    ]


def headline(
    attack_rows: Sequence[dict[str, Any]], utility_rows: Sequence[dict[str, Any]], baselines: dict[str, Any]
) -> str:
    """The page's story in one plain sentence, with its main numbers.

    For the first mechanism with results: from its smallest to its largest ε, the accuracy of a
    classifier trained on its sanitized text (and on the original text), and the share of the
    original words the strongest attacker at the largest ε names (1 − defense rate). Empty when
    there is nothing to say.

    Parameters
    ----------
    attack_rows
        Attack rows (``mechanism``, ``attack``, ``epsilon``, ``defense_rate``).
    utility_rows
        Utility rows (``mechanism``, ``epsilon``, ``accuracy``).
    baselines
        ``accuracy_unsanitized``.
    """
    mechs = list(
        dict.fromkeys([r["mechanism"] for r in utility_rows] + [r["mechanism"] for r in attack_rows])
    )
    if not mechs:
        return ""
    m = mechs[0]
    acc = {float(u["epsilon"]): float(u["accuracy"]) for u in utility_rows if u["mechanism"] == m}
    mine = [r for r in attack_rows if r["mechanism"] == m]
    eps = sorted(set(acc) | {float(r["epsilon"]) for r in mine})
    lo, hi = eps[0], eps[-1]
    span = f"from ε = {epsilon_text(lo)} to {epsilon_text(hi)}" if hi > lo else f"at ε = {epsilon_text(lo)}"

    def both(values: dict[float, float]) -> str:
        return (
            f"{percent(values[lo])} → {percent(values[hi])}"
            if hi > lo and lo in values and hi in values
            else percent(values[max(values)])
        )

    parts: list[str] = []
    if acc:
        unsan = baselines.get("accuracy_unsanitized")
        orig = "" if unsan is None else f" ({percent(unsan)} on the original text)"
        from dpcore.text.registry import TEXT_MECHANISMS  # lazy: the page's light imports

        name = TEXT_MECHANISMS.display_name(m) if m in TEXT_MECHANISMS else m
        parts.append(f"{name}'s sanitized text trains a classifier to {both(acc)} accuracy{orig}")
    if mine:
        at_hi = [r for r in mine if float(r["epsilon"]) == max(float(x["epsilon"]) for x in mine)]
        best = min(at_hi, key=lambda r: float(r["defense_rate"]))["attack"]
        named = {float(r["epsilon"]): 1.0 - float(r["defense_rate"]) for r in mine if r["attack"] == best}
        parts.append(f"{_attacker(best)} names {both(named)} of the original words")
    text = " and ".join(parts) if len(parts) < 2 else f"{parts[0]}, while {parts[1]}"
    return f"{span[0].upper()}{span[1:]}, {text}."


def tradeoff_caption(attack_rows: Sequence[dict[str, Any]], utility_rows: Sequence[dict[str, Any]]) -> str:
    """The trade-off chart's caption: two plain sentences that name only what the chart draws.

    The first says how to read a point and the hollow ε = ∞ markers, with each attacker's top-1
    on the original text (the number its marker shows). The second is about the claims' floors
    where the chart draws them (rows with ``claim_defense_floor`` and an accuracy: where they lie,
    and that a floor at 0 lets an attacker name every word), and otherwise says why there is none.
    """
    shown = _shown(attack_rows, utility_rows)
    tops: dict[str, float] = {}
    for r in shown:
        if r.get("attacker_top1_unsanitized") is not None:
            tops.setdefault(r["attack"], float(r["attacker_top1_unsanitized"]))
    first = "Each point is one ε (right: a classifier learns more; up: the attacker misses more words)"
    if len(tops) == 1:
        ((a, t),) = tops.items()
        first += (
            f"; the hollow circle is {_attacker(a)} on the original text (ε = ∞), where it names {percent(t)}"
        )
    elif tops:
        names = " and ".join(
            f"{_attacker(a)} names {percent(t)}" if i == 0 else f"{_attacker(a)} {percent(t)}"
            for i, (a, t) in enumerate(tops.items())
        )
        first += f"; the hollow circles are the attackers on the original text (ε = ∞), where {names}"
    first += "."
    floors = [r for r in shown if r.get("claim_defense_floor") is not None]
    if floors:
        second = (
            "The black dashed lines are the claims' floors, which no attacker that sees only the "
            "sanitized word goes below if the claim holds"
        )
        at = sorted({float(r["epsilon"]) for r in floors})
        nonzero = [float(r["epsilon"]) for r in floors if float(r["claim_defense_floor"]) > 1e-12]
        tail = [e for e in at if not nonzero or e > max(nonzero)]  # ε from which every floor is 0
        if tail and tail[0] == at[0]:
            second += "; here they lie at 0: the claims allow naming every word"
        elif tail:
            second += (
                f"; from ε = {epsilon_text(tail[0])} on they lie at 0: the claims then allow "
                "naming every word"
            )
        elif len(nonzero) < len(floors):
            second += "; where one lies at 0, its claim allows naming every word"
        second += "."
    elif shown and "bayes-unigram" not in {r["attack"] for r in shown}:
        second = (
            "No claim's floor is drawn: a claim bounds only an attacker that sees the sanitized "
            "word alone, and the attackers shown also read the sentence around it."
        )
    else:
        second = "Error bars are 95% intervals." if shown else ""
    return f"{first} {second}".strip()


# --------------------------------------------------------------------------------------------
# The attacker's ceiling: its top-1 on unsanitized text, as the ε = ∞ row
# --------------------------------------------------------------------------------------------
#: The ``mechanism`` cell of the ε = ∞ rows (the reference does not depend on the mechanism).
UNSANITIZED = "unsanitized (ε = ∞)"


def ceiling_rows(rows: Sequence[dict[str, Any]], confidence: float = 0.95) -> list[dict[str, Any]]:
    """One ε = ∞ row per attacker (and scored-position set): defense rate 1 − its top-1 on
    unsanitized text, with a Clopper–Pearson interval over the same positions.

    ``rows`` are attack rows (``attack``, ``tokens``, ``attacker_top1_unsanitized``).
    """
    from dpcore.stats import cp_lower, cp_upper

    alpha = (1.0 - confidence) / 2.0
    seen: dict[tuple[str, int, float], dict[str, Any]] = {}
    for r in rows:
        top1 = r.get("attacker_top1_unsanitized")
        if top1 is None or r.get("tokens") is None:
            continue
        key = (str(r["attack"]), int(r["tokens"]), float(top1))
        if key in seen:
            continue
        n = key[1]
        n_def = round(n * (1.0 - key[2]))
        seen[key] = {
            "mechanism": UNSANITIZED,
            "attack": key[0],
            "epsilon": math.inf,
            "defense_rate": n_def / n if n else float("nan"),
            "ci_low": float(cp_lower(n_def, n, alpha)) if n else float("nan"),
            "ci_high": float(cp_upper(n_def, n, alpha)) if n else float("nan"),
            "tokens": n,
            "kept_by_sanitizer": n,
            "kept_share": 1.0 if n else float("nan"),
            "attacker_top1_unsanitized": key[2],
        }
    return list(seen.values())


#: ``bench/compare_mechanisms.py``'s defaults: the shipped comparison's sentences, V and split.
COMPARISON_DEFAULTS = {
    "dataset": "tweets",
    "sentences": 30,
    "vocab_size": 15_000,
    "n_train": 1_000,
    "n_test": 300,
    "seed": 0,
}
_CEILING_KEYS = ("attacker_top1_unsanitized_bayes", "attacker_top1_unsanitized_mlm", "accuracy_unsanitized")


def comparison_ceiling(res: Resources | None = None, **parameters: Any) -> dict[str, Any]:
    """The ε = ∞ end of a mechanism comparison over GloVe (what
    :func:`dpcore.attack.comparison.compare_mechanisms` records in its rows): each attacker's
    top-1 on the unsanitized sentences and the unsanitized accuracy, for older results that lack
    them. ``parameters`` default to :data:`COMPARISON_DEFAULTS`."""
    from dpcore.attack.datasets import load_labelled_dataset, split_dataset
    from dpcore.attack.experiment import sample_attack_sentences
    from dpcore.attack.utility import utility_baselines

    res = res or Resources()
    p = {**COMPARISON_DEFAULTS, **parameters}
    data = load_labelled_dataset(p["dataset"])
    sents = sample_attack_sentences(data, p["sentences"], seed=p["seed"])
    ref = reference_unit(res, sents, ("bayes-unigram", "mlm"), p["vocab_size"])
    split = split_dataset(data, n_train=p["n_train"], n_test=p["n_test"], split_seed=p["seed"])
    base = utility_baselines(split, res.get_vocab(p["vocab_size"]), seed=p["seed"])
    return _jsonable(
        {
            "parameters": p,
            "embedding": "glove",
            "attacker_top1_unsanitized_bayes": ref["bayes-unigram"]["attacker_top1_unsanitized"],
            "attacker_top1_unsanitized_mlm": ref["mlm"]["attacker_top1_unsanitized"],
            "accuracy_unsanitized": base["accuracy_unsanitized"],
        }
    )


def with_comparison_ceiling(
    rows: Sequence[dict[str, Any]], parameters: dict[str, Any], ceiling: dict[str, Any] | None
) -> list[dict[str, Any]]:
    """``rows`` with the ε = ∞ fields filled in from ``ceiling`` where they are missing, only for
    rows over the same embedding and only when the comparison's sentences, V and split are the
    ones ``ceiling`` was computed on (otherwise the rows are returned unchanged)."""
    if not ceiling:
        return list(rows)
    cp = ceiling["parameters"]
    same = (
        parameters.get("dataset") == cp["dataset"]
        and parameters.get("sentences") == cp["sentences"]
        and parameters.get("vocab_size") == cp["vocab_size"]
        and parameters.get("n_train") == cp["n_train"]
        and parameters.get("n_test") == cp["n_test"]
        and parameters.get("seed") == cp["seed"]
        and parameters.get("split_seed", cp["seed"]) == cp["seed"]
    )
    if not same:
        return list(rows)
    out = []
    for r in rows:
        if r.get("embedding", "glove") == ceiling["embedding"]:
            r = dict(r)
            for k in _CEILING_KEYS:
                if r.get(k) is None:
                    r[k] = ceiling[k]
        out.append(r)
    return out


# --------------------------------------------------------------------------------------------
# The claim's ceiling: the most any attacker who sees only the sanitized word can win if the
# mechanism's privacy claim holds (dpcore.attack.ceiling). It needs only the scored positions'
# original words, so it works on the shipped units without recomputing any attack.
# --------------------------------------------------------------------------------------------
def claim_unit(
    res: Resources,
    mech: str,
    eps: float,
    params: Params,
    sentences: Sequence[str],
    vsize: int,
    emb: str = "glove",
) -> Any:
    """The claim's shape (:class:`dpcore.attack.ceiling.ClaimShape`) of one mechanism on the
    attacked sentences; ``eps`` is any ε the mechanism is defined at (the shape gives every ε)."""
    from dpcore.attack.ceiling import claim_shape_on_sentences

    return claim_shape_on_sentences(res.mechanism(mech, eps, params, vsize, emb), sentences)


def claim_view(
    shapes: dict[str, Any], rows: Sequence[dict[str, Any]], epsilons: Sequence[float], *, points: int = 60
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], dict[str, Any]]:
    """The claim's ceiling for a view: attack rows with the ``claim_*`` fields (on the rows of the
    Bayesian unigram attacker), one curve per mechanism over a dense ε grid spanning ``epsilons``
    (a single ε: half to twice it), and the definitions and curves for the downloads.

    Parameters
    ----------
    shapes
        mechanism → :class:`dpcore.attack.ceiling.ClaimShape` (:func:`claim_unit`).
    rows
        Attack rows with a ``mechanism`` key.
    epsilons
        The view's ε values.
    """
    from dpcore.attack.ceiling import (
        CEILING_DEFINITIONS,
        CEILING_MEANING,
        claim_ceiling_curve,
        epsilon_grid,
        with_claim_ceiling,
    )

    eps = sorted(float(e) for e in epsilons)
    lo, hi = (eps[0], eps[-1]) if len(eps) > 1 else (eps[0] / 2.0, eps[0] * 2.0)
    grid = epsilon_grid(lo, hi, points=points, include=eps)
    out: list[dict[str, Any]] = []
    for r in rows:
        shape = shapes.get(r.get("mechanism"))
        out += with_claim_ceiling([r], shape)
    curves = [claim_ceiling_curve(None, shape, grid) for shape in shapes.values()]
    meta = {
        "meaning": CEILING_MEANING,
        "definitions": dict(CEILING_DEFINITIONS),
        "applies_to": "the Bayesian unigram attacker (it sees only the sanitized word); not to "
        "contextual attackers (masked LM), which start from a better guess than ρ",
        "curves": [
            {k: c[k] for k in ("mechanism", "epsilon", "success_ceiling", "defense_floor", "note")}
            for c in curves
        ],
    }
    return out, curves, meta


def with_comparison_claims(rows: Sequence[dict[str, Any]], shapes: dict[str, Any]) -> list[dict[str, Any]]:
    """Comparison rows with the claim's fields filled in where missing (older results), for the
    mechanisms in ``shapes`` (:func:`dpcore.attack.comparison.claim_row`; ``crossed`` from the
    rows' Clopper–Pearson interval of the Bayesian defense rate)."""
    from dpcore.attack.ceiling import ClaimShape

    out = []
    for r in rows:
        shape = shapes.get(r.get("mechanism"))
        if isinstance(shape, ClaimShape) and r.get("claim_defense_floor") is None:
            val = float(shape.ceiling([float(r["epsilon"])])[0])
            ci = r.get("defense_bayes_ci")
            r = {
                **r,
                "claim_success_ceiling": val,
                "claim_defense_floor": 1.0 - val,
                "claim_note": shape.note(),
                "claim_ceiling_crossed": None if not ci else bool(1.0 - float(ci[1]) > val),
            }
        out.append(r)
    return out
