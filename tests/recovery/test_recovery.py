"""Automatic recovery of background work (``config/recovery.py``), with real workers.

* A job left 'running' by a dead worker is finished by the periodic pass (the task
  Celery beat runs) with exactly one result per item — once in-process on the
  configured broker, once with a real ``celery worker -B`` SIGKILLed as a whole
  mid-run and a new one started.
* A live job slower than the stale period (one chunk longer than it, no progress
  meanwhile) is left alone by the pass, and a resent copy of it is dropped: no chunk
  runs twice, every score is there once and right.
* A real worker, when it starts, sends the jobs queued while the broker was down;
  a job whose first message is still in the broker runs once all the same.

The subprocess workers use this test run's database and broker (the SQLite test
file and a SQLite-file broker by default; ``DATABASE_URL`` and ``CELERY_BROKER_URL``
when set), on a queue of their own, with the fault settings
(``benchmarks/faults/settings.py``: the ``pinc-slow`` metric, fast polling).
"""

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

import pytest
from django.utils import timezone

from annotation.enums import JobStatus
from tests.brokers import broker_at, dead_broker_url

ROOT = Path(__file__).resolve().parents[2]
WORDS = "in the beginning was the word and the word was with god and the word was god".split()


# --------------------------------------------------------------------------- helpers


def make_study(owner, name: str, n: int = 8):
    from annotation.models import Candidate, Original, System
    from annotation.services import study_create

    study = study_create(name=name, owner=owner)
    originals = Original.objects.bulk_create([
        Original(study=study, external_id=f"o{i}", position=i,
                 text=" ".join(WORDS[(i + k) % len(WORDS)] for k in range(6 + i % 5)) + ".") for i in range(n)])
    system = System.objects.create(study=study, name="human")
    Candidate.objects.bulk_create([Candidate(original=o, system=system, text=o.text.replace("word", "saying"))
                                   for o in originals])
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
    from metrics import services
    from metrics.models import MetricRun

    run = services.metric_run_create(study=study, metric="pinc", chunk_size=2, enqueue=False)
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
        self.env = {k: v for k, v in os.environ.items()
                    if k not in {"DJANGO_ALLOW_ASYNC_UNSAFE", "PYTEST_CURRENT_TEST"}}
        self.env.update(
            DJANGO_SETTINGS_MODULE="benchmarks.faults.settings", PYTHONPATH=str(ROOT), LOG_LEVEL="INFO",
            DATABASE_URL=database_url, CELERY_BROKER_URL=self.broker, PARAEVAL_FAULTS_QUEUE=self.queue,
            PARAEVAL_FAULTS_POLLING_INTERVAL="0.1", PARAEVAL_VAR_DIR=str(django_settings.VAR_DIR),
            **{k: str(v) for k, v in settings.items()})
        self.procs: list[subprocess.Popen] = []

    def start(self, name: str, *, beat: bool = False, concurrency: int = 1) -> subprocess.Popen:
        celery = Path(sys.executable).parent / "celery"
        log = open(self.log_dir / f"{name}.log", "a")
        cmd = [str(celery), "-A", "config", "worker", "--pool=prefork", f"--concurrency={concurrency}",
               "--loglevel=INFO", "-n", f"{name}-{os.getpid()}@%h", "--without-gossip", "--without-mingle",
               "--without-heartbeat"]
        if beat:
            cmd += ["-B", "-s", str(self.log_dir / f"{name}-celerybeat-schedule")]
        proc = subprocess.Popen(cmd, cwd=ROOT, env=self.env, stdout=log, stderr=subprocess.STDOUT,
                                start_new_session=True)
        self.procs.append(proc)
        return proc

    def kill(self, proc: subprocess.Popen, sig=signal.SIGTERM) -> None:
        if proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, sig)
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=10)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)  # beat's process, if it outlived its worker

    def stop_all(self) -> None:
        for proc in self.procs:
            self.kill(proc)
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


@pytest.fixture
def workers(transactional_db, tmp_path):
    made = []

    def make(**settings) -> Workers:
        w = Workers(tmp_path, **settings)
        made.append(w)
        return w

    yield make
    for w in made:
        w.stop_all()


# --------------------------------------------------------------------------- claims (no broker)


