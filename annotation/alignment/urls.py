from django.urls import path

from . import views

app_name = "alignment"
urlpatterns = [
    # annotators
    path("alignment/", views.home, name="home"),
    path("alignment/next/", views.next_task, name="next"),
    path("alignment/guidelines/", views.guidelines, name="guidelines"),
    path("alignment/tasks/<int:assignment_id>/", views.grid, name="grid"),
    # researchers
    path("studies/<int:study_id>/alignment/", views.study_page, name="study"),
    path("studies/<int:study_id>/alignment/import-pairs/", views.import_pairs, name="import_pairs"),
    path("studies/<int:study_id>/alignment/import-system/", views.import_system, name="import_system"),
    path("studies/<int:study_id>/alignment/aligner/", views.run_aligner, name="run_aligner"),
    path("studies/<int:study_id>/alignment/aligner/<int:run_id>/status/", views.aligner_run_status, name="aligner_run_status"),
    path("studies/<int:study_id>/alignment/settings/", views.update_settings, name="settings"),
    path("studies/<int:study_id>/alignment/assign/", views.assign, name="assign"),
    path("studies/<int:study_id>/alignment/systems/<int:system_id>/delete/", views.system_delete, name="system_delete"),
    path("studies/<int:study_id>/alignment/export/", views.export_alignments, name="export"),
    path("studies/<int:study_id>/alignment/pairs.<str:fmt>", views.export_pairs, name="pairs_export"),
    path("studies/<int:study_id>/alignment/pairs/", views.pair_list, name="pairs"),
    path("studies/<int:study_id>/alignment/pairs/<int:pair_id>/", views.pair_view, name="pair"),
    path("studies/<int:study_id>/alignment/scoring/", views.scoring, name="scoring"),
    path("studies/<int:study_id>/alignment/scoring/<int:run_id>/", views.run_detail, name="run"),
    path("studies/<int:study_id>/alignment/scoring/<int:run_id>/status/", views.run_status, name="run_status"),
    path("studies/<int:study_id>/alignment/scoring/<int:run_id>/export.<str:fmt>", views.run_export, name="run_export"),
]
