"""Judging at a human pace: Locust judges with think time against gunicorn + PostgreSQL + Redis.

    .venv/bin/python benchmarks/judging_pace.py [--judges 200,500,1000] [--seconds 180] [--ramp 60]
        [--think-median 10] [--originals 100] [--systems 4] [--workers 4] [--threads 4]
        [--pg postgres://postgres@127.0.0.1:5432] [--database paraeval_perf]
        [--broker redis://127.0.0.1:6379/6] [--gunicorn-args "--preload"] [--client fast|requests]
        [--json out.json]

Open-loop in the sense that matters for latency: each judge waits a think time drawn
from a log-normal distribution (median ``--think-median`` s, σ 0.6) between
items, whatever the server does, and judges arrive evenly over ``--ramp`` seconds
(Locust's spawn rate). Each judge: ``GET items/next/`` → think → ``POST judgments/``
→ ``GET items/next/`` → … (``benchmarks/locustfile_judging.py``). Headless, on
loopback, bounded: ``--seconds`` per judge count (at most 600), at most 2,000 judges.

Setup, once, through the shared harness (``benchmarks/harness.py``): the database
``--database`` is dropped and created, migrated, and a study of ``--originals`` ×
(``--systems`` + 3 controls) items is opened for the largest judge count (fully
crossed), with one API token per judge; gunicorn serves it (``--workers`` ×
``--threads``, gthread) with Redis as the Celery broker (``--broker``: use your own
database number). Each judge count then runs against the same server (the first N
judges). Printed per run: requests, p50/p95/p99 of ``items/next`` and ``submit``
(Locust's percentiles), failures, gunicorn CPU per request and memory (PSS), the load
generator's own CPU per request (Locust shares the machine: ``--client fast``, the
default, is geventhttpclient; ``requests`` is Locust's classic client), the load average; at the
end the judge count where the p95 first exceeds 150 ms (or that it never did).
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import platform
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

MAX_JUDGES, MAX_SECONDS = 2000, 600


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--judges", default="200,500,1000", help="comma-separated judge counts")
    p.add_argument("--seconds", type=float, default=180)
    p.add_argument("--ramp", type=float, default=60, help="judges arrive evenly over this many seconds")
    p.add_argument("--think-median", type=float, default=10.0)
    p.add_argument("--originals", type=int, default=100)
    p.add_argument("--systems", type=int, default=4)
    p.add_argument("--workers", type=int, default=4)
    p.add_argument("--threads", type=int, default=4)
    p.add_argument("--pg", default="postgres://postgres@127.0.0.1:5432")
    p.add_argument("--database", default="paraeval_perf")
    p.add_argument("--broker", default="redis://127.0.0.1:6379/6")
    p.add_argument(
        "--cache",
        default="redis://127.0.0.1:6379/8",
        help="CACHE_URL, as a deployment sets it (docs/deployment.md): one cache for every process",
    )
    p.add_argument("--gunicorn-args", default="", help='more gunicorn options, e.g. "--preload"')
    p.add_argument(
        "--client",
        choices=("fast", "requests"),
        default="fast",
        help="Locust client: fast = FastHttpUser (geventhttpclient), requests = HttpUser",
    )
    p.add_argument("--json", type=Path, default=None, help="also write the figures here")
    args = p.parse_args(argv)
    args.counts = sorted(int(x) for x in args.judges.split(","))
    if not all(1 <= c <= MAX_JUDGES for c in args.counts) or not 1 <= args.seconds <= MAX_SECONDS:
        p.error(f"judge counts must be 1..{MAX_JUDGES} and --seconds 1..{MAX_SECONDS}")
    harness.require_loopback(args.pg)
    harness.require_loopback(args.broker)
    return args


def setup(args, var_dir: Path) -> dict:
    env = {
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "DATABASE_URL": harness.fresh_database(args.pg, args.database),
        "CELERY_BROKER_URL": args.broker,
        "CACHE_URL": args.cache,
        "PARAEVAL_VAR_DIR": str(var_dir),
        "DEBUG": "off",
        "LOG_LEVEL": "WARNING",
        "CONN_MAX_AGE": "600",
    }
    os.environ.update(env)
    os.environ.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    return env


def build_study(args) -> tuple[int, list[str], float]:
    import judging_load

    ns = argparse.Namespace(originals=args.originals, systems=args.systems, judges=max(args.counts))
    study_id, tokens, opened = judging_load.build_study(ns)
    return study_id, [tokens[k] for k in sorted(tokens)], opened


def read_stats(prefix: Path) -> dict[str, dict]:
    out = {}
    with open(f"{prefix}_stats.csv", newline="") as fh:
        for row in csv.DictReader(fh):
            out[row["Name"]] = row
    return out


def run_locust(args, port: int, study_id: int, tokens: list[str], n: int, work: Path) -> tuple[dict, float]:
    """Run Locust for ``n`` judges; returns its statistics and the CPU seconds it used."""
    tok_file = work / f"tokens_{n}.json"
    tok_file.write_text(json.dumps(tokens[:n]))
    prefix = work / f"locust_{n}"
    env = {
        **os.environ,
        "PARAEVAL_LOCUST_TOKENS": str(tok_file),
        "PARAEVAL_LOCUST_STUDY": str(study_id),
        "PARAEVAL_THINK_MEDIAN": str(args.think_median),
    }
    user_class = "FastJudge" if args.client == "fast" else "Judge"
    cmd = [
        str(ROOT / ".venv" / "bin" / "locust"),
        "-f",
        str(HERE / "locustfile_judging.py"),
        user_class,
        "--headless",
        "-u",
        str(n),
        "-r",
        f"{n / args.ramp:.3f}",
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
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = subprocess.Popen(
        cmd,
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=open(work / f"locust_{n}.log", "w"),
        start_new_session=True,
    )
    try:
        proc.wait(timeout=args.seconds + 120)
    finally:
        harness.stop_process(proc)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)  # Locust, reaped by now
    cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    return read_stats(prefix), cpu


def main(argv=None) -> int:
    args = parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="paraeval-pace-"))
    gunicorn = None
    results = []
    try:
        env = setup(args, work / "var")
        study_id, tokens, opened = build_study(args)
        n_items = args.originals * (args.systems + 3)
        print(
            f"machine: {platform.machine()}, {os.cpu_count()} cores; {platform.python_version()}; "
            f"study: {n_items} items per judge, opened for {len(tokens)} judges in {opened:.1f} s; "
            f"gunicorn {args.workers}×{args.threads} gthread {args.gunicorn_args}, Locust client {args.client}, PostgreSQL, Redis broker; think time log-normal "
            f"median {args.think_median} s; {args.seconds:.0f} s per run, arrivals over {args.ramp:.0f} s"
        )
        port = harness.free_port()
        gunicorn = harness.start_gunicorn(
            env,
            port=port,
            workers=args.workers,
            threads=args.threads,
            timeout=180,
            extra_args=tuple(args.gunicorn_args.split()),
        )
        for n in args.counts:
            load_before = harness.load_average()
            cpu0 = harness.process_tree_cpu(gunicorn.pid)
            stats, locust_cpu = run_locust(args, port, study_id, tokens, n, work)
            cpu = harness.process_tree_cpu(gunicorn.pid) - cpu0
            agg = stats.get("Aggregated", {})
            total = int(agg.get("Request Count", 0) or 0)
            row = {
                "judges": n,
                "requests": total,
                "failures": int(agg.get("Failure Count", 0) or 0),
                "cpu_ms_per_request": 1000 * cpu / max(1, total),
                "locust_cpu_ms_per_request": 1000 * locust_cpu / max(1, total),
                "load_before": load_before,
                "load_after": harness.load_average(),
                "gunicorn_pss_mib": harness.process_tree_pss_mib(gunicorn.pid),
            }
            for name in ("items/next", "submit"):
                s = stats.get(name, {})
                row[name] = {q: float(s.get(q, "nan") or "nan") for q in ("50%", "95%", "99%")}
                row[name]["count"] = int(s.get("Request Count", 0) or 0)
            results.append(row)
            print(
                f"{n:>5} judges: {total} requests ({total / args.seconds:.1f}/s), {row['failures']} failures; "
                f"items/next p50/p95/p99 {row['items/next']['50%']:.0f}/{row['items/next']['95%']:.0f}/"
                f"{row['items/next']['99%']:.0f} ms; submit {row['submit']['50%']:.0f}/{row['submit']['95%']:.0f}/"
                f"{row['submit']['99%']:.0f} ms; gunicorn CPU {row['cpu_ms_per_request']:.1f} ms/request; "
                f"Locust ({args.client}) CPU {row['locust_cpu_ms_per_request']:.1f} ms/request; "
                f"gunicorn memory (PSS) {row['gunicorn_pss_mib']:.0f} MiB; load {load_before} → {row['load_after']}",
                flush=True,
            )
        crossing = next((r["judges"] for r in results if max(r["items/next"]["95%"], r["submit"]["95%"]) > 150), None)
        print(
            "p95 above 150 ms first at "
            + (f"{crossing} judges" if crossing else f"no tested count (up to {args.counts[-1]} judges)")
        )
        if args.json:
            args.json.write_text(
                json.dumps(
                    {
                        "runs": results,
                        "crossing_150ms": crossing,
                        "args": {k: v for k, v in vars(args).items() if k != "json"},
                    },
                    indent=1,
                    default=str,
                )
            )
        return 0
    finally:
        harness.stop_process(gunicorn)
        try:
            from django.db import connections

            connections.close_all()
        except Exception:
            pass


if __name__ == "__main__":
    raise SystemExit(main())
