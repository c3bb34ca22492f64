"""The ESA protocol's routes: the judge's page and the researcher's exports (``page_urls``,
mounted by ``annotation/judging/urls.py``) and the judge's ESA API (``api_urls``, mounted by
``annotation/judging/api_urls.py``)."""

from django.urls import path

from ...web import judge_page_paths
from . import apis, views

S = "judging/studies/<int:study_id>/"

page_urls = [
    *judge_page_paths("esa", "esa", (views.esa_page, views.esa_revise, views.esa_submit_view)),
    path("studies/<int:study_id>/judging/export/esa-spans.jsonl", views.export_esa_jsonl, name="export_esa_jsonl"),
    path("studies/<int:study_id>/judging/export/esa.csv", views.export_esa_csv, name="export_esa_csv"),
    path("studies/<int:study_id>/judging/esa/proposals/", views.esa_proposals_upload, name="esa_proposals_upload"),
]

api_urls = [
    path(S + "esa/next/", apis.EsaNextItemApi.as_view(), name="esa_next"),
    path(S + "esa/items/<str:token>/", apis.EsaItemDetailApi.as_view(), name="esa_item_detail"),
    path(S + "esa/judgments/", apis.EsaSubmitApi.as_view(), name="esa_submit"),
    path(S + "esa/proposals/import/", apis.EsaProposalsImportApi.as_view(), name="esa_proposals_import"),
]
