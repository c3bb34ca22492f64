import json

import pytest

from metrics.core.stats.report import REPORT_SCHEMA, ReportOptions, build_report
from metrics.core.stats.simulate import simulate_judgments, simulate_metric_scores


@pytest.fixture(scope="module")
def pem_study():
    # PEM §5.1's size: 300 originals × (4 systems + 3 controls) × 3 judges, plus one
    # random clicker who should be caught and can be excluded.
    return simulate_judgments(n_originals=300, n_judges=4, n_random_clickers=1, seed=7)


@pytest.fixture(scope="module")
def report(pem_study):
    metrics = simulate_metric_scores(pem_study[pem_study["judge"] != "j04"], seed=3)
    return build_report(pem_study, metrics, excluded_judges=["j04"], n_boot=200, seed=1)


def test_report_is_json_and_has_every_section(report):
    text = json.dumps(report, allow_nan=False)
    assert json.loads(text) == report
    assert report["schema"] == REPORT_SCHEMA
    assert set(report) == {
        "schema",
        "summary",
        "table1",
        "table2",
        "table3",
        "agreement",
        "judge_qc",
        "system_ranking",
        "metric_leaderboard",
        "metric_leaderboard_with_controls",
        "metric_meta_evaluation",
        "system_scores",
        "settings",
        "versions",
        "warnings",
    }
    assert report["system_scores"] is None  # no 0–100 criterion named in zscore_criteria
    summary = report["summary"]
    assert summary["n_judges"] == 3 and summary["excluded_judges"] == ["j04"]
    assert summary["n_genuine_items"] == 1200 and summary["n_control_items"] == 900
    assert summary["n_judgments"] == 2100 * 3 * 4


def test_table1_inter_judge_correlation_is_pem_like(report):
    pairs = report["table1"]["pairs"]
    assert [p["judges"] for p in pairs] == [["j01", "j02"], ["j01", "j03"], ["j02", "j03"]]
    for p in pairs:
        assert p["n_shared"] == 1200
        assert 0.4 < p["sentence"]["pearson"]["statistic"] < 0.85  # PEM: 0.60–0.67
        assert p["system"]["pearson"]["statistic"] > 0.95  # PEM: above 0.99


def test_table2_has_both_levels_and_the_filtered_subset(report):
    rows = {(r["criterion"], r["subset"]): r for r in report["table2"]["rows"]}
    assert set(rows) == {
        (c, s) for c in ("adequacy", "fluency", "dissimilarity") for s in ("all", "adequacy>=4,fluency>=4")
    }
    assert rows[("adequacy", "all")]["sentence"]["pearson"]["statistic"] > 0.5
    assert rows[("dissimilarity", "adequacy>=4,fluency>=4")]["sentence"]["pearson"]["statistic"] > 0.5
    assert rows[("adequacy", "all")]["n_systems"] == 7


def test_table3_has_every_metric_against_mean_and_each_judge(report):
    rows = report["table3"]["rows"]
    keys = {(r["metric"], r["human"], r["level"]) for r in rows}
    assert len(keys) == 3 * 4 * 2
    assert all({"pearson", "spearman", "kendall_b", "kendall_c", "accuracy"} <= set(r) for r in rows)
    mean_seg = {
        r["metric"]: r["pearson"]["statistic"] for r in rows if r["human"] == "mean" and r["level"] == "segment"
    }
    assert mean_seg["metric_good"] > mean_seg["metric_fair"] > mean_seg["metric_poor"]
    assert not any(r["human"] == "j04" for r in rows)


def test_agreement_per_criterion_has_cis(report):
    for criterion in ("adequacy", "fluency", "dissimilarity", "overall"):
        block = report["agreement"][criterion]
        alpha = block["krippendorff_alpha"]["interval"]
        assert alpha["ci_low"] < alpha["statistic"] < alpha["ci_high"]
        assert 0.2 < alpha["statistic"] < 0.9
        assert block["fleiss_kappa"]["n_items"] == 1200
        assert block["icc"]["ICC(2,1)"]["n_judges"] == 3
        assert len(block["cohen_kappa"]) == 3


