"""Issue 12, item 1: summaries that weigh evidence (Fisher-z mean with n - 3 weights,
min_shared), ICCs with F-based intervals equal to pingouin's, refused on too few
complete items, and nothing printed outside a coefficient's range."""

from pathlib import Path

import numpy as np
import pandas as pd
import pingouin
import pytest

from metrics.core.stats.agreement._shared import IncompleteDesignError
from metrics.core.stats.agreement.icc import icc, icc_judges_for_complete_items, icc_range
from metrics.core.stats.interjudge import fisher_z_mean
from metrics.core.stats.report import build_report

FIXTURES = Path(__file__).resolve().parents[2] / "reports" / "fixtures"


def load_fixture(name: str) -> pd.DataFrame:
    frame = pd.read_csv(FIXTURES / name, keep_default_na=False)
    frame["control_kind"] = frame["control_kind"].replace("", None)
    return frame


def test_fisher_z_mean_weights_each_pair_by_its_shared_items_minus_three():
    rs, ns = [0.7, -0.95, 0.2], [1200, 3, 53]
    mean, used = fisher_z_mean(rs, ns)
    # n = 3 gets weight 0; the others: (1197 atanh .7 + 50 atanh .2) / 1247.
    expected = np.tanh((1197 * np.arctanh(0.7) + 50 * np.arctanh(0.2)) / 1247)
    assert used == 2 and mean == pytest.approx(expected, abs=1e-12)
    assert np.isnan(fisher_z_mean([0.5], [3])[0])


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_icc_and_its_f_based_intervals_equal_pingouin(seed):
    rng = np.random.default_rng(seed)
    n, k = 40 + 10 * seed, 3 + seed
    latent = rng.normal(3, 1, n)
    x = np.clip(np.rint(latent[None, :] + rng.normal(0, 0.7, (k, n)) + rng.normal(0, 0.3, (k, 1))), 1, 5)
    ours = icc(x)
    long = pd.DataFrame({"item": np.tile(np.arange(n), k), "judge": np.repeat(np.arange(k), n), "score": x.ravel()})
    theirs = pingouin.intraclass_corr(long, targets="item", raters="judge", ratings="score").set_index("Type")
    names = {
        "ICC(1,1)": "ICC(1,1)",
        "ICC(2,1)": "ICC(A,1)",
        "ICC(3,1)": "ICC(C,1)",
        "ICC(1,k)": "ICC(1,k)",
        "ICC(2,k)": "ICC(A,k)",
        "ICC(3,k)": "ICC(C,k)",
    }
    for form, label in names.items():
        row = theirs.loc[label]
        assert ours[form].statistic == pytest.approx(row["ICC"], abs=1e-9)
        # pingouin rounds its CI bounds to 2 decimals
        assert ours[form].ci_low == pytest.approx(row["CI95"][0], abs=0.0051)
        assert ours[form].ci_high == pytest.approx(row["CI95"][1], abs=0.0051)
        assert ours[form].confidence_interval().method == "f_test"


def test_icc_refuses_fewer_complete_items_than_min_items_and_says_how_many_it_kept():
    x = np.array([[1, 2, 3, 4, np.nan], [2, 2, 4, 5, 3]], float)
    with pytest.raises(IncompleteDesignError, match="keeps 4 of 5 rated items"):
        icc(x, min_items=30)
    res = icc(x, min_items=4)
    assert res["ICC(2,1)"].n_items == 4 and res["ICC(2,1)"].n_items_total == 5


def test_icc_leaves_out_the_judge_who_shrinks_the_complete_items():
    rng = np.random.default_rng(3)
    x = rng.integers(1, 6, (4, 200)).astype(float)
    x[0, 7:] = np.nan  # judge "j0" rated 7 items
    kept, left = icc_judges_for_complete_items(x, judges=["j0", "j1", "j2", "j3"], min_items=30)
    assert kept == ("j1", "j2", "j3") and left == ("j0",)


def test_no_icc_value_or_bound_outside_its_range_on_a_five_pair_two_judge_study():
    report = build_report(load_fixture("five_pairs_two_judges.csv"), n_boot=200, min_shared=4)
    block = report["agreement"]["overall"]
    for form, res in block["icc"].items():
        low, high = icc_range(form, res["n_judges"])
        for value in (res["statistic"], res["ci_low"], res["ci_high"]):
            assert value is None or low <= value <= high
        assert res["ci_low"] is None or res["ci_low"] <= res["statistic"] <= res["ci_high"]


def test_five_pair_study_refuses_icc_and_summary_at_the_default_min_shared_and_says_why():
    report = build_report(load_fixture("five_pairs_two_judges.csv"), n_boot=200)
    block = report["agreement"]["overall"]
    assert block["icc"] is None and "keeps 5 of 5" in block["icc_reason"]
    assert report["table1"]["mean_pearson"]["sentence"] is None
    codes = {w["code"] for w in report["warnings"]}
    assert {"icc_refused", "interjudge_not_summarised", "few_items", "judge_little_data"} <= codes


def test_demo_scenario_headline_weighs_shared_items_and_names_judge1():
    """judge1 rated 7 items, then 3 simulated judges: the plain mean of pairs was -0.10
    (judge1's three pairs on 3 items weighed as much as pairs on 1,200); ICCs ran on
    the 3 items all four judges rated."""
    frame = load_fixture("demo_judge1_sim3.csv.gz")
    report = build_report(frame, n_boot=100)
    t1 = report["table1"]
    well_sampled = [p["sentence"]["pearson"]["statistic"] for p in t1["pairs"] if p["n_shared"] >= 30]
    assert len(well_sampled) == 3
    assert min(well_sampled) <= t1["mean_pearson"]["sentence"] <= max(well_sampled)
    assert t1["summary"]["sentence"]["n_pairs"] == 3 and t1["summary"]["sentence"]["n_pairs_listed"] == 6
    assert [p["summarised"] for p in t1["pairs"] if "judge1" in p["judges"]] == [False] * 3
    icc2 = report["agreement"]["overall"]["icc"]["ICC(2,1)"]
    assert icc2["n_items"] == 1200 and icc2["judges_left_out"] == ["judge1"]
    assert icc2["ci_low"] < icc2["statistic"] < icc2["ci_high"] and icc2["ci_high"] - icc2["ci_low"] < 0.2
    little = [w for w in report["warnings"] if w["code"] == "judge_little_data"]
    assert [w["subject"] for w in little] == ["judge1"]
    assert all(set(w) == {"code", "severity", "message", "subject"} for w in report["warnings"])


def test_icc_intervals_too_wide_to_mean_anything_are_a_finding():
    report = build_report(load_fixture("five_pairs_two_judges.csv"), n_boot=100, min_shared=4)
    wide = [w for w in report["warnings"] if w["code"] == "wide_interval" and "ICC" in w["message"]]
    assert wide and "ICC(2,k)" in wide[0]["message"] and wide[0]["subject"] == "overall"
