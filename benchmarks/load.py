"""Load: simulated judges or annotators against gunicorn, on PostgreSQL or the embedded SQLite.

Two kinds of people, two backends::

    .venv/bin/python benchmarks/load.py judges --backend postgres --users 200 --seconds 120
    .venv/bin/python benchmarks/load.py judges --backend sqlite --users 20 --seconds 120
    .venv/bin/python benchmarks/load.py annotators --backend postgres --users 200 --seconds 120
    .venv/bin/python benchmarks/load.py annotators --backend sqlite --users 20 --seconds 120

gunicorn serves paraeval on 127.0.0.1 (``--workers`` × ``--threads``, gthread); each
simulated person is a thread (spread over ``--client-procs`` processes) with an API
token and no think time, looping until ``--seconds`` have passed:

*judges* (the loop of ``benchmarks/judging_load.py``, imported from there):
    ``GET items/next/`` then ``POST judgments/`` with a fresh idempotency key; every
    ``--retry-every``-th submission is sent again with the same key and must answer
    200 with the stored judgment. Check: every acknowledged judgment is in the
    database exactly once, with its item and scores, and nothing else is.
*annotators*:
    for each pair of their own (``GET assignments/<id>/``), two autosaved drafts
    (``PUT draft/``, each based on the revision the last answer gave) and a submit
    (``POST submit/``); every ``--retry-every``-th draft is sent again unchanged
    (a stale tab) and must be refused with 409. Check: every assignment holds
    exactly the links of its last acknowledged save, its revision equals the number
    of acknowledged saves (none lost, none applied twice), the submitted ones are
    submitted, and the refused stale saves changed nothing.

Printed: p50/p95/p99 latency per request kind, requests and acknowledged writes per
second, errors (any 5xx is one), gunicorn's CPU per request, the load average, and
the database check. Exit status 1 on any error or a failed check.

The PostgreSQL backend creates (and drops) the database ``--database`` on the loopback
server ``--pg``; the SQLite backend uses a SQLite file (WAL) in a temporary var/
directory, as ``make run`` does. Bounded: at most 500 people and 180 seconds; only
loopback addresses are used; everything created is removed at the end.
"""

from __future__ import annotations

import argparse
import http.client
import json
import multiprocessing as mp
import os
import platform
import random
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from urllib.parse import urlsplit

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT))

import judging_load  # noqa: E402  (the judging engineer's benchmark: study, gunicorn, judge loop, checks)

MAX_USERS, MAX_SECONDS = 500, 180


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("who", choices=["judges", "annotators"])
    p.add_argument("--backend", choices=["postgres", "sqlite"], default="postgres")
    p.add_argument("--users", type=int, default=None, help="simulated people (default 200 on postgres, 20 on sqlite)")
    p.add_argument("--seconds", type=float, default=120.0)
    p.add_argument("--originals", type=int, default=300, help="judges: originals of the study")
    p.add_argument("--systems", type=int, default=4, help="judges: systems (plus 3 controls)")
    p.add_argument("--pairs-per-user", type=int, default=60, help="annotators: pairs each one is assigned")
    p.add_argument("--client-procs", type=int, default=2)
    p.add_argument("--workers", type=int, default=4, help="gunicorn worker processes")
    p.add_argument("--threads", type=int, default=4, help="threads per gunicorn worker")
    p.add_argument("--retry-every", type=int, default=10)
    p.add_argument("--port", type=int, default=0)
    p.add_argument("--pg", default="postgres://postgres@127.0.0.1:5432")
    p.add_argument("--database", default="paraeval_bench_load")
    args = p.parse_args(argv)
    if args.users is None:
        args.users = 200 if args.backend == "postgres" else 20
    if not 1 <= args.users <= MAX_USERS or not 1 <= args.seconds <= MAX_SECONDS:
        p.error(f"--users must be 1..{MAX_USERS} and --seconds 1..{MAX_SECONDS}")
    if urlsplit(args.pg).hostname not in judging_load.LOOPBACK:
        p.error("--pg must be a loopback server")
    args.judges = args.users  # the names judging_load's helpers read
    return args


# --- setup ------------------------------------------------------------------------------------------


