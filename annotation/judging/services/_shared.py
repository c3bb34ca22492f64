"""Plumbing shared by the opening services (at once, in the background, for late judges).

The study's items as stable keys, the fast insert of a judge's assignment items, the
controls built at opening, the checks that refuse an opening, and the locks and undo
that opening, resetting and the background job share. Nothing here is called from
outside :mod:`annotation.judging.services`.
"""

from __future__ import annotations

from django.contrib.auth.models import User
from django.db import connection
from django.db.models import Field, Model
from django.utils import timezone

from annotation.enums import JobStatus, Role, StudyStatus, SystemKind
from annotation.models import Candidate, Original, Study, System
from metrics.core.assignment import derive_seed
from metrics.core.controls import CONTROL_KINDS, build_controls

from ..enums import CONTROL_SYSTEM_KIND, CONTROL_SYSTEM_PREFIX, JudgesMode, control_system_name
from ..errors import CannotOpen
from ..models import Assignment, AssignmentItem, JudgingDesign, OpenJob
from ..tokens import item_token_new

BULK_BATCH = 5000
#: Openings that are still under way (a design cannot change, nor a second opening start).
ACTIVE_JOB_STATUSES = (JobStatus.QUEUED, JobStatus.RUNNING)


def judge_users(study: Study) -> list[User]:
    return list(
        User.objects.filter(study_memberships__study=study, study_memberships__role=Role.JUDGE)
        .distinct()
        .order_by("username")
    )


def controls_create(*, study: Study, design: JudgingDesign) -> int:
    if System.objects.filter(study=study, name__startswith=CONTROL_SYSTEM_PREFIX).exists():
        raise CannotOpen("This study already has control systems; reset judging before opening it again.")
    counts = {k: int(design.control_counts.get(k, 0)) for k in CONTROL_KINDS}
    if not any(counts.values()):
        return 0
    originals = dict(Original.objects.filter(study=study).values_list("external_id", "text"))
    corpus = Candidate.objects.filter(original__study=study).values_list("text", flat=True)
    try:
        controls = build_controls(originals, counts=counts, seed=derive_seed(design.seed, "controls"), corpus=corpus)
    except ValueError as exc:
        raise CannotOpen(f"The controls cannot be built: {exc}.") from None
    systems = {}
    for kind, n in counts.items():
        for copy in range(1, n + 1):
            systems[(kind, copy)] = System(
                study=study,
                name=control_system_name(kind, copy),
                kind=CONTROL_SYSTEM_KIND[kind],
                description=f"Built by paraeval when judging opened (seeded {design.seed}).",
            )
    System.objects.bulk_create(systems.values())
    system_ids = dict(
        System.objects.filter(study=study, name__startswith=CONTROL_SYSTEM_PREFIX).values_list("name", "id")
    )
    original_ids = dict(Original.objects.filter(study=study).values_list("external_id", "id"))
    Candidate.objects.bulk_create(
        [
            Candidate(
                original_id=original_ids[c.original],
                system_id=system_ids[control_system_name(c.kind, c.copy)],
                text=c.text,
            )
            for c in controls
        ],
        batch_size=BULK_BATCH,
    )
    return len(controls)


def _item_key(external_id: str, system: str) -> str:
    # Plans are drawn over (original id, system name), not database ids, so the same
    # seed reproduces the same order even after the rows were rebuilt (e.g. a reset).
    return f"{external_id}\x1f{system}"


def study_items(study: Study, *, candidate_ids=None) -> tuple[list[str], dict[str, str], dict[str, int]]:
    """Candidates of the study (controls included) as stable item keys.

    Returns (items sorted, item → original id, item → candidate pk). With
    ``candidate_ids`` only those candidates.
    """
    qs = Candidate.objects.filter(original__study=study)
    if candidate_ids is not None:
        qs = qs.filter(pk__in=candidate_ids)
    rows = qs.values_list("id", "original__external_id", "system__name")
    pks = {_item_key(o, s): c for c, o, s in rows}
    groups = {key: key.split("\x1f", 1)[0] for key in pks}
    return sorted(pks), groups, pks


