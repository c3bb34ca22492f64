"""Celery tasks of the alignment app: thin wrappers that take ids and call one service.

Retry policy: only a lost database connection is retried (with backoff); bad
input fails the run, and its error is stored for the page. Both services leave
a finished run alone, so a redelivered message changes nothing.
"""

from celery import shared_task
from django.db import InterfaceError, OperationalError

from annotation.alignment.services.scoring import scoring_run_execute
from annotation.alignment.services.systems import aligner_run_execute

RETRY = {"autoretry_for": (OperationalError, InterfaceError), "retry_backoff": 2, "max_retries": 3}


@shared_task(name="alignment.scoring_run", acks_late=True, **RETRY)
def scoring_run_task(run_id: int) -> None:
    scoring_run_execute(run_id=run_id)


@shared_task(name="alignment.aligner_run", acks_late=True, **RETRY)
def aligner_run_task(run_id: int) -> None:
    aligner_run_execute(run_id=run_id)
