"""Writing the absolute protocol's items of a judge's assignment: at opening (onto an
assignment a judgments import wrote into the draft, if any), for a late judge or a join-link
participant, as plain rows (``COPY`` on PostgreSQL). Below the services and the background
opening job (:mod:`annotation.judging.services.open_job`), which both call it."""

from __future__ import annotations

from django.contrib.auth.models import User
from django.db import connection
from django.db.models import Field, Max, Model
from django.utils import timezone

from annotation.judging.services.opening import BULK_BATCH
from annotation.models import Study

from ...models import Assignment
from ...tokens import item_token_new
from .models import AssignmentItem


def assignment_write(*, study: Study, judge: User, seed: int, candidate_ids: list[int], late: bool) -> Assignment:
    assignment = Assignment.objects.create(
        study=study, judge=judge, seed=seed, n_items=len(candidate_ids), joined_late=late
    )
    _assignment_items_insert(assignment.pk, candidate_ids)
    return assignment


def assignment_write_opening(*, study: Study, judge: User, seed: int, candidate_ids: list[int]) -> int:
    """Write ``judge``'s planned items at opening; returns how many rows were written.

    A judge whose judgments were imported into the draft already has an assignment (seed
    :data:`IMPORTED_ASSIGNMENT_SEED`) holding the imported items, done: the planned items it
    lacks are added after them and the assignment takes the plan's seed, so the judge rates
    the rest of their plan and the imported judgments stay theirs. An assignment with the
    plan's seed was written by this opening already (a resumed background run): nothing is
    written.
    """
    existing = Assignment.objects.select_for_update().filter(study=study, judge=judge).first()
    if existing is None:
        assignment_write(study=study, judge=judge, seed=seed, candidate_ids=candidate_ids, late=False)
        return len(candidate_ids)
    if existing.seed == seed:
        return 0
    held = AssignmentItem.objects.filter(assignment=existing)
    have = set(held.values_list("candidate_id", flat=True))
    start = held.aggregate(m=Max("position"))["m"] or 0
    new = [c for c in candidate_ids if c not in have]
    _assignment_items_insert(existing.pk, new, start=start)
    existing.seed = seed
    existing.n_items = held.count()
    existing.joined_late = False
    existing.instructions_seen_at = None  # the import's mark: the judge has not read this study's instructions
    existing.save(update_fields=["seed", "n_items", "joined_late", "instructions_seen_at", "updated_at"])
    return len(new)


def _db_column(model: type[Model], name: str) -> str:
    """The database column of ``model``'s concrete field ``name``."""
    field = model._meta.get_field(name)
    if not isinstance(field, Field) or not field.column:
        raise ValueError(f"{model.__name__}.{name} is not a concrete field")
    return field.column


def _assignment_items_insert(assignment_id: int, candidate_ids: list[int], *, start: int = 0) -> None:
    """Insert a judge's items as plain tuples: ``COPY`` on PostgreSQL, ``executemany`` elsewhere.

    An assignment of 10,000 items would spend most of its time building model
    instances in ``bulk_create`` (and psycopg's executemany sends one statement per
    row); these rows need no Python-side logic, so they go to the database directly
    (same columns, same constraints). Positions follow ``start`` (the last one already held).
    """
    meta = AssignmentItem._meta
    qn = connection.ops.quote_name
    fields = ["created_at", "updated_at", "assignment", "candidate", "position", "token", "done_at"]
    columns = ", ".join(qn(_db_column(AssignmentItem, f)) for f in fields)
    now = timezone.now()
    if connection.vendor == "postgresql":
        with (
            connection.cursor() as cursor,
            cursor.cursor.copy(f"COPY {qn(meta.db_table)} ({columns}) FROM STDIN") as copy,
        ):
            for i, c in enumerate(candidate_ids, start + 1):
                copy.write_row((now, now, assignment_id, c, i, item_token_new(), None))
        return
    stamp = connection.ops.adapt_datetimefield_value(now)
    sql = f"INSERT INTO {qn(meta.db_table)} ({columns}) VALUES ({', '.join(['%s'] * len(fields))})"
    rows = [(stamp, stamp, assignment_id, c, i, item_token_new(), None) for i, c in enumerate(candidate_ids, start + 1)]
    with connection.cursor() as cursor:
        for start in range(0, len(rows), BULK_BATCH):
            cursor.executemany(sql, rows[start : start + BULK_BATCH])
