"""Writes for judging: design, opening (controls + assignments), submitting, exclusions.

Views, APIs, the demo, management commands and the Celery task call these; nothing
else writes judging rows. Every function is keyword-only and runs inside
``transaction.atomic``, except the background opening (:func:`open_job_run`), which
commits step by step so its progress shows and a requeued run can resume.

The package re-exports every name callers use, so ``services.judgment_submit`` and
``from annotation.judging.services import ...`` work as before. Its modules:

* :mod:`.design` — the judging design (frozen once judging opens);
* :mod:`.opening` — opening in one transaction, closing, reopening, resetting;
* :mod:`.open_job` — the shared opening entry and the worker's resumable run;
* :mod:`.assignments` — late judges, join-link participants, instructions seen;
* :mod:`.submission` — submitting a judgment (the judge's hot path);
* :mod:`.exclusions` — excluding and re-including judges;
* :mod:`.judgment_import` — importing judgments collected elsewhere;
* :mod:`._common` — the opening plumbing the others share.
"""

from ._common import ACTIVE_JOB_STATUSES, BULK_BATCH
from .assignments import (
                          assignment_build_for_participant,
                          assignment_ensure_for_judge,
                          assignment_release_unfinished,
                          assignments_ensure_all,
                          instructions_mark_seen,
)
from .design import DESIGN_FIELDS, EDITABLE_WHEN_FROZEN, design_get_or_create, design_update, expected_kept
from .exclusions import judge_exclusion_set
from .judgment_import import (
                          IMPORTED_JUDGE_SUFFIX,
                          JudgmentImportSummary,
                          imported_judge_username,
                          judgments_import_file,
                          judgments_import_parsed,
)
from .open_job import (
                          DEFAULT_OPEN_BACKGROUND_ITEMS,
                          OPEN_JOB_ITEMS_PER_TRANSACTION,
                          jobs_requeue_stale,
                          open_background_threshold,
                          open_job_run,
                          study_judging_open_start,
)

# The background opening's steps, which tests drive one at a time (a worker dying midway).
from .open_job import open_job_begin as open_job_begin
from .open_job import open_job_write as open_job_write
from .opening import OpenSummary, study_judging_close, study_judging_open, study_judging_reopen, study_judging_reset
from .submission import KEY_MAX_LENGTH, KEY_MIN_LENGTH, SubmitResult, judgment_submit, scores_clean

__all__ = [
    "ACTIVE_JOB_STATUSES",
    "BULK_BATCH",
    "DEFAULT_OPEN_BACKGROUND_ITEMS",
    "DESIGN_FIELDS",
    "EDITABLE_WHEN_FROZEN",
    "IMPORTED_JUDGE_SUFFIX",
    "KEY_MAX_LENGTH",
    "KEY_MIN_LENGTH",
    "OPEN_JOB_ITEMS_PER_TRANSACTION",
    "JudgmentImportSummary",
    "OpenSummary",
    "SubmitResult",
    "assignment_build_for_participant",
    "assignment_ensure_for_judge",
    "assignment_release_unfinished",
    "assignments_ensure_all",
    "design_get_or_create",
    "design_update",
    "expected_kept",
    "imported_judge_username",
    "instructions_mark_seen",
    "jobs_requeue_stale",
    "judge_exclusion_set",
    "judgment_submit",
    "judgments_import_file",
    "judgments_import_parsed",
    "open_background_threshold",
    "open_job_run",
    "scores_clean",
    "study_judging_close",
    "study_judging_open",
    "study_judging_open_start",
    "study_judging_reopen",
    "study_judging_reset",
]