def setup_environment(args: argparse.Namespace, var_dir: Path) -> dict:
    if args.backend == "postgres":
        return judging_load.setup_environment(args, var_dir)
    env = {
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "CELERY_BROKER_URL": "memory://",
        "PARAEVAL_VAR_DIR": str(var_dir),
        "DEBUG": "off",
        "LOG_LEVEL": "WARNING",
    }
    os.environ.pop("DATABASE_URL", None)
    os.environ.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
    os.environ.update(env)
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    return env


def build_alignment_study(args: argparse.Namespace) -> tuple[int, dict[str, str], float]:
    """A study with ``users × pairs_per_user`` pairs, each assigned to one annotator."""
    import secrets

    from django.contrib.auth.models import User
    from rest_framework.authtoken.models import Token

    from annotation.alignment.importing import PairData, ParsedPairs
    from annotation.alignment.services.assignments import alignment_config_update, assignments_create
    from annotation.alignment.services.pairs import pairs_import_parsed
    from annotation.enums import Role
    from annotation.models import StudyMembership
    from annotation.services.studies import study_create

    owner = User.objects.create_user("bench-researcher", password=secrets.token_hex(8))
    study = study_create(name="Alignment load", owner=owner)
    words = "in the beginning was the word and the word was with god and the same was in the beginning".split()
    parsed = ParsedPairs(filename="load.jsonl", format="jsonl")
    for k in range(args.users * args.pairs_per_user):
        t1 = [words[(k + i) % len(words)] for i in range(8 + k % 9)]
        t2 = [words[(3 * k + i) % len(words)] for i in range(7 + k % 11)]
        parsed.pairs.append(PairData(f"p{k}", f"p{k}", " ".join(t1), " ".join(t2), t1, t2, k + 1))
    start = time.perf_counter()
    pairs_import_parsed(study=study, parsed=parsed)
    User.objects.bulk_create([User(username=f"annotator{i:03d}") for i in range(args.users)])
    users = list(User.objects.filter(username__startswith="annotator"))
    StudyMembership.objects.bulk_create([StudyMembership(study=study, user=u, role=Role.ANNOTATOR) for u in users])
    alignment_config_update(study=study, annotators_per_pair=1)
    assignments_create(study=study)
    tokens = {u.username: Token.objects.create(user=u).key for u in users}
    return study.pk, tokens, time.perf_counter() - start


# --- the simulated annotators ---------------------------------------------------------------------


def random_links(rng: random.Random, n1: int, n2: int) -> tuple[list, list]:
    cells = {(rng.randrange(n1), rng.randrange(n2)) for _ in range(rng.randint(1, min(n1, n2)))}
    sure = sorted([list(c) for c in cells if rng.random() < 0.8])
    possible = sorted([list(c) for c in cells if list(c) not in sure])
    return sure, possible


