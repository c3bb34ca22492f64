"""Reads for reports: a study's reports, what a build reads, and whether a report is stale."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TypedDict

import numpy as np
import pandas as pd
from django.db.models import QuerySet

from annotation.judging.selectors import progress
from annotation.judging.selectors.qc import judgments_fingerprint
from annotation.models import Study
from config.jobs.enums import JobStatus
from metrics import selectors as metric_selectors
from metrics.core.registry import UnknownMetric, get_metric

from .models import Report, ReportPlot


def reports_for_study(*, study: Study) -> QuerySet[Report]:
    """Every report of the study, newest first (without their plots)."""
    return Report.objects.filter(study=study).select_related("created_by").order_by("-created_at", "-id")


def report_get(*, study: Study, report_id: int) -> Report:
    """Report ``report_id`` of ``study`` (``Report.DoesNotExist`` otherwise)."""
    return Report.objects.select_related("study", "created_by").get(pk=report_id, study=study)


def report_latest(*, study: Study) -> Report | None:
    """The newest report that succeeded, else the newest of any state (None without reports)."""
    qs = reports_for_study(study=study)
    return qs.filter(status=JobStatus.SUCCEEDED).first() or qs.first()


def report_active(*, study: Study) -> Report | None:
    """The newest queued or running report of the study, if any."""
    return reports_for_study(study=study).filter(status__in=[JobStatus.QUEUED, JobStatus.RUNNING]).first()


def report_plots(*, report: Report) -> list[ReportPlot]:
    """The report's figures in page order, SVG text included."""
    return list(ReportPlot.objects.filter(report=report).order_by("position", "slug"))


class PlotListing(TypedDict):
    """A report figure without its SVG (one row of :func:`report_plot_list`)."""

    slug: str
    title: str
    caption: str


def report_plot_list(*, report: Report) -> list[PlotListing]:
    """The report's figures without their SVG: ``{"slug", "title", "caption"}``."""
    return list(
        ReportPlot.objects.filter(report=report).order_by("position", "slug").values("slug", "title", "caption")
    )


def report_plot_get(*, report: Report, slug: str) -> ReportPlot:
    return ReportPlot.objects.get(report=report, slug=slug)


# --- what a build reads ---------------------------------------------------------------


@dataclass(frozen=True)
class MetricInputs:
    """Metric scores for the report: ``{name: frame(item, system, score)}`` of the usable
    runs, and one description per run considered (used or not, and why)."""

    scores: dict[str, pd.DataFrame] = field(default_factory=dict)
    runs: list[dict] = field(default_factory=list)


def metric_run_labels(runs) -> dict[int, str]:
    """A readable name per run: the slug alone when it is the study's only run of that metric,
    else the slug with the settings that tell its runs apart, e.g. ``bertscore (vs reference)``
    and ``bertscore (vs original)``, or ``bleu (lowercase=true)``; the run number is added
    only where settings do not tell two runs apart (a resource or a version changed)."""
    by_slug: dict[str, list] = {}
    for run in runs:
        by_slug.setdefault(run.metric, []).append(run)
    labels: dict[int, str] = {}
    for slug, group in by_slug.items():
        if len(group) == 1:
            labels[group[0].pk] = slug
            continue
        settings_of = {run.pk: {"against": run.against, **(run.params or {})} for run in group}
        keys = sorted({k for d in settings_of.values() for k in d})
        differing = [k for k in keys if len({repr(d.get(k)) for d in settings_of.values()}) > 1]
        for run in group:
            parts = []
            for key in differing:
                value = settings_of[run.pk].get(key)
                if key == "against":
                    parts.append(f"vs {value}")
                else:
                    shown = str(value).lower() if isinstance(value, bool) else value
                    parts.append(f"{key}={shown}")
            labels[run.pk] = f"{slug} ({', '.join(parts)})" if parts else slug
        seen: dict[str, int] = {}
        for run in group:
            seen[labels[run.pk]] = seen.get(labels[run.pk], 0) + 1
        for run in group:
            if seen[labels[run.pk]] > 1:
                labels[run.pk] = f"{labels[run.pk]} #{run.pk}"
    return labels


