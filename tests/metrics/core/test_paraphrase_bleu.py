"""Paraphrase-augmented BLEU (Kauchak & Barzilay 2006): candidates, context filter, BLEU."""

from __future__ import annotations

import random

import pytest
import sacrebleu

from metrics.core.paraphrase_bleu.classifiers import ClassifierBank, context_features
from metrics.core.paraphrase_bleu.corpus import TrainingCorpus, load_training_corpus
from metrics.core.paraphrase_bleu.rewriting import FUNCTION_WORDS, synthetic_reference
from metrics.core.registry import create_metric
from metrics.core.text import tokenize
from metrics.core.wordnet import default_table

FILLER = "river mountain bread water stone light city king garden field road friend song night".split()


def synthetic_corpus() -> TrainingCorpus:
    """ "hard" lives in "it is hard to ..." contexts, "place" in "took place" ones;
    fillers often say "far from home" (a context "place" never appears in)."""
    rng = random.Random(0)
    lines = []
    for _ in range(60):
        a, b = rng.sample(FILLER, 2)
        lines.append(f"it is hard to believe the {a} and the {b}")
        lines.append(f"it was hard to find a {a}")
        lines.append(f"the {a} festival took place in the {b} yesterday")
        lines.append(f"they lived far from home near the {a}")
        lines.append(f"we walked far from home with the {b}")
        lines.append(f"the {a} is near the {b} and the {rng.choice(FILLER)}")
    return TrainingCorpus([tokenize(s, lowercase=True) for s in lines], fingerprint="synthetic")


@pytest.fixture(scope="module")
def bank():
    return ClassifierBank(synthetic_corpus(), min_count=5, max_examples=100)


def test_a_synonym_from_the_output_replaces_the_reference_word_in_a_fitting_context(bank):
    syn = synthetic_reference(
        "It is difficult to believe the story.", "it is hard to believe this story", synonyms=default_table(), bank=bank
    )
    assert syn.text == "It is hard to believe the story."
    (sub,) = syn.substitutions
    assert (sub.position, sub.old, sub.new) == (2, "difficult", "hard")
    assert sub.probability >= 0.5


def test_synonyms_are_only_taken_from_the_output(bank):
    # "hard" is a WordNet synonym of "difficult", but the output does not contain it.
    syn = synthetic_reference(
        "It is difficult to believe the story.", "it is tough to credit this story", synonyms=default_table(), bank=bank
    )
    assert syn.substitutions == ()
    assert syn.text == "It is difficult to believe the story."


def test_the_classifier_rejects_a_synonym_in_an_implausible_context(bank):
    # (home, place) are WordNet synonyms, but "place" only ever occurs in
    # "took place" contexts, and "far from _" belongs to other words.
    assert default_table().are_synonyms("home", "place")
    clf = bank.classifier("place")
    ref = tokenize("we walked far from home with the king", lowercase=True)
    assert clf.probability(context_features(ref, ref.index("home"))) < 0.5
    syn = synthetic_reference(
        "We walked far from home with the king.",
        "we walked far from the place with a king",
        synonyms=default_table(),
        bank=bank,
    )
    assert syn.substitutions == ()
    # ... while "took _ in" is where "place" belongs.
    fit = tokenize("the song festival took place in the city", lowercase=True)
    assert clf.probability(context_features(fit, fit.index("place"))) > 0.5


def test_words_rarer_than_min_count_are_never_substituted():
    bank = ClassifierBank(synthetic_corpus(), min_count=10_000)
    assert bank.classifier("hard") is None
    syn = synthetic_reference(
        "It is difficult to believe.", "it is hard to believe", synonyms=default_table(), bank=bank
    )
    assert syn.substitutions == ()


def test_function_words_and_inflections_of_one_lemma_are_not_substituted(bank):
    assert "have" in FUNCTION_WORDS
    syn = synthetic_reference("They have walked.", "they had walk", synonyms=default_table(), bank=bank)
    assert syn.substitutions == ()


