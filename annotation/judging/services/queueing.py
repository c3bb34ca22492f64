"""Asking for judging's background work: opening a study (:func:`study_judging_open_start`: at once for a
small study, else as an open job queued on commit), the automatic QC check after each judgment
(:func:`after_judgment`), and the requeue pass of stranded open jobs (:func:`jobs_requeue_stale`). What
the worker runs is :mod:`.open_job` and :func:`annotation.judging.protocols.absolute.screening.qc_auto_check_run`; the tasks
between them are :mod:`annotation.judging.tasks`."""

from __future__ import annotations

import logging
from dataclasses import asdict
from datetime import timedelta

from django.conf import settings
from django.contrib.auth.models import User
from django.db import transaction
from django.utils import timezone

from annotation.importing.reading import ImportIssue, StudyImportError, detect_format
from annotation.judging.enums import JUDGMENTS_JOB_KEY, ImportMode
from annotation.judging.models import (
    Assignment,
    JudgingDesign,
    OpenJob,
    ScreeningSettings,
)
from annotation.judging.protocols.absolute.imports import (
    JudgmentImportSummary,
    judgments_import_file,
    judgments_import_refusal,
)
from annotation.judging.protocols.registry import protocol_for_design
from annotation.judging.services.opening import (
    judge_users,
    judges_per_item,
    lock_design_and_study,
    open_refusal,
    refuse_while_opening,
    study_judging_open,
)
from annotation.judging.tasks import judgments_import_run_task, open_job_run_task, qc_auto_check_task
from annotation.models import Candidate, ImportJob, Original, Study
from config.jobs.enums import JobStatus
from config.jobs.services import job_enqueue
from config.recovery import job_resend, jobs_to_resend

logger = logging.getLogger(__name__)


def open_background_threshold() -> int:
    return int(getattr(settings, "PARAEVAL_JUDGING_OPEN_BACKGROUND_ITEMS", DEFAULT_OPEN_BACKGROUND_ITEMS))


def _open_size(*, study: Study, design: JudgingDesign, n_judges: int) -> int:
    """Assignment items that opening will write (what its time grows with)."""
    n_originals = Original.objects.filter(study=study).count()
    n_items = Candidate.objects.filter(original__study=study).count() + n_originals * sum(
        int(v) for v in design.control_counts.values()
    )
    k = judges_per_item(design)
    return n_items * (min(k, n_judges) if k is not None else n_judges)


def study_judging_open_start(*, study: Study, user: User | None = None, background: bool | None = None) -> OpenJob:
    """Open ``study`` for judging through the path shared by the researcher's page and the API.

    The checks that need no writing (already open, closed, no data, too few judges
    for k per item, an opening already under way) run here and raise
    :class:`CannotOpen`. Then a study whose opening writes at most
    ``PARAEVAL_JUDGING_OPEN_BACKGROUND_ITEMS`` assignment items (default 10,000;
    about half a second) is opened now by :func:`study_judging_open` and the
    returned job has already succeeded; larger ones (or ``background=True``) get a
    queued :class:`OpenJob` that a worker runs (:func:`~.open_job.open_job_run`). Its progress
    counts judges whose assignments are written; its ``summary`` or ``error`` says
    how it ended.
    """
    with transaction.atomic():
        design, study = lock_design_and_study(study)
        refuse_while_opening(study)
        n_judges = len(judge_users(study))
        open_refusal(study=study, design=design, n_judges=n_judges)
        if not protocol_for_design(design).opens_in_background:
            background = False  # this protocol opens in the request (no background path for it)
        if background is None:
            background = _open_size(study=study, design=design, n_judges=n_judges) > open_background_threshold()
        now = timezone.now()
        if not background:
            summary = study_judging_open(study=study, user=user)
            return OpenJob.objects.create(
                study=study,
                created_by=user,
                status=JobStatus.SUCCEEDED,
                phase="done",
                started_at=now,
                finished_at=now,
                progress_done=summary.judges,
                progress_total=summary.judges,
                controls_created=summary.controls_created,
                summary=asdict(summary),
            )
        job = OpenJob.objects.create(
            study=study, created_by=user, status=JobStatus.QUEUED, phase="waiting for a worker", progress_total=n_judges
        )
        transaction.on_commit(lambda: job_enqueue(open_job_run_task, job.pk))
    return job


