"""The absolute protocol's report: its computation (the one report job of
:func:`metrics.reports.services.build.report_build` calls :func:`absolute_report_compute`
through the unit), the dashboard's live figures (:func:`absolute_answers`) and the
report's tables in page order (:func:`absolute_tables`).

The statistics are ``metrics.core.stats.report.build_report``'s: PEM's Tables 1–3,
agreement, judge QC, the system ranking, the metric leaderboard and meta-evaluation.
:func:`absolute_report_options` is the one place that turns a study's design and a
report's settings into its options, for the report and the dashboard alike, so that
both compute the same numbers. The tables are :mod:`.pem_tables`, :mod:`.ranking_tables`
and the agreement tables of :mod:`metrics.reports.exports.agreement` (which the
``agreement`` command prints too).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import pandas as pd

from annotation.judging.defaults import PEM_REPORT_TARGET
from annotation.judging.scales import criteria_units, criteria_zscored
from annotation.judging.selectors.design import (
    design_for_study,
    study_control_expected,
    study_criteria,
    study_criteria_slugs,
    study_qc_tests,
)
from annotation.judging.selectors.exclusions import judges_excluded
from annotation.judging.selectors.qc import judgments_fingerprint
from annotation.models import Study
from metrics.core.stats.data import validate_judgments, validate_metric_scores
from metrics.core.stats.reference import human_reference
from metrics.core.stats.report import ReportOptions, build_report
from metrics.reports.computed import ReportComputed
from metrics.reports.exports.agreement import agreement_tables, judge_qc_table
from metrics.reports.exports.cells import pct
from metrics.reports.exports.model import ReportTable
from metrics.reports.models import Report
from metrics.reports.selectors import MetricInputs, report_metric_inputs
from metrics.reports.services.progress import report_phase
from metrics.reports.services.report_settings import DEFAULT_SETTINGS

from .frame import judgments_frame
from .pem_tables import pem_table1, pem_table2, pem_table3
from .ranking_tables import (
    leaderboard_table,
    llm_judge_pool_table,
    meta_evaluation_table,
    ranking_table,
    system_scores_table,
)

# --- what a build reads ---------------------------------------------------------------


@dataclass(frozen=True)
class JudgmentInputs:
    """The judgments side of a report, read in one go.

    ``fingerprint`` is read *before* the frame, so a judgment arriving meanwhile
    makes the report stale rather than silently included or missed.
    """

    frame: pd.DataFrame  # every judge, excluded ones included (QC lists them)
    excluded: list[str]  # excluded judges who have judgments
    fingerprint: str
    control_expected: dict[str, dict[str, int | float]]
    qc_alpha: float
    criteria: list[str]
    qc_tests: tuple = ()  # the design's judge control tests (annotation.judging.scales.criteria_qc_tests)


def report_judgment_inputs(*, study: Study) -> JudgmentInputs:
    fingerprint = judgments_fingerprint(study=study)
    frame = judgments_frame(study=study, include_excluded_judges=True)
    present = set(frame["judge"]) if len(frame) else set()
    excluded = sorted(judges_excluded(study=study) & present)
    design = design_for_study(study=study)
    crits = set(frame["criterion"]) if len(frame) else set()
    return JudgmentInputs(
        frame=frame,
        excluded=excluded,
        fingerprint=fingerprint,
        control_expected=study_control_expected(study=study),
        qc_alpha=float(design.qc_alpha) if design else 0.05,
        criteria=[c for c in study_criteria_slugs(study=study) if c in crits],
        qc_tests=study_qc_tests(study=study),
    )


# --- the report's options and its build ----------------------------------------------


def shared_points_scale(criteria: list[dict]) -> range | None:
    """The values of the one labelled-point scale every criterion shares (PEM's 1–5),
    for weighted κ and the score-distribution axes; None when the criteria's scales
    differ or are not points (then the values observed are used)."""
    spans = {
        (c["scale"].get("min"), c["scale"].get("max")) if c["scale"]["type"] == "points" else None for c in criteria
    }
    if len(spans) != 1 or None in spans:
        return None
    span = spans.pop()
    if span is None:
        return None
    lo, hi = span
    if lo is None or hi is None:
        return None
    return range(int(lo), int(hi) + 1)


def subset_in_criteria_order(subset: Mapping[str, float] | None, criteria: Sequence[str]) -> dict[str, float] | None:
    # PostgreSQL's jsonb does not keep key order; the subset's label ("adequacy>=4,fluency>=4")
    # follows the order given, so restore the criteria's own order.
    if not subset:
        return None
    return {c: subset[c] for c in criteria if c in subset}


def absolute_report_options(
    *,
    study: Study,
    judged: JudgmentInputs,
    settings: Mapping[str, Any],
    metric_runs: Sequence[Mapping[str, Any]],
) -> ReportOptions:
    """How a study's report settings and its design become ``build_report``'s options: the
    one place that decides it, for the report and the live dashboard (which then asks for its
    sections only), so that both compute the same numbers."""
    s = settings
    criteria_used = [c for c in study_criteria(study=study) if c["slug"] in judged.criteria]
    return ReportOptions(
        excluded_judges=judged.excluded,
        control_expected=judged.control_expected,
        criterion=s["criterion"],
        criteria=judged.criteria,
        normalize=s["normalize"],
        include_controls_in_mean=s["include_controls_in_mean"],
        subset_min=subset_in_criteria_order(s["subset_min"], judged.criteria),
        n_boot=s["n_boot"],
        confidence_level=s["confidence_level"],
        significance_level=s["significance_level"],
        seed=s["seed"],
        qc_alpha=judged.qc_alpha,
        qc_tests=judged.qc_tests,
        min_shared=s.get("min_shared") or DEFAULT_SETTINGS["min_shared"],
        metric_runs=metric_runs,
        scale=shared_points_scale(criteria_used),
        scales={c["slug"]: c["scale"]["type"] for c in criteria_used},
        zscore_criteria=criteria_zscored(criteria_used),
    )


def absolute_report_compute(*, report: Report, settings: Mapping[str, Any]) -> ReportComputed:
    """The absolute report: PEM's tables, agreement, judge QC, rankings and figures.

    Reads the judgments (every judge; the excluded ones are left out of the tables but
    kept in judge QC) and the metric runs, calls ``build_report`` with the settings and
    the design's expected control scores and QC level, and draws the figures; records
    each phase on the report as it goes.
    """
    s = settings
    report_id = report.pk
    judged = report_judgment_inputs(study=report.study)
    if judged.frame.empty:
        raise ValueError("the study has no judgments")
    # Validate once: build_report and the figures take the validated copy as it is
    # (it carries validate_judgments' marker), and the database frame is let go
    # instead of living on beside one validated copy per consumer.
    judged = replace(judged, frame=validate_judgments(judged.frame))
    report_phase(report_id=report_id, index=1)
    metric_inputs = MetricInputs()
    if s.get("include_metrics", True):
        metric_inputs = report_metric_inputs(study=report.study, judged_items=set(judged.frame["item"]))
    report_phase(report_id=report_id, index=2)
    criteria_used = [c for c in study_criteria(study=report.study) if c["slug"] in judged.criteria]
    result = build_report(
        judged.frame,
        metric_inputs.scores or None,
        options=absolute_report_options(study=report.study, judged=judged, settings=s, metric_runs=metric_inputs.runs),
    )
    report_phase(report_id=report_id, index=3)
    from metrics.reports.plots import report_plots  # matplotlib: loaded only where figures are drawn

    frame = judged.frame  # validated above
    ref = human_reference(
        frame, control_expected=judged.control_expected, normalize=s["normalize"], excluded_judges=judged.excluded
    )
    wide = None
    if metric_inputs.scores:
        long = validate_metric_scores(metric_inputs.scores)
        wide = long.loc[long["item"].isin(ref.index)].pivot(index="item", columns="metric", values="score")
    plots = report_plots(
        frame=frame,
        ref=ref,
        metric_wide=wide,
        result=result,
        excluded=judged.excluded,
        target=s["criterion"],
        include_controls=False,  # as Table 3's headline
        normalized=s["normalize"] == "z",
        seed=s["seed"],
        units=criteria_units(criteria_used),
    )
    report_phase(report_id=report_id, index=4)
    return ReportComputed(
        result=result,
        fingerprint=judged.fingerprint,
        excluded_judges=judged.excluded,
        n_judgment_rows=int(len(judged.frame)),
        metric_runs=metric_inputs.runs,
        plots=plots,
        versions=result.get("versions", {}),
    )


# --- the dashboard's live figures ---------------------------------------------------------

#: What the dashboard shows of a report: computed alone, each exactly as in the full report
#: (the pairwise tables, QC and meta-evaluation would be 80 % of a refresh at 500 judges).
DASHBOARD_SECTIONS = frozenset({"agreement", "system_ranking", "metric_leaderboard"})


def absolute_answers(*, study: Study) -> dict:
    """Agreement with its interval per criterion, the ranking with significance clusters and
    metric–human correlations of finished metric runs, from ``build_report`` called exactly as
    a report with the default settings calls it (so the numbers equal that report's)."""
    judged = report_judgment_inputs(study=study)
    if judged.frame.empty:
        return {"available": False, "reason": "No judgments yet."}
    judged = replace(judged, frame=validate_judgments(judged.frame))
    s = dict(DEFAULT_SETTINGS)
    metric_inputs = report_metric_inputs(study=study, judged_items=set(judged.frame["item"]))
    options = absolute_report_options(study=study, judged=judged, settings=s, metric_runs=metric_inputs.runs)
    try:
        result = build_report(
            judged.frame,
            metric_inputs.scores or None,
            options=replace(options, sections=DASHBOARD_SECTIONS, agreement_detail=False),
        )
    except ValueError as exc:  # e.g. every judge excluded: the report says the same
        return {"available": False, "reason": f"Not computable yet: {exc}."}
    agreement = []
    for criterion, a in result["agreement"].items():
        level = a.get("alpha_level") or "interval"
        alpha = (a.get("krippendorff_alpha") or {}).get(level) or {}
        agreement.append(
            {
                "criterion": criterion,
                "level": level,
                "alpha": alpha.get("statistic"),
                "ci_low": alpha.get("ci_low"),
                "ci_high": alpha.get("ci_high"),
                "n_items": a.get("n_items"),
                "n_judges": a.get("n_judges"),
                "note": alpha.get("note"),
            }
        )
    leaderboard = result.get("metric_leaderboard") or {}
    return {
        "available": True,
        "fingerprint": judged.fingerprint,
        "settings": {
            k: result["settings"][k] for k in ("criterion", "n_boot", "confidence_level", "significance_level", "seed")
        },
        "agreement": agreement,
        "ranking": result["system_ranking"],
        "metrics": {
            "segment": leaderboard.get("segment", []),
            "system": leaderboard.get("system", []),
            "runs": [r for r in metric_inputs.runs if r.get("used")],
        },
        "n_judgment_rows": int(result["summary"]["n_judgments"]),
    }


# --- the tables -------------------------------------------------------------------------


def absolute_tables(result: Mapping[str, Any]) -> list[ReportTable]:
    """The report's tables in page order (Table 3 and the leaderboard only with metrics)."""
    st = result.get("settings", {})
    level = float(st.get("confidence_level", 0.95))
    target = st.get("criterion") or PEM_REPORT_TARGET  # reports from before settings named their target
    ci = pct(level)
    tables = [pem_table1(result, level, ci, target), pem_table2(result, level, ci, target)]
    if result.get("table3"):
        tables.append(pem_table3(result, level, ci, target))
    tables += [*agreement_tables(result), judge_qc_table(result), ranking_table(result, ci, target)]
    if result.get("system_scores"):  # only with a 0–100 criterion: its raw and z-scores
        tables.append(system_scores_table(result))
    if result.get("metric_leaderboard"):
        tables.append(leaderboard_table(result))
    if result.get("metric_meta_evaluation"):
        tables.append(meta_evaluation_table(result))
        if result["metric_meta_evaluation"].get("llm_judge_pool"):
            tables.append(llm_judge_pool_table(result))
    return tables