def test_judge_qc_flags_the_clicker_and_marks_exclusion(report):
    qc = {q["judge"]: q for q in report["judge_qc"]}
    assert qc["j04"]["passed"] is False and qc["j04"]["excluded"] is True
    assert all(qc[j]["passed"] for j in ("j01", "j02", "j03"))


def test_ranking_and_leaderboard(report):
    systems = [s["system"] for s in report["system_ranking"]["systems"]]
    assert systems[:2] in (["human1", "human2"], ["human2", "human1"])
    assert systems[2:] == ["machine1", "machine2"]
    clusters = [s["cluster"] for s in report["system_ranking"]["systems"]]
    assert clusters == sorted(clusters) and clusters[-1] > clusters[0]
    seg = report["metric_leaderboard"]["segment"]
    assert seg[0]["metric"] == "metric_good" and seg[0]["williams_pvalue"] is None
    assert all(r["significantly_worse"] for r in seg[1:])


def test_report_settings_make_it_reproducible(pem_study):
    small = pem_study[pem_study["original"] < "o00040"]
    a = build_report(small, n_boot=50, seed=3)
    b = build_report(small, n_boot=50, seed=3)
    assert a == b
    assert a["table3"] is None and a["metric_leaderboard"] is None and a["metric_leaderboard_with_controls"] is None
    assert a["settings"]["n_boot"] == 50 and a["settings"]["seed"] == 3
    assert {"numpy", "scipy", "krippendorff", "statsmodels"} <= set(a["versions"])


def test_options_and_changes_by_name_are_one_way_of_saying_it_and_an_unknown_name_is_refused(pem_study):
    """Issue 39: build_report takes its data and one ReportOptions (25 fields with the defaults
    a study's report starts from), each field also changeable by name."""
    small = pem_study[pem_study["original"] < "o00030"]
    by_name = build_report(small, criterion="overall", n_boot=40, seed=5, min_shared=10)
    by_options = build_report(small, options=ReportOptions(n_boot=40, seed=5, min_shared=10))
    mixed = build_report(small, options=ReportOptions(n_boot=40, seed=99), seed=5, min_shared=10)
    assert by_name == by_options == mixed
    assert by_options["settings"]["seed"] == 5 and by_options["settings"]["n_boot"] == 40
    with pytest.raises(TypeError, match="n_bootstrap"):
        build_report(small, n_bootstrap=40)
    with pytest.raises(AttributeError):  # frozen: a shared default is never changed in place
        ReportOptions().seed = 1  # type: ignore[misc]


def test_report_refuses_unknown_excluded_judges(pem_study):
    with pytest.raises(ValueError, match="not in the judgments"):
        build_report(pem_study, excluded_judges=["nobody"], n_boot=0)


def test_sections_alone_equal_the_full_reports_and_the_rest_stay_null(pem_study, report):
    """A report asked for some sections (the live dashboard's) computes each exactly as the full
    report does, α and Fleiss' κ included when the pairwise figures and the ICC are left out."""
    metrics = simulate_metric_scores(pem_study[pem_study["judge"] != "j04"], seed=3)
    sections = {"agreement", "system_ranking", "metric_leaderboard"}
    part = build_report(
        pem_study, metrics, excluded_judges=["j04"], n_boot=200, seed=1, sections=sections, agreement_detail=False
    )
    assert part["system_ranking"] == report["system_ranking"]
    assert part["metric_leaderboard"] == report["metric_leaderboard"]
    assert part["summary"] == report["summary"] and part["sections"] == sorted(sections)
    for c, full in report["agreement"].items():
        a = part["agreement"][c]
        assert a["krippendorff_alpha"] == full["krippendorff_alpha"] and a["fleiss_kappa"] == full["fleiss_kappa"]
        assert full["cohen_kappa"] and full["pearson"] and a["cohen_kappa"] == a["pearson"] == []
        assert full["icc"] and a["icc"] is None and "not computed" in a["icc_reason"]
    for left_out in ("table1", "table2", "table3", "judge_qc", "metric_meta_evaluation"):
        assert report[left_out] is not None and part[left_out] is None
    assert "warnings" not in part
    with pytest.raises(ValueError, match="unknown report section"):
        build_report(pem_study, sections={"tabel1"})
