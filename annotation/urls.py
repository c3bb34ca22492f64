from django.urls import path

from . import views

app_name = "annotation"
urlpatterns = [
    path("studies/", views.study_list, name="study_list"),
    path("studies/new/", views.study_create, name="study_create"),
    path("studies/<int:study_id>/", views.study_detail, name="study_detail"),
    path("studies/<int:study_id>/members/", views.study_member_add, name="study_member_add"),
    path("studies/<int:study_id>/members/remove/", views.study_member_remove, name="study_member_remove"),
    path("studies/<int:study_id>/people/", views.study_people_add, name="study_people_add"),
    path("signin/<str:token>/", views.signin_link, name="signin_link"),
    path("studies/<int:study_id>/imports/<int:job_id>/", views.import_job_status, name="import_job_status"),
]

# Baseline paraphrasers: add a generated system to a study (service: annotation/generation.py).
urlpatterns += [path("studies/<int:study_id>/generate/", views.study_generate, name="study_generate")]
