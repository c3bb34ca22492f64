"""Does watching slow judging? Judging p95 at N judges with and without D dashboards open, side by side.

    .venv/bin/python benchmarks/dashboard_load.py [--judges 500] [--dashboards 20] [--seconds 120]
        [--ramp 60] [--rounds 2] [--think-median 10] [--originals 50] [--workers 2] [--threads 4]
        [--pg postgres://postgres@127.0.0.1:5432] [--database paraeval_dash]
        [--broker redis://127.0.0.1:6379/7] [--dashboard-pool yielding|shared] [--dashboard-nice 19]
        [--dashboard-sched idle|normal] [--watchers idle|own|shared]
        [--warmup 1] [--json out.json]

The set-up of ``benchmarks/judging_pace.py`` (PostgreSQL, Redis, gunicorn, Locust judges with a
log-normal think time), plus one Celery worker that computes the dashboards' snapshots, and
``--dashboards`` researchers polling the dashboard API every 3 s
(``benchmarks/locustfile_dashboard.py``). Runs alternate in ABBA order — without dashboards,
with; with, without; … (``--rounds`` pairs) — against the same server and study, so that drift
of the machine weighs on both sides alike. ``--dashboards 0`` runs the same arms with no
dashboard in either: an A/A comparison, whose ratio is the noise floor of the measurement. A
warm-up run (``--warmup``, not counted) comes first, and every run starts from a vacuumed study
after a ``CHECKPOINT``. Printed per run: ``items/next`` and ``submit`` p50/p95/p99 as Locust saw
them and the server's own p95 (gunicorn's access log, ``%(D)s``), the dashboards' own p95,
failures, CPU seconds, checkpoints, the load average; then, for each of the judges' two requests,
the ratio of mean p95 with / without (the issue's bar: within 1.10) with a 95 % bootstrap
interval over the rounds. Measure on an idle machine: the load average is printed so that a
busy one is seen.

``--dashboard-pool`` says where the dashboards are served from: ``shared``, the judges' gunicorn;
``yielding`` (the default, as docs/deployment.md advises), a second gunicorn of one process that
serves only the dashboard API, and the Celery worker that computes the snapshots, both at
``nice -n --dashboard-nice`` and (``--dashboard-sched idle``, the default) under Linux's
``SCHED_IDLE`` policy, so that the judges' requests take the CPU first when cores are short.

``--watchers`` says where the researchers' browsers are simulated. Real ones are on other
machines; here they share the box. ``idle`` (the default) runs them in a Locust process of their
own under ``SCHED_IDLE`` and nice 19, the nearest a single box comes to browsers that cost the
server's cores nothing (the number of polls per run is printed, to show they kept their pace);
``own`` at normal priority; ``shared`` in the judges' own Locust process, as every invocation
before 2026-11-29 afternoon did: one gevent loop then times the judges' requests while it also
reads twenty dashboards' answers (475 KiB each at 500 judges), so part of what it measured was
the client's own delay.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT))

import harness  # noqa: E402
import judging_pace  # noqa: E402


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--judges", type=int, default=500)
    p.add_argument("--dashboards", type=int, default=20)
    p.add_argument("--seconds", type=float, default=120)
    p.add_argument("--ramp", type=float, default=60)
    p.add_argument("--rounds", type=int, default=2, help="pairs of runs (without, with)")
    p.add_argument("--think-median", type=float, default=10.0)
    p.add_argument("--originals", type=int, default=50)
    p.add_argument("--systems", type=int, default=4)
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--threads", type=int, default=4)
    p.add_argument("--pg", default="postgres://postgres@127.0.0.1:5432")
    p.add_argument("--database", default="paraeval_dash")
    p.add_argument("--broker", default="redis://127.0.0.1:6379/7")
    p.add_argument(
        "--cache",
        default="redis://127.0.0.1:6379/9",
        help="CACHE_URL, as a deployment sets it (docs/deployment.md): one cache for every process",
    )
    p.add_argument("--gunicorn-args", default="--preload --keep-alive 5")
    p.add_argument("--dashboard-pool", choices=("yielding", "shared"), default="yielding")
    p.add_argument("--dashboard-nice", type=int, default=19, help="the yielding pool's nice value (1..19)")
    p.add_argument(
        "--dashboard-sched",
        choices=("idle", "normal"),
        default="idle",
        help="the yielding pool's scheduling policy: idle is Linux's SCHED_IDLE (chrt --idle 0), besides the nice value",
    )
    p.add_argument(
        "--watchers",
        choices=("idle", "own", "shared"),
        default="idle",
        help="where the simulated researchers' browsers run: idle, a Locust process of their own under "
        "SCHED_IDLE and nice 19 (real browsers are on other machines: on one box this is the nearest to "
        "costing the server's cores nothing); own, the same at normal priority; shared, in the judges' "
        "Locust process (the invocations before 2026-11-29 afternoon), whose event loop then also reads "
        "every dashboard's answers while it times the judges' requests",
    )
    p.add_argument(
        "--warmup",
        type=int,
        default=1,
        help="runs with the dashboards, not counted, before the rounds (the first run meets cold caches)",
    )
    p.add_argument("--json", type=Path, default=None)
    args = p.parse_args(argv)
    if not 1 <= args.judges <= judging_pace.MAX_JUDGES or not 1 <= args.seconds <= judging_pace.MAX_SECONDS:
        p.error("judges 1..2000 and seconds 1..600")
    if not 0 <= args.dashboards <= 200 or not 1 <= args.rounds <= 20 or not 0 <= args.warmup <= 3:
        p.error("dashboards 0..200, rounds 1..20 and warmup 0..3")
    if not 1 <= args.dashboard_nice <= 19:
        p.error("dashboard-nice 1..19")
    harness.require_loopback(args.pg)
    harness.require_loopback(args.broker)
    args.counts = [args.judges]
    args.client = "fast"
    return args


def reset_study(study_id: int) -> None:
    """Back to an unjudged study between runs (each run starts from the same state): the
    judgments deleted, the rated items unrated, then ``VACUUM ANALYZE``, so that no run
    inherits the previous one's dead rows or stale planner statistics, nor meets an
    autovacuum of them halfway."""
    from django.db import connection

    from annotation.judging.protocols.absolute.models import AssignmentItem, Judgment
    from metrics.dashboard.models import Dashboard

    Judgment.objects.filter(study_id=study_id).delete()
    AssignmentItem.objects.filter(assignment__study_id=study_id, done_at__isnull=False).update(done_at=None)
    Dashboard.objects.filter(study_id=study_id).update(
        snapshot_text="", snapshot_version="", answers_version="", refresh_queued_at=None, answers_at=None
    )
    with connection.cursor() as cursor:
        cursor.execute("VACUUM ANALYZE")
        # A checkpoint now, not halfway through the next run: the vacuum's dirty pages are written
        # here, and the next timed checkpoint is checkpoint_timeout (5 min by default) away, longer
        # than a run. Each run counts the checkpoints that fell in it all the same.
        cursor.execute("CHECKPOINT")


def checkpoints() -> int:
    """PostgreSQL's checkpoints so far (timed and requested), from ``pg_stat_bgwriter``."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT checkpoints_timed + checkpoints_req FROM pg_stat_bgwriter")
        return int(cursor.fetchone()[0])