def jobs_requeue_stale(*, stale_after: timedelta | None = None, queued_after: timedelta | None = None) -> int:
    """Send queued (and, with ``stale_after``, stalled running) openings to the broker again.

    ``queued_after`` (only those queued that long ago) is passed on to
    ``config.recovery.jobs_to_resend`` when given. Each is a resent message: it
    runs only if it can claim its job (``config.recovery``), so a live opening is
    never run twice at once; and :func:`~.open_job.open_job_run` leaves a finished job alone
    and resumes a stalled one.
    """
    kwargs = {"stale_after": stale_after} | ({"queued_after": queued_after} if queued_after is not None else {})
    return sum(job_resend(open_job_run_task, pk, stale_after=stale_after) for pk in jobs_to_resend(OpenJob, **kwargs))


def after_judgment(*, assignment: Assignment) -> bool:
    """Called after a judgment is stored (page and API): queue the automatic QC check.

    The check (:func:`~annotation.judging.protocols.absolute.screening.qc_auto_check`, ~100 ms of statistics once the judge has rated
    ``qc_auto_min_controls`` controls) runs in a Celery worker, never in the request:
    run in the request it made exactly the submits that complete a control count
    slower, and a judge timing their submits could tell which items were controls
    (issue 23). Every submit of a study with automatic QC on queues the same task, so
    the answer to a submit no longer depends on what the item was. The screen-out
    takes effect on the judge's next page or API call after the worker ran it; a
    message lost while the broker is down is made up by the next submit's (the check
    reads all of the judge's judgments), so the message is sent once, without the
    publish retries of other jobs (a submit then waits about 0.5 s instead of 1.5 s
    for a broker that is down). True when the task was sent.
    """
    if assignment.screened_out_at is not None:
        return False
    settings = ScreeningSettings.objects.filter(study_id=assignment.study_id).first()
    if settings is None or not settings.qc_auto:
        return False
    try:
        qc_auto_check_task.apply_async(args=(assignment.pk,), retry=False)
    except Exception:  # kombu raises many kinds of connection errors
        logger.warning("broker unavailable; the QC check of assignment %s waits for the next submit", assignment.pk)
        return False
    return True


#: Studies whose opening writes more assignment items (judges × items, or k × items)
#: than this are opened by a Celery worker; settings may override.
DEFAULT_OPEN_BACKGROUND_ITEMS = 10_000


def judgments_import_start(
    *,
    study: Study,
    data: bytes,
    filename: str,
    fmt: str | None = None,
    mode: str = ImportMode.REFUSE,
    user: User | None = None,
    background: bool | None = None,
) -> JudgmentImportSummary | ImportJob:
    """Import a judgments file through the path shared by the study's design page and the API.

    A file of at most ``PARAEVAL_IMPORT_BACKGROUND_ROWS`` lines (as a study file) is imported
    now and its summary returned (:func:`judgments_import_file`; a
    :class:`~annotation.importing.reading.StudyImportError` names every problem). A larger one
    (or ``background=True``) would hold the request for half a minute (30,000 rows: 24–29 s), so
    it is stored with an :class:`~annotation.models.ImportJob` queued on commit and imported by a
    worker (:func:`~annotation.judging.protocols.absolute.imports.judgments_import_job_run`); the
    job is returned, and its status, progress and summary or errors are those of any import
    job. The size limit, the mode and the study's protocol are checked here first.
    """
    max_bytes = settings.PARAEVAL_IMPORT_MAX_BYTES
    if len(data) > max_bytes:
        raise StudyImportError(
            filename,
            [ImportIssue(f"the file is {len(data):,} bytes; the limit is {max_bytes:,} (PARAEVAL_IMPORT_MAX_BYTES)")],
        )
    judgments_import_refusal(study=study, filename=filename, mode=mode)
    lines = data.count(b"\n")
    if background is None:
        background = lines > settings.PARAEVAL_IMPORT_BACKGROUND_ROWS
    if not background:
        return judgments_import_file(study=study, data=data, filename=filename, fmt=fmt, mode=mode)
    fmt = detect_format(filename, fmt)
    with transaction.atomic():
        # The upload travels in the job's row, as a study file's does: a worker on another
        # machine reads the database, not this machine's disk.
        job = ImportJob.objects.create(
            study=study,
            created_by=user,
            filename=filename,
            format=fmt,
            progress_total=max(1, lines),
            phase="queued",
            upload=data,
            summary={JUDGMENTS_JOB_KEY: {"mode": mode}},
        )
        # A broker that is away leaves the job queued for the requeue pass, as a study file's.
        transaction.on_commit(lambda: job_enqueue(judgments_import_run_task, job.pk))
    return job
