"""Celery task of reports: a thin wrapper around ``services.report_build``.

Ids in, one service call. ``acks_late`` (with the project's
``reject_on_worker_lost``) puts the message back if the worker dies mid-build;
the service leaves a finished report alone, so a second delivery changes nothing.
"""

from __future__ import annotations

from celery import shared_task
from django.db import InterfaceError, OperationalError

from metrics.reports.services.build import report_build, report_fail

# Transient database trouble (SQLite busy beyond its timeout, a dropped PostgreSQL
# connection) is worth a retry; everything else is recorded on the report.
_TRANSIENT = (OperationalError, InterfaceError)


@shared_task(name="reports.report_build", bind=True, acks_late=True, max_retries=3)
def report_build_task(self, report_id: int) -> None:
    try:
        report_build(report_id=report_id)
    except _TRANSIENT as exc:
        if self.request.retries >= self.max_retries:
            report_fail(report_id=report_id, error=f"database error: {exc}")
            return
        raise self.retry(exc=exc, countdown=2**self.request.retries)
