"""The LLM reconstruction attack (issue 62, item 3): its scoring, its memorisation control, the
CLI's ``attack --attack llm``, the study the attack page shows, and the greedy decoding under it."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from dpcore.attack import reconstruction as rec
from dpcore.attack import reconstruction_study as rstudy
from dpcore.attack.experiment import attack_sweep
from dpcore.text import create_text_mechanism
from dpcore.text.vocab import Vocabulary
from dpcore.validation import DPCoreError

WORDS = ["the", "cat", "sat", "on", "mat", "a", "dog", "ran", "to", "park", "big", "red", "old", "hat"]
#: The toy attacker memorises these (the "public" sentences) ...
KNOWN = ["the cat sat on the mat", "a dog ran to the park", "the old hat sat on a red mat"]
#: ... and has never read these.
NEW = ["a red cat ran to the big park", "the dog sat on the old hat", "a big dog ran on the red mat"]


def _vocab() -> Vocabulary:
    rng = np.random.default_rng(0)
    return Vocabulary.create(
        embedding="glove",
        words=WORDS,
        vectors=rng.normal(size=(len(WORDS), 3)),
        frequency=np.geomspace(1.0, 1e-3, len(WORDS)),
        frequency_source="test",
    )


def _sweep(toy, sentences: list[str], eps=(0.5, 2.0, 4.0, 8.0)) -> dict:  # type: ignore[no-untyped-def]
    vocab = _vocab()
    return attack_sweep(
        sentences,
        lambda e: create_text_mechanism("santext", vocab=vocab, epsilon=e),
        list(eps),
        attacks=["bayes-unigram", "llm"],
        reconstructor=toy,
        seed=3,
    )


def _llm_rows(res: dict) -> list[dict]:
    return [r for r in res["rows"] if r["attack"] == "llm"]


def test_a_copying_attacker_recovers_exactly_the_words_the_sanitizer_kept(toy_reconstructor) -> None:  # type: ignore[no-untyped-def]
    """With nothing memorised the toy replies with what it reads: its guess at each place is the
    released word, so it recovers the kept words and no replaced one, at every ε, and all of the
    unsanitized text."""
    res = _sweep(toy_reconstructor, NEW)
    assert res["unsanitized"]["llm"]["attacker_top1_unsanitized"] == 1.0
    rows = _llm_rows(res)
    assert [r["epsilon"] for r in rows] == [0.5, 2.0, 4.0, 8.0]
    for r in rows:
        assert r["tokens"] - r["defended"] == r["kept_by_sanitizer"]
        assert r["recovered_replaced"] == 0 and r["replaced"] == r["tokens"] - r["kept_by_sanitizer"]
        assert r["reconstructor"] == "toy-memory"
    # the sanitizer replaced words at some ε and kept some at another: the check above had both
    assert rows[0]["replaced"] > 0 and rows[-1]["kept_by_sanitizer"] > 0
    bayes = [r for r in res["rows"] if r["attack"] == "bayes-unigram"]
    assert [b["kept_by_sanitizer"] for b in bayes] == [r["kept_by_sanitizer"] for r in rows]  # same draws


def test_a_memorising_attacker_restores_the_replaced_words_of_sentences_it_read_only(
    toy_reconstructor,
) -> None:  # type: ignore[no-untyped-def]
    """The toy has read KNOWN. Where a release shares at least half its words with a KNOWN
    sentence it writes that sentence, else it copies. The rows' counts equal the guesses
    (:func:`attacker_guesses`, tested on its own below) scored against the originals of the
    rows' examples (all three sentences), replaced words apart; NEW-like sentences the toy has
    not read gain nothing over copying."""
    toy_reconstructor.memorise(KNOWN)
    public = _llm_rows(_sweep(toy_reconstructor, KNOWN))
    restored = 0
    for r in public:
        hits = 0
        assert len(r["examples"]) == len(KNOWN)
        for ex in r["examples"]:
            orig, released = ex["original"].split(), ex["released"].split()
            words = set(released)
            best = max(KNOWN, key=lambda m: len(set(m.split()) & words))
            reply = best if len(set(best.split()) & words) >= len(words) / 2 else ex["released"]
            assert ex["reconstruction"] == reply
            guess = rec.attacker_guesses(released, reply.split())
            hits += sum(g == o for g, o in zip(guess, orig, strict=True))
            restored += sum(g == o != s for g, o, s in zip(guess, orig, released, strict=True))
        assert r["tokens"] - r["defended"] == hits
    assert restored > 0 and sum(r["recovered_replaced"] for r in public) == restored
    toy_reconstructor.memorise([])
    unseen = _llm_rows(_sweep(toy_reconstructor, KNOWN))
    assert sum(r["recovered_replaced"] for r in unseen) == 0
    low, high = public[0]["recovery_replaced_ci_low"], public[0]["recovery_replaced_ci_high"]
    assert 0.0 <= low <= public[0]["recovery_replaced"] <= high <= 1.0


def test_sweeps_sharing_references_compute_each_vocabularys_reference_once(toy_reconstructor) -> None:  # type: ignore[no-untyped-def]
    """The mechanism comparison runs one sweep per mechanism over one V: with a shared
    ``references`` dict the ε = ∞ reference is read from the first sweep, and equals it."""
    vocab, refs = _vocab(), {}

    def sweep(name: str) -> dict:
        return attack_sweep(
            NEW,
            lambda e: create_text_mechanism(name, vocab=vocab, epsilon=e),
            [1.0, 3.0],
            attacks=["llm"],
            reconstructor=toy_reconstructor,
            references=refs,
        )

    first = sweep("santext")
    assert toy_reconstructor.texts_read == 3 * len(NEW)  # the reference and two ε
    second = sweep("random")
    assert toy_reconstructor.texts_read == 5 * len(NEW)  # two ε only
    assert second["unsanitized"] == first["unsanitized"] and len(refs) == 1


@pytest.mark.parametrize(
    ("released", "reply", "want"),
    [
        (["the", "cat", "sat"], ["the", "dog", "sat"], ["the", "dog", "sat"]),  # a word changed back
        (list("abcdef"), list("axyzdef"), list("axydef")),  # a longer span: the k-th faces the k-th
        (["a", "b", "c", "d"], ["a", "d"], ["a", "b", "c", "d"]),  # words dropped: copied
        (
            ["the", "cat", "sat", "on"],
            ["write", "the", "original"],
            ["the", "cat", "sat", "on"],
        ),  # not a version
        (["one"], [], ["one"]),
    ],
)
def test_the_guess_at_each_place_reads_the_release_and_the_reply_only(released, reply, want) -> None:  # type: ignore[no-untyped-def]
    assert rec.attacker_guesses(released, reply) == want


def test_a_reply_is_cleaned_to_the_sentence_it_proposes() -> None:
    assert rec.clean_reply('The original sentence was: "It was the best of times." Then more.') == (
        "It was the best of times."
    )
    assert rec.clean_reply("\n\nOriginal sentence: call me Ishmael\nThat is all.") == "call me Ishmael"
    assert rec.clean_reply("") == ""
    assert rec.detokenize(["is", "##hma", "##el", "sat"]) == "ishmael sat"


def test_bad_settings_are_refused_clearly(toy_reconstructor) -> None:  # type: ignore[no-untyped-def]
    vocab = _vocab()

    def make(e: float):  # type: ignore[no-untyped-def]
        return create_text_mechanism("santext", vocab=vocab, epsilon=e)

    with pytest.raises(DPCoreError, match="needs a reconstructor"):
        attack_sweep(NEW, make, [1.0], attacks=["llm"])

    class Short:
        name = "short"

        def reconstruct(self, texts, *, progress=None):  # type: ignore[no-untyped-def]
            return list(texts)[:-1]

    with pytest.raises(DPCoreError, match="2 replies for 3 texts"):
        attack_sweep(NEW, make, [1.0], attacks=["llm"], reconstructor=Short())
    with pytest.raises(DPCoreError, match="unknown sentence set"):
        rec.sentence_set("tweets")


class DropLast:
    """A toy rewriter: the input's words without its last one (a document-level claim)."""

    name = "drop-last"

    claim = SimpleNamespace(epsilon=1.0, unit="document")  # the two fields the attack reads

    def rewrite(self, texts, rng):  # type: ignore[no-untyped-def]
        return [" ".join(str(t).split()[:-1]) for t in texts]


