from django.urls import path

from . import apis

app_name = "annotation-api"
urlpatterns = [
    path("studies/", apis.StudyListApi.as_view(), name="study_list"),
    path("studies/create/", apis.StudyCreateApi.as_view(), name="study_create"),
    path("studies/<int:study_id>/", apis.StudyDetailApi.as_view(), name="study_detail"),
    path("studies/<int:study_id>/update/", apis.StudyUpdateApi.as_view(), name="study_update"),
    path("studies/<int:study_id>/members/", apis.StudyMemberListApi.as_view(), name="member_list"),
    path("studies/<int:study_id>/members/add/", apis.StudyMemberAddApi.as_view(), name="member_add"),
    path("studies/<int:study_id>/members/remove/", apis.StudyMemberRemoveApi.as_view(), name="member_remove"),
    path("studies/<int:study_id>/people/add/", apis.StudyPeopleAddApi.as_view(), name="people_add"),
    path("studies/<int:study_id>/people/create/", apis.StudyPeopleCreateApi.as_view(), name="people_create"),
    path("studies/<int:study_id>/import/", apis.StudyImportApi.as_view(), name="study_import"),
    path("studies/<int:study_id>/imports/<int:job_id>/", apis.ImportJobDetailApi.as_view(), name="import_job"),
]
