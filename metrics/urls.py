"""Researcher pages of metric runs (mounted at the site root: full paths)."""

from django.urls import path

from . import views

app_name = "metrics"
urlpatterns = [
    path("studies/<int:study_id>/metrics/", views.runs, name="runs"),
    path("studies/<int:study_id>/metrics/runs/<int:run_id>/", views.run_detail, name="run_detail"),
    path("studies/<int:study_id>/metrics/runs/<int:run_id>/status/", views.run_status, name="run_status"),
    path("studies/<int:study_id>/metrics/runs/<int:run_id>/cancel/", views.run_cancel, name="run_cancel"),
    path("studies/<int:study_id>/metrics/runs/<int:run_id>/retry/", views.run_retry, name="run_retry"),
    path("studies/<int:study_id>/metrics/runs/<int:run_id>/export.<str:fmt>", views.run_export, name="run_export"),
    path("studies/<int:study_id>/metrics/resources/", views.resource_upload, name="resource_upload"),
    path("studies/<int:study_id>/metrics/pem/", views.pem_train, name="pem_train"),
    path("studies/<int:study_id>/metrics/pem/<int:pem_id>/run/", views.pem_run, name="pem_run"),
    path("studies/<int:study_id>/metrics/pem/<int:pem_id>/status/", views.pem_status, name="pem_status"),
]
