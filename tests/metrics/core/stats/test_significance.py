import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

from metrics.core.stats.significance import (
    document_level_test,
    paired_bootstrap,
    permutation_test,
    system_ranking,
    williams_test,
    williams_test_scores,
)


def test_williams_test_matches_steigers_worked_example_by_hand():
    # Steiger (1980), Psychological Bulletin 87(2), the Williams T2 example:
    # n = 103, r12 = .5, r13 = .4, r23 = .1 → T2 ≈ 0.89 with 100 df.
    n, r12, r13, r23 = 103, 0.5, 0.4, 0.1
    k = 1 - 0.25 - 0.16 - 0.01 + 2 * 0.5 * 0.4 * 0.1  # = 0.62
    numerator = 0.1 * math.sqrt(102 * 1.1)  # = 1.059245
    denominator = math.sqrt(2 * k * 102 / 100 + (0.9**2 / 4) * 0.9**3)  # = sqrt(1.412422)
    res = williams_test(r12, r13, r23, n)
    assert k == pytest.approx(0.62)
    assert res.statistic == pytest.approx(numerator / denominator, rel=1e-12)
    assert round(res.statistic, 2) == 0.89
    assert res.df == 100
    assert res.pvalue == pytest.approx(sps.t.sf(numerator / denominator, 100))
    assert 0.18 < res.pvalue < 0.19


def test_williams_test_is_antisymmetric_in_the_two_correlations():
    a = williams_test(0.7, 0.55, 0.6, 50)
    b = williams_test(0.55, 0.7, 0.6, 50)
    assert a.statistic == pytest.approx(-b.statistic)
    assert a.pvalue + b.pvalue == pytest.approx(1.0)


def test_williams_test_edge_cases():
    equal = williams_test(0.6, 0.6, 0.5, 30)
    assert equal.statistic == 0 and equal.pvalue == pytest.approx(0.5)
    identical_metrics = williams_test(0.6, 0.6, 1.0, 30)
    assert identical_metrics.statistic == 0
    with pytest.raises(ValueError, match="n > 3"):
        williams_test(0.5, 0.4, 0.1, 3)
    with pytest.raises(ValueError, match="r12"):
        williams_test(1.5, 0.4, 0.1, 30)
    with pytest.raises(ValueError, match="not the correlations"):
        williams_test(0.9, -0.9, 0.9, 30)


def test_williams_test_prefers_the_metric_closer_to_the_humans():
    rng = np.random.default_rng(0)
    human = rng.normal(size=400)
    good = human + rng.normal(0, 0.5, 400)
    poor = human + rng.normal(0, 1.5, 400)
    res = williams_test_scores(human, good, poor)
    assert res.pvalue < 0.001
    assert williams_test_scores(human, poor, good).pvalue > 0.99


def test_permutation_test_is_seeded_and_detects_a_better_metric():
    rng = np.random.default_rng(1)
    human = rng.normal(size=150)
    good = human + rng.normal(0, 0.5, 150)
    poor = 10 * (human + rng.normal(0, 1.5, 150)) + 3  # other scale: the test z-scores
    a = permutation_test(human, good, poor, n_permutations=300, seed=4)
    assert a == permutation_test(human, good, poor, n_permutations=300, seed=4)
    assert a.statistic == pytest.approx(sps.pearsonr(human, good).statistic - sps.pearsonr(human, poor).statistic)
    assert a.pvalue == pytest.approx(1 / 301)
    spear = permutation_test(human, good, poor, method="spearman", n_permutations=200)
    assert spear.pvalue < 0.01


def test_permutation_test_of_a_metric_against_itself_is_not_significant():
    rng = np.random.default_rng(2)
    human = rng.normal(size=60)
    metric = human + rng.normal(size=60)
    res = permutation_test(human, metric, metric.copy(), n_permutations=100)
    assert res.statistic == 0 and res.pvalue == 1.0
    kendall = permutation_test(human, metric, metric + rng.normal(0, 0.01, 60), method="kendall_b", n_permutations=50)
    assert kendall.pvalue > 0.05


