"""Field studies that hold against their own participants (issue 23): no takeover by a platform id, no sign-in
from a cross-site GET, seats that strangers cannot hoard, a second tab that resumes, limits that a rotating
X-Forwarded-For does not pass, no chunked body read as empty, no platform id in a log line.
"""

from __future__ import annotations

import logging
import re
import runpy
from datetime import timedelta
from pathlib import Path
from types import SimpleNamespace

import pytest
from django.conf import settings as django_settings
from django.core.cache import cache
from django.test import Client
from django.utils import timezone
from rest_framework.test import APIClient

from annotation.judging.protocols.absolute.models import Judgment
from annotation.models import Participant, ParticipationSettings
from annotation.participation import services

from .conftest import come_back, join, mturk_params, prolific_params, rate

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _fresh_limits():
    cache.clear()
    yield
    cache.clear()


def _signed_in(client) -> int | None:
    value = client.session.get("_auth_user_id")
    return int(value) if value is not None else None


def _age(participants, minutes: int) -> None:
    """Move the joins of ``participants`` ``minutes`` into the past (as if that much time had gone by)."""
    Participant.objects.filter(pk__in=[p.pk for p in participants]).update(
        consented_at=timezone.now() - timedelta(minutes=minutes)
    )


# --- 1. takeover by a platform id -------------------------------------------------------------


def test_a_prolific_id_alone_never_signs_anyone_in_to_a_participant_with_answers(prolific_link, open_study):
    victim = prolific_params()
    join(prolific_link, victim)
    p = Participant.objects.get()
    rate(open_study, p.user, n=1)
    attacker = Client()
    forged = {**victim, "STUDY_ID": prolific_params()["STUDY_ID"], "SESSION_ID": prolific_params()["SESSION_ID"]}
    page = attacker.get(f"/join/{prolific_link.token}/", forged, follow=True)
    assert page.status_code == 409 and "another session" in page.content.decode()
    for action in ("accept", "resume"):
        r = attacker.post(f"/join/{prolific_link.token}/", {**forged, "action": action})
        assert r.status_code == 409
    assert _signed_in(attacker) is None
    assert attacker.get(f"/participate/studies/{open_study.pk}/").status_code == 302  # to the login page
    # The right submission (the same SESSION_ID) still brings the participant back, after pressing Continue.
    back, r = come_back(prolific_link, victim)
    assert r.status_code == 302 and _signed_in(back) == p.user_id
    assert Participant.objects.count() == 1 and Judgment.objects.filter(judge=p.user).count() == 1


def test_an_mturk_worker_id_with_another_assignment_does_not_resume(open_study):
    link = services.join_link_create(study=open_study, role="judge", platform="mturk")
    mine = mturk_params()
    join(link, mine)
    other_assignment = {**mturk_params(worker=mine["workerId"]), "hitId": mine["hitId"]}
    r = Client().get(f"/join/{link.token}/", other_assignment, follow=True)
    assert r.status_code == 409
    _, r = come_back(link, mine)  # the worker's own assignment
    assert r.status_code == 302


def test_the_signed_resume_cookie_brings_the_same_browser_back_after_its_session_ended(judge_link):
    browser, _ = join(judge_link)
    first = Participant.objects.get()
    del browser.cookies[django_settings.SESSION_COOKIE_NAME]  # the session is gone (expired, or cleared)
    _, r = come_back(judge_link, client=browser)
    assert r.status_code == 302 and _signed_in(browser) == first.user_id
    assert Participant.objects.count() == 1


def test_a_forged_resume_cookie_is_ignored(judge_link, open_study):
    join(judge_link)
    stranger = Client()
    stranger.cookies[f"paraeval_participant_{open_study.pk}"] = str(Participant.objects.get().pk)  # unsigned
    r = stranger.get(f"/join/{judge_link.token}/")
    assert r.status_code == 200 and b"consent-form" in r.content  # a newcomer, not the participant
    assert _signed_in(stranger) is None


# --- 7. login CSRF and the second tab ---------------------------------------------------------


def test_a_cross_site_get_to_a_join_link_never_signs_a_signed_in_researcher_out(prolific_link, researcher):
    params = prolific_params()
    join(prolific_link, params)
    browser = Client()
    browser.force_login(researcher)
    # An attacker's page sends the researcher's browser to the participant's join link (a top-level GET).
    r = browser.get(f"/join/{prolific_link.token}/", params, follow=True, HTTP_SEC_FETCH_SITE="cross-site")
    assert r.status_code == 200 and b"resume-form" in r.content
    assert _signed_in(browser) == researcher.pk
    # A new id: the consent page says what agreeing would do, and a GET still changes nothing.
    r = browser.get(f"/join/{prolific_link.token}/", prolific_params(), follow=True)
    assert b"consent-signed-in" in r.content and _signed_in(browser) == researcher.pk
    assert Participant.objects.count() == 1


