"""Report pages (mounted at the site root: full paths here)."""

from django.urls import path

from . import views

app_name = "reports"
urlpatterns = [
    path("studies/<int:study_id>/report/", views.detail, name="detail"),
    path("studies/<int:study_id>/reports/create/", views.create, name="create"),
    path("studies/<int:study_id>/reports/<int:report_id>/", views.report_detail, name="report"),
    path("studies/<int:study_id>/reports/<int:report_id>/refresh/", views.refresh, name="refresh"),
    path("studies/<int:study_id>/reports/<int:report_id>/status/", views.status, name="status"),
    path("studies/<int:study_id>/reports/<int:report_id>/plots/<slug:slug>.svg", views.plot, name="plot"),
    path("studies/<int:study_id>/reports/<int:report_id>/export.<str:fmt>", views.export, name="export"),
    path("studies/<int:study_id>/reports/<int:report_id>/tables/<slug:table>.csv", views.table_csv, name="table_csv"),
]
