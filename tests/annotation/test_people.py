"""People without the admin: a researcher adds judges and annotators from the study page,
the API and manage.py — existing accounts by name, new ones in bulk with a password
shown once or a personal single-use sign-in link — and the first researcher is made
with a command."""

from __future__ import annotations

import hashlib
import io
import re
from datetime import timedelta

import pytest
from django.contrib.auth.hashers import identify_hasher
from django.contrib.auth.models import User
from django.core.management import CommandError, call_command
from django.urls import reverse
from django.utils import timezone

from annotation.enums import Role
from annotation.models import SignInLink, StudyMembership
from annotation.selectors import user_is_researcher
from annotation.services.people import PeopleError, study_people_add_existing, study_people_create
from annotation.services.signin import signin_link_create

pytestmark = pytest.mark.django_db


def roles(study, username: str) -> set[str]:
    return set(StudyMembership.objects.filter(study=study, user__username=username).values_list("role", flat=True))


# --- services -------------------------------------------------------------------------------


def test_new_accounts_get_a_password_returned_once_and_stored_only_hashed(study):
    made = study_people_create(study=study, lines=["ada", "Bo@Example.org"], role=Role.JUDGE)
    assert [p.username for p in made] == ["ada", "bo@example.org"] and made[1].email == "bo@example.org"
    for p in made:
        user = User.objects.get(username=p.username)
        assert p.password and len(p.password) >= 20 and p.password not in user.password
        assert user.check_password(p.password) and identify_hasher(user.password)  # a salted hash, not the text
        assert roles(study, p.username) == {Role.JUDGE}
    assert made[0].password != made[1].password


def test_bulk_creation_is_all_or_nothing_with_an_error_for_each_bad_line(study, make_user):
    make_user("taken")
    with pytest.raises(PeopleError) as info:
        study_people_create(
            study=study, role=Role.ANNOTATOR, lines=["fine1", "has space", "Taken", "fine1", "bad@", "x" * 151, "fine2"]
        )
    issues = info.value.issues
    assert "line 2 (“has space”): a username may hold only letters, digits and @ . + - _" in issues
    assert any(i.startswith("line 3 (“Taken”): an account with this name exists") for i in issues)
    assert "line 4 (“fine1”): appears twice" in issues
    assert any(i.startswith("line 5 (“bad@”)") for i in issues)
    assert any(i.startswith("line 6 ") and "150 characters" in i for i in issues)
    assert len(issues) == 5
    assert not User.objects.filter(username__in=["fine1", "fine2"]).exists()
    with pytest.raises(PeopleError, match="empty"):
        study_people_create(study=study, lines=[], role=Role.JUDGE)
    with pytest.raises(PeopleError, match="not one of"):
        study_people_create(study=study, lines=["z"], role=Role.RESEARCHER)


def test_adding_existing_accounts_is_all_or_nothing_and_keeps_the_judge_annotator_rule(study, make_user, annotator):
    make_user("jo")
    make_user("kim")
    with pytest.raises(PeopleError) as info:
        study_people_add_existing(study=study, usernames=["jo", "ghost", "anna", "kim"], role=Role.JUDGE)
    issues = info.value.issues
    assert issues[0] == "line 2 (“ghost”): no user has this name (make a new account instead)"
    assert "line 3 (“anna”): anna is already an annotator in this study and cannot also be a judge" in issues[1]
    assert roles(study, "jo") == set() and roles(study, "kim") == set()
    added = study_people_add_existing(study=study, usernames=["jo", "kim"], role=Role.JUDGE)
    assert [u.username for u in added] == ["jo", "kim"] and roles(study, "kim") == {Role.JUDGE}


def test_a_judge_added_after_judging_opened_gets_a_list_at_once(study, make_user, judge):
    from annotation.judging.models import Assignment
    from annotation.judging.services.opening import study_judging_open

    study_judging_open(study=study)
    study_people_create(study=study, lines=["late"], role=Role.JUDGE)
    assert Assignment.objects.filter(study=study, judge__username="late").exists()


