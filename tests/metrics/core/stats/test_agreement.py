import math

import krippendorff
import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats.inter_rater import aggregate_raters
from statsmodels.stats.inter_rater import fleiss_kappa as sm_fleiss_kappa

from metrics.core.stats.agreement._shared import IncompleteDesignError
from metrics.core.stats.agreement.alpha import (
    alpha_from_coincidences,
    krippendorff_alpha,
    krippendorff_alphas,
    unit_coincidences,
)
from metrics.core.stats.agreement.criterion import agreement_by_criterion
from metrics.core.stats.agreement.icc import icc
from metrics.core.stats.agreement.kappa import cohen_kappa, fleiss_kappa
from metrics.core.stats.agreement.pairwise import pairwise_cohen_kappa
from metrics.core.stats.simulate import simulate_judgments


def _ratings(seed, judges=5, items=60, missing=0.3):
    rng = np.random.default_rng(seed)
    truth = rng.integers(1, 6, items)
    values = np.clip(truth + rng.integers(-1, 2, (judges, items)), 1, 5).astype(float)
    values[rng.random(values.shape) < missing] = np.nan
    return values


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval"])
def test_alpha_equals_krippendorff_package_with_missing_values(seed, level):
    values = _ratings(seed)
    ours = krippendorff_alpha(values, level=level, n_boot=0)
    assert ours.statistic == pytest.approx(krippendorff.alpha(values, level_of_measurement=level), abs=1e-12)


def test_alpha_reproduces_krippendorffs_published_example():
    # Krippendorff (2011), "Computing Krippendorff's alpha-reliability", the 4 coders ×
    # 12 units example with missing data: nominal α = 0.743.
    data = np.array(
        [
            [1, 2, 3, 3, 2, 1, 4, 1, 2, np.nan, np.nan, np.nan],
            [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, np.nan, 3],
            [np.nan, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, np.nan],
            [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, np.nan],
        ]
    )
    assert krippendorff_alpha(data, level="nominal", n_boot=0).statistic == pytest.approx(0.743, abs=5e-4)
    assert krippendorff_alpha(data, level="ordinal", n_boot=0).statistic == pytest.approx(0.815, abs=5e-4)
    assert krippendorff_alpha(data, level="interval", n_boot=0).statistic == pytest.approx(0.849, abs=5e-4)


@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval"])
def test_vectorised_coincidences_give_the_package_alpha(level):
    # The bootstrap re-sums per-item coincidence matrices; at weight 1 it must be α itself.
    values = _ratings(4)
    domain = np.unique(values[~np.isnan(values)])
    o = unit_coincidences(values, domain).sum(axis=0).reshape(1, domain.size, domain.size)
    assert alpha_from_coincidences(o, domain, level)[0] == pytest.approx(
        krippendorff.alpha(values, level_of_measurement=level), abs=1e-12
    )


def test_continuous_scores_use_the_closed_form_interval_alpha():
    rng = np.random.default_rng(3)
    values = rng.normal(0, 1, (4, 80)) + rng.normal(0, 1, 80)
    values[rng.random(values.shape) < 0.2] = np.nan
    res = krippendorff_alphas(values, n_boot=100)
    assert res["interval"].statistic == pytest.approx(krippendorff.alpha(values, level_of_measurement="interval"))
    assert res["interval"].ci_low < res["interval"].statistic < res["interval"].ci_high
    assert math.isnan(res["nominal"].statistic) and "not categorical" in res["nominal"].note


def test_alpha_bootstrap_is_seeded_and_brackets_the_estimate():
    values = _ratings(5, items=150)
    a = krippendorff_alpha(values, n_boot=300, seed=11)
    b = krippendorff_alpha(values, n_boot=300, seed=11)
    c = krippendorff_alpha(values, n_boot=300, seed=12)
    assert (a.ci_low, a.ci_high) == (b.ci_low, b.ci_high)
    assert (a.ci_low, a.ci_high) != (c.ci_low, c.ci_high)
    assert a.ci_low < a.statistic < a.ci_high
    assert a.n_items == int(((~np.isnan(values)).sum(axis=0) >= 2).sum())


def test_alpha_recovers_the_simulated_reliability():
    # Additive model: α ≈ σ²_item / (σ²_item + σ²_bias + σ²_noise) for continuous scores.
    item_sd, bias_sd, noise_sd = 1.0, 0.3, 0.6
    frame = simulate_judgments(
        n_originals=1500,
        systems={"s": {"overall": 3.0}},
        n_judges=4,
        criteria=("overall",),
        controls=(),
        item_sd=item_sd,
        judge_bias_sd=bias_sd,
        noise_sd=noise_sd,
        discrete=False,
        seconds=False,
        seed=2,
    )
    values = frame.pivot(index="judge", columns="item", values="score").to_numpy()
    expected = item_sd**2 / (item_sd**2 + bias_sd**2 + noise_sd**2)
    res = krippendorff_alpha(values, n_boot=200)
    # Judge biases are a random draw of only 4 judges, hence the tolerance.
    assert res.statistic == pytest.approx(expected, abs=0.06)
    assert icc(values)["ICC(2,1)"].statistic == pytest.approx(expected, abs=0.06)


