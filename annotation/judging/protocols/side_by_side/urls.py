"""The side-by-side protocol's routes: the judge's pair pages and the researcher's export
(``page_urls``, mounted by ``annotation/judging/urls.py``) and the judge's pairs API
(``api_urls``, mounted by ``annotation/judging/api_urls.py``). Names and paths are the
judging app's (``judging:compare``, ``judging-api:pair_next``) and stay as they are."""

from django.urls import path

from ...web import judge_page_paths
from . import apis, views

S = "judging/studies/<int:study_id>/"

page_urls = [
    *judge_page_paths(
        "compare", "compare", (views.side_by_side_page, views.side_by_side_revise, views.side_by_side_submit_view)
    ),
    path(
        "studies/<int:study_id>/judging/export/comparisons.csv",
        views.export_side_by_side_csv,
        name="export_comparisons",
    ),
]

api_urls = [
    path(S + "pairs/next/", apis.ComparisonNextPairApi.as_view(), name="pair_next"),
    path(S + "pairs/<str:token>/", apis.ComparisonPairDetailApi.as_view(), name="pair_detail"),
    path(S + "comparisons/", apis.ComparisonSubmitApi.as_view(), name="comparison_submit"),
]
