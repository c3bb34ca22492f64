"""Adaptive allocation, the worker's side: recompute a study's per-system tallies and priorities
(:func:`adaptive_refresh`, run by the task at most every ``REFRESH_SECONDS``), and stop the study's
judging when the ranking is stable (:func:`adaptive_stop`)."""

from __future__ import annotations

import math

from django.db import transaction
from django.utils import timezone

from annotation.enums import SystemKind
from annotation.judging.models import Assignment, Judgment
from annotation.models import Study, System
from metrics.core.adaptive import SystemTally, ranking_wrong_bound, system_priorities

from .publication import adaptive_publish


def _tallies(study: Study, criterion: str) -> tuple[dict[str, SystemTally], int]:
    """Per genuine system: (n, Σ score, Σ score²) of the latest judgments on ``criterion``."""
    systems = list(
        System.objects.filter(study=study).exclude(kind__in=SystemKind.control_kinds()).values_list("name", flat=True)
    )
    acc = {s: [0, 0.0, 0.0] for s in systems}
    n_all = 0
    rows = (
        Judgment.objects.filter(study=study, is_latest=True)
        .exclude(item__candidate__system__kind__in=SystemKind.control_kinds())
        .values_list("item__candidate__system__name", "values")
    )
    for system, values in rows.iterator(chunk_size=5000):
        n_all += 1
        value = (values or {}).get(criterion)
        if system in acc and isinstance(value, int | float) and not isinstance(value, bool):
            a = acc[system]
            a[0] += 1
            a[1] += float(value)
            a[2] += float(value) ** 2
    return {s: SystemTally(int(n), t, q) for s, (n, t, q) in acc.items()}, n_all


def adaptive_refresh(*, study: Study) -> dict:
    """Recompute the study's priorities and ranking-wrong bound; stop the study when it is stable.

    Returns ``{"priorities", "wrong_bound", "judgments", "stopped"}``. Stopping releases every
    judge's unrated items (:func:`annotation.judging.services.assignment_release_unfinished`):
    their judgments stay, judges and participants see that they have finished.
    """
    from .models import AdaptiveAllocation

    allocation = AdaptiveAllocation.objects.get(study=study)
    tallies, n = _tallies(study, allocation.criterion)
    priorities = system_priorities(tallies)
    bound = ranking_wrong_bound(tallies)
    stable = (
        allocation.enabled
        and allocation.stop_when_stable
        and allocation.stopped_at is None
        and n >= allocation.min_judgments
        and bound <= allocation.level
    )
    with transaction.atomic():
        AdaptiveAllocation.objects.filter(pk=allocation.pk).update(
            priorities={s: (1e12 if math.isinf(p) else p) for s, p in priorities.items()},
            wrong_bound=bound,
            judgments_seen=n,
            refreshed_at=timezone.now(),
            updated_at=timezone.now(),
        )
        if stable:
            adaptive_stop(
                study=study,
                reason=f"the ranking is stable: P(wrong) ≤ {bound:.3g} ≤ {allocation.level:g} after {n} judgments",
            )
    adaptive_publish()
    return {"priorities": priorities, "wrong_bound": bound, "judgments": n, "stopped": stable}


@transaction.atomic
def adaptive_stop(*, study: Study, reason: str) -> int:
    """Stop the study's judging here: release every unrated item; returns how many were released."""
    from annotation.judging.services.assignments import assignment_release_unfinished

    from .models import AdaptiveAllocation

    released = 0
    for assignment in Assignment.objects.filter(study=study):
        released += assignment_release_unfinished(assignment=assignment)
    AdaptiveAllocation.objects.filter(study=study).update(
        stopped_at=timezone.now(), stop_reason=reason, updated_at=timezone.now()
    )
    transaction.on_commit(adaptive_publish)
    return released
