"""Join links: consent first, pseudonymous participants, resume links, platform ids, caps and end dates."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.utils import timezone

from annotation.judging.models import Assignment
from annotation.judging.protocols.absolute.models import AssignmentItem
from annotation.models import Participant, StudyMembership
from annotation.participation import services
from annotation.participation.services import token_hash

from .conftest import come_back, join, mturk_params, prolific_params

pytestmark = pytest.mark.django_db


def _counts():
    return (
        User.objects.count(),
        Participant.objects.count(),
        StudyMembership.objects.count(),
        Assignment.objects.count(),
        AssignmentItem.objects.count(),
    )


def test_opening_a_link_shows_consent_and_stores_nothing(judge_link, open_study):
    services.participation_settings_update(
        study=open_study, consent_text="We store your ratings for research.", questions_before=[], questions_after=[]
    )
    before = _counts()
    r = Client().get(f"/join/{judge_link.token}/")
    assert r.status_code == 200
    assert "We store your ratings for research." in r.content.decode()
    assert _counts() == before


def test_declining_consent_stores_nothing_and_ends_politely(prolific_link):
    before = _counts()
    client = Client()
    params = prolific_params()
    r = client.post(f"/join/{prolific_link.token}/", {**params, "action": "decline"})
    assert r.status_code == 200 and "Nothing about you has been stored" in r.content.decode()
    assert _counts() == before
    assert "_auth_user_id" not in client.session
    # A post without "accept" (a forged or empty form) does not join either.
    assert client.post(f"/join/{prolific_link.token}/", params).status_code == 200
    assert _counts() == before


def test_accepting_makes_a_pseudonymous_judge_signed_in_with_items(judge_link, open_study):
    client, r = join(judge_link)
    assert r.status_code == 200
    p = Participant.objects.get()
    user = p.user
    assert user.username.startswith("p-") and user.email == "" and not user.has_usable_password()
    assert not user.first_name and not user.last_name
    assert StudyMembership.objects.filter(study=open_study, user=user, role="judge").exists()
    assert Assignment.objects.get(study=open_study, judge=user).n_items == 10  # every item: no cap on items
    assert int(client.session["_auth_user_id"]) == user.pk
    # The resume link is shown once; the database holds only its SHA-256.
    url = r.context["resume_url"]
    token = url.rstrip("/").rsplit("/", 1)[1]
    assert token not in str(Participant.objects.values_list().get())
    assert p.resume_token_hash == token_hash(token)
    # Continuing goes to the rating page.
    r = client.get(r.context["next_url"])
    assert r.status_code == 302 and r["Location"] == f"/judge/studies/{open_study.pk}/"


def test_resume_link_signs_the_participant_in_on_another_browser(judge_link):
    _, r = join(judge_link)
    url = r.context["resume_url"].replace("http://testserver", "")
    other = Client()
    page = other.get(url)
    assert page.status_code == 200 and "_auth_user_id" not in other.session  # GET asks, does not sign in
    r2 = other.post(url)
    assert r2.status_code == 302
    assert int(other.session["_auth_user_id"]) == Participant.objects.get().user_id
    assert Client().get("/participate/resume/" + "x" * 43 + "/").status_code == 404


def test_a_second_visit_from_the_same_browser_resumes_instead_of_joining_again(judge_link):
    client, _ = join(judge_link)
    r = client.get(f"/join/{judge_link.token}/")
    assert r.status_code == 302 and "/participate/studies/" in r["Location"]
    assert Participant.objects.count() == 1


def test_prolific_ids_are_captured_and_a_returning_id_resumes(prolific_link, open_study):
    params = prolific_params()
    _, r = join(prolific_link, params)
    p = Participant.objects.get()
    assert (p.platform, p.platform_id, p.platform_study_id, p.platform_session_id) == (
        "prolific",
        params["PROLIFIC_PID"],
        params["STUDY_ID"],
        params["SESSION_ID"],
    )
    # The same Prolific submission (PID, STUDY_ID and SESSION_ID) in a fresh browser resumes the same participant
    # after pressing Continue: no second account or assignment.
    other, r = come_back(prolific_link, params)
    assert r.status_code == 302 and int(other.session["_auth_user_id"]) == p.user_id
    assert Participant.objects.count() == 1 and Assignment.objects.count() == 1


def test_one_participant_per_platform_id_per_study(prolific_link, open_study, researcher):
    params = prolific_params()
    join(prolific_link, params)
    with pytest.raises(services.JoinRefused, match="already taken part"):
        services.participant_join(
            link=prolific_link, ids=services.platform_ids_parse(platform="prolific", params=params)
        )
    assert Participant.objects.count() == 1


@pytest.mark.parametrize(
    "bad",
    [
        {"PROLIFIC_PID": "not-an-id"},
        {"PROLIFIC_PID": "'; drop table x; --"},
        {"STUDY_ID": ""},
        {"SESSION_ID": "g" * 24},
    ],
)
def test_malformed_prolific_ids_get_a_clear_400_and_store_nothing(prolific_link, bad):
    before = _counts()
    params = {**prolific_params(), **bad}
    r = Client().get(f"/join/{prolific_link.token}/", params)
    assert r.status_code == 400 and "incomplete or was changed" in r.content.decode()
    r = Client().post(f"/join/{prolific_link.token}/", {**params, "action": "accept"})
    assert r.status_code == 400
    assert _counts() == before


def test_mturk_preview_shows_a_preview_and_creates_nothing(open_study, researcher):
    link = services.join_link_create(study=open_study, role="judge", platform="mturk")
    before = _counts()
    r = Client().get(
        f"/join/{link.token}/", {"assignmentId": "ASSIGNMENT_ID_NOT_AVAILABLE", "hitId": "3ABCDEFGHIJKLMNOPQRST"}
    )
    assert r.status_code == 200 and "This is a preview" in r.content.decode()
    assert b"consent-form" not in r.content
    assert _counts() == before


def test_mturk_ids_are_captured_and_the_submit_host_is_checked(open_study):
    link = services.join_link_create(study=open_study, role="judge", platform="mturk")
    params = mturk_params()
    join(link, params)
    p = Participant.objects.get()
    assert (p.platform_id, p.platform_session_id, p.platform_study_id, p.mturk_submit_to) == (
        params["workerId"],
        params["assignmentId"],
        params["hitId"],
        "https://workersandbox.mturk.com",
    )
    evil = {**mturk_params(), "turkSubmitTo": "https://evil.example.com"}
    assert Client().get(f"/join/{link.token}/", evil).status_code == 400


def test_a_platform_id_may_take_part_in_another_study(prolific_link, researcher):
    from annotation.judging.services.opening import study_judging_open
    from tests.factories import study_with_data

    other = study_with_data(owner=researcher, name="Second study")
    study_judging_open(study=other)
    other_link = services.join_link_create(study=other, role="judge", platform="prolific")
    params = prolific_params()
    join(prolific_link, params)
    join(other_link, params)
    assert Participant.objects.filter(platform_id=params["PROLIFIC_PID"]).count() == 2


def test_cap_end_date_and_closed_link_get_clear_pages_not_errors(open_study, researcher):
    capped = services.join_link_create(study=open_study, role="judge", max_participants=1)
    join(capped)
    r = Client().get(f"/join/{capped.token}/")
    assert r.status_code == 410 and "This study is full" in r.content.decode()
    ended = services.join_link_create(study=open_study, role="judge", ends_at=timezone.now() + timedelta(seconds=1))
    type(ended).objects.filter(pk=ended.pk).update(ends_at=timezone.now() - timedelta(minutes=1))
    r = Client().get(f"/join/{ended.token}/")
    assert r.status_code == 410 and "This study has ended" in r.content.decode()
    closed = services.join_link_close(link=services.join_link_create(study=open_study, role="judge"))
    client = Client()
    r = client.post(f"/join/{closed.token}/", {"action": "accept"})
    assert r.status_code == 410 and "closed to new participants" in r.content.decode()
    assert Client().get("/join/no-such-link/").status_code == 404
    assert Participant.objects.count() == 1


def test_judge_link_of_a_study_not_open_is_refused_with_409(study):
    link = services.join_link_create(study=study, role="judge")
    r = Client().get(f"/join/{link.token}/")
    assert r.status_code == 409 and "not open" in r.content.decode()


def test_cap_holds_when_accepting_after_the_page_was_shown(open_study):
    link = services.join_link_create(study=open_study, role="judge", max_participants=1)
    a, b = Client(), Client()
    assert a.get(f"/join/{link.token}/").status_code == 200
    assert b.get(f"/join/{link.token}/").status_code == 200
    assert a.post(f"/join/{link.token}/", {"action": "accept"}).status_code == 200
    assert b.post(f"/join/{link.token}/", {"action": "accept"}).status_code == 410
    assert Participant.objects.count() == 1


def test_joins_from_one_address_are_limited(judge_link, settings):
    settings.PARAEVAL_JOIN_PER_ADDRESS_PER_HOUR = 2
    from django.core.cache import cache

    cache.clear()
    join(judge_link)
    join(judge_link)
    r = join(judge_link)[1]
    assert r.status_code == 429 and Participant.objects.count() == 2
    cache.clear()


def test_annotator_link_makes_an_annotator_with_pairs(study, researcher):
    from annotation.alignment.models import AlignmentAssignment
    from annotation.alignment.services.pairs import pairs_import_file

    pairs_import_file(
        study=study,
        data=b"pair_id\tsentence1\tsentence2\np1\tThe cat sat .\tA cat was sitting .\n",
        filename="pairs.tsv",
    )
    link = services.join_link_create(study=study, role="annotator")
    client, r = join(link)
    user = Participant.objects.get().user
    assert StudyMembership.objects.filter(study=study, user=user, role="annotator").exists()
    assert AlignmentAssignment.objects.filter(annotator=user).count() == 1
    assert client.get(f"/participate/studies/{study.pk}/")["Location"] == "/alignment/"


@pytest.mark.parametrize(
    "bad, field",
    [
        ({"ends_at": timezone.now() - timedelta(hours=1)}, "ends_at"),
        ({"completion_url": "javascript:alert(1)"}, "completion_url"),
        ({"timeout_minutes": 0}, "timeout_minutes"),
        ({"role": "researcher"}, "role"),
        ({"screen_out_code": "a b"}, "screen_out_code"),
    ],
)
def test_link_creation_refuses_bad_settings(open_study, bad, field):
    from django.core.exceptions import ValidationError

    with pytest.raises(ValidationError) as err:
        services.join_link_create(study=open_study, **{"role": "judge", **bad})
    assert field in err.value.message_dict


def test_researcher_makes_and_closes_a_link_on_the_field_study_page(open_study, researcher):
    from annotation.models import JoinLink

    web = Client()
    web.force_login(researcher)
    r = web.post(
        f"/studies/{open_study.pk}/field/links/",
        {
            "role": "judge",
            "platform": "prolific",
            "timeout_minutes": 45,
            "max_participants": 30,
            "items_per_participant": 4,
        },
        follow=True,
    )
    link = JoinLink.objects.get()
    assert (link.platform, link.timeout_minutes, link.max_participants, link.items_per_participant) == (
        "prolific",
        45,
        30,
        4,
    )
    assert f"/join/{link.token}/" in r.content.decode()
    web.post(f"/studies/{open_study.pk}/field/links/{link.pk}/close/")
    link.refresh_from_db()
    assert link.closed_at is not None
    r = web.post(
        f"/studies/{open_study.pk}/field/settings/",
        {"consent_text": "Agree?", "questions_before": "[oops"},
        follow=True,
    )
    assert "not valid JSON (line 1, column 2)" in r.content.decode()
