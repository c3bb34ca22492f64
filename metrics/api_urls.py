"""Metric-run API (mounted under /api/)."""

from django.urls import path

from . import apis

app_name = "metrics-api"
urlpatterns = [
    path("metrics/", apis.MetricListApi.as_view(), name="metric_list"),
    path("metric-resources/", apis.MetricResourceListApi.as_view(), name="resource_list"),
    path("pem-models/", apis.PemModelListApi.as_view(), name="pem_model_list"),
    path("studies/<int:study_id>/metric-runs/", apis.MetricRunListApi.as_view(), name="run_list"),
    path("studies/<int:study_id>/metric-runs/create/", apis.MetricRunCreateApi.as_view(), name="run_create"),
    path("studies/<int:study_id>/metric-runs/<int:run_id>/", apis.MetricRunDetailApi.as_view(), name="run_detail"),
    path(
        "studies/<int:study_id>/metric-runs/<int:run_id>/cancel/", apis.MetricRunCancelApi.as_view(), name="run_cancel"
    ),
    path("studies/<int:study_id>/metric-runs/<int:run_id>/retry/", apis.MetricRunRetryApi.as_view(), name="run_retry"),
    path(
        "studies/<int:study_id>/metric-runs/<int:run_id>/scores/", apis.MetricScoreListApi.as_view(), name="score_list"
    ),
    path(
        "studies/<int:study_id>/metric-runs/<int:run_id>/export/", apis.MetricRunExportApi.as_view(), name="run_export"
    ),
    path(
        "studies/<int:study_id>/metric-resources/upload/",
        apis.MetricResourceUploadApi.as_view(),
        name="resource_upload",
    ),
    path("studies/<int:study_id>/pem-models/train/", apis.PemModelTrainApi.as_view(), name="pem_model_train"),
]
