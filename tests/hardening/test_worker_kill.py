"""Celery workers killed with SIGKILL mid-run and mid-report (real ``celery worker``
processes, on the backend this test run uses: the embedded SQLite database and
SQLite-file broker, or PostgreSQL and Redis).

Runs ``benchmarks/faults/worker_kill.py`` small: a pool process killed mid-chunk
(the run finishes by itself with exactly one correct score per candidate), the
whole worker killed mid-chunk and a new one started (the run finishes — by itself
where the broker delivers the lost message again, else after Cancel + Retry, which
keeps the chunks already done), and a pool process killed mid-report (the report
is built again and succeeds once). The script's docstring has the details.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import pytest

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.slow


def backend_args() -> list[str]:
    db = os.environ.get("DATABASE_URL", "")
    if not db.startswith(("postgres://", "postgresql://")):
        return ["--backend", "sqlite"]
    parts = urlsplit(db)
    server = urlunsplit((parts.scheme, parts.netloc, "", "", ""))
    return [
        "--backend",
        "postgres",
        "--pg",
        server,
        "--broker",
        os.environ.get("CELERY_BROKER_URL", "redis://127.0.0.1:6379/0"),
    ]


def test_killed_workers_lose_nothing_and_score_every_candidate_once():
    cmd = [
        sys.executable,
        str(ROOT / "benchmarks" / "faults" / "worker_kill.py"),
        *backend_args(),
        "--scenarios",
        "pool,worker,report",
        "--originals",
        "8",
        "--chunk-size",
        "2",
        "--chunk-seconds",
        "0.4",
        "--stall-seconds",
        "5",
        "--timeout",
        "120",
    ]
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=600)
    out = proc.stdout + proc.stderr[-3000:]
    assert proc.returncode == 0, out
    lines = {line.split(":")[0]: line for line in proc.stdout.splitlines()}
    assert "OK" in lines["pool"] and "16 scores for 16 candidates (0 wrong)" in lines["pool"], out
    assert "OK" in lines["worker"] and "16 scores for 16 candidates (0 wrong)" in lines["worker"], out
    assert "OK" in lines.get("report", "report: OK (skipped)") or "skipped" in lines.get("report", ""), out
