"""Researchers own studies; judges and annotators see only what they are assigned."""

import pytest
from django.urls import reverse

from annotation.enums import Role
from annotation.services.membership import study_member_add


@pytest.fixture
def outsider_researcher(make_user):
    return make_user("other", researcher=True)


@pytest.mark.parametrize("name", ["annotation:study_detail"])
def test_judge_gets_403_on_researcher_pages(client, judge, study, name):
    client.force_login(judge)
    assert client.get(reverse(name, kwargs={"study_id": study.pk})).status_code == 403
    assert client.get(reverse("annotation:study_list")).status_code == 403
    assert client.get(reverse("annotation:study_create")).status_code == 403


def test_judge_gets_403_on_researcher_endpoints(api_client, judge, study):
    api_client.force_authenticate(judge)
    assert api_client.get(f"/api/studies/{study.pk}/").status_code == 403
    assert api_client.post("/api/studies/create/", {"name": "x"}).status_code == 403
    r = api_client.post(f"/api/studies/{study.pk}/import/", {"file": _upload()}, format="multipart")
    assert r.status_code == 403


def test_anonymous_is_redirected_to_login_and_refused_by_the_api(client, api_client, study):
    r = client.get(reverse("annotation:study_detail", kwargs={"study_id": study.pk}))
    assert r.status_code == 302 and "/accounts/login/" in r["Location"]
    assert api_client.get("/api/studies/").status_code in (401, 403)


def test_researcher_sees_only_own_studies(client, study, outsider_researcher):
    client.force_login(outsider_researcher)
    assert client.get(reverse("annotation:study_detail", kwargs={"study_id": study.pk})).status_code == 403
    assert study.name not in client.get(reverse("annotation:study_list")).content.decode()


def test_co_researcher_membership_grants_access(client, study, outsider_researcher):
    study_member_add(study=study, user=outsider_researcher, role=Role.RESEARCHER)
    client.force_login(outsider_researcher)
    assert client.get(reverse("annotation:study_detail", kwargs={"study_id": study.pk})).status_code == 200


def test_owner_sees_counts_per_system(client, study, researcher):
    client.force_login(researcher)
    html = client.get(reverse("annotation:study_detail", kwargs={"study_id": study.pk})).content.decode()
    assert "human" in html and "machine" in html
    assert 'data-count="candidates">10<' in html


def _upload():
    from django.core.files.uploadedfile import SimpleUploadedFile

    return SimpleUploadedFile("d.csv", b"original_id,original,system,candidate\n1,a,s,b\n", content_type="text/csv")


def test_a_judge_added_after_judging_opened_gets_a_list_at_once(client, study, researcher, make_user):
    from annotation.judging.models import Assignment
    from annotation.judging.services.opening import study_judging_open

    study_judging_open(study=study, user=researcher)
    late = make_user("late")
    client.force_login(researcher)
    r = client.post(
        reverse("annotation:study_member_add", kwargs={"study_id": study.pk}),
        {"username": "late", "role": "judge"},
        follow=True,
    )
    assert "Their list of items is ready." in r.content.decode()
    assert Assignment.objects.filter(study=study, judge=late).exists()


def test_favicon_is_served(client, db):
    r = client.get("/favicon.ico")
    assert r.status_code == 301 and r["Location"].endswith("favicon.svg")
