"""The human ceiling (one judge against the others; each metric as one more judge) and the
LLM judge pool (α of the humans, and apart, with an LLM judge added)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import scipy.stats as sps

from metrics.core.stats.agreement.alpha import krippendorff_alpha
from metrics.core.stats.data import rating_matrix, validate_judgments
from metrics.core.stats.human_ceiling import human_ceiling, judge_pool_agreement
from metrics.core.stats.report import build_report
from metrics.core.stats.simulate import simulate_judgments, simulate_metric_scores


@pytest.fixture(scope="module")
def study():
    return validate_judgments(simulate_judgments(n_originals=40, n_judges=4, seed=5))


def _genuine_overall(frame):
    rm = rating_matrix(frame, "overall")
    return rm, pd.Series(np.nanmean(rm.values, axis=0), index=list(rm.items))


def test_the_ceiling_is_the_mean_over_judges_of_each_judges_r_with_the_others_mean(study):
    rm, _ = _genuine_overall(study)
    expected = []
    for j in range(rm.n_judges):
        others = np.delete(rm.values, j, axis=0).mean(axis=0)
        expected.append(sps.pearsonr(rm.values[j], others)[0])
    out = human_ceiling(study, criterion="overall", min_shared=10, n_boot=0)
    assert out["n_judges"] == 4 and out["n_items"] == rm.n_items
    assert out["human"]["statistic"] == pytest.approx(np.mean(expected), abs=1e-12)


def test_a_metric_is_scored_against_the_same_others_as_each_judge(study):
    rm, _ = _genuine_overall(study)
    metric = pd.DataFrame({"m": np.arange(rm.n_items, dtype=float) % 7}, index=list(rm.items))
    expected = np.mean(
        [sps.pearsonr(metric["m"], np.delete(rm.values, j, axis=0).mean(axis=0))[0] for j in range(rm.n_judges)]
    )
    out = human_ceiling(study, metric, criterion="overall", min_shared=10, n_boot=0)
    assert out["metrics"][0]["statistic"] == pytest.approx(expected, abs=1e-12)


def test_a_pure_noise_metric_never_reaches_the_ceiling_in_small_studies():
    """Issue 41: "reaches" meant "the difference's interval reaches 0", which a wide interval
    always does: a pure-noise metric "reached" the ceiling in 13 of 20 small studies. It is now
    a non-inferiority statement with a margin (the lower end at least −0.05): noise never
    reaches it, a too-small study says "not shown", and the margin is in the result."""
    reached, shown = 0, 0
    for seed in range(20):
        small = validate_judgments(simulate_judgments(n_originals=3, n_judges=3, seed=100 + seed))  # 12 items
        rm, mean = _genuine_overall(small)
        noise = pd.DataFrame({"noise": np.random.default_rng(seed).standard_normal(len(mean))}, index=mean.index)
        out = human_ceiling(small, noise, criterion="overall", min_shared=4, n_boot=200, seed=seed)
        assert out["margin"] == 0.05
        (row,) = out["metrics"]
        shown += row["delta_ci_high"] is not None and row["delta_ci_high"] >= 0  # what the old rule called reached
        reached += bool(row["reaches"])
    assert reached == 0
    assert shown >= 5  # the old rule's false claims: the test fails on it


def test_a_metric_closer_to_the_judges_reaches_the_ceiling_and_noise_does_not(study):
    _, mean = _genuine_overall(study)
    rng = np.random.default_rng(0)
    metrics = pd.DataFrame({"oracle": mean, "noise": rng.standard_normal(len(mean))}, index=mean.index)
    out = human_ceiling(study, metrics, criterion="overall", min_shared=10, n_boot=300, seed=2)
    rows = {r["metric"]: r for r in out["metrics"]}
    human = out["human"]
    assert human["ci_low"] < human["statistic"] < human["ci_high"]
    # The mean of all judges includes each judge's own score: it agrees with "the others" better than one judge.
    assert rows["oracle"]["delta"] > 0 and rows["oracle"]["reaches"] is True
    assert rows["noise"]["delta_ci_high"] < 0 and rows["noise"]["reaches"] is False


def test_items_a_metric_did_not_score_are_left_out_for_everyone(study):
    _, mean = _genuine_overall(study)
    partial = mean.copy()
    partial.iloc[:10] = np.nan
    out = human_ceiling(study, pd.DataFrame({"m": partial}), criterion="overall", min_shared=10, n_boot=0)
    assert out["n_items"] == len(mean) - 10


def test_without_enough_shared_items_the_ceiling_is_empty_and_says_why(study):
    out = human_ceiling(study, criterion="overall", min_shared=10_000, n_boot=0)
    assert out["human"] is None and "shares" in out["note"]


def test_the_llm_judge_pool_reports_the_humans_alpha_untouched_and_each_llm_apart(study):
    rm, mean = _genuine_overall(study)
    rng = np.random.default_rng(1)
    llm = {"llm-good": mean.round(), "llm-random": pd.Series(rng.integers(1, 6, len(mean)), index=mean.index)}
    out = judge_pool_agreement(study, llm, criterion="overall", scale_type="points", n_boot=0)
    assert out["level"] == "ordinal"
    assert out["humans"]["statistic"] == krippendorff_alpha(rm.values, level="ordinal", n_boot=0).statistic
    pooled = {r["judge"]: r for r in out["with_llm"]}
    assert pooled["llm-good"]["n_judges"] == rm.n_judges + 1
    assert pooled["llm-good"]["statistic"] > out["humans"]["statistic"] > pooled["llm-random"]["statistic"]


def test_the_report_carries_the_ceiling_and_the_llm_judge_pool(study):
    metrics = simulate_metric_scores(study, seed=3)
    runs = [{"name": "metric_good", "used": True, "judge_criterion": "overall"}, {"name": "metric_poor", "used": True}]
    report = build_report(study, metrics, n_boot=50, seed=1, min_shared=10, metric_runs=runs)
    meta = report["metric_meta_evaluation"]
    ceiling = meta["segment"]["human_ceiling"]
    assert ceiling["human"]["statistic"] is not None
    assert {r["metric"] for r in ceiling["metrics"]} == {"metric_good", "metric_fair", "metric_poor"}
    (pool,) = meta["llm_judge_pool"]
    assert pool["criterion"] == "overall" and [r["judge"] for r in pool["with_llm"]] == ["metric_good"]
    assert "soft_accuracy" in meta["system"]["methods"]
