"""Attack the field-study join flow of a live production server, and check that each attack is refused.

Run by ``.ci/production.sh`` after ``.ci/production_walk.py``, against the same gunicorn
(production settings, PostgreSQL, Redis, a Celery worker), or by hand:

    .venv/bin/python .ci/attack_walk.py --base-url http://127.0.0.1:9120 [--only NAME ...]

The environment must be the server's (same ``DATABASE_URL``, ``SECRET_KEY``, broker):
the walker makes one field study of its own in the database (a researcher's study with
a Prolific join link per check), moves clocks back where an attack needs time to pass
(a seat's timeout), and reads rows to see what an attack changed. Everything else goes
over HTTP, as browsers behind the declared proxy send it (``production_walk.Browser``).

Each check is a named function in :data:`CHECKS`, registered with ``@attack("name")``;
it returns the problems it found (an empty list: the attack was refused). To add one,
write a function that takes a :class:`Field` and register it; ``--only`` runs some.

Two checks need a server of their own, started with other settings against the same
database (``.ci/production.sh`` starts both beside the main one):

- "lockout extension" (``--lockout-base-url``): a server with a small
  ``LOGIN_FAILURE_LIMIT`` and a short ``LOGIN_LOCKOUT_SECONDS`` (the walker reads both
  from its environment, which must be that server's);
- "cache down" (``--cache-down-base-url``): a server whose ``CACHE_URL`` points at a
  Redis port where nothing listens.

Without its URL such a check is not run (and naming it in ``--only`` is an error).

Exit status 0 when every attack was refused; otherwise every problem is printed and it is 1.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import re
import secrets
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from urllib.parse import urlencode

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from production_walk import Browser  # noqa: E402

CHECKS: list[tuple[str, Callable]] = []
#: The checks that need a server of their own: check name -> that server's name in ``Field.servers``.
NEEDS_SERVER: dict[str, str] = {}


def attack(name: str, *, server: str | None = None):
    """Register a check under ``name`` (run in the order registered); ``server``: the one it needs."""

    def register(fn):
        CHECKS.append((name, fn))
        if server:
            NEEDS_SERVER[name] = server
        return fn

    return register


def prolific_ids() -> dict:
    return {
        "PROLIFIC_PID": secrets.token_hex(12),
        "STUDY_ID": secrets.token_hex(12),
        "SESSION_ID": secrets.token_hex(12),
    }


def _csrf(body: bytes) -> str | None:
    match = re.search(rb'name="csrfmiddlewaretoken" value="([^"]+)"', body)
    return match.group(1).decode() if match else None


@dataclass
class Field:
    """The walker's own field study on the live server, and helpers to act on it as browsers do."""

    base_url: str
    study: object
    researcher_password: str
    n_address: int = 0
    #: The other servers' base URLs by name ("lockout", "cache down"), for the checks that need one.
    servers: dict = field(default_factory=dict)

    def link(self, **kwargs):
        from annotation.participation.services import join_link_create

        kwargs.setdefault("platform", "prolific")
        return join_link_create(study=self.study, role="judge", **kwargs)

    def browser(self) -> Browser:
        """A new browser from a new address (so the per-address join limit is not what refuses)."""
        self.n_address += 1
        return Browser(self.base_url, client_address=f"198.18.{self.n_address // 250}.{self.n_address % 250 + 1}")

    def open(self, b: Browser, link, ids: dict | None):
        """Open the join link as the platform sends people there: the ids in the address, then the bare link."""
        path = f"/join/{link.token}/"
        r = b.get(path + ("?" + urlencode(ids) if ids else ""))
        if r.status == 302:
            r = b.get(r.headers["Location"])
        return r

    def post(self, b: Browser, link, page, action: str, *, token: str | None = None, headers: dict | None = None):
        fields = {"action": action}
        csrf = token if token is not None else _csrf(page.body)
        if csrf:
            fields["csrfmiddlewaretoken"] = csrf
        return b.post_form(f"/join/{link.token}/", fields, headers=headers or {})

    def join(self, link, ids: dict | None, b: Browser | None = None):
        b = b or self.browser()
        page = self.open(b, link, ids)
        if page.status != 200 or b'id="consent-form"' not in page.body:
            return b, page
        return b, self.post(b, link, page, "accept")

    def signed_in_as(self, b: Browser) -> str | None:
        """The username the account page shows for this browser (None: not signed in)."""
        r = b.get("/accounts/")
        if r.status != 200:
            return None
        match = re.search(rb"Signed in as <strong>([^<]+)</strong>", r.body)
        return match.group(1).decode().strip() if match else "?"

    def account(self) -> tuple[str, str]:
        """A new account nobody else uses (a username and its password), for the sign-in checks."""
        from django.contrib.auth.models import User

        username, password = f"probe-{secrets.token_hex(4)}", secrets.token_urlsafe(16)
        User.objects.create_user(username=username, password=password)
        return username, password

    def participant(self, ids: dict):
        from annotation.models import Participant

        return Participant.objects.filter(study=self.study, platform_id=ids["PROLIFIC_PID"]).first()