def test_a_rewriters_releases_are_scored_as_bags_of_words(toy_reconstructor) -> None:  # type: ignore[no-untyped-def]
    """Each KNOWN sentence loses its last word: the release carries n − 1 of n words. A copying
    attacker recovers exactly those and restores nothing; one that read the sentences writes them
    whole and restores every missing word."""
    n = sum(len(s.split()) for s in KNOWN)
    copy = rec.rewriter_reconstruction(DropLast(), KNOWN, toy_reconstructor, seed=1)
    assert (copy["words"], copy["carried"], copy["missing"]) == (n, n - len(KNOWN), len(KNOWN))
    assert copy["recovered"] == copy["carried"] and copy["restored"] == 0
    assert copy["carried_share"] == pytest.approx((n - 3) / n) and copy["epsilon"] == 1.0
    toy_reconstructor.memorise(KNOWN)
    read = rec.rewriter_reconstruction(DropLast(), KNOWN, toy_reconstructor, seed=1, keep=1)
    assert read["recovered"] == n and read["restored"] == len(KNOWN) and read["restored_share"] == 1.0
    assert read["restored_ci_low"] < 1.0 == read["restored_ci_high"]
    assert read["examples"] == [
        {"original": KNOWN[0], "released": "the cat sat on the", "reconstruction": KNOWN[0]}
    ]
    assert rec.bag_recovery("The the cat", "the dog", "THE the cat") == {
        "words": 3, "carried": 1, "recovered": 3, "missing": 2, "restored": 2,
    }  # fmt: skip


