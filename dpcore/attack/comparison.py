"""All text mechanisms on one privacy–utility chart, on equal footing.

For every registered text mechanism and every ε of a grid, on the *same* attack sentences and
the *same* train/test split (both drawn once from the seed):

- **defense rate** against the Bayesian attacker (exact posterior with a unigram prior; only
  for mechanisms with a closed-form distribution) and against the paper's masked-LM attacker
  (Yue et al. 2021, §5.3; every mechanism);
- **accuracy** of TF-IDF + logistic regression trained and tested on sanitized text (§5.2).

ε is **not** on one scale across mechanisms. For ε-LDP mechanisms (``random``, CusText, …) it
bounds the log-ratio for any two words; for metric mechanisms (SanText, TEM, Feyisetan, …) it is
per unit of embedding distance, so the log-ratio for two words is ε·d(x, x′), and d depends on
the embedding. Every row therefore carries its mechanism's ``notion`` and ``epsilon_scale``; equal
ε does not mean equal privacy, and the chart says so.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from dpcore.formatting import epsilon_text
from dpcore.validation import DPCoreError

__all__ = [
    "SHIPPED_COMPARISON",
    "claim_epsilons",
    "claim_row",
    "compare_mechanisms",
    "comparison_caption",
    "epsilon_scale",
    "load_comparison",
]

Progress = Callable[[int, int], None] | None

#: The comparison the attack page opens with: what ``python bench/compare_mechanisms.py`` writes
#: (and ``--append`` adds to).
SHIPPED_COMPARISON = Path(__file__).resolve().parents[2] / "bench" / "results" / "mechanism_comparison.json"


def load_comparison(path: Path = SHIPPED_COMPARISON) -> dict[str, Any] | None:
    """A saved comparison (:func:`compare_mechanisms`' result as JSON), or None when there is none."""
    path = Path(path)
    if not path.is_file():
        return None
    return json.loads(path.read_text(encoding="utf-8"))


def comparison_caption(parameters: dict[str, Any]) -> str:
    """One sentence on a comparison's settings and the commands that regenerate it: the first
    run, each appended run, and the mechanisms the run left out with the reason.

    Examples
    --------
    >>> caption = comparison_caption({"mechanisms": ["santext", "random"], "epsilons": [1.0, 10.0],
    ...     "sentences": 40, "n_train": 2000, "n_test": 500, "seed": 0})
    >>> settings, command = caption.split(". ")
    >>> settings
    '2 mechanisms, ε ∈ {1, 10}, 40 attack sentences, 2,000/500 train/test, seed 0'
    >>> command
    'Regenerate: `python bench/compare_mechanisms.py`.'
    """
    p = parameters
    appended = "".join(
        f", then `python bench/compare_mechanisms.py --mechanisms {','.join(run['mechanisms'])} --append`"
        for run in p.get("appended_runs", [])
    )
    not_run = (p.get("not_in_this_run") or {}).items()
    left_out = "".join(f" Not in this run: {n} ({why})." for n, why in not_run)
    return (
        f"{len(p['mechanisms'])} mechanisms, ε ∈ {{{', '.join(f'{e:g}' for e in p['epsilons'])}}}, "
        f"{p['sentences']} attack sentences, {p['n_train']:,}/{p['n_test']:,} train/test, seed {p['seed']}. "
        f"Regenerate: `python bench/compare_mechanisms.py`{appended}.{left_out}"
    )


def claim_epsilons(shown: Sequence[str], rows: Sequence[dict[str, Any]]) -> dict[str, float]:
    """mechanism → the first ε of ``rows`` it is defined at (a row with a ``note`` is not), for
    the ``shown`` mechanisms that have one: where the chart draws each claim's floor from."""
    out: dict[str, float] = {}
    for m in shown:
        defined = [r["epsilon"] for r in rows if r["mechanism"] == m and not r.get("note")]
        if defined:
            out[m] = float(defined[0])
    return out


def _model_label(mlm: Any) -> str:
    """The shipped attacker by name, never its path on this machine; a user's model as given."""
    from pathlib import Path

    from dpcore.models.masked_lm import DEFAULT_MLM_DIR

    name = str(getattr(mlm, "name", "?"))
    try:
        shipped = Path(name).resolve() == DEFAULT_MLM_DIR.resolve()
    except (OSError, ValueError):
        shipped = False
    return "shipped minilm-mlm (dpcore/attack/models/minilm-mlm)" if shipped else name


def epsilon_scale(mech: Any) -> str:
    """How a mechanism's ε reads: ``"ε-LDP (any two words)"`` or ``"ε per unit of distance"``."""
    priv = mech.privacy
    if priv.notion == "LDP":
        return "ε-LDP (any two words)"
    return f"ε per unit of {priv.metric} (ε·d)"


def _claim_shape(make: Callable[[float], Any], eps: Sequence[float], sentences: Sequence[str]) -> Any:
    """The claim's shape of a mechanism on the attacked sentences (:mod:`dpcore.attack.ceiling`)."""
    from dpcore.attack.ceiling import claim_shape_on_sentences

    return claim_shape_on_sentences(make(eps[0]), sentences)


def claim_row(shape: Any, epsilon: float, bayes: dict[str, Any] | None) -> dict[str, Any]:
    """The claim's fields of one comparison row: ceiling and floor at ε, the claim's note, and,
    where the Bayesian attacker ran, whether its success's Clopper–Pearson lower bound
    (1 − ``ci_high`` of its defense rate) is above the ceiling."""
    if shape is None:
        return {}
    from dpcore.attack.ceiling import ClaimShape, claim_fields

    assert isinstance(shape, ClaimShape)
    if bayes is not None:
        f = claim_fields(
            shape, epsilon, tokens=bayes["tokens"], defended=bayes["defended"], confidence=bayes["confidence"]
        )
    else:
        f = claim_fields(shape, epsilon, tokens=shape.secrets.positions, defended=shape.secrets.positions)
        f["claim_success_ci_low"] = f["claim_ceiling_crossed"] = None
    keep = ("claim_success_ceiling", "claim_defense_floor", "claim_note", "claim_ceiling_crossed")
    return {k: f[k] for k in keep}


def compare_mechanisms(
    mechanisms: Sequence[str] | None = None,
    epsilons: Sequence[float] = (1.0, 3.0, 10.0),
    *,
    dataset: str = "tweets",
    sentences: int = 40,
    n_train: int = 2_000,
    n_test: int = 500,
    vocab_size: int = 15_000,
    attacks: Sequence[str] = ("bayes-unigram", "mlm"),
    seed: int = 0,
    mlm: Any = None,
    progress: Progress = None,
    full_vocabulary: bool = False,
) -> dict[str, Any]:
    """Defense rates and accuracy of every mechanism at every ε (module docstring).

    Parameters
    ----------
    mechanisms
        Registered text mechanism names (default: every registered one, GloVe embedding).
    epsilons
        The ε grid, the same for every mechanism.
    dataset, sentences, n_train, n_test
        Built-in labelled dataset, attack sentences and split sizes (drawn once from ``seed``).
    vocab_size
        Most frequent GloVe words in V (one V for every mechanism that works over GloVe; a
        mechanism that needs another embedding, such as dp-mlm's WordPieces, gets that
        embedding's whole vocabulary, and its rows say so).
    attacks
        Any of ``"bayes-unigram"`` and ``"mlm"``; the Bayesian attacker is skipped (value
        ``None``) for mechanisms without a closed-form distribution.
    seed
        Seed of the sentences, the split and the sanitization streams.
    mlm
        The masked LM (default: the shipped attacker on onnxruntime, loaded when ``"mlm"`` is
        asked for).
    progress
        ``progress(done, total)`` over (mechanism, ε) cells.
    full_vocabulary
        Keep the slurs and insults the default vocabularies leave out (research;
        :mod:`dpcore.text.offensive`); ``parameters["vocabulary"]`` says which V was used.

    Returns
    -------
    dict
        ``parameters`` (everything needed to reproduce the run) and ``rows``: one per
        (mechanism, ε) with ``notion``, ``epsilon_scale``, ``defense_bayes``,
        ``defense_mlm``, ``accuracy`` and their Clopper–Pearson intervals, and the ε = ∞ end:
        ``attacker_top1_unsanitized_bayes`` / ``_mlm`` (each attacker's top-1 on unsanitized
        text over the same positions; the defense rate at ε → ∞ is 1 − it),
        ``accuracy_unsanitized``, and the claim's ceiling (:mod:`dpcore.attack.ceiling`):
        ``claim_success_ceiling``, ``claim_defense_floor``, ``claim_note`` and
        ``claim_ceiling_crossed`` (None where the Bayesian attacker did not run).

    Examples
    --------
    >>> from dpcore.attack.comparison import compare_mechanisms
    >>> res = compare_mechanisms(["santext", "random"], [3.0], sentences=5, n_train=200, n_test=100,
    ...                          vocab_size=2000, attacks=("bayes-unigram",))
    >>> [(r["mechanism"], r["notion"]) for r in res["rows"]]
    [('santext', 'MLDP'), ('random', 'LDP')]
    """
    from dpcore.attack.datasets import load_labelled_dataset, split_dataset
    from dpcore.attack.experiment import attack_sweep, sample_attack_sentences
    from dpcore.attack.plan import plan_mechanism
    from dpcore.attack.utility import utility_sweep
    from dpcore.text import TEXT_MECHANISMS, create_text_mechanism
    from dpcore.text.registry import required_embedding
    from dpcore.text.vocab import build_vocabulary

    names = list(TEXT_MECHANISMS.names()) if mechanisms is None else list(dict.fromkeys(mechanisms))
    if not names:
        raise DPCoreError("choose at least one mechanism")
    for n in names:
        TEXT_MECHANISMS.get(n)
    eps = [float(e) for e in epsilons]
    if not eps:
        raise DPCoreError("give at least one ε")
    bad = [a for a in attacks if a not in ("bayes-unigram", "mlm")]
    if bad or not attacks:
        raise DPCoreError("attacks must be among bayes-unigram and mlm")
    t0 = time.monotonic()
    data = load_labelled_dataset(dataset)
    sents = sample_attack_sentences(data, sentences, seed=seed)
    split = split_dataset(data, n_train=n_train, n_test=n_test, split_seed=seed)
    vocabs = {"glove": build_vocabulary("glove", size=vocab_size, full=full_vocabulary)}
    if "mlm" in attacks and mlm is None:
        from dpcore.models.masked_lm import load_mlm

        mlm = load_mlm()

    from dpcore.attack.utility import utility_baselines

    baselines = utility_baselines(split, vocabs["glove"], seed=seed)
    rows: list[dict[str, Any]] = []
    references: dict[Any, Any] = {}  # each vocabulary's ε = ∞ references, computed once
    total, done = len(names) * len(eps), 0
    for name in names:
        emb = required_embedding(name) or "glove"
        if emb not in vocabs:
            vocabs[emb] = build_vocabulary(emb, full=full_vocabulary)
        vocab = vocabs[emb]

        def make(e: float, name: str = name, vocab: Any = vocab) -> Any:
            return create_text_mechanism(name, vocab=vocab, epsilon=e)

        # ε at or below a mechanism's own floor (truncated-gumbel's calibration) is undefined:
        # its rows say so instead of being dropped or clipped. The Bayesian attacker runs only
        # where it has the mechanism's channel (dpcore.attack.plan).
        plan = plan_mechanism(name, eps, attacks, make, vocab)
        floor, ok, probe = plan.floor, list(plan.epsilons), plan.probe
        exact = bool(getattr(probe, "has_exact_distribution", False))
        found: dict[tuple[str, float], dict[str, Any]] = {}
        top1: dict[str, Any] = {}
        if plan.attacks and ok:
            att = attack_sweep(
                sents, make, ok, attacks=plan.attacks, mlm=mlm, seed=seed, references=references
            )
            found = {(r["attack"], float(r["epsilon"])): r for r in att["rows"]}
            top1 = {a: v.get("attacker_top1_unsanitized") for a, v in att.get("unsanitized", {}).items()}
        claim = _claim_shape(make, ok, sents) if ok else None
        acc: dict[float, dict[str, Any]] = {}
        if ok:
            util = utility_sweep(split, make, ok, seed=seed, baselines=False)
            acc = {float(r["epsilon"]): r for r in util["rows"]}
        for e in eps:
            b, m, a = found.get(("bayes-unigram", e)), found.get(("mlm", e)), acc.get(e)
            priv = probe.privacy if probe is not None else None
            rows.append(
                {
                    "mechanism": name,
                    "embedding": emb,
                    "vocab_size": len(vocab),
                    "vocabulary": vocab.label,
                    "epsilon": e,
                    "notion": priv.notion if priv else "metric DP",
                    "epsilon_scale": epsilon_scale(probe)
                    if probe is not None
                    else "ε per unit of distance (ε·d)",
                    "exact_distribution": exact,
                    "claim_refuted": bool(priv.refuted) if priv else False,
                    "defense_bayes": None if b is None else b["defense_rate"],
                    "defense_bayes_ci": None if b is None else [b["ci_low"], b["ci_high"]],
                    "defense_mlm": None if m is None else m["defense_rate"],
                    "defense_mlm_ci": None if m is None else [m["ci_low"], m["ci_high"]],
                    # the share of scored positions released unchanged (one sanitization per ε)
                    "kept_share": next((x["kept_share"] for x in (m, b) if x is not None), None),
                    "accuracy": None if a is None else a["accuracy"],
                    # the attacker's ceiling: its top-1 on unsanitized text (ε = ∞), same positions
                    "attacker_top1_unsanitized_bayes": top1.get("bayes-unigram"),
                    "attacker_top1_unsanitized_mlm": top1.get("mlm"),
                    "accuracy_unsanitized": baselines["accuracy_unsanitized"],
                    "accuracy_ci": None if a is None else [a["ci_low"], a["ci_high"]],
                    "note": ""
                    if e > floor
                    else f"undefined: {name} needs ε > {epsilon_text(floor, digits=4)} on this vocabulary",
                    **claim_row(claim, e, b),
                }
            )
            done += 1
            if progress is not None:
                progress(done, total)
    params = {
        "mechanisms": names,
        "epsilons": eps,
        "dataset": dataset,
        "sentences": len(sents),
        "n_train": n_train,
        "n_test": n_test,
        "split_seed": seed,
        "embedding": "glove unless a mechanism needs another (each row names its own)",
        "vocab_size": len(vocabs["glove"]),
        "vocabulary": vocabs["glove"].label,
        "attacks": list(attacks),
        "mlm": None if mlm is None else f"{getattr(mlm, 'backend', '?')}: {_model_label(mlm)}",
        "classifier": "tfidf",
        "baselines": baselines,
        "seed": seed,
        "seconds": round(time.monotonic() - t0, 1),
        "note": "ε is per unit of embedding distance for metric mechanisms and per word pair for "
        "ε-LDP ones: equal ε does not mean equal privacy",
    }
    return {"parameters": params, "rows": rows}
