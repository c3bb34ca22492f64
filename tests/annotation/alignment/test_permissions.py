"""Annotators see only their own pairs; only the study's researchers manage alignment."""

import pytest
from django.urls import reverse

from annotation.alignment.models import AlignmentAssignment
from annotation.alignment.services.assignments import alignment_config_update, assignments_create
from annotation.enums import Role
from annotation.services.membership import study_member_remove

from .conftest import upload

pytestmark = pytest.mark.django_db

RESEARCHER_PAGES = ["alignment:study", "alignment:pairs", "alignment:scoring", "alignment:export"]
RESEARCHER_POSTS = [
    "alignment:import_pairs",
    "alignment:import_system",
    "alignment:settings",
    "alignment:assign",
    "alignment:run_aligner",
]
RESEARCHER_API = [
    "alignment-api:pair_list",
    "alignment-api:system_list",
    "alignment-api:config_detail",
    "alignment-api:run_list",
    "alignment-api:export",
]


@pytest.fixture
def assigned(study, pairs, annotator, second_annotator, system):
    alignment_config_update(study=study, annotators_per_pair=1, prefill_system=system)
    assignments_create(study=study)
    return {
        u: list(AlignmentAssignment.objects.filter(annotator=u).order_by("pair__position"))
        for u in (annotator, second_annotator)
    }


@pytest.mark.parametrize("name", RESEARCHER_PAGES)
def test_annotators_get_403_on_researcher_pages(client, study, annotator, name):
    client.force_login(annotator)
    assert client.get(reverse(name, kwargs={"study_id": study.pk})).status_code == 403


@pytest.mark.parametrize("name", RESEARCHER_POSTS)
def test_annotators_get_403_on_researcher_actions(client, study, pairs, annotator, name):
    client.force_login(annotator)
    r = client.post(
        reverse(name, kwargs={"study_id": study.pk}), {"file": upload("p.csv", "sentence1,sentence2\na,b\n")}
    )
    assert r.status_code == 403
    assert AlignmentAssignment.objects.count() == 0


@pytest.mark.parametrize("name", RESEARCHER_API)
def test_annotators_and_other_researchers_get_403_from_the_researcher_api(
    api_client, study, annotator, make_user, name
):
    url = reverse(name, kwargs={"study_id": study.pk})
    api_client.force_authenticate(annotator)
    assert api_client.get(url).status_code == 403
    api_client.force_authenticate(make_user("olga", researcher=True))
    assert api_client.get(url).status_code == 403


def test_a_researcher_of_another_study_gets_403(client, study, make_user):
    client.force_login(make_user("olga", researcher=True))
    assert client.get(reverse("alignment:study", kwargs={"study_id": study.pk})).status_code == 403


def test_anonymous_visitors_are_sent_to_login(client, study, assigned, annotator):
    a = assigned[annotator][0]
    for url in (
        reverse("alignment:home"),
        reverse("alignment:grid", kwargs={"assignment_id": a.pk}),
        reverse("alignment:study", kwargs={"study_id": study.pk}),
    ):
        r = client.get(url)
        assert r.status_code == 302 and "/accounts/login/" in r["Location"]


def test_the_task_list_shows_only_your_own_pairs(client, assigned, annotator, second_annotator):
    client.force_login(annotator)
    html = client.get(reverse("alignment:home")).content.decode()
    for a in assigned[annotator]:
        assert reverse("alignment:grid", kwargs={"assignment_id": a.pk}) in html
    for a in assigned[second_annotator]:
        assert reverse("alignment:grid", kwargs={"assignment_id": a.pk}) not in html


def test_someone_elses_pair_is_403_on_the_page_and_the_api(client, api_client, assigned, annotator, second_annotator):
    theirs = assigned[second_annotator][0]
    client.force_login(annotator)
    assert client.get(reverse("alignment:grid", kwargs={"assignment_id": theirs.pk})).status_code == 403
    api_client.force_authenticate(annotator)
    assert (
        api_client.get(reverse("alignment-api:assignment_detail", kwargs={"assignment_id": theirs.pk})).status_code
        == 403
    )
    body = {"sure": [[0, 0]], "possible": [], "revision": 0, "active_seconds": 1}
    assert (
        api_client.put(
            reverse("alignment-api:assignment_draft", kwargs={"assignment_id": theirs.pk}), body, format="json"
        ).status_code
        == 403
    )
    assert (
        api_client.post(
            reverse("alignment-api:assignment_submit", kwargs={"assignment_id": theirs.pk}), body, format="json"
        ).status_code
        == 403
    )
    theirs.refresh_from_db()
    assert theirs.revision == 0 and theirs.status == "assigned"
    mine = [row["id"] for row in api_client.get(reverse("alignment-api:assignment_list")).json()]
    assert mine == [a.pk for a in assigned[annotator]]


def test_the_researcher_cannot_edit_an_annotators_pair_either(api_client, researcher, assigned, annotator):
    api_client.force_authenticate(researcher)
    a = assigned[annotator][0]
    body = {"sure": [], "possible": [], "revision": 0, "active_seconds": 0}
    assert (
        api_client.put(
            reverse("alignment-api:assignment_draft", kwargs={"assignment_id": a.pk}), body, format="json"
        ).status_code
        == 403
    )


def test_an_annotator_removed_from_the_study_loses_access(client, study, assigned, annotator):
    study_member_remove(study=study, user=annotator, role=Role.ANNOTATOR)
    client.force_login(annotator)
    assert client.get(reverse("alignment:grid", kwargs={"assignment_id": assigned[annotator][0].pk})).status_code == 403


def test_a_missing_pair_is_404(client, annotator):
    client.force_login(annotator)
    assert client.get(reverse("alignment:grid", kwargs={"assignment_id": 999999})).status_code == 404


def test_a_researcher_sees_the_alignment_tab_and_the_home_page_sends_annotators_to_their_tasks(
    client, study, researcher, annotator
):
    client.force_login(researcher)
    html = client.get(reverse("annotation:study_detail", kwargs={"study_id": study.pk})).content.decode()
    assert reverse("alignment:study", kwargs={"study_id": study.pk}) in html
    client.force_login(annotator)
    r = client.get(reverse("home"))
    assert r.status_code == 302 and r["Location"] == reverse("alignment:home")
