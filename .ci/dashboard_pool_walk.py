"""The dashboards' own pool, as docs/deployment.md ("A pool for dashboards") sets it up, checked live.

Run by ``.ci/production.sh`` against a second gunicorn (``SCHED_IDLE`` and ``nice 19``) that serves the dashboard
API, with ``PARAEVAL_DASHBOARD_QUEUE`` set for every process and a worker (likewise) that
consumes only that queue; the main worker consumes only the default queue:

    .venv/bin/python .ci/dashboard_pool_walk.py --pool-url http://127.0.0.1:9123

The demo researcher signs in on the pool (as through the proxy), polls the demo study's dashboard
API there as the page does, and must get a snapshot: computed by the dashboards' worker, since no
other worker reads that queue. The environment must be the servers' (same ``DATABASE_URL``...).
Exit status 0 when the snapshot came within ``--timeout`` seconds, else 1 with what was seen.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from production_walk import Browser  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pool-url", required=True)
    parser.add_argument("--timeout", type=float, default=180)
    args = parser.parse_args()

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    django.setup()
    from django.conf import settings

    from annotation.demo import DEMO_ACCOUNTS, DEMO_STUDY_NAME
    from annotation.models import Study

    if not settings.PARAEVAL_DASHBOARD_QUEUE:
        print("dashboard pool walk: PARAEVAL_DASHBOARD_QUEUE is not set; nothing would reach the pool's worker")
        return 1
    study = Study.objects.get(name=DEMO_STUDY_NAME)
    browser = Browser(args.pool_url, client_address="203.0.113.77")
    signed_in = browser.login("researcher", DEMO_ACCOUNTS["researcher"][0])
    if signed_in.status not in (301, 302):
        print(f"dashboard pool walk: the researcher could not sign in on the pool ({signed_in.status})")
        return 1
    path = f"/api/dashboard/studies/{study.pk}/"
    started = time.monotonic()
    seen = []
    while time.monotonic() - started < args.timeout:
        answer = browser.get(path, headers={"Accept": "application/json"})
        seen.append(answer.status)
        if answer.status != 200:
            print(f"dashboard pool walk: GET {path} answered {answer.status}: {answer.body[:300]!r}")
            return 1
        data = json.loads(answer.body)
        if data.get("snapshot"):
            print(
                f"dashboard pool walk: a snapshot computed at {data['snapshot'].get('computed_at')} after "
                f"{time.monotonic() - started:.1f} s and {len(seen)} polls on the pool "
                f"(queue {settings.PARAEVAL_DASHBOARD_QUEUE!r}; figures: {', '.join(sorted(data['snapshot'])[:8])}); OK"
            )
            return 0
        time.sleep(2)
    print(f"dashboard pool walk: no snapshot within {args.timeout:.0f} s ({len(seen)} polls, all 200 without one)")
    return 1


if __name__ == "__main__":
    sys.exit(main())
