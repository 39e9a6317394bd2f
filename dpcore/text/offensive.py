"""The offensive words dpcore leaves out of its public vocabularies by default.

A sanitizer replaces a word by a word of its public vocabulary V, and any word of V can come
out for any input: with GloVe's 15,000 most frequent words, "My neighbour Anna was diagnosed
with diabetes in Berlin last May." drew a racial slur under SanText+ at ε = 1. So the
vocabularies dpcore builds by default (:func:`dpcore.text.vocab.build_vocabulary`) leave out the
words of this module's list, and ``full=True`` (``--full-vocabulary`` on the command line) puts
them back for research.

The list
--------
The words come from ``better-profanity`` 0.7.0 (``profanity_wordlist.txt``, 916 entries,
read from the installed package at run time: :func:`wordlist_path`; the package itself is not
imported, since importing it builds thousands of leetspeak variants). Entries are compared with
vocabulary words case-insensitively and as whole tokens: an entry holding a space (``"blow
job"``) can never be one vocabulary token and is ignored; a BERT WordPiece continuation
``##x`` is left out when ``x`` is (``##nig``, ``##cock``), because the sanitized token table shows
pieces one by one. No substring matching: "Scunthorpe" and "class" stay.

The allow-list
--------------
A plain word list also flags ordinary words ("god", "hiv", "gay", "kill", "drunk"). Leaving them
out of V would make text about health, religion, sexuality or crime unsanitizable (each would
become out-of-vocabulary, an ``[UNK]``) and would bias the output away from those subjects. So
dpcore keeps the words of :data:`ALLOWED`, group by group with the reason; every other word of
the list stays out: slurs, insults aimed at people, swearing and sexual slang. Decisions at the
edge: "stupid", "ugly" and "dummy" are ordinary adjectives and stay; "moron", "retard",
"bitch" are insults and go; "negro" and "niggle" go (the first is a slur in today's usage, the
second reads as one at a glance); "dyke" and "homo" go as slurs, "gay", "queer" and "lesbians"
stay as the words people use for themselves.
"""

from __future__ import annotations

import functools
import importlib.metadata
import importlib.util
from collections.abc import Iterable, Mapping
from pathlib import Path

import numpy as np
import pandas as pd

from dpcore.validation import DPCoreError

__all__ = [
    "ALLOWED",
    "LIST_PACKAGE",
    "LIST_VERSION",
    "allowed_words",
    "is_offensive",
    "list_source",
    "offensive_mask",
    "offensive_words",
    "wordlist_entries",
    "wordlist_path",
]

#: The package whose word list dpcore filters with, and the version dpcore was checked against.
LIST_PACKAGE = "better-profanity"
LIST_VERSION = "0.7.0"
_MODULE = "better_profanity"
_FILE = "profanity_wordlist.txt"
_INSTALL = f"pip install {LIST_PACKAGE}=={LIST_VERSION}"

#: Ordinary words of the list that dpcore keeps in its vocabularies, by group, with the reason.
ALLOWED: Mapping[str, tuple[str, frozenset[str]]] = {
    "health and the body": (
        "medical and anatomical words: text about illness, bodies and care must stay sanitizable",
        frozenset(
            "anal anus areole breasts clitoris crotch ejaculate ejaculated ejaculates ejaculating "
            "ejaculation enlargement erect erection fat foreskin glans gonad gonads herpes hiv hymen "
            "labia leper menses menstruate menstruation naked nipple nipples nude oral orally organ "
            "orgasm orgasms ovary ovum ovums pee penetrate penetration penile penis pms pubic pubis "
            "rectal rectum rectus scrotum semen smegma sperm stroke tampon teste testes testicle testis "
            "urinal urine uterus vagina vomit vulva womb masturbate masturbating masturbation".split()
        ),
    ),
    "sexuality and identity": (
        "the words people use for themselves and neutral words about sex: filtering them would "
        "erase these subjects from sanitized text",
        frozenset(
            "gay gays lesbians queer queers transsexual sex sexual virgin erotic erotism homoerotic "
            "lust lusting lusty seduce unwed playboy pornography masochist sadism sadist voyeur "
            "perversion phallic phalli".split()
        ),
    ),
    "religion": (
        "religious words and places",
        frozenset("god hell sodom".split()),
    ),
    "crime, violence and weapons": (
        "the vocabulary of news, court and history text about crimes and wars",
        frozenset(
            "kill murder rape raped raping rapist molest incest pedophile pedophilia prostitute "
            "sniper napalm uzi thug snuff".split()
        ),
    ),
    "drugs and alcohol": (
        "substances as health and news text names them",
        frozenset(
            "drunk stoned heroin meth opiate opium pcp peyote valium viagra vodka rum hemp ganja "
            "weed pot reefer hooch hootch hookah toke souse soused".split()
        ),
    ),
    "history and politics": (
        "historical names and terms: text about the 20th century or slavery must stay sanitizable",
        frozenset("hitler nazi nazism reich klan kkk aryan arian slave bondage".split()),
    ),
    "names and other meanings": (
        "words whose main sense is not offensive: surnames and first names (Wang, Dong, Pollock, "
        "Guido, Willy, Woody, Len, Massa, Weiner, Yury, Hoare, Cnut), objects, ordinary verbs and "
        "adjectives",
        frozenset(
            "wang dong pollock guido willy willies woody len massa weiner yury hoare hoar cnut nimrod "
            "paddy slope strip screw screwed screwing pawn organ revue maxi seaman seamen sandbar "
            "flange loin loins knob wad teat rump hump thrust snatch tinkle potty poop toots whiz "
            "suck sucked sucking jerk jerked stupid ugly dummy dopey vulgar tawdry racy steamy "
            "sleaze sleazy trashy prude scantily tramp vixen inbred bestial facial foobar homey "
            "pasty punky cowgirl cowgirls lube omg xx".split()
        ),
    ),
}


