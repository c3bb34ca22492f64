"""The absolute protocol's routes: the rating page, the door every judge comes in by
(``page_urls``, mounted by ``annotation/judging/urls.py``), and the judge's item API
(``api_urls``, mounted by ``annotation/judging/api_urls.py``). Names and paths are the judging
app's (``judging:rate``, ``judging-api:item_next``) and stay as they are."""

from django.urls import path

from . import apis, views

S = "judging/studies/<int:study_id>/"

page_urls = [
    path("judge/studies/<int:study_id>/", views.rate, name="rate"),
    path("judge/studies/<int:study_id>/items/<str:token>/", views.revise, name="revise"),
    path("judge/studies/<int:study_id>/submit/", views.submit, name="submit"),
    path("judge/studies/<int:study_id>/done/", views.finished, name="finished"),
    path("judge/studies/<int:study_id>/check/", views.attention, name="attention"),
]

api_urls = [
    path(S + "items/next/", apis.JudgingNextItemApi.as_view(), name="item_next"),
    path(S + "items/last/", apis.JudgingLastItemApi.as_view(), name="item_last"),
    path(S + "items/<str:token>/", apis.JudgingItemDetailApi.as_view(), name="item_detail"),
    path(S + "items/<str:token>/previous/", apis.JudgingItemPreviousApi.as_view(), name="item_previous"),
    path(S + "judgments/", apis.JudgingSubmitApi.as_view(), name="judgment_submit"),
]
