"""Celery tasks: thin wrappers that take ids and call one service."""

from celery import shared_task

from . import services


@shared_task(name="annotation.import_job_run", acks_late=True, max_retries=3, default_retry_delay=5)
def import_job_run_task(job_id: int) -> None:
    services.import_job_run(job_id=job_id)


# Generation of paraeval-made systems lives in its own module; importing its task
# here registers it with every worker (autodiscovery reads <app>.tasks only).
from .generation import system_generate_run_task  # noqa: E402,F401
