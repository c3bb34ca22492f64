"""Asking for the alignment app's background runs: a scoring run (:func:`scoring_run_create`) or an
aligner run (:func:`aligner_run_create`) is checked, stored and queued on commit; stranded runs are
sent again for the requeue pass (:func:`jobs_requeue_stale`). What the worker runs is
:mod:`.scoring` and :mod:`.systems`; the tasks between them are :mod:`annotation.alignment.tasks`."""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db import transaction

from annotation.alignment import selectors
from annotation.alignment.enums import AlignmentSystemKind, ScoringKind
from annotation.alignment.models import (
    AlignerRun,
    AlignmentPair,
    AlignmentSystem,
    ScoringRun,
)
from annotation.alignment.services.scoring import read_phrase_table
from annotation.alignment.tasks import aligner_run_task, scoring_run_task
from annotation.models import Study
from config.jobs.services import job_enqueue
from config.recovery import job_resend, jobs_to_resend

#: Paraphrase tables up to this size are checked in the request (errors shown at once);
#: larger ones are read by the worker, whose run then reports the errors.
TABLE_CHECK_IN_REQUEST_BYTES = 2 * 1024 * 1024


def _check_scoring_params(max_len, min_prob) -> None:
    if not isinstance(max_len, int) or not 1 <= max_len <= 10:
        raise ValidationError("the maximum phrase length must be between 1 and 10 words")
    if not (isinstance(min_prob, (int, float)) and 0.0 <= min_prob <= 1.0):
        raise ValidationError("the minimum probability must be between 0 and 1")


def scoring_run_create(
    *,
    study: Study,
    user: User | None,
    kind: str,
    system: AlignmentSystem | None = None,
    table_data: bytes | None = None,
    table_filename: str = "",
    max_len: int = 5,
    min_prob: float = 0.0,
    use_possible: bool = True,
) -> ScoringRun:
    """Queue a scoring run for a Celery worker (sent after the transaction commits).

    ``kind`` system needs ``system`` (scored against the gold: the annotators'
    submitted alignments); paraphrases needs ``table_data`` (``phrase<TAB>paraphrase
    [<TAB>probability]``); agreement needs pairs with two or more submitted
    alignments. Raises ``ValidationError`` when the run cannot work, and
    :class:`StudyImportError` for a paraphrase table with bad lines.
    """
    _check_scoring_params(max_len, min_prob)
    gold_pairs = selectors.submitted_alignments(study=study)
    if kind in (ScoringKind.SYSTEM, ScoringKind.PARAPHRASES) and not gold_pairs:
        raise ValidationError("no pair has a submitted alignment yet: the gold is empty")
    label = ""
    if kind == ScoringKind.SYSTEM:
        if system is None or system.study_id != study.pk:
            raise ValidationError("choose a system of this study")
        label = system.name
    elif kind == ScoringKind.PARAPHRASES:
        if not table_data:
            raise ValidationError("upload a paraphrase table")
        table_filename = table_filename or "paraphrases.tsv"
        if len(table_data) > settings.PARAEVAL_IMPORT_MAX_BYTES:
            raise ValidationError(
                f"the table is {len(table_data):,} bytes; the limit is {settings.PARAEVAL_IMPORT_MAX_BYTES:,}"
            )
        if len(table_data) <= TABLE_CHECK_IN_REQUEST_BYTES:
            read_phrase_table(table_data, table_filename)
        label = table_filename
    elif kind == ScoringKind.AGREEMENT:
        if not any(len(by) >= 2 for by in gold_pairs.values()):
            raise ValidationError("no pair has been submitted by two annotators yet")
        label = "annotators"
    else:
        raise ValidationError(f"unknown scoring kind '{kind}'")
    params = {"max_len": max_len, "min_prob": float(min_prob), "use_possible": bool(use_possible)}
    with transaction.atomic():
        run = ScoringRun(
            study=study,
            created_by=user,
            kind=kind,
            system=system if kind == ScoringKind.SYSTEM else None,
            label=label[:255],
            parameters=params,
            phase="queued",
            # In the run's row, not under MEDIA_ROOT: a worker on another machine reads the database.
            table_data=table_data if kind == ScoringKind.PARAPHRASES else b"",
        )
        run.full_clean(exclude=["table_file", "table_data"])
        run.save()
        transaction.on_commit(lambda: job_enqueue(scoring_run_task, run.pk))
    return run


def aligner_run_create(
    *, study: Study, user: User | None, system_name: str = "paraeval-aligner", use_wordnet: bool = True
) -> AlignerRun:
    """Queue paraeval's aligner (``metrics.core.aligner.align``) over every pair of the study.

    The worker writes (or rewrites) the aligner system ``system_name``; a system
    of that name that is not an aligner system is refused (``ValidationError``).
    """
    system_name = system_name.strip()
    if not AlignmentPair.objects.filter(study=study).exists():
        raise ValidationError("the study has no alignment pairs yet")
    other = (
        AlignmentSystem.objects.filter(study=study, name=system_name).exclude(kind=AlignmentSystemKind.ALIGNER).first()
    )
    if other is not None:
        raise ValidationError(
            f"system '{system_name}' is an {other.get_kind_display().lower()} system; choose another name"
        )
    with transaction.atomic():
        run = AlignerRun(
            study=study,
            created_by=user,
            system_name=system_name,
            parameters={"use_wordnet": bool(use_wordnet)},
            phase="queued",
        )
        run.full_clean()
        run.save()
        transaction.on_commit(lambda: job_enqueue(aligner_run_task, run.pk))
    return run


def jobs_requeue_stale(*, stale_after=None, queued_after=None) -> int:
    """Send queued (and, with ``stale_after``, stalled running) scoring and aligner runs again.

    Each is a resent message: it runs only if it can claim its run (``config.recovery``).
    """
    n = sum(
        job_resend(scoring_run_task, pk, stale_after=stale_after)
        for pk in jobs_to_resend(ScoringRun, stale_after=stale_after, queued_after=queued_after)
    )
    return n + sum(
        job_resend(aligner_run_task, pk, stale_after=stale_after)
        for pk in jobs_to_resend(AlignerRun, stale_after=stale_after, queued_after=queued_after)
    )
