"""Password guessing is limited at every door by one guard (django-axes).

Failures are counted per username and per (username, client address) in a store
every process shares (the database; the cache when ``CACHE_URL`` is set). The
client address is the socket's unless ``PARAEVAL_NUM_PROXIES`` declares proxies, so
a forged ``X-Forwarded-For`` neither escapes the count nor frames someone else. The
hand-written throttles these tests used to pin (a per-address counter in the login
view, DRF's ``ScopedRateThrottle`` on the token endpoint keyed on the whole
``X-Forwarded-For``) are gone: the first let ~100 failures with made-up usernames
from one address lock out everyone behind it, the second never throttled a client
that sent a new header value each time.
"""

from __future__ import annotations

import time
from datetime import timedelta

import pytest
from axes.handlers.proxy import AxesProxyHandler
from django.core.cache import cache
from django.test import Client

LIMIT = 5


@pytest.fixture(autouse=True, params=["database", "cache"])
def axes_store(request, settings):
    """Every test runs with both of axes' shared stores."""
    settings.AXES_FAILURE_LIMIT = LIMIT
    settings.AXES_HANDLER = {
        "database": "axes.handlers.database.AxesDatabaseHandler",
        "cache": "axes.handlers.cache.AxesCacheHandler",
    }[request.param]
    AxesProxyHandler.get_implementation(force=True)
    cache.clear()
    yield request.param
    cache.clear()
    settings.AXES_HANDLER = "axes.handlers.database.AxesDatabaseHandler"
    AxesProxyHandler.get_implementation(force=True)


def form_login(client, username, password, **extra):
    return client.post("/accounts/login/", {"username": username, "password": password}, **extra)


def token_login(api_client, username, password, **extra):
    return api_client.post("/api/auth/token/", {"username": username, "password": password}, format="json", **extra)


def test_a_hundred_failures_with_made_up_usernames_from_one_address_never_lock_out_a_real_user(client, researcher):
    for i in range(100):
        assert form_login(client, f"someone{i}", "guess").status_code == 200  # the form again: wrong password
    r = form_login(client, "rita", "pw")
    assert r.status_code == 302 and client.session["_auth_user_id"] == str(researcher.pk)


def test_made_up_usernames_at_the_token_endpoint_never_lock_out_a_real_user(api_client, researcher):
    for i in range(100):
        assert token_login(api_client, f"someone{i}", "guess").status_code == 400
    r = token_login(api_client, "rita", "pw")
    assert r.status_code == 200 and r.json()["token"]


def test_the_login_form_locks_a_username_after_the_limit_even_for_the_right_password(client, researcher):
    for _ in range(LIMIT - 1):
        assert form_login(client, "rita", "wrong").status_code == 200
    r = form_login(client, "rita", "wrong")
    assert r.status_code == 429 and b"Too many failed attempts" in r.content
    assert r["Content-Type"].startswith("text/html") and int(r["Retry-After"]) > 0
    r = form_login(client, "rita", "pw")
    assert r.status_code == 429 and b"Too many failed attempts" in r.content
    assert "_auth_user_id" not in client.session  # not logged in, although the password was right


def test_a_locked_username_stays_locked_from_any_other_address(client, researcher):
    for i in range(LIMIT):
        form_login(client, "rita", "wrong", REMOTE_ADDR=f"192.0.2.{i + 1}")
    r = form_login(Client(), "rita", "pw", REMOTE_ADDR="198.51.100.7")
    assert r.status_code == 429


def test_a_lockout_leaves_other_accounts_alone(client, researcher, make_user):
    make_user("jude", password="pw2")
    for _ in range(LIMIT):
        form_login(client, "rita", "wrong")
    assert form_login(client, "jude", "pw2").status_code == 302


def test_the_token_endpoint_is_not_fooled_by_a_new_x_forwarded_for_each_time(api_client, researcher):
    for i in range(LIMIT - 1):
        assert token_login(api_client, "rita", "wrong", HTTP_X_FORWARDED_FOR=f"203.0.113.{i}").status_code == 400
    r = token_login(api_client, "rita", "pw", HTTP_X_FORWARDED_FOR="203.0.113.200")
    assert r.status_code == 200  # below the limit the right password still works (and resets the count)
    for i in range(LIMIT):
        token_login(api_client, "rita", "wrong", HTTP_X_FORWARDED_FOR=f"203.0.113.{i + 50}")
    r = token_login(api_client, "rita", "pw", HTTP_X_FORWARDED_FOR="203.0.113.250")
    assert r.status_code == 429 and "token" not in r.json()
    assert "Too many failed attempts" in r.json()["detail"]


