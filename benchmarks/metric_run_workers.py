"""The same metric runs on one Celery worker process and on two: wall times and speed-up.

A study of ``--candidates`` real pairs (KJV verses as originals, the WEB's
verses as the one system, from ``fixtures/resources/bible_en.tsv.xz``) is
scored with ``--metrics`` (default: bleu and pinc), both runs queued at once,
exactly as the researcher's page queues them: ``metric_run_create`` → the start
task → one chunk task per ``--chunk-size`` candidates → finalize. The runs are
timed from queueing until both have succeeded, first with one ``celery worker``
process, then with two (each ``--concurrency=1``).

Then a robustness check (skip with ``--no-kill-check``): with two workers, one
worker's pool process is SIGKILLed in the middle of a run; ``acks_late`` +
``reject_on_worker_lost`` put its chunk back on the queue, the run still
succeeds, and it holds exactly one score per candidate.

Needs PostgreSQL and Redis on loopback (what a lab with several worker
machines uses). Everything it creates is its own and is removed at the end: a
database ``--database`` (dropped first if it exists), the Redis database of
``--broker`` (FLUSHDB: give a number no one else uses), the worker processes,
and a temporary var/ directory. Bounded by ``--timeout`` seconds per phase.

Usage::

    .venv/bin/python benchmarks/metric_run_workers.py [--candidates 20000] [--chunk-size 500]
"""

from __future__ import annotations

import argparse
import lzma
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BIBLE = ROOT / "fixtures" / "resources" / "bible_en.tsv.xz"


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--candidates", type=int, default=20_000)
    p.add_argument("--metrics", default="bleu,pinc", help="comma-separated slugs")
    p.add_argument("--chunk-size", type=int, default=500)
    p.add_argument("--pg", default="postgres://postgres@127.0.0.1:5432", help="PostgreSQL server URL (no db name)")
    p.add_argument("--database", default="paraeval_bench_workers")
    p.add_argument("--broker", default="redis://127.0.0.1:6379/12", help="a Redis database used only by this script")
    p.add_argument("--timeout", type=float, default=600.0, help="seconds per phase before giving up")
    p.add_argument("--no-kill-check", action="store_true")
    return p.parse_args()


