"""The words dpcore leaves out of its public vocabularies by default.

A sanitizer replaces a word by a word of its public vocabulary V, and any word of V can come
out for any input: with GloVe's 15,000 most frequent words, "My neighbour Anna was diagnosed
with diabetes in Berlin last May." drew a racial slur under SanText+ at ε = 1, and later "raped"
and "bastards" (issue 58). So the vocabularies dpcore builds by default
(:func:`dpcore.text.vocab.build_vocabulary`) leave out the words of :func:`left_out_words`, and
``full=True`` (``--full-vocabulary`` on the command line) puts them back for research.

The guarantee, for the vocabulary actually used
-----------------------------------------------
A default vocabulary holds no word of :func:`left_out_words`, and a sanitizer's output token is
a word of V, a token copied from its input, or ``[UNK]`` (an input word outside V). So no
sanitizer outputs a left-out word for an input that holds none; an input word that is left out is
released as ``[UNK]``, never as itself and never for another input. The privacy claim of each
mechanism is the one it makes over V (the out-of-vocabulary rule is the same for every V).

The list
--------
The insults come from ``better-profanity`` 0.7.0 (``profanity_wordlist.txt``, 916 entries,
read from the installed package at run time: :func:`wordlist_path`; the package itself is not
imported, since importing it builds thousands of leetspeak variants). Entries are compared with
vocabulary words case-insensitively, as whole tokens, **in every inflection**: plural, past,
``-ing``, the agent noun in ``-er`` and possessives (:func:`inflections`), so "bastard" takes
"bastards" with it. The few inflections that are ordinary words of their own (the country
Niger, the surname Nader, "assessed", "spiked": :data:`ORDINARY_FORMS`) stay. An entry holding
a space (``"blow job"``) can never be one vocabulary token and is ignored; a BERT WordPiece
continuation ``##x`` is left out when ``x`` is (``##nig``, ``##cock``), because the sanitized
token table shows pieces one by one. No substring matching: "Scunthorpe" and "class" stay.

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

The reviewed words
------------------
Some words are no insult and still must never come out of a sanitizer for another input: on a
talk's screen "my neighbours raped ..." or "markets team hitler ..." reads as the speaker's
words. :data:`REVIEWED` lists them by category, with the reason: sexual violence, genocide with
its perpetrators and symbols, and explicit sexual terms. They are left out in every inflection,
so a text about them loses those words to ``[UNK]``: the price of never producing them. Identity,
health (anatomy included) and religion words are not in it, and stay.
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
    "ORDINARY_FORMS",
    "REVIEWED",
    "allowed_words",
    "inflections",
    "is_offensive",
    "left_out_words",
    "list_source",
    "offensive_mask",
    "offensive_words",
    "reviewed_words",
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
            "anal anus areole breasts clitoris crotch enlargement erect fat foreskin glans gonad gonads "
            "herpes hiv hymen labia leper menses menstruate menstruation naked nipple nipples nude oral "
            "orally organ ovary ovum ovums pee penetrate penetration penile penis pms pubic pubis rectal "
            "rectum rectus scrotum semen sperm stroke tampon teste testes testicle testis urinal urine "
            "uterus vagina vomit vulva womb".split()
        ),
    ),
    "sexuality and identity": (
        "the words people use for themselves and neutral words about sex: filtering them would "
        "erase these subjects from sanitized text",
        frozenset(
            "gay gays lesbians queer queers transsexual sex sexual virgin lust lusting lusty seduce "
            "unwed playboy masochist sadism sadist voyeur perversion phallic phalli".split()
        ),
    ),
    "religion": (
        "religious words and places",
        frozenset("god hell sodom".split()),
    ),
    "crime, violence and weapons": (
        "the vocabulary of news, court and history text about crimes and wars",
        frozenset("kill murder prostitute sniper napalm uzi thug snuff".split()),
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
        frozenset("reich arian slave bondage".split()),
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


#: Words left out of the default vocabularies though they are not insults: a reviewed category of
#: words that must never come out of a sanitizer for another input (a talk's sentence about a
#: post office must not come back holding one). Each is left out in every inflection, so a text
#: holding one releases it as ``[UNK]``; identity, health and religion words are not here.
REVIEWED: Mapping[str, tuple[str, frozenset[str]]] = {
    "sexual violence": (
        "rape and the abuse of children: produced for an unrelated word, it reads as an accusation",
        frozenset(
            "rape rapist molest molestation molester incest pedophile pedophilia paedophile "
            "paedophilia pedophilic paedophilic pedo paedo".split()
        ),
    ),
    "genocide, its perpetrators and symbols": (
        "genocide, the Nazi regime, its leaders, camps and emblems, and the ideologies behind them: "
        "out of nowhere they read as endorsement or mockery",
        frozenset(
            "genocide genocidal holocaust nazi nazism neonazi hitler himmler goebbels eichmann mengele "
            "heydrich auschwitz treblinka swastika kkk klan aryan fascism fascist".split()
        ),
    ),
    "explicit sexual terms": (
        "words for sexual acts and pornography (anatomy stays, as health words)",
        frozenset(
            "orgasm ejaculate ejaculation masturbate masturbation erection erotic erotica erotism "
            "homoerotic porn porno pornography pornographic smegma".split()
        ),
    ),
}

#: Inflections of a left-out word that are ordinary words with a meaning of their own (a
#: country, a surname, a common verb), kept; each was found by listing the inflections that
#: occur in GloVe's and BERT's vocabularies (``tests/test_offensive_vocabulary.py`` checks the
#: list against them).
ORDINARY_FORMS: frozenset[str] = frozenset(
    "niger nader cummings spiked spiking cocked cocker assessed assessing craps nappies damning".split()
)

_VOWELS = frozenset("aeiou")
_SIBILANT = ("s", "x", "z", "ch", "sh")


def inflections(word: str) -> frozenset[str]:
    """The word and its regular English inflections: plural (and third person), past, ``-ing``,
    the agent noun in ``-er`` and its plural, and possessives.

    The rules are spelling rules only (``-es`` after a sibilant or ``o``, ``y`` to ``ie``, a
    dropped final ``e``, ``c`` to ``ck``, and a doubled final consonant after a short vowel, with
    the undoubled form beside it, since stress is not known). They over-generate, which is the
    safe side for a filter: a form that is no English word matches nothing.

    Examples
    --------
    >>> sorted(inflections("rape"))[:6]
    ['rape', "rape's", 'raped', 'raper', "raper's", 'rapers']
    >>> {"bastards", "bastard's", "bastards'"} <= inflections("bastard")
    True
    """
    w = word.lower()
    out = {w}
    cons_y = len(w) > 2 and w.endswith("y") and w[-2] not in _VOWELS
    cvc = len(w) >= 3 and w[-1] not in _VOWELS | set("wxy") and w[-2] in _VOWELS and w[-3] not in _VOWELS
    if w.endswith(_SIBILANT) or w.endswith("o"):
        plural = {w + "es"} | ({w + "s"} if w.endswith("o") else set())
    elif cons_y:
        plural = {w[:-1] + "ies"}
    else:
        plural = {w + "s"}
    if w.endswith("e"):
        stems = {w[:-1]}
    elif cons_y:
        stems = {w, w[:-1] + "i"}
    elif w.endswith("c"):
        stems = {w + "k"}
    elif cvc:
        stems = {w, w + w[-1]}
    else:
        stems = {w}
    past = {s + "ed" for s in stems}
    ing = {s + "ing" for s in stems if not s.endswith("i")} | ({w + "ing"} if cons_y else set())
    if w.endswith("ie"):
        ing.add(w[:-2] + "ying")
    agent = {s + "er" for s in stems}
    nouns = plural | agent | {a + "s" for a in agent} | {w}
    out |= past | ing | nouns
    out |= {n + "'s" for n in nouns} | {p + "'" for p in plural | {a + "s" for a in agent}}
    return frozenset(out)


def list_source() -> str:
    """How the filter is described in labels: the list with its installed version, its
    inflections, dpcore's allow-list and reviewed words (``"better-profanity 0.7.0 list in every
    inflection, dpcore's allow-list and reviewed words"``)."""
    version = _installed_version()
    return f"{LIST_PACKAGE} {version} list in every inflection, dpcore's allow-list and reviewed words"


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
def reviewed_words() -> frozenset[str]:
    """Every word of :data:`REVIEWED`, all groups together (base forms)."""
    return frozenset().union(*(words for _, words in REVIEWED.values()))


