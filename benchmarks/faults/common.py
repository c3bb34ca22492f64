"""What the fault scripts share: a throw-away installation, real worker processes, waiting.

An :class:`Installation` is paraeval on either backend, created for one script and
removed afterwards:

* ``sqlite`` — the embedded default: a SQLite database file and the SQLite-file
  broker in a temporary ``var/`` directory (nothing else is touched);
* ``postgres`` — a database ``paraeval_faults_<pid>`` created (and dropped) on the
  PostgreSQL server given, with a Redis broker; the script's tasks go to a queue of
  its own (``PARAEVAL_FAULTS_QUEUE``), so a shared Redis is safe.

Only loopback servers are accepted.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parents[2]
LOOPBACK = {"127.0.0.1", "localhost", "::1"}


class Installation:
    def __init__(
        self,
        backend: str,
        *,
        pg: str = "postgres://postgres@127.0.0.1:5432",
        broker: str = "redis://127.0.0.1:6379/0",
        visibility_timeout: float | None = None,
        polling_interval: float | None = None,
    ):
        if backend not in ("sqlite", "postgres"):
            raise SystemExit("--backend must be sqlite or postgres")
        self.backend = backend
        self.var_dir = Path(tempfile.mkdtemp(prefix="paraeval-faults-"))
        self.queue = f"paraeval-faults-{uuid.uuid4().hex[:12]}"
        self.env = {
            k: v
            for k, v in os.environ.items()
            if k not in {"DATABASE_URL", "CELERY_BROKER_URL", "DJANGO_ALLOW_ASYNC_UNSAFE", "PYTEST_CURRENT_TEST"}
        }
        self.env.update(
            DJANGO_SETTINGS_MODULE="benchmarks.faults.settings",
            PARAEVAL_VAR_DIR=str(self.var_dir),
            PARAEVAL_CACHE_DIR=str(self.var_dir / "cache"),
            PARAEVAL_FAULTS_QUEUE=self.queue,
            LOG_LEVEL="WARNING",
            PYTHONPATH=str(ROOT),
        )
        if visibility_timeout:
            self.env["PARAEVAL_FAULTS_VISIBILITY_TIMEOUT"] = str(visibility_timeout)
        if polling_interval:
            self.env["PARAEVAL_FAULTS_POLLING_INTERVAL"] = str(polling_interval)
        self.pg, self.database, self.broker = pg, None, None
        if backend == "postgres":
            for url in (pg, broker):
                if urlsplit(url).hostname not in LOOPBACK:
                    raise SystemExit(f"{url}: only loopback servers are accepted")
            self.database = f"paraeval_faults_{os.getpid()}"
            self.env["DATABASE_URL"] = f"{pg}/{self.database}"
            self.env["CELERY_BROKER_URL"] = self.broker = broker
        self.workers: list[subprocess.Popen] = []
        self.log_dir = self.var_dir / "logs"
        self.log_dir.mkdir()

    # --- lifecycle ------------------------------------------------------------------------------

    def setup(self) -> None:
        """Create the database, migrate, and set Django up in this process."""
        if self.database:
            import psycopg

            with psycopg.connect(f"{self.pg}/postgres", autocommit=True) as conn:
                conn.execute(f'DROP DATABASE IF EXISTS "{self.database}" WITH (FORCE)')
                conn.execute(f'CREATE DATABASE "{self.database}"')
        os.environ.clear()
        os.environ.update(self.env)
        sys.path.insert(0, str(ROOT))
        import django

        django.setup()
        from django.core.management import call_command

        call_command("migrate", verbosity=0)

    def teardown(self) -> None:
        for proc in self.workers:
            self.kill_worker(proc, sig=signal.SIGKILL)
        try:
            from django.db import connections

            connections.close_all()
        except Exception:  # noqa: BLE001 - Django may not have been set up
            pass
        if self.database:
            import psycopg

            with psycopg.connect(f"{self.pg}/postgres", autocommit=True) as conn:
                conn.execute(f'DROP DATABASE IF EXISTS "{self.database}" WITH (FORCE)')
        if self.broker:
            import redis

            # The queue and kombu's bookkeeping of unacknowledged messages for it.
            r = redis.Redis.from_url(self.broker)
            r.delete(self.queue)
        shutil.rmtree(self.var_dir, ignore_errors=True)

    # --- workers -------------------------------------------------------------------------------

    def start_worker(self, name: str, *, concurrency: int = 1) -> subprocess.Popen:
        """A real ``celery worker`` (prefork) in its own process group, logging to a file
        (started by the shared harness, benchmarks/harness.py)."""
        proc = _harness().start_celery_worker(
            self.env, name=name, log_path=self.log_dir / f"{name}.log", concurrency=concurrency
        )
        self.workers.append(proc)
        return proc

    @staticmethod
    def pool_children(proc: subprocess.Popen) -> list[int]:
        path = Path(f"/proc/{proc.pid}/task/{proc.pid}/children")
        return [int(x) for x in path.read_text().split()] if path.exists() else []

    def kill_worker(self, proc: subprocess.Popen, *, sig=signal.SIGTERM, timeout: float = 30) -> None:
        """Stop a worker and its pool (SIGTERM: warm shutdown; SIGKILL: the machine died)."""
        _harness().stop_process(proc, sig=sig, timeout=timeout)
        if proc in self.workers:
            self.workers.remove(proc)

    def log_tail(self, n: int = 30) -> str:
        lines = []
        for path in sorted(self.log_dir.glob("*.log")):
            lines += [f"--- {path.name}"] + path.read_text(errors="replace").splitlines()[-n:]
        return "\n".join(lines)


def wait_until(predicate, *, timeout: float, interval: float = 0.05, what: str = "condition"):
    """Poll ``predicate`` until it returns something truthy; None after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    return None


def _harness():
    """benchmarks/harness.py: the one place servers and workers are started and stopped."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import harness

    return harness


def free_port() -> int:
    """A free port from the shared harness's range."""
    return _harness().free_port()
