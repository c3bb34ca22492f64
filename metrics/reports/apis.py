"""REST API of reports: one view per operation, explicit serializers.

Serializer class names start with ``Report`` so they stay unique across the
project (drf-spectacular names schema components after them).
"""

from __future__ import annotations

from django.core.exceptions import ValidationError as DjangoValidationError
from django.http import HttpResponse
from django.urls import reverse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.exceptions import APIException, NotFound, ValidationError
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.web import get_managed_study
from config.jobs.enums import JobStatus
from metrics.reports.exports.csv_json import report_json
from metrics.reports.exports.tables import report_tables, table_by_slug
from metrics.reports.services.queueing import report_create, report_rebuild
from metrics.reports.services.report_settings import DEFAULT_SETTINGS

from . import selectors
from .models import Report, ReportPlot
from .views import SVG_CSP, export_response, table_csv_response


class ReportNotFinished(APIException):
    status_code = status.HTTP_409_CONFLICT
    default_detail = "The report has not finished; only a finished report can be exported."
    default_code = "report_not_finished"


def _drf_error(exc: DjangoValidationError) -> ValidationError:
    if hasattr(exc, "message_dict"):
        return ValidationError({("detail" if k == "__all__" else k): v for k, v in exc.message_dict.items()})
    return ValidationError({"detail": exc.messages})


# --------------------------------------------------------------------------- output


class ReportMetricRunSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    metric = serializers.CharField()
    name = serializers.CharField(help_text="The metric's name in the tables.")
    signature = serializers.CharField()
    higher_is_better = serializers.BooleanField()
    negated = serializers.BooleanField(help_text="Lower-is-better metrics enter negated.")
    n_scores = serializers.IntegerField()
    used = serializers.BooleanField()
    note = serializers.CharField(allow_blank=True)


class ReportPlotSerializer(serializers.Serializer):
    slug = serializers.CharField()
    title = serializers.CharField()
    caption = serializers.CharField()
    url = serializers.CharField(help_text="The SVG (image/svg+xml).")


class ReportExportLinksSerializer(serializers.Serializer):
    json = serializers.CharField()
    latex = serializers.CharField()
    html = serializers.CharField()
    zip = serializers.CharField()
    tables = serializers.DictField(child=serializers.CharField(), help_text="Table slug → CSV URL.")


class ReportSettingsOutputSerializer(serializers.Serializer):
    criterion = serializers.CharField()
    normalize = serializers.CharField(allow_null=True)
    include_controls_in_mean = serializers.BooleanField()
    include_metrics = serializers.BooleanField()
    confidence_level = serializers.FloatField()
    significance_level = serializers.FloatField()
    seed = serializers.IntegerField()
    n_boot = serializers.IntegerField(allow_null=True)
    subset_min = serializers.DictField(child=serializers.FloatField(), allow_null=True)


class ReportOutputSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    study = serializers.IntegerField()
    status = serializers.CharField()
    phase = serializers.CharField()
    percent = serializers.IntegerField()
    steps_done = serializers.IntegerField()
    steps_total = serializers.IntegerField()
    error = serializers.CharField(allow_blank=True)
    settings = ReportSettingsOutputSerializer()
    judgments_fingerprint = serializers.CharField(allow_blank=True)
    excluded_judges = serializers.ListField(child=serializers.CharField())
    metric_runs = ReportMetricRunSerializer(many=True)
    stale = serializers.BooleanField(help_text="Judgments, exclusions or metric runs changed since the build.")
    stale_reasons = serializers.ListField(child=serializers.CharField())
    plots = ReportPlotSerializer(many=True)
    exports = ReportExportLinksSerializer(allow_null=True)
    created_by = serializers.CharField(allow_null=True)
    created_at = serializers.DateTimeField()
    started_at = serializers.DateTimeField(allow_null=True)
    finished_at = serializers.DateTimeField(allow_null=True)


