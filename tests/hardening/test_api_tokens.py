"""API tokens expire (``PARAEVAL_TOKEN_TTL``) and their owner can revoke them; passwords
that are common or all digits are refused."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.core.exceptions import ValidationError
from django.utils import timezone
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient


def get_token(username="rita", password="pw") -> dict:
    r = APIClient().post("/api/auth/token/", {"username": username, "password": password}, format="json")
    assert r.status_code == 200, r.content
    return r.json()


def token_client(key: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    return client


def test_a_new_token_says_when_it_expires(researcher, settings):
    settings.PARAEVAL_TOKEN_TTL = 3600
    body = get_token()
    expires = timezone.datetime.fromisoformat(body["expires_at"])
    assert timedelta(minutes=59) < expires - timezone.now() <= timedelta(hours=1)
    assert token_client(body["token"]).get("/api/studies/").status_code == 200


def test_an_expired_token_is_refused_with_401_and_a_message(researcher):
    key = get_token()["token"]
    Token.objects.filter(key=key).update(created=timezone.now() - timedelta(days=31))  # default TTL: 30 days
    r = token_client(key).get("/api/studies/")
    assert r.status_code == 401 and "Token expired" in r.json()["detail"]


def test_asking_again_after_expiry_gives_a_new_token_and_the_old_one_stays_dead(researcher, settings):
    old = get_token()["token"]
    assert get_token()["token"] == old  # a valid token is reused, not multiplied
    Token.objects.filter(key=old).update(created=timezone.now() - timedelta(seconds=settings.PARAEVAL_TOKEN_TTL + 1))
    new = get_token()["token"]
    assert new != old
    assert token_client(old).get("/api/studies/").status_code == 401
    assert token_client(new).get("/api/studies/").status_code == 200


def test_a_user_revokes_their_token_through_the_api(researcher):
    key = get_token()["token"]
    client = token_client(key)
    r = client.post("/api/auth/token/revoke/")
    assert r.status_code == 200 and r.json() == {"revoked": True}
    assert client.get("/api/studies/").status_code == 401
    assert not Token.objects.filter(user=researcher).exists()


def test_revoking_touches_only_ones_own_token(researcher, make_user, api_client):
    other = make_user("olga")
    other_key = get_token("olga")["token"]
    get_token()
    api_client.force_authenticate(researcher)
    assert api_client.post("/api/auth/token/revoke/").json() == {"revoked": True}
    assert Token.objects.filter(user=other, key=other_key).exists()
    assert api_client.post("/api/auth/token/revoke/").json() == {"revoked": False}  # idempotent


def test_the_account_page_shows_the_token_and_its_button_revokes_it(client, researcher):
    key = get_token()["token"]
    client.force_login(researcher)
    page = client.get("/accounts/")
    assert page.status_code == 200 and b"Revoke my API token" in page.content
    assert key.encode() not in page.content  # the page never shows the secret itself
    r = client.post("/accounts/token/revoke/", follow=True)
    assert r.status_code == 200 and b"Your API token is revoked" in r.content
    assert b"You have no API token" in r.content
    assert token_client(key).get("/api/studies/").status_code == 401


def test_the_account_page_is_for_signed_in_people_only(client, db):
    assert client.get("/accounts/").status_code == 302
    assert client.post("/accounts/token/revoke/").status_code == 302
    assert APIClient().post("/api/auth/token/revoke/").status_code in (401, 403)


@pytest.mark.parametrize("password", ["password", "12345678", "1234567890123", "qwertyuiop", "short1!"])
def test_common_numeric_and_short_passwords_are_refused(password, db):
    from django.contrib.auth.password_validation import validate_password

    with pytest.raises(ValidationError):
        validate_password(password)


def test_a_long_uncommon_password_is_accepted(db):
    from django.contrib.auth.password_validation import validate_password

    validate_password("violet-harbour-tangent-41")  # raises if refused
