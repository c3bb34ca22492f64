"""Report API (mounted under /api/)."""

from django.urls import path

from . import apis

app_name = "reports-api"
_R = "studies/<int:study_id>/reports/<int:report_id>"
urlpatterns = [
    path("studies/<int:study_id>/reports/", apis.ReportListApi.as_view(), name="list"),
    path("studies/<int:study_id>/reports/create/", apis.ReportCreateApi.as_view(), name="create"),
    path(f"{_R}/", apis.ReportDetailApi.as_view(), name="detail"),
    path(f"{_R}/refresh/", apis.ReportRefreshApi.as_view(), name="refresh"),
    path(f"{_R}/export/json/", apis.ReportJsonExportApi.as_view(), name="export_json"),
    path(f"{_R}/export/latex/", apis.ReportLatexExportApi.as_view(), name="export_latex"),
    path(f"{_R}/export/html/", apis.ReportHtmlExportApi.as_view(), name="export_html"),
    path(f"{_R}/export/zip/", apis.ReportZipExportApi.as_view(), name="export_zip"),
    path(f"{_R}/export/tables/<slug:table>.csv", apis.ReportTableCsvExportApi.as_view(), name="export_table"),
    path(f"{_R}/plots/<slug:slug>.svg", apis.ReportPlotApi.as_view(), name="plot"),
]
