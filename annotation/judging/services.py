# Over 400 lines: this session's feature work (protocols, screening, field studies, speed) landed here; splitting it along its seams is issue 17's remaining step, done once so code moves only once.
"""Writes for judging: design, opening (controls + assignments), submitting, exclusions.

Views, APIs, the demo, management commands and the Celery task call these; nothing
else writes judging rows. Every function is keyword-only and runs inside
``transaction.atomic``, except the background opening (:func:`open_job_run`), which
commits step by step so its progress shows and a requeued run can resume.
"""

from __future__ import annotations

import hashlib
import logging
import math
from collections import Counter
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from datetime import timedelta

from django.conf import settings
from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db import IntegrityError, InterfaceError, OperationalError, connection, transaction
from django.db.models import Count, Field, Model, Q
from django.utils import timezone
from django.utils.translation import gettext

from annotation.enums import JobStatus, Role, StudyStatus, SystemKind
from annotation.models import Candidate, Original, Study, StudyMembership, System
from annotation.services import job_enqueue
from metrics.core.assignment import derive_seed, late_judge_items, order_items, plan_assignments
from metrics.core.controls import CONTROL_KINDS, build_controls

from . import comparison, scales
from .defaults import default_criteria
from .enums import CONTROL_SYSTEM_KIND, CONTROL_SYSTEM_PREFIX, JudgesMode, JudgmentSource, Protocol, control_system_name
from .errors import CannotOpen, DesignFrozen, DesignInvalid, ItemNotFound, JudgmentInvalid, KeyReused, StudyNotOpen
from .models import Assignment, AssignmentItem, ComparisonJudgment, JudgeExclusion, JudgingDesign, Judgment, OpenJob
from .tokens import item_token_new, serve_stamp_read

logger = logging.getLogger(__name__)

#: Design fields that may still change after judging has started: they only
#: affect statistics, never what a judge sees or who sees what.
EDITABLE_WHEN_FROZEN = frozenset({"expected_scores", "qc_alpha"})
DESIGN_FIELDS = ("criteria", "judges_mode", "judges_per_item", "control_counts", "expected_scores", "seed", "qc_alpha",
                 "show_context", "protocol", "comparison_per_criterion", "pairs_per_original")
KEY_MIN_LENGTH, KEY_MAX_LENGTH = 8, 64
BULK_BATCH = 5000


# --- design -----------------------------------------------------------------------

def design_get_or_create(*, study: Study) -> JudgingDesign:
    """The study's judging design, created with the defaults on first use."""
    design, _ = JudgingDesign.objects.get_or_create(study=study)
    return design


@transaction.atomic
def design_update(*, study: Study, changes: Mapping[str, object]) -> JudgingDesign:
    """Change design fields (any of ``DESIGN_FIELDS``); validate; save.

    Once the study has been opened, only ``expected_scores`` and ``qc_alpha`` may
    change (:class:`DesignFrozen` otherwise); fields given with their current value
    are accepted, so a form can post the whole design back.
    """
    unknown = sorted(set(changes) - set(DESIGN_FIELDS))
    if unknown:
        raise DesignInvalid(f"unknown design field(s): {', '.join(unknown)}")
    design_get_or_create(study=study)
    design = JudgingDesign.objects.select_for_update().get(study=study)
    if not design.is_frozen and _open_job_active(study) is not None:
        raise DesignFrozen("Judging of this study is being opened in the background, so the design cannot "
                           "change now.")
    if design.is_frozen:
        blocked = sorted(f for f, v in changes.items() if f not in EDITABLE_WHEN_FROZEN and getattr(design, f) != v)
        if blocked:
            raise DesignFrozen(
                "Judging has started, so the design is frozen: "
                f"{', '.join(blocked)} can no longer change. Only the controls' expected scores and the "
                "QC significance level can still be edited.")
    if "criteria" in changes and changes["criteria"] != design.criteria and Judgment.objects.filter(
            study=study).exists():
        raise DesignFrozen("This study has judgments (imported ones count), so its criteria can no longer change.")
    if changes.get("protocol", design.protocol) != design.protocol and Judgment.objects.filter(study=study).exists():
        raise DesignFrozen("This study has judgments (imported ones count), so its protocol can no longer change.")
    changes = dict(changes)
    if "criteria" in changes:
        criteria = changes["criteria"] = scales.criteria_normalise(changes["criteria"])
        if "expected_scores" not in changes and isinstance(criteria, list) and not scales.criteria_errors(criteria):
            changes["expected_scores"] = expected_kept(design.expected_scores, criteria)
    for field, value in changes.items():
        setattr(design, field, value)
    try:
        design.full_clean()
    except ValidationError as exc:
        raise DesignInvalid("The design is not valid.", field_errors=exc.message_dict) from None
    design.save()
    return design


def expected_kept(expected: Mapping, criteria: list[dict]) -> dict:
    """The controls' expected values that still fit new criteria (same slug, value on the
    new scale); the others become unknown (missing)."""
    scale_of = {c["slug"]: c["scale"] for c in criteria}
    out = {}
    for kind in CONTROL_KINDS:
        kept = {}
        for slug, v in (expected.get(kind) or {}).items() if isinstance(expected, Mapping) else ():
            if slug in scale_of and v is not None:
                try:
                    if scales.value_clean(scale_of[slug], v) == v:
                        kept[slug] = v
                except ValueError:
                    pass
        out[kind] = kept
    return out


# --- opening: controls and assignments -------------------------------------------------

@dataclass(frozen=True)
class OpenSummary:
    controls_created: int
    items: int
    judges: int
    assignment_items: int


def _judge_users(study: Study) -> list[User]:
    return list(User.objects.filter(study_memberships__study=study, study_memberships__role=Role.JUDGE)
                .distinct().order_by("username"))


