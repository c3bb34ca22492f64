"""Soft pairwise accuracy (Thompson et al. 2024) on mt-metrics-eval's own test cases and beyond."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from metrics.core.stats.meta_eval import metric_meta_evaluation
from metrics.core.stats.soft_pairwise import pairwise_p_values, soft_pairwise_accuracy


def test_equals_mt_metrics_eval_stats_test_pairwise_confidence_error():
    # mt_metrics_eval/stats_test.py, testPairwiseConfidenceError: Correlation(2, gold, metric)
    # packs two systems of three segments each; PairwiseConfidenceError()[0] is 0.872.
    gold, metric = [1, 2, 3, 2, 3, 4], [2, 2, 4, 1, 3, 5]
    result = soft_pairwise_accuracy(np.reshape(gold, (2, -1)), np.reshape(metric, (2, -1)))
    assert result.statistic == pytest.approx(0.872, abs=5e-4)
    assert result.n == 2 and result.method == "soft_accuracy" and result.pvalue is None


def test_pairwise_p_values_are_deterministic_as_in_mt_metrics_eval_pce_test():
    # mt_metrics_eval/pce_test.py, test_pairwise_p_values_are_deterministic.
    scores = np.random.default_rng().random((10, 100))
    np.testing.assert_array_equal(pairwise_p_values(scores), pairwise_p_values(scores))


def test_a_gold_score_missing_for_every_system_is_filtered_as_mt_metrics_eval_filter_nones_does():
    # mt_metrics_eval/stats_test.py (AverageCorrelation, testPairwiseConfidenceError):
    # gold [1, None, 3, 4, None, 6] for 2 systems drops segment 2 of each, leaving 2 x 2.
    with_gaps = soft_pairwise_accuracy([[1, np.nan, 3], [4, np.nan, 6]], [[2, 1, 8], [3, 5, 6]])
    filtered = soft_pairwise_accuracy([[1, 3], [4, 6]], [[2, 8], [3, 6]])
    assert with_gaps.statistic == filtered.statistic


def test_the_p_value_matrix_fills_only_the_upper_triangle_with_probabilities():
    rng = np.random.default_rng(3)
    p = pairwise_p_values(rng.random((5, 40)), num_permutations=200)
    upper = np.triu_indices(5, 1)
    assert np.isnan(p[np.tril_indices(5)]).all()
    assert ((p[upper] >= 0) & (p[upper] <= 1)).all()


def test_a_clearly_better_system_gets_a_small_p_value_and_the_worse_one_a_large_one():
    rng = np.random.default_rng(0)
    better, worse = 0.8 + 0.05 * rng.standard_normal(200), 0.2 + 0.05 * rng.standard_normal(200)
    assert pairwise_p_values([better, worse])[0, 1] < 0.01
    assert pairwise_p_values([worse, better])[0, 1] > 0.99


def test_a_metric_equal_to_the_humans_scores_one_and_a_reversed_one_scores_near_zero():
    rng = np.random.default_rng(1)
    human = np.arange(6)[:, None] + rng.standard_normal((6, 80))
    assert soft_pairwise_accuracy(human, human).statistic == 1.0
    assert soft_pairwise_accuracy(human, -human).statistic < 0.1


def test_with_gaps_each_pair_of_systems_is_tested_on_the_segments_both_have():
    rng = np.random.default_rng(2)
    human = np.arange(4)[:, None] + rng.standard_normal((4, 60))
    metric = human + 0.5 * rng.standard_normal((4, 60))
    gappy_h, gappy_m = human.copy(), metric.copy()
    gappy_h[0, :10] = np.nan
    gappy_m[2, 30:35] = np.nan  # a metric gap removes the segment for that system too
    complete = soft_pairwise_accuracy(human, metric).statistic
    assert soft_pairwise_accuracy(gappy_h, gappy_m).statistic == pytest.approx(complete, abs=0.05)
    # Two systems sharing no segment: their pair is left out, the others still count.
    disjoint = np.full((3, 4), np.nan)
    disjoint[0, :2], disjoint[1, 2:], disjoint[2, :] = [1, 2], [3, 4], [0, 0, 5, 5]
    p = pairwise_p_values(disjoint, num_permutations=100)
    assert math.isnan(p[0, 1]) and not math.isnan(p[0, 2]) and not math.isnan(p[1, 2])
    assert soft_pairwise_accuracy(disjoint, disjoint).statistic == 1.0


def test_fewer_than_two_systems_or_mismatched_shapes():
    assert math.isnan(soft_pairwise_accuracy([[1.0, 2.0]], [[1.0, 2.0]]).statistic)
    with pytest.raises(ValueError, match="one shape"):
        soft_pairwise_accuracy([[1.0, 2.0]], [[1.0, 2.0, 3.0]])


def test_the_system_level_meta_evaluation_reports_soft_accuracy_beside_pairwise_accuracy():
    rng = np.random.default_rng(4)
    systems = np.repeat([f"s{i}" for i in range(5)], 30)
    originals = np.tile([f"o{j}" for j in range(30)], 5)
    quality = np.repeat(np.arange(5, dtype=float), 30)
    human = quality + rng.standard_normal(150)
    metrics = pd.DataFrame({"good": human + 0.3 * rng.standard_normal(150), "noise": rng.standard_normal(150)})
    meta = metric_meta_evaluation(human, metrics, level="system", systems=systems, segments=originals)
    assert meta["methods"][-1] == "soft_accuracy"
    rows = {r["metric"]: r for r in meta["rows"]}
    assert rows["good"]["soft_accuracy"] > rows["noise"]["soft_accuracy"]
    assert rows["good"]["accuracy"] is not None
    h = pd.DataFrame({"s": systems, "o": originals, "v": human}).pivot(index="s", columns="o", values="v")
    g = pd.DataFrame({"s": systems, "o": originals, "v": metrics["good"]}).pivot(index="s", columns="o", values="v")
    assert rows["good"]["soft_accuracy"] == soft_pairwise_accuracy(h.to_numpy(), g.to_numpy()).statistic
    assert "soft_accuracy" not in metric_meta_evaluation(human, metrics, level="system", systems=systems)["methods"]
