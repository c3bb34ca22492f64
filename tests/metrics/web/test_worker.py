"""Metric runs through a real Celery worker (in a thread, on the configured broker)."""

from __future__ import annotations

import time

import pytest
import sacrebleu

from annotation.models import Candidate
from metrics.models import MetricRun, MetricRunChunk, MetricScore
from metrics.services.runs import metric_run_cancel, metric_run_create, metric_run_retry
from metrics.services.worker import metric_run_chunk_execute, metric_run_start
from metrics.tasks import metric_run_chunk_task, metric_run_start_task

from .conftest import make_study


def _wait(run_id: int, timeout: float = 60) -> MetricRun:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        run = MetricRun.objects.get(pk=run_id)
        if run.is_finished:
            return run
        time.sleep(0.1)
    run = MetricRun.objects.get(pk=run_id)
    raise AssertionError(
        f"run {run_id} did not finish: {run.status} {run.phase} {run.progress_done}/{run.progress_total}"
    )


def _wait_chunks_attempted(run_id: int, n: int, timeout: float = 60) -> None:
    """Wait until ``n`` chunk deliveries have been seen (every delivery counts an attempt)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if sum(MetricRunChunk.objects.filter(run_id=run_id).values_list("attempts", flat=True)) >= n:
            return
        time.sleep(0.1)
    raise AssertionError("the duplicate chunk messages were not consumed")


@pytest.mark.django_db(transaction=True)
def test_a_run_through_a_real_worker_executed_twice_leaves_one_score_per_candidate(celery_worker, researcher):
    study = make_study(researcher)
    run = metric_run_create(study=study, metric="bleu", chunk_size=4, created_by=researcher)
    assert run.status == "queued" and run.progress_total == 6
    metric_run_start_task.delay(run.pk)  # a duplicate start: every chunk is fanned out twice
    run = _wait(run.pk)
    _wait_chunks_attempted(run.pk, 12)
    assert run.status == "succeeded", run.error
    assert run.progress_done == 6 and run.started_at <= run.finished_at
    cands = Candidate.objects.filter(original__study=study).select_related("original")
    scores = dict(MetricScore.objects.filter(run=run).values_list("candidate_id", "score"))
    assert len(scores) == 21
    for c in cands:
        assert scores[c.pk] == pytest.approx(sacrebleu.sentence_bleu(c.text, [c.original.text]).score, abs=1e-9)

    # Executed a second time: the start task and every chunk message delivered again.
    metric_run_start_task.delay(run.pk)
    for chunk in MetricRunChunk.objects.filter(run=run):
        metric_run_chunk_task.delay(run.pk, chunk.pk)
    _wait_chunks_attempted(run.pk, 18)  # the duplicates find the run finished and write nothing
    assert MetricScore.objects.filter(run=run).count() == 21
    again = MetricRun.objects.get(pk=run.pk)
    assert (again.status, again.progress_done, again.corpus_score, again.finished_at) == (
        "succeeded",
        6,
        run.corpus_score,
        run.finished_at,
    )


@pytest.mark.django_db(transaction=True)
def test_a_cancelled_then_retried_run_through_a_real_worker_scores_every_candidate_once(celery_worker, researcher):
    study = make_study(researcher)
    run = metric_run_create(study=study, metric="pinc", chunk_size=5, created_by=researcher, enqueue=False)
    # The first attempt got two chunks through before it was cancelled.
    chunk_ids = metric_run_start(run_id=run.pk)
    for chunk_id in chunk_ids[:2]:
        metric_run_chunk_execute(run_id=run.pk, chunk_id=chunk_id)
    metric_run_cancel(run=run)
    # The third chunk arrives while the run is cancelled: it writes nothing.
    metric_run_chunk_task.delay(run.pk, chunk_ids[2])
    _wait_chunks_attempted(run.pk, 3)
    assert MetricScore.objects.filter(run=run).count() == 10
    assert MetricRun.objects.get(pk=run.pk).status == "cancelled"
    metric_run_retry(run=run)
    # ... and chunk 0 is also delivered once more, as a stale duplicate.
    metric_run_chunk_task.delay(run.pk, chunk_ids[0])
    run = _wait(run.pk)
    assert run.status == "succeeded", run.error
    assert MetricScore.objects.filter(run=run).count() == 21
    assert run.progress_done == run.progress_total == 5


@pytest.mark.django_db(transaction=True)
def test_a_failure_in_a_worker_is_recorded_with_its_cause(celery_worker, researcher):
    study = make_study(researcher, missing_reference_at=5, with_control=False, name="Refs missing")
    run = metric_run_create(study=study, metric="chrf", against="reference", chunk_size=3)
    run = _wait(run.pk)
    assert run.status == "failed"
    bad = Candidate.objects.get(original__study=study, original__external_id="v5", system__name="human")
    assert f"candidate {bad.pk} (original 'v5', system 'human')" in run.error
