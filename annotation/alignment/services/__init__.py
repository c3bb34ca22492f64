"""Writes: alignment tasks, system alignments, annotators' drafts and submissions, scoring runs.

Views, APIs, tasks, the demo and commands call these; none of them writes a
model directly. One module per concern; import each name from the module that
defines it, e.g. ``from annotation.alignment.services.assignments import
assignments_create`` (this package itself exports nothing):

- ``assignments``: the study's settings (k, pre-fill system), handing pairs out;
- ``drafts``: an annotator's opening, autosaves and submission of one pair;
- ``pairs``: importing pairs and groups;
- ``systems``: system alignments and paraeval's aligner runs (the worker's side);
- ``scoring``: scoring runs, computed (the worker's side);
- ``queueing``: asking for both kinds of run (checked, stored, queued) and their requeue pass;

A test that changes a module-level setting patches the module that reads it
(``annotation.alignment.services.queueing.TABLE_CHECK_IN_REQUEST_BYTES``).
"""
