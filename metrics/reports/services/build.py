"""Build a report (the worker's side) or mark it failed; asking for one is :mod:`.queueing`.

The report job's life (load, mark running, compute, fail or succeed under a row lock)
is :func:`report_build`, once for every protocol; what differs is the computation, a
function ``f(*, report, settings) -> ReportComputed``: the absolute report's is
:func:`absolute_report_compute` (statistics from ``metrics.core.stats.build_report``,
then the figures); another protocol's is its unit's method ``report_compute``.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping, Sequence
from dataclasses import replace
from importlib import metadata
from typing import Any

from django.db import InterfaceError, OperationalError, transaction
from django.utils import timezone

from annotation.judging.protocols.registry import protocol_for_study
from annotation.judging.scales import criteria_units, criteria_zscored
from annotation.judging.selectors.design import study_criteria
from annotation.models import Study
from config.jobs.enums import JobStatus
from metrics.core.stats.data import validate_judgments, validate_metric_scores
from metrics.core.stats.reference import human_reference
from metrics.core.stats.report import ReportOptions, build_report

from .. import selectors
from ..computed import ReportComputed
from ..models import Report, ReportPlot
from .report_settings import DEFAULT_SETTINGS

logger = logging.getLogger(__name__)

PHASES = ("reading judgments", "reading metric scores", "agreement and correlations", "plots", "saving")


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


def _update(report_id: int, **fields) -> int:
    return Report.objects.filter(pk=report_id).update(**fields, updated_at=timezone.now())


def _phase(report_id: int, index: int) -> None:
    _update(report_id, phase=PHASES[index], progress_done=index)


def report_fail(*, report_id: int, error: str) -> None:
    """Mark a report failed with a message the researcher can act on."""
    _update(report_id, status=JobStatus.FAILED, phase="failed", error=error[:5000], finished_at=timezone.now())


def _versions() -> dict[str, str]:
    out = {}
    for pkg in ("django", "matplotlib", "celery"):
        try:
            out[pkg] = metadata.version(pkg)
        except metadata.PackageNotFoundError:
            out[pkg] = "unknown"
    return out


def subset_in_criteria_order(subset: Mapping[str, float] | None, criteria: Sequence[str]) -> dict[str, float] | None:
    # PostgreSQL's jsonb does not keep key order; the subset's label ("adequacy>=4,fluency>=4")
    # follows the order given, so restore the criteria's own order.
    if not subset:
        return None
    return {c: subset[c] for c in criteria if c in subset}


def report_build(*, report_id: int) -> Report:
    """Build a queued report (the worker's side; the ``report`` command calls it directly).

    Marks the report running, runs the computation of the study's protocol (the unit's
    :meth:`report_compute`, else :func:`absolute_report_compute`) with the report's
    settings over the defaults, and stores the result, figures and fingerprint at
    once. A finished report is left alone, and a report another delivery finished
    meanwhile is kept, so a task delivered twice leaves the same rows. Data problems
    (``ValueError``, e.g. every judge excluded) fail the report with their message;
    transient database errors propagate so the task can retry.
    """
    report = Report.objects.select_related("study").get(pk=report_id)
    if report.is_finished:
        return report
    started = time.monotonic()
    cpu = time.process_time()
    _update(
        report_id,
        status=JobStatus.RUNNING,
        started_at=timezone.now(),
        error="",
        progress_done=0,
        progress_total=len(PHASES),
        phase=PHASES[0],
    )
    s = {**DEFAULT_SETTINGS, **(report.settings or {})}
    unit = protocol_for_study(study=report.study)
    try:
        # The protocol's own report, else (None) the absolute report of metrics.reports.
        computed = unit.report_compute(report=report, settings=s) or absolute_report_compute(report=report, settings=s)
    except (OperationalError, InterfaceError):
        raise
    except ValueError as exc:
        report_fail(report_id=report_id, error=f"The report could not be built: {exc}.")
        return Report.objects.get(pk=report_id)
    except Exception as exc:  # anything else is a bug, but the researcher must see the run end
        logger.exception("report %s failed", report_id)
        report_fail(report_id=report_id, error=f"Unexpected error while building the report: {exc!r}")
        return Report.objects.get(pk=report_id)
    build_info: dict[str, Any] = {}
    if computed.versions is not None:
        build_info["versions"] = {**computed.versions, **_versions()}
    build_info["wall_seconds"] = round(time.monotonic() - started, 3)
    build_info["n_judgment_rows"] = computed.n_judgment_rows
    with transaction.atomic():
        locked = Report.objects.select_for_update().get(pk=report_id)
        if locked.status == JobStatus.SUCCEEDED:
            return locked  # another delivery of the task finished first
        ReportPlot.objects.filter(report_id=report_id).delete()
        ReportPlot.objects.bulk_create(
            [
                ReportPlot(report_id=report_id, slug=p.slug, title=p.title, caption=p.caption, position=i, svg=p.svg)
                for i, p in enumerate(computed.plots)
            ]
        )
        _update(
            report_id,
            status=JobStatus.SUCCEEDED,
            phase="done",
            progress_done=len(PHASES),
            result=computed.result,
            fingerprint=computed.fingerprint,
            excluded_judges=computed.excluded_judges,
            metric_runs=computed.metric_runs,
            build_info=build_info,
            compute_seconds=round(time.process_time() - cpu, 3),
            finished_at=timezone.now(),
        )
    return Report.objects.get(pk=report_id)


def absolute_report_options(
    *,
    study: Study,
    judged: selectors.JudgmentInputs,
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
    judged = selectors.report_judgment_inputs(study=report.study)
    if judged.frame.empty:
        raise ValueError("the study has no judgments")
    # Validate once: build_report and the figures take the validated copy as it is
    # (it carries validate_judgments' marker), and the database frame is let go
    # instead of living on beside one validated copy per consumer.
    judged = replace(judged, frame=validate_judgments(judged.frame))
    _phase(report_id, 1)
    metric_inputs = selectors.MetricInputs()
    if s.get("include_metrics", True):
        metric_inputs = selectors.report_metric_inputs(study=report.study, judged_items=set(judged.frame["item"]))
    _phase(report_id, 2)
    criteria_used = [c for c in study_criteria(study=report.study) if c["slug"] in judged.criteria]
    result = build_report(
        judged.frame,
        metric_inputs.scores or None,
        options=absolute_report_options(study=report.study, judged=judged, settings=s, metric_runs=metric_inputs.runs),
    )
    _phase(report_id, 3)
    from ..plots import report_plots  # matplotlib: only where figures are drawn

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
    _phase(report_id, 4)
    return ReportComputed(
        result=result,
        fingerprint=judged.fingerprint,
        excluded_judges=judged.excluded,
        n_judgment_rows=int(len(judged.frame)),
        metric_runs=metric_inputs.runs,
        plots=plots,
        versions=result.get("versions", {}),
    )
