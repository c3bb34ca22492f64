"""CSRF is enforced on every unsafe form and API call made with a session.

For every route (walked from the URL configuration, as in the authorization matrix)
and every unsafe method it takes, a person allowed to use it — signed in with a
session cookie, as a browser would be — sends the request without a CSRF token: it
is refused with 403 naming CSRF, and the database does not change. The same request
with a valid token is not refused for CSRF (so the first refusal is really the CSRF
check, not a permission check). API calls authenticated by token carry no session
and need no CSRF token; that is checked too.
"""

from __future__ import annotations

import pytest
from django.db import transaction
from django.middleware.csrf import _get_new_csrf_string

from .conftest import db_fingerprint, fingerprint_diff, login_client
from .routes import UNSAFE, access_rule, all_routes, url_for

#: Who sends the request, per access rule (someone the route accepts).
SENDER = {
    "public": None,
    "authenticated": "owner",
    "researchers": "owner",
    "study researcher": "owner",
    "study judge": "judge",
    "judge's own item": "judge",
    "annotator's own item": "annotator",
}
#: Public routes that a signed-in person uses (the token endpoint checks CSRF only with a session).
SIGNED_IN_PUBLIC = {"api_token"}

CASES = [
    (route, method)
    for route in all_routes()
    if route.name and access_rule(route) in SENDER
    for method in route.methods
    if method in UNSAFE
]


def send(client, method: str, url: str, **extra):
    kwargs = {"content_type": "application/json"} if method in ("put", "patch", "delete") else {}
    return getattr(client, method)(url, **kwargs, **extra)


def test_every_unsafe_route_is_in_the_csrf_cases():
    assert len(CASES) > 40


#: Routes whose CSRF refusal is a 303 back to the same page instead of Django's 403 (config/csrf.py).
BACK_TO_THE_PAGE = {"participation:join", "participation:resume"}


@pytest.mark.parametrize(("route", "method"), CASES, ids=lambda v: getattr(v, "name", v))
def test_a_session_request_without_a_csrf_token_is_refused(route, method, world, db):
    url = url_for(route, world)
    if url is None:
        pytest.skip(f"the world has no object for {route.params}")
    rule = access_rule(route)
    role = "owner" if route.name in SIGNED_IN_PUBLIC else SENDER[rule]
    client = login_client(world.users.get(role) if role else None, enforce_csrf=True)
    before = db_fingerprint()
    response = send(client, method, url)
    if route.name in BACK_TO_THE_PAGE:
        # A participant's way in: refused by sending the browser back to the page (a GET that changes nothing),
        # so that a tab whose token went stale when another tab signed in continues (config/csrf.py).
        assert response.status_code == 303 and response["Location"] == url, f"{method.upper()} {url}"
    else:
        assert response.status_code == 403, f"{method.upper()} {url} as {role}: {response.status_code}"
        assert b"CSRF" in response.content
    assert fingerprint_diff(before, db_fingerprint()) == []

    # With a valid token the CSRF check passes (whatever the view then answers).
    secret = _get_new_csrf_string()
    client.cookies["csrftoken"] = secret
    with transaction.atomic():
        response = send(client, method, url, HTTP_X_CSRFTOKEN=secret)
        transaction.set_rollback(True)
    assert not (response.status_code == 403 and b"CSRF" in response.content), f"{method.upper()} {url}"
    assert not (route.name in BACK_TO_THE_PAGE and response.status_code == 303 and response["Location"] == url)


def test_token_authenticated_api_calls_need_no_csrf_token(world, db):
    from django.contrib.auth.models import User
    from rest_framework.authtoken.models import Token
    from rest_framework.test import APIClient

    token = Token.objects.create(user=User.objects.get(username="w-judge"))
    client = APIClient(enforce_csrf_checks=True)
    client.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
    response = client.post(f"/api/judging/studies/{world.study}/judgments/", {}, format="json")
    assert response.status_code == 400  # the body is checked: no CSRF refusal without a session
