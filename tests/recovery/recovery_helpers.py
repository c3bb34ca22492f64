"""What the recovery tests share (test_recovery*.py): a small study to score, waiting for a
condition, a run's result checked once and right, a slow run, backdating a job, and Workers,
real ``celery worker`` subprocesses on this test run's database and broker (the workers
fixture that makes them is in conftest.py)."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
import uuid
from datetime import timedelta
from pathlib import Path

from django.utils import timezone

from config.jobs.enums import JobStatus
from tests.brokers import broker_at

ROOT = Path(__file__).resolve().parents[2]
WORDS = "in the beginning was the word and the word was with god and the word was god".split()


# --------------------------------------------------------------------------- helpers


def make_study(owner, name: str, n: int = 8):
    from annotation.models import Candidate, Original, System
    from annotation.services.studies import study_create

    study = study_create(name=name, owner=owner)
    originals = Original.objects.bulk_create(
        [
            Original(
                study=study,
                external_id=f"o{i}",
                position=i,
                text=" ".join(WORDS[(i + k) % len(WORDS)] for k in range(6 + i % 5)) + ".",
            )
            for i in range(n)
        ]
    )
    system = System.objects.create(study=study, name="human")
    Candidate.objects.bulk_create(
        [Candidate(original=o, system=system, text=o.text.replace("word", "saying")) for o in originals]
    )
    return study


def wait_for(predicate, timeout: float, what: str, log=None):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}" + (f"\n{log()}" if log else ""))


def finished(model, pk):
    obj = model.objects.get(pk=pk)
    return obj if obj.is_finished else None


def assert_scored_once_and_right(run_id: int) -> None:
    """One PINC score per candidate of the run, each equal to PINC computed directly; each chunk counted once."""
    from annotation.models import Candidate
    from metrics.core.pinc import pinc_score
    from metrics.core.text import tokenize
    from metrics.models import MetricRun, MetricRunChunk, MetricScore

    run = MetricRun.objects.get(pk=run_id)
    assert run.status == JobStatus.SUCCEEDED, (run.status, run.error)
    rows = list(MetricScore.objects.filter(run=run).values_list("candidate_id", "score"))
    assert len(rows) == len({c for c, _ in rows}) == run.n
    scores = dict(rows)
    for cand in Candidate.objects.filter(pk__in=scores).select_related("original"):
        expected = pinc_score(tokenize(cand.original.text, lowercase=True), tokenize(cand.text, lowercase=True))
        assert abs(scores[cand.pk] - expected) < 1e-12
    assert run.progress_done == run.progress_total == MetricRunChunk.objects.filter(run=run, done=True).count()


def slow_run(study):
    """A queued run of ``pinc-slow`` (PINC with a pause per chunk, registered only in the
    workers' processes by the fault settings), with no message sent."""
    from metrics.models import MetricRun
    from metrics.services.runs import metric_run_create

    run = metric_run_create(study=study, metric="pinc", chunk_size=2, enqueue=False)
    MetricRun.objects.filter(pk=run.pk).update(metric="pinc-slow")
    return run


def backdate(model, pk, *, hours: float = 1) -> None:
    """What a dead worker leaves: no heartbeat since it died."""
    model.objects.filter(pk=pk).update(updated_at=timezone.now() - timedelta(hours=hours))


class Workers:
    """Real ``celery worker`` processes on this test run's database, a broker they
    share with this process, and a queue of their own."""

    def __init__(self, tmp_path: Path, **settings):
        from django.conf import settings as django_settings
        from django.db import connection

        db = connection.settings_dict
        if db["ENGINE"].endswith("sqlite3"):
            database_url = f"sqlite:///{db['NAME']}"
        else:
            auth = db["USER"] + (f":{db['PASSWORD']}" if db.get("PASSWORD") else "")
            database_url = f"postgres://{auth}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}"
        self.broker = os.environ.get("CELERY_BROKER_URL") or f"sqla+sqlite:///{tmp_path / 'broker.sqlite3'}"
        self.queue = f"paraeval-recovery-{uuid.uuid4().hex[:10]}"
        self.log_dir = tmp_path / "logs"
        self.log_dir.mkdir(exist_ok=True)
        self.env = {
            k: v for k, v in os.environ.items() if k not in {"DJANGO_ALLOW_ASYNC_UNSAFE", "PYTEST_CURRENT_TEST"}
        }
        self.env.update(
            DJANGO_SETTINGS_MODULE="benchmarks.faults.settings",
            PYTHONPATH=str(ROOT),
            LOG_LEVEL="INFO",
            DATABASE_URL=database_url,
            CELERY_BROKER_URL=self.broker,
            PARAEVAL_FAULTS_QUEUE=self.queue,
            PARAEVAL_FAULTS_POLLING_INTERVAL="0.1",
            PARAEVAL_VAR_DIR=str(django_settings.VAR_DIR),
            **{k: str(v) for k, v in settings.items()},
        )
        self.procs: list[subprocess.Popen] = []

    def start(self, name: str, *, beat: bool = False, concurrency: int = 1) -> subprocess.Popen:
        celery = Path(sys.executable).parent / "celery"
        log = open(self.log_dir / f"{name}.log", "a")
        cmd = [
            str(celery),
            "-A",
            "config",
            "worker",
            "--pool=prefork",
            f"--concurrency={concurrency}",
            "--loglevel=INFO",
            "-n",
            f"{name}-{os.getpid()}@%h",
            "--without-gossip",
            "--without-mingle",
            "--without-heartbeat",
        ]
        if beat:
            cmd += ["-B", "-s", str(self.log_dir / f"{name}-celerybeat-schedule")]
        proc = subprocess.Popen(
            cmd, cwd=ROOT, env=self.env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
        )
        self.procs.append(proc)
        return proc

    def kill(self, proc: subprocess.Popen, sig=signal.SIGTERM, *, grace: float = 30) -> None:
        """Send ``sig`` to the worker's process group, and SIGKILL after ``grace`` seconds."""
        if proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, sig)
            try:
                proc.wait(timeout=grace)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=10)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)  # beat's process, if it outlived its worker

    def stop_all(self) -> None:
        """The end of a test: every worker stopped (what a warm shutdown would finish is not
        looked at any more: a worker still running a task is killed after 3 s, not 30)."""
        for proc in self.procs:
            self.kill(proc, grace=3)
        if self.broker.startswith(("amqp", "pyamqp")):
            from kombu import Connection

            with Connection(self.broker) as conn:
                conn.default_channel.queue_delete(self.queue)
        if self.broker.startswith("redis"):
            import redis

            r = redis.Redis.from_url(self.broker)
            # the queue, its bindings, and a killed worker's unacknowledged message for it
            r.delete(self.queue, f"_kombu.binding.{self.queue}", f"_kombu.binding_permanent.{self.queue}")
            for tag, raw in r.hgetall("unacked").items():
                if self.queue.encode() in raw:
                    r.hdel("unacked", tag)
                    r.zrem("unacked_index", tag)

    def log(self, name: str | None = None) -> str:
        paths = [self.log_dir / f"{name}.log"] if name else sorted(self.log_dir.glob("*.log"))
        return "\n".join(f"--- {p.name}\n{p.read_text(errors='replace')[-6000:]}" for p in paths if p.exists())

    @contextlib.contextmanager
    def publishing(self):
        """Send from this process to the workers' broker (use ``queue=self.queue``)."""
        with broker_at(self.broker):
            yield
