"""Celery tasks of judging: thin wrappers that take ids and call one service.

Only a lost database connection is retried (the run resumes where it stopped); a
refusal or another error fails the job, whose error the researcher's page shows.
A finished job is left alone, so a redelivered message changes nothing.
"""

from celery import shared_task
from django.db import InterfaceError, OperationalError

from annotation.judging.protocols.absolute.imports import judgments_import_job_run
from annotation.judging.protocols.absolute.screening import qc_auto_check_run
from annotation.judging.services.open_job import open_job_run

RETRY = {"autoretry_for": (OperationalError, InterfaceError), "retry_backoff": 2, "max_retries": 3}


@shared_task(name="judging.open_job_run", acks_late=True, **RETRY)
def open_job_run_task(job_id: int) -> None:
    open_job_run(job_id=job_id)


@shared_task(name="judging.qc_auto_check", acks_late=True, **RETRY)
def qc_auto_check_task(assignment_id: int) -> None:
    """The automatic QC check after a judgment, off the request path (services.queueing.after_judgment)."""
    qc_auto_check_run(assignment_id=assignment_id)


@shared_task(name="judging.judgments_import_run", acks_late=True, **RETRY)
def judgments_import_run_task(job_id: int) -> None:
    """A large judgments file, imported off the request (services.queueing.judgments_import_start)."""
    judgments_import_job_run(job_id=job_id)