def test_fleiss_kappa_equals_statsmodels_on_complete_data():
    rng = np.random.default_rng(8)
    values = np.clip(rng.integers(1, 6, 80) + rng.integers(-1, 2, (4, 80)), 1, 5).astype(float)
    table, _ = aggregate_raters(values.T.astype(int))
    res = fleiss_kappa(values, n_boot=200)
    assert res.statistic == pytest.approx(sm_fleiss_kappa(table, method="fleiss"), abs=1e-12)
    assert res.ci_low < res.statistic < res.ci_high
    assert (res.n_items, res.n_judges) == (80, 4)


def test_fleiss_kappa_refuses_an_incomplete_design_with_a_reason():
    with pytest.raises(IncompleteDesignError, match="same number of ratings"):
        fleiss_kappa(_ratings(0, missing=0.3))


@pytest.mark.parametrize("weights", [None, "linear", "quadratic"])
def test_cohen_kappa_equals_scikit_learn(weights):
    values = _ratings(9, judges=2, items=120, missing=0.2)
    a, b = values
    keep = ~(np.isnan(a) | np.isnan(b))
    ours = cohen_kappa(a, b, weights=weights, n_boot=200)
    assert ours.statistic == pytest.approx(cohen_kappa_score(a[keep], b[keep], weights=weights), abs=1e-12)
    assert ours.ci_low < ours.statistic < ours.ci_high
    assert ours.n_items == keep.sum()
    labels = [1, 2, 3, 4, 5]
    assert cohen_kappa(a, b, weights=weights, labels=labels).statistic == pytest.approx(
        cohen_kappa_score(a[keep], b[keep], weights=weights, labels=labels), abs=1e-12
    )


def test_pairwise_cohen_kappa_covers_every_pair_and_weighting():
    values = _ratings(1, judges=4, missing=0.1)
    pairs = pairwise_cohen_kappa(values, judges=["a", "b", "c", "d"])
    assert [(p.judge_a, p.judge_b) for p in pairs] == [
        ("a", "b"),
        ("a", "c"),
        ("a", "d"),
        ("b", "c"),
        ("b", "d"),
        ("c", "d"),
    ]
    d = pairs[0].to_dict()
    assert d["judges"] == ["a", "b"] and set(d) >= {"unweighted", "linear", "quadratic"}


def test_icc_reproduces_shrout_and_fleiss_1979_table():
    # Shrout & Fleiss (1979), Table 2: 6 targets rated by 4 judges, and their Table 4.
    table = np.array([[9, 2, 5, 8], [6, 1, 3, 2], [8, 4, 6, 8], [7, 1, 2, 6], [10, 5, 6, 9], [6, 2, 4, 7]], float)
    res = icc(table.T)
    published = {
        "ICC(1,1)": 0.17,
        "ICC(2,1)": 0.29,
        "ICC(3,1)": 0.71,
        "ICC(1,k)": 0.44,
        "ICC(2,k)": 0.62,
        "ICC(3,k)": 0.91,
    }
    for form, value in published.items():
        assert round(res[form].statistic, 2) == value
    assert res["ICC(2,k)"].form == "ICC(2,4)"
    # Their mean squares: BMS 11.24, WMS 6.26, JMS 32.49, EMS 1.02 → F = BMS/EMS = 11.03.
    assert res["ICC(3,1)"].f_statistic == pytest.approx(11.24 / 1.02, rel=0.01)
    assert (res["ICC(3,1)"].df1, res["ICC(3,1)"].df2) == (5, 15)


def test_icc_uses_complete_items_only_and_refuses_too_few():
    values = _ratings(2, judges=3, items=40, missing=0.2)
    complete = int((~np.isnan(values)).all(axis=0).sum())
    assert icc(values)["ICC(2,1)"].n_items == complete
    with pytest.raises(IncompleteDesignError):
        icc(np.array([[1.0, np.nan], [np.nan, 2.0]]))


def test_agreement_by_criterion_excludes_controls_and_reports_every_coefficient():
    frame = simulate_judgments(n_originals=40, n_judges=3, seed=1)
    out = agreement_by_criterion(frame, n_boot=50)
    assert set(out) == {"adequacy", "fluency", "dissimilarity", "overall"}
    overall = out["overall"]
    assert overall.n_items == 160  # 40 originals × 4 genuine systems, no controls
    assert overall.fleiss_kappa is not None and overall.fleiss_kappa_reason is None
    assert len(overall.cohen_kappa) == 3 and len(overall.pearson) == 3
    d = overall.to_dict()
    assert set(d["krippendorff_alpha"]) == {"nominal", "ordinal", "interval", "ratio"}


def test_incomplete_design_reports_why_fleiss_is_missing():
    frame = simulate_judgments(n_originals=40, n_judges=5, judges_per_item=3, seed=1)
    frame = frame.drop(frame.index[:4])  # one item loses a judge: counts now differ
    out = agreement_by_criterion(frame, n_boot=0, criteria=["overall"])["overall"]
    assert out.fleiss_kappa is None and "same number of ratings" in out.fleiss_kappa_reason
    assert not math.isnan(out.krippendorff_alpha["interval"].statistic)