def _controls_create(*, study: Study, design: JudgingDesign) -> int:
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
                study=study, name=control_system_name(kind, copy), kind=CONTROL_SYSTEM_KIND[kind],
                description=f"Built by paraeval when judging opened (seeded {design.seed}).")
    System.objects.bulk_create(systems.values())
    system_ids = dict(System.objects.filter(study=study, name__startswith=CONTROL_SYSTEM_PREFIX).values_list("name", "id"))
    original_ids = dict(Original.objects.filter(study=study).values_list("external_id", "id"))
    Candidate.objects.bulk_create(
        [Candidate(original_id=original_ids[c.original], system_id=system_ids[control_system_name(c.kind, c.copy)],
                   text=c.text) for c in controls],
        batch_size=BULK_BATCH)
    return len(controls)


def _item_key(external_id: str, system: str) -> str:
    # Plans are drawn over (original id, system name), not database ids, so the same
    # seed reproduces the same order even after the rows were rebuilt (e.g. a reset).
    return f"{external_id}\x1f{system}"


def _study_items(study: Study, *, candidate_ids=None) -> tuple[list[str], dict[str, str], dict[str, int]]:
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


def _assignment_write(*, study: Study, judge: User, seed: int, candidate_ids: list[int], late: bool) -> Assignment:
    assignment = Assignment.objects.create(study=study, judge=judge, seed=seed, n_items=len(candidate_ids), joined_late=late)
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
        with connection.cursor() as cursor, cursor.cursor.copy(
                f"COPY {qn(meta.db_table)} ({columns}) FROM STDIN") as copy:
            for i, c in enumerate(candidate_ids, 1):
                copy.write_row((now, now, assignment_id, c, i, item_token_new(), None))
        return
    stamp = connection.ops.adapt_datetimefield_value(now)
    sql = f"INSERT INTO {qn(meta.db_table)} ({columns}) VALUES ({', '.join(['%s'] * len(fields))})"
    rows = [(stamp, stamp, assignment_id, c, i, item_token_new(), None) for i, c in enumerate(candidate_ids, 1)]
    with connection.cursor() as cursor:
        for start in range(0, len(rows), BULK_BATCH):
            cursor.executemany(sql, rows[start:start + BULK_BATCH])


def _open_refusal(*, study: Study, design: JudgingDesign, n_judges: int) -> None:
    """Raise :class:`CannotOpen` if ``study`` cannot be opened now (checks that need no writing)."""
    if design.is_frozen:
        raise CannotOpen("Judging of this study has already been opened.")
    if study.status == StudyStatus.CLOSED:
        raise CannotOpen("This study is closed.")
    if not Original.objects.filter(study=study).exists():
        raise CannotOpen("The study has no originals yet; import its data first.")
    if not Candidate.objects.filter(original__study=study, system__kind=SystemKind.IMPORTED).exists() \
            and not any(design.control_counts.values()):
        raise CannotOpen("The study has no candidates to judge; import its data first.")
    k = _judges_per_item(design)
    # No judges at all is allowed: a field study's judges all come later through join links,
    # and each newcomer is given the items with the fewest judges (assignment_build_for_participant).
    if k is not None and 0 < n_judges < k:
        raise CannotOpen(f"Exactly {k} judges per item needs at least {k} judges; the study has {n_judges}. "
                         "Add judges first, or choose the fully crossed mode.")


def _judges_per_item(design: JudgingDesign) -> int | None:
    return design.judges_per_item if design.judges_mode == JudgesMode.K_PER_ITEM else None


def _open_job_active(study: Study) -> OpenJob | None:
    return OpenJob.objects.filter(study=study, status__in=ACTIVE_JOB_STATUSES).first()


def _refuse_while_opening(study: Study) -> None:
    if _open_job_active(study) is not None:
        raise CannotOpen("Judging of this study is being opened in the background; wait until it has finished.")


def _mark_open(*, study: Study, design: JudgingDesign, user: User | None) -> None:
    design.opened_at = timezone.now()
    design.opened_by = user
    design.save(update_fields=["opened_at", "opened_by", "updated_at"])
    study.status = StudyStatus.OPEN
    study.save(update_fields=["status", "updated_at"])


def _lock_design_and_study(study: Study) -> tuple[JudgingDesign, Study]:
    design_get_or_create(study=study)
    design = JudgingDesign.objects.select_for_update().get(study=study)
    return design, Study.objects.select_for_update().get(pk=study.pk)


@transaction.atomic
def study_judging_open(*, study: Study, user: User | None = None) -> OpenSummary:
    """Open a draft study for judging now, in one transaction: build its controls and every judge's assignment.

    Controls are candidates of systems ``control:identical``, ``control:random``,
    ``control:unigram`` (``:2``, ``:3`` … for further copies), generated by
    :func:`metrics.core.controls.build_controls` from the design's seed. Assignments
    come from :func:`metrics.core.assignment.plan_assignments`; each judge's seed is
    recorded on their assignment. Judges added later get theirs from
    :func:`assignment_ensure_for_judge`. Afterwards the design is frozen.

    Commands, the demo and tests call this directly; the researcher's page and the
    API go through :func:`study_judging_open_start`, which runs large studies in a
    worker (:func:`open_job_run`) with the same result.
    """
    design, study = _lock_design_and_study(study)
    _refuse_while_opening(study)
    judges = _judge_users(study)
    _open_refusal(study=study, design=design, n_judges=len(judges))
    n_controls = _controls_create(study=study, design=design)
    if design.protocol == Protocol.COMPARISON:
        n_pairs, n_written = comparison.comparison_assignments_write(study=study, design=design, judges=judges)
        _mark_open(study=study, design=design, user=user)
        return OpenSummary(controls_created=n_controls, items=n_pairs, judges=len(judges), assignment_items=n_written)
    items, groups, pks = _study_items(study)
    n_written = 0
    if judges:
        by_name = {u.username: u for u in judges}
        plan = plan_assignments(items, groups, list(by_name), seed=design.seed, judges_per_item=_judges_per_item(design))
        for order in plan.orders:
            _assignment_write(study=study, judge=by_name[order.judge], seed=order.seed,
                              candidate_ids=[pks[i] for i in order.items], late=False)
            n_written += len(order.items)
    _mark_open(study=study, design=design, user=user)
    return OpenSummary(controls_created=n_controls, items=len(items), judges=len(judges), assignment_items=n_written)


