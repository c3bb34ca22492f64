"""Request every page of a live production server as every role, and check the answers.

Run by ``.ci/production.sh`` against gunicorn started with production settings
(it can also be run by hand against any paraeval the same environment points at):

    .venv/bin/python .ci/production_walk.py --base-url http://127.0.0.1:9120

The environment must be the server's (same ``DATABASE_URL``, ``SECRET_KEY``...):
the walker opens the database only to find real objects of the demo study to put in
the URLs, and to create one throw-away account for the lockout probe. Every request
goes over HTTP to the server, as a browser behind the declared proxy would send it
(``X-Forwarded-Proto: https``, ``X-Forwarded-For``); cookies are kept by hand
because production cookies are ``Secure`` and the loopback connection is plain HTTP.

URLs are not listed by hand: the URL configuration is walked with
``tests/hardening/routes.py`` (the authorization matrix's walker), so a new page is
requested as soon as it exists. Each role — anonymous, judge, annotator, researcher —
GETs every route (refused ones too). Checks:

* no 5xx anywhere;
* security headers on every answer: CSP, X-Frame-Options (not on SVG figures, which
  carry their own CSP), X-Content-Type-Options, Referrer-Policy; HSTS exactly when
  ``SECURE_HSTS_SECONDS`` is above 0;
* ``Cache-Control: no-store`` on every answer to a signed-in role (pages, API, exports);
* static files (hashed by collectstatic) served with a long ``max-age``;
* password guessing: made-up usernames from one address do not lock out a real
  user; a username is locked after the failure limit even with the right password
  and from another address, although the failures went to different gunicorn
  workers (the counters are shared); the token endpoint issues expiring tokens.

Exit status 0 when everything holds; otherwise every problem is printed and it is 1.
"""

from __future__ import annotations

import argparse
import collections
import http.client
import json
import os
import re
import secrets
import sys
import time
from http.cookies import SimpleCookie
from pathlib import Path
from types import SimpleNamespace
from urllib.parse import urlencode, urlsplit

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

DEMO_PASSWORDS = None  # filled from annotation.demo after django.setup()
ROLES = {"anonymous": None, "judge": "judge1", "annotator": "annotator", "researcher": "researcher"}


class Browser:
    """A tiny HTTP client: one connection per request, cookies kept by hand."""

    def __init__(self, base_url: str, *, client_address: str):
        parts = urlsplit(base_url)
        self.host, self.port = parts.hostname, parts.port or 80
        self.origin = f"https://{self.host}:{self.port}"
        self.client_address = client_address
        self.cookies: dict[str, str] = {}

    def request(self, method: str, path: str, *, body: bytes | None = None, headers: dict | None = None):
        conn = http.client.HTTPConnection(self.host, self.port, timeout=120)
        h = {
            "Host": f"{self.host}:{self.port}",
            "X-Forwarded-Proto": "https",
            "X-Forwarded-For": self.client_address,
            "Accept": "text/html,application/json;q=0.9,*/*;q=0.8",
        }
        if self.cookies:
            h["Cookie"] = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
        h.update(headers or {})
        started = time.monotonic()
        conn.request(method, path, body=body, headers=h)
        resp = conn.getresponse()
        data = resp.read()
        conn.close()
        for raw in resp.headers.get_all("Set-Cookie") or []:
            cookie = SimpleCookie()
            cookie.load(raw)
            for name, morsel in cookie.items():
                if morsel["max-age"] == "0" or morsel.value == "":
                    self.cookies.pop(name, None)
                else:
                    self.cookies[name] = morsel.value
        return SimpleNamespace(status=resp.status, headers=resp.headers, body=data, seconds=time.monotonic() - started)

    def get(self, path: str, **kw):
        return self.request("GET", path, **kw)

    def post_form(self, path: str, fields: dict, **kw):
        headers = {
            "Content-Type": "application/x-www-form-urlencoded",
            "Origin": self.origin,
            "Referer": self.origin + path,
            **kw.pop("headers", {}),
        }
        return self.request("POST", path, body=urlencode(fields).encode(), headers=headers, **kw)

    def login(self, username: str, password: str):
        page = self.get("/accounts/login/")
        match = re.search(rb'name="csrfmiddlewaretoken" value="([^"]+)"', page.body)
        if page.status != 200 or not match:
            return page
        return self.post_form(
            "/accounts/login/",
            {"csrfmiddlewaretoken": match.group(1).decode(), "username": username, "password": password},
        )


