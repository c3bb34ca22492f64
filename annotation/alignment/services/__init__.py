"""Writes: alignment tasks, system alignments, annotators' drafts and submissions, scoring runs.

Views, APIs, tasks, the demo and commands call these; none of them writes a
model directly. One module per concern; every name is re-exported here, so
``from annotation.alignment import services`` and ``services.assignments_create``
keep working:

- ``assignments``: the study's settings (k, pre-fill system), handing pairs out;
- ``drafts``: an annotator's opening, autosaves and submission of one pair;
- ``pairs``: importing pairs and groups;
- ``systems``: system alignments and paraeval's aligner runs;
- ``scoring``: scoring runs, queued and computed;
- ``requeue``: the requeue pass of both kinds of run;
- ``_common``: the links' stored form, shared by ``drafts`` and ``systems``.

A test that changes a module-level setting patches the module that reads it
(``scoring.TABLE_CHECK_IN_REQUEST_BYTES``), not this package.
"""

from .assignments import alignment_config_update, assignments_create
from .drafts import (
    AssignmentClosed,
    AssignmentConflict,
    assignment_draft_save,
    assignment_open,
    assignment_submit,
    links_count_check,
    links_limit,
)
from .pairs import pairs_import_file, pairs_import_parsed
from .requeue import jobs_requeue_stale
from .scoring import TABLE_CHECK_IN_REQUEST_BYTES, scoring_run_create, scoring_run_execute
from .systems import (
    aligner_run_create,
    aligner_run_execute,
    system_alignments_import,
    system_alignments_store,
    system_delete,
)

__all__ = [
    "TABLE_CHECK_IN_REQUEST_BYTES",
    "AssignmentClosed",
    "AssignmentConflict",
    "aligner_run_create",
    "aligner_run_execute",
    "alignment_config_update",
    "assignment_draft_save",
    "assignment_open",
    "assignment_submit",
    "assignments_create",
    "jobs_requeue_stale",
    "links_count_check",
    "links_limit",
    "pairs_import_file",
    "pairs_import_parsed",
    "scoring_run_create",
    "scoring_run_execute",
    "system_alignments_import",
    "system_alignments_store",
    "system_delete",
]
