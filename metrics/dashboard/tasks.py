"""Celery tasks of the dashboard: ids in, one service call each."""

from __future__ import annotations

from datetime import datetime

from celery import shared_task
from django.conf import settings
from django.db import InterfaceError, OperationalError

from annotation.models import Study
from config.jobs.services import job_enqueue
from config.recovery import JobHeartbeat

from .models import Dashboard
from .services.planning import study_plan_claim, study_plan_run
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


class _PlanHeartbeat(JobHeartbeat):
    """Touches the plan's ``plan_at`` while its worker computes it: a computing plan untouched for
    the stale period lost its worker (:func:`~.services.queueing.plans_requeue_stale` fails it)."""

    def __init__(self, dashboard_pk: int, request: str, every: float):
        super().__init__(Dashboard, dashboard_pk, every)
        self.request = request

    def beat(self) -> None:
        from django.utils import timezone

        Dashboard.objects.filter(pk=self.pk, plan__request=self.request, plan__status="computing").update(
            plan_at=timezone.now()
        )


@shared_task(name="dashboard.plan", bind=True, acks_late=True, max_retries=2)
def study_plan_task(self, study_id: int, params: dict, request: str | None = None) -> None:
    """Compute one plan (``request``: its id, from :func:`~.services.queueing.study_plan_request`;
    absent in messages queued before plans had one)."""
    study = Study.objects.filter(pk=study_id).first()
    if study is None:
        return
    try:
        if request is None:
            study_plan_run(study=study, params=params)
            return
        if not study_plan_claim(study=study, request=request):
            return  # superseded by a newer request, done, or computed by another delivery
        if self.request.is_eager:  # run in the caller (tests): nothing to keep alive
            study_plan_run(study=study, params=params, request=request)
            return
        dashboard_pk = Dashboard.objects.values_list("pk", flat=True).get(study=study)  # the claim found it
        with _PlanHeartbeat(dashboard_pk, request, settings.PARAEVAL_JOB_HEARTBEAT_SECONDS):
            study_plan_run(study=study, params=params, request=request)
    except (OperationalError, InterfaceError) as exc:
        raise self.retry(exc=exc, countdown=2**self.request.retries)