def test_a_signin_link_is_stored_hashed_works_once_and_expires(client, study):
    (person,) = study_people_create(study=study, lines=["linda"], role=Role.JUDGE, delivery="link")
    user = User.objects.get(username="linda")
    assert person.password is None and not user.has_usable_password()
    link = SignInLink.objects.get(user=user)
    assert person.signin_token not in link.token_hash
    assert link.token_hash == hashlib.sha256(person.signin_token.encode()).hexdigest()
    url = reverse("annotation:signin_link", kwargs={"token": person.signin_token})
    # Opening the link (a mail scanner, a preview) signs nobody in and does not use it up.
    page = client.get(url)
    assert page.status_code == 200 and 'id="signin-form"' in page.content.decode()
    assert page["Cache-Control"].count("no-store") == 1
    r = client.post(url)
    assert r.status_code == 302 and r.url == "/"
    assert client.get("/").wsgi_request.user.username == "linda"
    client.logout()
    again = client.post(url)
    assert again.status_code == 410 and "already used" in again.content.decode()
    assert client.get("/").status_code == 302 and not client.get("/").wsgi_request.user.is_authenticated
    # An expired link, and a made-up one.
    token = signin_link_create(user=user)
    SignInLink.objects.filter(token_hash=hashlib.sha256(token.encode()).hexdigest()).update(
        expires_at=timezone.now() - timedelta(seconds=1)
    )
    r = client.post(reverse("annotation:signin_link", kwargs={"token": token}))
    assert r.status_code == 410 and "expired" in r.content.decode()
    r = client.post(reverse("annotation:signin_link", kwargs={"token": "x" * 43}))
    assert r.status_code == 404 and "not valid" in r.content.decode()
    r = client.post(reverse("annotation:signin_link", kwargs={"token": "short"}))
    assert r.status_code == 404


# --- the study page ----------------------------------------------------------------------------


def test_the_study_page_adds_new_people_and_shows_their_passwords_once(client, study, researcher):
    client.force_login(researcher)
    url = reverse("annotation:study_people_add", kwargs={"study_id": study.pk})
    r = client.post(url, {"people-role": "judge", "people-mode": "password", "people-people": "p1\np2, p3@lab.org\n"})
    assert r.status_code == 200 and "no-store" in r["Cache-Control"]
    html = r.content.decode()
    assert "shown only once" in html
    secrets_shown = re.findall(r'<code class="secret">([^<]+)</code>', html)
    assert len(secrets_shown) == 3
    for username, secret in zip(["p1", "p2", "p3@lab.org"], secrets_shown):
        assert User.objects.get(username=username).check_password(secret)
    # The study page does not show them again.
    assert not any(
        s in client.get(reverse("annotation:study_detail", kwargs={"study_id": study.pk})).content.decode()
        for s in secrets_shown
    )


def test_the_study_page_makes_sign_in_links_and_adds_existing_accounts(client, study, researcher, make_user):
    client.force_login(researcher)
    url = reverse("annotation:study_people_add", kwargs={"study_id": study.pk})
    r = client.post(url, {"people-role": "annotator", "people-mode": "link", "people-people": "lina"})
    links = re.findall(r'<code class="secret">(http://testserver/signin/[^<]+/)</code>', r.content.decode())
    assert len(links) == 1 and roles(study, "lina") == {Role.ANNOTATOR}
    make_user("old")
    r = client.post(url, {"people-role": "judge", "people-mode": "existing", "people-people": "old"}, follow=True)
    assert "1 judge added: old." in r.content.decode() and roles(study, "old") == {Role.JUDGE}


def test_the_study_page_lists_every_bad_line_adds_nobody_and_answers_400(client, study, researcher, judge):
    client.force_login(researcher)
    url = reverse("annotation:study_people_add", kwargs={"study_id": study.pk})
    r = client.post(url, {"people-role": "annotator", "people-mode": "existing", "people-people": "jude\nnope"})
    assert r.status_code == 400
    html = r.content.decode()
    assert (
        "Nobody was added" in html and "jude is already a judge in this study and cannot also be an annotator" in html
    )
    assert "line 2 (“nope”): no user has this name" in html
    r = client.post(url, {"people-role": "boss", "people-mode": "existing", "people-people": "x"})
    assert r.status_code == 400


def test_only_the_studys_researchers_may_add_people(client, study, make_user, judge):
    outsider = make_user("outsider", researcher=True)
    url = reverse("annotation:study_people_add", kwargs={"study_id": study.pk})
    for user in (outsider, judge):
        client.force_login(user)
        assert (
            client.post(url, {"people-role": "judge", "people-mode": "password", "people-people": "z"}).status_code
            == 403
        )
    assert not User.objects.filter(username="z").exists()


# --- the API ----------------------------------------------------------------------------------


