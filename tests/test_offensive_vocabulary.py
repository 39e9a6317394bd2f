"""Nothing offensive comes out of a sanitizer unasked (issue 50, "What to build" 1).

dpcore's public vocabularies leave out the slurs and insults of better-profanity 0.7.0's list,
minus an allow-list of ordinary words (:mod:`dpcore.text.offensive`); ``full=True`` and
``--full-vocabulary`` keep them, for research. These tests check both sides of the list, the
size and label of the vocabularies, every mechanism's output on 1,000 public tweets at
ε ∈ {0.5, 1, 3}, the issue's own sentence (API and CLI), and the flag on every command.

No offensive word is written in this file: the words the tests need come from the installed list
by position or from the vocabularies themselves, and are compared with :func:`offensive_mask`.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import dpcore
from dpcore.cli import build_parser, main
from dpcore.commands.common import FULL_VOCABULARY_HELP
from dpcore.rng import make_rng
from dpcore.text import TEXT_MECHANISMS
from dpcore.text.corpora import load_corpus, sample_sentences
from dpcore.text.offensive import (
    ALLOWED,
    ORDINARY_FORMS,
    REVIEWED,
    allowed_words,
    inflections,
    is_offensive,
    left_out_words,
    offensive_mask,
    offensive_words,
    reviewed_words,
    wordlist_entries,
    wordlist_path,
)
from dpcore.text.sanitize import OOV_TOKEN, SanitizedText, sanitize_lines
from dpcore.text.vocab import build_vocabulary
from dpcore.validation import DPCoreError
from tests.conftest import Cli

#: The issue's sentence: under SanText+, ε = 1, seed 0 it drew a racial slur from GloVe's 15,000
#: most frequent words.
ISSUE_SENTENCE = "My neighbour Anna was diagnosed with diabetes in Berlin last May."
EPSILONS = (0.5, 1.0, 3.0)
SENTENCES = 1_000

#: Ordinary words a plain list flags and dpcore keeps: health, identity, religion, violence,
#: drugs, history, and everyday adjectives (each must be in the list, else this proves nothing).
KEPT = (
    "hiv herpes penis vagina breasts sperm urine vomit fat stroke organ "
    "gay gays lesbians queer sex sexual virgin transsexual "
    "god hell "
    "kill murder sniper "
    "drunk heroin vodka weed pot "
    "slave reich "
    "stupid ugly dummy suck screw strip slope wang dong"
).split()


def _slurs() -> list[str]:
    """Racial and homophobic slurs of the installed list (found by their stems, never spelled out
    here), and the swear words and insults the issue names."""
    entries = wordlist_entries()
    stems = ("n" + "igg", "ch" + "ink", "sp" + "ic", "k" + "ike", "wet" + "back", "c" + "oon", "g" + "ook")
    slurs = [w for w in entries if any(w.startswith(s) for s in stems)]
    insults = [
        w for w in entries if w in {"f" + "uck", "b" + "itch", "c" + "unt", "wh" + "ore", "fag" + "got"}
    ]
    assert len(slurs) >= 10 and len(insults) == 5
    return slurs + insults


@pytest.fixture(scope="module")
def tweets() -> list[str]:
    # every line, offensive ones too: their words must become [UNK]
    return sample_sentences("tweets", SENTENCES, seed=0, clean=False)


@pytest.fixture(scope="module")
def short_tweets() -> list[str]:
    """The 1,000 shortest distinct tweets of at least five words. DP-MLM pays a softmax over its
    29,481 WordPieces for every token (25,000 tokens of the random sample take 50 s per ε), so it
    sanitizes these (about 7,000 tokens; many hold the insults at issue)."""
    lines = [t for t in dict.fromkeys(load_corpus("tweets")) if len(t.split()) >= 5]
    return sorted(lines, key=len)[:SENTENCES]


# --- the list and the allow-list: both sides -----------------------------------------------


def test_slurs_and_insults_are_left_out_and_ordinary_words_kept() -> None:
    slurs = _slurs()
    assert offensive_mask(slurs).all(), [w for w in slurs if not is_offensive(w)][:3]
    assert not offensive_mask(KEPT).any(), [w for w in KEPT if is_offensive(w)]
    assert set(KEPT) <= set(wordlist_entries())  # the list flags them: the allow-list decides
    # in the vocabulary itself: the full one holds both kinds, the default only the ordinary ones
    full = set(build_vocabulary("glove", size=15_000, full=True).words)
    default = set(build_vocabulary("glove", size=15_000).words)
    slurs_in_v = [w for w in slurs if w in full]
    assert len(slurs_in_v) >= 5 and not default & set(slurs_in_v)
    kept_in_v = [w for w in KEPT if w in full]
    assert len(kept_in_v) >= 30 and set(kept_in_v) <= default


def test_the_allow_list_is_documented_and_only_holds_words_of_the_list() -> None:
    entries = set(wordlist_entries())
    for group, (reason, words) in ALLOWED.items():
        assert len(reason.split()) >= 3, group
        assert words and words <= entries, sorted(words - entries)
    assert allowed_words().isdisjoint(offensive_words())
    assert allowed_words().isdisjoint(reviewed_words()) and allowed_words().isdisjoint(left_out_words())
    # every single-token entry is allowed, reviewed or left out as an insult
    single = {w for w in entries if " " not in w}
    assert offensive_words() | (allowed_words() & single) | (reviewed_words() & single) == single


def test_whole_tokens_only_and_wordpiece_continuations() -> None:
    assert offensive_words() and not any(" " in w for w in offensive_words())  # "blow job" ignored
    # case-insensitive, whole tokens: no substring matching ("class", "scunthorpe", "classic")
    word = next(iter(sorted(offensive_words())))
    assert is_offensive(word.upper()) and is_offensive("##" + word)
    assert not offensive_mask(["class", "scunthorpe", "assistant", "cocktail", "##s", "the"]).any()
    # the WordPiece vocabulary leaves out a continuation whose stem is on the list
    full = build_vocabulary("bert-wordpiece", full=True)
    words = np.asarray(full.words, dtype=object)
    pieces = list(words[offensive_mask(words) & np.char.startswith(words.astype(str), "##")])
    assert pieces and not set(pieces) & set(build_vocabulary("bert-wordpiece").words)


# --- every inflection, and the reviewed words (issue 58) ------------------------------------

#: Suffixes an independent oracle strips from a vocabulary word to find its base (the module
#: generates forms forwards; this strips them backwards).
_SUFFIXES = ("'s", "'", "s", "es", "ies", "ed", "d", "ied", "ing", "er", "ers", "r", "rs")


def _bases(word: str) -> set[str]:
    """Every base a word could be an inflection of, by stripping up to two suffixes (with a
    final ``e`` put back, a doubled consonant undoubled, ``i`` back to ``y``, ``ck`` back to ``c``)."""
    out, frontier = {word}, {word}
    for _ in range(2):
        nxt = set()
        for w in frontier:
            for suf in _SUFFIXES:
                if w.endswith(suf) and len(w) > len(suf) + 1:
                    b = w[: -len(suf)]
                    nxt |= {b, b + "e", b + "y"}
                    if len(b) > 2 and b[-1] == b[-2]:
                        nxt.add(b[:-1])
                    if b.endswith("ck"):
                        nxt.add(b[:-1])
                    if b.endswith("i"):
                        nxt.add(b[:-1] + "y")
        out |= nxt
        frontier = nxt
    return out


def test_every_inflection_of_a_listed_word_is_left_out() -> None:
    """The issue's words: "bastard" was out of V while "bastards", "assholes" and "dicks" stayed
    in. Now no word of a default vocabulary strips down to a left-out word, by an oracle written
    independently of the module's rules, except the reviewed ordinary forms."""
    issue = ["bast" + "ards", "ass" + "holes", "di" + "cks", "da" + "mned", "r" + "aped", "na" + "zis"]
    full = set(build_vocabulary("glove", size=15_000, full=True).words)
    assert set(issue) <= full and offensive_mask(issue).all()
    bases = offensive_words() | reviewed_words()
    for embedding, size in (("glove", 15_000), ("bert", None), ("bert-wordpiece", None)):
        words = [w.removeprefix("##") for w in build_vocabulary(embedding, size=size).words]
        caught = sorted(w for w in words if _bases(w.lower()) & bases and w.lower() not in bases)
        # what the oracle still finds is an ordinary form or an allowed word, or not an inflection
        # the rules make (the oracle over-strips: "spaces" -> "spac"), never a left-out form
        assert not set(caught) & left_out_words(), embedding
        assert set(caught) & ORDINARY_FORMS or embedding != "glove", caught[:10]
    # possessives and agent nouns, and case
    word = sorted(offensive_words())[0]
    assert offensive_mask([word + "'s", word.upper() + "S", "##" + word + "s"]).all()


