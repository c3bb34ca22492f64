"""Bad input on the participant's side (issue 18): expired or full links, replayed or forged resume links,
forged platform ids, a second tab, a platform id already used in another study.

Each gets a clear page (a 4xx with a message, never a 500) and no participant gets two assignments.
The first cases (malformed ids, caps, end dates, closed links) are in test_join.py; these add the rest.
"""

from __future__ import annotations

import csv
import io
from datetime import timedelta

import pytest
from django.db import IntegrityError
from django.test import Client
from django.utils import timezone

from annotation.judging.models import Assignment
from annotation.judging.protocols.absolute.models import AssignmentItem
from annotation.models import JoinLink, Participant
from annotation.participation import services

from .conftest import come_back, join, mturk_params, prolific_params

pytestmark = pytest.mark.django_db


def _signed_in(client) -> int | None:
    value = client.session.get("_auth_user_id")
    return int(value) if value is not None else None


def _one_of_each(study=None):
    """One participant, one assignment, each item given once."""
    participants = Participant.objects.filter(study=study) if study else Participant.objects.all()
    assert participants.count() == 1
    p = participants.get()
    assert Assignment.objects.filter(judge=p.user).count() == 1
    items = AssignmentItem.objects.filter(assignment__judge=p.user)
    assert items.count() == items.values("candidate").distinct().count()
    return p


# --- resume links ---------------------------------------------------------------------------


def _resume_path(welcome) -> str:
    return welcome.context["resume_url"].replace("http://testserver", "")


def test_a_forged_resume_link_gets_a_clear_404_and_signs_nobody_in(judge_link):
    _, r = join(judge_link)
    real = _resume_path(r).rstrip("/").rsplit("/", 1)[1]
    flipped = real[:-1] + ("A" if real[-1] != "A" else "B")
    for token in (flipped, real[:10], real + "x" * 80, "x" * 43, "-" * 43):
        browser = Client()
        for method in (browser.get, browser.post):
            page = method(f"/participate/resume/{token}/")
            assert page.status_code == 404, token
            assert "This resume link is not valid." in page.content.decode()
        assert _signed_in(browser) is None
    _one_of_each()


def test_a_replayed_resume_link_brings_back_the_same_participant_and_assigns_nothing_new(judge_link, open_study):
    first, r = join(judge_link)
    path = _resume_path(r)
    p = _one_of_each()
    items = list(AssignmentItem.objects.filter(assignment__judge=p.user).values_list("pk", flat=True))
    browsers = [Client(), Client(), first]
    for browser in browsers + browsers:  # every browser, twice
        r = browser.post(path)
        assert r.status_code == 302 and r["Location"] == f"/participate/studies/{open_study.pk}/"
        assert _signed_in(browser) == p.user_id
    assert _one_of_each() == p
    assert list(AssignmentItem.objects.filter(assignment__judge=p.user).values_list("pk", flat=True)) == items


def test_a_resume_link_of_a_deactivated_participant_is_refused(judge_link):
    _, r = join(judge_link)
    p = Participant.objects.get()
    p.user.is_active = False
    p.user.save(update_fields=["is_active"])
    browser = Client()
    page = browser.post(_resume_path(r))
    assert page.status_code == 404 and "This resume link is not valid." in page.content.decode()
    assert _signed_in(browser) is None


# --- links that have ended or are full ------------------------------------------------------


def test_an_ended_or_full_link_refuses_accepting_too_but_lets_its_participants_back(open_study):
    ended = services.join_link_create(
        study=open_study, role="judge", platform="prolific", ends_at=timezone.now() + timedelta(hours=1)
    )
    mine = prolific_params()
    join(ended, mine)
    JoinLink.objects.filter(pk=ended.pk).update(ends_at=timezone.now() - timedelta(minutes=1))
    r = Client().post(f"/join/{ended.token}/", {**prolific_params(), "action": "accept"})
    assert r.status_code == 410 and "This study has ended" in r.content.decode()
    back, r = come_back(ended, mine)  # the one who joined before the end comes back to their work
    assert r.status_code == 302 and _signed_in(back) == Participant.objects.get().user_id

    full = services.join_link_create(study=open_study, role="judge", max_participants=1)
    join(full)
    r = Client().post(f"/join/{full.token}/", {"action": "accept"})
    assert r.status_code == 410 and "This study is full" in r.content.decode()
    assert Participant.objects.count() == 2
    assert Assignment.objects.count() == 2


# --- forged platform ids --------------------------------------------------------------------


@pytest.mark.parametrize(
    "bad",
    [
        {"workerId": "A1<script>"},
        {"workerId": ""},
        {"assignmentId": "x" * 300},
        {"hitId": "../../etc"},
        {"turkSubmitTo": "javascript:alert(1)"},
    ],
)
def test_forged_mturk_ids_get_a_clear_400_and_store_nothing(open_study, bad):
    link = services.join_link_create(study=open_study, role="judge", platform="mturk")
    params = {**mturk_params(), **bad}
    for r in (
        Client().get(f"/join/{link.token}/", params),
        Client().post(f"/join/{link.token}/", {**params, "action": "accept"}),
    ):
        assert r.status_code == 400 and "incomplete or was changed" in r.content.decode()
    assert not Participant.objects.exists() and not Assignment.objects.exists()