# The judges' requests in gunicorn's access log (ACCESS_FORMAT), by the names Locust gives them.
ACCESS_FORMAT = "%(m)s %(U)s %(s)s %(D)s"
ENDPOINTS = {("GET", "/items/next/"): "items/next", ("POST", "/judgments/"): "submit"}


WATCHERS = {
    "idle": "their own Locust process, under SCHED_IDLE and nice 19",
    "own": "their own Locust process",
    "shared": "in the judges' Locust process",
}


def poll_statuses(log: Path, start: int) -> dict[str, int]:
    """The dashboard polls' answers by status (``200``: the snapshot sent, ``304``: unchanged),
    from byte ``start`` of a gunicorn access log in ``ACCESS_FORMAT``."""
    counts: dict[str, int] = {}
    if not log.exists():
        return counts
    with open(log, "rb") as f:
        f.seek(start)
        for line in f.read().decode("utf-8", "replace").splitlines():
            parts = line.split()
            if len(parts) == 4 and "/api/dashboard/studies/" in parts[1]:
                counts[parts[2]] = counts.get(parts[2], 0) + 1
    return counts


def _locust_cmd(args, port: int, prefix: Path, *, users: int, classes: list[str], rate: float = 0) -> list[str]:
    """Locust's command line; ``rate`` users started a second (default: all of them over ``--ramp``)."""
    return [
        str(ROOT / ".venv" / "bin" / "locust"),
        "-f",
        str(HERE / "locustfile_dashboard.py"),
        *classes,
        "--headless",
        "-u",
        str(users),
        "-r",
        f"{rate or users / args.ramp:.3f}",
        "--run-time",
        f"{int(args.seconds)}s",
        "--host",
        f"http://127.0.0.1:{port}",
        "--csv",
        str(prefix),
        "--only-summary",
        "--stop-timeout",
        "15",
        "--loglevel",
        "WARNING",
    ]


