"""A running report's progress: its phases, as the report page's progress bar shows them.

Below the job (:mod:`.build`) and beside it, so that a protocol's report computation may
record its phases without importing the job.
"""

from __future__ import annotations

from django.utils import timezone

from ..models import Report

PHASES = ("reading judgments", "reading metric scores", "agreement and correlations", "plots", "saving")


def report_update(*, report_id: int, **fields) -> int:
    """Write ``fields`` on the report's row (stamping ``updated_at``); answers the rows written."""
    return Report.objects.filter(pk=report_id).update(**fields, updated_at=timezone.now())


def report_phase(*, report_id: int, index: int) -> None:
    """Record that a running report has reached ``PHASES[index]`` (its progress bar)."""
    report_update(report_id=report_id, phase=PHASES[index], progress_done=index)