# --- the attacks --------------------------------------------------------------------------------


@attack("takeover by a platform id")
def takeover_by_platform_id(f: Field) -> list[str]:
    """Someone who knows a participant's PROLIFIC_PID (not a secret) opens the link with it."""
    from tests.annotation.participation.conftest import rate

    problems = []
    link = f.link()
    victim_ids = prolific_ids()
    victim, r = f.join(link, victim_ids)
    victim_p = f.participant(victim_ids)
    if r.status != 200 or victim_p is None:
        return [f"the victim could not join: {r.status}"]
    rate(f.study, victim_p.user, n=1)  # the victim has answers now
    forged = {**victim_ids, "STUDY_ID": secrets.token_hex(12), "SESSION_ID": secrets.token_hex(12)}
    attacker = f.browser()
    page = f.open(attacker, link, forged)
    if page.status != 409:
        problems.append(f"GET with the victim's PID and another session: {page.status} (expected 409)")
    token = _csrf(attacker.get("/accounts/login/").body)
    for action in ("accept", "resume"):
        r = f.post(attacker, link, page, action, token=token)
        if r.status != 409:
            problems.append(f"POST {action} with the victim's PID and another session: {r.status} (expected 409)")
    if f.signed_in_as(attacker) is not None:
        problems.append("the attacker's browser is signed in")
    r = attacker.get(f"/participate/studies/{f.study.pk}/")
    if r.status != 302:
        problems.append(f"the attacker reaches the victim's study pages: {r.status}")
    # The victim's own submission (same SESSION_ID) in another browser: asked first, signed in on POST.
    back = f.browser()
    page = f.open(back, link, victim_ids)
    if page.status != 200 or b'id="resume-form"' not in page.body or f.signed_in_as(back) is not None:
        problems.append(f"the victim's own session id in a new browser: {page.status} (expected the Continue page)")
    else:
        r = f.post(back, link, page, "resume")
        if r.status != 302 or f.signed_in_as(back) != victim_p.user.username:
            problems.append(f"the victim pressing Continue: {r.status}, signed in as {f.signed_in_as(back)!r}")
    return problems


@attack("seat hoarding")
def seat_hoarding(f: Field) -> list[str]:
    """Invented PIDs take every seat of a capped link and never answer."""
    from annotation.models import Participant
    from annotation.tasks import participants_release_timed_out_task

    problems = []
    link = f.link(max_participants=3, timeout_minutes=1)
    hoarders = [prolific_ids() for _ in range(3)]
    for ids in hoarders:
        _, r = f.join(link, ids)
        if r.status != 200:
            problems.append(f"a hoarder could not join: {r.status}")
    refused = f.open(f.browser(), link, prolific_ids())
    retry = refused.headers.get("Retry-After", "")
    if (
        refused.status != 410
        or not retry.isdigit()
        or not 0 < int(retry) <= 60
        or b"try again after" not in refused.body
    ):
        problems.append(f"a full link: {refused.status}, Retry-After {retry!r} (expected 410 and when to come back)")

    def age(ids_list):  # as if the link's timeout (1 minute) had passed since they joined
        Participant.objects.filter(link=link, platform_id__in=[i["PROLIFIC_PID"] for i in ids_list]).update(
            consented_at=time_ago(minutes=3)
        )

    # 1. A join to the link that looks full frees the seat that expired: the real participant gets in.
    age(hoarders[:1])
    _, r = f.join(link, prolific_ids())
    if r.status != 200:
        problems.append(f"a real participant, after one hoarded seat expired: {r.status} (expected 200)")
    # 2. The periodic task (beat sends it; here the walker sends it) frees expired seats on its own, in the worker.
    age(hoarders[1:])
    participants_release_timed_out_task.delay()
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        if not Participant.objects.filter(
            link=link, timed_out_at__isnull=True, platform_id__in=[i["PROLIFIC_PID"] for i in hoarders]
        ).exists():
            break
        time.sleep(1)
    else:
        problems.append("the worker's release task did not expire the hoarded seats within 90 s")
    return problems