def list_source() -> str:
    """How the filter is described in labels: the list with its installed version, and dpcore's
    allow-list (``"better-profanity 0.7.0 list, dpcore's allow-list"``)."""
    return f"{LIST_PACKAGE} {_installed_version()} list, dpcore's allow-list"


def _installed_version() -> str:
    try:
        return importlib.metadata.version(LIST_PACKAGE)
    except importlib.metadata.PackageNotFoundError:
        return LIST_VERSION


def wordlist_path() -> Path:
    """The installed ``better_profanity/profanity_wordlist.txt`` (found without importing it).

    Raises
    ------
    DPCoreError
        When ``better-profanity`` is not installed.
    """
    spec = importlib.util.find_spec(_MODULE)
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    for folder in locations:
        path = Path(folder) / _FILE
        if path.is_file():
            return path
    raise DPCoreError(
        f"the offensive-word list dpcore filters vocabularies with needs {LIST_PACKAGE}: {_INSTALL} "
        "(or build the full vocabulary: full=True, --full-vocabulary)"
    )


@functools.lru_cache(maxsize=1)
def wordlist_entries() -> tuple[str, ...]:
    """Every entry of the installed list, lower-cased and stripped, in the file's order."""
    text = wordlist_path().read_text(encoding="utf-8")
    return tuple(dict.fromkeys(w.strip().lower() for w in text.splitlines() if w.strip()))


@functools.lru_cache(maxsize=1)
def allowed_words() -> frozenset[str]:
    """Every word of :data:`ALLOWED`, all groups together."""
    return frozenset().union(*(words for _, words in ALLOWED.values()))


@functools.lru_cache(maxsize=1)
def offensive_words() -> frozenset[str]:
    """The words dpcore leaves out: the list's single-token entries minus :data:`ALLOWED`."""
    keep = allowed_words()
    return frozenset(w for w in wordlist_entries() if not any(c.isspace() for c in w) and w not in keep)


def offensive_mask(words: Iterable[str] | np.ndarray) -> np.ndarray:
    """Boolean mask over ``words``: True where the word, or the stem of a ``##`` WordPiece, is offensive.

    Case-insensitive, whole tokens only; vectorised (one hash lookup per word).

    Parameters
    ----------
    words
        Vocabulary words (any case).

    Examples
    --------
    >>> offensive_mask(["the", "Fuck", "god", "##nig", "class"]).tolist()
    [False, True, False, True, False]
    """
    arr = np.asarray(list(words) if not isinstance(words, np.ndarray) else words, dtype=object)
    if arr.size == 0:
        return np.zeros(0, dtype=bool)
    lower = pd.Index(arr.astype(str)).str.lower()
    stems = lower.str.replace(r"^##", "", regex=True)
    return np.asarray(stems.isin(offensive_words()), dtype=bool)


def is_offensive(word: str) -> bool:
    """Whether one word would be left out of a default vocabulary (:func:`offensive_mask`)."""
    return bool(offensive_mask([word])[0])
