"""Blinding across roles: one account never both judges and annotates a study; judges
and annotators see a study's participant title, never its name; annotators see
their own pair numbers, never the researcher's pair ids."""

from __future__ import annotations

import pytest
from django.urls import reverse

from annotation.enums import Role
from annotation.models import PARTICIPANT_TITLE_DEFAULT, StudyMembership
from annotation.selectors import study_role_conflicts
from annotation.services.membership import RoleConflict, study_member_add
from annotation.services.studies import study_create

pytestmark = pytest.mark.django_db

PAIRS = (
    "pair_id,sentence1,sentence2\n"
    "John 1:1 synonyms,In the beginning was the Word.,In the first was the Word.\n"
    "John 1:2 pivot-mt,The same was in the beginning with God.,The same it was in the beginning with God.\n"
)


def _messages(response) -> str:
    return " ".join(str(m) for m in response.context["messages"]) if response.context else response.content.decode()


# --- one account, one of the two roles --------------------------------------------------


@pytest.mark.parametrize("first,second", [(Role.JUDGE, Role.ANNOTATOR), (Role.ANNOTATOR, Role.JUDGE)])
def test_the_service_refuses_making_one_account_judge_and_annotator_of_one_study(study, make_user, first, second):
    user = make_user("both")
    study_member_add(study=study, user=user, role=first)
    with pytest.raises(RoleConflict) as info:
        study_member_add(study=study, user=user, role=second)
    assert (
        f"both is already {'a' if first == Role.JUDGE else 'an'} {first} in this study and cannot also be"
        in info.value.messages[0]
    )
    assert "tell the systems apart" in info.value.messages[0]
    assert set(StudyMembership.objects.filter(study=study, user=user).values_list("role", flat=True)) == {first}


def test_the_same_account_may_judge_one_study_and_annotate_another_and_be_researcher_too(study, make_user, researcher):
    from tests.factories import study_with_data

    other = study_with_data(owner=researcher, name="Second study")
    user = make_user("both")
    study_member_add(study=study, user=user, role=Role.JUDGE)
    study_member_add(study=other, user=user, role=Role.ANNOTATOR)
    study_member_add(study=study, user=user, role=Role.RESEARCHER)
    study_member_add(study=study, user=user, role=Role.JUDGE)  # idempotent
    assert StudyMembership.objects.filter(user=user).count() == 3


def test_the_study_page_refuses_the_second_role_and_says_why(client, study, researcher, judge):
    client.force_login(researcher)
    r = client.post(
        reverse("annotation:study_member_add", kwargs={"study_id": study.pk}),
        {"username": judge.username, "role": "annotator"},
        follow=True,
    )
    assert r.status_code == 200
    assert "jude is already a judge in this study and cannot also be an annotator" in _messages(r)
    assert not StudyMembership.objects.filter(study=study, user=judge, role=Role.ANNOTATOR).exists()


def test_the_api_refuses_the_second_role_with_a_400_that_says_why(api_client, study, researcher, annotator):
    api_client.force_authenticate(researcher)
    url = reverse("annotation-api:member_add", kwargs={"study_id": study.pk})
    r = api_client.post(url, {"username": annotator.username, "role": "judge"}, format="json")
    assert r.status_code == 400
    assert "anna is already an annotator in this study and cannot also be a judge" in str(r.json())
    r = api_client.post(url, {"username": "nobody-here", "role": "judge"}, format="json")
    assert r.status_code == 400 and "No user named" in str(r.json())
    r = api_client.post(url, {"username": annotator.username, "role": "boss"}, format="json")
    assert r.status_code == 400
    listed = api_client.get(reverse("annotation-api:member_list", kwargs={"study_id": study.pk})).json()
    assert {(m["username"], m["role"]) for m in listed} == {("rita", "researcher"), ("anna", "annotator")}