def test_paired_bootstrap_finds_real_differences_and_not_noise():
    rng = np.random.default_rng(3)
    base = rng.normal(3, 1, 300)
    better = base + 0.3 + rng.normal(0, 0.3, 300)
    res = paired_bootstrap(better, base, n_boot=500, seed=1)
    assert res.statistic == pytest.approx(np.mean(better - base))
    assert res.ci_low < res.statistic < res.ci_high
    assert res.pvalue < 0.01
    same = paired_bootstrap(base + rng.normal(0, 0.3, 300), base, n_boot=500, seed=1)
    assert same.ci_low < 0 < same.ci_high and same.pvalue > 0.05


def _document_frame(seed=0, systems=6, segments=200):
    rng = np.random.default_rng(seed)
    quality = np.linspace(2, 4, systems)
    rows = []
    for s in range(systems):
        for g in range(segments):
            human = quality[s] + rng.normal(0, 1)
            rows.append(
                {
                    "system": f"s{s}",
                    "original": f"o{g}",
                    "human": human,
                    "good": human + rng.normal(0, 0.5),
                    "poor": human + rng.normal(0, 3),
                }
            )
    return pd.DataFrame(rows)


def test_document_level_protocol_correlates_per_document_and_t_tests():
    frame = _document_frame()
    res = document_level_test(frame, human="human", metric_a="good", metric_b="poor", segments_per_document=20, seed=3)
    assert res.n_documents == 10 and res.segments_per_document == 20
    assert res.statistic == pytest.approx(sps.ttest_rel(res.correlations_a, res.correlations_b).statistic)
    assert res.mean_a > res.mean_b and res.pvalue < 0.05
    # One document by hand: the documents are the seeded shuffle cut in blocks of 20.
    segs = np.random.default_rng(3).permutation(np.array(sorted(frame["original"].unique())))[:20]
    doc = frame[frame["original"].isin(segs)].groupby("system")[["human", "good"]].mean()
    assert res.correlations_a[0] == pytest.approx(sps.pearsonr(doc["human"], doc["good"]).statistic)


def test_document_level_protocol_needs_two_documents():
    with pytest.raises(ValueError, match="at least 2 documents"):
        document_level_test(
            _document_frame(segments=30), human="human", metric_a="good", metric_b="poor", segments_per_document=20
        )


def test_system_ranking_clusters_systems_that_are_not_significantly_different():
    rng = np.random.default_rng(5)
    rows = []
    for g in range(300):
        item = rng.normal(0, 0.5)
        for name, mu in (("a", 4.0), ("b", 3.98), ("c", 3.0)):
            rows.append({"system": name, "original": f"o{g}", "score": mu + item + rng.normal(0, 0.5)})
    ranking = system_ranking(pd.DataFrame(rows), n_boot=300, seed=0)
    assert [r.system for r in ranking[:2]] in (["a", "b"], ["b", "a"])
    assert ranking[2].system == "c"
    assert ranking[0].cluster == ranking[1].cluster == 1 and ranking[2].cluster == 2
    assert ranking[1].pvalue_vs_next < 0.05 < ranking[0].pvalue_vs_next
    assert ranking[2].pvalue_vs_next is None
    assert all(r.ci_low < r.mean < r.ci_high for r in ranking)


def test_paired_bootstrap_without_a_finite_resample_has_no_interval():
    # An infinite score makes every resampled difference non-finite: the percentile
    # interval is None (mypy: typed float), and its ConfidenceInterval is NaN, not None.
    res = paired_bootstrap([math.inf, 1, 2, 3], [0, 0, 0, 0], n_boot=50, seed=0)
    assert res.ci_low is None and res.ci_high is None
    ci = res.confidence_interval()
    assert math.isnan(ci.low) and math.isnan(ci.high) and ci.method == "unavailable"
