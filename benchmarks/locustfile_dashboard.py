"""Locust users for ``benchmarks/dashboard_load.py``: the judges of ``locustfile_judging.py`` and
researchers who keep a study's dashboard open.

A ``DashboardWatcher`` polls ``GET /api/dashboard/studies/<id>/`` as the page's dashboard.js
does: every ``PARAEVAL_DASHBOARD_EVERY`` seconds (default 3) or later when the answer's
``Paraeval-Poll-After`` says it cannot change sooner, with the
researcher's token (``PARAEVAL_DASHBOARD_TOKEN``), sending back the ETag of its last answer
as the page does (an unchanged answer is a 304 without a body); there are exactly
``PARAEVAL_DASHBOARDS`` of them (Locust's ``fixed_count``), the other users are judges.
Requests are named ``dashboard`` so that the judges' ``items/next`` and ``submit``
percentiles stay their own. ``PARAEVAL_DASHBOARD_BASE`` (e.g. ``http://127.0.0.1:8001``) sends
the polls to another server than the judges' (Locust's ``--host`` is the judges'), as a
deployment that serves dashboards from their own, lower-priority pool does.
``PARAEVAL_DASHBOARD_HINT=ignore`` polls every ``PARAEVAL_DASHBOARD_EVERY`` seconds whatever the
answer's hint says (a diagnostic: the polls' own cost at a fixed pace, e.g. with refreshes off).
"""

from __future__ import annotations

import os

from locust import FastHttpUser
from locustfile_judging import STUDY, FastJudge  # noqa: F401  (Locust picks user classes by name)

EVERY = float(os.environ.get("PARAEVAL_DASHBOARD_EVERY", "3"))
TOKEN = os.environ.get("PARAEVAL_DASHBOARD_TOKEN", "")
BASE = os.environ.get("PARAEVAL_DASHBOARD_BASE", "").rstrip("/")
OBEY_HINT = os.environ.get("PARAEVAL_DASHBOARD_HINT", "obey") != "ignore"


class DashboardWatcher(FastHttpUser):
    fixed_count = int(os.environ.get("PARAEVAL_DASHBOARDS", "0"))

    def wait_time(self) -> float:
        return self.wait

    def on_start(self) -> None:
        self.headers = {"Authorization": f"Token {TOKEN}", "Accept": "application/json"}
        self.etag = ""
        self.wait = EVERY

    def poll(self) -> None:
        headers = {**self.headers, "If-None-Match": self.etag} if self.etag else self.headers
        with self.client.get(
            f"{BASE}/api/dashboard/studies/{STUDY}/", headers=headers, name="dashboard", catch_response=True
        ) as r:
            after = float(r.headers.get("Paraeval-Poll-After") or 0)
            self.wait = max(EVERY, after) if OBEY_HINT else EVERY  # as the page: no sooner than it may change
            if r.status_code == 200:
                self.etag = r.headers.get("ETag", "")
            elif r.status_code != 304:
                r.failure(f"{r.status_code}")

    tasks = [poll]
