"""Embeddings, vocabularies, tokenizers, OOV policy, corpora and privacy metrics on real data."""

from __future__ import annotations

import math
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from dpcore.text import SanText, SanTextPlus, create_text_mechanism
from dpcore.text.corpora import CORPORA, clean_corpus, corpus_counts, load_corpus, sample_sentences
from dpcore.text.embeddings import load_embedding, load_tokenizer
from dpcore.text.metrics import token_metrics
from dpcore.text.sanitize import OOV_TOKEN, check_text, decode_text, sanitize_lines
from dpcore.text.vocab import Vocabulary, build_vocabulary
from dpcore.validation import DPCoreError

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="session")
def glove_small() -> Vocabulary:
    return build_vocabulary("glove", size=2000)


# ---- embeddings and vocabularies ---------------------------------------------------------------
def test_glove_loads_and_converts_to_keyed_vectors() -> None:
    emb = load_embedding("glove")
    assert emb.vectors.shape == (400_000, 50) and len(emb.words) == 400_000
    assert isinstance(emb.vectors, np.memmap)  # rows are read only when a vocabulary takes them
    assert emb.words[:3] == ["the", ",", "."]
    near = [w for w, _ in emb.keyed_vectors().most_similar("privacy", topn=20)]  # a real gensim KV
    assert {"confidentiality", "security", "rights"} & set(near)
    assert load_tokenizer("glove") is emb.tokenizer  # tokenizers are cached, embeddings are not