def assignment_write(*, study: Study, judge: User, seed: int, candidate_ids: list[int], late: bool) -> Assignment:
    assignment = Assignment.objects.create(
        study=study, judge=judge, seed=seed, n_items=len(candidate_ids), joined_late=late
    )
    _assignment_items_insert(assignment.pk, candidate_ids)
    return assignment


def _db_column(model: type[Model], name: str) -> str:
    """The database column of ``model``'s concrete field ``name``."""
    field = model._meta.get_field(name)
    if not isinstance(field, Field) or not field.column:
        raise ValueError(f"{model.__name__}.{name} is not a concrete field")
    return field.column


def _assignment_items_insert(assignment_id: int, candidate_ids: list[int]) -> None:
    """Insert a judge's items as plain tuples: ``COPY`` on PostgreSQL, ``executemany`` elsewhere.

    An assignment of 10,000 items would spend most of its time building model
    instances in ``bulk_create`` (and psycopg's executemany sends one statement per
    row); these rows need no Python-side logic, so they go to the database directly
    (same columns, same constraints).
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
            for i, c in enumerate(candidate_ids, 1):
                copy.write_row((now, now, assignment_id, c, i, item_token_new(), None))
        return
    stamp = connection.ops.adapt_datetimefield_value(now)
    sql = f"INSERT INTO {qn(meta.db_table)} ({columns}) VALUES ({', '.join(['%s'] * len(fields))})"
    rows = [(stamp, stamp, assignment_id, c, i, item_token_new(), None) for i, c in enumerate(candidate_ids, 1)]
    with connection.cursor() as cursor:
        for start in range(0, len(rows), BULK_BATCH):
            cursor.executemany(sql, rows[start : start + BULK_BATCH])


def open_refusal(*, study: Study, design: JudgingDesign, n_judges: int) -> None:
    """Raise :class:`CannotOpen` if ``study`` cannot be opened now (checks that need no writing)."""
    if design.is_frozen:
        raise CannotOpen("Judging of this study has already been opened.")
    if study.status == StudyStatus.CLOSED:
        raise CannotOpen("This study is closed.")
    if not Original.objects.filter(study=study).exists():
        raise CannotOpen("The study has no originals yet; import its data first.")
    if not Candidate.objects.filter(original__study=study, system__kind=SystemKind.IMPORTED).exists() and not any(
        design.control_counts.values()
    ):
        raise CannotOpen("The study has no candidates to judge; import its data first.")
    k = judges_per_item(design)
    # No judges at all is allowed: a field study's judges all come later through join links,
    # and each newcomer is given the items with the fewest judges (assignment_build_for_participant).
    if k is not None and 0 < n_judges < k:
        raise CannotOpen(
            f"Exactly {k} judges per item needs at least {k} judges; the study has {n_judges}. "
            "Add judges first, or choose the fully crossed mode."
        )


def judges_per_item(design: JudgingDesign) -> int | None:
    return design.judges_per_item if design.judges_mode == JudgesMode.K_PER_ITEM else None


def open_job_active(study: Study) -> OpenJob | None:
    return OpenJob.objects.filter(study=study, status__in=ACTIVE_JOB_STATUSES).first()


def refuse_while_opening(study: Study) -> None:
    if open_job_active(study) is not None:
        raise CannotOpen("Judging of this study is being opened in the background; wait until it has finished.")


def mark_open(*, study: Study, design: JudgingDesign, user: User | None) -> None:
    design.opened_at = timezone.now()
    design.opened_by = user
    design.save(update_fields=["opened_at", "opened_by", "updated_at"])
    study.status = StudyStatus.OPEN
    study.save(update_fields=["status", "updated_at"])


def lock_design_and_study(study: Study) -> tuple[JudgingDesign, Study]:
    JudgingDesign.objects.get_or_create(study=study)  # design.design_get_or_create (imports this module)
    design = JudgingDesign.objects.select_for_update().get(study=study)
    return design, Study.objects.select_for_update().get(pk=study.pk)


def opening_undo(study: Study) -> None:
    AssignmentItem.objects.filter(assignment__study=study).delete()
    Assignment.objects.filter(study=study).delete()
    System.objects.filter(study=study, name__startswith=CONTROL_SYSTEM_PREFIX).delete()
