"""The ranking protocol's routes: the judge's ranking pages and the researcher's exports
(``page_urls``, mounted by ``annotation/judging/urls.py``) and the judge's rankings API
(``api_urls``, mounted by ``annotation/judging/api_urls.py``)."""

from django.urls import path

from . import apis, views

S = "judging/studies/<int:study_id>/"

page_urls = [
    path("judge/studies/<int:study_id>/rank/", views.rank, name="rank"),
    path("judge/studies/<int:study_id>/rank/submit/", views.rank_submit, name="rank_submit"),
    path("judge/studies/<int:study_id>/rank/<str:token>/", views.rank_revise, name="rank_revise"),
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
