"""Attack checks of the sign-in doors, for the CI attack walk (issue 23 #3 and #4).

Each check takes the base URL of a live paraeval (``http://127.0.0.1:9120``) and
keyword arguments, talks to it over HTTP only (the standard library, no Django), and
returns a short description of what held, or raises :class:`CheckFailed` saying what
fell. The walk calls them like this::

    from attack_checks_auth import CheckFailed, check_cache_down, check_lockout_not_extended

    check_lockout_not_extended(base, username="probe", password="its-password",
                               failure_limit=5, lockout_seconds=6)
    check_cache_down(base, username="probe2", password="pw2", join_path="/join/<token>/",
                     join_params={"PROLIFIC_PID": ..., "STUDY_ID": ..., "SESSION_ID": ...})

Preconditions (the walk arranges them):

* ``check_lockout_not_extended``: an account nobody else uses, and a server started
  with ``LOGIN_FAILURE_LIMIT=failure_limit`` and a short ``LOGIN_LOCKOUT_SECONDS=
  lockout_seconds`` (the check waits about that long, twice). It locks the account.
* ``check_cache_down``: a server started with ``CACHE_URL`` pointing at a Redis port
  where nothing listens (e.g. ``redis://127.0.0.1:1/0``); the broker may be down too.
  The account must not be locked; the join link open, with a seat free.

``headers`` (both checks) are sent with every request; the default is what one
TLS-terminating proxy would add (``X-Forwarded-Proto: https`` and a client address in
``X-Forwarded-For``), as ``.ci/production.sh`` declares one proxy. Cookies are kept by
hand (production cookies are ``Secure`` and the loopback connection is plain HTTP).
``tests/hardening/test_attack_checks_auth.py`` runs both against a live test server
(with ``headers={}``: no proxy is declared there).
"""

from __future__ import annotations

import http.client
import json
import re
import time
from http.cookies import SimpleCookie
from types import SimpleNamespace
from urllib.parse import urlencode, urlsplit

__all__ = ["CheckFailed", "check_cache_down", "check_lockout_not_extended"]

PROXY_HEADERS = {"X-Forwarded-Proto": "https", "X-Forwarded-For": "198.51.100.23"}


class CheckFailed(AssertionError):
    """An attack succeeded, or a door answered what it must not."""


class _Browser:
    def __init__(self, base_url: str, headers: dict | None):
        parts = urlsplit(base_url)
        self.host, self.port = parts.hostname, parts.port or 80
        self.headers = dict(PROXY_HEADERS if headers is None else headers)
        scheme = "https" if self.headers.get("X-Forwarded-Proto") == "https" else parts.scheme or "http"
        self.origin = f"{scheme}://{self.host}:{self.port}"
        self.cookies: dict[str, str] = {}

    def request(self, method: str, path: str, *, body: bytes | None = None, headers: dict | None = None):
        conn = http.client.HTTPConnection(self.host, self.port, timeout=60)
        h = {
            "Host": f"{self.host}:{self.port}",
            "Accept": "text/html,application/json;q=0.9,*/*;q=0.8",
            **self.headers,
            **(headers or {}),
        }
        if self.cookies:
            h["Cookie"] = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
        try:
            conn.request(method, path, body=body, headers=h)
            resp = conn.getresponse()
            data = resp.read()
        finally:
            conn.close()
        for raw in resp.headers.get_all("Set-Cookie") or []:
            cookie = SimpleCookie()
            cookie.load(raw)
            for name, morsel in cookie.items():
                if morsel["max-age"] == "0" or morsel.value == "":
                    self.cookies.pop(name, None)
                else:
                    self.cookies[name] = morsel.value
        return SimpleNamespace(status=resp.status, headers=resp.headers, body=data)

    def post_form(self, path: str, fields: dict | list):
        return self.request(
            "POST",
            path,
            body=urlencode(fields).encode(),
            headers={
                "Content-Type": "application/x-www-form-urlencoded",
                "Origin": self.origin,
                "Referer": self.origin + path,
            },
        )

    def post_json(self, path: str, payload: dict):
        return self.request(
            "POST",
            path,
            body=json.dumps(payload).encode(),
            headers={"Content-Type": "application/json", "Accept": "application/json"},
        )

    def login(self, username: str, password: str):
        page = self.request("GET", "/accounts/login/")
        token = _csrf(page.body)
        if page.status != 200 or token is None:
            raise CheckFailed(f"the login form answered {page.status} without a form")
        return self.post_form(
            "/accounts/login/", {"csrfmiddlewaretoken": token, "username": username, "password": password}
        )


def _csrf(body: bytes) -> str | None:
    match = re.search(rb'name="csrfmiddlewaretoken" value="([^"]+)"', body)
    return match.group(1).decode() if match else None


def _token(browser: _Browser, username: str, password: str):
    return browser.post_json("/api/auth/token/", {"username": username, "password": password})


