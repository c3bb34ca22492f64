"""Judging pages (mounted at the site root; full paths here)."""

from importlib import import_module

from django.urls import URLPattern, path

from . import screening_views
from .protocols.registry import protocols_all
from .views import judge, results, study


def protocol_routes(kind: str) -> list[URLPattern]:
    """Every registered protocol's routes of one kind (``page_urls``, mounted here, or ``api_urls``,
    mounted by ``api_urls.py``), read from its package's ``urls.py`` in the registry's order: a
    new protocol's pages are mounted by its line in the registry, under the judging app's names."""
    routes: list[URLPattern] = []
    for unit in protocols_all():
        package = type(unit).__module__.rpartition(".")[0]
        try:
            module = import_module(f"{package}.urls")
        except ModuleNotFoundError as exc:
            if exc.name != f"{package}.urls":
                raise
            continue  # a protocol with no routes of its own
        routes.extend(getattr(module, kind, []))
    return routes


app_name = "judging"
urlpatterns = [
    # the judge's pages
    path("judge/", judge.judge_home, name="home"),
    path("judge/studies/<int:study_id>/instructions/", judge.instructions, name="instructions"),
    *protocol_routes("page_urls"),  # each protocol's own pages and exports (absolute, side by side, ESA, ranking)
    path("judge/studies/<int:study_id>/training/", screening_views.training_page, name="training"),
    path(
        "judge/studies/<int:study_id>/training/feedback/", screening_views.training_feedback, name="training_feedback"
    ),
    path("judge/studies/<int:study_id>/screened-out/", screening_views.screened_out, name="screened_out"),
    # the researcher's pages
    path("studies/<int:study_id>/judging/screening/", screening_views.screening_settings, name="screening_settings"),
    path("studies/<int:study_id>/judging/training/", screening_views.training_item_add, name="training_item_add"),
    path("studies/<int:study_id>/judging/training/import/", screening_views.training_import, name="training_import"),
    path(
        "studies/<int:study_id>/judging/training/<str:token>/delete/",
        screening_views.training_item_delete,
        name="training_item_delete",
    ),
    path("studies/<int:study_id>/judging/design/", study.design, name="design"),
    path("studies/<int:study_id>/judging/open/", study.open_study, name="open"),
    path("studies/<int:study_id>/judging/open/<int:open_job_id>/", study.open_job_status, name="open_job_status"),
    path("studies/<int:study_id>/judging/close/", study.close_study, name="close"),
    path("studies/<int:study_id>/judging/reopen/", study.reopen_study, name="reopen"),
    path("studies/<int:study_id>/judging/reset/", study.reset_study, name="reset"),
    path("studies/<int:study_id>/judging/assign/", study.assign_late, name="assign_late"),
    path("studies/<int:study_id>/judging/progress/", study.progress, name="progress"),
    path("studies/<int:study_id>/judging/progress.json", study.progress_json, name="progress_json"),
    path("studies/<int:study_id>/judging/qc/", results.qc, name="qc"),
    path("studies/<int:study_id>/judging/judges/<str:username>/exclusion/", results.exclusion, name="exclusion"),
    path("studies/<int:study_id>/judging/import/", results.import_judgments, name="import_judgments"),
    path("studies/<int:study_id>/judging/export/tidy.csv", results.export_tidy, name="export_tidy"),
    path("studies/<int:study_id>/judging/export/wide.csv", results.export_wide, name="export_wide"),
]