def test_failures_at_the_admin_login_and_the_form_count_together(client, researcher):
    for _ in range(LIMIT - 2):
        r = client.post("/admin/login/", {"username": "rita", "password": "wrong"})
        assert r.status_code == 200
    form_login(client, "rita", "wrong")
    r = client.post("/admin/login/", {"username": "rita", "password": "wrong"})
    assert r.status_code == 429 and b"Too many failed attempts" in r.content
    assert form_login(Client(), "rita", "pw").status_code == 429
    assert token_login(Client(), "rita", "pw").status_code == 429


def test_drfs_second_login_form_is_gone(client, db):
    assert client.get("/api-auth/login/").status_code == 404


def test_the_lockout_ends_after_the_cooloff(client, researcher, settings):
    settings.AXES_COOLOFF_TIME = timedelta(seconds=1)
    for _ in range(LIMIT):
        form_login(client, "rita", "wrong")
    assert form_login(client, "rita", "pw").status_code == 429
    time.sleep(1.2)
    assert form_login(client, "rita", "pw").status_code == 302


def test_a_success_below_the_limit_resets_the_count(client, researcher):
    for _ in range(LIMIT - 1):
        form_login(client, "rita", "wrong")
    assert form_login(client, "rita", "pw").status_code == 302
    client.logout()
    for _ in range(LIMIT - 1):
        assert form_login(client, "rita", "wrong").status_code == 200
    assert form_login(client, "rita", "pw").status_code == 302


def test_a_json_client_gets_the_lockout_as_json(client, researcher):
    for _ in range(LIMIT):
        form_login(client, "rita", "wrong")
    r = form_login(client, "rita", "pw", HTTP_ACCEPT="application/json")
    assert r.status_code == 429 and r.json()["retry_after_minutes"] >= 1


def test_x_forwarded_for_is_trusted_only_behind_a_declared_proxy(rf, settings):
    from config.auth import client_ip

    request = rf.post("/accounts/login/", REMOTE_ADDR="10.0.0.2", HTTP_X_FORWARDED_FOR="6.6.6.6, 192.0.2.9")
    assert client_ip(request) == "10.0.0.2"  # no proxy declared: the header is ignored
    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, "NUM_PROXIES": 1}
    assert client_ip(request) == "192.0.2.9"  # the address our one proxy appended, not the client's claim
    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, "NUM_PROXIES": 2}
    assert client_ip(request) == "6.6.6.6"


def test_any_door_that_authenticates_the_ordinary_way_is_guarded(rf, researcher, settings):
    """A view added later that calls django.contrib.auth.authenticate() needs nothing of its own."""
    from django.contrib.auth import authenticate

    assert settings.AUTHENTICATION_BACKENDS[0].startswith("axes.backends.")
    for i in range(LIMIT):
        request = rf.post("/some/future/login/", REMOTE_ADDR=f"192.0.2.{i + 1}")
        assert authenticate(request, username="rita", password="wrong") is None
    request = rf.post("/some/future/login/", REMOTE_ADDR="192.0.2.200")
    assert authenticate(request, username="rita", password="pw") is None  # locked: the right password is refused
    assert request.axes_locked_out


def test_attempts_during_a_lockout_do_not_extend_it(client, researcher, settings):
    """Issue 23 #3: one request every 14 minutes used to keep an account locked forever.

    The cool-off runs from the failure that locked the account: every attempt made
    while it is locked (wrong password, right password, another address, the token
    endpoint) is refused and not counted, and the right password works as soon as the
    cool-off that started at the lockout is over.
    """
    settings.AXES_COOLOFF_TIME = timedelta(seconds=2)
    for _ in range(LIMIT):
        form_login(client, "rita", "wrong")
    locked_at = time.monotonic()
    time.sleep(1.2)
    assert form_login(client, "rita", "wrong").status_code == 429
    assert form_login(Client(), "rita", "pw", REMOTE_ADDR="198.51.100.7").status_code == 429
    assert token_login(Client(), "rita", "wrong").status_code == 429
    time.sleep(max(0.0, locked_at + 2.3 - time.monotonic()))
    r = form_login(client, "rita", "pw")
    assert r.status_code == 302 and client.session["_auth_user_id"] == str(researcher.pk)