def setup_environment(args: argparse.Namespace, var_dir: Path) -> None:
    import psycopg

    with psycopg.connect(f"{args.pg}/postgres", autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{args.database}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{args.database}"')
    os.environ.update(
        DJANGO_SETTINGS_MODULE="config.settings",
        DATABASE_URL=f"{args.pg}/{args.database}",
        CELERY_BROKER_URL=args.broker,
        PARAEVAL_VAR_DIR=str(var_dir),
        PARAEVAL_CACHE_DIR=str(var_dir / "cache"),
        LOG_LEVEL="WARNING",
    )
    os.environ.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    flush_broker(args.broker)


def flush_broker(url: str) -> None:
    import redis

    redis.Redis.from_url(url).flushdb()


def drop_database(args: argparse.Namespace) -> None:
    import psycopg
    from django.db import connections

    connections.close_all()
    with psycopg.connect(f"{args.pg}/postgres", autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{args.database}" WITH (FORCE)')


def make_study(n: int):
    """A study of ``n`` KJV originals with the WEB as system ``web`` (one candidate each)."""
    from django.contrib.auth.models import User

    from annotation.enums import SystemKind
    from annotation.models import Candidate, Original, Study, System

    with lzma.open(BIBLE, "rt", encoding="utf-8") as fh:
        next(fh)
        rows = [line.rstrip("\n").split("\t") for line in fh]
    rows = [r for r in rows if len(r) == 3 and r[1].strip() and r[2].strip()][:n]
    if len(rows) < n:
        raise SystemExit(f"only {len(rows)} verse pairs available")
    owner = User.objects.create_user("bench-researcher")
    study = Study.objects.create(name="Benchmark: KJV vs WEB", owner=owner)
    system = System.objects.create(study=study, name="web", kind=SystemKind.IMPORTED)
    Original.objects.bulk_create(
        [Original(study=study, external_id=ref, text=kjv, position=i) for i, (ref, kjv, _) in enumerate(rows)],
        batch_size=5000,
    )
    ids = dict(Original.objects.filter(study=study).values_list("external_id", "id"))
    Candidate.objects.bulk_create(
        [Candidate(original_id=ids[ref], system=system, text=web) for ref, _, web in rows], batch_size=5000
    )
    return study, owner


class Workers:
    """``n`` real ``celery worker`` processes (prefork, one pool process each)."""

    def __init__(self, n: int, log_dir: Path):
        self.procs: list[subprocess.Popen] = []
        celery = Path(sys.executable).parent / "celery"
        for i in range(n):
            log = open(log_dir / f"worker{i + 1}-of-{n}.log", "w")
            self.procs.append(
                subprocess.Popen(
                    [
                        str(celery),
                        "-A",
                        "config",
                        "worker",
                        "--pool=prefork",
                        "--concurrency=1",
                        "--loglevel=WARNING",
                        "-n",
                        f"bench{i + 1}-{os.getpid()}@%h",
                        "--without-gossip",
                        "--without-mingle",
                    ],
                    cwd=ROOT,
                    env=os.environ.copy(),
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,
                )
            )

    def wait_ready(self, timeout: float) -> None:
        from config.celery import app

        deadline = time.monotonic() + timeout
        names = {f"bench{i + 1}-{os.getpid()}" for i in range(len(self.procs))}
        while time.monotonic() < deadline:
            replies = app.control.ping(timeout=1.0) or []
            seen = {name.split("@")[0] for reply in replies for name in reply}
            if names <= seen:
                return
            if any(p.poll() is not None for p in self.procs):
                raise SystemExit("a worker exited during start-up; see its log")
        raise SystemExit("workers did not answer a ping in time")

    def pool_children(self) -> list[int]:
        out = []
        for p in self.procs:
            children = Path(f"/proc/{p.pid}/task/{p.pid}/children")
            if children.exists():
                out += [int(x) for x in children.read_text().split()]
        return out

    def stop(self) -> None:
        for p in self.procs:
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGTERM)
        for p in self.procs:
            try:
                p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait(timeout=10)


def wait_runs(run_ids: list[int], timeout: float):
    from metrics.models import MetricRun

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        runs = list(MetricRun.objects.filter(pk__in=run_ids).order_by("pk"))
        if all(r.is_finished for r in runs):
            return runs
        time.sleep(0.05)
    raise SystemExit(f"runs {run_ids} did not finish within {timeout:.0f} s")


def timed_runs(study, owner, slugs: list[str], chunk_size: int, timeout: float) -> tuple[float, list]:
    from metrics.services.runs import metric_run_create

    t0 = time.perf_counter()
    run_ids = [metric_run_create(study=study, metric=s, created_by=owner, chunk_size=chunk_size).pk for s in slugs]
    runs = wait_runs(run_ids, timeout)
    wall = time.perf_counter() - t0
    for r in runs:
        if r.status != "succeeded":
            raise SystemExit(f"run {r.pk} ({r.metric}) {r.status}: {r.error}")
    return wall, runs


def kill_check(study, owner, chunk_size: int, timeout: float, log_dir: Path) -> str:
    """Kill one worker's pool process mid-run; the run must still succeed with one score per candidate."""
    from metrics.models import MetricRun, MetricRunChunk, MetricScore
    from metrics.services.runs import metric_run_create

    workers = Workers(2, log_dir)
    try:
        workers.wait_ready(timeout)
        run = metric_run_create(
            study=study, metric="bleu", created_by=owner, chunk_size=chunk_size, params={"lowercase": True}
        )
        deadline = time.monotonic() + timeout
        while MetricRun.objects.get(pk=run.pk).progress_done < 2:
            if time.monotonic() > deadline:
                raise SystemExit("kill check: the run did not start")
            time.sleep(0.02)
        victim = workers.pool_children()[0]
        os.kill(victim, signal.SIGKILL)
        (run,) = wait_runs([run.pk], timeout)
        n_scores = MetricScore.objects.filter(run=run).count()
        deliveries = sum(MetricRunChunk.objects.filter(run=run).values_list("attempts", flat=True))
        ok = run.status == "succeeded" and n_scores == run.n
        return (
            f"killed pool process {victim} mid-run: run {run.status}, {n_scores} scores for {run.n} candidates, "
            f"{deliveries} chunk deliveries for {run.progress_total} chunks -> {'OK' if ok else 'FAILED'}"
        )
    finally:
        workers.stop()


def main() -> None:
    args = parse_args()
    slugs = [s.strip() for s in args.metrics.split(",") if s.strip()]
    var_dir = Path(tempfile.mkdtemp(prefix="paraeval-bench-workers-"))
    log_dir = var_dir / "logs"
    log_dir.mkdir()
    setup_environment(args, var_dir)
    try:
        t = time.perf_counter()
        study, owner = make_study(args.candidates)
        print(
            f"study: {args.candidates:,} KJV/WEB pairs written in {time.perf_counter() - t:.1f} s; metrics "
            f"{', '.join(slugs)}; chunks of {args.chunk_size}"
        )
        walls = {}
        for n_workers in (1, 2):
            workers = Workers(n_workers, log_dir)
            try:
                workers.wait_ready(args.timeout)
                wall, runs = timed_runs(study, owner, slugs, args.chunk_size, args.timeout)
            finally:
                workers.stop()
            flush_broker(args.broker)
            walls[n_workers] = wall
            detail = "; ".join(
                f"{r.metric} {r.corpus_score:.4f} [{r.ci_low:.4f}, {r.ci_high:.4f}] in {r.progress_total} chunks, "
                f"{r.compute_seconds:.1f} s worker time"
                for r in runs
            )
            print(f"{n_workers} worker process{'es' if n_workers > 1 else ''}: {wall:7.2f} s wall  ({detail})")
        print(f"speed-up with two workers: {walls[1] / walls[2]:.2f}x")
        if not args.no_kill_check:
            print(kill_check(study, owner, max(50, args.chunk_size // 2), args.timeout, log_dir))
    finally:
        flush_broker(args.broker)
        drop_database(args)
        shutil.rmtree(var_dir, ignore_errors=True)


if __name__ == "__main__":
    main()
