"""Celery tasks of metric runs and PEM training: thin wrappers around services.

How a run spreads over workers without a result backend
--------------------------------------------------------
paraeval keeps task state in its own tables and runs Celery without a result
backend, so a chord (whose callback needs a backend to count finished header
tasks) is not available. Instead:

1. ``metric_run_start_task`` marks the run running and fans its chunks out
   with a plain :func:`celery.group` of ``metric_run_chunk_task`` signatures:
   every chunk is an independent message, so any number of workers (and worker
   processes) take chunks as they free up.
2. Each chunk task scores its candidates and, in one database transaction,
   upserts the scores (``bulk_create(update_conflicts=True)`` on
   ``(run, candidate)``), flips its chunk row's ``done`` flag (under
   ``select_for_update``) and increments the run's chunk counter with an
   ``F()`` update. Only a chunk not yet done counts, so duplicates never
   double-count.
3. The chunk task whose increment makes the counter reach the total runs the
   finalize step itself (corpus score and bootstrap CI from ALL stored
   statistics). Finalize locks the run row (``select_for_update``) and only
   acts on a run that is still running with every chunk done, so it takes
   effect once.

Delivery guarantees come from the settings: ``acks_late`` and
``reject_on_worker_lost`` put a message back on the queue when the worker
executing it dies, and the redelivered chunk either redoes its (rolled-back)
work or, if its transaction had committed, sees ``done`` and only finishes
the run if nobody has. Cancel sets a flag every chunk checks before it
computes and again before it writes.
"""

from __future__ import annotations

from celery import group, shared_task
from django.db import InterfaceError, OperationalError

from metrics.services.pem_training import pem_model_fail, pem_model_train
from metrics.services.worker import metric_run_chunk_execute, metric_run_fail, metric_run_start

# Transient database trouble (SQLite busy beyond its timeout, a dropped
# PostgreSQL connection) is worth a retry; everything else is recorded on the run.
_TRANSIENT = (OperationalError, InterfaceError)


@shared_task(name="metrics.metric_run_start", bind=True, acks_late=True, max_retries=3)
def metric_run_start_task(self, run_id: int) -> None:
    try:
        chunk_ids = metric_run_start(run_id=run_id)
    except _TRANSIENT as exc:
        if self.request.retries >= self.max_retries:
            metric_run_fail(run_id=run_id, error=f"database error: {exc}")
            return
        raise self.retry(exc=exc, countdown=2**self.request.retries)
    if chunk_ids:
        group(metric_run_chunk_task.si(run_id, chunk_id) for chunk_id in chunk_ids).apply_async()


@shared_task(name="metrics.metric_run_chunk", bind=True, acks_late=True, max_retries=5)
def metric_run_chunk_task(self, run_id: int, chunk_id: int) -> None:
    try:
        metric_run_chunk_execute(run_id=run_id, chunk_id=chunk_id)
    except _TRANSIENT as exc:
        if self.request.retries >= self.max_retries:
            metric_run_fail(run_id=run_id, error=f"database error in chunk {chunk_id}: {exc}")
            return
        raise self.retry(exc=exc, countdown=1 + 2**self.request.retries)


@shared_task(name="metrics.pem_model_train", bind=True, acks_late=True, max_retries=3)
def pem_model_train_task(self, pem_model_id: int) -> None:
    try:
        pem_model_train(pem_model_id=pem_model_id)
    except _TRANSIENT as exc:
        if self.request.retries >= self.max_retries:
            pem_model_fail(pem_model_id=pem_model_id, error=f"database error: {exc}")
            return
        raise self.retry(exc=exc, countdown=2**self.request.retries)