def demo_world():
    """Real objects of the demo study for every URL parameter the routes take."""
    from annotation.alignment.models import AlignerRun, AlignmentAssignment, AlignmentPair, AlignmentSystem, ScoringRun
    from annotation.demo import DEMO_STUDY_NAME
    from annotation.judging.models import OpenJob
    from annotation.judging.protocols.absolute.models import AssignmentItem
    from annotation.models import ImportJob, JoinLink, Study
    from metrics.models import MetricRun, PemModel
    from metrics.reports.models import Report, ReportPlot

    study = Study.objects.get(name=DEMO_STUDY_NAME)

    def pk(qs):
        obj = qs.order_by("pk").first()
        return obj.pk if obj else None

    report = Report.objects.filter(study=study, status="succeeded").order_by("pk").first()
    table = None
    if report is not None:
        try:
            from metrics.reports.exports.tables import report_tables

            table = report_tables(report.result)[0].slug
        except Exception:  # noqa: BLE001 - a report without tables leaves the table routes unvisited
            table = None
    return SimpleNamespace(
        study=study.pk,
        job=pk(ImportJob.objects.filter(study=study)),
        open_job=pk(OpenJob.objects.filter(study=study)),
        token=AssignmentItem.objects.filter(assignment__study=study, assignment__judge__username="judge1")
        .order_by("position")
        .values_list("token", flat=True)
        .first(),
        assignment=pk(AlignmentAssignment.objects.filter(pair__study=study, annotator__username="annotator")),
        pair=pk(AlignmentPair.objects.filter(study=study)),
        alignment_system=pk(AlignmentSystem.objects.filter(study=study)),
        scoring_run=pk(ScoringRun.objects.filter(study=study)),
        aligner_run=pk(AlignerRun.objects.filter(study=study)),
        metric_run=pk(MetricRun.objects.filter(study=study)),
        pem=pk(PemModel.objects.filter(study=study)),
        report=report.pk if report else None,
        plot=ReportPlot.objects.filter(report=report).values_list("slug", flat=True).first() if report else None,
        table=table,
        # field studies: the demo has no join link, so its pages and a participant's resume
        # link are listed as not requested (they are covered by tests/hardening's matrix)
        join_link=pk(JoinLink.objects.filter(study=study)),
        join_token=JoinLink.objects.filter(study=study).order_by("pk").values_list("token", flat=True).first(),
        resume_token=None,
    )


