"""PINC (Chen & Dolan 2011) by hand."""

from __future__ import annotations

import pytest

from metrics.core.base.bootstrap import bootstrap_ci
from metrics.core.pinc import ngram_set, pinc_score
from metrics.core.registry import create_metric


def test_pinc_by_hand():
    # R = "the cat sat on the mat", P = "the cat lay on a mat"
    # 1-grams of P {the, cat, lay, on, a, mat}: 4 in R          → 1 − 4/6
    # 2-grams {the cat, cat lay, lay on, on a, a mat}: 1 in R    → 1 − 1/5
    # 3-grams {the cat lay, cat lay on, lay on a, on a mat}: 0   → 1
    # 4-grams (3 of them): 0                                     → 1
    r = "the cat sat on the mat".split()
    p = "the cat lay on a mat".split()
    expected = ((1 - 4 / 6) + (1 - 1 / 5) + 1 + 1) / 4
    assert pinc_score(r, p) == pytest.approx(expected)


def test_orders_where_the_candidate_has_no_ngrams_are_skipped():
    # P has 2 tokens: only orders 1 and 2 count.
    assert pinc_score("a b c".split(), "a x".split()) == pytest.approx(((1 - 1 / 2) + 1) / 2)


def test_identical_is_zero_and_disjoint_is_one():
    assert pinc_score("a b c d e".split(), "a b c d e".split()) == 0.0
    assert pinc_score("a b c".split(), "x y z w".split()) == 1.0


def test_ngrams_are_sets_so_repeats_count_once():
    assert ngram_set(["a", "a", "a"], 1) == {("a",)}
    # 1-grams {a, b}: 1 − 1/2; 2-grams {a a, a b}: 1; 3-grams {a a b}: 1
    assert pinc_score(["a"], ["a", "a", "b"]) == pytest.approx(((1 - 1 / 2) + 1 + 1) / 3)


def test_empty_candidate_scores_zero_by_convention():
    assert pinc_score(["a"], []) == 0.0
    assert create_metric("pinc").score(["a b"], [" "]).scores == (0.0,)


def test_metric_tokenizes_lower_cases_and_averages_over_sentences():
    m = create_metric("pinc")
    res = m.score(["The cat sat.", "Hello world"], ["the cat sat.", "Goodbye world"])
    assert res.scores[0] == 0.0
    # "goodbye world": 1-grams 1 − 1/2, 2-grams 1 → 0.75
    assert res.scores[1] == pytest.approx(0.75)
    assert res.corpus == pytest.approx(0.375)
    assert create_metric("pinc", {"lowercase": "false"}).score(["The cat"], ["the cat"]).scores[0] > 0


def test_bootstrap_works_on_pinc_stats():
    m = create_metric("pinc")
    stats = m.segment_stats(["a b c"] * 20, ["a b x", "x y z", "a b c", "c b a"] * 5)
    res = bootstrap_ci(m, stats, n_resamples=100)
    assert res.ci_low <= res.statistic <= res.ci_high
