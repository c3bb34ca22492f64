import numpy as np
import pytest
from scipy import stats as sps

from metrics.core.stats.qc import judge_qc
from metrics.core.stats.simulate import simulate_judgments


@pytest.fixture(scope="module")
def study():
    return simulate_judgments(n_originals=80, n_judges=6, n_random_clickers=2, seed=11)


def test_random_clickers_are_flagged_and_careful_judges_pass(study):
    qc = {q.judge: q for q in judge_qc(study)}
    clickers = set(study.attrs["random_clickers"])
    assert clickers == {"j05", "j06"}
    for judge, result in qc.items():
        if judge in clickers:
            assert not result.passed and result.flags
        else:
            assert result.passed and result.flags == ()


def test_control_tests_are_one_sided_mann_whitney(study):
    result = next(q for q in judge_qc(study) if q.judge == "j01")
    test = next(t for t in result.tests if t.criterion == "fluency")
    rows = study[(study["judge"] == "j01") & (study["criterion"] == "fluency")]
    low = rows[rows["control_kind"] == "unigram"]["score"]
    genuine = rows[~rows["is_control"]]["score"]
    expected = sps.mannwhitneyu(low, genuine, alternative="less")
    assert test.pvalue == pytest.approx(expected.pvalue)
    assert test.statistic == pytest.approx(expected.statistic)
    assert (test.n_control, test.n_genuine) == (80, 320)
    assert test.passed is True


def test_control_deviation_is_small_for_careful_and_large_for_random_judges(study):
    qc = {q.judge: q for q in judge_qc(study)}
    assert qc["j01"].control_mad["adequacy"] < 0.3
    assert qc["j06"].control_mad["adequacy"] > 1.0
    flagged = {q.judge: q for q in judge_qc(study, max_control_mad=1.0)}
    assert any("off by" in f for f in flagged["j06"].flags)


def test_timing_flag_uses_the_median_seconds_per_item(study):
    qc = {q.judge: q for q in judge_qc(study, min_median_seconds=8)}
    assert qc["j01"].median_seconds > 10 and qc["j06"].median_seconds < 5
    assert any("median" in f for f in qc["j06"].flags)


def test_straight_lining_is_flagged():
    frame = simulate_judgments(n_originals=30, n_judges=3, seed=2)
    frame.loc[(frame["judge"] == "j02") & (frame["criterion"] == "overall"), "score"] = 3
    qc = {q.judge: q for q in judge_qc(frame)}
    assert qc["j02"].straightlining["overall"] == 1.0
    assert any("straight-lining: 100% of overall scores are 3" in f for f in qc["j02"].flags)
    assert qc["j01"].straightlining["overall"] < 0.9


def test_judge_without_controls_cannot_be_tested_but_is_not_failed():
    frame = simulate_judgments(n_originals=30, n_judges=2, controls=(), seed=3)
    result = judge_qc(frame)[0]
    assert all(t.passed is None and t.pvalue is None for t in result.tests)
    assert result.passed and result.n_controls == 0
    assert result.to_dict()["tests"][0]["passed"] is None


def test_significance_level_is_configurable(study):
    strict = {q.judge: q for q in judge_qc(study, alpha=1e-300)}
    assert not strict["j01"].passed
    assert np.isfinite(strict["j01"].tests[0].pvalue)
