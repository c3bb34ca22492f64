"""Writes: importing a study file (originals, systems, candidates), all or nothing.

Parsing and its line-and-column errors are :mod:`annotation.importing`'s; this
module writes a parsed file in one transaction, serialized per study, and runs an import
job on the worker (:func:`import_job_run`). Asking for an import (now, or as a job for a
large file) is :func:`annotation.services.queueing.study_import_file`.
"""

from __future__ import annotations

import logging

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import ProtectedError, RestrictedError
from django.utils import timezone

from annotation.importing.reading import ImportIssue, StudyImportError
from annotation.importing.studies import ParsedStudyData, parse_study_file
from config.jobs.enums import JobStatus

from ..enums import SystemKind
from ..models import Candidate, ImportJob, Original, Study, System

# The logger's name from before the split into modules, so that log filters keep matching.
logger = logging.getLogger("annotation.services")


def study_import_lock(*, study: Study) -> None:
    """Hold ``study``'s row lock until the surrounding transaction ends.

    Imports into one study then run one after the other: each reads the rows
    the previous one committed and refuses duplicates with a message, instead
    of both inserting and the second dying on the unique constraint (a 500).
    PostgreSQL: ``SELECT … FOR UPDATE``; SQLite takes the database write lock
    at ``BEGIN IMMEDIATE`` (settings), which serializes writers anyway.
    """
    list(Study.objects.select_for_update().filter(pk=study.pk).values_list("pk", flat=True))


#: What a concurrent writer's unique-constraint violation tells the user (the lock makes it rare).
CONCURRENT_IMPORT_MESSAGE = (
    "another import into this study wrote the same rows at the same time; nothing of this file was written "
    "(look at the study's data, then import again if rows are still missing)"
)


def study_import_parsed(*, study: Study, parsed: ParsedStudyData, replace: bool = False) -> dict:
    """Write a parsed file into ``study`` in one transaction: all of it or nothing.

    See :func:`_study_import_parsed`; a unique-constraint race that slips past
    :func:`study_import_lock` becomes a :class:`StudyImportError` (a 400), and
    the transaction is rolled back.
    """
    try:
        return _study_import_parsed(study=study, parsed=parsed, replace=replace)
    except IntegrityError:
        logger.warning("import into study %s raced another import", study.pk, exc_info=True)
        raise StudyImportError(parsed.filename, [ImportIssue(CONCURRENT_IMPORT_MESSAGE)]) from None


def _study_import_parsed(*, study: Study, parsed: ParsedStudyData, replace: bool = False) -> dict:
    """Write a parsed file into ``study`` in one transaction: all of it or nothing.

    Without ``replace`` the import may add systems to originals the study already
    has (same id and same text), but may not change an original's text or
    overwrite an existing candidate. With ``replace`` the study's imported data
    (originals, systems, candidates) is deleted first; that is refused once
    judgments or other work depend on it.
    Returns a summary dict of what was written.
    """
    with transaction.atomic():
        study_import_lock(study=study)
        if replace:
            try:
                Original.objects.filter(study=study).delete()
                System.objects.filter(study=study).delete()
            except (ProtectedError, RestrictedError):
                raise StudyImportError(
                    parsed.filename,
                    [
                        ImportIssue(
                            f"study '{study.name}' already has judgments or other work on its data; it cannot be replaced"
                        )
                    ],
                ) from None
        existing = {o.external_id: o for o in Original.objects.filter(study=study)}
        systems = {s.name: s for s in System.objects.filter(study=study)}
        issues: list[ImportIssue] = []
        for oid, odata in parsed.originals.items():
            old = existing.get(oid)
            if old is not None and old.text != odata.text:
                issues.append(
                    ImportIssue(
                        f"study '{study.name}' already holds original '{oid}' with a different text; pass replace to replace the study's data",
                        line=odata.line,
                        column="original",
                    )
                )
        existing_pairs = set(
            Candidate.objects.filter(original__study=study).values_list("original__external_id", "system__name")
        )
        for cand in parsed.candidates:
            if (cand.original_id, cand.system) in existing_pairs:
                issues.append(
                    ImportIssue(
                        f"study '{study.name}' already holds a candidate for original '{cand.original_id}' and system '{cand.system}'; pass replace to replace the study's data",
                        line=cand.line,
                    )
                )
            if len(issues) >= 50:
                break
        for name in parsed.systems:
            if name in systems and systems[name].kind != SystemKind.IMPORTED:
                issues.append(
                    ImportIssue(f"system '{name}' is not an imported system and cannot receive imported candidates")
                )
        if issues:
            raise StudyImportError(parsed.filename, issues)

        next_pos = len(existing)
        new_originals = []
        for oid, odata in parsed.originals.items():
            if oid not in existing:
                new_originals.append(
                    Original(
                        study=study,
                        external_id=oid,
                        text=odata.text,
                        reference=odata.reference,
                        group=odata.group,
                        document=odata.document,
                        position=next_pos + odata.position,
                    )
                )
        Original.objects.bulk_create(new_originals, batch_size=2000)
        new_systems = [
            System(study=study, name=name, kind=SystemKind.IMPORTED) for name in parsed.systems if name not in systems
        ]
        System.objects.bulk_create(new_systems, batch_size=500)
        original_ids = dict(Original.objects.filter(study=study).values_list("external_id", "id"))
        system_ids = dict(System.objects.filter(study=study).values_list("name", "id"))
        Candidate.objects.bulk_create(
            [
                Candidate(original_id=original_ids[c.original_id], system_id=system_ids[c.system], text=c.text)
                for c in parsed.candidates
            ],
            batch_size=2000,
        )
        return {
            "rows": parsed.row_count,
            "layout": parsed.layout,
            "format": parsed.format,
            "originals_added": len(new_originals),
            "systems_added": len(new_systems),
            "candidates_added": len(parsed.candidates),
            "replaced": replace,
        }


