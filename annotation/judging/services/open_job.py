"""Opening in the background, the worker's side: the resumable run of an open job
(:func:`open_job_run`). Asking for it (the shared entry of the researcher's page and the API,
:func:`~.queueing.study_judging_open_start`) and the requeue of stalled runs are in
:mod:`.queueing`.

The worker commits step by step, so its progress shows and a requeued run can resume.
"""

from __future__ import annotations

import hashlib
import logging
from dataclasses import asdict

from django.contrib.auth.models import User
from django.db import IntegrityError, InterfaceError, OperationalError, transaction
from django.utils import timezone

from annotation.judging.protocols.absolute.assignments import assignment_write_opening
from annotation.judging.services.opening import (
    IMPORTED_ASSIGNMENT_SEED,
    controls_create,
    judge_users,
    judges_per_item,
    lock_design_and_study,
    mark_open,
    open_refusal,
    opening_undo,
    study_items,
)
from config.jobs.enums import JobStatus
from metrics.core.assignment import plan_assignments

from ..errors import CannotOpen
from ..models import Assignment, JudgingDesign, OpenJob
from .opening import OpenSummary

# The name the log had before the services became a package (alerts may filter on it).
logger = logging.getLogger("annotation.judging.services")


#: The background opening commits (and reports progress) after about this many assignment items.
OPEN_JOB_ITEMS_PER_TRANSACTION = 20_000


def _items_fingerprint(items: list[str]) -> str:
    return hashlib.sha256("\x1e".join(items).encode()).hexdigest()


class _OpenJobGone(Exception):
    """The job finished (or failed) under this run's feet: stop quietly."""


def _job_locked(job_id: int) -> OpenJob:
    job = OpenJob.objects.select_for_update().get(pk=job_id)
    if job.is_finished:
        raise _OpenJobGone
    return job


def open_job_begin(job_id: int) -> OpenJob:
    """Step 1 (one transaction): check again, fix the judges, build the controls once."""
    with transaction.atomic():
        job = _job_locked(job_id)
        design, study = lock_design_and_study(job.study)
        if job.controls_created is None:
            judges = judge_users(study)
            open_refusal(study=study, design=design, n_judges=len(judges))
            job.controls_created = controls_create(study=study, design=design)
            job.judges = [u.username for u in judges]
            job.items_fingerprint = _items_fingerprint(study_items(study)[0])
            job.started_at = timezone.now()
        job.status, job.phase, job.error = JobStatus.RUNNING, "writing assignments", ""
        job.progress_total = len(job.judges)
        job.progress_done = (
            Assignment.objects.filter(study=study, judge__username__in=job.judges)
            .exclude(seed=IMPORTED_ASSIGNMENT_SEED)
            .count()
        )
        job.save()
    return job


def open_job_write(job: OpenJob, *, limit: int | None = None) -> int:
    """Step 2: write the assignments still missing, a few judges per transaction. Returns how many were written.

    The plan is drawn again from the design's seed, the judges fixed in step 1 and
    the study's items, so a resumed run writes what the first run would have.
    """
    study = job.study
    design = JudgingDesign.objects.get(study=study)
    items, groups, pks = study_items(study)
    if _items_fingerprint(items) != job.items_fingerprint:
        raise CannotOpen(
            "The study's data changed while judging was being opened, so nothing was opened. Open it again."
        )
    users = {u.username: u for u in User.objects.filter(username__in=job.judges)}
    if len(users) != len(job.judges):
        raise CannotOpen(
            "A judge's account was deleted while judging was being opened, so nothing was opened. Open it again."
        )
    # A judge's assignment is written once it holds the plan's seed; one a judgments import
    # wrote into the draft (another seed) still gets the planned items added.
    have = dict(Assignment.objects.filter(study=study).values_list("judge__username", "seed"))
    if not any(name not in have or have[name] == IMPORTED_ASSIGNMENT_SEED for name in job.judges):
        return 0
    plan = plan_assignments(items, groups, list(job.judges), seed=design.seed, judges_per_item=judges_per_item(design))
    orders = {o.judge: o for o in plan.orders}
    todo = [name for name in job.judges if have.get(name) != orders[name].seed]
    # A few judges per transaction: one commit per judge would cost more than their rows on SQLite.
    per_tx = max(1, OPEN_JOB_ITEMS_PER_TRANSACTION // max(1, max((len(o.items) for o in plan.orders), default=1)))
    written, done = 0, len(job.judges) - len(todo)
    for start in range(0, len(todo), per_tx):
        if limit is not None and written >= limit:
            break
        with transaction.atomic():
            _job_locked(job.pk)  # serialises with a second run of the same job and with a failure
            for name in todo[start : start + per_tx]:
                if limit is not None and written >= limit:
                    break
                order = orders[name]
                try:
                    with transaction.atomic():
                        assignment_write_opening(
                            study=study, judge=users[name], seed=order.seed, candidate_ids=[pks[i] for i in order.items]
                        )
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
        design, study = lock_design_and_study(job.study)
        assignments = Assignment.objects.filter(study=study, judge__username__in=job.judges)
        if assignments.count() != len(job.judges):
            raise CannotOpen("Some judges' assignments are missing; nothing was opened. Open it again.")
        n_written = sum(assignments.values_list("n_items", flat=True))
        mark_open(study=study, design=design, user=job.created_by)
        summary = OpenSummary(
            controls_created=job.controls_created or 0,
            items=len(study_items(study)[0]),
            judges=len(job.judges),
            assignment_items=n_written,
        )
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
        design, study = lock_design_and_study(job.study)
        if not design.is_frozen:  # a draft's assignments and controls are this job's work only
            opening_undo(study)
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
        job = open_job_begin(job_id)
        open_job_write(job)
        return _open_job_finish(job_id)
    except _OpenJobGone:
        pass
    except CannotOpen as exc:
        _open_job_fail(job_id, exc.message)
    except (OperationalError, InterfaceError):
        raise
    except Exception:
        logger.exception("opening judging failed (job %s)", job_id)
        _open_job_fail(
            job_id,
            "Opening judging failed unexpectedly, so nothing was opened; the server log has "
            "the details. Try again, or tell the administrator if it keeps failing.",
        )
    return OpenJob.objects.get(pk=job_id)