@pytest.mark.django_db
def test_a_resent_message_claims_its_job_only_when_no_live_worker_holds_it(researcher, settings):
    from annotation.models import ImportJob
    from annotation.services import study_import_file
    from config.recovery import job_claim, jobs_to_resend

    settings.PARAEVAL_JOB_HEARTBEAT_SECONDS = 1
    study = make_study(researcher, "Claims", n=1)
    job = study_import_file(study=study, data=b"original_id,original,system,candidate\nx,a b.,s,b a.\n",
                            filename="c.csv", background=True)
    stale = timedelta(minutes=5)
    # the first message takes a queued job; a resent copy arriving meanwhile finds it held
    assert job_claim(ImportJob, job.pk, stale_after=None) is True
    assert ImportJob.objects.get(pk=job.pk).status == JobStatus.RUNNING
    assert job_claim(ImportJob, job.pk, stale_after=stale) is False
    # its worker died (no heartbeat for longer than the stale period): exactly one resent copy wins
    backdate(ImportJob, job.pk)
    assert jobs_to_resend(ImportJob, stale_after=stale) == [job.pk]
    assert job_claim(ImportJob, job.pk, stale_after=stale) is True
    assert job_claim(ImportJob, job.pk, stale_after=stale) is False
    assert jobs_to_resend(ImportJob, stale_after=stale) == []
    # a finished job is never claimed, even long after
    ImportJob.objects.filter(pk=job.pk).update(status=JobStatus.SUCCEEDED)
    backdate(ImportJob, job.pk)
    assert job_claim(ImportJob, job.pk, stale_after=stale) is False
    # the stale period never goes below three heartbeats
    ImportJob.objects.filter(pk=job.pk).update(status=JobStatus.RUNNING, updated_at=timezone.now() - timedelta(seconds=2))
    assert job_claim(ImportJob, job.pk, stale_after=timedelta(seconds=1)) is False


@pytest.mark.django_db
def test_the_periodic_pass_resends_a_job_that_waits_its_turn_once_per_stale_period(researcher):
    from annotation.models import ImportJob
    from annotation.services import study_import_file
    from config.recovery import jobs_to_resend

    study = make_study(researcher, "Waiting", n=1)
    job = study_import_file(study=study, data=b"original_id,original,system,candidate\nx,a b.,s,b a.\n",
                            filename="w.csv", background=True)
    period = timedelta(minutes=5)
    assert jobs_to_resend(ImportJob, stale_after=period, queued_after=period) == []  # just queued
    backdate(ImportJob, job.pk)
    assert jobs_to_resend(ImportJob, stale_after=period, queued_after=period) == [job.pk]
    assert jobs_to_resend(ImportJob, stale_after=period, queued_after=period) == []  # not again right away
    assert jobs_to_resend(ImportJob, stale_after=None) == [job.pk]  # the command and worker start: every queued job


# --------------------------------------------------------------------------- a dead worker's job


@pytest.mark.slow
def test_the_periodic_task_finishes_work_a_dead_worker_left_running_exactly_once(celery_worker, researcher):
    """In-process worker on the configured broker. What a worker that died mid-run leaves
    behind: the job 'running', no heartbeat since, no message anywhere."""
    from annotation.models import Candidate, ImportJob
    from annotation.services import study_import_file
    from config.recovery import requeue_stale_jobs_task
    from metrics import services
    from metrics.models import MetricRun, MetricRunChunk

    study = make_study(researcher, "Dead worker", n=9)
    run = services.metric_run_create(study=study, metric="pinc", chunk_size=2, enqueue=False)
    services.metric_run_start(run_id=run.pk)
    chunks = list(MetricRunChunk.objects.filter(run=run).order_by("index"))
    for chunk in chunks[:2]:  # two chunks were done before the worker died; its third was rolled back
        services.metric_run_chunk_execute(run_id=run.pk, chunk_id=chunk.pk)
    backdate(MetricRun, run.pk)

    rows = "original_id,original,system,candidate\n" + "".join(f"n{i},New original {i}.,late,Late {i}.\n" for i in range(5))
    with broker_at(dead_broker_url()):  # its message was lost with the worker
        job = study_import_file(study=study, data=rows.encode(), filename="late.csv", background=True)
    ImportJob.objects.filter(pk=job.pk).update(status=JobStatus.RUNNING, phase="reading")
    backdate(ImportJob, job.pk)

    requeue_stale_jobs_task.delay()  # what Celery beat sends every PARAEVAL_REQUEUE_INTERVAL_SECONDS
    run = wait_for(lambda: finished(MetricRun, run.pk), 60, "the metric run")
    job = wait_for(lambda: finished(ImportJob, job.pk), 60, "the import")

    assert_scored_once_and_right(run.pk)
    # the chunks done before the crash were not computed again
    assert [c.attempts for c in MetricRunChunk.objects.filter(run=run).order_by("index")][:2] == [1, 1]
    assert job.status == JobStatus.SUCCEEDED, job.error
    assert Candidate.objects.filter(original__study=study, system__name="late").count() == 5
    # a second pass finds nothing left to do
    assert requeue_stale_jobs_task() == 0


