import importlib
import math
from itertools import combinations

import numpy as np
import pytest
from scipy import stats as sps

from metrics.core.stats.correlation import (
    correlation,
    kendall,
    pairwise_accuracy,
    pearson,
    segment_and_system,
    spearman,
)
from metrics.core.stats.results import CorrelationResult


def _data(seed=0, n=200, missing=0.1):
    rng = np.random.default_rng(seed)
    x = rng.integers(1, 6, n).astype(float)
    y = x + rng.normal(0, 1.5, n)
    x[rng.random(n) < missing] = np.nan
    y[rng.random(n) < missing] = np.nan
    return x, y


def _complete(x, y):
    keep = ~(np.isnan(x) | np.isnan(y))
    return x[keep], y[keep]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_pearson_spearman_kendall_equal_scipy_on_data_with_missing_values(seed):
    x, y = _data(seed)
    cx, cy = _complete(x, y)
    for ours, theirs in (
        (pearson(x, y), sps.pearsonr(cx, cy)),
        (spearman(x, y), sps.spearmanr(cx, cy)),
        (kendall(x, y, variant="b"), sps.kendalltau(cx, cy, variant="b")),
        (kendall(x, y, variant="c"), sps.kendalltau(cx, cy, variant="c")),
    ):
        assert ours.n == cx.size
        assert ours.statistic == pytest.approx(theirs.statistic, abs=1e-12)
        assert ours.pvalue == pytest.approx(theirs.pvalue, rel=1e-9, abs=1e-300)


def test_pearson_pvalue_equals_scipy_for_tiny_samples():
    rng = np.random.default_rng(5)
    for n in (3, 4, 5, 8):
        x, y = rng.random(n), rng.random(n)
        assert pearson(x, y).pvalue == pytest.approx(sps.pearsonr(x, y).pvalue, rel=1e-9)


def test_undefined_correlation_is_nan_not_a_warning():
    res = pearson([1, 1, 1, 1], [1, 2, 3, 4])
    assert math.isnan(res.statistic) and math.isnan(res.pvalue)
    assert math.isnan(spearman([1, 2], [2, 1]).statistic)


def test_unknown_method_is_a_clear_error():
    with pytest.raises(ValueError, match="unknown correlation method"):
        correlation([1, 2, 3], [1, 2, 3], method="cosine")


def _brute_accuracy(h, m):
    pairs = list(combinations(range(len(h)), 2))
    good = sum(np.sign(h[i] - h[j]) == np.sign(m[i] - m[j]) for i, j in pairs)
    return good / len(pairs)


@pytest.mark.parametrize("seed", range(4))
def test_pairwise_accuracy_counts_ties_like_acc_eq(seed):
    rng = np.random.default_rng(seed)
    h = rng.integers(1, 6, 60).astype(float)
    m = np.round(h + rng.normal(0, 1, 60))  # rounded, so the metric has ties too
    assert pairwise_accuracy(h, m).statistic == pytest.approx(_brute_accuracy(h, m), abs=1e-12)


def test_pairwise_accuracy_tie_in_both_is_correct_and_tie_in_one_is_wrong():
    # pairs: (0,1) tie/tie -> correct; (0,2) and (1,2) human 1<3, metric tie -> wrong
    assert pairwise_accuracy([1, 1, 3], [5, 5, 5]).statistic == pytest.approx(1 / 3)
    assert pairwise_accuracy([1, 2, 3], [1, 2, 3]).statistic == 1.0
    assert pairwise_accuracy([1, 2, 3], [3, 2, 1]).statistic == 0.0


def test_grouped_accuracy_is_the_mean_of_per_group_accuracies(monkeypatch):
    rng = np.random.default_rng(7)
    groups = np.repeat(np.arange(30), 7)
    h = rng.integers(1, 6, groups.size).astype(float)
    m = h + rng.normal(0, 1.2, groups.size)
    expected = np.mean([_brute_accuracy(h[groups == g], m[groups == g]) for g in range(30)])
    assert pairwise_accuracy(h, m, groups=groups).statistic == pytest.approx(expected, abs=1e-12)
    # The O(n log n) path for large groups gives the same number.
    corr_module = importlib.import_module("metrics.core.stats.correlation")
    monkeypatch.setattr(corr_module, "_EXPLICIT_GROUP_LIMIT", 3)
    assert pairwise_accuracy(h, m, groups=groups).statistic == pytest.approx(expected, abs=1e-12)


def test_fisher_z_interval_matches_the_textbook_formula():
    res = CorrelationResult(0.5, 0.01, 28, "pearson")
    ci = res.confidence_interval(0.95)
    z, se = math.atanh(0.5), 1 / math.sqrt(25)
    assert ci.low == pytest.approx(math.tanh(z - 1.959963984540054 * se))
    assert ci.high == pytest.approx(math.tanh(z + 1.959963984540054 * se))
    assert ci.method == "fisher_z"
    low, high = ci  # unpacks like scipy's ConfidenceInterval
    assert low < 0.5 < high


def test_accuracy_has_no_analytic_interval():
    ci = CorrelationResult(0.7, None, 50, "accuracy").confidence_interval()
    assert math.isnan(ci.low) and ci.method == "unavailable"


def test_system_level_correlates_per_system_means():
    human = [1, 2, 3, 4, 5, 6, 2, 3]
    metric = [1, 1, 4, 4, 6, 6, 2, 9]
    systems = ["a", "a", "b", "b", "c", "c", "d", "d"]
    out = segment_and_system(human, metric, systems, methods=("pearson",))
    hs, ms = [1.5, 3.5, 5.5, 2.5], [1.0, 4.0, 6.0, 5.5]
    assert out["system"]["pearson"].statistic == pytest.approx(sps.pearsonr(hs, ms).statistic)
    assert out["system"]["pearson"].n == 4
    assert out["segment"]["pearson"].n == 8


def test_to_dict_is_json_safe():
    d = pearson([1, 1, 1], [1, 2, 3]).to_dict()
    assert d["statistic"] is None and d["method"] == "pearson"


def test_bootstrap_interval_for_pearson_matches_resampling_by_hand():
    from metrics.core.stats._shared import weight_chunks
    from metrics.core.stats.correlation import correlation_with_ci

    rng = np.random.default_rng(3)
    x = rng.normal(size=80)
    y = x + rng.normal(size=80)
    res = correlation_with_ci(x, y, n_boot=200, seed=5)
    by_hand = []
    for w in weight_chunks(80, 200, 5):
        for row in w:
            idx = np.repeat(np.arange(80), row.astype(int))
            by_hand.append(sps.pearsonr(x[idx], y[idx]).statistic)
    low, high = np.percentile(by_hand, [2.5, 97.5])
    assert (res.ci_low, res.ci_high) == (pytest.approx(low), pytest.approx(high))
    assert res.confidence_interval().method == "bootstrap"
    kendall_ci = correlation_with_ci(x, y, method="kendall_b", n_boot=50, seed=5)
    assert kendall_ci.ci_low < kendall_ci.statistic < kendall_ci.ci_high