def _job_update(job_id: int, **fields) -> None:
    ImportJob.objects.filter(pk=job_id).update(**fields, updated_at=timezone.now())


def import_job_run(*, job_id: int, progress_every: int = 1000) -> ImportJob:
    """Run a queued import (the worker's side). Safe to run twice: a finished job is left alone."""
    job = ImportJob.objects.select_related("study").get(pk=job_id)
    if job.is_finished:
        return job
    _job_update(job.pk, status=JobStatus.RUNNING, phase="reading", started_at=timezone.now(), error="")
    try:
        data = import_job_upload(job=job)

        def progress(n: int) -> None:
            _job_update(job.pk, progress_done=n)

        parsed = parse_study_file(
            data, filename=job.filename, fmt=job.format, max_bytes=settings.PARAEVAL_IMPORT_MAX_BYTES, progress=progress
        )
        _job_update(job.pk, phase="writing", progress_done=parsed.row_count, progress_total=parsed.row_count)
        with transaction.atomic():
            locked = ImportJob.objects.select_for_update().get(pk=job.pk)
            if locked.status == JobStatus.SUCCEEDED:
                return locked  # another worker finished it meanwhile
            summary = study_import_parsed(study=job.study, parsed=parsed, replace=job.replace)
            ImportJob.objects.filter(pk=job.pk).update(
                status=JobStatus.SUCCEEDED,
                phase="done",
                upload=b"",
                summary=summary,
                row_count=parsed.row_count,
                finished_at=timezone.now(),
                updated_at=timezone.now(),
            )
    except StudyImportError as exc:
        _job_update(
            job.pk,
            status=JobStatus.FAILED,
            phase="failed",
            error=exc.describe(),
            upload=b"",
            finished_at=timezone.now(),
        )
    job.refresh_from_db()
    return job


def import_job_upload(*, job: ImportJob) -> bytes:
    """The bytes of ``job``'s upload, as the worker reads them.

    New jobs carry them in their row (``upload``). A job queued before that has a file under
    MEDIA_ROOT, which exists only on machines that share the web machine's storage: on any other
    worker it cannot be read, and that ends the job with the reason (a
    :class:`StudyImportError`) instead of an ``OSError`` that left it "running" and resent forever.
    """
    if job.upload:
        return bytes(job.upload)  # PostgreSQL hands a memoryview
    if not job.file:
        raise StudyImportError(job.filename, [ImportIssue("the upload is missing; upload the file again")])
    try:
        with job.file.open("rb") as fh:
            return fh.read()
    except OSError as exc:
        logger.warning("import job %s: upload %s not readable on this worker: %s", job.pk, job.file.name, exc)
        raise StudyImportError(
            job.filename,
            [
                ImportIssue(
                    f"the upload is not readable on this worker ({exc.strerror or type(exc).__name__}): "
                    "this job keeps its file under MEDIA_ROOT of the machine that took it, and such uploads "
                    "must be on storage every worker shares (MEDIA_ROOT); upload the file again (a new "
                    "upload travels with its job in the database)"
                )
            ],
        ) from None