def test_the_two_sentence_sets_are_distinct_and_of_similar_size() -> None:
    public, unseen = rec.sentence_set("public-lines"), rec.sentence_set("unseen-lines")
    assert len(public) == len(unseen) == 64 and not set(public) & set(unseen)
    assert len(set(public)) == len(set(unseen)) == 64
    assert 0.7 < sum(len(s.split()) for s in unseen) / sum(len(s.split()) for s in public) < 1.3


# ---- the CLI -----------------------------------------------------------------------------------
def test_attack_llm_from_the_cli_in_text_and_json(cli, toy_reconstructor) -> None:  # type: ignore[no-untyped-def]
    toy_reconstructor.memorise(rec.sentence_set("public-lines"))
    base = ("attack", "--mechanism", "santext", "--attack", "llm", "--vocab-size", "2000", "--sentences", "4")
    text = cli(*base, "--epsilon", "2", "--dataset", "public-lines").ok()
    assert "ε = 2  llm: defense rate" in text
    assert "replaced by the sanitizer:" in text and "restored by the LLM" in text
    assert "what bounds it: The claim's ceiling bounds an attacker that sees one sanitized word" in text
    rows = cli(*base, "--epsilons", "2,6", "--dataset", "unseen-lines", "--json").json()
    assert [r["epsilon"] for r in rows] == [2.0, 6.0] and {r["attack"] for r in rows} == {"llm"}
    for r in rows:
        assert r["dataset"] == "unseen-lines" and r["reconstructor"] == "toy-memory" and r["sentences"] == 4
        assert 0.0 <= r["one_word_ceiling"] <= 1.0 and r["one_word_ceiling_note"] == rec.BOUND_NOTE
        assert r["recovered_replaced"] <= r["replaced"] and len(r["examples"]) == 3
    one = cli(*base, "--epsilon", "3", "--json").json()  # the default data: tweets
    assert one["attack"] == "llm" and one["dataset"] == "tweets"


@pytest.mark.parametrize(
    ("extra", "message"),
    [(("--mlm", "x"), "--mlm applies to"), (("--prior", "mlm"), "--prior applies to --attack bayes")],
)
def test_attack_llm_refuses_options_of_other_attacks(cli, toy_reconstructor, extra, message) -> None:  # type: ignore[no-untyped-def]
    run = cli("attack", "--mechanism", "santext", "--attack", "llm", "--epsilon", "1", *extra)
    assert run.code != 0 and message in run.err


# ---- the study the page shows ------------------------------------------------------------------
def test_the_study_runs_writes_and_reads_back(tmp_path, monkeypatch, toy_reconstructor) -> None:  # type: ignore[no-untyped-def]
    toy_reconstructor.memorise(rec.sentence_set("public-lines"))
    small = {"santext": {"embedding": "glove", "vocab_size": 2000, "epsilons": (1.0, 4.0)}}
    copies = {"planted:copy": {"epsilons": (1.0,), "options": {"q": 0.5}}}
    real = rstudy.run_study
    monkeypatch.setattr(
        rstudy, "run_study", lambda r, m, **kw: real(r, m, study=small, rewriters=copies, **kw)
    )
    monkeypatch.setattr("dpcore.attack.reconstruction.LMReconstructor", lambda lm: toy_reconstructor)
    monkeypatch.setattr("dpcore.models.causal_lm.load_smollm2", lambda: None)
    monkeypatch.setattr("dpcore.models.causal_lm.loading_message", lambda: "loading the toy")
    monkeypatch.setattr("dpcore.models.masked_lm.load_mlm", lambda name: None)
    out = tmp_path / "study.json"
    assert rstudy.main(["--output", str(out), "--sentences", "3"]) == 0
    doc = rstudy.load_study(out)
    assert doc is not None and doc["parameters"]["prompt"] == rec.PROMPT
    assert doc["parameters"]["sentences_per_set"] == 3 and {r["sentences"] for r in doc["runs"]} == {3}
    assert [(r["mechanism"], r["set"]) for r in doc["runs"]] == [
        ("santext", "public-lines"),
        ("santext", "unseen-lines"),
    ]
    table = rstudy.study_table(doc)
    assert len(table) == 4 and all(r["masked LM"] is None for r in table)  # no masked LM given: left out
    assert all(r["Bayes (unigram)"] is not None and 0 <= r["one-word ceiling"] <= 1 for r in table)
    assert "santext: the LLM restored" in rstudy.study_headline(doc)
    assert {e["sentences"] for e in rstudy.study_examples(doc)} == {"public-lines", "unseen-lines"}
    # the planted rewriter copies its input or releases an unrelated value: the toy copies what it
    # reads unless it read the line, so on unseen lines it restores nothing
    (pub, new) = doc["rewriter_runs"]
    assert (pub["set"], new["set"]) == ("public-lines", "unseen-lines") and new["restored"] == 0
    assert new["recovered"] == new["carried"] and pub["rewriter"] == "planted:copy"
    shown = rstudy.study_rewriter_display(doc)
    assert [r["lines"] for r in shown] == [
        "public",
        "unseen",
    ] and "planted:copy: the LLM wrote" in rstudy.study_headline(doc)
    from dpcore.viz.reconstruction_figure import reconstruction_figure

    fig = reconstruction_figure(table)
    names = {t.name for t in fig.data if t.showlegend is not False}
    assert {"LLM, all words", "LLM, replaced words only", "the claim's one-word ceiling"} <= names
    with pytest.raises(SystemExit):
        rstudy.main([])  # --write or --output is required


