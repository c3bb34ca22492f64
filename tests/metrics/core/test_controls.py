"""Controls (PEM §5.1): identical, random other original, unigram-model sentence."""

from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from metrics.core.controls import (
    CONTROL_KINDS,
    DEFAULT_EXPECTED_SCORES,
    build_controls,
    detokenize,
    random_other_originals,
    unigram_model,
    unigram_sentence,
)
from metrics.core.text import tokenize

ORIGINALS = {
    "John 1:1": "In the beginning was the Word, and the Word was with God, and the Word was God.",
    "John 1:2": "The same was in the beginning with God.",
    "John 1:3": "All things were made by him; and without him was not any thing made that was made.",
    "John 1:4": "In him was life; and the life was the light of men.",
    "John 1:5": "And the light shineth in darkness; and the darkness comprehended it not.",
}


def test_default_expected_scores_are_pems():
    assert DEFAULT_EXPECTED_SCORES == {
        "identical": {"adequacy": 5, "fluency": 5, "dissimilarity": 1, "overall": 2},
        "random": {"adequacy": 1, "fluency": 5, "dissimilarity": 5, "overall": 1},
        "unigram": {"adequacy": 1, "fluency": 1, "dissimilarity": 5, "overall": 1},
    }
    assert CONTROL_KINDS == ("identical", "random", "unigram")


def test_one_of_each_kind_per_original_by_default_counts():
    controls = build_controls(ORIGINALS, counts={"identical": 1, "random": 1, "unigram": 1}, seed=1)
    assert len(controls) == 15
    assert Counter((c.original, c.kind) for c in controls) == {(o, k): 1 for o in ORIGINALS for k in CONTROL_KINDS}


def test_identical_control_is_the_original_itself():
    controls = build_controls(ORIGINALS, counts={"identical": 1}, seed=1)
    assert all(c.text == ORIGINALS[c.original] and c.source is None for c in controls)


def test_random_control_is_another_original_never_the_same():
    for seed in range(50):
        for c in build_controls(ORIGINALS, counts={"random": 1}, seed=seed):
            assert c.source != c.original
            assert c.text == ORIGINALS[c.source] != ORIGINALS[c.original]


def test_random_control_skips_originals_with_the_same_text():
    originals = {"a": "Same words here.", "b": "Same words here.", "c": "Other words."}
    for seed in range(20):
        assert random_other_originals(originals, "a", n=1, seed=seed) == ["c"]


def test_several_random_controls_per_original_are_distinct():
    controls = build_controls(ORIGINALS, counts={"random": 3}, seed=4)
    by_original = {}
    for c in controls:
        by_original.setdefault(c.original, []).append(c.source)
    assert all(len(set(v)) == 3 and o not in v for o, v in by_original.items())
    assert [c.copy for c in controls if c.original == "John 1:1"] == [1, 2, 3]


def test_random_control_needs_another_original():
    with pytest.raises(ValueError, match="needs 1 other original"):
        build_controls({"only": "One sentence."}, counts={"random": 1}, seed=1)


def test_random_choice_is_roughly_uniform_over_the_others():
    originals = {f"o{i}": f"Sentence {i}." for i in range(5)}
    picks = Counter(random_other_originals(originals, "o0", n=1, seed=s)[0] for s in range(4000))
    assert set(picks) == {"o1", "o2", "o3", "o4"}
    assert all(abs(n / 4000 - 0.25) < 0.03 for n in picks.values())


def test_unigram_model_is_maximum_likelihood():
    model = unigram_model(["the cat saw the dog", "the end"])
    assert model.n_tokens == 7
    assert model.probability("the") == pytest.approx(3 / 7)
    assert model.probability("cat") == pytest.approx(1 / 7)
    assert model.probability("unicorn") == 0.0
    assert model.cumulative()[-1] == 1.0
    with pytest.raises(ValueError, match="at least one token"):
        unigram_model(["", "  "])


def test_unigram_control_has_the_original_token_length():
    controls = build_controls(ORIGINALS, counts={"unigram": 2}, seed=7)
    for c in controls:
        assert len(tokenize(c.text)) == len(tokenize(ORIGINALS[c.original]))
    texts = [c.text for c in controls]
    assert len(set(texts)) == len(texts)  # two copies differ


