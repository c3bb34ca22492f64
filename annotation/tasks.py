"""Celery tasks: thin wrappers that take ids and call one service."""

from celery import shared_task

from annotation.generation import system_generate_run
from annotation.services.imports import import_job_run


@shared_task(name="annotation.import_job_run", acks_late=True, max_retries=3, default_retry_delay=5)
def import_job_run_task(job_id: int) -> None:
    import_job_run(job_id=job_id)


@shared_task(name="participation.release_timed_out", ignore_result=True)
def participants_release_timed_out_task() -> int:
    """The periodic pass (Celery beat): seats of join-link participants idle past their link's timeout expire."""
    from .participation.services import participants_release_timed_out

    return participants_release_timed_out()


@shared_task(name="annotation.system_generate_run", acks_late=True, max_retries=3, default_retry_delay=5)
def system_generate_run_task(job_id: int) -> None:
    system_generate_run(job_id=job_id)
