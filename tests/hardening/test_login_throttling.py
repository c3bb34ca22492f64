"""Password guessing is throttled at both doors: the API token endpoint and the login form
(whose per-username limit ``tests/test_security.py`` checks) — also when the guesses
spread over many usernames from one address."""

from __future__ import annotations

import pytest
from django.core.cache import cache


@pytest.fixture(autouse=True)
def fresh_cache():
    cache.clear()
    yield
    cache.clear()


def test_the_token_endpoint_refuses_after_ten_attempts_a_minute_even_the_right_password(api_client, researcher):
    for _ in range(10):
        assert api_client.post("/api/auth/token/", {"username": "rita", "password": "wrong"}).status_code == 400
    r = api_client.post("/api/auth/token/", {"username": "rita", "password": "pw"})
    assert r.status_code == 429 and "token" not in r.json()


def test_the_login_form_refuses_an_address_that_guesses_across_many_usernames(client, researcher, settings):
    settings.LOGIN_FAILURE_LIMIT = 2  # per (address, username); per address five times as many
    for i in range(10):
        r = client.post("/accounts/login/", {"username": f"someone{i}", "password": "guess"})
        assert r.status_code == 200  # the form again: wrong password
    r = client.post("/accounts/login/", {"username": "rita", "password": "pw"})
    assert r.status_code == 429 and b"Too many failed attempts" in r.content
    assert "_auth_user_id" not in client.session  # not logged in, although the password was right
