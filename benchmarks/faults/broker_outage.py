"""Kill the broker (Redis) under load: judging goes on, queued work runs once it is back.

paraeval runs as in a lab: gunicorn and one ``celery worker`` on PostgreSQL, with a
Redis broker of the script's own (``redis-server`` on a free loopback port, no
persistence). ``--judges`` simulated judges rate without pause through the API
(the loop of ``benchmarks/judging_load.py``: any answer but 201/200 is an error).
``--outage-after`` seconds in, Redis is SIGKILLed; while it is down a researcher
starts a background import, a metric run and a report through the API, and each
request is timed. After ``--outage-seconds`` Redis starts again, empty (what it
held is lost, as after a crash without persistence); the worker reconnects by
itself and ``manage.py requeue_jobs`` sends the waiting jobs again.

Checks: no judge saw an error; every acknowledged judgment is stored exactly once;
the researcher's requests were answered (201/202) during the outage; the import,
the metric run (one score per candidate) and the report all succeed afterwards.

Usage::

    .venv/bin/python benchmarks/faults/broker_outage.py [--judges 20] [--seconds 40]
"""

from __future__ import annotations

import argparse
import http.client
import io
import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE.parents[1]))

import judging_load  # noqa: E402

from benchmarks.faults.common import ROOT, Installation, free_port, wait_until  # noqa: E402


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--judges", type=int, default=20)
    p.add_argument("--seconds", type=float, default=40.0)
    p.add_argument("--outage-after", type=float, default=10.0)
    p.add_argument("--outage-seconds", type=float, default=12.0)
    p.add_argument("--pg", default="postgres://postgres@127.0.0.1:5432")
    p.add_argument("--originals", type=int, default=60)
    p.add_argument("--systems", type=int, default=2)
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--threads", type=int, default=4)
    p.add_argument("--client-procs", type=int, default=2)
    p.add_argument("--timeout", type=float, default=180.0)
    args = p.parse_args(argv)
    if not 1 <= args.judges <= 200 or args.outage_after + args.outage_seconds >= args.seconds or args.seconds > 180:
        p.error("--judges 1..200; the outage must end before the load does; --seconds at most 180")
    args.port, args.retry_every = 0, 10
    return args