def time_ago(*, minutes: int):
    from django.utils import timezone

    return timezone.now() - timedelta(minutes=minutes)


@attack("chunked body")
def chunked_body(f: Field) -> list[str]:
    """A settings PUT sent with Transfer-Encoding: chunked (no Content-Length) must not save an empty body."""
    from annotation.models import ParticipationSettings

    problems = []
    api = f.browser()
    r = api.request(
        "POST",
        "/api/auth/token/",
        headers={"Content-Type": "application/json"},
        body=json.dumps({"username": "researcher", "password": f.researcher_password}).encode(),
    )
    if r.status != 200:
        return [f"the researcher's token: {r.status}"]
    auth = {
        "Authorization": f"Token {json.loads(r.body)['token']}",
        "Content-Type": "application/json",
        "Accept": "application/json",
    }
    path = f"/api/studies/{f.study.pk}/participation/"
    settings_body = {
        "consent_text": "We keep your ratings for research.",
        "questions_before": [{"name": "a", "type": "text", "label": "A"}],
        "questions_after": [],
    }
    r = api.request("PUT", path, body=json.dumps(settings_body).encode(), headers=auth)
    if r.status != 200:
        return [f"PUT {path} with a Content-Length: {r.status} {r.body[:200]!r}"]
    conn = http.client.HTTPConnection(api.host, api.port, timeout=60)
    conn.putrequest("PUT", path, skip_host=True)  # Host is among the headers below (twice is a 400 from gunicorn)
    for k, v in {
        **auth,
        "Host": f"{api.host}:{api.port}",
        "X-Forwarded-Proto": "https",
        "X-Forwarded-For": api.client_address,
        "Transfer-Encoding": "chunked",
    }.items():
        conn.putheader(k, v)
    conn.endheaders()
    chunk = json.dumps({"consent_text": "", "questions_before": [], "questions_after": []}).encode()
    conn.send(b"%x\r\n%s\r\n0\r\n\r\n" % (len(chunk), chunk))
    resp = conn.getresponse()
    answer = resp.read()
    conn.close()
    if resp.status != 411:
        problems.append(f"PUT {path} chunked: {resp.status} {answer[:120]!r} (expected 411 Length Required)")
    row = ParticipationSettings.objects.get(study=f.study)
    if row.consent_text != settings_body["consent_text"] or not row.questions_before:
        problems.append("the chunked PUT wiped the consent text or the questions")
    return problems


@attack("login CSRF")
def login_csrf(f: Field) -> list[str]:
    """A page on another site sends a signed-in researcher's browser to a join link (GET, and a forged POST)."""
    problems = []
    link = f.link()
    known = prolific_ids()
    f.join(link, known)
    researcher = f.browser()
    if researcher.login("researcher", f.researcher_password).status != 302:
        return ["the researcher cannot log in"]
    cross_site = {"Sec-Fetch-Site": "cross-site", "Referer": "https://attacker.example/"}
    for label, ids in (("a participant's own ids", known), ("new ids", prolific_ids())):
        r = researcher.get(f"/join/{link.token}/?{urlencode(ids)}", headers=cross_site)
        if r.status == 302:
            r = researcher.get(r.headers["Location"], headers=cross_site)
        if r.status >= 500 or f.signed_in_as(researcher) != "researcher":
            problems.append(
                f"a cross-site GET with {label}: {r.status}; the browser is now "
                f"{f.signed_in_as(researcher)!r} (expected still the researcher)"
            )
    forged = prolific_ids()
    r = researcher.request(
        "POST",
        f"/join/{link.token}/",
        body=urlencode({**forged, "action": "accept"}).encode(),
        headers={
            "Content-Type": "application/x-www-form-urlencoded",
            "Origin": "https://attacker.example",
            "Referer": "https://attacker.example/",
        },
    )
    # CSRF refuses it: the browser is sent back to the page (303 to a GET, which does nothing).
    if r.status != 303 or f.signed_in_as(researcher) != "researcher" or f.participant(forged) is not None:
        problems.append(
            f"a cross-site POST accept: {r.status} (expected 303 back to the page, nothing joined, "
            "still the researcher)"
        )
    return problems


