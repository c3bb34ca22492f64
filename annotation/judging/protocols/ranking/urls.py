"""The ranking protocol's routes: the judge's ranking pages and the researcher's exports
(``page_urls``, mounted by ``annotation/judging/urls.py``) and the judge's rankings API
(``api_urls``, mounted by ``annotation/judging/api_urls.py``)."""

from django.urls import path

from ...web import judge_page_paths
from . import apis, views

S = "judging/studies/<int:study_id>/"

page_urls = [
    *judge_page_paths("rank", "rank", (views.rank, views.rank_revise, views.rank_submit)),
    path("studies/<int:study_id>/judging/export/rankings.csv", views.export_rankings, name="export_rankings"),
    path(
        "studies/<int:study_id>/judging/export/rankings.jsonl",
        views.export_rankings_jsonl,
        name="export_rankings_jsonl",
    ),
]

api_urls = [
    path(S + "rankings/next/", apis.RankingNextApi.as_view(), name="ranking_next"),
    path(S + "rankings/<str:token>/", apis.RankingDetailApi.as_view(), name="ranking_detail"),
    path(S + "rankings/", apis.RankingSubmitApi.as_view(), name="ranking_submit"),
]