def test_the_shipped_study_covers_santext_and_dp_mlm_at_four_or_more_epsilons() -> None:
    """The page's shipped results: both mechanisms, both sets, the study's ε grid, the LLM, the
    masked-LM attacker (and the Bayesian one where there is a channel), each with its ceiling."""
    doc = rstudy.load_study()
    assert doc is not None, f"run {rstudy.COMMAND}"
    assert doc["parameters"]["prompt"] == rec.PROMPT and doc["parameters"]["sentences_per_set"] is None
    table = rstudy.study_table(doc)
    for mech, spec in rstudy.STUDY.items():
        for sset in rec.SENTENCE_SETS:
            rows = [r for r in table if r["mechanism"] == mech and r["sentences"] == sset]
            assert [r["epsilon"] for r in rows] == list(spec["epsilons"]) and len(rows) >= 4
            assert all(r["LLM"] is not None and r["masked LM"] is not None for r in rows)
            assert all(r["positions"] > 500 for r in rows)
    assert all(r["Bayes (unigram)"] is not None for r in table if r["mechanism"] == "santext")
    for name, spec in rstudy.REWRITER_STUDY.items():
        runs = [r for r in doc["rewriter_runs"] if r["rewriter"] == name]
        assert [(r["set"], r["epsilon"]) for r in runs] == [
            (s, e) for s in rec.SENTENCE_SETS for e in spec["epsilons"]
        ] and all(r["sentences"] == 64 for r in runs)


# ---- greedy decoding ---------------------------------------------------------------------------
def test_batched_greedy_decoding_is_each_prompts_own() -> None:
    """SmolLM2.greedy on a two-layer Llama: prompts of different lengths decoded together
    (left-padded, masked) give the tokens each gives alone, and those are the argmax of a full
    forward pass over the prompt and the tokens so far; decoding stops at the end of the turn."""
    torch = pytest.importorskip("torch")
    from tests.test_rewriter_dpprompt import _tiny_smollm2

    lm = _tiny_smollm2(seed=1)
    lm.tokenizer, lm.eos_ids = SimpleNamespace(pad_token_id=0), (39,)
    prompts = [
        np.array([5, 9, 3, 7, 2, 11], dtype=np.int64),
        np.array([4, 8], dtype=np.int64),
        np.array([6, 1, 30]),
    ]
    together = lm.greedy(prompts, max_new_tokens=6, batch=3)
    alone = [lm.greedy([p], max_new_tokens=6)[0] for p in prompts]
    for got, want, p in zip(together, alone, prompts, strict=True):
        assert np.array_equal(got, want)
        seq = list(p)
        with torch.inference_mode():
            for t in got:
                logits = lm.model(input_ids=torch.as_tensor([seq])).logits[0, -1]
                assert int(logits.argmax()) == int(t)
                seq.append(int(t))
    lm.eos_ids = (int(together[0][1]),)  # the second token now ends the turn
    assert list(lm.greedy(prompts[:1], max_new_tokens=6)[0]) == [int(together[0][0])]
    with pytest.raises(DPCoreError, match="max_new_tokens"):
        lm.greedy(prompts, max_new_tokens=0)