def check_lockout_not_extended(
    base_url: str,
    *,
    username: str,
    password: str,
    failure_limit: int,
    lockout_seconds: float,
    headers: dict | None = None,
) -> str:
    """Attempts made while an account is locked do not extend the lock (issue 23 #3).

    Locks ``username`` with ``failure_limit`` wrong passwords at the token endpoint;
    halfway through the lock, tries a wrong password (login form and token endpoint)
    and the right one (token endpoint): each must be refused with 429. Once
    ``lockout_seconds`` have passed since the failure that locked it, the right
    password must sign in (login form: 302; token endpoint: a token). Before the fix
    the attempts in the middle restarted the lock and the last step got 429.
    """
    b = _Browser(base_url, headers)
    for i in range(failure_limit):
        r = _token(b, username, f"wrong-{i}")
        if r.status not in (400, 429):
            raise CheckFailed(f"wrong password #{i + 1} at the token endpoint answered {r.status}")
    locked_at = time.monotonic()
    if r.status != 429:
        raise CheckFailed(f"{failure_limit} wrong passwords did not lock {username!r} (last answer {r.status})")
    time.sleep(lockout_seconds * 0.6)
    for what, r in (
        ("a wrong password at the login form", b.login(username, "wrong-during-lockout")),
        ("a wrong password at the token endpoint", _token(b, username, "wrong-during-lockout")),
        ("the right password at the token endpoint", _token(b, username, password)),
    ):
        if r.status != 429:
            raise CheckFailed(f"during the lockout, {what} answered {r.status}, not 429")
    time.sleep(max(0.0, locked_at + lockout_seconds + 1.5 - time.monotonic()))
    r = _token(b, username, password)
    if r.status != 200 or "token" not in json.loads(r.body or b"{}"):
        raise CheckFailed(
            f"the lockout was extended: the right password {lockout_seconds:g} s after the lock "
            f"answered {r.status} at the token endpoint"
        )
    r = _Browser(base_url, headers).login(username, password)
    if r.status != 302:
        raise CheckFailed(f"after the lockout the login form answered {r.status} to the right password, not 302")
    return (
        f"lockout of {username!r} ended {lockout_seconds:g} s after the locking failure although three "
        f"attempts were made during it"
    )


def check_cache_down(
    base_url: str,
    *,
    username: str,
    password: str,
    join_path: str,
    join_params: dict | None = None,
    headers: dict | None = None,
) -> str:
    """With the cache (Redis) unreachable, no door answers 500 (issue 23 #4).

    The login form (GET, and POST with the right password: 302) and the API token
    endpoint (a token) keep working from the database; join accept answers 503 with
    ``Retry-After`` and says the service is briefly unavailable (as HTML, and as JSON
    to a client that asks for JSON).
    """
    b = _Browser(base_url, headers)
    r = b.login(username, password)
    if r.status != 302:
        raise CheckFailed(f"with the cache down the login form answered {r.status} to the right password, not 302")
    r = _token(_Browser(base_url, headers), username, password)
    if r.status != 200 or "token" not in json.loads(r.body or b"{}"):
        raise CheckFailed(f"with the cache down the token endpoint answered {r.status}, not a token")
    visitor = _Browser(base_url, headers)
    query = f"?{urlencode(join_params)}" if join_params else ""
    page = visitor.request("GET", join_path + query)
    for _ in range(3):  # the join page moves the platform ids into the session and redirects to the bare link
        if page.status not in (301, 302, 303) or not page.headers.get("Location", "").startswith(join_path):
            break
        page = visitor.request("GET", page.headers["Location"])
    if page.status >= 500:
        raise CheckFailed(f"with the cache down the join page answered {page.status}")
    fields = dict(re.findall(rb'<input type="hidden" name="([^"]+)" value="([^"]*)"', page.body))
    form = {k.decode(): v.decode() for k, v in fields.items()}
    form.update(join_params or {})
    form["action"] = "accept"
    for accept in ("text/html", "application/json"):
        r = visitor.request(
            "POST",
            join_path,
            body=urlencode(form).encode(),
            headers={
                "Content-Type": "application/x-www-form-urlencoded",
                "Origin": visitor.origin,
                "Referer": visitor.origin + join_path,
                "Accept": accept,
            },
        )
        if r.status != 503:
            raise CheckFailed(f"with the cache down join accept ({accept}) answered {r.status}, not 503")
        if not r.headers.get("Retry-After", "").isdigit():
            raise CheckFailed("the 503 of join accept has no Retry-After")
        if b"briefly unavailable" not in r.body or b"Traceback" in r.body:
            raise CheckFailed(f"the 503 of join accept ({accept}) does not say the service is briefly unavailable")
    return "with the cache down: login form and token endpoint work, join accept answers 503 with Retry-After"