@functools.lru_cache(maxsize=1)
def offensive_words() -> frozenset[str]:
    """The list's words dpcore leaves out as insults: its single-token entries minus :data:`ALLOWED`
    and minus the :data:`REVIEWED` words (base forms, as the list spells them)."""
    keep = allowed_words() | reviewed_words()
    return frozenset(w for w in wordlist_entries() if not any(c.isspace() for c in w) and w not in keep)


@functools.lru_cache(maxsize=1)
def left_out_words() -> frozenset[str]:
    """Every word a default vocabulary leaves out: the offensive and the reviewed words in every
    inflection (:func:`inflections`), less :data:`ORDINARY_FORMS` and the allowed words."""
    bases = offensive_words() | reviewed_words()
    forms = frozenset().union(*(inflections(w) for w in bases))
    return forms - (ORDINARY_FORMS | allowed_words())


def offensive_mask(words: Iterable[str] | np.ndarray) -> np.ndarray:
    """Boolean mask over ``words``: True where the word, or the stem of a ``##`` WordPiece, is left
    out of a default vocabulary (:func:`left_out_words`: offensive or reviewed, in any inflection).

    Case-insensitive, whole tokens (no substring matching); vectorised (one hash lookup per word).

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
    stems = pd.Series(arr.ravel(), dtype=object).astype(str).str.lower().str.removeprefix("##")
    return np.asarray(stems.isin(left_out_words()), dtype=bool).reshape(arr.shape)


def is_offensive(word: str) -> bool:
    """Whether one word would be left out of a default vocabulary (:func:`offensive_mask`, for one
    word: one set lookup)."""
    return str(word).lower().removeprefix("##") in left_out_words()