def test_the_api_creates_people_with_passwords_or_links_and_adds_existing_ones(
    api_client, study, researcher, make_user
):
    api_client.force_authenticate(researcher)
    url = reverse("annotation-api:people_create", kwargs={"study_id": study.pk})
    r = api_client.post(url, {"role": "judge", "people": ["q1", "q2@lab.org"]}, format="json")
    assert r.status_code == 201 and "no-store" in r["Cache-Control"]
    rows = r.json()
    assert [row["username"] for row in rows] == ["q1", "q2@lab.org"] and all(row["signin_url"] is None for row in rows)
    assert User.objects.get(username="q1").check_password(rows[0]["password"])
    r = api_client.post(url, {"role": "annotator", "people": ["q3"], "delivery": "link"}, format="json")
    assert r.status_code == 201 and r.json()[0]["password"] is None
    assert r.json()[0]["signin_url"].startswith("http://testserver/signin/")
    r = api_client.post(url, {"role": "judge", "people": ["q1", "ok"]}, format="json")
    assert r.status_code == 400 and r.json()["errors"][0].startswith("line 1 (“q1”): an account with this name exists")
    assert not User.objects.filter(username="ok").exists()
    assert api_client.post(url, {"role": "judge", "people": []}, format="json").status_code == 400
    assert (
        api_client.post(url, {"role": "judge", "people": "q9", "delivery": "carrier pigeon"}, format="json").status_code
        == 400
    )
    make_user("r1")
    add = reverse("annotation-api:people_add", kwargs={"study_id": study.pk})
    r = api_client.post(add, {"role": "annotator", "usernames": ["r1"]}, format="json")
    assert r.status_code == 200 and r.json() == {"role": "annotator", "added": ["r1"]}
    r = api_client.post(add, {"role": "judge", "usernames": ["r1", "q3"]}, format="json")
    assert r.status_code == 400 and len(r.json()["errors"]) == 2
    api_client.force_authenticate(make_user("nosy", researcher=True))
    assert api_client.post(add, {"role": "judge", "usernames": ["r1"]}, format="json").status_code == 403
    assert api_client.post(url, {"role": "judge", "people": ["nosy2"]}, format="json").status_code == 403


# --- manage.py ----------------------------------------------------------------------------------


def test_create_researcher_makes_the_first_researcher_and_prints_the_password_once(client):
    out = io.StringIO()
    call_command("create_researcher", "Lead@Lab.org", stdout=out)
    username, email, password = out.getvalue().splitlines()[1].split("\t")
    user = User.objects.get(username="lead@lab.org")
    assert username == email == "lead@lab.org" and user.check_password(password) and user_is_researcher(user)
    client.force_login(user)
    assert client.get(reverse("annotation:study_create")).status_code == 200
    with pytest.raises(CommandError, match="an account with this name exists"):
        call_command("create_researcher", "lead@lab.org", stdout=io.StringIO())


def test_create_researcher_with_a_link_prints_a_link_under_the_base_url():
    out = io.StringIO()
    call_command("create_researcher", "boss", "--link", "--base-url", "https://eval.example.org/", stdout=out)
    line = out.getvalue().splitlines()[1]
    assert re.fullmatch(r"boss\t\thttps://eval\.example\.org/signin/[A-Za-z0-9_\-]{40,}/", line)
    assert not User.objects.get(username="boss").has_usable_password()


def test_add_participants_adds_existing_or_new_people_all_or_nothing(study, make_user, tmp_path, judge):
    make_user("e1")
    out = io.StringIO()
    call_command("add_participants", study.name, "e1", "--role", "annotator", stdout=out)
    assert "1 annotator(s) added" in out.getvalue() and roles(study, "e1") == {Role.ANNOTATOR}
    names = tmp_path / "names.txt"
    names.write_text("n1\nn2@lab.org\n\n", encoding="utf-8")
    out = io.StringIO()
    call_command(
        "add_participants", str(study.pk), "--role", "judge", "--new", "--link", "--file", str(names), stdout=out
    )
    lines = out.getvalue().splitlines()
    assert len(lines) == 3 and lines[2].startswith("n2@lab.org\tn2@lab.org\thttp://127.0.0.1:8000/signin/")
    with pytest.raises(CommandError) as info:
        call_command("add_participants", study.name, "e1", "jude", "ghost", "--role", "judge", stdout=io.StringIO())
    text = str(info.value)
    assert "nothing was written" in text and "ghost" in text and "e1 is already an annotator" in text
    assert roles(study, "e1") == {Role.ANNOTATOR}
    with pytest.raises(CommandError, match="no study named"):
        call_command("add_participants", "No such study", "x", "--role", "judge")
    with pytest.raises(CommandError, match="pass --new too"):
        call_command("add_participants", study.name, "x", "--role", "judge", "--link")


def test_signin_link_command_prints_a_fresh_single_use_link(client, judge):
    out = io.StringIO()
    call_command("signin_link", "jude", "--base-url", "http://testserver", stdout=out)
    url = out.getvalue().strip()
    path = url.removeprefix("http://testserver")
    assert client.post(path).status_code == 302 and client.post(path).status_code == 410
    with pytest.raises(CommandError):
        call_command("signin_link", "nobody")
