"""N Prolific participants join a field study within a minute and each rate K items, on PostgreSQL.

A study of ``--originals`` × ``--systems`` candidates is opened with "exactly 2 judges
per item" and no judges; a Prolific join link gives each participant ``--items`` items.
gunicorn serves paraeval on 127.0.0.1; each participant is a thread (spread over
``--client-procs`` processes) that arrives at a random moment within ``--arrive``
seconds and then, as a browser would:

    GET  /join/<token>/?PROLIFIC_PID=…&STUDY_ID=…&SESSION_ID=…   (the consent page)
    POST /join/<token>/  action=accept                         (joins: account, items; session login)
    then per item: GET /api/judging/studies/<id>/items/next/, a pause of ``--pause`` s
    (± 50 %), POST /api/judging/studies/<id>/judgments/         (session + CSRF, as the page does)
    GET  /judge/studies/<id>/done/                               (the end page with the code)

Prints p50/p95 latency per request kind and then checks the database: one participant
per PROLIFIC_PID, exactly ``--items`` distinct items each, no item held twice by one
participant, every acknowledged judgment stored once, live judges per item balanced
(max − min ≤ 1), everyone completed with the code shown.

It creates and drops its own database (``--database``) and gunicorn; loopback only.

Usage::

    .venv/bin/python benchmarks/join_load.py --participants 500 --items 20
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import random
import re
import secrets
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import harness  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--participants", type=int, default=500)
    p.add_argument("--items", type=int, default=20, help="items each participant rates")
    p.add_argument("--arrive", type=float, default=60.0, help="participants arrive within this many seconds")
    p.add_argument("--pause", type=float, default=2.0, help="mean seconds a participant spends on an item")
    p.add_argument("--originals", type=int, default=300)
    p.add_argument("--systems", type=int, default=4)
    p.add_argument("--client-procs", type=int, default=2)
    p.add_argument("--workers", type=int, default=4)
    p.add_argument("--threads", type=int, default=4)
    p.add_argument("--pg", default="postgres://postgres@127.0.0.1:5432")
    p.add_argument("--database", default="paraeval_join")
    args = p.parse_args()
    if not 1 <= args.participants <= 1000:
        p.error("--participants must be 1..1000")
    harness.require_loopback(args.pg)
    return args


def setup(args, var_dir: Path) -> tuple[dict, int, str]:
    url = harness.fresh_database(args.pg, args.database)
    env = {
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "DATABASE_URL": url,
        "CELERY_BROKER_URL": "memory://",
        "PARAEVAL_VAR_DIR": str(var_dir),
        "DEBUG": "off",
        "LOG_LEVEL": "WARNING",
        "CONN_MAX_AGE": "600",
        # Every simulated participant comes from 127.0.0.1, and the benchmark measures how many joins the
        # server itself can take: both join limits are off.
        "PARAEVAL_JOIN_PER_ADDRESS_PER_HOUR": "0",
        "PARAEVAL_JOIN_PER_LINK_PER_MINUTE": "0",
    }
    os.environ.update(env)
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()
    from django.contrib.auth.models import User
    from django.core.management import call_command

    from annotation.judging.services.design import design_update
    from annotation.judging.services.opening import study_judging_open
    from annotation.models import Candidate, Original, System
    from annotation.participation.services import join_link_create
    from annotation.services.studies import study_create

    call_command("migrate", verbosity=0)
    owner = User.objects.create_user("bench-researcher", password=secrets.token_hex(8))
    study = study_create(name="Join load", owner=owner)
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
    design_update(
        study=study,
        changes={
            "judges_mode": "k",
            "judges_per_item": 2,
            "control_counts": {"identical": 0, "random": 0, "unigram": 0},
        },
    )
    study_judging_open(study=study, user=owner)
    link = join_link_create(
        study=study, role="judge", platform="prolific", items_per_participant=args.items, completion_code="BENCH001"
    )
    return env, study.pk, link.token


def participant(port: int, study_id: int, token: str, start_at: float, pause: float, out: list, lock):
    import requests

    base = f"http://127.0.0.1:{port}"
    s = requests.Session()
    rec = {"consent": [], "accept": [], "next": [], "submit": [], "done": [], "errors": [], "acked": [], "pid": ""}
    pid, sid, sess = (secrets.token_hex(12) for _ in range(3))
    rec["pid"] = pid
    rng = random.Random(pid)

    def timed(kind, method, url, follow=False, **kw):
        t = time.perf_counter()
        r = s.request(method, base + url, timeout=60, allow_redirects=follow, **kw)
        rec[kind].append(time.perf_counter() - t)
        return r

    time.sleep(max(0.0, start_at - time.time()))
    try:
        # The join page moves the ids into the session and redirects to the bare link: both count as "consent".
        r = timed(
            "consent",
            "GET",
            f"/join/{token}/",
            follow=True,
            params={"PROLIFIC_PID": pid, "STUDY_ID": sid, "SESSION_ID": sess},
        )
        csrf = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', r.text).group(1)
        r = timed(
            "accept",
            "POST",
            f"/join/{token}/",
            data={
                "csrfmiddlewaretoken": csrf,
                "action": "accept",
                "PROLIFIC_PID": pid,
                "STUDY_ID": sid,
                "SESSION_ID": sess,
            },
            headers={"Referer": base + f"/join/{token}/"},
        )
        if r.status_code != 200 or "resume-url" not in r.text:
            rec["errors"].append(f"accept {r.status_code}")
            raise StopIteration
        headers = {"X-CSRFToken": s.cookies.get("csrftoken", ""), "Referer": base + "/", "Accept": "application/json"}
        while True:
            r = timed("next", "GET", f"/api/judging/studies/{study_id}/items/next/", headers=headers)
            body = r.json()
            if r.status_code != 200:
                rec["errors"].append(f"next {r.status_code}")
                break
            if body["finished"]:
                break
            item = body["item"]
            time.sleep(pause * rng.uniform(0.5, 1.5))
            key = secrets.token_urlsafe(12)
            scores = {
                "adequacy": rng.randint(1, 5),
                "fluency": rng.randint(1, 5),
                "dissimilarity": rng.randint(1, 5),
                "overall": rng.randint(1, 5),
            }
            r = timed(
                "submit",
                "POST",
                f"/api/judging/studies/{study_id}/judgments/",
                headers=headers,
                json={
                    "item": item["token"],
                    "key": key,
                    "scores": scores,
                    "serve_stamp": item["serve_stamp"],
                    "active_seconds": 1.0,
                },
            )
            if r.status_code != 201:
                rec["errors"].append(f"submit {r.status_code} {r.text[:120]}")
                break
            rec["acked"].append(key)
        r = timed("done", "GET", f"/judge/studies/{study_id}/done/")
        if r.status_code != 200 or ">BENCH001<" not in r.text:
            rec["errors"].append(f"done {r.status_code}")
    except StopIteration:
        pass
    except Exception as exc:  # noqa: BLE001 - a benchmark reports every failure
        rec["errors"].append(repr(exc))
    with lock:
        out.append(rec)


def client_process(port, study_id, token, starts, pause, queue):
    out, lock = [], threading.Lock()
    threads = [threading.Thread(target=participant, args=(port, study_id, token, t, pause, out, lock)) for t in starts]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    queue.put(out)


def pct(values, q):
    values = sorted(values)
    return values[min(len(values) - 1, int(q * (len(values) - 1) + 0.5))] if values else float("nan")


def check(study_id: int, results: list[dict], n_items: int) -> list[str]:
    from collections import Counter

    from django.db import connection

    from annotation.judging.protocols.absolute.models import AssignmentItem, Judgment
    from annotation.models import Candidate, Participant

    connection.close()
    problems = []
    parts = list(Participant.objects.filter(study_id=study_id).values_list("platform_id", "user_id", "completed_at"))
    pids = [p for p, _, _ in parts]
    if len(pids) != len(set(pids)) or set(pids) != {r["pid"] for r in results}:
        problems.append("participants do not match the platform ids one to one")
    per_user = Counter(
        AssignmentItem.objects.filter(assignment__study_id=study_id).values_list("assignment__judge_id", flat=True)
    )
    if any(per_user[u] != n_items for _, u, _ in parts):
        problems.append("a participant does not hold exactly --items items")
    live = Counter(AssignmentItem.objects.filter(assignment__study_id=study_id).values_list("candidate_id", flat=True))
    counts = [
        live.get(c, 0) for c in Candidate.objects.filter(original__study_id=study_id).values_list("pk", flat=True)
    ]
    if max(counts) - min(counts) > 1:
        problems.append(f"judges per item unbalanced: {min(counts)}..{max(counts)}")
    acked = [k for r in results for k in r["acked"]]
    stored = list(Judgment.objects.filter(study_id=study_id).values_list("key", flat=True))
    if sorted(acked) != sorted(stored):
        problems.append(f"{len(acked)} judgments acknowledged, {len(stored)} stored")
    if any(c is None for _, _, c in parts):
        problems.append("not everyone reached the end")
    return problems


def main() -> int:
    args = parse_args()
    os.environ.setdefault("PARAEVAL_BENCH_PORTS", "9250-9259")
    var_dir = Path(tempfile.mkdtemp(prefix="paraeval-bench-join-"))
    proc = None
    try:
        env, study_id, token = setup(args, var_dir)
        port = harness.free_port()
        proc = harness.start_gunicorn(env, port=port, workers=args.workers, threads=args.threads, timeout=180)
        t0 = time.time() + 2.0
        starts = sorted(t0 + random.Random(1).uniform(0, args.arrive) for _ in range(args.participants))
        chunks = [starts[i :: args.client_procs] for i in range(args.client_procs)]
        ctx = mp.get_context("fork")
        queue = ctx.Queue()
        procs = [ctx.Process(target=client_process, args=(port, study_id, token, c, args.pause, queue)) for c in chunks]
        for p in procs:
            p.start()
        results = []
        for _ in procs:
            results.extend(queue.get(timeout=args.arrive + args.items * args.pause * 3 + 600))
        for p in procs:
            p.join(timeout=30)
        wall = time.time() - t0
        cpu = harness.process_tree_cpu(proc.pid)
        print(
            f"{args.participants} participants arriving within {args.arrive:.0f} s, {args.items} items each, "
            f"pause {args.pause:.1f} s ± 50 %; gunicorn {args.workers}×{args.threads} on PostgreSQL; "
            f"wall {wall:.0f} s, server CPU {cpu:.0f} s; load average {harness.load_average()}"
        )
        for kind in ("consent", "accept", "next", "submit", "done"):
            values = [v for r in results for v in r[kind]]
            print(
                f"  {kind:8s} n={len(values):6d}  p50 {pct(values, 0.5) * 1000:7.1f} ms  p95 {pct(values, 0.95) * 1000:7.1f} ms"
                f"  max {max(values, default=float('nan')) * 1000:7.1f} ms"
            )
        errors = [e for r in results for e in r["errors"]]
        print(f"  errors: {len(errors)}" + (f" (first: {errors[:3]})" if errors else ""))
        problems = check(study_id, results, args.items)
        print(
            "  database: "
            + (
                "consistent (one participant per id, exact shares, balanced, all judgments once)"
                if not problems
                else "; ".join(problems)
            )
        )
        return 0 if not errors and not problems else 1
    finally:
        harness.stop_process(proc)
        harness.drop_database(args.pg, args.database)
        shutil.rmtree(var_dir, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())