# --- opening in the background ----------------------------------------------------------

#: Studies whose opening writes more assignment items (judges × items, or k × items)
#: than this are opened by a Celery worker; settings may override.
DEFAULT_OPEN_BACKGROUND_ITEMS = 10_000
ACTIVE_JOB_STATUSES = (JobStatus.QUEUED, JobStatus.RUNNING)
#: The background opening commits (and reports progress) after about this many assignment items.
OPEN_JOB_ITEMS_PER_TRANSACTION = 20_000


def open_background_threshold() -> int:
    return int(getattr(settings, "PARAEVAL_JUDGING_OPEN_BACKGROUND_ITEMS", DEFAULT_OPEN_BACKGROUND_ITEMS))


def _open_size(*, study: Study, design: JudgingDesign, n_judges: int) -> int:
    """Assignment items that opening will write (what its time grows with)."""
    n_originals = Original.objects.filter(study=study).count()
    n_items = (Candidate.objects.filter(original__study=study).count()
               + n_originals * sum(int(v) for v in design.control_counts.values()))
    k = _judges_per_item(design)
    return n_items * (min(k, n_judges) if k is not None else n_judges)


def study_judging_open_start(*, study: Study, user: User | None = None, background: bool | None = None) -> OpenJob:
    """Open ``study`` for judging through the path shared by the researcher's page and the API.

    The checks that need no writing (already open, closed, no data, too few judges
    for k per item, an opening already under way) run here and raise
    :class:`CannotOpen`. Then a study whose opening writes at most
    ``PARAEVAL_JUDGING_OPEN_BACKGROUND_ITEMS`` assignment items (default 10,000;
    about half a second) is opened now by :func:`study_judging_open` and the
    returned job has already succeeded; larger ones (or ``background=True``) get a
    queued :class:`OpenJob` that a worker runs (:func:`open_job_run`). Its progress
    counts judges whose assignments are written; its ``summary`` or ``error`` says
    how it ended.
    """
    with transaction.atomic():
        design, study = _lock_design_and_study(study)
        _refuse_while_opening(study)
        n_judges = len(_judge_users(study))
        _open_refusal(study=study, design=design, n_judges=n_judges)
        if design.protocol == Protocol.COMPARISON:
            background = False  # comparison studies open in the request (no background path yet)
        if background is None:
            background = _open_size(study=study, design=design, n_judges=n_judges) > open_background_threshold()
        now = timezone.now()
        if not background:
            summary = study_judging_open(study=study, user=user)
            return OpenJob.objects.create(
                study=study, created_by=user, status=JobStatus.SUCCEEDED, phase="done", started_at=now,
                finished_at=now, progress_done=summary.judges, progress_total=summary.judges,
                controls_created=summary.controls_created, summary=asdict(summary))
        job = OpenJob.objects.create(study=study, created_by=user, status=JobStatus.QUEUED,
                                     phase="waiting for a worker", progress_total=n_judges)
        from .tasks import open_job_run_task

        transaction.on_commit(lambda: job_enqueue(open_job_run_task, job.pk))
    return job


def _items_fingerprint(items: list[str]) -> str:
    return hashlib.sha256("\x1e".join(items).encode()).hexdigest()


class _OpenJobGone(Exception):
    """The job finished (or failed) under this run's feet: stop quietly."""


def _job_locked(job_id: int) -> OpenJob:
    job = OpenJob.objects.select_for_update().get(pk=job_id)
    if job.is_finished:
        raise _OpenJobGone
    return job


def _open_job_begin(job_id: int) -> OpenJob:
    """Step 1 (one transaction): check again, fix the judges, build the controls once."""
    with transaction.atomic():
        job = _job_locked(job_id)
        design, study = _lock_design_and_study(job.study)
        if job.controls_created is None:
            judges = _judge_users(study)
            _open_refusal(study=study, design=design, n_judges=len(judges))
            job.controls_created = _controls_create(study=study, design=design)
            job.judges = [u.username for u in judges]
            job.items_fingerprint = _items_fingerprint(_study_items(study)[0])
            job.started_at = timezone.now()
        job.status, job.phase, job.error = JobStatus.RUNNING, "writing assignments", ""
        job.progress_total = len(job.judges)
        job.progress_done = Assignment.objects.filter(study=study, judge__username__in=job.judges).count()
        job.save()
    return job


