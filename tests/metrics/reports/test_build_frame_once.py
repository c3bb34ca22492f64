"""``report_build`` validates the judgments frame once and hands that copy to
``build_report`` and the figures: the stored numbers and figures are those of the
path that validated the database frame separately for each."""

from __future__ import annotations

import pytest

from annotation.judging.protocols.absolute.report import absolute_report_options, report_judgment_inputs
from annotation.judging.protocols.absolute.simulation import SIM_JUDGE_PREFIX
from annotation.judging.scales import criteria_units
from annotation.judging.selectors.design import study_criteria
from annotation.judging.selectors.qc import judgments_fingerprint
from annotation.judging.services.exclusions import judge_exclusion_set
from metrics.core.stats.data import validate_judgments, validate_metric_scores
from metrics.core.stats.reference import human_reference
from metrics.core.stats.report import build_report
from metrics.reports import selectors
from metrics.reports.models import ReportPlot
from metrics.reports.plots import report_plots
from metrics.reports.services.build import report_build
from metrics.reports.services.queueing import report_create
from metrics.reports.services.report_settings import DEFAULT_SETTINGS

from .conftest import make_judged_study, run_metric

pytestmark = pytest.mark.django_db


def test_report_with_an_excluded_judge_equals_the_separately_validated_path(researcher):
    from django.contrib.auth.models import User

    study = make_judged_study(
        researcher, n_originals=10, systems=("human", "machine", "mt"), n_judges=4, random_clickers=1
    )
    run_metric(study, "bleu")
    run_metric(study, "ter")
    clicker = User.objects.filter(username__startswith=SIM_JUDGE_PREFIX).order_by("username").last()
    judge_exclusion_set(study=study, judge=clicker, excluded=True, decided_by=researcher)

    report = report_create(study=study, settings={"n_boot": 50, "normalize": "z"}, enqueue=False)
    report = report_build(report_id=report.pk)
    assert report.status == "succeeded", report.error
    assert report.excluded_judges == [clicker.username]

    # The former path: build_report on the database frame, then validate it again for the figures.
    s = {**DEFAULT_SETTINGS, **report.settings}
    judged = report_judgment_inputs(study=study)
    assert judged.excluded == [clicker.username]
    metric_inputs = selectors.report_metric_inputs(study=study, judged_items=set(judged.frame["item"]))
    # The same options as the job (one place decides them), on the database frame as it is.
    options = absolute_report_options(study=study, judged=judged, settings=s, metric_runs=metric_inputs.runs)
    direct = build_report(judged.frame, metric_inputs.scores or None, options=options)
    for key in (
        "summary",
        "table1",
        "table2",
        "table3",
        "agreement",
        "judge_qc",
        "system_ranking",
        "metric_leaderboard",
        "settings",
    ):
        assert report.result[key] == direct[key], key
    assert report.build_info["n_judgment_rows"] == len(judged.frame)

    frame = validate_judgments(judged.frame)
    ref = human_reference(
        frame, control_expected=judged.control_expected, normalize=s["normalize"], excluded_judges=judged.excluded
    )
    long = validate_metric_scores(metric_inputs.scores)
    wide = long.loc[long["item"].isin(ref.index)].pivot(index="item", columns="metric", values="score")
    plots = report_plots(
        frame=frame,
        ref=ref,
        metric_wide=wide,
        result=direct,
        excluded=judged.excluded,
        target=s["criterion"],
        include_controls=False,  # Table 3's headline: genuine items
        normalized=s["normalize"] == "z",
        seed=s["seed"],
        units=criteria_units(study_criteria(study=study)),
    )
    stored = list(ReportPlot.objects.filter(report=report).order_by("position"))
    assert [p.slug for p in stored] == [p.slug for p in plots]
    for got, want in zip(stored, plots):
        assert (got.title, got.caption, got.svg) == (want.title, want.caption, want.svg), want.slug
    # The judge left out of the tables is still in QC.
    assert clicker.username in {q["judge"] for q in report.result["judge_qc"]}
    assert clicker.username not in report.result["summary"]["judges"]
    assert judgments_fingerprint(study=study) == report.fingerprint