@pytest.fixture
def legacy_conflict(study, make_user):
    """An account made judge and annotator of one study before that was refused."""
    from annotation.alignment.services.assignments import assignments_create
    from annotation.alignment.services.pairs import pairs_import_file
    from annotation.judging.services.opening import study_judging_open

    user = make_user("twofold")
    StudyMembership.objects.create(study=study, user=user, role=Role.JUDGE)
    StudyMembership.objects.create(study=study, user=user, role=Role.ANNOTATOR)
    study_judging_open(study=study)
    pairs_import_file(study=study, data=PAIRS.encode(), filename="pairs.csv")
    assignments_create(study=study, annotators=[user])
    return user


def test_an_existing_judge_and_annotator_is_flagged_and_held_out_of_both_until_a_researcher_removes_one_role(
    client, api_client, study, researcher, legacy_conflict
):
    user = legacy_conflict
    assert [u.username for u in study_role_conflicts(study=study)] == ["twofold"]
    # The researcher is told, on the page and in the API.
    client.force_login(researcher)
    page = client.get(reverse("annotation:study_detail", kwargs={"study_id": study.pk})).content.decode()
    assert (
        'id="role-conflicts"' in page and "both judge and annotator of this study" in page and "Remove as judge" in page
    )
    api_client.force_authenticate(researcher)
    detail = api_client.get(reverse("annotation-api:study_detail", kwargs={"study_id": study.pk})).json()
    assert detail["role_conflicts"] == ["twofold"]
    # The account can neither rate nor align here; it is told why.
    client.force_login(user)
    r = client.get(reverse("judging:rate", kwargs={"study_id": study.pk}))
    assert r.status_code == 403 and "both a judge and an annotator of this study" in r.content.decode()
    assignment = user.alignment_assignments.first()
    r = client.get(reverse("alignment:grid", kwargs={"assignment_id": assignment.pk}))
    assert r.status_code == 403 and "must remove one of the two roles" in r.content.decode()
    api_client.force_authenticate(user)
    r = api_client.get(reverse("judging-api:item_next", kwargs={"study_id": study.pk}))
    assert r.status_code == 403 and "both a judge and an annotator" in r.json()["detail"]
    r = api_client.put(
        reverse("alignment-api:assignment_draft", kwargs={"assignment_id": assignment.pk}),
        {"sure": [], "possible": [], "revision": 0},
        format="json",
    )
    assert r.status_code == 403
    assert api_client.get(reverse("alignment-api:assignment_list")).json() == []
    # The researcher removes the annotator role (on the page): the account judges again.
    client.force_login(researcher)
    r = client.post(
        reverse("annotation:study_member_remove", kwargs={"study_id": study.pk}),
        {"username": "twofold", "role": "annotator"},
        follow=True,
    )
    assert "twofold is no longer an annotator in this study" in _messages(r)
    assert study_role_conflicts(study=study) == []
    client.force_login(user)
    assert client.get(reverse("judging:rate", kwargs={"study_id": study.pk})).status_code in (200, 302)


def test_the_api_removes_a_role_and_refuses_to_remove_the_owner(api_client, study, researcher, judge):
    api_client.force_authenticate(researcher)
    url = reverse("annotation-api:member_remove", kwargs={"study_id": study.pk})
    assert api_client.post(url, {"username": "jude", "role": "judge"}, format="json").status_code == 204
    assert api_client.post(url, {"username": "jude", "role": "judge"}, format="json").status_code == 404
    r = api_client.post(url, {"username": "rita", "role": "researcher"}, format="json")
    assert r.status_code == 400 and "owns this study" in str(r.json())


# --- the participant title ------------------------------------------------------------------


def test_a_new_study_has_a_neutral_participant_title_unless_one_is_given(researcher):
    plain = study_create(name="KJV vs WEB", owner=researcher)
    assert plain.participant_title == PARTICIPANT_TITLE_DEFAULT == "Paraphrase evaluation"
    titled = study_create(name="KJV vs WEB 2", owner=researcher, participant_title="  Sentence pairs ")
    assert titled.participant_title == "Sentence pairs"


