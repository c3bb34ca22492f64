"""Celery tasks of the dashboard: ids in, one service call each."""

from __future__ import annotations

from celery import shared_task
from django.db import InterfaceError, OperationalError

from annotation.models import Study

from .services.planning import study_plan_run
from .services.snapshot import dashboard_refresh


@shared_task(name="dashboard.refresh", bind=True, acks_late=True, max_retries=3)
def dashboard_refresh_task(self, study_id: int) -> None:
    study = Study.objects.filter(pk=study_id).first()
    if study is None:
        return
    try:
        dashboard_refresh(study=study)
    except (OperationalError, InterfaceError) as exc:
        raise self.retry(exc=exc, countdown=2**self.request.retries)


@shared_task(name="dashboard.plan", bind=True, acks_late=True, max_retries=2)
def study_plan_task(self, study_id: int, params: dict) -> None:
    study = Study.objects.filter(pk=study_id).first()
    if study is None:
        return
    try:
        study_plan_run(study=study, params=params)
    except (OperationalError, InterfaceError) as exc:
        raise self.retry(exc=exc, countdown=2**self.request.retries)
