"""Asking the worker for dashboard work: a poll that queues one refresh when the study moved
(:func:`dashboard_poll`), a plan request (:func:`study_plan_request`) and the requeue pass of plans
(:func:`plans_requeue_stale`). What the worker
runs is :mod:`.snapshot` (the refresh) and :mod:`.planning` (the plan); the tasks between
them are :mod:`metrics.dashboard.tasks`."""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping
from datetime import timedelta
from typing import Any

from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from annotation.adaptive.publication import adaptive_publish
from annotation.models import Study
from config.jobs.services import job_enqueue
from config.recovery import stale_after_default
from metrics.dashboard.models import Dashboard
from metrics.dashboard.services.planning import pilot_assumptions, plan_cost_check, plan_params_clean
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
    """Check the request, mark the plan as computing and queue it (the worker saves the answer).

    Its cost is counted before any work (:func:`~.planning.plan_cost_check`: a ``ValidationError``
    naming the value to change). The same inputs again while that plan is computing are the same
    request: nothing more is queued. Other inputs replace it: the plan computing is superseded (its
    worker writes nothing) and the new one is queued under its own ``request`` id.
    """
    params = plan_params_clean(raw, study=study)
    if params["source"] == "pilot":  # say now, not in the worker, that there is no pilot yet
        plan_cost_check(params=params, assumptions=pilot_assumptions(study=study, criterion=params["criterion"]))
    dashboard = dashboard_get_or_create(study=study)
    now = timezone.now()
    with transaction.atomic():
        current, touched = Dashboard.objects.select_for_update().values_list("plan", "plan_at").get(pk=dashboard.pk)
        current = current or {}
        alive = touched is not None and now - touched < stale_after_default()  # else its worker may be gone
        if current.get("status") == "computing" and alive and _same_params(current.get("params"), params):
            dashboard.refresh_from_db()
            return dashboard
        request = uuid.uuid4().hex
        Dashboard.objects.filter(pk=dashboard.pk).update(
            plan={"status": "computing", "params": params, "request": request}, plan_at=now, updated_at=now
        )
        transaction.on_commit(lambda: job_enqueue(study_plan_task, study.pk, params, request))
    dashboard.refresh_from_db()
    return dashboard


def _same_params(a: object, b: Mapping[str, Any]) -> bool:
    # As stored (JSON) and as cleaned: compared as JSON, so 0.3 and 0.3, 5 and 5 agree.
    return json.dumps(a, sort_keys=True, default=str) == json.dumps(dict(b), sort_keys=True, default=str)


_DIED = (
    "The worker computing this plan stopped before it finished (it was restarted, or ran out of memory). "
    "Plan again; if it happens again, plan with fewer simulations or originals."
)


def plans_requeue_stale(*, stale_after: timedelta | None = None, queued_after: timedelta | None = None) -> int:
    """The requeue pass of plans (``config.recovery``): a plan whose worker died is failed, one
    whose message was lost is sent again; returns how many plans it changed.

    A plan's worker marks it ``started`` and touches ``plan_at`` every heartbeat while it computes
    (:mod:`metrics.dashboard.tasks`). With ``stale_after``, a started plan untouched that long lost
    its worker (killed, out of memory, restarted): it is failed, and the page says so, rather than
    resent — a plan that killed its worker would kill the next. A plan not started yet is sent again
    (all of them, or with ``queued_after`` those queued that long ago); the worker's claim runs it once.
    """
    now = timezone.now()
    changed = 0
    computing = Dashboard.objects.filter(plan__status="computing").values_list("pk", "study_id", "plan", "plan_at")
    for pk, study_id, plan, plan_at in computing:
        request = plan.get("request")
        if request is None:  # queued before plans had an id: nothing can claim it; fail it once stale
            if stale_after is not None and plan_at is not None and plan_at < now - stale_after:
                changed += Dashboard.objects.filter(
                    pk=pk, plan__status="computing", plan__request__isnull=True, plan_at=plan_at
                ).update(plan={**plan, "status": "failed", "error": _DIED}, plan_at=now, updated_at=now)
            continue
        if plan.get("started"):
            if stale_after is None or plan_at is None or plan_at >= now - stale_after:
                continue
            failed = {
                "status": "failed",
                "params": plan.get("params") or {},
                "request": request,
                "error": _DIED,
            }
            changed += Dashboard.objects.filter(pk=pk, plan__request=request, plan__status="computing").update(
                plan=failed, plan_at=now, updated_at=now
            )
        elif request and (queued_after is None or plan_at is None or plan_at < now - queued_after):
            if Dashboard.objects.filter(pk=pk, plan__request=request, plan__status="computing").update(plan_at=now):
                job_enqueue(study_plan_task, study_id, plan.get("params") or {}, request)
                changed += 1
    return changed
