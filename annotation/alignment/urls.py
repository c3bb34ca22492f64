from django.urls import path

from .views import annotators, pairs, scoring, study

app_name = "alignment"
urlpatterns = [
    # annotators
    path("alignment/", annotators.home, name="home"),
    path("alignment/next/", annotators.next_task, name="next"),
    path("alignment/guidelines/", annotators.guidelines, name="guidelines"),
    path("alignment/tasks/<int:assignment_id>/", annotators.grid, name="grid"),
    # researchers
    path("studies/<int:study_id>/alignment/", study.study_page, name="study"),
    path("studies/<int:study_id>/alignment/import-pairs/", study.import_pairs, name="import_pairs"),
    path("studies/<int:study_id>/alignment/import-system/", study.import_system, name="import_system"),
    path("studies/<int:study_id>/alignment/aligner/", study.run_aligner, name="run_aligner"),
    path(
        "studies/<int:study_id>/alignment/aligner/<int:run_id>/status/",
        study.aligner_run_status,
        name="aligner_run_status",
    ),
    path("studies/<int:study_id>/alignment/settings/", study.update_settings, name="settings"),
    path("studies/<int:study_id>/alignment/assign/", study.assign, name="assign"),
    path("studies/<int:study_id>/alignment/systems/<int:system_id>/delete/", study.system_delete, name="system_delete"),
    path("studies/<int:study_id>/alignment/export/", pairs.export_alignments, name="export"),
    path("studies/<int:study_id>/alignment/pairs.<str:fmt>", pairs.export_pairs, name="pairs_export"),
    path("studies/<int:study_id>/alignment/pairs/", pairs.pair_list, name="pairs"),
    path("studies/<int:study_id>/alignment/pairs/<int:pair_id>/", pairs.pair_view, name="pair"),
    path("studies/<int:study_id>/alignment/scoring/", scoring.scoring, name="scoring"),
    path("studies/<int:study_id>/alignment/scoring/<int:run_id>/", scoring.run_detail, name="run"),
    path("studies/<int:study_id>/alignment/scoring/<int:run_id>/status/", scoring.run_status, name="run_status"),
    path(
        "studies/<int:study_id>/alignment/scoring/<int:run_id>/export.<str:fmt>", scoring.run_export, name="run_export"
    ),
]