def run(
    args,
    port,
    study_id,
    tokens,
    work: Path,
    *,
    dashboards: int,
    researcher_token: str,
    tag: str,
    dashboard_base: str,
    access_log: Path,
) -> dict:
    tok_file = work / f"tokens_{tag}.json"
    tok_file.write_text(json.dumps(tokens[: args.judges]))
    prefix = work / f"locust_{tag}"
    env = {
        **os.environ,
        "PARAEVAL_LOCUST_TOKENS": str(tok_file),
        "PARAEVAL_LOCUST_STUDY": str(study_id),
        "PARAEVAL_THINK_MEDIAN": str(args.think_median),
        "PARAEVAL_DASHBOARDS": str(dashboards),
        "PARAEVAL_DASHBOARD_TOKEN": researcher_token,
        "PARAEVAL_DASHBOARD_BASE": dashboard_base,
        "PYTHONPATH": str(HERE),
    }
    shared = args.watchers == "shared"
    judges_cmd = _locust_cmd(
        args,
        port,
        prefix,
        users=args.judges + (dashboards if shared else 0),
        classes=["FastJudge"] + (["DashboardWatcher"] if dashboards and shared else []),
    )
    watchers_cmd = None
    if dashboards and not shared:
        watchers_cmd = [
            *(harness.lowest_priority(nice=19, idle=True) if args.watchers == "idle" else []),
            # all open from the start, as in the judges' process, where Locust starts fixed_count
            # users first: the researchers are watching before the judges arrive
            *_locust_cmd(
                args, port, work / f"watchers_{tag}", users=dashboards, classes=["DashboardWatcher"], rate=dashboards
            ),
        ]
    load_before = harness.load_average()
    machine_before = harness.machine_cpu()
    checkpoints_before = checkpoints()
    log_start = access_log.stat().st_size if access_log.exists() else 0
    pool_log = work / "pool_access.log"
    pool_start = pool_log.stat().st_size if pool_log.exists() else 0
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    procs = [
        subprocess.Popen(
            cmd,
            cwd=ROOT,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=open(work / f"{name}_{tag}.log", "w"),
            start_new_session=True,
        )
        for name, cmd in (("locust", judges_cmd), ("watchers", watchers_cmd))
        if cmd
    ]
    try:
        for proc in procs:
            proc.wait(timeout=args.seconds + 120)
    finally:
        for proc in procs:
            harness.stop_process(proc)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    machine_after = harness.machine_cpu()
    stats = judging_pace.read_stats(prefix)
    row = {
        "dashboards": dashboards,
        "load_before": load_before,
        "load_after": harness.load_average(),
        "locust_cpu_s": round((after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime), 1),
        "failures": int(stats.get("Aggregated", {}).get("Failure Count", 0) or 0),
        "machine_cpu_s": {k: round(machine_after[k] - machine_before[k], 1) for k in machine_before},
        "checkpoints": checkpoints() - checkpoints_before,
    }
    row["server"], _ = harness.server_times(access_log, log_start, ENDPOINTS)
    row["poll_statuses"] = poll_statuses(
        pool_log if dashboard_base else access_log, pool_start if dashboard_base else log_start
    )
    if watchers_cmd:
        watched = judging_pace.read_stats(work / f"watchers_{tag}")
        stats = {**stats, "dashboard": watched.get("dashboard", {})}
        row["failures"] += int(watched.get("Aggregated", {}).get("Failure Count", 0) or 0)
    for name in ("items/next", "submit", "dashboard"):
        s = stats.get(name, {})
        row[name] = {q: float(s.get(q, "nan") or "nan") for q in ("50%", "95%", "99%")}
        row[name]["count"] = int(s.get("Request Count", 0) or 0)
    return row


