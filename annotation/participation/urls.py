"""Field-study pages (mounted at the site root; full paths here)."""

from django.urls import path

from . import views

app_name = "participation"
urlpatterns = [
    # the participant's pages
    path("join/<str:token>/", views.join, name="join"),
    path("participate/resume/<str:token>/", views.resume, name="resume"),
    path("participate/studies/<int:study_id>/", views.continue_, name="continue"),
    path("participate/studies/<int:study_id>/questions/<str:phase>/", views.questions, name="questions"),
    # the researcher's pages
    path("studies/<int:study_id>/field/", views.study_page, name="study"),
    path("studies/<int:study_id>/field/links/", views.link_create, name="link_create"),
    path("studies/<int:study_id>/field/links/<int:link_id>/close/", views.link_close, name="link_close"),
    path("studies/<int:study_id>/field/links/<int:link_id>/preview/", views.link_preview, name="link_preview"),
    path("studies/<int:study_id>/field/settings/", views.settings_save, name="settings"),
    path("studies/<int:study_id>/participants/", views.participants, name="participants"),
    path("studies/<int:study_id>/participants.csv", views.participants_csv, name="participants_csv"),
]
