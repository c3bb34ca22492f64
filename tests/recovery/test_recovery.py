"""Automatic recovery of background work (``config/recovery.py``), with real workers (the
claims and the settings check, which need none: test_recovery_claims.py).

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

import signal
import time
from datetime import timedelta

import pytest

from config.jobs.enums import JobStatus
from tests.brokers import broker_at, dead_broker_url
from tests.recovery.recovery_helpers import (
    assert_scored_once_and_right,
    backdate,
    finished,
    make_study,
    slow_run,
    wait_for,
)

# --------------------------------------------------------------------------- a dead worker's job


@pytest.mark.slow
def test_the_periodic_task_finishes_work_a_dead_worker_left_running_exactly_once(celery_worker, researcher):
    """In-process worker on the configured broker. What a worker that died mid-run leaves
    behind: the job 'running', no heartbeat since, no message anywhere."""
    from annotation.models import Candidate, ImportJob
    from annotation.services.queueing import study_import_file
    from config.recovery import requeue_stale_jobs_task
    from metrics.models import MetricRun, MetricRunChunk
    from metrics.services.runs import metric_run_create
    from metrics.services.worker import metric_run_chunk_execute, metric_run_start

    study = make_study(researcher, "Dead worker", n=9)
    run = metric_run_create(study=study, metric="pinc", chunk_size=2, enqueue=False)
    metric_run_start(run_id=run.pk)
    chunks = list(MetricRunChunk.objects.filter(run=run).order_by("index"))
    for chunk in chunks[:2]:  # two chunks were done before the worker died; its third was rolled back
        metric_run_chunk_execute(run_id=run.pk, chunk_id=chunk.pk)
    backdate(MetricRun, run.pk)

    rows = "original_id,original,system,candidate\n" + "".join(
        f"n{i},New original {i}.,late,Late {i}.\n" for i in range(5)
    )
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

    w = workers(
        PARAEVAL_JOB_HEARTBEAT_SECONDS=0.3,
        PARAEVAL_REQUEUE_STALE_SECONDS=2,
        PARAEVAL_REQUEUE_INTERVAL_SECONDS=0.5,
        PARAEVAL_FAULTS_CHUNK_SECONDS=1.5,
    )
    study = make_study(researcher, "Killed whole", n=8)
    # Queued with no message: the first worker's start sends it (the worker_ready hook).
    run = slow_run(study)

    first = w.start("first", beat=True)
    victim = wait_for(
        lambda: MetricRunChunk.objects.filter(run=run, done=False, attempts__gte=1).first(),
        90,
        "a chunk in flight",
        log=w.log,
    )
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
    w = workers(
        PARAEVAL_JOB_HEARTBEAT_SECONDS=0.3,
        PARAEVAL_REQUEUE_STALE_SECONDS=stale,
        PARAEVAL_FAULTS_CHUNK_SECONDS=6,
        PARAEVAL_REQUEUE_ON_WORKER_START="off",
    )
    study = make_study(researcher, "Slow but alive", n=4)
    run = slow_run(study)
    w.start("slow", concurrency=3)  # two for the chunks, one free for the copy
    with w.publishing():
        metric_run_start_task.apply_async(args=(run.pk,), queue=w.queue)
        busy = wait_for(
            lambda: MetricRunChunk.objects.filter(run=run, done=False, attempts__gte=1).first(),
            90,
            "a chunk in flight",
            log=w.log,
        )
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
    from annotation.services.queueing import study_import_file
    from metrics.models import MetricRun, MetricRunChunk
    from metrics.services.runs import metric_run_create
    from metrics.tasks import metric_run_start_task

    w = workers()
    study = make_study(researcher, "Queued meanwhile", n=6)
    rows = "original_id,original,system,candidate\n" + "".join(
        f"q{i},Queued original {i}.,late,Late {i}.\n" for i in range(4)
    )
    with broker_at(dead_broker_url()):  # the web requests found the broker down: the jobs stay queued
        job = study_import_file(study=study, data=rows.encode(), filename="q.csv", background=True)
        run = metric_run_create(study=study, metric="pinc", chunk_size=2)
    # and a run whose start message did reach the broker: the worker may get it twice (its
    # message, and a copy sent at start if it is still queued then); it must run once —
    # a second start would send its unfinished chunks again
    with broker_at(dead_broker_url()):
        sent = metric_run_create(study=make_study(researcher, "Sent", n=6), metric="pinc", chunk_size=2)
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