@pytest.mark.slow
def test_a_whole_worker_killed_mid_run_is_recovered_by_beat_in_the_next_worker(workers, researcher):
    """Real ``celery worker -B`` processes: the first is SIGKILLed (with its pool and
    beat) while a chunk is in flight, and its message is lost (the SQLite-file broker
    never delivers it again; Redis only after an hour). The next worker's beat finds the
    run without a heartbeat and sends it again; it ends with every score once. (RabbitMQ
    delivers the message again itself; the run must end the same.)"""
    from metrics.models import MetricRun, MetricRunChunk

    w = workers(PARAEVAL_JOB_HEARTBEAT_SECONDS=0.3, PARAEVAL_REQUEUE_STALE_SECONDS=2,
                PARAEVAL_REQUEUE_INTERVAL_SECONDS=0.5, PARAEVAL_FAULTS_CHUNK_SECONDS=1.5)
    study = make_study(researcher, "Killed whole", n=8)
    # Queued with no message: the first worker's start sends it (the worker_ready hook).
    run = slow_run(study)

    first = w.start("first", beat=True)
    victim = wait_for(lambda: MetricRunChunk.objects.filter(run=run, done=False, attempts__gte=1).first(),
                      90, "a chunk in flight", log=w.log)
    w.kill(first, sig=signal.SIGKILL)
    assert not MetricRunChunk.objects.get(pk=victim.pk).done
    assert MetricRun.objects.get(pk=run.pk).status == JobStatus.RUNNING

    w.start("second", beat=True)
    run = wait_for(lambda: finished(MetricRun, run.pk), 120, "the run to finish", log=w.log)
    assert_scored_once_and_right(run.pk)
    assert MetricRunChunk.objects.get(pk=victim.pk).attempts >= 2, w.log()
    if not w.broker.startswith(("amqp", "pyamqp")):
        # (RabbitMQ hands a dead connection's unacknowledged message out again at once:
        # there the run finishes by itself, before it can look stale)
        assert "requeued 1 metric run(s)" in w.log("second"), w.log()


# --------------------------------------------------------------------------- a live slow job


@pytest.mark.slow
def test_a_live_job_slower_than_the_stale_period_is_neither_resent_nor_run_twice(workers, researcher):
    """One chunk takes longer than the stale period and reports no progress meanwhile;
    its heartbeat keeps it alive: the periodic pass resends nothing, and a copy sent
    anyway (as a cron job with a short --stale-minutes would) is dropped by the worker."""
    from config.recovery import job_resend, requeue_jobs
    from metrics.models import MetricRun, MetricRunChunk
    from metrics.tasks import metric_run_start_task

    stale = 1.5
    w = workers(PARAEVAL_JOB_HEARTBEAT_SECONDS=0.3, PARAEVAL_REQUEUE_STALE_SECONDS=stale,
                PARAEVAL_FAULTS_CHUNK_SECONDS=6, PARAEVAL_REQUEUE_ON_WORKER_START="off")
    study = make_study(researcher, "Slow but alive", n=4)
    run = slow_run(study)
    w.start("slow", concurrency=3)  # two for the chunks, one free for the copy
    with w.publishing():
        metric_run_start_task.apply_async(args=(run.pk,), queue=w.queue)
        busy = wait_for(lambda: MetricRunChunk.objects.filter(run=run, done=False, attempts__gte=1).first(),
                        90, "a chunk in flight", log=w.log)
        started = time.monotonic()
        while time.monotonic() - started < 2 * stale:  # well past the stale period, the chunk still computing
            time.sleep(0.1)
        still_busy = MetricRunChunk.objects.filter(run=run, done=False, attempts__gte=1).exists()
        # a copy sent anyway: the worker's free process takes it at once and must drop it
        job_resend(metric_run_start_task, run.pk, stale_after=timedelta(seconds=stale), queue=w.queue)
    counts = {what: n for n, what in requeue_jobs(stale_after=timedelta(seconds=stale))}
    assert still_busy, "the chunk finished before the stale period passed; the test proves nothing"
    assert counts["metric run(s)"] == 0, counts

    run = wait_for(lambda: finished(MetricRun, run.pk), 90, "the run to finish", log=w.log)
    assert_scored_once_and_right(run.pk)
    assert [c.attempts for c in MetricRunChunk.objects.filter(run=run)] == [1, 1], w.log()
    assert MetricRunChunk.objects.get(pk=busy.pk).done
    wait_for(lambda: "dropped" in w.log(), 30, "the resent copy to be dropped", log=w.log)


