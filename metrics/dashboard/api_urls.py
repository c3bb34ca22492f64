"""Dashboard API (mounted under /api/)."""

from django.urls import path

from . import apis

app_name = "dashboard-api"
urlpatterns = [
    path("dashboard/studies/<int:study_id>/", apis.DashboardApi.as_view(), name="dashboard"),
    path("dashboard/studies/<int:study_id>/settings/", apis.DashboardSettingsApi.as_view(), name="settings"),
    path("dashboard/studies/<int:study_id>/plan/", apis.DashboardPlanApi.as_view(), name="plan"),
    path("dashboard/studies/<int:study_id>/adaptive/", apis.DashboardAdaptiveApi.as_view(), name="adaptive"),
]
