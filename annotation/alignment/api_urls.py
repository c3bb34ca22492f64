from django.urls import path

from . import apis

app_name = "alignment-api"
urlpatterns = [
    path("alignment/studies/<int:study_id>/pairs/", apis.AlignmentPairListApi.as_view(), name="pair_list"),
    path("alignment/studies/<int:study_id>/pairs/import/", apis.AlignmentPairsImportApi.as_view(), name="pairs_import"),
    path("alignment/studies/<int:study_id>/systems/", apis.AlignmentSystemListApi.as_view(), name="system_list"),
    path("alignment/studies/<int:study_id>/systems/import/", apis.AlignmentSystemImportApi.as_view(), name="system_import"),
    path("alignment/studies/<int:study_id>/settings/", apis.AlignmentConfigDetailApi.as_view(), name="config_detail"),
    path("alignment/studies/<int:study_id>/settings/update/", apis.AlignmentConfigUpdateApi.as_view(), name="config_update"),
    path("alignment/studies/<int:study_id>/assign/", apis.AlignmentAssignApi.as_view(), name="assign"),
    path("alignment/studies/<int:study_id>/export/", apis.AlignmentExportApi.as_view(), name="export"),
    path("alignment/studies/<int:study_id>/runs/", apis.AlignmentScoringRunListApi.as_view(), name="run_list"),
    path("alignment/studies/<int:study_id>/runs/create/", apis.AlignmentScoringRunCreateApi.as_view(), name="run_create"),
    path("alignment/studies/<int:study_id>/runs/<int:run_id>/", apis.AlignmentScoringRunDetailApi.as_view(), name="run_detail"),
    path("alignment/assignments/", apis.AlignmentAssignmentListApi.as_view(), name="assignment_list"),
    path("alignment/assignments/<int:assignment_id>/", apis.AlignmentAssignmentDetailApi.as_view(), name="assignment_detail"),
    path("alignment/assignments/<int:assignment_id>/draft/", apis.AlignmentDraftSaveApi.as_view(), name="assignment_draft"),
    path("alignment/assignments/<int:assignment_id>/submit/", apis.AlignmentSubmitApi.as_view(), name="assignment_submit"),
]