def main(argv=None) -> int:
    args = parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="paraeval-dash-"))
    gunicorn = worker = pool = None
    try:
        env = judging_pace.setup(args, work / "var")
        study_id, tokens, opened = judging_pace.build_study(args)
        from django.contrib.auth.models import User
        from rest_framework.authtoken.models import Token

        researcher_token = Token.objects.get_or_create(user=User.objects.get(username="bench-researcher"))[0].key
        port = harness.free_port()
        access_log = work / "access.log"
        gunicorn = harness.start_gunicorn(
            env,
            port=port,
            workers=args.workers,
            threads=args.threads,
            timeout=180,
            extra_args=(
                *args.gunicorn_args.split(),
                "--access-logfile",
                str(access_log),
                "--access-logformat",
                ACCESS_FORMAT,
            ),
        )
        yielding = args.dashboard_pool == "yielding"
        nice = args.dashboard_nice if yielding else 0
        idle = yielding and args.dashboard_sched == "idle"
        dashboard_base = ""
        if yielding:
            pool_port = harness.free_port()
            pool = harness.start_gunicorn(
                env,
                port=pool_port,
                workers=1,
                threads=4,
                timeout=180,
                extra_args=(
                    "--preload",
                    "--access-logfile",
                    str(work / "pool_access.log"),
                    "--access-logformat",
                    ACCESS_FORMAT,
                ),
                nice=nice,
                idle=idle,
            )
            dashboard_base = f"http://127.0.0.1:{pool_port}"
        worker = harness.start_celery_worker(env, name="dashboards", log_path=work / "worker.log", nice=nice, idle=idle)
        print(
            f"{os.cpu_count()} cores; {args.judges} judges (think median {args.think_median} s), "
            f"{args.dashboards} dashboards polling every 3 s ({WATCHERS[args.watchers]}); {args.seconds:.0f} s per run; "
            f"gunicorn {args.workers}×{args.threads}; PostgreSQL, Redis, one Celery worker; dashboards served "
            + (
                f"by their own gunicorn 1×4 at nice {nice}{' under SCHED_IDLE' if idle else ''} (worker too)"
                if yielding
                else "by the judges' gunicorn"
            ),
            flush=True,
        )

        def measure(dashboards: int, tag: str) -> dict:
            return run(
                args,
                port,
                study_id,
                tokens,
                work,
                dashboards=dashboards,
                researcher_token=researcher_token,
                tag=tag,
                dashboard_base=dashboard_base,
                access_log=access_log,
            )

        for w in range(args.warmup):
            # The first run of an invocation meets cold caches (Python's imports in each gunicorn
            # worker, PostgreSQL's buffers, the assigned counts): its p95 was several times the
            # later ones', and it fell in the "without" arm. It is run and dropped.
            reset_study(study_id)
            row = measure(args.dashboards, f"warmup{w}")
            print(
                f"warm-up run {w + 1} (not counted): items/next p95 {row['items/next']['95%']:.0f} ms, "
                f"submit p95 {row['submit']['95%']:.0f} ms",
                flush=True,
            )
        rows = []
        for r in range(args.rounds):
            # ABBA: without, with; with, without; ... so that a machine drifting during the
            # invocation weighs on both sides alike.
            for arm in ("without", "with") if r % 2 == 0 else ("with", "without"):
                d = args.dashboards if arm == "with" else 0
                reset_study(study_id)
                servers = [("gunicorn", gunicorn), ("worker", worker)] + ([("pool", pool)] if pool else [])
                cpu_before = {n: harness.process_tree_cpu(pr.pid) for n, pr in servers}
                row = measure(d, f"{r}_{d}")
                row["server_cpu_s"] = {
                    n: round(harness.process_tree_cpu(pr.pid) - cpu_before[n], 1) for n, pr in servers
                }
                row["arm"] = arm
                rows.append(row)
                print(
                    f"round {r + 1}, {arm:>7}, {d:>3} dashboards: items/next p50/p95/p99 "
                    f"{row['items/next']['50%']:.0f}/{row['items/next']['95%']:.0f}/{row['items/next']['99%']:.0f} ms; "
                    f"submit {row['submit']['50%']:.0f}/{row['submit']['95%']:.0f}/{row['submit']['99%']:.0f} ms; "
                    f"dashboard p95 {row['dashboard']['95%']:.0f} ms ({row['dashboard']['count']} polls: "
                    + ", ".join(f"{n} × {code}" for code, n in sorted(row["poll_statuses"].items()))
                    + "); "
                    f"{row['failures']} failures; load {row['load_before']} → {row['load_after']}; CPU s: "
                    f"Locust {row['locust_cpu_s']}, gunicorn {row['server_cpu_s']['gunicorn']}, "
                    f"Celery worker {row['server_cpu_s']['worker']}"
                    + (f", dashboards' pool {row['server_cpu_s']['pool']}" if pool else "")
                    + f"; machine {row['machine_cpu_s']['busy']} (niced {row['machine_cpu_s']['nice']}); "
                    f"{row['checkpoints']} checkpoints; server's own p95: items/next "
                    f"{row['server']['items/next']['95%']:.0f} ms, submit {row['server']['submit']['95%']:.0f} ms",
                    flush=True,
                )
        summary = {}
        for source, pick in (("Locust", lambda x, n: x[n]), ("server", lambda x, n: x["server"][n])):
            for name in ("items/next", "submit"):
                # rows alternate ABBA: the k-th "without" and the k-th "with" are round k's pair
                without = [pick(x, name)["95%"] for x in rows if x["arm"] == "without"]
                with_ = [pick(x, name)["95%"] for x in rows if x["arm"] == "with"]
                point, lo, hi = harness.ratio_interval(without, with_)
                summary[f"{source} {name}"] = {
                    "p95_without": without,
                    "p95_with": with_,
                    "ratio_of_means": point,
                    "bootstrap_95": [lo, hi],
                }
                print(
                    f"{source} {name}: p95 without {[round(v) for v in without]} ms, with {[round(v) for v in with_]} "
                    f"ms → ratio {point:.2f} (95 % bootstrap over rounds {lo:.2f}–{hi:.2f}; bar: ≤ 1.10)"
                )
        if args.json:
            args.json.write_text(
                json.dumps(
                    {"runs": rows, "summary": summary, "args": {k: v for k, v in vars(args).items() if k != "json"}},
                    indent=1,
                    default=str,
                )
            )
        return 0
    finally:
        harness.stop_process(worker)
        harness.stop_process(pool)
        harness.stop_process(gunicorn)
        try:
            from django.db import connections

            connections.close_all()
        except Exception:
            pass


if __name__ == "__main__":
    raise SystemExit(main())