@attack("second tab")
def second_tab(f: Field) -> list[str]:
    """The same participant (same Prolific submission) accepts in two tabs opened before either accepted."""
    problems = []
    link = f.link()
    ids = prolific_ids()
    tab1, tab2 = f.browser(), f.browser()
    page1, page2 = f.open(tab1, link, ids), f.open(tab2, link, ids)
    r1 = f.post(tab1, link, page1, "accept")
    r2 = f.post(tab2, link, page2, "accept")
    if r1.status != 200 or r2.status != 302 or "/participate/studies/" not in r2.headers.get("Location", ""):
        problems.append(f"two tabs accepting: {r1.status}, {r2.status} (expected the welcome page, then a resume)")
    p = f.participant(ids)
    if p is None or f.signed_in_as(tab2) != p.user.username:
        problems.append("the second tab is not signed in as the participant")
    # Two tabs of one browser: the first "I agree" signs in (a new CSRF secret), the second tab's form is stale.
    same = f.browser()
    ids = prolific_ids()
    page1, page2 = f.open(same, link, ids), f.open(same, link, ids)
    r1 = f.post(same, link, page1, "accept")
    r2 = f.post(same, link, page2, "accept")
    back = same.get(r2.headers.get("Location", "/")) if r2.status == 303 else r2
    if (
        r1.status != 200
        or r2.status != 303
        or back.status != 302
        or "/participate/studies/" not in back.headers.get("Location", "")
    ):
        problems.append(
            f"two tabs of one browser: {r1.status}, {r2.status} then {back.status} (expected the welcome "
            "page, then back to the link, which continues)"
        )
    return problems


@attack("lockout extension", server="lockout")
def lockout_extension(f: Field) -> list[str]:
    """Attempts during a lockout (a wrong password, and the right one) do not extend it; it ends on time."""
    from attack_checks_auth import CheckFailed, check_lockout_not_extended

    username, password = f.account()
    try:
        check_lockout_not_extended(
            f.servers["lockout"],
            username=username,
            password=password,
            failure_limit=int(os.environ["LOGIN_FAILURE_LIMIT"]),
            lockout_seconds=float(os.environ["LOGIN_LOCKOUT_SECONDS"]),
        )
    except CheckFailed as exc:
        return [str(exc)]
    return []


@attack("cache down", server="cache down")
def cache_down(f: Field) -> list[str]:
    """With Redis unreachable as a cache: login and token keep working, join accept is a 503, never a 500."""
    from attack_checks_auth import CheckFailed, check_cache_down

    username, password = f.account()
    link = f.link()
    try:
        check_cache_down(
            f.servers["cache down"],
            username=username,
            password=password,
            join_path=f"/join/{link.token}/",
            join_params=prolific_ids(),
        )
    except CheckFailed as exc:
        return [str(exc)]
    return []


# --- attention checks drawn among the items (issue 38 items 11-14) ---------------------------------
#
# For every protocol whose checks are drawn among the judge's items (side by side, ESA, ranking;
# the drivers of tests/annotation/judging/test_blinding_oracle.py say how each one's API is
# spoken), a judge of a study of the walker's own sends the same submissions to a waiting check,
# an unanswered control and an unanswered genuine item over HTTP: every difference in what comes
# back tells a check apart, and is a finding.


@dataclass
class Blind:
    """One protocol's study with checks among the items, its judge's API session and the three targets."""

    slug: str
    driver: object
    study: object
    browser: Browser
    auth: dict
    base: str
    first: dict
    targets: dict

    def call(self, method: str, path: str, body: dict | None = None):
        r = self.browser.request(
            method, self.base + path, body=json.dumps(body).encode() if body is not None else None, headers=self.auth
        )
        try:
            data = json.loads(r.body) if r.body else None
        except ValueError:
            data = None
        return r.status, data, r.body

    def entry(self, token: str) -> dict:
        status, data, raw = self.call("GET", self.driver.detail_path.format(token=token))
        if status != 200:
            raise RuntimeError(f"{self.slug}: GET of an item of the judge's: {status} {raw[:200]!r}")
        return data

    def submit(self, token: str, answer: dict, *, key: str, stamp: str | None = None):
        stamp = self.entry(token)["serve_stamp"] if stamp is None else stamp
        return self.call(
            "POST",
            self.driver.submit_path,
            {self.driver.token_field: token, "key": key, "serve_stamp": stamp, **answer},
        )

    def set_status(self, status: str) -> None:
        from annotation.models import Study

        Study.objects.filter(pk=self.study.pk).update(status=status)