def test_a_cross_site_post_to_a_join_link_is_refused_by_csrf(prolific_link, researcher):
    browser = Client(enforce_csrf_checks=True)
    browser.force_login(researcher)
    r = browser.post(f"/join/{prolific_link.token}/", {**prolific_params(), "action": "accept"})
    # Sent back to the page (a GET, which does nothing), not joined, not signed out.
    assert r.status_code == 303 and r["Location"] == f"/join/{prolific_link.token}/"
    assert _signed_in(browser) == researcher.pk and not Participant.objects.exists()
    # Any other page keeps Django's 403.
    assert browser.post("/accounts/token/revoke/").status_code == 403


def test_a_second_tab_of_the_same_browser_with_a_stale_token_continues_instead_of_403(prolific_link, open_study):
    """Signing in (the first tab's "I agree") gives the browser a new CSRF secret: the second tab's form is stale."""
    params = prolific_params()
    browser = Client(enforce_csrf_checks=True)
    tokens = []
    for _tab in range(2):
        page = browser.get(f"/join/{prolific_link.token}/", params, follow=True)
        tokens.append(re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.content.decode()).group(1))
    assert (
        browser.post(
            f"/join/{prolific_link.token}/", {"action": "accept", "csrfmiddlewaretoken": tokens[0]}
        ).status_code
        == 200
    )
    r = browser.post(f"/join/{prolific_link.token}/", {"action": "accept", "csrfmiddlewaretoken": tokens[1]})
    assert r.status_code == 303 and r["Location"] == f"/join/{prolific_link.token}/"
    r = browser.get(r["Location"])
    assert r.status_code == 302 and r["Location"] == f"/participate/studies/{open_study.pk}/"
    assert _signed_in(browser) == Participant.objects.get().user_id


def test_a_second_tab_accepting_while_the_first_one_joins_resumes_instead_of_409(
    prolific_link, open_study, monkeypatch
):
    params = prolific_params()
    tab1, tab2 = Client(), Client()
    for tab in (tab1, tab2):
        assert tab.get(f"/join/{prolific_link.token}/", params, follow=True).status_code == 200
    assert tab1.post(f"/join/{prolific_link.token}/", {**params, "action": "accept"}).status_code == 200
    # Tab 2's request read "nobody with this id yet" just before tab 1 committed: it reaches the join itself.
    real = services.participant_for_platform_id
    calls = []

    def not_yet(**kwargs):
        calls.append(kwargs)
        return None if len(calls) == 1 else real(**kwargs)

    monkeypatch.setattr(services, "participant_for_platform_id", not_yet)
    r = tab2.post(f"/join/{prolific_link.token}/", {**params, "action": "accept"})
    assert r.status_code == 302 and r["Location"] == f"/participate/studies/{open_study.pk}/"
    assert _signed_in(tab2) == Participant.objects.get().user_id


# --- 2. seats strangers cannot hoard ------------------------------------------------------------


def _hoard(link, n: int) -> list[Participant]:
    for i in range(n):
        join(link, prolific_params(), client=Client(REMOTE_ADDR=f"198.51.100.{i + 1}"))
    return list(Participant.objects.filter(link=link))


def test_a_link_filled_by_strangers_who_never_answer_opens_again_after_its_timeout(open_study):
    link = services.join_link_create(
        study=open_study, role="judge", platform="prolific", max_participants=2, timeout_minutes=1
    )
    hoarders = _hoard(link, 2)
    r = Client().get(f"/join/{link.token}/", prolific_params(), follow=True)
    assert r.status_code == 410
    _age(hoarders, 2)  # the link's timeout has passed; nobody ran release_timed_out
    real = prolific_params()
    _, r = join(link, real)
    assert r.status_code == 200 and "resume_url" in r.context
    assert Participant.objects.get(platform_id=real["PROLIFIC_PID"]).timed_out_at is None
    assert all(p.timed_out_at for p in Participant.objects.filter(pk__in=[h.pk for h in hoarders]))


