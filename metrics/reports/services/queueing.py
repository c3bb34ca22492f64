"""Asking for a report: create it and queue its build (:func:`report_create`, :func:`report_rebuild`),
and resend the builds of stranded reports for the requeue pass (:func:`reports_requeue_stale`).
The build itself, what the worker runs, is :mod:`.build`; the task between them is
:mod:`metrics.reports.tasks`."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db import transaction

from annotation.judging.selectors.design import study_criteria
from annotation.models import Study
from config.jobs.enums import JobStatus
from config.jobs.services import job_enqueue
from config.recovery import job_resend, jobs_to_resend

from .. import selectors
from ..models import Report
from ..tasks import report_build_task
from .progress import PHASES
from .report_settings import report_settings_clean


def _enqueue_build(report_id: int) -> None:
    job_enqueue(report_build_task, report_id)


@transaction.atomic
def report_create(
    *, study: Study, created_by: User | None = None, settings: Mapping[str, Any] | None = None, enqueue: bool = True
) -> Report:
    """Queue a report of ``study`` with ``settings`` (see :func:`report_settings_clean`).

    Refused (``ValidationError``) when the study has no judgments yet. A report with
    the same settings still queued or running is returned instead of a second one.
    With ``enqueue`` the build task is sent after the transaction commits; without
    it the caller runs :func:`report_build` (the ``report`` command does).
    """
    clean = report_settings_clean(settings, criteria=study_criteria(study=study))
    if not selectors.study_has_judgments(study=study):
        raise ValidationError(
            "This study has no judgments yet: open judging and let the judges rate (or fill "
            "the study with simulated judges) before building a report."
        )
    for active in Report.objects.filter(study=study, status__in=[JobStatus.QUEUED, JobStatus.RUNNING]):
        if active.settings == clean:
            return active
    report = Report(study=study, created_by=created_by, settings=clean, progress_total=len(PHASES))
    report.full_clean()
    report.save()
    if enqueue:
        transaction.on_commit(lambda: _enqueue_build(report.pk))
    return report


def report_rebuild(*, report: Report, created_by: User | None = None, enqueue: bool = True) -> Report:
    """A new report of the same study with the same settings (the "refresh" of a stale one)."""
    return report_create(study=report.study, created_by=created_by, settings=report.settings, enqueue=enqueue)


def reports_requeue_stale(*, stale_after=None, queued_after=None) -> int:
    """Send the build task again for every queued report (after a broker outage) and, with
    ``stale_after``, for every running one whose heartbeat stopped that long ago (its
    worker died). Each is a resent message: it runs only if it can claim the report
    (``config.recovery``). Returns how many were sent."""
    return sum(
        job_resend(report_build_task, report_id, stale_after=stale_after)
        for report_id in jobs_to_resend(Report, stale_after=stale_after, queued_after=queued_after)
    )
