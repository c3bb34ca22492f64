"""Every endpoint and page, tried by every role and by anonymous visitors.

The routes are not listed by hand: :func:`tests.hardening.routes.all_routes` walks
``get_resolver().url_patterns`` recursively, and each route is filled with real
objects of the world (``conftest.build_world``). Who may use a route follows from
its name (:func:`tests.hardening.routes.access_rule`); a route no rule covers fails
``test_every_route_has_an_access_rule``, so a new endpoint cannot slip in untested.

| rule                  | routes                                                     | allowed                      |
|-----------------------|------------------------------------------------------------|------------------------------|
| public                | login, logout, API token, schema, API docs, icon,          | everyone                     |
|                       | personal sign-in link (its secret is the credential)       |                              |
| authenticated         | home, account page, token revoke (page and API), judge     | anyone signed in (sees only  |
|                       | home, annotator home/next/guidelines, "my"                 | their own things)            |
|                       | lists (studies I manage, my assignments, metrics, models)  | their own things)            |
| researchers           | study list, create a study (page and API)                  | owner, other researcher      |
| study researcher      | every other page or API under a study (data, import,       | owner only                   |
|                       | judging design/progress/QC/exports, alignment, metrics,    |                              |
|                       | reports)                                                   |                              |
| study judge           | rate, instructions, submit, done; API next/last/submit     | judges of the study          |
| judge's own item      | revise page, API item detail/previous (item token)         | the judge who holds the item |
| annotator's own item  | grid, API assignment detail/draft/submit                   | the annotator assigned       |
| staff                 | /admin/ (every model admin)                                | nobody here (no one is staff)|

Roles: ``owner`` (researcher who owns the study), ``other_researcher`` (a researcher
with a study of their own), ``judge`` / ``other_judge`` (both judge the study; the
item token is ``judge``'s), ``annotator`` / ``other_annotator`` (both annotate it;
the assignment is ``annotator``'s), ``anonymous``.

Expectations, for every route × method × role:

* refused, anonymous: a redirect to the login page (pages), 401/403 (API), or 405;
* refused, signed in: 403 or 404 (judge pages answer 404: a study's existence is not
  revealed), or 405 for a method the route does not take;
* a refused request changes nothing in the database (row counts and latest
  ``updated_at`` of every model are compared);
* allowed GET: 2xx or a redirect; allowed unsafe methods (sent empty, inside a
  rolled-back savepoint): anything but 401/403/5xx;
* never a 5xx;
* every response carries the security headers (CSP without inline script, frame
  denial, nosniff, referrer policy), and every response to a signed-in role
  ``Cache-Control: no-store``;
* no HTML or SVG response contains the world's markup unescaped;
* the other researcher and anonymous visitors never receive the owner's data (a
  secret word in every text of the study).
"""

from __future__ import annotations

import pytest
from django.db import transaction

from .conftest import RAW_MARKERS, SECRET, db_fingerprint, fingerprint_diff, login_client
from .routes import ALLOWED, ROLES, UNSAFE, access_rule, all_routes, url_for

ROUTES = all_routes()
APP_ROUTES = [r for r in ROUTES if r.name and r.namespace != "admin"]
ADMIN_ROUTES = [r for r in ROUTES if r.namespace == "admin" and r.name]


def body_of(response) -> bytes:
    if getattr(response, "streaming", False):
        return b"".join(response.streaming_content)
    return response.content


def check_headers(response, where: str) -> list[str]:
    problems = []
    csp = response.get("Content-Security-Policy", "")
    directives = {d.strip().split(" ")[0]: d.strip() for d in csp.split(";") if d.strip()}
    if response.get("Content-Type", "").startswith("image/svg"):
        # A figure may set its own, stricter policy: nothing may run at all.
        script_ok = "default-src 'none'" in csp and "script-src" not in directives
        frame_ok = directives.get("frame-ancestors") in ("frame-ancestors 'none'", "frame-ancestors 'self'")
    else:
        script = directives.get("script-src", "")
        script_ok = "'self'" in script and "unsafe-inline" not in script and "unsafe-eval" not in script
        frame_ok = directives.get("frame-ancestors") == "frame-ancestors 'none'"
        if response.get("X-Frame-Options") != "DENY":
            problems.append(f"{where}: X-Frame-Options is {response.get('X-Frame-Options')!r}")
    if not (script_ok and frame_ok):
        problems.append(f"{where}: Content-Security-Policy is {csp!r}")
    if response.get("X-Content-Type-Options") != "nosniff":
        problems.append(f"{where}: X-Content-Type-Options missing")
    if response.get("Referrer-Policy") != "same-origin":
        problems.append(f"{where}: Referrer-Policy is {response.get('Referrer-Policy')!r}")
    return problems


def is_login_redirect(response) -> bool:
    return response.status_code == 302 and response["Location"].startswith(("/accounts/login/", "/admin/login/"))


def call(client, method: str, url: str):
    """One request; an exception raised by the view counts as a 500."""
    kwargs = {"content_type": "application/json"} if method in ("put", "patch", "delete") else {}
    try:
        return getattr(client, method)(url, **kwargs), None
    except Exception as exc:  # noqa: BLE001 - the test client re-raises view errors
        return None, f"{type(exc).__name__}: {exc}"


def test_every_route_has_an_access_rule():
    unnamed = [r.pattern for r in ROUTES if not r.name]
    uncovered = [r.name for r in ROUTES if r.name and access_rule(r) is None]
    assert uncovered == [], f"routes without an access rule in tests/hardening/routes.py: {uncovered}"
    # Unnamed patterns cannot be reversed; only the admin's catch-all may be unnamed.
    assert all(p.startswith("admin/") for p in unnamed), unnamed
    assert len(APP_ROUTES) > 100  # the walk really went into every app


