"""A chunk that kills its worker process is retried a capped number of times, then the run fails with the reason."""

from __future__ import annotations

import pytest

from metrics.core.pinc import PincMetric
from metrics.models import MetricRunChunk
from metrics.services.instances import metric_cache
from metrics.services.runs import metric_run_create, metric_run_retry
from metrics.services.worker import metric_run_chunk_execute, metric_run_execute, metric_run_start

pytestmark = pytest.mark.django_db


class WorkerDied(BaseException):
    """Stands for the process dying mid-chunk: nothing after it runs, no ``except Exception`` sees it."""


def _deliver(run, chunk):
    try:
        return metric_run_chunk_execute(run_id=run.pk, chunk_id=chunk.pk)
    except WorkerDied:
        return None


def test_a_chunk_that_kills_its_worker_is_tried_max_attempts_times_then_the_run_fails(
    metric_study, monkeypatch, settings
):
    settings.PARAEVAL_CHUNK_MAX_ATTEMPTS = 3
    metric_cache.clear()
    run = metric_run_create(study=metric_study, metric="pinc", chunk_size=7, enqueue=False)
    metric_run_start(run_id=run.pk)
    first, second, third = MetricRunChunk.objects.filter(run=run).order_by("index")
    assert metric_run_chunk_execute(run_id=run.pk, chunk_id=first.pk) is False  # a healthy chunk

    calls = []

    def deadly(self, originals, candidates, references):
        calls.append(len(candidates))
        raise WorkerDied

    monkeypatch.setattr(PincMetric, "_sentence_values", deadly)
    for _ in range(3):  # the broker (or the recovery pass) delivers it again and again
        _deliver(run, second)
    run.refresh_from_db()
    assert run.status == "running" and len(calls) == 3

    _deliver(run, second)  # the fourth delivery does not compute: it ends the run
    run.refresh_from_db()
    assert len(calls) == 3
    assert run.status == "failed"
    assert "chunk 2 of 3" in run.error and "started 3 times" in run.error
    assert "PARAEVAL_CHUNK_MAX_ATTEMPTS=3" in run.error
    assert MetricRunChunk.objects.get(pk=first.pk).done  # work already done is kept

    # After the cause is fixed, a retry gets fresh attempts and completes the run.
    monkeypatch.undo()
    settings.PARAEVAL_CHUNK_MAX_ATTEMPTS = 3
    metric_cache.clear()
    metric_run_retry(run=run)
    run = metric_run_execute(run_id=run.pk)
    assert run.status == "succeeded", run.error
    assert MetricRunChunk.objects.filter(run=run, done=True).count() == 3


def test_duplicate_deliveries_of_a_finished_chunk_never_fail_the_run(metric_study, settings):
    settings.PARAEVAL_CHUNK_MAX_ATTEMPTS = 1
    run = metric_run_create(study=metric_study, metric="pinc", chunk_size=7, enqueue=False)
    metric_run_start(run_id=run.pk)
    chunks = list(MetricRunChunk.objects.filter(run=run).order_by("index"))
    metric_run_chunk_execute(run_id=run.pk, chunk_id=chunks[0].pk)
    for _ in range(3):
        metric_run_chunk_execute(run_id=run.pk, chunk_id=chunks[0].pk)
    for c in chunks[1:]:
        metric_run_chunk_execute(run_id=run.pk, chunk_id=c.pk)
    run.refresh_from_db()
    assert run.status == "succeeded", run.error
