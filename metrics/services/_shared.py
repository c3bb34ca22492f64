"""Helpers shared by the metric-run service modules (private to the package).

The finished states, the map from a run's resource ids to their stored files, JSON-safe
parameter values, finite-or-None numbers and the run row's timestamped update.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from django.utils import timezone

from config.jobs.enums import JobStatus
from metrics.core.base.params import MetricError

from ..models import MetricResource, MetricRun

FINISHED = (JobStatus.SUCCEEDED, JobStatus.FAILED, JobStatus.CANCELLED)


def resource_paths(resource_ids: Mapping[str, int]) -> dict[str, str]:
    """Map resource names to the stored files of :class:`MetricResource` ids."""
    ids = {name: int(pk) for name, pk in resource_ids.items()}
    found = {r.pk: r for r in MetricResource.objects.filter(pk__in=ids.values())}
    paths = {}
    for name, pk in ids.items():
        res = found.get(pk)
        if res is None:
            raise MetricError(f"resource {name!r}: uploaded resource #{pk} no longer exists")
        paths[name] = res.file.path
    return paths


def run_update(run_id: int, **fields) -> int:
    return MetricRun.objects.filter(pk=run_id).update(**fields, updated_at=timezone.now())


def finite_or_none(x: float) -> float | None:
    x = float(x)
    return x if math.isfinite(x) else None