class Walk:
    def __init__(self, base_url: str):
        self.base_url = base_url
        self.problems: list[str] = []
        self.statuses: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
        self.hsts = int(os.environ.get("SECURE_HSTS_SECONDS", "31536000") or 0)
        self.requests = 0
        self.slowest = (0.0, "")

    def problem(self, text: str):
        self.problems.append(text)

    def check(self, resp, *, where: str, signed_in: bool):
        self.requests += 1
        if resp.seconds > self.slowest[0]:
            self.slowest = (resp.seconds, where)
        h = resp.headers
        if resp.status >= 500:
            self.problem(f"{where}: {resp.status}")
        ctype = h.get("Content-Type", "")
        if not h.get("Content-Security-Policy"):
            self.problem(f"{where}: no Content-Security-Policy")
        if not ctype.startswith("image/svg") and h.get("X-Frame-Options") != "DENY":
            self.problem(f"{where}: X-Frame-Options is {h.get('X-Frame-Options')!r}")
        if h.get("X-Content-Type-Options") != "nosniff":
            self.problem(f"{where}: X-Content-Type-Options is {h.get('X-Content-Type-Options')!r}")
        if not h.get("Referrer-Policy"):
            self.problem(f"{where}: no Referrer-Policy")
        hsts = h.get("Strict-Transport-Security")
        if self.hsts > 0 and (not hsts or f"max-age={self.hsts}" not in hsts):
            self.problem(f"{where}: Strict-Transport-Security is {hsts!r}, expected max-age={self.hsts}")
        if self.hsts == 0 and hsts:
            self.problem(f"{where}: Strict-Transport-Security sent although SECURE_HSTS_SECONDS=0")
        if signed_in and "no-store" not in h.get("Cache-Control", ""):
            self.problem(f"{where}: Cache-Control is {h.get('Cache-Control')!r} for a signed-in person")

    # --- the parts -------------------------------------------------------------------------

    def static_files(self):
        b = Browser(self.base_url, client_address="198.51.100.10")
        page = b.get("/accounts/login/")
        self.check(page, where="GET /accounts/login/ (anonymous)", signed_in=False)
        assets = sorted(set(re.findall(rb'(?:href|src)="(/static/[^"]+)"', page.body)))
        if not assets:
            self.problem("the login page links no static file")
        for asset in assets:
            path = asset.decode()
            if not re.search(r"\.[0-9a-f]{12}\.\w+$", path):
                self.problem(f"{path}: not a hashed (collectstatic) name")
            r = b.get(path)
            self.requests += 1
            max_age = re.search(r"max-age=(\d+)", r.headers.get("Cache-Control", ""))
            if r.status != 200 or not max_age or int(max_age.group(1)) < 30 * 86400:
                self.problem(
                    f"GET {path}: {r.status}, Cache-Control {r.headers.get('Cache-Control')!r} "
                    "(expected 200 and a long max-age)"
                )

    def brute_force(self):
        from django.conf import settings
        from django.contrib.auth.models import User

        limit = settings.AXES_FAILURE_LIMIT
        # Made-up usernames from one address never lock out a real person behind it.
        guesser = Browser(self.base_url, client_address="198.51.100.20")
        for i in range(3 * limit):
            r = guesser.login(f"nobody-{secrets.token_hex(4)}-{i}", "guess")
            if r.status != 200:
                self.problem(f"made-up username #{i}: {r.status} (expected the form again)")
                break
        same_address = Browser(self.base_url, client_address="198.51.100.20")
        r = same_address.login("researcher", DEMO_PASSWORDS["researcher"])
        if r.status != 302:
            self.problem(f"the researcher, after {3 * limit} made-up usernames from their address: {r.status}")
        # A real username is locked after the limit, from any address, whichever worker counted.
        name, password = f"probe-{secrets.token_hex(6)}", secrets.token_urlsafe(16)
        User.objects.create_user(username=name, password=password)
        try:
            for i in range(limit):
                Browser(self.base_url, client_address=f"203.0.113.{i + 1}").login(name, "wrong")
            r = Browser(self.base_url, client_address="192.0.2.77").login(name, password)
            if r.status != 429 or b"Too many failed attempts" not in r.body:
                self.problem(
                    f"{name} after {limit} failures spread over addresses and workers: {r.status} "
                    "(expected the 429 lockout page)"
                )
            api = Browser(self.base_url, client_address="192.0.2.78").request(
                "POST",
                "/api/auth/token/",
                body=json.dumps({"username": name, "password": password}).encode(),
                headers={"Content-Type": "application/json", "Accept": "application/json"},
            )
            if api.status != 429 or "Too many failed attempts" not in json.loads(api.body or b"{}").get("detail", ""):
                self.problem(f"token endpoint for the locked {name}: {api.status} {api.body[:200]!r}")
        finally:
            User.objects.filter(username=name).delete()
        # The token endpoint issues expiring tokens that work and are never cached.
        api = Browser(self.base_url, client_address="192.0.2.79")
        r = api.request(
            "POST",
            "/api/auth/token/",
            headers={"Content-Type": "application/json"},
            body=json.dumps({"username": "researcher", "password": DEMO_PASSWORDS["researcher"]}).encode(),
        )
        body = json.loads(r.body or b"{}")
        if r.status != 200 or not body.get("expires_at"):
            self.problem(f"POST /api/auth/token/: {r.status} {r.body[:200]!r}")
        else:
            r = api.get(
                "/api/studies/", headers={"Authorization": f"Token {body['token']}", "Accept": "application/json"}
            )
            self.check(r, where="GET /api/studies/ with a token", signed_in=True)
            if r.status != 200:
                self.problem(f"GET /api/studies/ with a fresh token: {r.status}")

    def researcher_builds_a_report(self, *, wait_seconds: float = 300):
        """The researcher asks the server for a report; the Celery worker builds it.

        The demo has no judgments yet, so three simulated judges fill it first (the
        report app's own simulator, as its tests and benchmarks do). The report's
        pages, figures and exports are then among the walked routes.
        """
        from annotation.demo import DEMO_STUDY_NAME
        from annotation.judging.protocols.absolute.simulation import simulated_judges_fill
        from annotation.models import Study
        from metrics.reports.models import Report

        study = Study.objects.get(name=DEMO_STUDY_NAME)
        simulated_judges_fill(study=study, n_judges=3, seed=1)
        b = Browser(self.base_url, client_address="198.51.100.30")
        if b.login("researcher", DEMO_PASSWORDS["researcher"]).status != 302:
            self.problem("the researcher cannot log in to build a report")
            return
        fields = {
            "csrfmiddlewaretoken": b.cookies.get("csrftoken", ""),
            "criterion": "overall",
            "normalize": "",
            "include_metrics": "on",
            "confidence_level": "0.95",
            "significance_level": "0.05",
            "seed": "1",
            "n_boot": "50",
        }
        r = b.post_form(f"/studies/{study.pk}/reports/create/", fields)
        self.check(r, where="POST report create as researcher", signed_in=True)
        if r.status != 302:
            self.problem(f"POST /studies/{study.pk}/reports/create/: {r.status} {r.body[:300]!r}")
            return
        deadline = time.monotonic() + wait_seconds
        while time.monotonic() < deadline:
            report = Report.objects.filter(study=study).order_by("-pk").first()
            if report is not None and report.status in ("succeeded", "failed"):
                if report.status == "failed":
                    self.problem(f"the worker failed the report: {report.error}")
                return
            time.sleep(2)
        self.problem(f"the worker did not finish the report within {wait_seconds:.0f}s")

    def researcher_runs_alignment_work(self, *, wait_seconds: float = 300):
        """The researcher starts the built-in aligner and an agreement scoring run; the worker runs them.

        Their status pages and exports are then among the walked routes. A run that
        ends "failed" (the demo may lack what a run needs) is fine: its pages must still
        answer without a server error.
        """
        from annotation.alignment.models import AlignerRun, ScoringRun
        from annotation.demo import DEMO_STUDY_NAME
        from annotation.models import Study

        study = Study.objects.get(name=DEMO_STUDY_NAME)
        b = Browser(self.base_url, client_address="198.51.100.31")
        if b.login("researcher", DEMO_PASSWORDS["researcher"]).status != 302:
            self.problem("the researcher cannot log in to start alignment work")
            return
        csrf = b.cookies.get("csrftoken", "")
        for path, fields in (
            (
                f"/studies/{study.pk}/alignment/aligner/",
                {"aligner-system_name": "paraeval-aligner-ci", "aligner-use_wordnet": ""},
            ),
            (f"/studies/{study.pk}/alignment/scoring/", {"kind": "agreement"}),
        ):
            r = b.post_form(path, {"csrfmiddlewaretoken": csrf, **fields})
            self.check(r, where=f"POST {path} as researcher", signed_in=True)
            if r.status >= 500 or r.status in (401, 403):
                self.problem(f"POST {path}: {r.status}")
        deadline = time.monotonic() + wait_seconds
        while time.monotonic() < deadline:
            pending = [
                m.__name__
                for m in (AlignerRun, ScoringRun)
                if m.objects.filter(study=study).exclude(status__in=("succeeded", "failed", "cancelled")).exists()
            ]
            if not pending:
                return
            time.sleep(2)
        self.problem(f"the worker did not finish {pending} within {wait_seconds:.0f}s")

    def pages(self):
        from tests.hardening.routes import all_routes, url_for

        world = demo_world()
        routes = [r for r in all_routes() if r.name and r.namespace != "admin" and "get" in r.methods]
        routes += [r for r in all_routes() if r.name in ("admin:index", "admin:login")]
        skipped = sorted({r.name for r in routes if url_for(r, world) is None})
        for role, username in ROLES.items():
            b = Browser(self.base_url, client_address=f"198.51.100.{40 + len(self.statuses)}")
            if username:
                r = b.login(username, DEMO_PASSWORDS[username])
                if r.status != 302:
                    self.problem(f"login as {username}: {r.status}")
                    continue
            for route in routes:
                url = url_for(route, world)
                if url is None or route.name == "logout":
                    continue
                r = b.get(url)
                self.statuses[role][r.status] += 1
                self.check(r, where=f"GET {url} as {role}", signed_in=bool(username))
        return len(routes), skipped


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base-url", required=True)
    args = parser.parse_args()

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    django.setup()
    global DEMO_PASSWORDS
    from annotation.demo import DEMO_ACCOUNTS

    DEMO_PASSWORDS = {name: password for name, (password, _) in DEMO_ACCOUNTS.items()}

    started = time.monotonic()
    walk = Walk(args.base_url)
    walk.static_files()
    walk.brute_force()
    walk.researcher_builds_a_report()
    walk.researcher_runs_alignment_work()
    n_routes, skipped = walk.pages()
    print(
        f"production walk: {walk.requests} requests, {n_routes} routes x {len(ROLES)} roles "
        f"in {time.monotonic() - started:.1f}s; slowest {walk.slowest[0]:.2f}s ({walk.slowest[1]})"
    )
    for role, counter in walk.statuses.items():
        print(f"  {role:<10} " + ", ".join(f"{status}: {n}" for status, n in sorted(counter.items())))
    if skipped:
        print(f"  not requested (no such object in the demo): {', '.join(skipped)}")
    if walk.problems:
        print(f"\n{len(walk.problems)} problem(s):")
        for p in walk.problems[:200]:
            print("  " + p)
        return 1
    print("production walk: OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