def test_context_features_exclude_the_word_and_mark_positions():
    feats = context_features(["it", "is", "hard", "to", "believe"], 2)
    assert not any("hard" in f for f in feats)
    assert "u:it" in feats and "b:to believe" in feats
    assert "c2@-1:is □" in feats and "c1@2:believe" in feats and "c4@-2:it is □ to" in feats
    assert "b:is to" not in feats  # n-grams do not cross the gap
    edge = context_features(["hard", "work"], 0)
    assert "c2@-2:<s> <s>" in edge and "c2@1:work </s>" in edge


def test_classifiers_are_cached_on_disk_and_reloaded(tmp_path):
    corpus = synthetic_corpus()
    first = ClassifierBank(corpus, min_count=5, max_examples=50, cache_dir=tmp_path)
    clf = first.classifier("hard")
    assert list(tmp_path.rglob("*.json.gz"))
    second = ClassifierBank(corpus, min_count=5, max_examples=50, cache_dir=tmp_path)
    assert second._read("hard") == clf


def test_metric_equals_plain_bleu_when_no_synonym_applies(tmp_path, monkeypatch):
    monkeypatch.setenv("PARAEVAL_CACHE_DIR", str(tmp_path))
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("\n".join(" ".join(s) for s in synthetic_corpus().sentences))
    m = create_metric("paraphrase-bleu", {"min_count": "5"}, {"corpus": str(corpus)})
    originals = ["The cat sat on the mat.", "A man went to the market."]
    candidates = ["The cat is on the mat.", "Somebody walked to a shop."]
    res = m.score(originals, candidates)
    assert list(res.scores) == [sacrebleu.sentence_bleu(c, [o]).score for o, c in zip(originals, candidates)]
    assert res.corpus == sacrebleu.corpus_bleu(candidates, [originals]).score


def test_metric_scores_against_the_synthetic_reference(tmp_path, monkeypatch):
    monkeypatch.setenv("PARAEVAL_CACHE_DIR", str(tmp_path))
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("\n".join(" ".join(s) for s in synthetic_corpus().sentences))
    m = create_metric("paraphrase-bleu", {"min_count": "5", "max_examples": "100"}, {"corpus": str(corpus)})
    original, candidate = "It is difficult to believe the story.", "It is hard to believe the story."
    res = m.score([original], [candidate])
    assert res.scores[0] == sacrebleu.sentence_bleu(candidate, ["It is hard to believe the story."]).score
    assert res.scores[0] == pytest.approx(100.0)
    assert create_metric("bleu").score([original], [candidate]).scores[0] < 100.0
    sig = m.signature()
    assert "res:corpus=" in sig and "res:synonyms=" in sig


def test_against_reference_rewrites_the_reference_column(tmp_path, monkeypatch):
    monkeypatch.setenv("PARAEVAL_CACHE_DIR", str(tmp_path))
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("\n".join(" ".join(s) for s in synthetic_corpus().sentences))
    m = create_metric("paraphrase-bleu", {"min_count": "5", "against": "reference"}, {"corpus": str(corpus)})
    (syn,) = m.synthetic_references(["unrelated"], ["it is hard to believe"], ["it is difficult to believe"])
    assert syn.text == "it is hard to believe"


def test_shipped_bible_corpus_turns_oxen_into_cattle():
    corpus = load_training_corpus()
    assert len(corpus) > 60_000
    bank = ClassifierBank(corpus, max_examples=200)
    syn = synthetic_reference(
        "And Abraham took sheep and oxen, and gave them unto Abimelech; and both of them made a covenant.",
        "Abraham took sheep and cattle, and gave them to Abimelech. Those two made a covenant.",
        synonyms=default_table(),
        bank=bank,
    )
    assert [(s.old, s.new) for s in syn.substitutions] == [("oxen", "cattle")]
    assert (
        syn.text == "And Abraham took sheep and cattle, and gave them unto Abimelech; and both of them made a covenant."
    )
