"""Celery task of adaptive allocation: ids in, one service call."""

from __future__ import annotations

from celery import shared_task
from django.db import InterfaceError, OperationalError

from annotation.models import Study

from .refresh import adaptive_refresh


@shared_task(name="adaptive.refresh", bind=True, acks_late=True, max_retries=3)
def adaptive_refresh_task(self, study_id: int) -> None:
    study = Study.objects.filter(pk=study_id).first()
    if study is None:
        return
    try:
        adaptive_refresh(study=study)
    except (OperationalError, InterfaceError) as exc:
        raise self.retry(exc=exc, countdown=2**self.request.retries) from exc