# --------------------------------------------------------------------------- worker start


@pytest.mark.slow
def test_a_starting_worker_sends_the_jobs_queued_while_the_broker_was_down(workers, researcher):
    from annotation.models import Candidate, ImportJob
    from annotation.services import study_import_file
    from metrics import services
    from metrics.models import MetricRun, MetricRunChunk
    from metrics.tasks import metric_run_start_task

    w = workers()
    study = make_study(researcher, "Queued meanwhile", n=6)
    rows = "original_id,original,system,candidate\n" + "".join(f"q{i},Queued original {i}.,late,Late {i}.\n" for i in range(4))
    with broker_at(dead_broker_url()):  # the web requests found the broker down: the jobs stay queued
        job = study_import_file(study=study, data=rows.encode(), filename="q.csv", background=True)
        run = services.metric_run_create(study=study, metric="pinc", chunk_size=2)
    # and a run whose start message did reach the broker: the worker may get it twice (its
    # message, and a copy sent at start if it is still queued then); it must run once —
    # a second start would send its unfinished chunks again
    with broker_at(dead_broker_url()):
        sent = services.metric_run_create(study=make_study(researcher, "Sent", n=6), metric="pinc", chunk_size=2)
    with w.publishing():
        metric_run_start_task.apply_async(args=(sent.pk,), queue=w.queue)
    assert ImportJob.objects.get(pk=job.pk).status == JobStatus.QUEUED
    assert MetricRun.objects.get(pk=run.pk).status == JobStatus.QUEUED

    w.start("fresh")
    job = wait_for(lambda: finished(ImportJob, job.pk), 90, "the queued import", log=w.log)
    run = wait_for(lambda: finished(MetricRun, run.pk), 90, "the queued metric run", log=w.log)
    sent = wait_for(lambda: finished(MetricRun, sent.pk), 90, "the run sent normally", log=w.log)
    assert job.status == JobStatus.SUCCEEDED, job.error
    assert Candidate.objects.filter(original__study=study, system__name="late").count() == 4
    assert_scored_once_and_right(run.pk)
    assert_scored_once_and_right(sent.pk)
    assert set(MetricRunChunk.objects.filter(run=sent).values_list("attempts", flat=True)) == {1}, w.log()
    wait_for(lambda: "worker start: sent" in w.log(), 30, "the worker-start log line", log=w.log)


# --------------------------------------------------------------------------- settings


def test_settings_refuse_a_stale_period_shorter_than_three_heartbeats(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in {"DATABASE_URL", "CELERY_BROKER_URL"}}
    env.update(DJANGO_SETTINGS_MODULE="config.settings", PARAEVAL_VAR_DIR=str(tmp_path),
               PARAEVAL_JOB_HEARTBEAT_SECONDS="10", PARAEVAL_REQUEUE_STALE_SECONDS="20")
    code = "import django; django.setup(); from django.conf import settings; print(settings.CELERY_BEAT_SCHEDULE)"
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
    assert proc.returncode != 0 and "PARAEVAL_REQUEUE_STALE_SECONDS must be at least 3" in proc.stderr
    env.update(PARAEVAL_REQUEUE_STALE_SECONDS="30", PARAEVAL_REQUEUE_INTERVAL_SECONDS="45")
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert "'task': 'paraeval.requeue_stale_jobs', 'schedule': 45.0" in proc.stdout
