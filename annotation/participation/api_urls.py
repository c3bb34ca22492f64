from django.urls import path

from . import apis

app_name = "participation-api"
urlpatterns = [
    path("studies/<int:study_id>/join-links/", apis.JoinLinkListApi.as_view(), name="join_links"),
    path(
        "studies/<int:study_id>/join-links/<int:link_id>/close/",
        apis.JoinLinkCloseApi.as_view(),
        name="join_link_close",
    ),
    path("studies/<int:study_id>/participation/", apis.ParticipationSettingsApi.as_view(), name="settings"),
    path("studies/<int:study_id>/participants/", apis.ParticipantListApi.as_view(), name="participants"),
]