def test_researchers_edit_the_participant_title_on_the_study_page(client, study, researcher):
    client.force_login(researcher)
    url = reverse("annotation:study_detail", kwargs={"study_id": study.pk})
    r = client.post(
        url,
        {
            "action": "settings",
            "settings-name": study.name,
            "settings-participant_title": "Rate these",
            "settings-description": "",
        },
    )
    assert r.status_code == 302
    study.refresh_from_db()
    assert study.participant_title == "Rate these"
    r = client.post(
        url,
        {
            "action": "settings",
            "settings-name": study.name,
            "settings-participant_title": "",
            "settings-description": "",
        },
    )
    assert r.status_code == 400 and "This field is required" in r.content.decode()


def test_researchers_edit_the_participant_title_through_the_api_and_bad_input_is_a_400(api_client, study, researcher):
    api_client.force_authenticate(researcher)
    url = reverse("annotation-api:study_update", kwargs={"study_id": study.pk})
    r = api_client.patch(url, {"participant_title": "Sentence pairs"}, format="json")
    assert r.status_code == 200 and r.json()["participant_title"] == "Sentence pairs"
    assert api_client.patch(url, {"participant_title": ""}, format="json").status_code == 400
    assert api_client.patch(url, {"owner": "someone"}, format="json").status_code == 400
    assert api_client.patch(url, {"participant_title": "x" * 121}, format="json").status_code == 400
    study_create(name="Taken", owner=researcher)
    r = api_client.patch(url, {"name": "Taken"}, format="json")
    assert r.status_code == 400 and "name" in r.json()


# --- annotators' pair numbers ------------------------------------------------------------------


def test_annotators_see_their_own_pair_numbers_never_the_researchers_pair_ids(client, api_client, study, annotator):
    from annotation.alignment.services.assignments import assignments_create
    from annotation.alignment.services.pairs import pairs_import_file

    pairs_import_file(study=study, data=PAIRS.encode(), filename="pairs.csv")
    assignments_create(study=study, annotators=[annotator])
    client.force_login(annotator)
    bodies = [client.get(reverse("alignment:home")).content.decode()]
    first, second = annotator.alignment_assignments.order_by("pair__position")
    for a in (first, second):
        bodies.append(client.get(reverse("alignment:grid", kwargs={"assignment_id": a.pk})).content.decode())
    api_client.force_authenticate(annotator)
    listed = api_client.get(reverse("alignment-api:assignment_list"))
    bodies.append(listed.content.decode())
    detail = api_client.get(reverse("alignment-api:assignment_detail", kwargs={"assignment_id": second.pk}))
    bodies.append(detail.content.decode())
    bad = api_client.put(
        reverse("alignment-api:assignment_draft", kwargs={"assignment_id": first.pk}),
        {"sure": [[0, 40]], "possible": [], "revision": 0},
        format="json",
    )
    assert bad.status_code == 400
    bodies.append(bad.content.decode())
    for body in bodies:
        assert "John" not in body and "synonyms" not in body and "pivot-mt" not in body
        assert study.name not in body
    assert "<h1>Pair 2 <span" in bodies[2] and "Align pair 2 " in bodies[2]
    assert [row["pair_number"] for row in listed.json()] == [1, 2]
    assert detail.json()["pair_number"] == 2 and detail.json()["study_title"] == study.participant_title


def test_the_admin_refuses_the_second_role_with_the_same_message(study, judge):
    from annotation.admin import MembershipForm

    form = MembershipForm(data={"study": study.pk, "user": judge.pk, "role": "annotator"})
    assert not form.is_valid()
    assert "jude is already a judge in this study and cannot also be an annotator" in str(form.errors)
    assert MembershipForm(data={"study": study.pk, "user": judge.pk, "role": "researcher"}).is_valid()


def test_the_create_page_and_api_take_a_participant_title(client, api_client, researcher):
    from annotation.models import Study

    client.force_login(researcher)
    r = client.post(reverse("annotation:study_create"), {"name": "A vs B", "participant_title": "Sentence pairs"})
    assert r.status_code == 302 and Study.objects.get(name="A vs B").participant_title == "Sentence pairs"
    api_client.force_authenticate(researcher)
    r = api_client.post(reverse("annotation-api:study_create"), {"name": "C vs D"}, format="json")
    assert r.status_code == 201 and r.json()["participant_title"] == "Paraphrase evaluation"
