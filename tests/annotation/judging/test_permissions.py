"""Who may do what: a judge reaches only their own items, never another judge's and
never a researcher's page or endpoint; strangers learn nothing."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User

from annotation.judging.protocols.absolute.models import Judgment
from annotation.judging.protocols.absolute.selectors import item_next_for_judge
from annotation.judging.selectors.judge import assignment_for_judge

from .conftest import api_login, api_next, api_submit, new_key, scores

pytestmark = pytest.mark.django_db

RESEARCHER_PAGES = [
    ("get", "judging/design/"),
    ("post", "judging/design/"),
    ("post", "judging/open/"),
    ("post", "judging/close/"),
    ("post", "judging/reopen/"),
    ("post", "judging/reset/"),
    ("post", "judging/assign/"),
    ("get", "judging/progress/"),
    ("get", "judging/progress.json"),
    ("get", "judging/qc/"),
    ("post", "judging/judges/ann/exclusion/"),
    ("get", "judging/export/tidy.csv"),
    ("get", "judging/export/wide.csv"),
]
RESEARCHER_API = [
    ("get", "design/"),
    ("patch", "design/update/"),
    ("post", "open/"),
    ("post", "close/"),
    ("get", "progress/"),
    ("get", "qc/"),
    ("post", "judges/ann/exclude/"),
    ("post", "judges/ann/include/"),
    ("get", "export/tidy/"),
    ("get", "export/wide/"),
]


def ann_and_bob_items(study):
    ann, bob = User.objects.get(username="ann"), User.objects.get(username="bob")
    a = item_next_for_judge(assignment=assignment_for_judge(study=study, judge=ann))
    b = item_next_for_judge(assignment=assignment_for_judge(study=study, judge=bob))
    return ann, bob, a, b


def test_a_judge_cannot_read_another_judges_item_through_the_api(api_client, opened_study):
    ann, bob, a, b = ann_and_bob_items(opened_study)
    api_login(api_client, bob)
    for path in (f"items/{a.token}/", f"items/{a.token}/previous/"):
        r = api_client.get(f"/api/judging/studies/{opened_study.pk}/{path}")
        assert r.status_code == 404 and "no such item in your assignment" in r.json()["detail"]


def test_a_judge_cannot_submit_another_judges_item(api_client, opened_study):
    ann, bob, a, b = ann_and_bob_items(opened_study)
    api_login(api_client, bob)
    r = api_submit(api_client, opened_study, {"token": a.token, "serve_stamp": a.serve_stamp})
    assert r.status_code == 404
    assert not Judgment.objects.exists()


def test_a_judge_cannot_open_another_judges_item_page_or_post_to_it(client, opened_study):
    ann, bob, a, b = ann_and_bob_items(opened_study)
    client.force_login(bob)
    assert client.get(f"/judge/studies/{opened_study.pk}/items/{a.token}/").status_code == 404
    r = client.post(
        f"/judge/studies/{opened_study.pk}/submit/",
        {"token": a.token, "serve": a.serve_stamp, "key": new_key(), **scores()},
    )
    assert r.status_code == 404
    assert not Judgment.objects.exists()


@pytest.mark.parametrize(("method", "path"), RESEARCHER_PAGES)
def test_a_judge_cannot_reach_researcher_pages(client, opened_study, method, path):
    client.force_login(User.objects.get(username="ann"))
    r = getattr(client, method)(f"/studies/{opened_study.pk}/{path}")
    assert r.status_code == 403


@pytest.mark.parametrize(("method", "path"), RESEARCHER_API)
def test_a_judge_cannot_reach_researcher_endpoints(api_client, opened_study, method, path):
    api_login(api_client, User.objects.get(username="ann"))
    r = getattr(api_client, method)(f"/api/judging/studies/{opened_study.pk}/{path}", {}, format="json")
    assert r.status_code == 403


def test_a_user_who_is_not_a_judge_of_the_study_gets_404_everywhere(api_client, client, opened_study, make_user):
    stranger = make_user("stranger")
    api_login(api_client, stranger)
    assert api_next(api_client, opened_study).status_code == 404
    assert api_client.post(f"/api/judging/studies/{opened_study.pk}/judgments/", {}, format="json").status_code == 404
    client.force_login(stranger)
    for path in ("", "instructions/", "done/"):
        assert client.get(f"/judge/studies/{opened_study.pk}/{path}").status_code == 404


def test_a_researcher_of_another_study_is_refused(api_client, opened_study, make_user):
    other = make_user("otto", researcher=True)
    api_login(api_client, other)
    assert api_client.get(f"/api/judging/studies/{opened_study.pk}/progress/").status_code == 403


def test_anonymous_users_are_sent_to_log_in_or_refused(client, api_client, opened_study):
    r = client.get(f"/judge/studies/{opened_study.pk}/")
    assert r.status_code == 302 and "/accounts/login/" in r.url
    r = client.get(f"/studies/{opened_study.pk}/judging/progress/")
    assert r.status_code == 302 and "/accounts/login/" in r.url
    assert api_next(api_client, opened_study).status_code in (401, 403)


def test_the_page_form_needs_a_csrf_token(opened_study):
    from django.test import Client

    csrf_client = Client(enforce_csrf_checks=True)
    ann, bob, a, b = ann_and_bob_items(opened_study)
    csrf_client.force_login(ann)
    r = csrf_client.post(
        f"/judge/studies/{opened_study.pk}/submit/",
        {"token": a.token, "serve": a.serve_stamp, "key": new_key(), **scores()},
    )
    assert r.status_code == 403 and not Judgment.objects.exists()