def _blind_studies(f: Field, *, name: str = "shared") -> list[Blind]:
    """A study per protocol with checks among the items (made once per ``name``, shared by the
    checks that use that name; the walk through a whole order needs studies nobody answered)."""
    made = f.__dict__.setdefault("_blind", {})
    if name in made:
        return made[name]
    from django.contrib.auth.models import User

    from annotation.enums import Role
    from annotation.judging import screening
    from annotation.judging.models import Assignment, AttentionCheck
    from annotation.judging.protocols.registry import protocol_get
    from annotation.judging.services.design import design_update
    from annotation.judging.services.opening import study_judging_open
    from annotation.services.membership import study_member_add
    from tests.annotation.judging.test_blinding_oracle import DRIVERS
    from tests.factories import study_with_data

    owner = User.objects.get(username="researcher")
    out = []
    for slug, driver in sorted(DRIVERS.items()):
        study = study_with_data(
            owner=owner, n_originals=4, systems=driver.systems, name=f"attack walk {slug} {secrets.token_hex(4)}"
        )
        username, password = f"blind-{secrets.token_hex(4)}", secrets.token_urlsafe(16)
        judge = User.objects.create_user(username=username, password=password)
        study_member_add(study=study, user=judge, role=Role.JUDGE)
        design_update(
            study=study,
            changes={**driver.design, "seed": 5, "control_counts": {"identical": 1, "random": 1, "unigram": 0}},
        )
        study_judging_open(study=study)
        screening.screening_settings_update(
            study=study, changes={"attention_count": 2, "attention_policy": "warn", "attention_max_failures": 9}
        )
        b = f.browser()
        r = b.request(
            "POST",
            "/api/auth/token/",
            headers={"Content-Type": "application/json"},
            body=json.dumps({"username": username, "password": password}).encode(),
        )
        if r.status != 200:
            raise RuntimeError(f"{slug}: the judge's token: {r.status}")
        auth = {
            "Authorization": f"Token {json.loads(r.body)['token']}",
            "Content-Type": "application/json",
            "Accept": "application/json",
        }
        blind = Blind(slug, driver, study, b, auth, f"/api/judging/studies/{study.pk}/", {}, {})
        status, blind.first, raw = blind.call("GET", driver.next_path)  # plans the judge's checks
        if status != 200:
            raise RuntimeError(f"{slug}: the judge's next item: {status} {raw[:200]!r}")
        assignment = Assignment.objects.get(study=study, judge=judge)
        items = protocol_get(slug).item_model.objects.filter(assignment=assignment, done_at__isnull=True)
        blind.targets = {
            "check": AttentionCheck.objects.filter(assignment=assignment).order_by("after_done", "id").first().token,
            "control": items.filter(is_control=True).order_by("position").first().token,
            "genuine": items.filter(is_control=False).order_by("position").first().token,
        }
        out.append(blind)
    made[name] = out
    return out


def _differs(slug: str, what: str, answers: dict) -> list[str]:
    """A finding when the check's answer is not the control's and the genuine item's."""
    if answers["check"] == answers["control"] == answers["genuine"]:
        return []
    return [f"{slug}, {what}: check {answers['check']!r}, control {answers['control']!r}, item {answers['genuine']!r}"]


def _kind(answer) -> tuple:
    """Status, body keys, per-field error keys and detail with numbers blanked (offsets name text lengths)."""
    status, data, _raw = answer
    data = data if isinstance(data, dict) else {}
    return status, sorted(data), sorted(data.get("errors") or {}), re.sub(r"\d+", "N", str(data.get("detail", "")))


@attack("check refusal order")
def check_refusal_order(f: Field) -> list[str]:
    """Item 11: a malformed answer with a forged serve stamp is refused for the same reason on a check."""
    problems = []
    for blind in _blind_studies(f):
        d = blind.driver
        answers = {
            n: _kind(blind.submit(t, d.malformed, key=f"order-{n}-{secrets.token_hex(4)}", stamp="forged"))
            for n, t in blind.targets.items()
        }
        problems += _differs(blind.slug, "malformed answer, forged stamp", answers)
    return problems


