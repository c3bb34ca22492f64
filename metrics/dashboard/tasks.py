"""Celery tasks of the dashboard: ids in, one service call each."""

from __future__ import annotations

from datetime import datetime

from celery import shared_task
from django.db import InterfaceError, OperationalError

from annotation.models import Study
from annotation.services.jobs import job_enqueue

from .services.planning import study_plan_run
from .services.snapshot import dashboard_refresh_round


@shared_task(name="dashboard.refresh", bind=True, acks_late=True, max_retries=3)
def dashboard_refresh_task(self, study_id: int, mark: str | None = None) -> None:
    """One round of a study's refreshes; the next one, while the dashboard is watched, is this
    task again at the time the round names (``mark``: the round's ``refresh_queued_at``)."""
    study = Study.objects.filter(pk=study_id).first()
    if study is None:
        return
    try:
        following = dashboard_refresh_round(study=study, mark=datetime.fromisoformat(mark) if mark else None)
    except (OperationalError, InterfaceError) as exc:
        raise self.retry(exc=exc, countdown=2**self.request.retries)
    if following is not None and not self.request.is_eager:  # run in the caller (tests): one round
        job_enqueue(dashboard_refresh_task, study_id, following.isoformat(), eta=following)


@shared_task(name="dashboard.plan", bind=True, acks_late=True, max_retries=2)
def study_plan_task(self, study_id: int, params: dict) -> None:
    study = Study.objects.filter(pk=study_id).first()
    if study is None:
        return
    try:
        study_plan_run(study=study, params=params)
    except (OperationalError, InterfaceError) as exc:
        raise self.retry(exc=exc, countdown=2**self.request.retries)
