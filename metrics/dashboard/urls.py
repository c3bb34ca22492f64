"""Dashboard pages (mounted at the site root: full paths here)."""

from django.urls import path

from . import views

app_name = "dashboard"
urlpatterns = [
    path("studies/<int:study_id>/dashboard/", views.dashboard, name="dashboard"),
    path("studies/<int:study_id>/dashboard/settings/", views.settings_save, name="settings"),
    path("studies/<int:study_id>/dashboard/adaptive/", views.adaptive_save, name="adaptive"),
    path("studies/<int:study_id>/plan/", views.plan, name="plan"),
    path("studies/<int:study_id>/participants/bonus/", views.bonus, name="bonus"),
]