def _payload(report: Report, *, state: selectors.StudyDataState | None = None) -> dict:
    kw = {"study_id": report.study_id, "report_id": report.pk}
    staleness = selectors.report_staleness(report=report, state=state)
    finished = report.status == JobStatus.SUCCEEDED
    plots = []
    if finished:
        plots = [
            {**p, "url": reverse("reports-api:plot", kwargs={**kw, "slug": p["slug"]})}
            for p in selectors.report_plot_list(report=report)
        ]
    links = None
    if finished:
        links = {
            "json": reverse("reports-api:export_json", kwargs=kw),
            "latex": reverse("reports-api:export_latex", kwargs=kw),
            "html": reverse("reports-api:export_html", kwargs=kw),
            "zip": reverse("reports-api:export_zip", kwargs=kw),
            "tables": {
                t.slug: reverse("reports-api:export_table", kwargs={**kw, "table": t.slug})
                for t in report_tables(report.result or {})
            },
        }
    return {
        "id": report.pk,
        "study": report.study_id,
        "status": report.status,
        "phase": report.phase,
        "percent": report.percent,
        "steps_done": report.progress_done,
        "steps_total": report.progress_total,
        "error": report.error,
        "settings": {**DEFAULT_SETTINGS, **report.settings},
        "judgments_fingerprint": report.fingerprint,
        "excluded_judges": report.excluded_judges,
        "metric_runs": [
            {**{"note": "", "used": True, "negated": False, "n_scores": 0, "higher_is_better": True}, **r}
            for r in report.metric_runs
        ],
        "stale": staleness.stale,
        "stale_reasons": staleness.reasons,
        "plots": plots,
        "exports": links,
        "created_by": report.created_by.username if report.created_by_id and report.created_by else None,
        "created_at": report.created_at,
        "started_at": report.started_at,
        "finished_at": report.finished_at,
    }


def _get_report(request, study_id: int, report_id: int) -> Report:
    study = get_managed_study(request, study_id)
    try:
        return selectors.report_get(study=study, report_id=report_id)
    except Report.DoesNotExist:
        raise NotFound("no such report in this study") from None


def _get_finished(request, study_id: int, report_id: int) -> Report:
    report = _get_report(request, study_id, report_id)
    if report.status != JobStatus.SUCCEEDED:
        raise ReportNotFinished(f"Report #{report.pk} is {report.status}; only a finished report can be exported.")
    return report


# --------------------------------------------------------------------------- list, create, detail


class ReportListApi(APIView):
    @extend_schema(responses=ReportOutputSerializer(many=True), summary="A study's reports, newest first")
    def get(self, request, study_id: int):
        study = get_managed_study(request, study_id)
        reports = selectors.reports_for_study(study=study)[:100]
        state = selectors.study_data_state(study=study)  # once, not per report
        return Response(ReportOutputSerializer([_payload(r, state=state) for r in reports], many=True).data)


class ReportCreateApi(APIView):
    class ReportCreateInputSerializer(serializers.Serializer):
        # A CharField, not a ChoiceField: the judging API already names this choice set, and
        # drf-spectacular warns about two names for one enum. The service checks the value.
        criterion = serializers.CharField(
            required=False,
            help_text="The target criterion: one of the study's criterion slugs (default: PEM's "
            "overall when the design has it, else the first criterion).",
        )
        normalize = serializers.ChoiceField(
            choices=["z"],
            required=False,
            allow_null=True,
            default=None,
            help_text="null: raw scores; z: per-judge z-scores.",
        )
        include_controls_in_mean = serializers.BooleanField(required=False, default=True)
        include_metrics = serializers.BooleanField(required=False, default=True)
        confidence_level = serializers.FloatField(required=False, default=0.95)
        significance_level = serializers.FloatField(required=False, default=0.05)
        seed = serializers.IntegerField(required=False, default=0)
        n_boot = serializers.IntegerField(
            required=False,
            allow_null=True,
            default=None,
            help_text="null: 1000 (500 above 50,000 items); else 50–20,000.",
        )
        subset_min = serializers.DictField(
            child=serializers.FloatField(),
            required=False,
            allow_null=True,
            default=None,
            help_text="Table 2's subset: criterion slug → minimum "
            "mean on its scale (ordered criteria only); default PEM's when the design "
            "has its criteria, else none.",
        )

    @extend_schema(
        request=ReportCreateInputSerializer,
        responses={201: ReportOutputSerializer},
        summary="Build a report of the study (in a worker)",
        description="Every setting is optional. A report with the same settings still queued or running is "
        "returned instead of a new one. 400 when the study has no judgments yet.",
    )
    def post(self, request, study_id: int):
        study = get_managed_study(request, study_id)
        data = self.ReportCreateInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        settings = dict(data.validated_data)
        if "subset_min" not in request.data:
            settings.pop("subset_min")  # keep the design's default subset
        try:
            report = report_create(study=study, created_by=request.user, settings=settings)
        except DjangoValidationError as exc:
            raise _drf_error(exc) from None
        return Response(ReportOutputSerializer(_payload(report)).data, status=status.HTTP_201_CREATED)