@attack("check forged stamp, key, close")
def check_forgeries(f: Field) -> list[str]:
    """Item 12: a forged or foreign serve stamp, a malformed key, a closed study and the attention
    side door are refused on a check byte for byte as on an item; nothing is stored on the check."""
    problems = []
    for blind in _blind_studies(f):
        problems += _forgeries_of(blind)
    return problems


def _forgeries_of(blind: Blind) -> list[str]:
    from annotation.enums import StudyStatus
    from annotation.judging.models import AttentionCheck

    d, problems = blind.driver, []
    valid = {n: d.valid(blind.entry(t), blind.first) for n, t in blind.targets.items()}

    def other_stamp(n: str) -> str:
        return blind.entry(blind.targets["control" if n == "genuine" else "genuine"])["serve_stamp"]

    cases = {
        "forged stamp": lambda n, t: blind.submit(t, valid[n], key=f"forge-{n}-{secrets.token_hex(4)}", stamp="x"),
        "another item's stamp": lambda n, t: blind.submit(
            t, valid[n], key=f"other-{n}-{secrets.token_hex(4)}", stamp=other_stamp(n)
        ),
        "malformed key": lambda n, t: blind.submit(t, valid[n], key="bad key!!"),
        "attention side door": lambda n, t: blind.call("POST", "attention/", {"token": t, "value": 1}),
    }
    for case, send in cases.items():
        problems += _differs(blind.slug, case, {n: send(n, t)[::2] for n, t in blind.targets.items()})
    blind.set_status(StudyStatus.CLOSED)
    try:
        closed = {
            n: blind.submit(t, valid[n], key=f"closed-{n}-{secrets.token_hex(4)}") for n, t in blind.targets.items()
        }
    finally:
        blind.set_status(StudyStatus.OPEN)
    problems += _differs(blind.slug, "closed study", {n: a[::2] for n, a in closed.items()})
    if AttentionCheck.objects.filter(token=blind.targets["check"], answered_at__isnull=False).exists():
        problems.append(f"{blind.slug}: a refused submission answered the check")
    return problems


@attack("check revisions and readback")
def check_revisions(f: Field) -> list[str]:
    """Item 14: a check's answers go to revisions 1 and 2, a replay is a 200 and a reused key a
    409 as on an item, and a readback returns what was sent (kept ESA proposals stay proposed)."""
    problems = []
    for blind in _blind_studies(f):
        d = blind.driver
        entries = {n: blind.entry(t) for n, t in blind.targets.items()}
        first = {n: d.valid(entries[n], blind.first) for n in entries}
        second = {n: d.other(entries[n], blind.first) for n in entries}
        keys = {n: (f"rev1-{n}-{secrets.token_hex(4)}", f"rev2-{n}-{secrets.token_hex(4)}") for n in entries}

        def shape(answer):
            status, data, _raw = answer
            data = data if isinstance(data, dict) else {}
            return status, sorted(data), data.get("revision"), data.get("created")

        for label, answers in (
            ("first answer", {n: blind.submit(t, first[n], key=keys[n][0]) for n, t in blind.targets.items()}),
            ("resubmission", {n: blind.submit(t, second[n], key=keys[n][1]) for n, t in blind.targets.items()}),
            ("replay", {n: blind.submit(t, second[n], key=keys[n][1]) for n, t in blind.targets.items()}),
            (
                "replay of the older key",
                {n: blind.submit(t, first[n], key=keys[n][0]) for n, t in blind.targets.items()},
            ),
        ):
            problems += _differs(blind.slug, label, {n: shape(a) for n, a in answers.items()})
        reused = {n: blind.submit(t, first[n], key=keys[n][1]) for n, t in blind.targets.items()}
        problems += _differs(blind.slug, "key reused", {n: a[::2] for n, a in reused.items()})
        for n, t in blind.targets.items():
            back = blind.entry(t)
            if d.sent_back(back) != d.sent_back({**back, **second[n]}) or back.get("revision") != 2:
                problems.append(f"{blind.slug}: the {n}'s readback is not what was sent last: {d.sent_back(back)!r}")
    return problems