def test_beat_expires_unanswered_seats_on_its_own(open_study, judge_link):
    from annotation.tasks import participants_release_timed_out_task

    schedule = django_settings.CELERY_BEAT_SCHEDULE
    entry = next(e for e in schedule.values() if e["task"] == participants_release_timed_out_task.name)
    assert entry["schedule"] == django_settings.PARAEVAL_SEAT_RELEASE_INTERVAL_SECONDS
    annotator_link = services.join_link_create(study=open_study, role="annotator", timeout_minutes=5)
    join(judge_link)
    join(annotator_link)
    _age(Participant.objects.all(), judge_link.timeout_minutes + 6)
    assert participants_release_timed_out_task() == 2
    assert not Participant.objects.filter(timed_out_at__isnull=True).exists()


def test_a_really_full_link_says_when_to_try_again(open_study):
    link = services.join_link_create(study=open_study, role="judge", max_participants=1, timeout_minutes=30)
    join(link)
    r = Client().get(f"/join/{link.token}/")
    assert r.status_code == 410 and "try again after" in r.content.decode()
    assert 29 * 60 <= int(r["Retry-After"]) <= 30 * 60
    # Every seat completed: nothing will free up, so no time is promised.
    services.participant_complete(participant=Participant.objects.get())
    r = Client().get(f"/join/{link.token}/")
    assert r.status_code == 410 and "Retry-After" not in r and "every place has been taken" in r.content.decode()


def test_joins_through_one_link_are_limited_per_minute_from_all_addresses(judge_link, settings):
    settings.PARAEVAL_JOIN_PER_LINK_PER_MINUTE = 2
    for i in range(2):
        assert join(judge_link, client=Client(REMOTE_ADDR=f"198.51.100.{i + 1}"))[1].status_code == 200
    r = join(judge_link, client=Client(REMOTE_ADDR="198.51.100.9"))[1]
    assert r.status_code == 429 and 0 < int(r["Retry-After"]) <= 60
    assert Participant.objects.count() == 2


# --- 5. the client's address -----------------------------------------------------------------------


def test_a_rotating_x_forwarded_for_sent_straight_to_gunicorn_does_not_pass_the_address_limit(judge_link, settings):
    settings.PARAEVAL_NUM_PROXIES = 1
    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, "NUM_PROXIES": 1}
    settings.PARAEVAL_JOIN_PER_ADDRESS_PER_HOUR = 2
    statuses = [
        join(judge_link, client=Client(REMOTE_ADDR="203.0.113.5", HTTP_X_FORWARDED_FOR=f"192.0.2.{i}"))[1].status_code
        for i in range(4)
    ]
    assert statuses == [200, 200, 429, 429]
    # Through the declared proxy (a trusted address), the header does name each client.
    via_proxy = [
        join(judge_link, client=Client(REMOTE_ADDR="127.0.0.1", HTTP_X_FORWARDED_FOR=f"192.0.2.{i}"))[1].status_code
        for i in range(10, 13)
    ]
    assert via_proxy == [200, 200, 200]


def test_a_forwarded_header_from_an_address_that_is_not_a_trusted_proxy_is_logged_once(settings, caplog):
    settings.PARAEVAL_NUM_PROXIES = 1
    with caplog.at_level(logging.WARNING, logger="paraeval.proxy"):
        browser = Client(REMOTE_ADDR="203.0.113.7", HTTP_X_FORWARDED_FOR="192.0.2.1")
        browser.get("/accounts/login/")
        browser.get("/accounts/login/")
    lines = [r.getMessage() for r in caplog.records if r.name == "paraeval.proxy"]
    assert len(lines) == 1 and "203.0.113.7" in lines[0] and "PARAEVAL_TRUSTED_PROXIES" in lines[0]


def test_check_deploy_warns_when_a_proxy_is_likely_but_none_is_declared(settings, tmp_path):
    from config.checks import PROXY_SEEN_MARKER, proxy_declared

    settings.VAR_DIR = tmp_path
    settings.PARAEVAL_NUM_PROXIES = 0
    settings.SECURE_PROXY_SSL_HEADER = None
    assert proxy_declared(None) == []
    # A request that came through a proxy nobody declared leaves a trace that the check reports.
    Client().get("/accounts/login/", HTTP_X_FORWARDED_FOR="192.0.2.1")
    assert (tmp_path / PROXY_SEEN_MARKER).is_file()
    warnings = proxy_declared(None)
    assert [w.id for w in warnings] == ["paraeval.W002"] and "X-Forwarded-For" in warnings[0].msg
    settings.PARAEVAL_NUM_PROXIES = 1
    assert proxy_declared(None) == []


