"""Redis is down: the sign-in doors keep working from the database, join answers a clear 503.

Issue 23 #4: with the cache unreachable the login form, the API token endpoint and
join accept answered 500. Django's cache is pointed at a loopback port where nothing
listens (a real ``RedisCache``, so the error is the one production sees). Per door:

* login form, admin login, API token: they work (axes counts failures in the
  database); the lockout still holds;
* join accept: its join-rate limit counts in the cache, so it fails closed with a 503
  page (HTML) or JSON, ``Retry-After``, and nothing stored;
* a participant already signed in keeps judging (sessions are in the database).
"""

from __future__ import annotations

import socket

import pytest
from django.test import Client

from annotation.models import Participant
from tests.annotation.participation.conftest import prolific_params


def dead_redis_url() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"redis://127.0.0.1:{port}/0"


@pytest.fixture
def redis_down(settings):
    settings.CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": dead_redis_url(),
            "OPTIONS": {"socket_connect_timeout": 0.5, "socket_timeout": 0.5},
        }
    }
    from django.core.cache import cache
    from redis.exceptions import ConnectionError as RedisConnectionError

    with pytest.raises(RedisConnectionError):
        cache.get("anything")  # the outage is real
    yield


@pytest.fixture
def link(study, researcher):
    from annotation.judging.services.design import design_update
    from annotation.judging.services.opening import study_judging_open
    from annotation.participation import services

    design_update(study=study, changes={"control_counts": {"identical": 0, "random": 0, "unigram": 0}})
    study_judging_open(study=study)
    return services.join_link_create(study=study, role="judge", platform="prolific", created_by=researcher)


def test_the_login_form_and_the_token_endpoint_work_while_redis_is_down(redis_down, researcher, api_client):
    client = Client()
    assert client.get("/accounts/login/").status_code == 200
    r = client.post("/accounts/login/", {"username": "rita", "password": "pw"})
    assert r.status_code == 302 and client.session["_auth_user_id"] == str(researcher.pk)
    r = api_client.post("/api/auth/token/", {"username": "rita", "password": "pw"}, format="json")
    assert r.status_code == 200 and r.json()["token"]
    assert Client().post("/admin/login/", {"username": "rita", "password": "wrong"}).status_code == 200


def test_the_lockout_still_holds_while_redis_is_down(redis_down, researcher, settings):
    settings.AXES_FAILURE_LIMIT = 3
    for _ in range(3):
        Client().post("/accounts/login/", {"username": "rita", "password": "wrong"})
    assert Client().post("/accounts/login/", {"username": "rita", "password": "pw"}).status_code == 429


def test_join_accept_answers_a_clear_503_with_retry_after_and_stores_nothing(redis_down, link):
    params = prolific_params()
    client = Client(raise_request_exception=False)
    # The consent page needs no cache (the ids move into the session, then to the bare link).
    assert client.get(f"/join/{link.token}/", params, follow=True).status_code == 200
    r = client.post(f"/join/{link.token}/", {**params, "action": "accept"})
    assert r.status_code == 503 and int(r["Retry-After"]) > 0
    assert r["Content-Type"].startswith("text/html")
    assert b"briefly unavailable" in r.content and b"Traceback" not in r.content
    assert "no-store" in r["Cache-Control"]
    assert not Participant.objects.filter(study=link.study).exists()
    r = client.post(f"/join/{link.token}/", {**params, "action": "accept"}, HTTP_ACCEPT="application/json")
    assert r.status_code == 503 and r.json()["retry_after_seconds"] > 0 and "briefly unavailable" in r.json()["detail"]


def test_a_participant_who_joined_before_the_outage_keeps_judging(link, settings, study):
    client = Client()
    params = prolific_params()
    client.get(f"/join/{link.token}/", params)
    assert client.post(f"/join/{link.token}/", {**params, "action": "accept"}).status_code == 200
    settings.CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": dead_redis_url(),
            "OPTIONS": {"socket_connect_timeout": 0.5},
        }
    }
    assert client.get(f"/participate/studies/{study.pk}/", follow=True).status_code == 200