def _open_job_write(job: OpenJob, *, limit: int | None = None) -> int:
    """Step 2: write the assignments still missing, a few judges per transaction. Returns how many were written.

    The plan is drawn again from the design's seed, the judges fixed in step 1 and
    the study's items, so a resumed run writes what the first run would have.
    """
    study = job.study
    design = JudgingDesign.objects.get(study=study)
    items, groups, pks = _study_items(study)
    if _items_fingerprint(items) != job.items_fingerprint:
        raise CannotOpen("The study's data changed while judging was being opened, so nothing was opened. "
                         "Open it again.")
    users = {u.username: u for u in User.objects.filter(username__in=job.judges)}
    if len(users) != len(job.judges):
        raise CannotOpen("A judge's account was deleted while judging was being opened, so nothing was opened. "
                         "Open it again.")
    have = set(Assignment.objects.filter(study=study).values_list("judge__username", flat=True))
    todo = [name for name in job.judges if name not in have]
    if not todo:
        return 0
    plan = plan_assignments(items, groups, list(job.judges), seed=design.seed, judges_per_item=_judges_per_item(design))
    orders = {o.judge: o for o in plan.orders}
    # A few judges per transaction: one commit per judge would cost more than their rows on SQLite.
    per_tx = max(1, OPEN_JOB_ITEMS_PER_TRANSACTION // max(1, max((len(o.items) for o in plan.orders), default=1)))
    written, done = 0, len(job.judges) - len(todo)
    for start in range(0, len(todo), per_tx):
        if limit is not None and written >= limit:
            break
        with transaction.atomic():
            _job_locked(job.pk)  # serialises with a second run of the same job and with a failure
            for name in todo[start:start + per_tx]:
                if limit is not None and written >= limit:
                    break
                order = orders[name]
                try:
                    with transaction.atomic():
                        _assignment_write(study=study, judge=users[name], seed=order.seed,
                                          candidate_ids=[pks[i] for i in order.items], late=False)
                except IntegrityError:  # another run of this job wrote it first
                    pass
                else:
                    written += 1
                done += 1
            OpenJob.objects.filter(pk=job.pk).update(progress_done=done, updated_at=timezone.now())
    return written


def _open_job_finish(job_id: int) -> OpenJob:
    """Step 3 (one transaction): every assignment is there, so mark the study open and the job done."""
    with transaction.atomic():
        job = _job_locked(job_id)
        design, study = _lock_design_and_study(job.study)
        assignments = Assignment.objects.filter(study=study, judge__username__in=job.judges)
        if assignments.count() != len(job.judges):
            raise CannotOpen("Some judges' assignments are missing; nothing was opened. Open it again.")
        n_written = sum(assignments.values_list("n_items", flat=True))
        _mark_open(study=study, design=design, user=job.created_by)
        summary = OpenSummary(controls_created=job.controls_created or 0, items=len(_study_items(study)[0]),
                              judges=len(job.judges), assignment_items=n_written)
        job.status, job.phase, job.summary = JobStatus.SUCCEEDED, "done", asdict(summary)
        job.progress_done = len(job.judges)
        job.finished_at = timezone.now()
        job.save()
    return job


def _open_job_fail(job_id: int, message: str) -> None:
    """Undo a failed opening (assignments and controls written so far) and record why."""
    with transaction.atomic():
        try:
            job = _job_locked(job_id)
        except _OpenJobGone:
            return
        design, study = _lock_design_and_study(job.study)
        if not design.is_frozen:  # a draft's assignments and controls are this job's work only
            _opening_undo(study)
        job.status, job.phase, job.error, job.finished_at = JobStatus.FAILED, "failed", message, timezone.now()
        job.save()


def open_job_run(*, job_id: int) -> OpenJob:
    """Run a queued opening (the worker's side). Idempotent and resumable.

    A finished job is left alone. A job requeued after its worker died carries
    on where it stopped (the judges and items are those fixed at its start); two
    runs of the same job at once write each assignment once (one per judge is a
    database constraint). A refusal or an unexpected error fails the job, deletes
    what it wrote and keeps the study a draft; a lost database connection is left
    to Celery's retry.
    """
    try:
        job = _open_job_begin(job_id)
        _open_job_write(job)
        return _open_job_finish(job_id)
    except _OpenJobGone:
        pass
    except CannotOpen as exc:
        _open_job_fail(job_id, exc.message)
    except (OperationalError, InterfaceError):
        raise
    except Exception:
        logger.exception("opening judging failed (job %s)", job_id)
        _open_job_fail(job_id, "Opening judging failed unexpectedly, so nothing was opened; the server log has "
                               "the details. Try again, or tell the administrator if it keeps failing.")
    return OpenJob.objects.get(pk=job_id)


def jobs_requeue_stale(*, stale_after: timedelta | None = None, queued_after: timedelta | None = None) -> int:
    """Send queued (and, with ``stale_after``, stalled running) openings to the broker again.

    ``queued_after`` (only those queued that long ago) is passed on to
    ``annotation.services.jobs_to_resend`` when given. Each is a resent message: it
    runs only if it can claim its job (``config.recovery``), so a live opening is
    never run twice at once; and :func:`open_job_run` leaves a finished job alone
    and resumes a stalled one.
    """
    from annotation.services import jobs_to_resend
    from config.recovery import job_resend

    from .tasks import open_job_run_task

    kwargs = {"stale_after": stale_after} | ({"queued_after": queued_after} if queued_after is not None else {})
    return sum(job_resend(open_job_run_task, pk, stale_after=stale_after) for pk in jobs_to_resend(OpenJob, **kwargs))


def assignment_ensure_for_judge(*, study: Study, judge: User) -> Assignment | None:
    """The judge's assignment, built now if the study was opened after they were added.

    Returns None if judging has not been opened or the user is not a judge of the
    study. Fully crossed: the late judge gets every item in their own seeded order.
    Exactly k per item: they get as many items as the lightest-loaded judge, taken
    from the items with the fewest judges (so some items gain a (k+1)-th judge;
    nobody loses one). Safe to call concurrently: one assignment per judge.
    """
    existing = Assignment.objects.filter(study=study, judge=judge).first()
    if existing is not None:
        # While a background opening is writing assignments the design is not frozen yet:
        # a judge's list is not theirs until every list is written.
        return existing if (existing.joined_late or JudgingDesign.objects.filter(
            study=study, opened_at__isnull=False).exists()) else None
    if not StudyMembership.objects.filter(study=study, user=judge, role=Role.JUDGE).exists():
        return None
    with transaction.atomic():
        # The design row serialises late builds, so k-mode counts are read consistently.
        design = JudgingDesign.objects.select_for_update().filter(study=study).first()
        if design is None or not design.is_frozen:
            return None
        existing = Assignment.objects.filter(study=study, judge=judge).first()
        if existing is not None:
            return existing
        if design.protocol == Protocol.COMPARISON:
            return comparison.comparison_assignment_late(study=study, design=design, judge=judge)
        assigned = Counter(dict(
            AssignmentItem.objects.filter(assignment__study=study).values("candidate_id")
            .annotate(n=Count("id")).values_list("candidate_id", "n")))
        # A late judge rates the items the others have (not data imported since).
        items, groups, pks = _study_items(study, candidate_ids=list(assigned) if assigned else None)
        seed = derive_seed(design.seed, "order", judge.username)
        if design.judges_mode == JudgesMode.K_PER_ITEM and assigned:
            loads = Assignment.objects.filter(study=study).values_list("n_items", flat=True)
            counts = {key: assigned.get(pks[key], 0) for key in items}
            items = late_judge_items(counts, n_items=min(loads), seed=derive_seed(design.seed, "late", judge.username))
        order = order_items(items, groups, seed=seed)
        try:
            with transaction.atomic():
                return _assignment_write(study=study, judge=judge, seed=seed, candidate_ids=[pks[i] for i in order],
                                         late=True)
        except IntegrityError:
            return Assignment.objects.get(study=study, judge=judge)


def assignments_ensure_all(*, study: Study) -> int:
    """Build assignments for every judge of an open study who has none. Returns how many."""
    n = 0
    have = set(Assignment.objects.filter(study=study).values_list("judge_id", flat=True))
    for judge in _judge_users(study):
        if judge.pk not in have and assignment_ensure_for_judge(study=study, judge=judge) is not None:
            n += 1
    return n


@transaction.atomic
def study_judging_close(*, study: Study) -> Study:
    """Stop accepting judgments (the data stays; reopening is possible)."""
    study = Study.objects.select_for_update().get(pk=study.pk)
    if study.status != StudyStatus.OPEN:
        raise CannotOpen("Only an open study can be closed.")
    study.status = StudyStatus.CLOSED
    study.save(update_fields=["status", "updated_at"])
    return study


@transaction.atomic
def study_judging_reopen(*, study: Study) -> Study:
    study = Study.objects.select_for_update().get(pk=study.pk)
    design = JudgingDesign.objects.filter(study=study).first()
    if study.status != StudyStatus.CLOSED or design is None or not design.is_frozen:
        raise CannotOpen("Only a closed study whose judging was opened can be reopened.")
    study.status = StudyStatus.OPEN
    study.save(update_fields=["status", "updated_at"])
    return study


@transaction.atomic
def study_judging_reset(*, study: Study) -> None:
    """Undo opening while nobody has judged yet: delete assignments and controls, back to draft.

    Refused (:class:`CannotOpen`) once a single judgment exists: from then on the
    design and the assignments are part of the record.
    """
    study = Study.objects.select_for_update().get(pk=study.pk)
    if Judgment.objects.filter(study=study).exists() or ComparisonJudgment.objects.filter(study=study).exists():
        raise CannotOpen("Judges have already submitted judgments; the design can no longer be reset.")
    _refuse_while_opening(study)
    _opening_undo(study)
    JudgingDesign.objects.filter(study=study).update(opened_at=None, opened_by=None, updated_at=timezone.now())
    study.status = StudyStatus.DRAFT
    study.save(update_fields=["status", "updated_at"])


def _opening_undo(study: Study) -> None:
    AssignmentItem.objects.filter(assignment__study=study).delete()
    Assignment.objects.filter(study=study).delete()
    System.objects.filter(study=study, name__startswith=CONTROL_SYSTEM_PREFIX).delete()


@transaction.atomic
def instructions_mark_seen(*, assignment: Assignment) -> None:
    if assignment.instructions_seen_at is None:
        assignment.instructions_seen_at = timezone.now()
        Assignment.objects.filter(pk=assignment.pk, instructions_seen_at__isnull=True).update(
            instructions_seen_at=assignment.instructions_seen_at)


# --- submitting ------------------------------------------------------------------------

@dataclass(frozen=True)
class SubmitResult:
    judgment: Judgment
    created: bool  # False: the key was seen before and this is the stored judgment


def _design_criteria(study: Study) -> list[dict]:
    design = JudgingDesign.objects.filter(study=study).only("criteria").order_by().first()
    return design.criteria if design is not None else default_criteria()


def scores_clean(*, criteria: list[dict], scores: Mapping[str, object]) -> dict[str, int | float]:
    """Check one judgment's values against the design's criteria and scales.

    Every criterion needs a value on its own scale (:func:`.scales.value_clean`);
    unknown criteria are refused. Raises :class:`JudgmentInvalid` naming each problem.
    """
    slugs = [c["slug"] for c in criteria]
    if not isinstance(scores, Mapping):
        raise JudgmentInvalid(f"scores must map each criterion ({', '.join(slugs)}) to a value on its scale")
    errors: dict[str, list[str]] = {}
    for name in scores:
        if name not in slugs:
            errors.setdefault(str(name), []).append(f"unknown criterion; the criteria are {', '.join(slugs)}")
    out: dict[str, int | float] = {}
    for c in criteria:
        v = scores.get(c["slug"])
        if v is None or v == "":
            errors.setdefault(c["slug"], []).append(gettext("this criterion needs a value"))
            continue
        try:
            out[c["slug"]] = scales.value_clean(c["scale"], v)
        except ValueError as exc:
            errors.setdefault(c["slug"], []).append(str(exc))
    if errors:
        raise JudgmentInvalid(
            gettext("Rate every criterion on its scale — %(problems)s.") % {
                "problems": "; ".join(f"{k}: {' '.join(v)}" for k, v in errors.items())},
            field_errors=errors)
    return out


def _clean_key(key: object) -> str:
    if not isinstance(key, str) or not KEY_MIN_LENGTH <= len(key) <= KEY_MAX_LENGTH or not all(
            ch.isascii() and (ch.isalnum() or ch in "-_") for ch in key):
        raise JudgmentInvalid(
            f"key must be {KEY_MIN_LENGTH}–{KEY_MAX_LENGTH} characters of letters, digits, '-' or '_'",
            field_errors={"key": ["invalid idempotency key"]})
    return key


def judgment_submit(
    *,
    study: Study,
    judge: User,
    token: str,
    key: str,
    scores: Mapping[str, object],
    serve_stamp: str,
    active_seconds: float | None = None,
    source: str = JudgmentSource.API,
) -> SubmitResult:
    """Store one judge's values (one per criterion of the design) for one item of their assignment.

    Checks, in order: the key's form, the scores (every criterion of the design, each
    on its own scale: :func:`scores_clean`), that the item is in *this judge's* assignment of *this study*
    (:class:`ItemNotFound` otherwise — also for other judges' items), the serve stamp.
    Idempotent on ``(judge, key)``: the same key again returns the stored judgment
    (``created=False``) even if the study has closed since; the same key with other
    scores or another item is :class:`KeyReused`. Otherwise the study must be open
    (:class:`StudyNotOpen`). A second judgment of an item is a new revision; earlier
    ones are kept and the latest counts.

    Concurrency: the item row is locked (``SELECT … FOR UPDATE``; on SQLite the
    IMMEDIATE transaction holds the database write lock), so revisions of one item
    are numbered without gaps and one key gives one row; the unique constraint on
    ``(judge, key)`` settles a key raced across two items.
    """
    key = _clean_key(key)
    clean = scores_clean(criteria=_design_criteria(study), scores=scores)
    if active_seconds is not None:
        try:
            active_seconds = float(active_seconds)
        except (TypeError, ValueError):
            raise JudgmentInvalid("active_seconds must be a number of seconds") from None
        if not math.isfinite(active_seconds) or active_seconds < 0:
            raise JudgmentInvalid("active_seconds must be a non-negative number of seconds")
    with transaction.atomic():
        item = (AssignmentItem.objects.select_for_update(of=("self",)).select_related("assignment")
                .filter(token=token, assignment__study=study, assignment__judge=judge).order_by().first()
                if isinstance(token, str) else None)
        if item is None:
            raise ItemNotFound("There is no such item in your assignment for this study.")
        # One query for both: a judgment under this key (a retry) and the item's latest
        # judgment (which only changes under the item lock we hold).
        found = list(Judgment.objects.filter(Q(judge=judge, key=key) | Q(item=item, is_latest=True)).order_by())
        existing = next((j for j in found if j.judge_id == judge.pk and j.key == key), None)
        if existing is not None:
            return _replay(existing, item=item, scores=clean)  # an acknowledged retry is answered as before
        if item.assignment.screened_out_at is not None:
            from .screening import ScreenedOut

            raise ScreenedOut(gettext("You were screened out of this study; thank you for your time."))
        if Study.objects.filter(pk=study.pk).values_list("status", flat=True).order_by().first() != StudyStatus.OPEN:
            raise StudyNotOpen(gettext("This study is not open for judging."))
        served_at = serve_stamp_read(serve_stamp, token) if isinstance(serve_stamp, str) else None
        if served_at is None:
            raise JudgmentInvalid(gettext("The serve stamp is missing or does not belong to this item; reload the item."),
                                  field_errors={"serve_stamp": ["missing or invalid"]})
        now = timezone.now()
        latest = next((j for j in found if j.item_id == item.pk and j.is_latest), None)
        if latest is not None:
            Judgment.objects.filter(pk=latest.pk).update(is_latest=False)
        judgment = Judgment(
            study=study, item=item, judge=judge, key=key, revision=(latest.revision + 1) if latest else 1,
            is_latest=True, served_at=served_at, submitted_at=now,
            seconds=max(0.0, (now - served_at).total_seconds()), active_seconds=active_seconds, source=source,
            values=clean)
        # Field validation only: the uniqueness rules are enforced by the database
        # constraints below, which (unlike a query first) hold under concurrency, and
        # the three foreign keys are rows we have just read.
        judgment.full_clean(exclude=["study", "item", "judge"], validate_unique=False, validate_constraints=False)
        try:
            with transaction.atomic():
                judgment.save(force_insert=True)
        except IntegrityError:
            # The same key was used concurrently for another item and committed first.
            existing = Judgment.objects.filter(judge=judge, key=key).first()
            if existing is None:
                raise
            if latest is not None:
                Judgment.objects.filter(pk=latest.pk).update(is_latest=True)
            return _replay(existing, item=item, scores=clean)
        if item.done_at is None:
            AssignmentItem.objects.filter(pk=item.pk).update(done_at=now, updated_at=now)
        return SubmitResult(judgment=judgment, created=True)


def _replay(existing: Judgment, *, item: AssignmentItem, scores: Mapping[str, float]) -> SubmitResult:
    if existing.item_id != item.pk or existing.scores != scores:
        raise KeyReused(gettext(
            "This key was already used for a different submission; send a new key for a new judgment."))
    existing.item = item  # the locked row, with its assignment loaded
    return SubmitResult(judgment=existing, created=False)


# --- exclusions ------------------------------------------------------------------------

@transaction.atomic
def judge_exclusion_set(*, study: Study, judge: User, excluded: bool, decided_by: User | None, reason: str = "") -> JudgeExclusion | None:
    """Exclude a judge from (or re-include them in) every statistic of the study.

    Recorded as a new :class:`JudgeExclusion` row (the history is kept); a decision
    equal to the current state records nothing and returns None. The judge's
    judgments are untouched either way.
    """
    if not Assignment.objects.filter(study=study, judge=judge).exists() and not StudyMembership.objects.filter(
            study=study, user=judge, role=Role.JUDGE).exists():
        raise CannotOpen(f"{judge.username} is not a judge of this study.")
    if not excluded and Assignment.objects.filter(study=study, judge=judge, screened_out_at__isnull=False).exists():
        raise CannotOpen(f"{judge.username} was screened out by a screening rule; their judgments never count.")
    current = JudgeExclusion.objects.filter(study=study, judge=judge).order_by("-created_at", "-id").first()
    if (current.excluded if current else False) == bool(excluded):
        return None
    row = JudgeExclusion(study=study, judge=judge, excluded=bool(excluded), reason=reason.strip(), decided_by=decided_by)
    row.full_clean()
    row.save()
    return row


# --- importing judgments ---------------------------------------------------------------------

#: Imported participants' usernames: ``<name>@s<study id>.imported`` (never a login:
#: their password is unusable), so two studies' "worker 7" stay two people.
IMPORTED_JUDGE_SUFFIX = ".imported"


def imported_judge_username(study: Study, name: str) -> str:
    return f"{name}@s{study.pk}{IMPORTED_JUDGE_SUFFIX}"


@dataclass(frozen=True)
class JudgmentImportSummary:
    rows: int
    judgments: int
    revisions: int  # judgments that revise an earlier one of the same judge and candidate
    judges_created: int
    judges: int
    candidates_created: int
    systems_created: int


def judgments_import_parsed(*, study: Study, parsed) -> JudgmentImportSummary:
    """Write parsed judgments (:func:`annotation.importing.parse_judgments_file`) into
    ``study``, all or nothing; :class:`~annotation.importing.StudyImportError` names
    every row that cannot be matched.

    Candidates: ``system``/``systems`` name the study's candidates of that original
    (with ``candidate`` text too, a missing one is added, under a new imported system
    if need be); the text alone matches every candidate of the original with that
    text. A row naming several systems gives each of their candidates the judgment.
    Judges: a judge of the study with that username is used; any other name becomes
    an imported participant (:func:`imported_judge_username`, no password). Each
    judge gets an assignment holding the judged items (done), marked as an import.
    Rows of one judge and candidate form one judgment until a criterion repeats or
    the ``judgment`` id changes, which starts a new revision (the latest counts, as
    on the judge's page); file order decides which is latest. Every judgment is stored with ``source=import``.
    """
    from annotation.importing import ImportIssue, StudyImportError

    if design_get_or_create(study=study).protocol == Protocol.COMPARISON:  # the scales the file was parsed against
        raise StudyImportError(parsed.filename, [ImportIssue(message=(
            "this study's protocol is side-by-side comparison; absolute judgments cannot be imported into it"))])
    with transaction.atomic():
        Study.objects.select_for_update().filter(pk=study.pk).first()
        originals = dict(Original.objects.filter(study=study).values_list("external_id", "id"))
        systems = dict(System.objects.filter(study=study).values_list("name", "id"))
        system_kinds = dict(System.objects.filter(study=study).values_list("name", "kind"))
        by_system: dict[tuple[int, str], int] = {}
        by_text: dict[tuple[int, str], list[int]] = {}
        cand_text: dict[int, str] = {}
        for cand_pk, cand_oid, sname, text in Candidate.objects.filter(original__study=study).values_list(
                "id", "original_id", "system__name", "text"):
            by_system[(cand_oid, sname)] = cand_pk
            by_text.setdefault((cand_oid, text.strip()), []).append(cand_pk)
            cand_text[cand_pk] = text
        issues: list[ImportIssue] = []
        new_systems: list[str] = []
        new_cands: dict[tuple[int, str], str] = {}  # (original pk, system) -> text
        resolved: list[tuple] = []  # (row, [candidate key]) where a key is a pk or ("new", oid, system)
        for row in parsed.rows:
            if len(issues) >= 50:
                break
            oid = originals.get(row.original_id)
            if oid is None:
                issues.append(ImportIssue(f"study '{study.name}' has no original '{row.original_id}'", line=row.line,
                                          column="original_id"))
                continue
            keys: list = []
            if row.systems:
                for name in row.systems:
                    pk = by_system.get((oid, name))
                    if pk is not None:
                        if row.candidate and cand_text[pk].strip() != row.candidate:
                            issues.append(ImportIssue(
                                f"system '{name}' has another candidate for original '{row.original_id}'",
                                line=row.line, column="candidate"))
                        keys.append(pk)
                    elif name in system_kinds and system_kinds[name] != SystemKind.IMPORTED:
                        issues.append(ImportIssue(f"system '{name}' is not an imported system", line=row.line,
                                                  column="system"))
                    elif row.candidate:
                        known = new_cands.setdefault((oid, name), row.candidate)
                        if known != row.candidate:
                            issues.append(ImportIssue(
                                f"system '{name}' is given two different candidates for original '{row.original_id}'",
                                line=row.line, column="candidate"))
                        if name not in systems and name not in new_systems:
                            new_systems.append(name)
                        keys.append(("new", oid, name))
                    else:
                        issues.append(ImportIssue(
                            f"original '{row.original_id}' has no candidate of system '{name}' (give the candidate "
                            "text to add it)", line=row.line, column="systems" if len(row.systems) > 1 else "system"))
            else:
                keys = list(by_text.get((oid, row.candidate), []))
                if not keys:
                    issues.append(ImportIssue(
                        f"original '{row.original_id}' has no candidate with this text (give a system to add it)",
                        line=row.line, column="candidate"))
            resolved.append((row, keys))
        if issues:
            raise StudyImportError(parsed.filename, issues)

        System.objects.bulk_create([System(study=study, name=n, kind=SystemKind.IMPORTED,
                                           description="Added by a judgments import.") for n in new_systems])
        systems = dict(System.objects.filter(study=study).values_list("name", "id"))
        Candidate.objects.bulk_create([Candidate(original_id=oid, system_id=systems[name], text=text)
                                       for (oid, name), text in new_cands.items()], batch_size=BULK_BATCH)
        new_pk = {(oid, name): pk for pk, oid, name in Candidate.objects.filter(
            original__study=study, system__name__in={n for _, n in new_cands}).values_list(
            "id", "original_id", "system__name") if (oid, name) in new_cands}

        # Judges: the study's own judges by username, else imported participants.
        names = list(dict.fromkeys(r.judge for r, _ in resolved))
        members = {u.username: u for u in User.objects.filter(
            username__in=names, study_memberships__study=study, study_memberships__role=Role.JUDGE)}
        imported = {u.username: u for u in User.objects.filter(
            username__in=[imported_judge_username(study, n) for n in names])}
        created_judges = 0
        judges: dict[str, User] = {}
        for n in names:
            user = members.get(n) or imported.get(imported_judge_username(study, n))
            if user is None:
                user = User(username=imported_judge_username(study, n))
                user.set_unusable_password()
                user.save()
                created_judges += 1
            judges[n] = user

        # Group rows into judgments per (judge, candidate): a repeated criterion starts a revision.
        current: dict[tuple[int, int], dict] = {}
        judgments: list[tuple[int, int, dict]] = []  # (user pk, candidate pk, {values, seconds}) in file order
        for row, keys in resolved:
            user = judges[row.judge]
            for key in keys:
                cand = new_pk[(key[1], key[2])] if isinstance(key, tuple) else key
                j = current.get((user.pk, cand))
                if j is None or row.criterion in j["values"] or j["id"] != row.judgment:
                    j = {"values": {}, "seconds": None, "id": row.judgment}
                    current[(user.pk, cand)] = j
                    judgments.append((user.pk, cand, j))
                j["values"][row.criterion] = row.value
                if row.seconds is not None:
                    j["seconds"] = row.seconds

        now = timezone.now()
        assignments = {a.judge_id: a for a in Assignment.objects.filter(study=study, judge__in=judges.values())}
        for user in judges.values():
            if user.pk not in assignments:
                assignments[user.pk] = Assignment.objects.create(study=study, judge=user, seed=0, n_items=0,
                                                                 instructions_seen_at=now)
        items = {(i.assignment.judge_id, i.candidate_id): i for i in AssignmentItem.objects.filter(
            assignment__in=assignments.values()).select_related("assignment")}
        new_items = []
        next_pos = {a.pk: a.n_items for a in assignments.values()}
        for user_pk, cand, _j in judgments:
            if (user_pk, cand) not in items:
                a = assignments[user_pk]
                next_pos[a.pk] += 1
                item = AssignmentItem(assignment=a, candidate_id=cand, position=next_pos[a.pk],
                                      token=item_token_new(), done_at=now)
                items[(user_pk, cand)] = item
                new_items.append(item)
        AssignmentItem.objects.bulk_create(new_items, batch_size=BULK_BATCH)
        for a in assignments.values():
            if next_pos[a.pk] != a.n_items:
                Assignment.objects.filter(pk=a.pk).update(n_items=next_pos[a.pk], updated_at=now)
        AssignmentItem.objects.filter(assignment__in=assignments.values(), done_at__isnull=True,
                                      pk__in=[i.pk for i in items.values()]).update(done_at=now)

        latest_rev = dict(Judgment.objects.filter(item__in=[i.pk for i in items.values()], is_latest=True)
                          .values_list("item_id", "revision"))
        Judgment.objects.filter(item_id__in=latest_rev, is_latest=True).update(is_latest=False)
        last_index: dict[int, int] = {}
        for idx, (user_pk, cand, _j) in enumerate(judgments):
            last_index[items[(user_pk, cand)].pk] = idx
        revision = dict(latest_rev)
        rows = []
        revisions = 0
        for idx, (user_pk, cand, j) in enumerate(judgments):
            item = items[(user_pk, cand)]
            rev = revision.get(item.pk, 0) + 1
            revision[item.pk] = rev
            revisions += rev > 1
            rows.append(Judgment(
                study=study, item=item, judge_id=user_pk, key=f"import-{item_token_new()[:24]}", revision=rev,
                is_latest=last_index[item.pk] == idx, served_at=now, submitted_at=now, seconds=j["seconds"],
                source=JudgmentSource.IMPORT, values=j["values"]))
        Judgment.objects.bulk_create(rows, batch_size=BULK_BATCH)
        return JudgmentImportSummary(
            rows=len(parsed.rows), judgments=len(rows), revisions=revisions, judges_created=created_judges,
            judges=len(judges), candidates_created=len(new_cands), systems_created=len(new_systems))


def judgments_import_file(*, study: Study, data: bytes, filename: str, fmt: str | None = None) -> JudgmentImportSummary:
    """Parse (against the study's design) and write a judgments file: the one path behind
    the command, the study page and the API. :class:`StudyImportError` on any problem."""
    from annotation.importing import parse_judgments_file

    design = design_get_or_create(study=study)
    parsed = parse_judgments_file(data, filename=filename, criteria=design.criteria, fmt=fmt,
                                  max_bytes=settings.PARAEVAL_IMPORT_MAX_BYTES)
    return judgments_import_parsed(study=study, parsed=parsed)


# --- join-link participants (annotation.participation) ------------------------------------

def assignment_build_for_participant(*, study: Study, judge: User, n_items: int | None) -> Assignment | None:
    """Build the assignment of a judge who just came through a join link; None if judging is not open.

    Fully crossed (or ``n_items`` empty): every item the study's judges rate, in the
    judge's own seeded order. Exactly k per item: ``n_items`` items taken from those
    with the fewest *live* judges — assigned items that were done or are still held
    (a timed-out participant's unfinished items were deleted by
    :func:`assignment_release_unfinished`, so they count again as free). The design
    row is locked, so two participants arriving together see each other's items.
    """
    with transaction.atomic():
        design = JudgingDesign.objects.select_for_update().filter(study=study).first()
        if design is None or not design.is_frozen:
            return None
        existing = Assignment.objects.filter(study=study, judge=judge).first()
        if existing is not None:
            return existing
        live = Counter(dict(
            AssignmentItem.objects.filter(assignment__study=study).values("candidate_id")
            .annotate(n=Count("id")).values_list("candidate_id", "n")))
        items, groups, pks = _study_items(study)
        seed = derive_seed(design.seed, "order", judge.username)
        if n_items is not None and (design.judges_mode == JudgesMode.K_PER_ITEM or n_items < len(items)):
            counts = {key: live.get(pks[key], 0) for key in items}
            items = late_judge_items(counts, n_items=min(n_items, len(items)),
                                     seed=derive_seed(design.seed, "late", judge.username))
        order = order_items(items, groups, seed=seed)
        return _assignment_write(study=study, judge=judge, seed=seed, candidate_ids=[pks[i] for i in order], late=True)


@transaction.atomic
def assignment_release_unfinished(*, assignment: Assignment) -> int:
    """Give back the items ``assignment`` has not rated yet (its judge left); return how many.

    Rated items and their judgments stay. The released rows are deleted, so the next
    participant to arrive can be given those items (k per item keeps balancing).
    """
    assignment = Assignment.objects.select_for_update().get(pk=assignment.pk)
    deleted, _ = AssignmentItem.objects.filter(assignment=assignment, done_at__isnull=True).delete()
    if deleted:
        assignment.n_items = AssignmentItem.objects.filter(assignment=assignment).count()
        assignment.save(update_fields=["n_items", "updated_at"])
    return deleted