def test_the_ordinary_forms_are_inflections_that_occur_and_stay() -> None:
    bases = offensive_words() | reviewed_words()
    forms = set().union(*(inflections(w) for w in bases))
    assert ORDINARY_FORMS <= forms  # each is an inflection of a left-out word, else it proves nothing
    full = set(build_vocabulary("glove", size=50_000, full=True).words)
    full |= set(build_vocabulary("bert", full=True).words)
    assert ORDINARY_FORMS <= full and not offensive_mask(sorted(ORDINARY_FORMS)).any()
    kept = set(build_vocabulary("glove", size=50_000).words) | set(build_vocabulary("bert").words)
    assert ORDINARY_FORMS <= kept and "niger" in kept  # the country stays


def test_the_reviewed_words_are_left_out_in_every_inflection_and_documented() -> None:
    assert set(REVIEWED) == {
        "sexual violence",
        "genocide, its perpetrators and symbols",
        "explicit sexual terms",
    }
    for group, (reason, words) in REVIEWED.items():
        assert len(reason.split()) >= 8 and len(words) >= 10, group
        for w in words:
            forms = sorted(inflections(w) - ORDINARY_FORMS)
            assert offensive_mask(forms).all(), (group, w)
    # the issue's words, out of the default vocabulary, in it when full
    issue = ["r" + "aped", "hit" + "ler", "na" + "zi", "gen" + "ocide", "holo" + "caust"]
    full = set(build_vocabulary("glove", size=15_000, full=True).words)
    default = set(build_vocabulary("glove", size=15_000).words)
    assert set(issue) <= full and not set(issue) & default
    # identity, health and religion words stay: they are not reviewed
    stay = "gay queer lesbian muslim jewish christians christian islam god church penis vagina hiv cancer"
    assert set(stay.split()) <= default


