"""PEM target-language F1 by hand (Liu et al. 2010, §4.3–4.4)."""

from __future__ import annotations

from collections import Counter

import pytest

from metrics.core.registry import create_metric
from metrics.core.target_f1 import english_tokens, ngram_counts, overlap_stats, target_f1


def test_the_papers_example_denominator_is_all_ngrams_up_to_four():
    # "Hello , Querrien ." has 4 + 3 + 2 + 1 = 10 n-grams (the paper's denominator 10.0).
    assert sum(ngram_counts("Hello , Querrien .".split()).values()) == 10
    # English bags share only "," and "." → precision = recall = 2/10.
    assert target_f1("Hello , Querrien .", "Morning , sir .", stem=False) == pytest.approx(0.2)


def test_counts_are_clipped():
    # R = "a a b", P = "a a a":
    # bag R: a×2, b, (a a), (a b), (a a b)         → 6 n-grams
    # bag P: a×3, (a a)×2, (a a a)                 → 6 n-grams
    # overlap: min(2,3) for a + min(1,2) for (a a) = 3
    bag_r = ngram_counts(["a", "a", "b"])
    bag_p = ngram_counts(["a", "a", "a"])
    assert overlap_stats(bag_r, bag_p) == (3, 6, 6)
    assert target_f1("a a b", "a a a", stem=False) == pytest.approx(0.5)


def test_precision_and_recall_differ_when_lengths_differ():
    # R = "x y" (3 n-grams), P = "x" (1): overlap 1 → P = 1, R = 1/3, F1 = 2·1·(1/3)/(4/3) = 0.5
    assert target_f1("x y", "x", stem=False) == pytest.approx(0.5)


def test_porter_stemming_is_on_by_default():
    assert english_tokens("The Rivers flowed") == ["the", "river", "flow"]
    assert target_f1("rivers flowed", "river flows") == 1.0
    assert target_f1("rivers flowed", "river flows", stem=False) == 0.0


def test_metric_corpus_score_is_f1_of_summed_counts():
    m = create_metric("target-f1")
    res = m.score(["x y", "a b c d"], ["x", "e f"])
    assert res.scores == pytest.approx((0.5, 0.0))
    # sums: overlap 1, candidate 1 + 3 = 4, original 3 + 10 = 13 → 2/17
    assert res.corpus == pytest.approx(2 / 17)
    assert m.stat_names == ("overlap", "count_candidate", "count_original")


def test_empty_sentences_score_zero():
    assert target_f1("", "") == 0.0
    assert ngram_counts([]) == Counter()
