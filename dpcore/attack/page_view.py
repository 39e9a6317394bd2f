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
The page uses that file only while the attacker on disk has that SHA-256 (:func:`load_shipped`),
and only for units whose every parameter equals the shipped view's (:class:`ShippedView`'s
``attack_unit``, ``utility_unit``, ``baselines_unit``): at the default view every unit, one
widget change away (an ε removed, another mechanism added) every unit the change does not touch;
everything else is computed as before. A unit is a deterministic function of its parameters
(``tests/test_app_attack_units.py``), so a shipped unit equals the one the page would compute.

The attacker's own description (:func:`attacker_caption`) is read from its
``training_record.json``: what it was trained on, and what a high defense rate against it means.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

__all__ = [
    "ATTACKER_GRAPH",
    "COMPARISON_DEFAULTS",
    "MLM_ATTACKS",
    "SHIPPED_PATH",
    "TRAINING_RECORD",
    "UNSANITIZED",
    "Resources",
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
    "load_shipped",
    "plan_view",
    "reference_unit",
    "sentences_unit",
    "shipped_for",
    "split_unit",
    "utility_unit",
    "view_document",
    "with_comparison_ceiling",
    "with_comparison_claims",
]

#: Attacks that need the masked LM (one group: they share forward passes).
MLM_ATTACKS = ("mlm", "bayes-mlm")
#: The shipped results of the page's default view (package data).
SHIPPED_PATH = Path(__file__).resolve().parents[1] / "data" / "attack_page_default.json"
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
            from dpcore.attack.mlm import load_mlm

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
        ``utility_units`` (``mechanism``, ``epsilon``, ``row``) and ``mechanism_parameters``.
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
    # the ε = ∞ end of the shipped mechanism comparison (older comparison files lack it)
    out["comparison_ceiling"] = comparison_ceiling(res)
    tick()
    return _jsonable(out)


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


def view_document(view: View, results: dict[str, Any]) -> dict[str, Any]:
    """The shipped file's content: the view, its seed, versions, the attacker's hash, results."""
    from dpcore import __version__

    return {
        "format": FORMAT,
        "what": "the Attack & utility page's default view: python -m dpcore precompute-attack-page",
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
    def baselines(self) -> dict:
        return self.document["results"]["baselines"]

    def _same(self, mech: str, params: Params, data: str, vsize: int, seed: int, emb: str) -> bool:
        v = self.view
        return (
            mech in v.mechanisms
            and tuple(sorted(params)) == dict(v.parameters)[mech]
            and (data, int(vsize), int(seed)) == (v.dataset, v.vocab_size, v.seed)
            and embedding_of(mech, emb) == embedding_of(mech, v.embedding)
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
        if (data, int(vsize), int(ntrain), int(ntest), int(seed), emb) != (
            v.dataset,
            v.vocab_size,
            v.n_train,
            v.n_test,
            v.seed,
            v.embedding,
        ):
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


def _stage_words(rec: dict[str, Any]) -> str:
    """One training stage in words: how long, where, on what."""
    corpus, cfg = rec["corpus"], rec["config"]
    items = sorted(corpus["sources"].items(), key=lambda kv: -kv[1])
    sources = ", ".join(f"{v:,} {_SOURCE_WORDS.get(k, k)}" for k, v in items)
    minutes = float(rec.get("train_seconds", 60 * cfg.get("minutes", 0))) / 60
    device = str(rec.get("device", "cpu"))
    where = "on a GPU" if device.startswith("cuda") else f"on {cfg.get('threads', 1)} CPU thread(s)"
    epochs = f"{float(cfg['epochs']):g} epochs, " if cfg.get("epochs") else ""
    return f"{epochs}{max(minutes, 1):.0f} min {where} on {sources}"


def attacker_caption(record_path: Path = TRAINING_RECORD) -> str:
    """What the shipped masked-LM attacker is, from its training record (Markdown, one paragraph).

    Says what it was trained on (each stage: sources, sentences, epochs, time, device), how much
    of held-out text it names (top-1 and top-5), and what it is not: a small model with no world
    knowledge, so a high defense rate says this attacker failed, not that no attacker could succeed.
    """
    try:
        rec = json.loads(Path(record_path).read_text(encoding="utf-8"))
        from dpcore.attack.training import training_stages

        stages = training_stages(rec, limit=8)
        base = str(stages[0].get("base_model", "a small sentence encoder"))
        if "(" in base:  # "gt-… (sentence-transformers/all-MiniLM-L6-v2), …": the public name
            base = base.split("(", 1)[1].split(")", 1)[0].split("/")[-1]
        steps = "; then ".join(_stage_words(x) for x in stages)
        on_pool = "tweets" in rec["corpus"]["sources"]
        held = (
            "of the tweets the attack evaluates on (none of which it trained on)"
            if on_pool
            else "of held-out sentences of its training sources"
        )
        what = (
            f"**The masked-LM attacker** is {base}, a small model (6 layers) fine-tuned in "
            f"{len(stages)} stage(s): {steps}. At its first guess it names "
            f"{100 * float(rec['heldout_top1']):.0f}% of masked words {held}; "
            f"{100 * float(rec['heldout_top5']):.0f}% within five guesses. "
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
