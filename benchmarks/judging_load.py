"""N simulated judges rate at once against gunicorn + PostgreSQL on loopback.

A PEM-sized study (``--originals`` originals × ``--systems`` systems + 3 controls
each; 300 × 4 gives PEM's 2,100 items) is opened for ``--judges`` judges, each with
an API token. gunicorn serves paraeval on 127.0.0.1; each simulated judge is a
thread (spread over ``--client-procs`` processes) that loops for ``--seconds``:

    GET  /api/judging/studies/<id>/items/next/     (the judge's next item)
    POST /api/judging/studies/<id>/judgments/      (four scores, a fresh key)

and, for one submission in ``--retry-every``, sends the same POST again with the
same key (a retry after a timeout), which must answer 200 with the stored judgment.
There is no think time: this measures what the server sustains.

Prints p50/p95 latency per request kind, acknowledged submissions per second, and
then checks the database: exactly one judgment per acknowledged key, with the
acknowledged item and scores, and nothing else.

Everything it creates is its own and removed at the end: the database
``--database`` (dropped first if it exists), a temporary var/ directory, the gunicorn
process. Only loopback addresses are accepted. Bounded: at most 500 judges and
120 seconds of load.

Usage::

    .venv/bin/python benchmarks/judging_load.py --judges 50 --seconds 60
"""

from __future__ import annotations

import argparse
import http.client
import json
import multiprocessing as mp
import os
import platform
import secrets
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from urllib.parse import urlsplit

sys.path.insert(0, str(Path(__file__).resolve().parent))
import harness  # noqa: E402  (shared start/stop of servers: benchmarks/harness.py)

ROOT = Path(__file__).resolve().parents[1]
LOOPBACK = {"127.0.0.1", "localhost", "::1"}
MAX_JUDGES, MAX_SECONDS = 500, 120


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--judges", type=int, default=50)
    p.add_argument("--seconds", type=float, default=60.0, help=f"load duration (at most {MAX_SECONDS})")
    p.add_argument("--originals", type=int, default=300)
    p.add_argument("--systems", type=int, default=4)
    p.add_argument("--client-procs", type=int, default=2, help="processes the judge threads are spread over")
    p.add_argument("--workers", type=int, default=4, help="gunicorn worker processes")
    p.add_argument("--threads", type=int, default=4, help="threads per gunicorn worker (gthread)")
    p.add_argument("--retry-every", type=int, default=10, help="resend every n-th submission with the same key")
    p.add_argument("--port", type=int, default=0, help="0: a free port")
    p.add_argument("--pg", default="postgres://postgres@127.0.0.1:5432", help="PostgreSQL server URL (no db name)")
    p.add_argument("--database", default="paraeval_bench_judging")
    p.add_argument("--keep", action="store_true", help="keep the database afterwards")
    args = p.parse_args()
    if not 1 <= args.judges <= MAX_JUDGES:
        p.error(f"--judges must be 1..{MAX_JUDGES}")
    if not 1 <= args.seconds <= MAX_SECONDS:
        p.error(f"--seconds must be 1..{MAX_SECONDS}")
    if urlsplit(args.pg).hostname not in LOOPBACK:
        p.error("--pg must be a loopback server: this script only loads this machine")
    return args


# --- setup ------------------------------------------------------------------------------------


