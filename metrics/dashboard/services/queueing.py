"""Asking the worker for dashboard work: a poll that queues one refresh when the study moved
(:func:`dashboard_poll`), and a plan request (:func:`study_plan_request`). What the worker
runs is :mod:`.snapshot` (the refresh) and :mod:`.planning` (the plan); the tasks between
them are :mod:`metrics.dashboard.tasks`."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import timedelta
from typing import Any

from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from annotation.adaptive.publication import adaptive_publish
from annotation.models import Study
from annotation.services.jobs import job_enqueue
from metrics.dashboard.models import Dashboard
from metrics.dashboard.services.planning import pilot_assumptions, plan_params_clean
from metrics.dashboard.services.snapshot import (
    answers_due,
    dashboard_get_or_create,
    dashboard_version_cached,
    refresh_rest,
)
from metrics.dashboard.tasks import dashboard_refresh_task, study_plan_task

#: A refresh queued this long ago without a result is queued again (a lost message).
REQUEUE_AFTER = timedelta(seconds=60)


def dashboard_poll(*, study: Study) -> tuple[Dashboard, str]:
    """The dashboard (its snapshot and plan deferred: read them only to send them) and the
    study's version now; queues a refresh when they differ.

    One refresh at a time per study: the queue mark is claimed by a conditional update,
    so twenty dashboards open on one study queue one refresh, not twenty; and none while the
    snapshot is younger than the refresh interval, nor while the worker has the next round
    scheduled (its mark is later than the snapshot): while a page polls, the worker's rounds
    follow each other by themselves (:func:`~.snapshot.dashboard_refresh_round`).
    """
    dashboard = Dashboard.objects.defer("snapshot_text", "plan").filter(study=study).first() or dashboard_get_or_create(
        study=study
    )
    version = dashboard_version_cached(study=study)
    now = timezone.now()
    if dashboard.viewed_at is None or now - dashboard.viewed_at > timedelta(seconds=10):
        Dashboard.objects.filter(pk=dashboard.pk).update(viewed_at=now)
        adaptive_publish()  # a researcher's process keeps the judges' list of adaptive studies fresh
    stale = dashboard.snapshot_version != version or answers_due(dashboard, version)
    resting = dashboard.snapshot_at is not None and now - dashboard.snapshot_at < refresh_rest(dashboard=dashboard)
    if stale and not resting:
        idle = Q(refresh_queued_at__isnull=True) | Q(refresh_queued_at__lt=now - REQUEUE_AFTER)
        if dashboard.snapshot_at is not None:
            idle |= Q(refresh_queued_at__lt=dashboard.snapshot_at)
        if Dashboard.objects.filter(idle, pk=dashboard.pk).update(refresh_queued_at=now):
            dashboard.refresh_queued_at = now  # the answer's Paraeval-Poll-After counts from it
            transaction.on_commit(lambda: job_enqueue(dashboard_refresh_task, study.pk, now.isoformat()))
    return dashboard, version


def study_plan_request(*, study: Study, raw: Mapping[str, Any]) -> Dashboard:
    """Check the request, mark the plan as computing and queue it (the worker saves the answer)."""
    params = plan_params_clean(raw, study=study)
    if params["source"] == "pilot":
        pilot_assumptions(study=study)  # say now, not in the worker, that there is no pilot yet
    dashboard = dashboard_get_or_create(study=study)
    Dashboard.objects.filter(pk=dashboard.pk).update(
        plan={"status": "computing", "params": params}, plan_at=timezone.now(), updated_at=timezone.now()
    )
    transaction.on_commit(lambda: job_enqueue(study_plan_task, study.pk, params))
    dashboard.refresh_from_db()
    return dashboard
