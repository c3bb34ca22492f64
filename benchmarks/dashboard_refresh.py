"""CPU of one dashboard refresh at N judges, by part: the version stamp, the live figures
(counts, costs, judge QC) and the answers (agreement, ranking, correlations); and what one
poll of the dashboard API costs the web server, with the size of what it serves.

    .venv/bin/python benchmarks/dashboard_refresh.py [--judges 500] [--per-item 15]
        [--originals 50] [--repeat 3] [--root /tmp/before] [--profile live|answers]
        [--pg postgres://postgres@127.0.0.1:5432] [--sql]

Builds, in a fresh SQLite file under a temporary var/, a study of ORIGINALS × 4 systems
(+ controls) opened fully crossed for JUDGES simulated judges, each item rated by PER-ITEM of
them (500 × 15: 5,250 judgments of 175,000 assigned items, what a 2-minute burst of 500 judges
leaves), then times each part ``--repeat`` times and prints the median CPU (process) seconds,
which holds on a busy machine where wall time does not. ``--root`` runs the same against
another checkout (e.g. ``git archive <commit> | tar -x -C /tmp/before``) for a before/after.
``--profile`` prints cProfile's top 25 of that part. ``--pg`` builds the study in a fresh
PostgreSQL database (``paraeval_dash_refresh``) instead; ``--sql`` also prints, per part, the
queries it runs and their wall time in the database (the time a refresh holds a database core at
normal priority, whatever the worker's own priority), the slowest five, and on PostgreSQL the
bytes of write-ahead log one whole refresh writes (which judges' commits wait behind).
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--judges", type=int, default=500)
    p.add_argument("--per-item", type=int, default=15)
    p.add_argument("--originals", type=int, default=50)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--root", type=Path, default=ROOT, help="the checkout to measure (default: this one)")
    p.add_argument("--profile", choices=["version", "poll", "live", "answers", "refresh"])
    p.add_argument("--pg", default=None, help="a loopback PostgreSQL server to build the study in")
    p.add_argument("--sql", action="store_true", help="print each part's queries and database time")
    args = p.parse_args(argv)
    root = args.root.resolve()
    sys.path.insert(0, str(root))
    os.chdir(root)
    os.environ["PARAEVAL_VAR_DIR"] = tempfile.mkdtemp(prefix="paraeval-bench-dashboard-")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    if args.pg:
        sys.path.insert(0, str(ROOT / "benchmarks"))
        import harness

        os.environ["DATABASE_URL"] = harness.fresh_database(args.pg, "paraeval_dash_refresh")
    import django

    django.setup()
    from django.contrib.auth.models import User
    from django.core.management import call_command

    from annotation.judging.protocols.absolute.models import Judgment
    from annotation.judging.protocols.absolute.simulation import simulated_judges_fill
    from annotation.judging.services.design import design_update
    from annotation.judging.services.opening import study_judging_open
    from annotation.models import Candidate, Original, System
    from annotation.services.studies import study_create
    from metrics.dashboard import selectors
    from metrics.dashboard.services.figures import study_answers

    call_command("migrate", verbosity=0)
    started = time.time()
    owner = User.objects.create_user("bench")
    study = study_create(name="dashboard bench", owner=owner)
    systems = System.objects.bulk_create([System(study=study, name=n) for n in ("sys-a", "sys-b", "sys-c", "sys-d")])
    originals = Original.objects.bulk_create(
        [
            Original(
                study=study,
                external_id=f"o{i:04d}",
                text=f"the original sentence number {i} says what it says",
                position=i,
            )
            for i in range(args.originals)
        ]
    )
    Candidate.objects.bulk_create(
        [
            Candidate(original=o, system=s, text=f"sentence {o.position} of {s.name} says it {k} times over")
            for o in originals
            for k, s in enumerate(systems)
        ]
    )
    design_update(study=study, changes={"seed": 7})
    study_judging_open(study=study)
    study.refresh_from_db()
    simulated_judges_fill(study=study, n_judges=args.judges, judges_per_item=args.per_item, seed=1)
    print(
        f"study: {args.judges} judges, {Judgment.objects.filter(study=study).count():,} judgments, "
        f"built in {time.time() - started:.0f} s; checkout {root}",
        flush=True,
    )
    from django.test import Client

    from metrics.dashboard.services import snapshot

    snapshot.dashboard_refresh(study=study, force_answers=True)
    client = Client(HTTP_HOST="localhost")
    client.force_login(owner)
    body = client.get(f"/api/dashboard/studies/{study.pk}/").content
    print(f"snapshot served by the API: {len(body) / 1024:,.0f} KiB", flush=True)
    parts = {
        "version": lambda: selectors.dashboard_version(study=study),
        "poll": lambda: client.get(f"/api/dashboard/studies/{study.pk}/"),
        "live": lambda: selectors.dashboard_live(study=study),
        "answers": lambda: study_answers(study),
        "refresh": lambda: snapshot.dashboard_refresh(study=study, force_answers=True),
    }
    for name, fn in parts.items():
        times = []
        for _ in range(args.repeat):
            t0 = time.process_time()
            fn()
            times.append(time.process_time() - t0)
        print(
            f"{name:8s} CPU s, median of {args.repeat}: {statistics.median(times):.2f} "
            f"(min {min(times):.2f}, max {max(times):.2f})",
            flush=True,
        )
    if args.sql:
        for name, fn in parts.items():
            sql_report(name, fn)
        wal_report(lambda: snapshot.dashboard_refresh(study=study, force_answers=True))
    if args.profile:
        prof = cProfile.Profile()
        prof.runcall(parts[args.profile])
        pstats.Stats(prof).sort_stats("cumulative").print_stats(25)
    return 0


def sql_report(name: str, fn) -> None:
    """The queries ``fn`` runs: how many, their wall time in the database, the slowest five."""
    from django.db import connection

    timed: list[tuple[float, str]] = []

    def wrapper(execute, sql, params, many, context):
        t0 = time.perf_counter()
        try:
            return execute(sql, params, many, context)
        finally:
            timed.append((time.perf_counter() - t0, sql))

    with connection.execute_wrapper(wrapper):
        fn()
    total = sum(t for t, _ in timed)
    print(f"{name:8s} {len(timed)} queries, {total * 1000:.1f} ms in the database", flush=True)
    for t, sql in sorted(timed, reverse=True)[:5]:
        print(f"    {t * 1000:7.1f} ms  {' '.join(sql.split())[:150]}", flush=True)


def wal_report(fn) -> None:
    """Bytes of write-ahead log ``fn`` writes (PostgreSQL only)."""
    from django.db import connection

    if connection.vendor != "postgresql":
        return
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_current_wal_insert_lsn()")
        before = cursor.fetchone()[0]
        fn()
        cursor.execute("SELECT pg_wal_lsn_diff(pg_current_wal_insert_lsn(), %s)", [before])
        print(f"write-ahead log of one refresh: {int(cursor.fetchone()[0]) / 1024:,.0f} KiB", flush=True)


if __name__ == "__main__":
    raise SystemExit(main())