@attack("check previous and totals")
def check_previous_and_totals(f: Field) -> list[str]:
    """Item 14: walking the whole order, each item's Previous link is what was served just before
    (a check is not skipped) and the next answer's done/total are the item's own."""
    from annotation.judging.models import AttentionCheck

    problems = []
    for blind in _blind_studies(f, name="walk"):
        d, served = blind.driver, []
        for _ in range(200):
            status, nxt, raw = blind.call("GET", d.next_path)
            if status != 200:
                problems.append(f"{blind.slug}: next item: {status} {raw[:200]!r}")
                break
            entry = nxt[d.entry_key]
            if entry is None:
                break
            was_check = AttentionCheck.objects.filter(token=entry["token"]).exists()
            what = f"{blind.slug}, {'a check' if was_check else 'an item'} at {entry['position']}"
            if (nxt["done"], nxt["total"]) != (entry["done"], entry["total"]):
                problems.append(
                    f"{what}: next answer {nxt['done']}/{nxt['total']}, item {entry['done']}/{entry['total']}"
                )
            if served and entry["previous"] != served[-1]:
                problems.append(f"{what}: Previous is not what was served before it")
            status, _data, raw = blind.submit(entry["token"], d.valid(entry, nxt), key=f"walk-{secrets.token_hex(6)}")
            if status not in (200, 201):
                problems.append(f"{what}: a valid answer: {status} {raw[:200]!r}")
                break
            served.append(entry["token"])
    return problems


# --- running them ---------------------------------------------------------------------------------


def field_study():
    """A researcher's small study (the demo researcher owns it), opened for judging, for the walker alone."""
    from django.contrib.auth.models import User

    from annotation.judging.services.design import design_update
    from annotation.judging.services.opening import study_judging_open
    from tests.factories import study_with_data

    owner = User.objects.get(username="researcher")
    study = study_with_data(owner=owner, name=f"attack walk {secrets.token_hex(4)}")
    design_update(study=study, changes={"control_counts": {"identical": 0, "random": 0, "unigram": 0}, "seed": 3})
    study_judging_open(study=study)
    study.refresh_from_db()
    return study


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base-url", required=True)
    parser.add_argument("--only", action="append", default=[], help="run only the check of this name (repeatable)")
    parser.add_argument(
        "--lockout-base-url",
        help="a server with a small LOGIN_FAILURE_LIMIT and a short "
        'LOGIN_LOCKOUT_SECONDS (both also in this environment), for "lockout extension"',
    )
    parser.add_argument("--cache-down-base-url", help='a server whose CACHE_URL is a dead Redis port, for "cache down"')
    args = parser.parse_args()
    servers = {
        name: url for name, url in (("lockout", args.lockout_base_url), ("cache down", args.cache_down_base_url)) if url
    }
    if servers.get("lockout") and not all(os.environ.get(v) for v in ("LOGIN_FAILURE_LIMIT", "LOGIN_LOCKOUT_SECONDS")):
        parser.error("--lockout-base-url needs LOGIN_FAILURE_LIMIT and LOGIN_LOCKOUT_SECONDS (the server's) set here")

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    django.setup()
    from annotation.demo import DEMO_ACCOUNTS

    names = [name for name, _ in CHECKS]
    unknown = [n for n in args.only if n not in names]
    if unknown:
        parser.error(f"no check named {unknown}; the checks are: {', '.join(names)}")
    unserved = [n for n in args.only if NEEDS_SERVER.get(n, "") not in ("", *servers)]
    if unserved:
        parser.error(
            f"{unserved} need(s) its own server: give --{NEEDS_SERVER[unserved[0]].replace(' ', '-')}-base-url"
        )
    walk = Field(
        base_url=args.base_url, study=field_study(), researcher_password=DEMO_ACCOUNTS["researcher"][0], servers=servers
    )
    failed = 0
    for name, check in CHECKS:
        if args.only and name not in args.only:
            continue
        if NEEDS_SERVER.get(name, "") not in ("", *servers):
            print(f"attack walk: {name:<28} not run (needs --{NEEDS_SERVER[name].replace(' ', '-')}-base-url)")
            continue
        started = time.monotonic()
        try:
            problems = check(walk)
        except Exception as exc:  # noqa: BLE001 - a check that crashes is a failed check, the others still run
            problems = [f"the check crashed: {exc!r}"]
        status = "refused" if not problems else "NOT REFUSED"
        print(f"attack walk: {name:<28} {status} ({time.monotonic() - started:.1f}s)")
        for p in problems:
            print(f"    {p}")
        failed += bool(problems)
    if failed:
        print(f"attack walk: {failed} attack(s) not refused")
        return 1
    print("attack walk: OK, every attack refused")
    return 0


if __name__ == "__main__":
    sys.exit(main())
