"""Adaptive allocation, the Django side: settings, the per-system tallies, the item swap, the stop.

Fairness rules stay as they are, because only the *order* of a judge's own items changes:
every judge keeps the items the design gave them (k per item, balance within one),
and the item served is chosen among the next ``window`` items of the judge's seeded
order, so what a judge sees stays a random-looking mix of systems (blinding: nothing
about a system reaches the page; a control at the head keeps its place).

The hot path pays one cache lookup (at most one a second per process) on a study without the
option (:func:`adaptive_publish`)
and one small query (plus, when the order changes, three updates of the judge's own rows)
with it.
The tallies are refreshed by a Celery task at most every :data:`REFRESH_SECONDS`.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping
from datetime import timedelta

from django.core.cache import cache
from django.core.exceptions import ValidationError
from django.db import connection, transaction
from django.utils import timezone

from annotation.enums import SystemKind
from annotation.judging.models import Assignment, AssignmentItem, Judgment
from annotation.judging.protocols.registry import protocol_for_study
from annotation.models import Candidate, Study, System
from metrics.core.adaptive import SystemTally, pick_item, ranking_wrong_bound, system_priorities

#: How often the tallies are recomputed from the judgments (by the worker).
REFRESH_SECONDS = 5.0
#: The Django cache key of the adaptive studies (study id → priorities, window, last refresh).
CACHE_KEY = "paraeval:adaptive-studies"

#: How long one process reuses what it read from the cache (saves unpickling it on every request).
MEMO_SECONDS = 1.0
_MEMO: dict[str, object] = {"at": -math.inf, "studies": {}}

SETTINGS_FIELDS = ("enabled", "level", "stop_when_stable", "min_judgments", "window", "criterion")


def adaptive_publish() -> dict[int, dict]:
    """Write the list of adaptive studies (and their priorities) to Django's cache; return it.

    The judge's hot path reads only this cache entry, never the database, so a study
    without the option pays one cache lookup. Every change of a setting, every refresh of
    the priorities and every poll of a dashboard publishes it again; with a cache per
    process (the default, ``CACHE_URL`` unset) the processes that did so know the list,
    so a site with several web processes sets ``CACHE_URL`` (see docs/dashboard.md).
    """
    from .models import AdaptiveAllocation

    studies = {
        sid: {"priorities": p or {}, "window": w, "refreshed_at": r}
        for sid, p, w, r in AdaptiveAllocation.objects.filter(enabled=True, stopped_at__isnull=True).values_list(
            "study_id", "priorities", "window", "refreshed_at"
        )
    }
    cache.set(CACHE_KEY, studies, timeout=None)
    _MEMO.update(at=time.monotonic(), studies=studies)
    return studies


def adaptive_cache_clear() -> None:
    """Forget the published list (tests)."""
    cache.delete(CACHE_KEY)
    _MEMO.update(at=-math.inf, studies={})


def _adaptive_studies() -> dict[int, dict]:
    now = time.monotonic()
    if now - float(_MEMO["at"]) > MEMO_SECONDS:  # type: ignore[arg-type]
        _MEMO.update(at=now, studies=cache.get(CACHE_KEY) or {})
    return _MEMO["studies"]  # type: ignore[return-value]


def adaptive_study(study_id: int) -> bool:
    """Whether ``study_id`` hands items out adaptively now (cached per process; the hot path's test)."""
    return study_id in _adaptive_studies()


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


def _refresh_due(state: dict) -> bool:
    at = state.get("refreshed_at")
    return at is None or timezone.now() - at > timedelta(seconds=REFRESH_SECONDS)


def _refresh_request(study_id: int, state: dict) -> None:
    """Queue a refresh if none ran lately; the conditional update lets one process in."""
    from annotation.services.jobs import job_enqueue

    from .models import AdaptiveAllocation
    from .tasks import adaptive_refresh_task

    now = timezone.now()
    claimed = AdaptiveAllocation.objects.filter(study_id=study_id, refreshed_at=state.get("refreshed_at")).update(
        refreshed_at=now
    )
    studies = _adaptive_studies()  # the next requests wait for this refresh, not claim again
    if study_id in studies:
        studies[study_id]["refreshed_at"] = now
        cache.set(CACHE_KEY, studies, timeout=None)
        _MEMO.update(at=time.monotonic(), studies=studies)
    if claimed:
        transaction.on_commit(lambda: job_enqueue(adaptive_refresh_task, study_id))


_NEXT_SQL: dict[str, str] = {}


def _next_sql() -> str:
    if not _NEXT_SQL:
        t = {
            "item": AssignmentItem._meta.db_table,
            "candidate": Candidate._meta.db_table,
            "system": System._meta.db_table,
        }
        _NEXT_SQL["next"] = (
            "SELECT i.id, i.position, s.name, s.kind FROM {item} i JOIN {candidate} c ON c.id = i.candidate_id"
            " JOIN {system} s ON s.id = c.system_id WHERE i.assignment_id = %s AND i.done_at IS NULL"
            " ORDER BY i.position LIMIT %s"
        ).format(**t)
    return _NEXT_SQL["next"]


def adaptive_item_promote(*, assignment: Assignment) -> bool:
    """Move the most informative of the judge's next ``window`` unrated items to the front of
    their unrated items (a swap of two positions of the judge's own rows). Returns whether the
    order changed. Queues a refresh of the priorities when they are older than :data:`REFRESH_SECONDS`."""
    state = _adaptive_studies().get(assignment.study_id)
    if state is None:
        return False
    if _refresh_due(state):
        _refresh_request(assignment.study_id, state)
    with connection.cursor() as cursor:
        cursor.execute(_next_sql(), [assignment.pk, int(state["window"])])
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
        moved = AssignmentItem.objects.filter(pk=pick_id, done_at__isnull=True, position=pick_pos).update(position=0)
        if not moved:
            return False
        AssignmentItem.objects.filter(pk=head_id).update(position=pick_pos)
        AssignmentItem.objects.filter(pk=pick_id).update(position=head_pos)
    return True
