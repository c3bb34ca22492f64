"""Building reports: settings, what a report records, excluded judges, staleness, failures."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from django.core.exceptions import ValidationError
from scipy import stats

from annotation.judging.protocols.absolute.frame import judgments_frame
from annotation.judging.selectors.design import study_control_expected, study_qc_tests
from annotation.judging.selectors.qc import judgments_fingerprint
from annotation.judging.services.exclusions import judge_exclusion_set
from metrics import selectors as metric_selectors
from metrics.core.stats.report import build_report
from metrics.reports import selectors
from metrics.reports.models import Report, ReportPlot
from metrics.reports.services.build import report_build
from metrics.reports.services.progress import PHASES
from metrics.reports.services.queueing import report_create, report_rebuild
from metrics.reports.services.report_settings import DEFAULT_SETTINGS, report_settings_clean

from .conftest import build_now, make_judged_study, make_study_data, open_judging, run_metric, submit_as_real_judge

pytestmark = pytest.mark.django_db


def test_settings_get_defaults_and_bad_values_are_named():
    assert report_settings_clean(None) == DEFAULT_SETTINGS
    clean = report_settings_clean(
        {
            "normalize": "z",
            "n_boot": "200",
            "include_metrics": "false",
            "subset_min": {"adequacy": "3.5", "fluency": ""},
        }
    )
    assert clean["normalize"] == "z" and clean["n_boot"] == 200 and clean["include_metrics"] is False
    assert clean["subset_min"] == {"adequacy": 3.5}
    with pytest.raises(ValidationError) as err:
        report_settings_clean(
            {
                "criterion": "beauty",
                "confidence_level": 1.0,
                "n_boot": 3,
                "seed": -1,
                "normalize": "minmax",
                "colour": "red",
            }
        )
    fields = err.value.message_dict
    assert {"criterion", "confidence_level", "n_boot", "seed", "normalize", "__all__"} <= set(fields)
    assert "colour" in fields["__all__"][0]


def test_a_study_without_judgments_gets_no_report(researcher):
    study = open_judging(make_study_data(researcher, name="Unjudged"))
    with pytest.raises(ValidationError, match="no judgments yet"):
        report_create(study=study, created_by=researcher)
    assert not Report.objects.filter(study=study).exists()


def test_a_report_records_what_it_was_built_from(built_report, judged_study):
    report = built_report
    assert report.progress_done == report.progress_total == len(PHASES) and report.percent == 100
    assert report.fingerprint == judgments_fingerprint(study=judged_study)
    assert report.settings == {**DEFAULT_SETTINGS, "n_boot": 50}
    assert report.result["settings"]["n_boot"] == 50 and report.result["settings"]["seed"] == 0
    runs = {r.metric: r for r in metric_selectors.study_metric_runs(study=judged_study)}
    assert [(r["id"], r["metric"], r["name"], r["signature"], r["used"]) for r in report.metric_runs] == [
        (runs["bleu"].pk, "bleu", "bleu", runs["bleu"].signature, True),
        (runs["ter"].pk, "ter", "ter (negated)", runs["ter"].signature, True),
    ]
    assert report.build_info["versions"]["matplotlib"] and report.build_info["versions"]["scipy"]
    summary = report.result["summary"]
    assert summary["n_judges"] == 3 and summary["n_originals"] == 12
    assert summary["systems"] == ["human", "machine", "mt"]
    assert summary["control_kinds"] == ["identical", "random", "unigram"]
    assert summary["n_items"] == 12 * 6 and summary["n_judgments"] == 12 * 6 * 3 * 4
    slugs = list(ReportPlot.objects.filter(report=report).values_list("slug", flat=True))
    assert slugs == [
        "criterion-vs-overall",
        "system-ranking",
        "judge-distributions",
        "metric-bleu",
        "metric-ter-negated",
    ]
    for plot in ReportPlot.objects.filter(report=report):
        assert plot.svg.lstrip().startswith("<?xml") and "<svg" in plot.svg


def test_the_stored_numbers_are_build_report_on_the_studys_judgments(built_report, judged_study):
    """The worker adds nothing of its own: the same frame and settings give the same result."""
    frame = judgments_frame(study=judged_study, include_excluded_judges=True)
    metrics = {}
    for run in metric_selectors.study_metric_runs(study=judged_study):
        f = metric_selectors.metric_scores_frame(run=run)
        f = f.loc[np.isfinite(f["score"])]
        metrics[run.metric if run.higher_is_better else f"{run.metric} (negated)"] = f.assign(
            score=f["score"] * (1 if run.higher_is_better else -1)
        )[["item", "system", "score"]]
    crits = ["adequacy", "fluency", "dissimilarity", "overall"]
    direct = build_report(
        frame,
        metrics,
        n_boot=50,
        criteria=crits,
        control_expected=study_control_expected(study=judged_study),
        scale=range(1, 6),
        scales=dict.fromkeys(crits, "points"),  # the study's 1–5 point scales
        qc_tests=study_qc_tests(study=judged_study),
    )  # the design's control tests
    stored = built_report.result
    for key in (
        "summary",
        "table1",
        "table2",
        "table3",
        "agreement",
        "judge_qc",
        "system_ranking",
        "metric_leaderboard",
    ):
        assert stored[key] == direct[key], key


def test_table3_segment_pearson_equals_scipy_on_the_judges_mean(built_report, judged_study):
    frame = judgments_frame(study=judged_study)
    overall = frame.loc[frame["criterion"] == "overall"]
    human = overall.groupby("item").agg(score=("score", "mean"), kind=("control_kind", "first"))
    expected = study_control_expected(study=judged_study)
    human["score"] = [
        expected[k]["overall"] if isinstance(k, str) else s for s, k in zip(human["score"], human["kind"])
    ]
    run = next(r for r in metric_selectors.study_metric_runs(study=judged_study) if r.metric == "bleu")
    bleu = metric_selectors.metric_scores_frame(run=run).set_index("item")["score"]
    joined = pd.concat([human["score"], bleu.rename("bleu"), human["kind"]], axis=1, join="inner")
    joined = joined.dropna(subset=["score", "bleu"])
    # The second column: controls at their expected scores in the reference (PEM §5.2).
    row = next(
        r
        for r in built_report.result["table3"]["rows_with_controls"]
        if r["metric"] == "bleu" and r["human"] == "mean" and r["level"] == "segment"
    )
    r, p = stats.pearsonr(joined["bleu"], joined["score"])
    assert row["n"] == len(joined) == 72
    assert row["pearson"]["statistic"] == pytest.approx(r, abs=1e-12)
    assert row["pearson"]["pvalue"] == pytest.approx(p, rel=1e-9)
    # The headline: genuine items only.
    genuine = joined.loc[joined["kind"].isna()]
    row = next(
        r
        for r in built_report.result["table3"]["rows"]
        if r["metric"] == "bleu" and r["human"] == "mean" and r["level"] == "segment"
    )
    r, p = stats.pearsonr(genuine["bleu"], genuine["score"])
    assert row["n"] == len(genuine) == 36
    assert row["pearson"]["statistic"] == pytest.approx(r, abs=1e-12)


def test_a_lower_is_better_metric_enters_negated_so_all_correlations_point_one_way(built_report, judged_study):
    ter = next(r for r in built_report.metric_runs if r["metric"] == "ter")
    assert ter["negated"] is True and ter["name"] == "ter (negated)"
    rows = {(r["metric"], r["level"]): r for r in built_report.result["table3"]["rows"] if r["human"] == "mean"}
    run = next(r for r in metric_selectors.study_metric_runs(study=judged_study) if r.metric == "ter")
    scores = metric_selectors.metric_scores_frame(run=run).set_index("item")["score"]
    with_controls = {(r["metric"], r["level"]): r for r in built_report.result["table3"]["rows_with_controls"]}
    assert with_controls[("ter (negated)", "segment")]["n"] == with_controls[("bleu", "segment")]["n"] == len(scores)
    ref = rows[("ter (negated)", "segment")]
    bleu_ref = rows[("bleu", "segment")]
    assert ref["n"] == bleu_ref["n"] == 36  # genuine items only
    board = built_report.result["metric_leaderboard"]["segment"]
    assert {r["metric"] for r in board} == {"bleu", "ter (negated)"}


def test_excluded_judges_are_left_out_of_every_table_but_kept_in_judge_qc(judged_study, researcher):
    from django.contrib.auth.models import User

    judge_exclusion_set(
        study=judged_study,
        judge=User.objects.get(username="sim-judge-02"),
        excluded=True,
        decided_by=researcher,
        reason="test",
    )
    report = build_now(judged_study, researcher)
    assert report.excluded_judges == ["sim-judge-02"]
    result = report.result
    assert result["summary"]["judges"] == ["sim-judge-01", "sim-judge-03"]
    assert [p["judges"] for p in result["table1"]["pairs"]] == [["sim-judge-01", "sim-judge-03"]]
    assert result["agreement"]["overall"]["n_judges"] == 2
    assert all("sim-judge-02" not in p["judges"] for p in result["agreement"]["overall"]["cohen_kappa"])
    qc = {q["judge"]: q["excluded"] for q in result["judge_qc"]}
    assert qc == {"sim-judge-01": False, "sim-judge-02": True, "sim-judge-03": False}
    assert result["summary"]["n_judgments"] == 12 * 6 * 2 * 4


def test_a_report_goes_stale_when_a_judgment_arrives_and_a_refresh_is_fresh(
    built_report, judged_study, make_user, researcher
):
    assert not selectors.report_staleness(report=built_report).stale
    submit_as_real_judge(judged_study, make_user("late"))
    staleness = selectors.report_staleness(report=built_report)
    assert staleness.stale and staleness.judgments_changed and not staleness.metrics_changed
    fresh = report_rebuild(report=built_report, created_by=researcher, enqueue=False)
    fresh = report_build(report_id=fresh.pk)
    assert fresh.settings == built_report.settings
    assert not selectors.report_staleness(report=fresh).stale
    assert "late" in fresh.result["summary"]["judges"]


def test_a_report_goes_stale_on_an_exclusion_and_on_a_new_metric_run(built_report, judged_study, researcher):
    from django.contrib.auth.models import User

    judge_exclusion_set(
        study=judged_study, judge=User.objects.get(username="sim-judge-01"), excluded=True, decided_by=researcher
    )
    staleness = selectors.report_staleness(report=built_report)
    assert staleness.judgments_changed and not staleness.metrics_changed
    run_metric(judged_study, "pinc")
    staleness = selectors.report_staleness(report=built_report)
    assert staleness.metrics_changed and staleness.judgments_changed
    assert staleness.reasons[1] == "the study's metric runs changed since it was built"
    without_metrics = build_now(judged_study, researcher, include_metrics=False)
    run_metric(judged_study, "chrf")
    assert not selectors.report_staleness(report=without_metrics).stale
    assert without_metrics.result["table3"] is None and without_metrics.metric_runs == []


def test_asking_again_while_a_report_is_queued_returns_that_report(judged_study, researcher):
    first = report_create(study=judged_study, created_by=researcher, settings={"seed": 1}, enqueue=False)
    same = report_create(study=judged_study, created_by=researcher, settings={"seed": 1}, enqueue=False)
    other = report_create(study=judged_study, created_by=researcher, settings={"seed": 2}, enqueue=False)
    assert same.pk == first.pk and other.pk != first.pk


def test_a_report_with_every_judge_excluded_fails_with_the_reason(judged_study, researcher):
    from django.contrib.auth.models import User

    for name in ("sim-judge-01", "sim-judge-02", "sim-judge-03"):
        judge_exclusion_set(
            study=judged_study, judge=User.objects.get(username=name), excluded=True, decided_by=researcher
        )
    report = build_now(judged_study, researcher)
    assert report.status == "failed" and report.finished_at is not None
    assert "no judgments left after excluding judges" in report.error
    assert not ReportPlot.objects.filter(report=report).exists()


def test_building_a_report_twice_leaves_the_same_rows(built_report):
    plots = list(ReportPlot.objects.filter(report=built_report).values_list("slug", "svg"))
    assert report_build(report_id=built_report.pk).finished_at == built_report.finished_at
    # A redelivered task whose first delivery died mid-build (status still running).
    Report.objects.filter(pk=built_report.pk).update(status="running")
    again = report_build(report_id=built_report.pk)
    assert again.status == "succeeded"
    assert list(ReportPlot.objects.filter(report=built_report).values_list("slug", "svg")) == plots
    assert again.result == built_report.result


def test_z_scores_and_settings_reach_the_statistics(judged_study, researcher):
    report = build_now(
        judged_study,
        researcher,
        normalize="z",
        include_controls_in_mean=False,
        subset_min={"adequacy": 3},
        confidence_level=0.9,
    )
    st = report.result["settings"]
    assert (st["normalize"], st["include_controls_in_mean"], st["subset_min"], st["confidence_level"]) == (
        "z",
        False,
        {"adequacy": 3},
        0.9,
    )
    assert report.result["agreement"]["overall"]["krippendorff_alpha"]["interval"]["confidence_level"] == 0.9
    subsets = {r["subset"] for r in report.result["table2"]["rows"]}
    assert subsets == {"all", "adequacy>=3"}
    assert "z-scores" in ReportPlot.objects.get(report=report, slug="criterion-vs-overall").svg


def test_a_study_judged_by_one_judge_still_gets_a_report_with_empty_pair_tables(researcher):
    study = make_judged_study(researcher, name="One judge", n_judges=1, systems=("a", "b", "c"))
    report = build_now(study, researcher)
    assert report.status == "succeeded", report.error
    assert report.result["table1"]["pairs"] == []
    assert report.result["agreement"]["overall"]["krippendorff_alpha"]["interval"]["note"]