def test_unigram_words_come_from_the_study_text_including_candidates():
    corpus = ["Zebras quietly graze."]
    vocab = {t for text in [*ORIGINALS.values(), *corpus] for t in tokenize(text)}
    vocab |= {t[:1].upper() + t[1:] for t in vocab}  # the first word is capitalised
    for c in build_controls(ORIGINALS, counts={"unigram": 1}, seed=3, corpus=corpus):
        assert set(tokenize(c.text)) <= vocab


def test_unigram_frequencies_follow_the_model():
    model = unigram_model(["a a a b"])
    text = unigram_sentence(model, 20000, seed=1)
    tokens = [t.lower() for t in tokenize(text)]
    share_a = tokens.count("a") / len(tokens)
    assert abs(share_a - 0.75) < 0.02


def test_controls_are_reproducible_from_the_seed_and_stable_under_additions():
    counts = {"identical": 1, "random": 1, "unigram": 1}
    a = build_controls(ORIGINALS, counts=counts, seed=42)
    assert a == build_controls(ORIGINALS, counts=counts, seed=42)
    assert a != build_controls(ORIGINALS, counts=counts, seed=43)
    # A new original changes the unigram distribution and the random pool, but the
    # seed of each existing original's draw stays the same: identical controls of
    # the old originals are unchanged, and the new one gets its own.
    more = dict(ORIGINALS, **{"John 1:6": "There was a man sent from God, whose name was John."})
    b = build_controls(more, counts=counts, seed=42)
    assert [c for c in a if c.kind == "identical"] == [
        c for c in b if c.kind == "identical" and c.original != "John 1:6"
    ]


def test_unknown_kind_or_negative_count_is_refused():
    with pytest.raises(ValueError, match="unknown control kind"):
        build_controls(ORIGINALS, counts={"shuffled": 1}, seed=1)
    with pytest.raises(ValueError, match="≥ 0"):
        build_controls(ORIGINALS, counts={"random": -1}, seed=1)


def test_detokenize_attaches_punctuation():
    assert (
        detokenize(["In", "him", "was", "life", ";", "and", "(", "light", ")", "."]) == "In him was life; and (light)."
    )


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.text(alphabet="abcXYZ’'-.,;()3 ", min_size=1, max_size=40), min_size=1, max_size=5),
    st.integers(1, 30),
    st.integers(0, 2**31),
)
def test_detokenized_unigram_sentence_tokenizes_back_to_its_length(texts, length, seed):
    try:
        model = unigram_model(texts)
    except ValueError:
        return
    assert len(tokenize(unigram_sentence(model, length, seed=seed))) == length


def test_sampling_uses_a_platform_stable_generator():
    model = unigram_model(["one two three four five"])
    expected_idx = np.searchsorted(model.cumulative(), np.random.Generator(np.random.PCG64(99)).random(5), side="right")
    words = [model.vocabulary[i] for i in expected_idx]
    text = unigram_sentence(model, 5, seed=99)
    assert text.lower() == detokenize(words).lower()


CLUSTER_TEXTS = [
    "My 👩\u200d👩\u200d👧 went to 🇪🇸 for a cafe\u0301 👍🏽.",
    "كَتَبَ الوَلَدُ الدَّرسَ ❤️",
]


def test_unigram_words_keep_grapheme_clusters_whole():
    model = unigram_model(CLUSTER_TEXTS)
    for word in ("👩\u200d👩\u200d👧", "🇪🇸", "café", "👍🏽", "كَتَبَ", "الوَلَدُ", "❤️"):
        assert word in model.vocabulary
    assert not {"\u200d", "🇪", "\u064e", "\ufe0f", "🏽"} & set(model.vocabulary)


def test_a_unigram_control_never_puts_a_space_inside_a_character():
    from metrics.core.spans.offsets import grapheme_boundaries

    model = unigram_model(CLUSTER_TEXTS)
    for seed in range(200):
        sentence = unigram_sentence(model, 12, seed=seed)
        clusters = [sentence[a:b] for a, b in zip(grapheme_boundaries(sentence), grapheme_boundaries(sentence)[1:])]
        assert all(c == " " or not any(ch.isspace() for ch in c) for c in clusters), sentence


def test_controls_of_text_without_clusters_are_unchanged_by_whole_cluster_words():
    corpus = list(ORIGINALS.values())
    model = unigram_model(corpus)
    counts = Counter(tok for text in corpus for tok in tokenize(text))
    assert model.vocabulary == tuple(sorted(counts)) and model.counts == tuple(counts[w] for w in model.vocabulary)
