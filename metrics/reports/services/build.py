"""Build a report (the worker's side) or mark it failed; asking for one is :mod:`.queueing`.

The report job's life (load, mark running, compute, fail or succeed under a row lock)
is :func:`report_build`, once for every protocol; what differs is the computation, the
study's unit's method ``report_compute(*, report, settings) -> ReportComputed``, which lives
in the protocol package's ``report.py`` (the absolute protocol's statistics come from
``metrics.core.stats.report.build_report``, then its figures). A computation that has
phases worth showing records them with :func:`.progress.report_phase`.
"""

from __future__ import annotations

import logging
import time
from importlib import metadata
from typing import Any

from django.db import InterfaceError, OperationalError, transaction
from django.utils import timezone

from annotation.judging.protocols.registry import protocol_for_study
from config.jobs.enums import JobStatus

from ..models import Report, ReportPlot
from .progress import PHASES, report_update
from .report_settings import DEFAULT_SETTINGS

logger = logging.getLogger(__name__)


def report_fail(*, report_id: int, error: str) -> None:
    """Mark a report failed with a message the researcher can act on."""
    report_update(
        report_id=report_id, status=JobStatus.FAILED, phase="failed", error=error[:5000], finished_at=timezone.now()
    )


def _versions() -> dict[str, str]:
    out = {}
    for pkg in ("django", "matplotlib", "celery"):
        try:
            out[pkg] = metadata.version(pkg)
        except metadata.PackageNotFoundError:
            out[pkg] = "unknown"
    return out


def report_build(*, report_id: int) -> Report:
    """Build a queued report (the worker's side; the ``report`` command calls it directly).

    Marks the report running, runs the computation of the study's protocol (the unit's
    :meth:`report_compute`) with the report's
    settings over the defaults, and stores the result, figures and fingerprint at
    once. A finished report is left alone, and a report another delivery finished
    meanwhile is kept, so a task delivered twice leaves the same rows. Data problems
    (``ValueError``, e.g. every judge excluded) fail the report with their message;
    transient database errors propagate so the task can retry.
    """
    report = Report.objects.select_related("study").get(pk=report_id)
    if report.is_finished:
        return report
    started = time.monotonic()
    cpu = time.process_time()
    report_update(
        report_id=report_id,
        status=JobStatus.RUNNING,
        started_at=timezone.now(),
        error="",
        progress_done=0,
        progress_total=len(PHASES),
        phase=PHASES[0],
    )
    s = {**DEFAULT_SETTINGS, **(report.settings or {})}
    unit = protocol_for_study(study=report.study)
    try:
        computed = unit.report_compute(report=report, settings=s)
    except (OperationalError, InterfaceError):
        raise
    except ValueError as exc:
        report_fail(report_id=report_id, error=f"The report could not be built: {exc}.")
        return Report.objects.get(pk=report_id)
    except Exception as exc:  # anything else is a bug, but the researcher must see the run end
        logger.exception("report %s failed", report_id)
        report_fail(report_id=report_id, error=f"Unexpected error while building the report: {exc!r}")
        return Report.objects.get(pk=report_id)
    build_info: dict[str, Any] = {}
    if computed.versions is not None:
        build_info["versions"] = {**computed.versions, **_versions()}
    build_info["wall_seconds"] = round(time.monotonic() - started, 3)
    build_info["n_judgment_rows"] = computed.n_judgment_rows
    with transaction.atomic():
        locked = Report.objects.select_for_update().get(pk=report_id)
        if locked.status == JobStatus.SUCCEEDED:
            return locked  # another delivery of the task finished first
        ReportPlot.objects.filter(report_id=report_id).delete()
        ReportPlot.objects.bulk_create(
            [
                ReportPlot(report_id=report_id, slug=p.slug, title=p.title, caption=p.caption, position=i, svg=p.svg)
                for i, p in enumerate(computed.plots)
            ]
        )
        report_update(
            report_id=report_id,
            status=JobStatus.SUCCEEDED,
            phase="done",
            progress_done=len(PHASES),
            result=computed.result,
            fingerprint=computed.fingerprint,
            excluded_judges=computed.excluded_judges,
            metric_runs=computed.metric_runs,
            build_info=build_info,
            compute_seconds=round(time.process_time() - cpu, 3),
            finished_at=timezone.now(),
        )
    return Report.objects.get(pk=report_id)
