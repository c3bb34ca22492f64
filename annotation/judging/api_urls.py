"""Judging API (mounted under /api/)."""

from django.urls import path

from . import screening_apis
from .apis import results, study
from .urls import protocol_routes

app_name = "judging-api"
S = "judging/studies/<int:study_id>/"
urlpatterns = [
    # the judge's own assignment
    *protocol_routes("api_urls"),  # each protocol's own endpoints (items, pairs, ESA items, ranking sets)
    path(S + "training/", screening_apis.JudgeTrainingApi.as_view(), name="training"),
    path(S + "training/answers/", screening_apis.JudgeTrainingAnswerApi.as_view(), name="training_answer"),
    path(S + "attention/", screening_apis.JudgeAttentionApi.as_view(), name="attention"),
    # researchers
    path(S + "screening/", screening_apis.ScreeningApi.as_view(), name="screening"),
    path(S + "screening/update/", screening_apis.ScreeningUpdateApi.as_view(), name="screening_update"),
    path(S + "training/items/", screening_apis.TrainingItemAddApi.as_view(), name="training_item_add"),
    path(S + "training/items/import/", screening_apis.TrainingImportApi.as_view(), name="training_import"),
    path(
        S + "training/items/<str:token>/", screening_apis.TrainingItemDeleteApi.as_view(), name="training_item_delete"
    ),
    path(S + "design/", study.JudgingDesignApi.as_view(), name="design"),
    path(S + "design/update/", study.JudgingDesignUpdateApi.as_view(), name="design_update"),
    path(S + "open/", study.JudgingOpenApi.as_view(), name="open"),
    path(S + "open/<int:open_job_id>/", study.JudgingOpenJobApi.as_view(), name="open_job"),
    path(S + "close/", study.JudgingCloseApi.as_view(), name="close"),
    path(S + "progress/", study.JudgingProgressApi.as_view(), name="progress"),
    path(S + "qc/", results.JudgingQCApi.as_view(), name="qc"),
    path(S + "judges/<str:username>/exclude/", results.JudgingJudgeExcludeApi.as_view(), name="judge_exclude"),
    path(S + "judges/<str:username>/include/", results.JudgingJudgeIncludeApi.as_view(), name="judge_include"),
    path(S + "judgments/import/", results.JudgingImportApi.as_view(), name="judgments_import"),
    path(S + "export/tidy/", results.JudgingExportTidyApi.as_view(), name="export_tidy"),
    path(S + "export/wide/", results.JudgingExportWideApi.as_view(), name="export_wide"),
]