def setup_environment(args: argparse.Namespace, var_dir: Path) -> dict:
    import psycopg

    with psycopg.connect(f"{args.pg}/postgres", autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{args.database}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{args.database}"')
    env = {
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "DATABASE_URL": f"{args.pg}/{args.database}",
        "CELERY_BROKER_URL": "memory://",
        "PARAEVAL_VAR_DIR": str(var_dir),
        "DEBUG": "off",
        "LOG_LEVEL": "WARNING",
        "CONN_MAX_AGE": "600",
    }
    os.environ.update(env)
    os.environ.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    return env


def build_study(args: argparse.Namespace) -> tuple[int, dict[str, str], float]:
    """The study, opened; returns (study id, username → API token, seconds to open)."""
    from django.contrib.auth.models import User
    from rest_framework.authtoken.models import Token

    from annotation.enums import Role
    from annotation.judging.services.opening import study_judging_open
    from annotation.models import Candidate, Original, StudyMembership, System
    from annotation.services.studies import study_create

    owner = User.objects.create_user("bench-researcher", password=secrets.token_hex(8))
    study = study_create(name="Judging load", owner=owner)
    words = "the word was with god and in beginning light life men darkness shineth comprehended it not".split()
    originals = Original.objects.bulk_create(
        [
            Original(
                study=study,
                external_id=f"o{i}",
                position=i,
                text=" ".join(words[(i * 7 + k) % len(words)] for k in range(8 + i % 9)).capitalize() + ".",
            )
            for i in range(args.originals)
        ]
    )
    systems = System.objects.bulk_create([System(study=study, name=f"system{s}") for s in range(args.systems)])
    Candidate.objects.bulk_create(
        [
            Candidate(original=o, system=s, text=f"{o.text[:-1]} as told by {s.name}.")
            for o in originals
            for s in systems
        ]
    )
    users = User.objects.bulk_create([User(username=f"judge{i:03d}") for i in range(args.judges)])
    users = list(User.objects.filter(username__startswith="judge"))
    StudyMembership.objects.bulk_create([StudyMembership(study=study, user=u, role=Role.JUDGE) for u in users])
    tokens = {u.username: Token.objects.create(user=u).key for u in users}
    start = time.perf_counter()
    study_judging_open(study=study, user=owner)
    return study.pk, tokens, time.perf_counter() - start


def free_port() -> int:
    return harness.free_port()


def start_gunicorn(args: argparse.Namespace, env: dict) -> subprocess.Popen:
    """gunicorn through the shared harness (``benchmarks/harness.py``)."""
    if not args.port:
        args.port = harness.free_port()
    return harness.start_gunicorn(env, port=args.port, workers=args.workers, threads=args.threads)


# --- the simulated judges ------------------------------------------------------------------------


def judge_loop(port: int, study_id: int, token: str, until: float, retry_every: int, out: list, lock: threading.Lock):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    headers = {"Authorization": f"Token {token}", "Content-Type": "application/json", "Accept": "application/json"}
    lat_next, lat_submit, acked, errors, replays = [], [], [], [], 0
    n = 0

    def call(method, path, body=None):
        t = time.perf_counter()
        conn.request(method, path, body=body, headers=headers)
        r = conn.getresponse()
        data = r.read()
        return r.status, data, time.perf_counter() - t

    try:
        while time.time() < until:
            status, data, dt = call("GET", f"/api/judging/studies/{study_id}/items/next/")
            lat_next.append(dt)
            if status != 200:
                errors.append(f"next {status} {data[:200]!r}")
                break
            body = json.loads(data)
            if body["finished"]:
                break
            item = body["item"]
            n += 1
            scores = {
                "adequacy": 1 + n % 5,
                "fluency": 1 + (n * 3) % 5,
                "dissimilarity": 1 + (n * 7) % 5,
                "overall": 1 + (n * 2) % 5,
            }
            payload = json.dumps(
                {
                    "item": item["token"],
                    "key": secrets.token_urlsafe(12),
                    "scores": scores,
                    "serve_stamp": item["serve_stamp"],
                    "active_seconds": 1.0,
                }
            )
            status, data, dt = call("POST", f"/api/judging/studies/{study_id}/judgments/", payload)
            lat_submit.append(dt)
            if status != 201:
                errors.append(f"submit {status} {data[:200]!r}")
                break
            key = json.loads(payload)["key"]
            acked.append((key, item["token"], scores))
            if retry_every and n % retry_every == 0:
                status, data, dt = call("POST", f"/api/judging/studies/{study_id}/judgments/", payload)
                lat_submit.append(dt)
                if status != 200 or json.loads(data)["created"]:
                    errors.append(f"replay {status} {data[:200]!r}")
                    break
                replays += 1
    except (OSError, http.client.HTTPException) as exc:
        errors.append(repr(exc))
    finally:
        conn.close()
    with lock:
        out.append({"next": lat_next, "submit": lat_submit, "acked": acked, "errors": errors, "replays": replays})


def client_process(port, study_id, tokens, until, retry_every, queue):
    out, lock = [], threading.Lock()
    threads = [
        threading.Thread(target=judge_loop, args=(port, study_id, tok, until, retry_every, out, lock)) for tok in tokens
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    queue.put(out)


def run_load(args, study_id: int, tokens: dict[str, str]) -> tuple[list[dict], float]:
    start = time.time() + 1.0  # let every process start before the clock runs
    until = start + args.seconds
    names = sorted(tokens)
    chunks = [[tokens[n] for n in names[i :: args.client_procs]] for i in range(args.client_procs)]
    queue = mp.get_context("fork").Queue()
    procs = [
        mp.get_context("fork").Process(
            target=client_process, args=(args.port, study_id, c, until, args.retry_every, queue)
        )
        for c in chunks
        if c
    ]
    for p in procs:
        p.start()
    results = []
    for _ in procs:
        results.extend(queue.get(timeout=args.seconds + 120))
    for p in procs:
        p.join(timeout=30)
    return results, max(time.time(), until) - start


process_tree_cpu = harness.process_tree_cpu
load_average = harness.load_average


def pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    values = sorted(values)
    return values[min(len(values) - 1, int(q * (len(values) - 1) + 0.5))]


def check_database(study_id: int, results: list[dict]) -> tuple[bool, str]:
    from django.db import connection

    from annotation.judging.protocols.absolute.models import Judgment

    connection.close()  # gunicorn wrote meanwhile: read fresh
    acked = {key: (token, scores) for r in results for key, token, scores in r["acked"]}
    stored = {
        j.key: (j.item.token, j.scores) for j in Judgment.objects.filter(study_id=study_id).select_related("item")
    }
    missing = sorted(set(acked) - set(stored))
    extra = sorted(set(stored) - set(acked))
    wrong = sorted(k for k in set(acked) & set(stored) if acked[k] != stored[k])
    ok = not missing and not extra and not wrong
    return ok, (
        f"{len(stored)} judgments stored, {len(acked)} acknowledged; missing {len(missing)}, "
        f"unacknowledged {len(extra)}, different {len(wrong)}"
    )


def main() -> int:
    args = parse_args()
    var_dir = Path(tempfile.mkdtemp(prefix="paraeval-bench-judging-"))
    gunicorn = None
    try:
        env = setup_environment(args, var_dir)
        study_id, tokens, open_seconds = build_study(args)
        n_items = args.originals * (args.systems + 3)
        print(
            f"study: {args.originals} originals × ({args.systems} systems + 3 controls) = {n_items} items; "
            f"{args.judges} judges, fully crossed; opened in {open_seconds:.1f} s"
        )
        from django.db import connections

        connections.close_all()  # no connection may cross the fork into the client processes
        gunicorn = start_gunicorn(args, env)
        cpu_before, load_before = process_tree_cpu(gunicorn.pid), load_average()
        results, elapsed = run_load(args, study_id, tokens)
        server_cpu = process_tree_cpu(gunicorn.pid) - cpu_before
        lat_next = [x for r in results for x in r["next"]]
        lat_submit = [x for r in results for x in r["submit"]]
        n_acked = sum(len(r["acked"]) for r in results)
        n_replays = sum(r["replays"] for r in results)
        errors = [e for r in results for e in r["errors"]]
        print(
            f"machine: {platform.machine()}, {os.cpu_count()} cores; gunicorn {args.workers} workers × "
            f"{args.threads} threads; clients {args.client_procs} processes; load {elapsed:.1f} s"
        )
        for name, lat in (("GET next", lat_next), ("POST submit", lat_submit), ("all requests", lat_next + lat_submit)):
            print(
                f"{name:>13}: n = {len(lat):6d}   p50 = {1000 * pct(lat, 0.5):7.1f} ms   "
                f"p95 = {1000 * pct(lat, 0.95):7.1f} ms   mean = {1000 * statistics.fmean(lat) if lat else 0:7.1f} ms"
            )
        print(
            f"submissions acknowledged: {n_acked} ({n_acked / elapsed:.1f} per second); "
            f"same-key retries answered with the stored judgment: {n_replays}"
        )
        n_requests = len(lat_next) + len(lat_submit)
        print(
            f"gunicorn CPU: {server_cpu:.1f} s = {1000 * server_cpu / max(1, n_requests):.1f} ms per request; "
            f"load average before/after: {load_before} / {load_average()}"
        )
        if errors:
            print(f"ERRORS ({len(errors)}): " + "; ".join(errors[:5]))
        ok, detail = check_database(study_id, results)
        print(("database check OK: " if ok else "database check FAILED: ") + detail)
        return 0 if ok and not errors else 1
    finally:
        harness.stop_process(gunicorn)
        try:
            from django.db import connections

            connections.close_all()
        except Exception:  # noqa: BLE001 - Django may not have been set up
            pass
        if not args.keep:
            import psycopg

            with psycopg.connect(f"{args.pg}/postgres", autocommit=True) as conn:
                conn.execute(f'DROP DATABASE IF EXISTS "{args.database}" WITH (FORCE)')
        shutil.rmtree(var_dir, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
