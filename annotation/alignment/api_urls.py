from django.urls import path

from .apis import annotators, data, scoring

app_name = "alignment-api"
urlpatterns = [
    path("alignment/studies/<int:study_id>/pairs/", data.AlignmentPairListApi.as_view(), name="pair_list"),
    path("alignment/studies/<int:study_id>/pairs/import/", data.AlignmentPairsImportApi.as_view(), name="pairs_import"),
    path("alignment/studies/<int:study_id>/systems/", data.AlignmentSystemListApi.as_view(), name="system_list"),
    path(
        "alignment/studies/<int:study_id>/systems/import/",
        data.AlignmentSystemImportApi.as_view(),
        name="system_import",
    ),
    path("alignment/studies/<int:study_id>/settings/", data.AlignmentConfigDetailApi.as_view(), name="config_detail"),
    path(
        "alignment/studies/<int:study_id>/settings/update/",
        data.AlignmentConfigUpdateApi.as_view(),
        name="config_update",
    ),
    path("alignment/studies/<int:study_id>/assign/", data.AlignmentAssignApi.as_view(), name="assign"),
    path("alignment/studies/<int:study_id>/export/", data.AlignmentExportApi.as_view(), name="export"),
    path("alignment/studies/<int:study_id>/runs/", scoring.AlignmentScoringRunListApi.as_view(), name="run_list"),
    path(
        "alignment/studies/<int:study_id>/runs/create/",
        scoring.AlignmentScoringRunCreateApi.as_view(),
        name="run_create",
    ),
    path(
        "alignment/studies/<int:study_id>/runs/<int:run_id>/",
        scoring.AlignmentScoringRunDetailApi.as_view(),
        name="run_detail",
    ),
    path("alignment/assignments/", annotators.AlignmentAssignmentListApi.as_view(), name="assignment_list"),
    path(
        "alignment/assignments/<int:assignment_id>/",
        annotators.AlignmentAssignmentDetailApi.as_view(),
        name="assignment_detail",
    ),
    path(
        "alignment/assignments/<int:assignment_id>/draft/",
        annotators.AlignmentDraftSaveApi.as_view(),
        name="assignment_draft",
    ),
    path(
        "alignment/assignments/<int:assignment_id>/submit/",
        annotators.AlignmentSubmitApi.as_view(),
        name="assignment_submit",
    ),
]