class ReportDetailApi(APIView):
    @extend_schema(
        responses=ReportOutputSerializer,
        summary="One report: status, progress, whether it is stale, its figures and export links",
    )
    def get(self, request, study_id: int, report_id: int):
        return Response(ReportOutputSerializer(_payload(_get_report(request, study_id, report_id))).data)


class ReportRefreshApi(APIView):
    @extend_schema(
        request=None,
        responses={201: ReportOutputSerializer},
        summary="Build the report again with the same settings (refresh a stale report)",
    )
    def post(self, request, study_id: int, report_id: int):
        old = _get_report(request, study_id, report_id)
        try:
            report = report_rebuild(report=old, created_by=request.user)
        except DjangoValidationError as exc:
            raise _drf_error(exc) from None
        return Response(ReportOutputSerializer(_payload(report)).data, status=status.HTTP_201_CREATED)


# --------------------------------------------------------------------------- exports


_CONFLICT = {409: OpenApiResponse(description="The report has not finished.")}


class ReportJsonExportApi(APIView):
    @extend_schema(
        responses={200: OpenApiTypes.OBJECT, **_CONFLICT},
        summary="The whole report as JSON",
        description="`report` says what it was built from (settings, judgments fingerprint, excluded judges, "
        "metric runs with signatures, library versions, whether it is stale now); `result` holds every number "
        "(schema `paraeval.stats.report/1`).",
    )
    def get(self, request, study_id: int, report_id: int):
        report = _get_finished(request, study_id, report_id)
        s = selectors.report_staleness(report=report)
        body = report_json(
            report,
            stale={"stale": s.stale, "judgments_changed": s.judgments_changed, "metrics_changed": s.metrics_changed},
        )
        return Response(body)


class ReportTableCsvExportApi(APIView):
    @extend_schema(
        parameters=[
            OpenApiParameter(
                "table",
                OpenApiTypes.STR,
                OpenApiParameter.PATH,
                description="The slug of one of the report's tables: each protocol's report has its own "
                "(the report's detail lists them under `exports.tables`).",
            )
        ],
        responses={(200, "text/csv"): OpenApiTypes.STR, **_CONFLICT},
        summary="One table of the report as CSV",
        description="Numbers at full precision; text cells starting with =, +, -, @ (or a tab or carriage return) "
        "get a leading ' so that spreadsheets do not run them as formulas. Interval columns come as `<name>_low`, "
        "`<name>_high`. In an absolute report, table3, metric_leaderboard and metric_meta_evaluation exist only when "
        "metric runs were correlated.",
    )
    def get(self, request, study_id: int, report_id: int, table: str):
        report = _get_finished(request, study_id, report_id)
        try:
            table_by_slug(report.result or {}, table)
        except KeyError:
            raise NotFound(f"this report has no table {table!r}") from None
        return table_csv_response(report, table)


class ReportLatexExportApi(APIView):
    @extend_schema(
        responses={(200, "application/x-tex"): OpenApiTypes.STR, **_CONFLICT},
        summary="Every table as LaTeX (booktabs), ready to paste into a paper",
    )
    def get(self, request, study_id: int, report_id: int):
        return export_response(_get_finished(request, study_id, report_id), "tex")


class ReportHtmlExportApi(APIView):
    @extend_schema(
        responses={(200, "text/html"): OpenApiTypes.STR, **_CONFLICT},
        summary="The report as one self-contained HTML file (figures inline, no external assets)",
    )
    def get(self, request, study_id: int, report_id: int):
        return export_response(_get_finished(request, study_id, report_id), "html")


class ReportZipExportApi(APIView):
    @extend_schema(
        responses={(200, "application/zip"): OpenApiTypes.BINARY, **_CONFLICT},
        summary="A ZIP of every export: JSON, LaTeX, HTML, each table as CSV, each figure as SVG",
    )
    def get(self, request, study_id: int, report_id: int):
        return export_response(_get_finished(request, study_id, report_id), "zip")


class ReportPlotApi(APIView):
    @extend_schema(
        responses={(200, "image/svg+xml"): OpenApiTypes.STR, **_CONFLICT}, summary="One figure of the report as SVG"
    )
    def get(self, request, study_id: int, report_id: int, slug: str):
        report = _get_finished(request, study_id, report_id)
        try:
            figure = selectors.report_plot_get(report=report, slug=slug)
        except ReportPlot.DoesNotExist:
            raise NotFound("no such figure") from None
        response = HttpResponse(figure.svg, content_type="image/svg+xml; charset=utf-8")
        response["Content-Security-Policy"] = SVG_CSP
        return response
