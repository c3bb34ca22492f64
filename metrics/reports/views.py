"""Researcher pages of reports: the report, its progress, its figures and its exports."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.http import Http404, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from annotation.judging.protocols.registry import protocol_for_result
from annotation.judging.selectors.design import design_for_study, study_criteria
from annotation.models import Candidate
from annotation.web import researcher_study_required, study_context
from config.jobs.enums import JobStatus
from metrics.core.stats.simulate import judges_needed, plan_judges
from metrics.reports.exports import csv_json
from metrics.reports.exports.bundle import export_stem, report_zip
from metrics.reports.exports.csv_json import report_json_text
from metrics.reports.exports.latex import report_latex
from metrics.reports.exports.standalone_html import report_html
from metrics.reports.exports.tables import report_tables, table_by_slug
from metrics.reports.services.queueing import report_create, report_rebuild

from . import selectors
from .forms import ReportSettingsForm
from .models import Report, ReportPlot

#: Served with the figures: an SVG drawn by matplotlib styles itself with ``style``
#: attributes and one ``<style>`` element, and needs nothing else.
SVG_CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; frame-ancestors 'self'"
EXPORT_FORMATS = {
    "json": ("application/json; charset=utf-8", "json"),
    "tex": ("application/x-tex; charset=utf-8", "tex"),
    "html": ("text/html; charset=utf-8", "html"),
    "zip": ("application/zip", "zip"),
}


def _messages_of(exc: ValidationError) -> list[str]:
    if hasattr(exc, "message_dict"):
        return [f"{k}: {m}" if k != "__all__" else m for k, msgs in exc.message_dict.items() for m in msgs]
    return list(exc.messages)


def _get_report(study, report_id: int) -> Report:
    try:
        return selectors.report_get(study=study, report_id=report_id)
    except Report.DoesNotExist:
        raise Http404("no such report") from None


def _status_url(study, report) -> str:
    return reverse("reports:status", kwargs={"study_id": study.pk, "report_id": report.pk})


def _planning(study) -> dict:
    """How many judges a study of this size needs (Spearman–Brown, the simulator's defaults)."""
    n_items = Candidate.objects.filter(original__study=study).count()
    rows = plan_judges(n_items=max(n_items, 1), simulate=False, judge_counts=(1, 2, 3, 4, 5, 6, 8, 10))
    return {"rows": rows, "n_items": n_items, "needed_08": judges_needed(0.8), "needed_09": judges_needed(0.9)}


def _settings_form(study, data=None) -> ReportSettingsForm:
    """The settings form of ``study``: its own criteria and scales, its protocol's settings."""
    design = design_for_study(study=study)
    return ReportSettingsForm(data, criteria=study_criteria(study=study), protocol=design.protocol if design else None)


def _page(request, study, report: Report | None, form: ReportSettingsForm | None = None):
    has_judgments = selectors.study_has_judgments(study=study)
    active = selectors.report_active(study=study)
    if form is None:
        form = _settings_form(study)
        form.initial = form.initial_from(report.settings if report else None)
    ctx: dict[str, Any] = {  # the template's context
        "report": report,
        "has_judgments": has_judgments,
        "form": form,
        "history": list(selectors.reports_for_study(study=study)[:20]),
        "active": active if active and (report is None or active.pk != report.pk) else None,
        "simulate_command": f"python manage.py simulate_judges {study.pk} --judges 3 --seed 1",
        "poll": [],
    }
    if report is not None and report.is_active:
        ctx["poll"].append({"id": report.pk, "url": _status_url(study, report)})
    if ctx["active"] is not None:
        ctx["poll"].append({"id": ctx["active"].pk, "url": _status_url(study, ctx["active"])})
    if not has_judgments:
        ctx["planning"] = _planning(study)
    if report is not None and report.status == JobStatus.SUCCEEDED and report.result:
        result = report.result
        ctx.update(
            staleness=selectors.report_staleness(report=report),
            tables={t.slug: t for t in report_tables(result)},
            summary=result.get("summary") or {},
            plots=selectors.report_plot_list(report=report),
            metric_runs_used=[r for r in report.metric_runs if r.get("used")],
            metric_runs_unused=[r for r in report.metric_runs if not r.get("used")],
        )
        unit = protocol_for_result(result)
        ctx["export_formats"] = list(unit.report_formats)
        ctx["protocol_report_template"] = unit.report_template
    return render(request, "reports/detail.html", study_context(study, **ctx))


@researcher_study_required
@require_GET
def detail(request, study):
    """The study's report: the newest one that succeeded (or the newest at all)."""
    return _page(request, study, selectors.report_latest(study=study))


@researcher_study_required
@require_GET
def report_detail(request, study, report_id: int):
    return _page(request, study, _get_report(study, report_id))


@researcher_study_required
@require_POST
def create(request, study):
    form = _settings_form(study, request.POST)
    if not form.is_valid():
        return _page(request, study, selectors.report_latest(study=study), form=form)
    try:
        report = report_create(study=study, created_by=request.user, settings=form.settings())
    except ValidationError as exc:
        for msg in _messages_of(exc):
            form.add_error(None, msg)
        return _page(request, study, selectors.report_latest(study=study), form=form)
    messages.success(request, f"Report #{report.pk} is being built.")
    return redirect("reports:report", study_id=study.pk, report_id=report.pk)


@researcher_study_required
@require_POST
def refresh(request, study, report_id: int):
    """Build the report again with the same settings (a stale report's "refresh")."""
    old = _get_report(study, report_id)
    try:
        report = report_rebuild(report=old, created_by=request.user)
    except ValidationError as exc:
        messages.error(request, " ".join(_messages_of(exc)))
        return redirect("reports:report", study_id=study.pk, report_id=old.pk)
    messages.success(request, f"Report #{report.pk} is being built with the settings of report #{old.pk}.")
    return redirect("reports:report", study_id=study.pk, report_id=report.pk)


@researcher_study_required
@require_GET
def status(request, study, report_id: int):
    report = _get_report(study, report_id)
    return JsonResponse(
        {
            "id": report.pk,
            "status": report.status,
            "phase": report.phase,
            "percent": report.percent,
            "done": report.progress_done,
            "total": report.progress_total,
            "unit": "steps",
            "error": report.error,
        }
    )


@researcher_study_required
@require_GET
def plot(request, study, report_id: int, slug: str):
    report = _get_report(study, report_id)
    try:
        figure = selectors.report_plot_get(report=report, slug=slug)
    except ReportPlot.DoesNotExist:
        raise Http404("no such figure") from None
    response = HttpResponse(figure.svg, content_type="image/svg+xml; charset=utf-8")
    response["Content-Security-Policy"] = SVG_CSP
    response["Cache-Control"] = "private, max-age=3600"
    return response


def _finished_or_409(report: Report) -> HttpResponse | None:
    if report.status != JobStatus.SUCCEEDED:
        return HttpResponse(
            f"Report #{report.pk} is {report.status}; only a finished report can be exported.",
            status=409,
            content_type="text/plain; charset=utf-8",
        )
    return None


def export_response(report: Report, fmt: str) -> HttpResponse:
    """The download of ``report`` in ``fmt`` (json, tex, html, zip); used by the page and the API."""
    content_type, ext = EXPORT_FORMATS[fmt]
    body: str | bytes
    if fmt == "json":
        body = report_json_text(report, stale=_stale_dict(report))
    elif fmt == "tex":
        body = report_latex(report)
    elif fmt == "html":
        body = report_html(report)
    else:
        body = report_zip(report)
    response = HttpResponse(body, content_type=content_type)
    response["Content-Disposition"] = f'attachment; filename="{export_stem(report)}.{ext}"'
    return response


def table_csv_response(report: Report, table: str) -> HttpResponse:
    try:
        t = table_by_slug(report.result or {}, table)
    except KeyError:
        raise Http404("no such table in this report") from None
    response = HttpResponse(csv_json.table_csv(t), content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{export_stem(report)}-{t.slug}.csv"'
    return response


def _stale_dict(report: Report) -> dict:
    s = selectors.report_staleness(report=report)
    return {"stale": s.stale, "judgments_changed": s.judgments_changed, "metrics_changed": s.metrics_changed}


@researcher_study_required
@require_GET
def export(request, study, report_id: int, fmt: str):
    if fmt not in EXPORT_FORMATS:
        raise Http404("unknown export format")
    report = _get_report(study, report_id)
    return _finished_or_409(report) or export_response(report, fmt)


@researcher_study_required
@require_GET
def table_csv(request, study, report_id: int, table: str):
    report = _get_report(study, report_id)
    return _finished_or_409(report) or table_csv_response(report, table)