class Redis:
    """A redis-server of our own on a free loopback port, without persistence."""

    def __init__(self, directory: Path):
        self.exe = shutil.which("redis-server")
        if self.exe is None:
            raise SystemExit("redis-server is not installed")
        self.port, self.dir, self.proc = free_port(), directory, None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        self.proc = subprocess.Popen(
            [
                self.exe,
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
                "--dir",
                str(self.dir),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        import redis

        if not wait_until(lambda: _ping(redis, self.url), timeout=20, interval=0.1):
            raise SystemExit("redis-server did not start")

    def kill(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=10)


def _ping(redis, url) -> bool:
    try:
        return redis.Redis.from_url(url, socket_timeout=0.5).ping()
    except Exception:  # noqa: BLE001 - not up yet
        return False


def api(port: int, token: str, method: str, path: str, body=None, files: bytes | None = None):
    """One API call; returns (status, json or text, seconds)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    headers = {"Authorization": f"Token {token}", "Accept": "application/json"}
    if files is not None:
        boundary = "paraevalfaults"
        payload = (
            (
                f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="late.csv"\r\n'
                f"Content-Type: text/csv\r\n\r\n"
            ).encode()
            + files
            + f"\r\n--{boundary}--\r\n".encode()
        )
        headers["Content-Type"] = f"multipart/form-data; boundary={boundary}"
    else:
        payload = None if body is None else json.dumps(body).encode()
        headers["Content-Type"] = "application/json"
    t = time.perf_counter()
    conn.request(method, path, body=payload, headers=headers)
    r = conn.getresponse()
    data = r.read()
    conn.close()
    try:
        data = json.loads(data)
    except ValueError:
        data = data[:300]
    return r.status, data, time.perf_counter() - t


def main(argv=None) -> int:
    args = parse_args(argv)
    inst = Installation("postgres", pg=args.pg, broker="redis://127.0.0.1:1/0")
    redis_server = Redis(inst.var_dir)
    redis_server.start()
    inst.broker = None  # our own server: nothing to clean in it
    inst.env["CELERY_BROKER_URL"] = redis_server.url
    inst.env["CONN_MAX_AGE"] = "600"
    inst.env["PARAEVAL_IMPORT_BACKGROUND_ROWS"] = "10"  # the researcher's import goes to the worker
    args.database = inst.database
    gunicorn = None
    failures = []
    try:
        inst.setup()
        study_id, tokens, _ = judging_load.build_study(args)
        from django.contrib.auth.models import User
        from rest_framework.authtoken.models import Token

        from annotation.services.studies import researcher_grant

        owner = User.objects.get(username="bench-researcher")
        researcher_grant(user=owner)
        owner_token = Token.objects.create(user=owner).key
        from django.db import connections

        connections.close_all()
        gunicorn = judging_load.start_gunicorn(args, inst.env)
        inst.start_worker("outage")

        import multiprocessing as mp

        start = time.time() + 1.0
        until = start + args.seconds
        names = sorted(tokens)
        ctx = mp.get_context("fork")
        queue = ctx.Queue()
        procs = [
            ctx.Process(
                target=judging_load.client_process,
                args=(
                    args.port,
                    study_id,
                    [tokens[n] for n in names[i :: args.client_procs]],
                    until,
                    args.retry_every,
                    queue,
                ),
            )
            for i in range(args.client_procs)
        ]
        for p in procs:
            p.start()
        time.sleep(max(0.0, start + args.outage_after - time.time()))
        redis_server.kill()
        down_at = time.monotonic()
        asked = {}
        # a background import of a new system: the originals' texts must match the study's
        from annotation.models import Original

        texts = dict(Original.objects.filter(study_id=study_id).values_list("external_id", "text"))
        connections.close_all()
        buf = io.StringIO()
        import csv

        w = csv.writer(buf)
        w.writerow(["original_id", "original", "late"])
        for oid, text in sorted(texts.items()):
            w.writerow([oid, text, f"Late paraphrase of {oid}."])
        rows = buf.getvalue()
        s = study_id
        asked["import"] = api(args.port, owner_token, "POST", f"/api/studies/{s}/import/", files=rows.encode())
        asked["metric run"] = api(
            args.port,
            owner_token,
            "POST",
            f"/api/studies/{s}/metric-runs/create/",
            {"metric": "pinc", "chunk_size": 50},
        )
        asked["report"] = api(args.port, owner_token, "POST", f"/api/studies/{s}/reports/create/", {"n_boot": 100})
        for what, (status, body, seconds) in asked.items():
            print(
                f"while the broker was down: {what}: HTTP {status} in {seconds:.1f} s"
                + ("" if status in (201, 202) else f" {body}")
            )
            if status not in (201, 202):
                failures.append(f"{what} answered {status}")
        time.sleep(max(0.0, down_at + args.outage_seconds - time.monotonic()))
        redis_server.start()
        print(f"broker down for {time.monotonic() - down_at:.1f} s, started again (empty)")
        requeue = subprocess.run(
            [sys.executable, "manage.py", "requeue_jobs"],
            cwd=ROOT,
            env=inst.env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        print("requeue_jobs: " + "; ".join(requeue.stdout.split("\n")[:-1]))

        results = []
        for _ in procs:
            results.extend(queue.get(timeout=args.seconds + 120))
        for p in procs:
            p.join(timeout=30)
        errors = [e for r in results for e in r["errors"]]
        acked = sum(len(r["acked"]) for r in results)
        print(
            f"judges: {args.judges} for {args.seconds:.0f} s, {acked} judgments acknowledged, {len(errors)} errors"
            + (f": {errors[:3]}" if errors else "")
        )
        if errors:
            failures.append("judges saw errors")
        ok, detail = judging_load.check_database(study_id, results)
        print(("database check OK: " if ok else "database check FAILED: ") + detail)
        if not ok:
            failures.append("judgments")

        from annotation.models import Candidate, ImportJob
        from metrics.models import MetricRun, MetricScore
        from metrics.reports.models import Report

        ids = {what: body.get("id") for what, (status, body, _) in asked.items() if isinstance(body, dict)}
        models = {"import": ImportJob, "metric run": MetricRun, "report": Report}
        for what, model in models.items():
            pk = ids.get(what)
            obj = pk and wait_until(
                lambda: (o := model.objects.get(pk=pk)).is_finished and o, timeout=args.timeout, interval=0.3
            )
            if not obj:
                failures.append(f"{what} did not finish")
                print(f"{what}: did not finish\n{inst.log_tail()}")
                continue
            extra = ""
            if what == "import":
                extra = f", {Candidate.objects.filter(original__study_id=study_id, system__name='late').count()} rows"
            if what == "metric run":
                n = MetricScore.objects.filter(run=obj).count()
                extra = f", {n} scores for {obj.n} candidates"
                if n != obj.n:
                    failures.append("metric run scores")
            print(f"{what}: {obj.status}{extra}" + (f" — {obj.error}" if obj.error else ""))
            if obj.status != "succeeded":
                failures.append(f"{what} {obj.status}")
    finally:
        judging_load.harness.stop_process(gunicorn)  # benchmarks/harness.py
        redis_server.kill()
        inst.teardown()
    print("OK" if not failures else f"FAILED: {failures}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