def annotator_loop(port: int, token: str, until: float, retry_every: int, out: list, lock: threading.Lock):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    headers = {"Authorization": f"Token {token}", "Content-Type": "application/json", "Accept": "application/json"}
    lat = {"GET pair": [], "PUT draft": [], "POST submit": []}
    acked: dict[int, dict] = {}  # assignment id -> last acknowledged save (links, revision, submitted, n saves)
    errors, stale_refused = [], 0
    rng = random.Random(token)
    n_drafts = 0

    def call(kind, method, path, body=None):
        t = time.perf_counter()
        conn.request(method, path, body=None if body is None else json.dumps(body), headers=headers)
        r = conn.getresponse()
        data = r.read()
        lat[kind].append(time.perf_counter() - t)
        return r.status, data

    try:
        status, data = call("GET pair", "GET", "/api/alignment/assignments/")
        if status != 200:
            raise RuntimeError(f"list {status} {data[:200]!r}")
        todo = [a["id"] for a in json.loads(data) if a["status"] != "submitted"]
        for aid in todo:
            if time.time() >= until:
                break
            status, data = call("GET pair", "GET", f"/api/alignment/assignments/{aid}/")
            if status != 200:
                errors.append(f"get {status} {data[:200]!r}")
                break
            a = json.loads(data)
            revision, n1, n2 = a["revision"], len(a["tokens1"]), len(a["tokens2"])
            for step in ("draft", "draft", "submit"):
                sure, possible = random_links(rng, n1, n2)
                body = {"sure": sure, "possible": possible, "revision": revision, "active_seconds": 1.0 + revision}
                if step == "draft":
                    status, data = call("PUT draft", "PUT", f"/api/alignment/assignments/{aid}/draft/", body)
                else:
                    status, data = call("POST submit", "POST", f"/api/alignment/assignments/{aid}/submit/", body)
                if status != 200:
                    errors.append(f"{step} {status} {data[:200]!r}")
                    raise RuntimeError("stop")
                revision = json.loads(data)["revision"]
                prev = acked.get(aid, {"saves": 0})
                acked[aid] = {
                    "sure": sure,
                    "possible": possible,
                    "revision": revision,
                    "submitted": step == "submit",
                    "saves": prev["saves"] + 1,
                }
                if step == "draft":
                    n_drafts += 1
                    if retry_every and n_drafts % retry_every == 0:
                        # the same save again, as a stale tab would send it: refused, nothing changes
                        status, data = call("PUT draft", "PUT", f"/api/alignment/assignments/{aid}/draft/", body)
                        if status != 409:
                            errors.append(f"stale draft answered {status} {data[:200]!r}")
                            raise RuntimeError("stop")
                        stale_refused += 1
    except (OSError, http.client.HTTPException) as exc:
        errors.append(repr(exc))
    except RuntimeError as exc:
        if str(exc) != "stop":
            errors.append(str(exc))
    finally:
        conn.close()
    with lock:
        out.append({"lat": lat, "acked": acked, "errors": errors, "stale_refused": stale_refused})


def _clients(target, port, tokens, until, retry_every, queue):
    out, lock = [], threading.Lock()
    threads = [threading.Thread(target=target, args=(port, *t, until, retry_every, out, lock)) for t in tokens]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    queue.put(out)


def run_clients(args, target, per_user: list[tuple]) -> tuple[list[dict], float]:
    """Run ``target(port, *per_user[i], until, retry_every, out, lock)`` for every user, in processes."""
    start = time.time() + 1.0
    until = start + args.seconds
    chunks = [per_user[i :: args.client_procs] for i in range(args.client_procs)]
    ctx = mp.get_context("fork")
    queue = ctx.Queue()
    procs = [
        ctx.Process(target=_clients, args=(target, args.port, c, until, args.retry_every, queue)) for c in chunks if c
    ]
    for p in procs:
        p.start()
    results = []
    for _ in procs:
        results.extend(queue.get(timeout=args.seconds + 180))
    for p in procs:
        p.join(timeout=30)
    return results, max(time.time(), until) - start


def check_alignments(study_id: int, results: list[dict]) -> tuple[bool, str]:
    from django.db import connection

    from annotation.alignment.models import AlignmentAssignment

    connection.close()
    acked = {aid: a for r in results for aid, a in r["acked"].items()}
    rows = {a.pk: a for a in AlignmentAssignment.objects.filter(pair__study_id=study_id)}
    wrong, lost_or_doubled, not_submitted, touched = [], [], [], []
    for aid, a in acked.items():
        row = rows[aid]
        if (sorted(row.sure), sorted(row.possible)) != (a["sure"], a["possible"]):
            wrong.append(aid)
        if row.revision != a["revision"] or row.revision != a["saves"]:
            lost_or_doubled.append(aid)
        if a["submitted"] and row.status != "submitted":
            not_submitted.append(aid)
    for aid, row in rows.items():
        if aid not in acked and row.revision != 0:
            touched.append(aid)
    ok = not (wrong or lost_or_doubled or not_submitted or touched)
    n_saves = sum(a["saves"] for a in acked.values())
    return ok, (
        f"{len(acked)} assignments written with {n_saves} acknowledged saves "
        f"({sum(a['submitted'] for a in acked.values())} submitted); different links {len(wrong)}, "
        f"revision != acknowledged saves {len(lost_or_doubled)}, not submitted {len(not_submitted)}, "
        f"written without acknowledgement {len(touched)}"
    )


# --- main ---------------------------------------------------------------------------------------------