def test_check_deploy_in_production_mode_warns_behind_a_proxy_with_none_declared(tmp_path):
    from tests.test_settings import manage, production_env

    proc = manage(production_env(tmp_path, BEHIND_PROXY="on", PARAEVAL_NUM_PROXIES="0"), "check", "--deploy")
    assert "paraeval.W002" in proc.stderr and "PARAEVAL_NUM_PROXIES" in proc.stderr
    proc = manage(production_env(tmp_path, BEHIND_PROXY="on", PARAEVAL_NUM_PROXIES="1"), "check", "--deploy")
    assert "paraeval.W002" not in proc.stderr


# --- 7. a chunked body, and platform ids in logs ----------------------------------------------


def _settings_api(open_study, researcher):
    services.participation_settings_update(
        study=open_study,
        consent_text="We keep your ratings.",
        questions_before=[{"name": "a", "type": "text", "label": "A"}],
        questions_after=[],
    )
    api = APIClient()
    api.force_authenticate(user=researcher)
    return api


def test_a_chunked_body_to_the_settings_api_is_refused_and_wipes_nothing(open_study, researcher):
    api = _settings_api(open_study, researcher)
    r = api.put(
        f"/api/studies/{open_study.pk}/participation/",
        {"consent_text": "new"},
        format="json",
        CONTENT_LENGTH="",
        HTTP_TRANSFER_ENCODING="chunked",
    )
    assert r.status_code == 411
    row = ParticipationSettings.objects.get(study=open_study)
    assert row.consent_text == "We keep your ratings." and row.questions_before[0]["name"] == "a"


def test_an_empty_body_never_clears_the_consent_text(open_study, researcher):
    api = _settings_api(open_study, researcher)
    r = api.put(f"/api/studies/{open_study.pk}/participation/", b"", content_type="application/json")
    assert r.status_code == 400 and "empty" in str(r.json())
    assert ParticipationSettings.objects.get(study=open_study).consent_text == "We keep your ratings."


def test_the_join_link_moves_platform_ids_out_of_the_address(prolific_link):
    params = prolific_params()
    browser = Client()
    r = browser.get(f"/join/{prolific_link.token}/", params)
    assert r.status_code == 302 and r["Location"] == f"/join/{prolific_link.token}/"
    page = browser.get(r["Location"])
    assert page.status_code == 200 and b"consent-form" in page.content
    assert browser.session.get_expiry_age() <= 6 * 3600  # kept for hours, not the session's two weeks
    # Declining forgets them (nothing about the person is kept, not even in the session).
    browser.post(f"/join/{prolific_link.token}/", {"action": "decline"})
    assert params["PROLIFIC_PID"] not in str(dict(browser.session))


def test_after_joining_the_participants_session_lasts_as_long_as_any_other(prolific_link):
    browser, r = join(prolific_link, prolific_params())
    assert r.status_code == 200 and browser.session.get_expiry_age() == django_settings.SESSION_COOKIE_AGE


def test_gunicorn_access_log_lines_never_hold_platform_ids():
    from gunicorn.config import Config

    from config.access_log import RedactingLogger

    conf = runpy.run_path(str(Path(django_settings.BASE_DIR) / "config" / "gunicorn.py"))
    assert conf["logger_class"] == "config.access_log.RedactingLogger"
    params = prolific_params()
    query = "&".join(f"{k}={v}" for k, v in params.items())
    environ = {
        "REQUEST_METHOD": "GET",
        "RAW_URI": f"/join/abc/?{query}",
        "SERVER_PROTOCOL": "HTTP/1.1",
        "PATH_INFO": "/join/abc/",
        "QUERY_STRING": query,
        "REMOTE_ADDR": "192.0.2.1",
        "HTTP_REFERER": f"https://example.org/join/abc/?{query}",
        "HTTP_USER_AGENT": "test",
    }
    atoms = RedactingLogger(Config()).atoms(
        SimpleNamespace(status="302 Found", sent=0, headers=[]),
        [("REFERER", environ["HTTP_REFERER"])],
        environ,
        timedelta(seconds=0.01),
    )
    line = Config().access_log_format % atoms
    assert "/join/abc/?PROLIFIC_PID=REDACTED" in line
    for value in params.values():
        assert value not in line


def test_the_development_server_log_never_holds_platform_ids(caplog):
    from config.logging_filters import RedactPlatformIds

    pid = prolific_params()["PROLIFIC_PID"]
    record = logging.LogRecord(
        "django.server",
        logging.INFO,
        __file__,
        1,
        '"%s" %s %s',
        (f"GET /join/abc/?PROLIFIC_PID={pid}&x=1 HTTP/1.1", "302", "0"),
        None,
    )
    assert RedactPlatformIds().filter(record)
    assert pid not in record.getMessage() and "x=1" in record.getMessage()
