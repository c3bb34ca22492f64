"""CPU and queries per request on the judging hot path, in process (no server, no network).

    .venv/bin/python benchmarks/judging_profile.py [--requests 300] [--originals 40] [--systems 4]
        [--judges 4] [--pg postgres://postgres@127.0.0.1:5432] [--database paraeval_profile]
        [--profile next|submit] [--html out.html] [--cprofile tottime|cumulative]

Builds a study on a fresh PostgreSQL database (through ``benchmarks/harness.py``), then
drives ``GET items/next/`` and ``POST judgments/`` through Django's test client with
an API token, as the Locust judges of ``benchmarks/judging_pace.py`` do, the whole
middleware and DRF stack included. Printed per endpoint: CPU ms per request (this
process's user + system time: the figure that holds on an idle machine, since it
does not count waiting for PostgreSQL), wall ms, and the number of queries. With
``--profile``, pyinstrument's call tree of that endpoint is printed (or written as
HTML with ``--html``).
"""

from __future__ import annotations

import argparse
import os
import secrets
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT))

import harness  # noqa: E402


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--requests", type=int, default=300, help="requests per endpoint")
    p.add_argument("--originals", type=int, default=40)
    p.add_argument("--systems", type=int, default=4)
    p.add_argument("--judges", type=int, default=4)
    p.add_argument("--pg", default="postgres://postgres@127.0.0.1:5432")
    p.add_argument("--database", default="paraeval_profile")
    p.add_argument("--profile", choices=["next", "submit"], default=None)
    p.add_argument("--html", type=Path, default=None)
    p.add_argument(
        "--cprofile",
        choices=["tottime", "cumulative"],
        default=None,
        help="with --profile: cProfile on CPU time (process_time), sorted by this column",
    )
    args = p.parse_args(argv)
    harness.require_loopback(args.pg)
    return args


def setup(args) -> None:
    os.environ.update(
        {
            "DJANGO_SETTINGS_MODULE": "config.settings",
            "DEBUG": "off",
            "LOG_LEVEL": "WARNING",
            "DATABASE_URL": harness.fresh_database(args.pg, args.database),
            "CONN_MAX_AGE": "600",
            "PARAEVAL_VAR_DIR": str(Path("/tmp") / f"paraeval-profile-{os.getpid()}"),
        }
    )
    import django

    django.setup()
    from django.conf import settings
    from django.core.management import call_command

    settings.ALLOWED_HOSTS = ["*"]
    call_command("migrate", verbosity=0)


def main(argv=None) -> int:
    args = parse_args(argv)
    setup(args)
    import judging_load
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    ns = argparse.Namespace(originals=args.originals, systems=args.systems, judges=args.judges)
    study_id, tokens, _ = judging_load.build_study(ns)
    clients = [Client(HTTP_AUTHORIZATION=f"Token {t}", HTTP_ACCEPT="application/json") for t in tokens.values()]
    base = f"/api/judging/studies/{study_id}/"
    n_items = args.originals * (args.systems + 3)
    per_judge_budget = n_items - 2

    def next_item(c):
        r = c.get(base + "items/next/")
        assert r.status_code == 200, r.content[:300]
        return r.json()["item"]

    def submit(c, item):
        body = {
            "item": item["token"],
            "key": secrets.token_urlsafe(12),
            "serve_stamp": item["serve_stamp"],
            "scores": {"adequacy": 3, "fluency": 4, "dissimilarity": 2, "overall": 3},
            "active_seconds": 5,
        }
        r = c.post(base + "judgments/", body, content_type="application/json")
        assert r.status_code == 201, r.content[:300]

    # Warm up: every judge's assignment exists, connections and caches are hot.
    pending = {i: next_item(c) for i, c in enumerate(clients)}
    n = min(args.requests, per_judge_budget * len(clients))
    timings = {"next": [0.0, 0.0, 0], "submit": [0.0, 0.0, 0]}
    queries = {}
    profiler = None
    if args.profile:
        if args.cprofile:
            import cProfile

            profiler = cProfile.Profile(time.process_time)
            profiler.start, profiler.stop = profiler.enable, profiler.disable
        else:
            from pyinstrument import Profiler

            profiler = Profiler(interval=0.0005)
    for k in range(n):
        i = k % len(clients)
        c = clients[i]
        for name, call in (
            ("submit", lambda: submit(c, pending[i])),
            ("next", lambda: pending.__setitem__(i, next_item(c))),
        ):
            if profiler and name == args.profile:
                profiler.start()
            with CaptureQueriesContext(connection) as ctx:
                c0, w0 = time.process_time(), time.perf_counter()
                call()
                c1, w1 = time.process_time(), time.perf_counter()
            if profiler and name == args.profile:
                profiler.stop()
            t = timings[name]
            t[0] += c1 - c0
            t[1] += w1 - w0
            t[2] += 1
            queries[name] = len(ctx.captured_queries)
            if k == n - 1:
                queries[name + "_sql"] = [q["sql"][:160] for q in ctx.captured_queries]
    print(
        f"{n} requests per endpoint, study of {n_items} items × {len(clients)} judges on PostgreSQL; "
        f"load average {harness.load_average()}"
    )
    for name in ("next", "submit"):
        cpu, wall, cnt = timings[name]
        print(
            f"  {name:>6}: CPU {1000 * cpu / cnt:.2f} ms/request, wall {1000 * wall / cnt:.2f} ms, "
            f"{queries[name]} queries"
        )
        for sql in queries[name + "_sql"]:
            print(f"          {sql}")
    if profiler and args.cprofile:
        import pstats

        pstats.Stats(profiler).sort_stats(args.cprofile).print_stats(120)
    elif profiler:
        if args.html:
            args.html.write_text(profiler.output_html())
        else:
            print(profiler.output_text(unicode=True, color=False, show_all=False))
    connection.close()
    harness.drop_database(args.pg, args.database)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