def _rates_a_criterion(slug: str) -> bool:
    try:
        return bool(getattr(get_metric(slug), "takes_study_rubric", False))
    except UnknownMetric:
        return False


def report_metric_inputs(*, study: Study, judged_items: set[str]) -> MetricInputs:
    """Scores of the latest succeeded run per metric and signature (``study_metric_runs``).

    A metric whose lower scores are better (``higher_is_better`` false, e.g. TER)
    enters negated, named ``"<metric> (negated)"``, so that every correlation in
    the leaderboard points the same way and the Williams test compares like with
    like. Two runs of one metric with different signatures are told apart by the settings
    that differ (``metric_run_labels``). Undefined (NaN) sentence scores are left out; a run with no score
    on a judged item is listed with ``used: false``.
    """
    runs = metric_selectors.study_metric_runs(study=study)
    labels = metric_run_labels(runs)
    scores: dict[str, pd.DataFrame] = {}
    described = []
    for run in runs:
        name = labels[run.pk]
        negated = not run.higher_is_better
        if negated:
            name = f"{name} (negated)"
        frame = metric_selectors.metric_scores_frame(run=run)
        frame = frame.loc[np.isfinite(frame["score"].to_numpy(dtype=float)) & frame["item"].isin(judged_items)]
        info = {
            "id": run.pk,
            "metric": run.metric,
            "name": name,
            "signature": run.signature,
            "higher_is_better": bool(run.higher_is_better),
            "negated": negated,
            "n_scores": int(len(frame)),
            "corpus_score": run.corpus_score,
            "finished_at": run.finished_at.isoformat() if run.finished_at else None,
            "used": bool(len(frame)),
            "note": "" if len(frame) else "no defined score on a judged item",
        }
        if _rates_a_criterion(run.metric):
            # An LLM judge: the criterion it rated, so the report can add it to that judge pool.
            info["judge_criterion"] = str(run.params.get("criterion") or "")
        described.append(info)
        if len(frame):
            part = frame.loc[:, ["item", "system", "score"]].copy()
            if negated:
                part["score"] = -part["score"]
            scores[name] = part.reset_index(drop=True)
    return MetricInputs(scores=scores, runs=described)


# --- staleness ------------------------------------------------------------------------


@dataclass(frozen=True)
class Staleness:
    judgments_changed: bool
    metrics_changed: bool

    @property
    def stale(self) -> bool:
        return self.judgments_changed or self.metrics_changed

    @property
    def reasons(self) -> list[str]:
        out = []
        if self.judgments_changed:
            out.append("judgments, judge exclusions or the controls' expected scores changed since it was built")
        if self.metrics_changed:
            out.append("the study's metric runs changed since it was built")
        return out


def current_metric_run_ids(*, study: Study) -> list[int]:
    return sorted(r.pk for r in metric_selectors.study_metric_runs(study=study))


@dataclass(frozen=True)
class StudyDataState:
    """What a report's staleness is judged against: the study's data as it is now."""

    fingerprint: str
    metric_run_ids: list[int]


def study_data_state(*, study: Study) -> StudyDataState:
    return StudyDataState(judgments_fingerprint(study=study), current_metric_run_ids(study=study))


def report_staleness(*, report: Report, state: StudyDataState | None = None) -> Staleness:
    """Whether the report's data differ from the study's now.

    Judgments: the stored fingerprint against ``judgments_fingerprint`` (which moves
    with every new or revised judgment, exclusion decision and expected-score
    change). Metrics: the set of runs considered against ``study_metric_runs`` (only
    when the report includes metrics). A report that has not succeeded is never stale.
    ``state`` (:func:`study_data_state`) saves the queries when checking many reports.
    """
    if report.status != JobStatus.SUCCEEDED:
        return Staleness(False, False)
    if state is None:
        state = study_data_state(study=report.study)
    judgments_changed = report.fingerprint != state.fingerprint
    metrics_changed = False
    if report.settings.get("include_metrics", True):
        metrics_changed = report.metric_run_ids != state.metric_run_ids
    return Staleness(judgments_changed, metrics_changed)


def study_has_judgments(*, study: Study) -> bool:
    return progress.study_has_judgments(study=study)
