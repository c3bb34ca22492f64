"""PEM Tables 1–3 building blocks: inter-judge, human reference, metric vs human."""

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

from metrics.core.stats.data import validate_judgments
from metrics.core.stats.interjudge import interjudge_correlations
from metrics.core.stats.metric_human import metric_human_correlations, metric_leaderboard
from metrics.core.stats.reference import criterion_correlations, human_reference
from metrics.core.stats.simulate import simulate_judgments, simulate_metric_scores


@pytest.fixture(scope="module")
def study():
    return simulate_judgments(n_originals=60, n_judges=3, seed=4)


def _overall(frame, judge):
    rows = frame[(frame["judge"] == judge) & (frame["criterion"] == "overall") & ~frame["is_control"]]
    return rows.set_index("item")["score"].sort_index()


def test_interjudge_sentence_level_is_pearson_over_shared_genuine_items(study):
    pairs = interjudge_correlations(study)
    assert [(p.judge_a, p.judge_b) for p in pairs] == [("j01", "j02"), ("j01", "j03"), ("j02", "j03")]
    a, b = _overall(study, "j01"), _overall(study, "j02")
    assert pairs[0].n_shared == 240  # controls excluded
    assert pairs[0].results["sentence"]["pearson"].statistic == pytest.approx(sps.pearsonr(a, b).statistic)


def test_interjudge_system_level_correlates_each_judges_system_means(study):
    pairs = interjudge_correlations(study)
    rows = study[(study["criterion"] == "overall") & ~study["is_control"]]
    means = rows.groupby(["judge", "system"])["score"].mean().unstack("system")
    expected = sps.pearsonr(means.loc["j01"], means.loc["j03"]).statistic
    assert pairs[1].results["system"]["pearson"].statistic == pytest.approx(expected)
    assert pairs[1].results["system"]["pearson"].n == 4


def test_human_reference_is_the_judge_mean_with_fixed_control_scores(study):
    ref = human_reference(study)
    genuine = ref[~ref["is_control"]]
    item = genuine.index[0]
    rows = study[(study["item"] == item) & (study["criterion"] == "adequacy")]
    assert genuine.loc[item, "adequacy"] == pytest.approx(rows["score"].mean())
    identical = ref[ref["control_kind"] == "identical"]
    assert (identical["overall"] == 2).all() and (identical["dissimilarity"] == 1).all()
    unigram = ref[ref["control_kind"] == "unigram"]
    assert (unigram["fluency"] == 1).all()
    assert len(ref) == 60 * 7 and (ref["n_judges"] == 3).all()


def test_custom_control_scores_are_used(study):
    custom = {"identical": {"overall": 3}, "random": {}, "unigram": {}}
    ref = human_reference(study, control_expected=custom)
    assert (ref.loc[ref["control_kind"] == "identical", "overall"] == 3).all()
    # no expected adequacy for identical controls: the judges' mean stands
    assert ref.loc[ref["control_kind"] == "identical", "adequacy"].between(3, 5).all()


def test_z_normalised_reference_centres_each_judge(study):
    ref = human_reference(study, normalize="z")
    genuine = ref[~ref["is_control"]]
    assert genuine["overall"].mean() == pytest.approx(0, abs=1e-9)
    # an "identical" control scored 2 overall sits below the genuine average
    assert (ref.loc[ref["control_kind"] == "identical", "overall"] < 0).all()


def test_criterion_correlations_at_both_levels_and_on_the_good_subset(study):
    ref = human_reference(study)
    rows = criterion_correlations(ref, methods=("pearson",))
    by = {(r.criterion, r.subset): r for r in rows}
    adequacy = by[("adequacy", "all")]
    assert adequacy.sentence["pearson"].statistic == pytest.approx(
        sps.pearsonr(ref["adequacy"], ref["overall"]).statistic
    )
    sys_means = ref.groupby("system")[["adequacy", "overall"]].mean()
    assert adequacy.system["pearson"].statistic == pytest.approx(
        sps.pearsonr(sys_means["adequacy"], sys_means["overall"]).statistic
    )
    subset = ref[(ref["adequacy"] >= 4) & (ref["fluency"] >= 4)]
    diss = by[("dissimilarity", "adequacy>=4,fluency>=4")]
    assert diss.n_items == len(subset)
    assert diss.sentence["pearson"].statistic == pytest.approx(
        sps.pearsonr(subset["dissimilarity"], subset["overall"]).statistic
    )
    # PEM's finding, reproduced by the simulator: dissimilarity turns positive on the subset
    assert by[("dissimilarity", "all")].sentence["pearson"].statistic < 0 < diss.sentence["pearson"].statistic


def test_metric_vs_human_uses_mean_with_controls_and_judges_without(study):
    metrics = simulate_metric_scores(study, seed=1)
    rows = metric_human_correlations(study, metrics, methods=("pearson", "kendall_c", "accuracy"))
    good_mean = next(r for r in rows if (r.metric, r.human, r.level) == ("metric_good", "mean", "segment"))
    assert good_mean.n == 420
    ref = human_reference(study)
    m = metrics[metrics["metric"] == "metric_good"].set_index("item")["score"].reindex(ref.index)
    assert good_mean.results["pearson"].statistic == pytest.approx(sps.pearsonr(ref["overall"], m).statistic)
    judge = next(r for r in rows if (r.metric, r.human, r.level) == ("metric_good", "j02", "segment"))
    assert judge.n == 240
    sys_row = next(r for r in rows if (r.metric, r.human, r.level) == ("metric_good", "mean", "system"))
    assert sys_row.n == 7
    out = metric_human_correlations(study, metrics, methods=("pearson",), include_controls_in_mean=False)
    assert next(r for r in out if r.human == "mean" and r.level == "segment").n == 240


def test_metric_scores_must_match_judged_items_and_systems(study):
    bad = pd.DataFrame({"item": ["nope"], "system": ["x"], "score": [1.0]})
    with pytest.raises(ValueError, match="no metric score belongs"):
        metric_human_correlations(study, bad)
    item = study.loc[~study["is_control"], "item"].iloc[0]
    wrong = pd.DataFrame({"item": [item], "system": ["not-its-system"], "score": [1.0]})
    with pytest.raises(ValueError, match="judgments disagree"):
        metric_human_correlations(study, wrong)


def test_leaderboard_ranks_by_pearson_and_williams_tests_against_the_best():
    rng = np.random.default_rng(0)
    human = rng.normal(size=300)
    metrics = pd.DataFrame(
        {
            "poor": human + rng.normal(0, 2, 300),
            "good": human + rng.normal(0, 0.4, 300),
            "near": human + rng.normal(0, 0.42, 300),
        }
    )
    board = metric_leaderboard(human, metrics)
    assert [r.metric for r in board][0] == "good" and board[-1].metric == "poor"
    assert board[0].williams_pvalue is None
    assert board[-1].significantly_worse is True


def test_validation_gives_clear_errors(study):
    with pytest.raises(ValueError, match="lack column"):
        validate_judgments(study.drop(columns=["criterion"]))
    dup = pd.concat([study, study.iloc[:1]])
    with pytest.raises(ValueError, match="more than once"):
        validate_judgments(dup)
    bad = study.copy()
    bad["score"] = bad["score"].astype(object)
    bad.loc[bad.index[0], "score"] = "five"
    with pytest.raises(ValueError, match="numeric"):
        validate_judgments(bad)
