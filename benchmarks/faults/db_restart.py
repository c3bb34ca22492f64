"""Restart PostgreSQL while simulated judges submit: errors are retryable, nothing acknowledged is lost.

gunicorn serves paraeval on a PostgreSQL database; ``--judges`` simulated judges
(threads, API tokens) rate without pause for ``--seconds``. Each judgment gets an
idempotency key once; a judge whose request fails (connection refused or reset, or
any 5xx) waits a little and sends *the same key* again, as the judging page does,
until it is acknowledged (201, or 200 for a key the server had already stored).
``--restart-after`` seconds in, the database server is restarted (``--mode fast``:
connections are cut; ``immediate``: a crash, with recovery on start).

Which server:

* default: a private PostgreSQL cluster of the installed server binaries, created in
  a temporary directory on a free loopback port (``initdb``/``pg_ctl`` as the
  ``postgres`` user) and removed afterwards — nobody else's database is disturbed;
* ``--system-cluster 15/main``: the machine's cluster, restarted with
  ``pg_ctlcluster --skip-systemctl-redirect 15 main restart`` (it must listen on
  ``--pg``; every other client of that server sees the restart too).

Printed: the restart's duration, the status codes clients saw, the longest time a
judge waited for an acknowledgement, and the database check — every acknowledged
key stored exactly once with its item and scores (``judging_load.check_database``
counts a stored but never acknowledged judgment as an error too). Exit status 1 if
the check fails or a judgment was never acknowledged.

Usage::

    .venv/bin/python benchmarks/faults/db_restart.py [--judges 20] [--seconds 40] [--restart-after 12]
"""

from __future__ import annotations

import argparse
import glob
import http.client
import json
import multiprocessing as mp
import os
import secrets
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE.parents[1]))

import judging_load  # noqa: E402

from benchmarks.faults.common import free_port  # noqa: E402


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--judges", type=int, default=20)
    p.add_argument("--seconds", type=float, default=40.0)
    p.add_argument("--restart-after", type=float, default=12.0)
    p.add_argument("--mode", choices=["fast", "immediate"], default="fast")
    p.add_argument("--system-cluster", default=None, help="e.g. 15/main: restart the machine's cluster instead")
    p.add_argument("--pg", default="postgres://postgres@127.0.0.1:5432", help="with --system-cluster: its URL")
    p.add_argument("--database", default="paraeval_faults_dbrestart")
    p.add_argument("--originals", type=int, default=100)
    p.add_argument("--systems", type=int, default=2)
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--threads", type=int, default=4)
    p.add_argument("--client-procs", type=int, default=2)
    p.add_argument("--give-up-after", type=float, default=60.0, help="seconds a judge retries one judgment")
    args = p.parse_args(argv)
    if not 1 <= args.judges <= 200 or not 5 <= args.seconds <= 180 or not 0 < args.restart_after < args.seconds:
        p.error("--judges 1..200, --seconds 5..180, and the restart must happen during the load")
    args.port = 0
    args.retry_every = 0
    return args


# --- a private PostgreSQL cluster -------------------------------------------------------------------


class PrivateCluster:
    def __init__(self):
        found = sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"))
        if not found:
            raise SystemExit("no PostgreSQL server binaries under /usr/lib/postgresql/*/bin")
        self.bin = Path(found[-1]).parent
        self.dir = Path(tempfile.mkdtemp(prefix="paraeval-pg-"))
        self.data = self.dir / "data"
        self.port = free_port()
        shutil.chown(self.dir, "postgres", "postgres")
        self._as_postgres([self.bin / "initdb", "-D", self.data, "-U", "postgres", "--auth=trust", "-E", "UTF8"])
        self.start()

    def _as_postgres(self, cmd) -> None:
        cmd = [str(c) for c in cmd]
        if os.geteuid() == 0:
            cmd = ["runuser", "-u", "postgres", "--"] + cmd
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    @property
    def url(self) -> str:
        return f"postgres://postgres@127.0.0.1:{self.port}"

    def _ctl(self, *action) -> None:
        self._as_postgres(
            [
                self.bin / "pg_ctl",
                "-D",
                self.data,
                "-l",
                self.dir / "server.log",
                "-w",
                "-t",
                "60",
                "-o",
                f"-p {self.port} -k {self.dir} -c listen_addresses=127.0.0.1 -c max_connections=200",
                *action,
            ]
        )

    def start(self) -> None:
        self._ctl("start")

    def restart(self, mode: str) -> None:
        self._ctl("restart", "-m", mode)

    def remove(self) -> None:
        try:
            self._ctl("stop", "-m", "fast")
        finally:
            shutil.rmtree(self.dir, ignore_errors=True)


class SystemCluster:
    def __init__(self, name: str, url: str):
        self.version, self.name = name.split("/")
        self.url = url

    def restart(self, mode: str) -> None:
        subprocess.run(
            ["pg_ctlcluster", "--skip-systemctl-redirect", "-m", mode, self.version, self.name, "restart"], check=True
        )

    def remove(self) -> None:
        pass


# --- judges who retry ---------------------------------------------------------------------------------