def test_a_prolific_link_opened_without_its_ids_gets_a_clear_400(prolific_link):
    for r in (
        Client().get(f"/join/{prolific_link.token}/"),
        Client().post(f"/join/{prolific_link.token}/", {"action": "accept"}),
    ):
        assert r.status_code == 400 and "incomplete or was changed" in r.content.decode()
    assert not Participant.objects.exists()


def test_the_same_prolific_id_in_other_letter_case_is_the_same_participant(prolific_link):
    params = prolific_params()
    join(prolific_link, params)
    shouted = {k: v.upper() for k, v in params.items()}
    browser = Client()
    r = browser.post(f"/join/{prolific_link.token}/", {**shouted, "action": "accept"})
    assert r.status_code == 302
    assert _signed_in(browser) == _one_of_each().user_id


# --- a second tab ---------------------------------------------------------------------------


def test_two_tabs_with_the_same_prolific_id_get_one_participant_and_one_assignment(prolific_link, open_study):
    params = prolific_params()
    tab1, tab2 = Client(), Client()
    assert tab1.get(f"/join/{prolific_link.token}/", params, follow=True).status_code == 200
    assert tab2.get(f"/join/{prolific_link.token}/", params, follow=True).status_code == 200  # both: consent
    assert tab1.post(f"/join/{prolific_link.token}/", {**params, "action": "accept"}).status_code == 200
    r = tab2.post(f"/join/{prolific_link.token}/", {**params, "action": "accept"})
    assert r.status_code == 302 and r["Location"] == f"/participate/studies/{open_study.pk}/"
    p = _one_of_each()
    assert _signed_in(tab1) == _signed_in(tab2) == p.user_id
    # The same tab pressing "I agree" again (back button, double click) resumes too.
    assert tab1.post(f"/join/{prolific_link.token}/", {**params, "action": "accept"}).status_code == 302
    assert _one_of_each() == p


def test_a_second_tab_of_a_plain_link_in_the_same_browser_joins_once(judge_link):
    browser = Client()
    assert browser.get(f"/join/{judge_link.token}/").status_code == 200
    assert browser.get(f"/join/{judge_link.token}/").status_code == 200
    assert browser.post(f"/join/{judge_link.token}/", {"action": "accept"}).status_code == 200
    assert browser.post(f"/join/{judge_link.token}/", {"action": "accept"}).status_code == 302
    assert _signed_in(browser) == _one_of_each().user_id


def test_two_tabs_accepting_at_the_same_moment_resume_the_one_that_won(prolific_link, monkeypatch):
    """The race the database settles: the other tab's accept committed first, ours hits the unique constraint."""
    params = prolific_params()
    ids = services.platform_ids_parse(platform="prolific", params=params)
    real_join = services.participant_join

    def lose_the_race(*, link, ids):
        real_join(link=link, ids=ids)  # the other tab
        raise IntegrityError("duplicate key value violates unique constraint")

    monkeypatch.setattr(services, "participant_join", lose_the_race)
    browser = Client()
    r = browser.post(f"/join/{prolific_link.token}/", {**params, "action": "accept"})
    assert r.status_code == 302
    p = _one_of_each()
    assert p.platform_id == ids.platform_id and _signed_in(browser) == p.user_id


# --- a platform id already used in another study ---------------------------------------------


def test_a_platform_id_from_another_study_is_a_separate_participant_and_nothing_is_mixed(
    prolific_link, open_study, researcher
):
    from annotation.judging.services.opening import study_judging_open
    from tests.factories import study_with_data

    other = study_with_data(owner=researcher, name="Second study")
    study_judging_open(study=other)
    other_link = services.join_link_create(study=other, role="judge", platform="prolific")
    params = prolific_params()
    browser, r1 = join(prolific_link, params)
    r2 = browser.post(f"/join/{other_link.token}/", {**params, "action": "accept"})  # same browser, other study
    assert r2.status_code == 200 and "resume_url" in r2.context
    first = _one_of_each(open_study)
    second = _one_of_each(other)
    assert first.user_id != second.user_id and first.pk != second.pk
    assert first.platform_id == second.platform_id == params["PROLIFIC_PID"]
    assert Assignment.objects.get(judge=first.user).study_id == open_study.pk
    assert Assignment.objects.get(judge=second.user).study_id == other.pk
    # The browser is now the second study's participant: the first study's pages say so clearly.
    assert _signed_in(browser) == second.user_id
    r = browser.get(f"/participate/studies/{open_study.pk}/")
    assert r.status_code == 404
    # Each study's link (and resume link) brings back that study's participant only.
    fresh, r = come_back(prolific_link, params)
    assert r.status_code == 302 and _signed_in(fresh) == first.user_id
    again = Client()
    assert again.post(_resume_path(r2)).status_code == 302 and _signed_in(again) == second.user_id
    # Each researcher export lists its own participant, once.
    client = Client()
    client.force_login(researcher)
    for study, participant in ((open_study, first), (other, second)):
        text = b"".join(client.get(f"/studies/{study.pk}/participants.csv").streaming_content).decode()
        rows = list(csv.DictReader(io.StringIO(text)))
        assert [(row["pseudonym"], row["platform_id"]) for row in rows] == [
            (participant.user.username, params["PROLIFIC_PID"])
        ]
    assert Participant.objects.count() == 2 and Assignment.objects.count() == 2