def report_latencies(kinds: dict[str, list[float]]) -> None:
    pct = judging_load.pct
    everything = [x for v in kinds.values() for x in v]
    for name, lat in list(kinds.items()) + [("all requests", everything)]:
        if not lat:
            continue
        print(
            f"{name:>13}: n = {len(lat):7d}   p50 = {1000 * pct(lat, 0.5):7.1f} ms   p95 = {1000 * pct(lat, 0.95):7.1f} ms"
            f"   p99 = {1000 * pct(lat, 0.99):7.1f} ms   mean = {1000 * statistics.fmean(lat):7.1f} ms"
        )


def main(argv=None) -> int:
    args = parse_args(argv)
    var_dir = Path(tempfile.mkdtemp(prefix="paraeval-bench-load-"))
    gunicorn = None
    try:
        env = setup_environment(args, var_dir)
        if args.who == "judges":
            study_id, tokens, build_s = judging_load.build_study(args)
            what = (
                f"{args.originals} originals × ({args.systems} systems + 3 controls) = "
                f"{args.originals * (args.systems + 3)} items per judge, fully crossed"
            )
        else:
            study_id, tokens, build_s = build_alignment_study(args)
            what = f"{args.users * args.pairs_per_user} pairs, {args.pairs_per_user} per annotator"
        print(f"{args.who}: {args.users} on {args.backend}; {what}; built in {build_s:.1f} s")
        from django.db import connections

        connections.close_all()  # no connection may cross the fork into the client processes
        gunicorn = judging_load.start_gunicorn(args, env)
        cpu0, load0 = judging_load.process_tree_cpu(gunicorn.pid), judging_load.load_average()
        if args.who == "judges":
            results, elapsed = judging_load.run_load(args, study_id, tokens)
            kinds = {
                "GET next": [x for r in results for x in r["next"]],
                "POST submit": [x for r in results for x in r["submit"]],
            }
            acked = sum(len(r["acked"]) for r in results)
            extra = f"same-key retries answered with the stored judgment: {sum(r['replays'] for r in results)}"
            ok, detail = judging_load.check_database(study_id, results)
            unit = "judgments"
        else:
            results, elapsed = run_clients(args, annotator_loop, [(tokens[n],) for n in sorted(tokens)])
            kinds = {k: [x for r in results for x in r["lat"][k]] for k in ("GET pair", "PUT draft", "POST submit")}
            acked = sum(a["saves"] for r in results for a in r["acked"].values())
            extra = f"stale saves refused with 409: {sum(r['stale_refused'] for r in results)}"
            ok, detail = check_alignments(study_id, results)
            unit = "saves (drafts + submits)"
        cpu = judging_load.process_tree_cpu(gunicorn.pid) - cpu0
        errors = [e for r in results for e in r["errors"]]
        n_requests = sum(len(v) for v in kinds.values())
        n_5xx = sum(1 for e in errors if any(f" {code} " in f" {e} " for code in range(500, 600)))
        print(
            f"machine: {platform.machine()}, {os.cpu_count()} cores; load average {load0} -> "
            f"{judging_load.load_average()}; gunicorn {args.workers} workers × {args.threads} threads; clients "
            f"{args.client_procs} processes; load {elapsed:.1f} s"
        )
        report_latencies(kinds)
        print(
            f"throughput: {n_requests / elapsed:.1f} requests/s; {acked} {unit} acknowledged "
            f"({acked / elapsed:.1f}/s); {extra}"
        )
        print(f"gunicorn CPU: {cpu:.1f} s ({1000 * cpu / max(n_requests, 1):.1f} ms per request)")
        print(f"errors: {len(errors)} ({n_5xx} of them 5xx)" + (": " + "; ".join(errors[:5]) if errors else ""))
        print(("database check OK: " if ok else "database check FAILED: ") + detail)
        return 0 if ok and not errors else 1
    finally:
        if gunicorn is not None:
            os.killpg(gunicorn.pid, signal.SIGTERM)
            try:
                gunicorn.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(gunicorn.pid, signal.SIGKILL)
        try:
            from django.db import connections

            connections.close_all()
        except Exception:  # noqa: BLE001 - Django may not have been set up
            pass
        if args.backend == "postgres":
            import psycopg

            with psycopg.connect(f"{args.pg}/postgres", autocommit=True) as conn:
                conn.execute(f'DROP DATABASE IF EXISTS "{args.database}" WITH (FORCE)')
        shutil.rmtree(var_dir, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
