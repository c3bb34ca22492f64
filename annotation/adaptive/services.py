"""Adaptive allocation, the Django side: settings, the item swap, asking for a refresh of the tallies.

Fairness rules stay as they are, because only the *order* of a judge's own items changes:
every judge keeps the items the design gave them (k per item, balance within one),
and the item served is chosen among the next ``window`` items of the judge's seeded
order, so what a judge sees stays a random-looking mix of systems (blinding: nothing
about a system reaches the page; a control at the head keeps its place).

The hot path pays one cache lookup (at most one a second per process) on a study without the
option (:mod:`.publication`)
and one small query (plus, when the order changes, three updates of the judge's own rows)
with it.
The tallies are refreshed by a Celery task at most every :data:`REFRESH_SECONDS`
(:mod:`.refresh`, the worker's side; the stop when the ranking is stable is there too).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import timedelta
from typing import Any

from django.core.exceptions import ValidationError
from django.db import connection, transaction
from django.utils import timezone

from annotation.enums import SystemKind
from annotation.judging.models import Assignment
from annotation.judging.protocols.registry import protocol_for_study
from annotation.models import Candidate, Study, System
from config.jobs.services import job_enqueue
from metrics.core.adaptive import pick_item

from .publication import adaptive_publish, adaptive_refresh_mark, adaptive_studies
from .tasks import adaptive_refresh_task

#: How often the tallies are recomputed from the judgments (by the worker).
REFRESH_SECONDS = 5.0


SETTINGS_FIELDS = (
    "enabled",
    "level",
    "stop_when_stable",
    "min_judgments",
    "min_judges",
    "max_judge_share",
    "window",
    "criterion",
)


@transaction.atomic
def adaptive_settings_update(*, study: Study, changes: Mapping[str, object]):
    """Create or change the study's adaptive setting; ``ValidationError`` names each bad field.

    Turning it on again after a stop clears the stop (items already released stay released).
    """
    from .models import AdaptiveAllocation

    unknown = sorted(set(changes) - set(SETTINGS_FIELDS))
    if unknown:
        raise ValidationError({"__all__": [f"unknown setting(s): {', '.join(unknown)}"]})
    unit = protocol_for_study(study=study)
    if changes.get("enabled") and not unit.adaptive_allocation:
        raise ValidationError(
            {"enabled": [f"Adaptive allocation works for absolute ratings; this study's protocol is {unit.name}."]}
        )
    allocation, _ = AdaptiveAllocation.objects.select_for_update().get_or_create(study=study)
    for key, value in changes.items():
        setattr(allocation, key, value)
    if changes.get("enabled"):
        allocation.stopped_at, allocation.stop_reason = None, ""
    allocation.full_clean()
    allocation.save()
    transaction.on_commit(adaptive_publish)
    return allocation


def _refresh_due(state: dict) -> bool:
    at = state.get("refreshed_at")
    return at is None or timezone.now() - at > timedelta(seconds=REFRESH_SECONDS)


def _refresh_request(study_id: int, state: dict) -> None:
    """Queue a refresh if none ran lately; the conditional update lets one process in."""
    from .models import AdaptiveAllocation

    now = timezone.now()
    claimed = AdaptiveAllocation.objects.filter(study_id=study_id, refreshed_at=state.get("refreshed_at")).update(
        refreshed_at=now
    )
    adaptive_refresh_mark(study_id, now)  # the next requests wait for this refresh, not claim again
    if claimed:
        transaction.on_commit(lambda: job_enqueue(adaptive_refresh_task, study_id))


_NEXT_SQL: dict[str, str] = {}


def _next_sql(item_model: Any) -> str:
    """The judge's next ``window`` unrated items with their systems, in ``item_model``'s table
    (one candidate per item), written once per process and table."""
    table = item_model._meta.db_table
    if table not in _NEXT_SQL:
        t = {"item": table, "candidate": Candidate._meta.db_table, "system": System._meta.db_table}
        _NEXT_SQL[table] = (
            "SELECT i.id, i.position, s.name, s.kind FROM {item} i JOIN {candidate} c ON c.id = i.candidate_id"
            " JOIN {system} s ON s.id = c.system_id WHERE i.assignment_id = %s AND i.done_at IS NULL"
            " ORDER BY i.position LIMIT %s"
        ).format(**t)
    return _NEXT_SQL[table]


def adaptive_item_promote(*, assignment: Assignment, item_model: Any) -> bool:
    """Move the most informative of the judge's next ``window`` unrated items to the front of
    their unrated items (a swap of two positions of the judge's own rows of ``item_model``, the
    table of a protocol whose unit allows adaptive allocation, one candidate per item). Returns
    whether the order changed. Queues a refresh of the priorities when they are older than
    :data:`REFRESH_SECONDS`."""
    state = adaptive_studies().get(assignment.study_id)
    if state is None:
        return False
    if _refresh_due(state):
        _refresh_request(assignment.study_id, state)
    with connection.cursor() as cursor:
        cursor.execute(_next_sql(item_model), [assignment.pk, int(state["window"])])
        rows = cursor.fetchall()
    if len(rows) < 2:
        return False
    controls = set(SystemKind.control_kinds())
    chosen = pick_item([None if kind in controls else name for _, _, name, kind in rows], state["priorities"])
    if chosen == 0:
        return False
    (head_id, head_pos, _, _), (pick_id, pick_pos, _, _) = rows[0], rows[chosen]
    with transaction.atomic():
        # Positions are unique per assignment and 1-based: 0 is free as the swap's parking place.
        moved = item_model.objects.filter(pk=pick_id, done_at__isnull=True, position=pick_pos).update(position=0)
        if not moved:
            return False
        item_model.objects.filter(pk=head_id).update(position=pick_pos)
        item_model.objects.filter(pk=pick_id).update(position=head_pos)
    return True
