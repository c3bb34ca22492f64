"""Who may see what: researchers only list participants; a participant sees only their own pages;
nothing a participant's browser receives names a system, a control or another participant."""

from __future__ import annotations

import pytest
from django.test import Client
from rest_framework.test import APIClient

from annotation.models import JoinLink, Participant, System
from annotation.participation import services

from .conftest import join, prolific_params, rate

pytestmark = pytest.mark.django_db


def _api(user) -> APIClient:
    client = APIClient()
    client.force_authenticate(user=user)
    return client


def test_researcher_makes_lists_and_closes_links_through_the_api(open_study, researcher):
    api = _api(researcher)
    r = api.post(
        f"/api/studies/{open_study.pk}/join-links/",
        {"role": "judge", "platform": "prolific", "max_participants": 50, "completion_code": "ABCD1234"},
        format="json",
    )
    assert r.status_code == 201, r.content
    body = r.json()
    link = JoinLink.objects.get()
    assert body["url"].endswith(f"/join/{link.token}/") and body["completion_code"] == "ABCD1234"
    assert body["completion_url"] == "https://app.prolific.com/submissions/complete?cc={code}"
    assert [x["id"] for x in api.get(f"/api/studies/{open_study.pk}/join-links/").json()] == [link.pk]
    r = api.post(f"/api/studies/{open_study.pk}/join-links/{link.pk}/close/")
    assert r.status_code == 200 and r.json()["closed_at"]
    bad = api.post(
        f"/api/studies/{open_study.pk}/join-links/", {"role": "judge", "completion_code": "no spaces"}, format="json"
    )
    assert bad.status_code == 400 and "completion_code" in bad.json()
    r = api.put(
        f"/api/studies/{open_study.pk}/participation/",
        {"consent_text": "OK?", "questions_before": [{"name": "a", "type": "text", "label": "A"}]},
        format="json",
    )
    assert r.status_code == 200 and r.json()["questions_before"][0]["name"] == "a"
    r = api.put(f"/api/studies/{open_study.pk}/participation/", {"questions_before": [{"name": "a"}]}, format="json")
    assert r.status_code == 400 and "questions_before" in r.json()


def test_strangers_and_participants_cannot_list_participants_or_make_links(judge_link, open_study, make_user):
    client, _ = join(judge_link)
    participant = Participant.objects.get().user
    stranger = make_user("stranger")
    for user in (stranger, participant):
        api = _api(user)
        assert api.get(f"/api/studies/{open_study.pk}/participants/").status_code == 403
        assert (
            api.post(f"/api/studies/{open_study.pk}/join-links/", {"role": "judge"}, format="json").status_code == 403
        )
        web = Client()
        web.force_login(user)
        for url in (
            f"/studies/{open_study.pk}/participants/",
            f"/studies/{open_study.pk}/participants.csv",
            f"/studies/{open_study.pk}/field/",
        ):
            assert web.get(url).status_code == 403
    assert APIClient().get(f"/api/studies/{open_study.pk}/participants/").status_code in (401, 403)
    assert client.get(f"/studies/{open_study.pk}/participants/").status_code == 403


def test_researcher_sees_participants_page_csv_and_api(judge_link, open_study, researcher):
    web = Client()
    web.force_login(researcher)
    r = web.get(f"/studies/{open_study.pk}/participants/")
    assert r.status_code == 200 and "Nobody has joined" in r.content.decode()
    join(judge_link)
    join(judge_link)
    first, second = Participant.objects.order_by("pk")
    rate(open_study, second.user, n=3)
    r = web.get(f"/studies/{open_study.pk}/participants/?sort=-items_done")
    rows = r.context["rows"]
    assert [x["pseudonym"] for x in rows] == [second.user.username, first.user.username]
    assert [x["items_done"] for x in rows] == [3, 0]
    api = _api(researcher).get(f"/api/studies/{open_study.pk}/participants/").json()
    assert {x["pseudonym"]: x["status"] for x in api} == {first.user.username: "active", second.user.username: "active"}
    r = web.get(f"/studies/{open_study.pk}/field/")
    assert r.status_code == 200 and judge_link.token in r.content.decode()


def test_a_participant_never_reaches_another_participants_pages(judge_link, open_study):
    services.participation_settings_update(
        study=open_study,
        consent_text="",
        questions_after=[],
        questions_before=[{"name": "lang", "type": "language", "label": "L"}],
    )
    a, _ = join(judge_link)
    b, _ = join(judge_link)
    pa, pb = Participant.objects.order_by("pk")
    # Each one's item tokens are theirs: another participant's token is a 404.
    from annotation.judging.protocols.absolute.models import AssignmentItem

    token_of_a = AssignmentItem.objects.filter(assignment__judge=pa.user).first().token
    assert b.get(f"/judge/studies/{open_study.pk}/items/{token_of_a}/").status_code == 404
    # Answers go to the signed-in participant only.
    b.post(f"/participate/studies/{open_study.pk}/questions/before/", {"lang": "fr"})
    pa.refresh_from_db()
    pb.refresh_from_db()
    assert pa.answers == {} and pb.answers == {"before": {"lang": "fr"}}
    # A signed-in non-participant has no participant pages.
    assert Client().get(f"/participate/studies/{open_study.pk}/").status_code == 302  # to the login page


def _forbidden_words(study) -> list[str]:
    systems = list(System.objects.filter(study=study).values_list("name", flat=True))
    return [study.name, *systems, "control", "Control"]


def test_join_consent_welcome_and_end_pages_reveal_no_system_control_or_other_participant(prolific_link, open_study):
    services.participation_settings_update(
        study=open_study, consent_text="Please agree.", questions_before=[], questions_after=[]
    )
    join(prolific_link, prolific_params())  # someone else, earlier
    other = Participant.objects.get()
    params = prolific_params()
    client = Client()
    pages = [client.get(f"/join/{prolific_link.token}/", params)]
    pages.append(client.post(f"/join/{prolific_link.token}/", {**params, "action": "accept"}))
    me = Participant.objects.exclude(pk=other.pk).get()
    pages.append(client.get(f"/join/{prolific_link.token}/", params, follow=True))
    rate(open_study, me.user)
    pages.append(client.get(f"/judge/studies/{open_study.pk}/done/"))
    pages.append(Client().post(f"/join/{prolific_link.token}/", {**prolific_params(), "action": "decline"}))
    full = services.join_link_create(study=open_study, role="judge", max_participants=1)
    join(full)
    pages.append(Client().get(f"/join/{full.token}/"))
    for page in pages:
        html = page.content.decode()
        for word in _forbidden_words(open_study):
            assert word not in html, (word, page.request["PATH_INFO"])
        assert other.user.username not in html and other.platform_id not in html
    assert "C1A2B3C4" in pages[3].content.decode()  # the end page does show the code