def judge_loop(port, study_id, token, until, give_up, out, lock):
    headers = {"Authorization": f"Token {token}", "Content-Type": "application/json", "Accept": "application/json"}
    statuses, acked, gave_up, waits = Counter(), [], [], []
    conn = None

    def call(method, path, body=None):
        nonlocal conn
        try:
            if conn is None:
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
            conn.request(method, path, body=body, headers=headers)
            r = conn.getresponse()
            data = r.read()
            statuses[r.status] += 1
            return r.status, data
        except (OSError, http.client.HTTPException) as exc:
            statuses[type(exc).__name__] += 1
            if conn is not None:
                conn.close()
            conn = None
            return None, b""

    def until_ok(method, path, body=None, ok=(200,)):
        """Send (again) until a non-retryable answer; returns (status, data, seconds waited)."""
        t0 = time.monotonic()
        delay = 0.1
        while True:
            status, data = call(method, path, body)
            if status is not None and status < 500:
                return status, data, time.monotonic() - t0
            if time.monotonic() - t0 > give_up:
                return status, data, time.monotonic() - t0
            time.sleep(delay)
            delay = min(delay * 2, 2.0)

    n = 0
    while time.time() < until:
        status, data, _ = until_ok("GET", f"/api/judging/studies/{study_id}/items/next/")
        if status != 200:
            gave_up.append(f"next {status}")
            break
        body = json.loads(data)
        if body["finished"]:
            break
        item, n = body["item"], n + 1
        scores = {
            "adequacy": 1 + n % 5,
            "fluency": 1 + (n * 3) % 5,
            "dissimilarity": 1 + (n * 7) % 5,
            "overall": 1 + (n * 2) % 5,
        }
        key = secrets.token_urlsafe(12)
        payload = json.dumps({"item": item["token"], "key": key, "scores": scores, "serve_stamp": item["serve_stamp"]})
        status, data, waited = until_ok("POST", f"/api/judging/studies/{study_id}/judgments/", payload)
        waits.append(waited)
        if status in (200, 201):
            acked.append((key, item["token"], scores))
        else:
            gave_up.append(f"submit {status} {data[:120]!r}")
            break
    if conn is not None:
        conn.close()
    with lock:
        out.append({"statuses": statuses, "acked": acked, "gave_up": gave_up, "waits": waits, "next": [], "submit": []})


def _clients(port, study_id, tokens, until, give_up, queue):
    out, lock = [], threading.Lock()
    threads = [threading.Thread(target=judge_loop, args=(port, study_id, t, until, give_up, out, lock)) for t in tokens]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    queue.put(out)


def main(argv=None) -> int:
    args = parse_args(argv)
    cluster = SystemCluster(args.system_cluster, args.pg) if args.system_cluster else PrivateCluster()
    args.pg = cluster.url
    var_dir = Path(tempfile.mkdtemp(prefix="paraeval-faults-db-"))
    gunicorn = None
    try:
        env = judging_load.setup_environment(args, var_dir)
        study_id, tokens, _ = judging_load.build_study(args)
        from django.db import connections

        connections.close_all()
        gunicorn = judging_load.start_gunicorn(args, env)
        start = time.time() + 1.0
        until = start + args.seconds
        names = sorted(tokens)
        ctx = mp.get_context("fork")
        queue = ctx.Queue()
        procs = [
            ctx.Process(
                target=_clients,
                args=(
                    args.port,
                    study_id,
                    [tokens[n] for n in names[i :: args.client_procs]],
                    until,
                    args.give_up_after,
                    queue,
                ),
            )
            for i in range(args.client_procs)
        ]
        for p in procs:
            p.start()
        time.sleep(max(0.0, start + args.restart_after - time.time()))
        t0 = time.monotonic()
        cluster.restart(args.mode)
        restart_s = time.monotonic() - t0
        results = []
        for _ in procs:
            results.extend(queue.get(timeout=args.seconds + args.give_up_after + 120))
        for p in procs:
            p.join(timeout=30)
        statuses = sum((r["statuses"] for r in results), Counter())
        waits = [w for r in results for w in r["waits"]]
        gave_up = [g for r in results for g in r["gave_up"]]
        acked = sum(len(r["acked"]) for r in results)
        print(
            f"{args.judges} judges for {args.seconds:.0f} s on PostgreSQL "
            f"({'private cluster' if not args.system_cluster else args.system_cluster}); "
            f"restart -m {args.mode} at {args.restart_after:.0f} s took {restart_s:.1f} s"
        )
        print("answers: " + ", ".join(f"{k}: {v}" for k, v in sorted(statuses.items(), key=lambda kv: str(kv[0]))))
        print(
            f"judgments acknowledged: {acked}; longest wait for one acknowledgement (retries included): "
            f"{max(waits, default=0):.1f} s; judges who gave up: {len(gave_up)}"
            + (f" ({gave_up[:3]})" if gave_up else "")
        )
        ok, detail = judging_load.check_database(study_id, results)
        print(("database check OK: " if ok else "database check FAILED: ") + detail)
        return 0 if ok and not gave_up else 1
    finally:
        judging_load.harness.stop_process(gunicorn)  # benchmarks/harness.py
        try:
            from django.db import connections

            connections.close_all()
            import psycopg

            with psycopg.connect(f"{args.pg}/postgres", autocommit=True) as conn:
                conn.execute(f'DROP DATABASE IF EXISTS "{args.database}" WITH (FORCE)')
        except Exception:  # noqa: BLE001 - best effort: the private cluster goes away anyway
            pass
        cluster.remove()
        shutil.rmtree(var_dir, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