def test_the_list_is_read_from_the_installed_package_without_importing_it() -> None:
    spec = importlib.util.find_spec("better_profanity")
    assert spec is not None and wordlist_path().parent == Path(spec.submodule_search_locations[0])
    assert len(wordlist_entries()) > 800
    code = (
        "import sys; from dpcore.text.vocab import build_vocabulary; "
        "v = build_vocabulary('glove', size=2000); "
        "print(v.offensive_removed, 'better_profanity' in sys.modules)"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    removed, imported = run.stdout.split()
    assert int(removed) > 0 and imported == "False"


# --- the vocabulary: size, label, OOV ------------------------------------------------------


def test_a_sized_vocabulary_keeps_its_size_and_says_which_it_is() -> None:
    full = build_vocabulary("glove", size=2_100, full=True)
    v = build_vocabulary("glove", size=2_000)
    bad = offensive_mask(full.words)
    # the next most frequent words fill in: V is the full ranking with the offensive words skipped
    assert len(v) == 2_000 and list(v.words) == list(full.words[~bad][:2_000])
    assert v.offensive_removed == int(bad[: np.flatnonzero(~bad)[1_999] + 1].sum()) > 0
    assert v.offensive_filtered and not full.offensive_filtered and full.offensive_removed == 0
    assert v.label == (
        f"GloVe 6B, top 2,000 words by frequency, {v.offensive_removed} offensive words left out "
        "(better-profanity 0.7.0 list in every inflection, dpcore's allow-list and reviewed words)"
    )
    assert full.label == "GloVe 6B, top 2,100 words by frequency, full vocabulary (offensive words included)"
    assert not offensive_mask(v.words).any() and offensive_mask(full.words).any()
    # a given list loses its offensive words too, unless full
    given = [*v.words[:5], *full.words[bad][:2]]
    assert list(build_vocabulary("glove", words=given).words) == given[:5]
    assert list(build_vocabulary("glove", words=given, full=True).words) == given
    with pytest.raises(DPCoreError, match="offensive"):
        build_vocabulary("glove", words=[given[0], *given[5:]])


def test_an_offensive_input_word_is_out_of_vocabulary() -> None:
    word = next(w for w in build_vocabulary("glove", size=2_000, full=True).words if is_offensive(w))
    line = f"the {word} hospital"
    out = dpcore.sanitize(line, mechanism="santext", epsilon=1000.0, seed=0)
    assert out.sanitized_tokens[0] == ["the", OOV_TOKEN, "hospital"] and out.n_oov == 1
    kept = dpcore.sanitize(line, mechanism="santext", epsilon=1000.0, seed=0, full_vocabulary=True)
    assert kept.sanitized_tokens[0] == ["the", word, "hospital"] and kept.n_oov == 0


# --- every mechanism, 1,000 public sentences, ε ∈ {0.5, 1, 3} -----------------------------


class _AdversarialLM:
    """A stand-in for DP-MLM's masked LM that prefers offensive WordPieces at every position
    (their logits at the clip's top, the rest spread below), with the shipped tokenizer: the
    worst LM for this property, and fast enough for 1,000 sentences. The real LM runs below on
    the issue's sentence."""

    def __init__(self) -> None:
        from dpcore.models.masked_lm import DEFAULT_MLM_DIR
        from dpcore.models.wordpiece import WordPieceTokenizer

        self.tokenizer = WordPieceTokenizer(str(DEFAULT_MLM_DIR))
        words = self.tokenizer.convert_ids_to_tokens(list(range(len(self.tokenizer))))
        self.vocab_size = len(words)
        self.row = np.random.default_rng(0).uniform(-16.0, -4.0, size=self.vocab_size).astype(np.float32)
        self.row[offensive_mask(words)] = 10.0

    def masked_logits(
        self, input_ids: np.ndarray, attention_mask: np.ndarray, positions: np.ndarray
    ) -> np.ndarray:
        return np.broadcast_to(self.row, (len(positions), self.vocab_size))


@pytest.fixture(scope="module")
def adversarial_lm() -> _AdversarialLM:
    return _AdversarialLM()


def _mechanism(name: str, eps: float, lm: _AdversarialLM, *, full: bool = False) -> Any:
    """The mechanism over the default vocabulary of the CLI and the Sanitize page (GloVe's 15,000
    most frequent words; dp-mlm: the bert-wordpiece vocabulary)."""
    if name == "dp-mlm":
        from dpcore.text.dpmlm import DPMLM

        return DPMLM(vocab=build_vocabulary("bert-wordpiece", full=full), epsilon=eps, mlm=lm)
    return dpcore.text_mechanism(name, epsilon=eps, full_vocabulary=full)


def _offensive_outputs(result: SanitizedText) -> list[str]:
    tokens = np.asarray([t for line in result.sanitized_tokens for t in line], dtype=object)
    return sorted(set(tokens[offensive_mask(tokens)]))


SEEDS = (0, 1, 2)


@pytest.mark.parametrize("name", TEXT_MECHANISMS.names())
def test_no_mechanism_outputs_an_offensive_word_on_1000_tweets(
    name: str, tweets: list[str], short_tweets: list[str], adversarial_lm: _AdversarialLM
) -> None:
    """Every text mechanism, on 1,000 public tweets, at ε ∈ {0.5, 1, 3} and 3 seeds each: no
    output token is left out in any inflection or reviewed (:func:`offensive_mask` covers both),
    and every output token is a word of V, ``[UNK]``, or a token of its own input line."""
    epsilons: tuple[float, ...] = EPSILONS
    if name == "dp-mlm":
        tweets = short_tweets
    if name == "truncated-gumbel":
        # calibrated only far above these ε: it refuses them, and is checked at its own floor
        with pytest.raises(DPCoreError, match="calibrated only for ε >"):
            _mechanism(name, EPSILONS[0], adversarial_lm)
        floor = TEXT_MECHANISMS.get(name).factory.minimum_epsilon(build_vocabulary("glove", size=15_000))
        epsilons = (1.05 * floor, 1.5 * floor, 3.0 * floor)
    for eps in epsilons:
        mech = _mechanism(name, eps, adversarial_lm)
        assert mech.vocab.offensive_filtered and "offensive words left out" in mech.params()["vocabulary"]
        vocab = set(mech.vocab.words) | {OOV_TOKEN}
        for seed in SEEDS:
            res = sanitize_lines(tweets, mech, seed=seed)
            assert len(res.lines) == SENTENCES and res.n_tokens > 5_000
            assert _offensive_outputs(res) == [], (name, eps, seed)
            foreign = {
                t
                for out, inp in zip(res.sanitized_tokens, res.original_tokens, strict=True)
                for t in set(out) - set(inp)
            }
            assert foreign <= vocab, (name, sorted(foreign - vocab)[:5])
    # the tweets do hold offensive words: they became [UNK], not outputs
    original = np.asarray([t for line in res.original_tokens for t in line], dtype=object)
    assert offensive_mask(original).sum() > 20


@pytest.mark.parametrize("name", ["random", "dp-mlm"])
def test_the_full_vocabulary_does_output_offensive_words(
    name: str, tweets: list[str], short_tweets: list[str], adversarial_lm: _AdversarialLM
) -> None:
    """The control: the same check fails on the full vocabulary (research mode)."""
    mech = _mechanism(name, 3.0, adversarial_lm, full=True)
    assert "full vocabulary (offensive words included)" in mech.params()["vocabulary"]
    # dp-mlm: 300 short tweets, about 2,000 draws of which ~0.4% fall on the 42 offensive pieces
    lines = short_tweets[:300] if name == "dp-mlm" else tweets
    assert len(_offensive_outputs(sanitize_lines(lines, mech, seed=0))) >= 2


def test_dp_mlm_with_its_real_lm_on_the_issue_sentence() -> None:
    from dpcore.text.dpmlm import DPMLM

    vocab = build_vocabulary("bert-wordpiece")
    for eps in EPSILONS:
        res = sanitize_lines([ISSUE_SENTENCE] * 3, DPMLM(vocab=vocab, epsilon=eps), seed=0)
        assert res.n_tokens > 30 and _offensive_outputs(res) == []


# --- the issue's sentence: SanText+, ε = 1, seed 0 -----------------------------------------


def test_the_issue_sentence_api() -> None:
    out = dpcore.sanitize(ISSUE_SENTENCE, mechanism="santext+", epsilon=1.0, seed=0)
    assert _offensive_outputs(out) == []
    assert out.parameters["vocabulary"].startswith("GloVe 6B, top 15,000 words by frequency, 64 offensive")
    # what the issue saw: the full vocabulary draws an offensive word for this sentence and seed
    full = dpcore.sanitize(ISSUE_SENTENCE, mechanism="santext+", epsilon=1.0, seed=0, full_vocabulary=True)
    assert len(_offensive_outputs(full)) == 1


#: Issue 58's five everyday sentences (a diagnosis, a post-office errand, a football match, a
#: school closing, a report due): SanText+ drew "raped", "bastards", "nazi", "dicks" and "hitler"
#: for them on the default vocabulary at the seeds the issue names.
FIVE_SENTENCES = [
    ISSUE_SENTENCE,
    "Please remind me to take the parcel to the post office before it closes at noon.",
    "Our team lost the football match 2-1 after a penalty in the last minute.",
    "The school will close early on Friday because the heating has broken down.",
    "The quarterly report is due next Tuesday, so I will finish the draft tonight.",
]


def _seeded_draws(mech: Any, seeds: range) -> tuple[np.ndarray, np.ndarray]:
    """Draw 1 of ``sanitize_lines(FIVE_SENTENCES, mech, seed=s)`` for every seed s, in one batch:
    each seed's generator gives the same two uniforms per known token that ``sample_ids`` draws
    (the keep coin, then the pick), and one ``sample_ids_from_uniforms`` call maps them all.
    Returns (output words, one row per seed; the per-token known mask)."""
    ref = sanitize_lines(FIVE_SENTENCES, mech, seed=0)
    flat = np.asarray([t for line in ref.original_tokens for t in line], dtype=object)
    ids = mech.vocab.ids(flat)
    known = ids >= 0
    x = ids[known]
    uniforms = [make_rng(s) for s in seeds]
    pairs = [(g.random(x.size), g.random(x.size)) for g in uniforms]
    coin = np.concatenate([c for c, _ in pairs])
    pick = np.concatenate([p for _, p in pairs])
    drawn = mech.sample_ids_from_uniforms(np.tile(x, len(seeds)), coin, pick)
    return mech.vocab.words[drawn].reshape(len(seeds), x.size), known


def test_the_five_sentences_at_600_seeds_and_three_epsilons() -> None:
    """SanText+ on the default vocabulary, seeds 0–599 (draw 1 of each, as the Sanitize page and
    the CLI give it) at ε ∈ {0.5, 1, 3}: 9,000 sanitized sentences, no left-out word. The full
    vocabulary, the control, does produce such words for the same seeds."""
    found_full = 0
    for eps in EPSILONS:
        mech = dpcore.text_mechanism("santext+", epsilon=eps)
        assert mech.vocab.label.startswith("GloVe 6B, top 15,000 words by frequency, 64 offensive")
        words, known = _seeded_draws(mech, range(600))
        assert words.shape[0] == 600 and known.sum() >= 60
        # the batch is the page's draw: seeds 0, 45 and 599 sanitized one call each agree
        for seed in (0, 45, 599):
            tokens = [
                t for line in sanitize_lines(FIVE_SENTENCES, mech, seed=seed).sanitized_tokens for t in line
            ]
            assert list(np.asarray(tokens, dtype=object)[known]) == list(words[seed]), (eps, seed)
        flat = words.ravel()
        assert not offensive_mask(flat).any(), (eps, sorted(set(flat[offensive_mask(flat)])))
        full = dpcore.text_mechanism("santext+", epsilon=eps, full_vocabulary=True)
        found_full += int(offensive_mask(_seeded_draws(full, range(600))[0].ravel()).sum())
    assert found_full >= 10


def _sanitize_cli(cli: Cli, tmp_path: Path, *extra: str) -> tuple[str, str, str]:
    """``sanitize`` of the issue's sentence through ``cli``: the file it wrote, its stdout, its stderr."""
    src, dst = tmp_path / "in.txt", tmp_path / f"out{len(list(tmp_path.iterdir()))}.txt"
    src.write_text(ISSUE_SENTENCE + "\n", encoding="utf-8")
    args = ["sanitize", "--mechanism", "santext+", "--epsilon", "1", "--seed", "0"]
    code, out, err = cli([*args, *extra, "--input", str(src), "--output", str(dst)])
    assert code == 0, err
    return dst.read_text(encoding="utf-8"), out, err


def test_the_issue_sentence_cli_in_every_output_mode(tmp_path: Path, cli: Cli) -> None:
    text, _, err = _sanitize_cli(cli, tmp_path)
    assert not offensive_mask(text.split()).any()
    assert "dpcore: vocabulary: GloVe 6B, top 15,000 words by frequency, 64 offensive words left out" in err
    _, out, _ = _sanitize_cli(cli, tmp_path, "--json")
    assert "64 offensive words left out" in json.loads(out)["parameters"]["vocabulary"]
    lines, _, err = _sanitize_cli(cli, tmp_path, "--format", "jsonl")
    assert not offensive_mask(json.loads(lines)["sanitized"]).any() and "offensive words left out" in err
    # --full-vocabulary: the issue's line, and every mode says so
    text, _, err = _sanitize_cli(cli, tmp_path, "--full-vocabulary")
    assert offensive_mask(text.split()).sum() == 1
    assert "vocabulary: GloVe 6B, top 15,000 words by frequency, full vocabulary" in err
    _, out, _ = _sanitize_cli(cli, tmp_path, "--full-vocabulary", "--json")
    assert "full vocabulary (offensive words included)" in json.loads(out)["parameters"]["vocabulary"]


# --- the flag and the vocabulary line on every command that builds a vocabulary ------------

COMMANDS = ("sanitize", "metrics", "sanitize-corpus", "attack", "utility", "audit-text", "verdicts")


def test_every_vocabulary_command_has_the_flag() -> None:
    sub = next(a for a in build_parser()._actions if a.dest == "command")
    for name in COMMANDS:
        opts = {o: a for a in sub.choices[name]._actions for o in a.option_strings}
        assert "--full-vocabulary" in opts, name
        assert opts["--full-vocabulary"].help == FULL_VOCABULARY_HELP, name


def test_metrics_and_audit_text_say_the_vocabulary(capsys: pytest.CaptureFixture[str]) -> None:
    base = ["metrics", "--mechanism", "santext", "--epsilon", "1", "--words", "hospital", "--trials", "100"]
    base += ["--vocab-size", "2000"]
    assert main(base) == 0
    assert "vocabulary: GloVe 6B, top 2,000 words by frequency, 6 offensive" in capsys.readouterr().out
    assert main([*base, "--full-vocabulary", "--json"]) == 0
    params = json.loads(capsys.readouterr().out)["parameters"]
    assert params["vocabulary"].endswith("full vocabulary (offensive words included)")
    audit = ["audit-text", "--mechanism", "random", "--epsilon", "1", "--vocab-size", "2000"]
    audit += ["--words", "hospital", "--neighbors", "1", "--pairs", "1", "--samples", "200", "--seed", "0"]
    assert main([*audit, "--json"]) == 0
    assert "6 offensive words left out" in json.loads(capsys.readouterr().out)["vocabulary"]
    assert main([*audit, "--full-vocabulary"]) == 0
    assert "vocabulary: GloVe 6B, top 2,000 words by frequency, full vocabulary" in capsys.readouterr().out


def test_attack_and_utility_record_the_vocabulary(capsys: pytest.CaptureFixture[str]) -> None:
    attack = [
        "attack",
        "--mechanism",
        "santext",
        "--epsilon",
        "3",
        "--sentences",
        "5",
        "--vocab-size",
        "2000",
    ]
    assert main(attack) == 0
    assert "vocabulary: GloVe 6B, top 2,000 words by frequency, 6 offensive" in capsys.readouterr().out
    assert main([*attack, "--full-vocabulary", "--json"]) == 0
    assert "full vocabulary" in json.loads(capsys.readouterr().out)["vocabulary"]
    util = ["utility", "--mechanism", "random", "--epsilon", "1", "--n-train", "200", "--n-test", "50"]
    assert main([*util, "--vocab-size", "2000", "--json"]) == 0
    assert "6 offensive words left out" in json.loads(capsys.readouterr().out)["vocabulary"]


def test_sanitize_corpus_records_the_vocabulary(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = tmp_path / "a.jsonl"
    src.write_text(json.dumps({"text": ISSUE_SENTENCE}) + "\n", encoding="utf-8")
    args = ["sanitize-corpus", "--mechanism", "santext+", "--epsilon", "1", "--input", str(src)]
    args += ["--text-column", "text", "--seed", "0", "--no-progress"]
    assert main([*args, "--output", str(tmp_path / "out")]) == 0
    assert (
        "dpcore: vocabulary: GloVe 6B, top 15,000 words by frequency, 64 offensive" in capsys.readouterr().err
    )
    manifest = json.loads((tmp_path / "out" / "_dpcore_manifest.json").read_text(encoding="utf-8"))
    assert manifest["vocabulary"]["label"] == manifest["parameters"]["vocabulary"]
    assert "64 offensive words left out" in manifest["vocabulary"]["label"]
    assert main([*args, "--output", str(tmp_path / "full"), "--full-vocabulary", "--json"]) == 0
    assert "full vocabulary" in json.loads(capsys.readouterr().out)["vocabulary"]["label"]