def check_response(response, *, where: str, role: str, method: str, allowed: bool, rule: str) -> list[str]:
    problems = check_headers(response, where)
    if role != "anonymous" and "no-store" not in response.get("Cache-Control", ""):
        # Signed-in people's pages, API answers and exports stay out of every cache.
        problems.append(f"{where}: Cache-Control is {response.get('Cache-Control')!r}, not no-store")
    status = response.status_code
    body = body_of(response)
    if status >= 500:
        problems.append(f"{where}: {status}")
    if allowed:
        # 405: a function view that takes only POST (or only GET) is tried with both.
        other_protocol = rule == "study judge, other protocol" and status == 409
        if method == "get" and not (200 <= status < 400 or status == 405 or other_protocol):
            problems.append(f"{where}: allowed ({rule}) but got {status}")
        if method in UNSAFE and status in (401, 403):
            problems.append(f"{where}: allowed ({rule}) but got {status}")
    else:
        refused = (
            (is_login_redirect(response) or status in (401, 403, 405))
            if role == "anonymous"
            else status in (403, 404, 405)
        )
        if not refused:
            problems.append(f"{where}: should be refused ({rule}) but got {status}")
    ctype = response.get("Content-Type", "")
    if ctype.startswith(("text/html", "image/svg")):
        raw = [m for m in RAW_MARKERS if m.encode() in body]
        if raw:
            problems.append(f"{where}: unescaped markup in the {ctype} response: {raw}")
    if role in ("other_researcher", "anonymous") and SECRET.encode() in body:
        problems.append(f"{where}: the owner's data leaked ({status} {ctype})")
    return problems


@pytest.mark.parametrize("route", APP_ROUTES, ids=lambda r: r.name)
def test_route_is_refused_to_everyone_but_its_allowed_roles(route, world, db):
    url = url_for(route, world)
    if url is None:
        pytest.skip(f"the world has no object for {route.params}")
    rule = access_rule(route)
    allowed = ALLOWED[rule]
    clients = {role: login_client(world.users.get(role)) for role in ROLES}
    problems: list[str] = []
    # Refused requests first, all of them between two snapshots of the database.
    before = db_fingerprint()
    for role in [r for r in ROLES if r not in allowed]:
        for method in route.methods:
            where = f"{method.upper()} {url} as {role}"
            response, error = call(clients[role], method, url)
            problems += (
                [f"{where}: raised {error}"]
                if error
                else check_response(response, where=where, role=role, method=method, allowed=False, rule=rule)
            )
    changed = fingerprint_diff(before, db_fingerprint())
    if changed:
        problems.append(f"{url}: refused requests changed the database: {changed}")
    # Then the allowed roles; unsafe methods inside a savepoint that is rolled back.
    for role in [r for r in ROLES if r in allowed]:
        for method in route.methods:
            where = f"{method.upper()} {url} as {role}"
            with transaction.atomic():
                response, error = call(clients[role], method, url)
                transaction.set_rollback(True)
            problems += (
                [f"{where}: raised {error}"]
                if error
                else check_response(response, where=where, role=role, method=method, allowed=True, rule=rule)
            )
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("role", ["anonymous", "owner", "judge"])
def test_the_admin_is_for_staff_only(role, world, db):
    """Every model admin page redirects non-staff people to the admin login."""
    client = login_client(world.users.get(role))
    problems = []
    for route in ADMIN_ROUTES:
        if access_rule(route) != "staff":
            continue
        url = url_for(route, world)
        response, error = call(client, "get", url)
        if error or not is_login_redirect(response):
            problems.append(f"GET {url} as {role}: {error or response.status_code}")
        else:
            problems += check_headers(response, url)
    assert not problems, "\n".join(problems)


#: Path and query values a person can type into the address bar (NUL included: the
#: NUL-rejecting middleware answers 400 before any query sees it).
HOSTILE_VALUES = (
    "\x00",
    "a\x00b",
    "a" * 3000,
    "..",
    "%2e%2e",
    "é",
    "\u202e",
    " ",
    "'",
    '"><svg onload=alert(1)>',
    "-1",
    "9" * 40,
)
QUERY_NAMES = ("system", "source", "page", "table", "format", "file_format", "export_format", "next", "kind")


@pytest.mark.parametrize(
    "route",
    [r for r in APP_ROUTES if set(r.params) & {"token", "username", "fmt"} or "get" in r.methods],
    ids=lambda r: r.name,
)
def test_hostile_path_and_query_values_never_fail(route, world, db):
    from urllib.parse import quote

    url = url_for(route, world)
    if url is None:
        pytest.skip(f"the world has no object for {route.params}")
    role = {"study judge": "judge", "judge's own item": "judge", "annotator's own item": "annotator"}.get(
        access_rule(route), "owner"
    )
    client = login_client(world.users.get(role))
    urls = []
    for value in HOSTILE_VALUES:
        q = quote(value, safe="")
        if "get" in route.methods:
            urls.append(("get", url + "?" + "&".join(f"{name}={q}" for name in QUERY_NAMES)))
        for param, good in (("token", world.token), ("username", "w-judge"), ("fmt", None)):
            if param in route.params:
                if good is not None:
                    bad = url.replace(f"/{good}/", f"/{q}/", 1)
                else:
                    bad = url.rsplit(".", 1)[0] + "." + q
                urls += [(m, bad) for m in route.methods]
    problems = []
    for method, target in urls:
        with transaction.atomic():
            response, error = call(client, method, target)
            transaction.set_rollback(True)
        if error or response.status_code >= 500:
            problems.append(f"{method.upper()} {target[:150]}: {error or response.status_code}")
    assert not problems, "\n".join(problems)