def test_bert_embedding_loads_without_torch() -> None:
    code = (
        "import sys\nfrom dpcore.text.embeddings import load_embedding, load_tokenizer\n"
        "w, p = load_embedding('bert'), load_embedding('bert-wordpiece')\n"
        "print(w.vectors.shape, int(w.reserved.sum()), int(p.reserved.sum()), "
        "'torch' in sys.modules, 'transformers' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    # whole words: 22,748 usable tokens (7,774 reserved); the paper's WordPieces: 29,523 (999 reserved)
    assert out.stdout.strip() == "(30522, 384) 7774 999 False False"


def test_bert_neighbours_are_meaningful() -> None:
    kv = load_embedding("bert").keyed_vectors()
    near = [w for w, _ in kv.most_similar("privacy", topn=10)]
    assert {"security", "confidential", "private"} & set(near)


def test_vocabulary_by_public_frequency(glove_small: Vocabulary) -> None:
    assert len(glove_small) == 2000
    words = list(glove_small.words)
    assert {"the", ",", ".", "'s", "n't"} <= set(words)  # punctuation and clitics are rank-matched
    assert words.index("the") < words.index("movie")
    assert np.all(np.diff(glove_small.frequency) <= 0)  # ordered by frequency
    assert glove_small.vectors.dtype == np.float64 and not glove_small.vectors.flags.writeable


def test_explicit_vocabulary_keeps_order_and_rejects_unknown_words() -> None:
    v = build_vocabulary("glove", words=["zebra", "apple", "zebra", "", "car"])
    assert list(v.words) == ["zebra", "apple", "car"]
    with pytest.raises(DPCoreError, match="not in the glove embedding"):
        build_vocabulary("glove", words=["apple", "qqqzzzxxyy"])
    with pytest.raises(DPCoreError, match="unknown embedding"):
        build_vocabulary("word2vec", size=10)


def test_bert_vocabulary_excludes_reserved_tokens() -> None:
    for name, size in (("bert", 22_748), ("bert-wordpiece", 30_522 - 999)):
        full = build_vocabulary(name, full=True)
        assert len(full) == size and full.offensive_removed == 0
        v = build_vocabulary(name)  # the default leaves the offensive words out
        assert 0 < v.offensive_removed < 100 and len(v) == size - v.offensive_removed
        for vocab in (full, v):
            assert "[PAD]" not in set(vocab.words) and "[unused0]" not in set(vocab.words)


def test_tokenizers() -> None:
    g = load_tokenizer("glove")
    assert g.tokenize("Don't panic, it's FINE!") == ["do", "n't", "panic", ",", "it", "'s", "fine", "!"]
    b = load_tokenizer("bert-wordpiece")
    toks = b.tokenize("Privacy-preserving NLP " * 100)
    assert len(toks) == 500 and "[PAD]" not in toks  # no padding, no truncation
    assert b.detokenize(["nl", "##p"]) == "nl ##p"  # token by token: a replaced piece never glues
    w = load_tokenizer("bert")
    toks = w.tokenize("Privacy-preserving NLP " * 100)
    assert len(toks) == 400 and toks[:4] == ["privacy", "-", "preserving", "nlp"]  # whole words
    assert w.detokenize(["privacy", "-", "preserving"]) == "privacy - preserving"


# ---- sanitizing text -------------------------------------------------------------------------
def test_oov_policy_mask_and_keep(glove_small: Vocabulary) -> None:
    mech = SanText(vocab=glove_small, epsilon=1e3)  # keeps in-vocabulary tokens
    lines = ["the zzyzxq movie", "", "qwvpt"]
    masked = sanitize_lines(lines, mech, seed=0, oov="mask")
    assert masked.lines == [f"the {OOV_TOKEN} movie", "", OOV_TOKEN]
    assert masked.n_oov == 2 and masked.parameters["oov_policy"] == "mask"
    kept = sanitize_lines(lines, mech, seed=0, oov="keep")
    assert kept.lines == ["the zzyzxq movie", "", "qwvpt"]
    with pytest.raises(DPCoreError):
        sanitize_lines(lines, mech, seed=0, oov="drop")


def test_sanitize_records_seed_and_is_reproducible(glove_small: Vocabulary) -> None:
    mech = SanTextPlus(vocab=glove_small, epsilon=2.0, p=0.3, w=0.9)
    lines = sample_sentences("lee", 20, seed=1)
    a = sanitize_lines(lines, mech, seed=5)
    b = sanitize_lines(lines, mech, seed=5)
    c = sanitize_lines(lines, mech, seed=None)
    assert a.lines == b.lines and len(a.lines) == 20
    assert a.parameters["seed"] == 5 and isinstance(c.parameters["seed"], int)
    assert a.parameters["p"] == 0.3 and a.parameters["sensitive_size"] == 1800
    assert [len(t) for t in a.original_tokens] == [len(t) for t in a.sanitized_tokens]


@pytest.mark.parametrize(
    ("data", "msg"),
    [
        (b"", "empty"),
        (b"  \n", "empty"),
        (b"\x00\x01abc", "binary"),
        (b"\xff\xfe\xfa", "UTF-8"),
        (b"a" * 11, "MB"),
    ],
)
def test_bad_bytes(data: bytes, msg: str) -> None:
    with pytest.raises(DPCoreError, match=msg):
        decode_text(data, what="upload", max_bytes=10)


def test_text_cap() -> None:
    with pytest.raises(DPCoreError, match="limit is 20,000"):
        check_text("a" * 20_001)
    assert check_text("hello") == "hello"


# ---- corpora -------------------------------------------------------------------------------------
def test_corpora_ship_inside_packages() -> None:
    tweets, lee = load_corpus("tweets"), load_corpus("lee")
    assert len(tweets) > 38_000 and len(lee) > 2_000
    assert not any("http" in t for t in tweets[:2000])
    for info in CORPORA.values():
        assert info.licence and info.source
    counts = corpus_counts(lee[:50], load_tokenizer("glove"))
    assert counts["the"] > 10
    with pytest.raises(DPCoreError):
        load_corpus("sst2")


# ---- metrics -------------------------------------------------------------------------------------
def test_metrics_exact_values(glove_small: Vocabulary) -> None:
    mech = SanText(vocab=glove_small, epsilon=3.0)
    rows = token_metrics(mech, ["the", "movie"], threshold=0.9, trials=1000, seed=0, population=400)
    x = glove_small.ids(["the", "movie"])
    for r, xi in zip(rows, x, strict=True):
        lp = next(mech.iter_log_rows(np.array([xi])))[1][0]
        p = np.exp(lp)
        assert r["N_x"] == pytest.approx(p[xi], rel=1e-12)
        srt = np.sort(p)[::-1]
        k = r["S_x"]
        assert srt[:k].sum() >= 0.9 - 1e-12 > srt[: k - 1].sum()  # smallest set reaching 0.9
        assert r["H0"] == pytest.approx(math.log(k))
        assert r["H_inf"] == pytest.approx(-math.log(p.max()))
        # Monte-Carlo count against its exact expectation (sd of a distinct count ≤ sqrt(mean))
        assert abs(r["S_x_mc"] - r["S_x_mc_expected"]) < 5 * math.sqrt(r["S_x_mc_expected"])
        assert abs(r["S_y_star_mc"] - r["S_y_star_expected"]) < 5 * math.sqrt(r["S_y_star_expected"]) + 1


def test_metrics_santext_plus_non_sensitive(glove_small: Vocabulary) -> None:
    mech = SanTextPlus(vocab=glove_small, epsilon=3.0, p=0.3, w=0.9)
    (r,) = token_metrics(mech, ["the"], seed=0)
    assert r["sensitive"] is False
    assert r["N_x"] == pytest.approx(0.7, rel=1e-12)
    assert r["S_y_star_mc"] == 1 and r["S_y_star_expected"] == pytest.approx(1.0)  # only 'the' → 'the'


def test_metrics_random_and_feyisetan(glove_small: Vocabulary) -> None:
    (r,) = token_metrics(create_text_mechanism("random", vocab=glove_small, epsilon=1.0), ["the"])
    assert r["S_x"] == math.ceil(0.95 * 2000) and r["N_x"] == pytest.approx(1 / 2000)
    (f,) = token_metrics(create_text_mechanism("feyisetan", vocab=glove_small, epsilon=1e3), ["movie"])
    assert f["method"] == "mc" and f["N_x"] == 1.0 and f["S_y_star_mc"] is None
    with pytest.raises(DPCoreError, match="not in the"):
        token_metrics(SanText(vocab=glove_small, epsilon=1.0), ["qqqzzzxxyy"])


@pytest.mark.parametrize("name", sorted(CORPORA))
def test_samples_come_only_from_lines_without_a_left_out_word(name: str) -> None:
    """Issue 58: a page's sample sentences hold no offensive or reviewed word, in any inflection.
    Checked with a tokenization of its own (every run of letters, digits and apostrophes)."""
    from dpcore.text.offensive import offensive_mask

    every, clean = load_corpus(name), clean_corpus(name)
    assert set(clean) < set(every) and len(clean) > 0.9 * len(every)
    words = np.asarray([w for line in clean for w in re.findall(r"[\w']+", line.lower())], dtype=object)
    assert not offensive_mask(words).any()
    kept = set(clean)
    dropped = [line for line in every if line not in kept]
    per_line = [re.findall(r"[a-z]+(?:'[a-z]+)?", line.lower()) for line in dropped]
    owner = np.repeat(np.arange(len(dropped)), [len(w) for w in per_line])
    hits = offensive_mask(np.asarray([w for ws in per_line for w in ws], dtype=object))
    assert np.bincount(owner[hits], minlength=len(dropped)).min() >= 1  # each dropped line held one
    if name == "tweets":
        assert len(dropped) > 1_133  # the count of lines with a listed word, before inflections
        assert not set(sample_sentences(name, 200, seed=0, clean=False)) <= kept  # the control
    for seed in range(5):
        assert set(sample_sentences(name, 20, seed=seed)) <= kept
