"""Writes for judging: design, opening (controls + assignments), submitting, exclusions.

Views, APIs, the demo, management commands and the Celery task call these. They are
not the only writers of judging rows: screening and training
(:mod:`annotation.judging.screening`, :mod:`annotation.judging.training`), each
protocol's services (``annotation.judging.protocols.<protocol>.services``) and the
adaptive allocator (:mod:`annotation.adaptive.services`, the order of a judge's items)
write some too. Every function here is keyword-only and runs inside ``transaction.atomic``,
except the background opening (:func:`~.open_job.open_job_run`), which commits step by
step so its progress shows and a requeued run can resume.

This package itself exports nothing: import each name from the module that defines it,
e.g. ``from annotation.judging.services.submission import submission_store``. Its modules:

* :mod:`.design` — the judging design (frozen once judging opens);
* :mod:`.opening` — opening in one transaction and the plumbing every opening shares
  (items, assignment items, controls, the refusals, locks and undo), closing, reopening, resetting;
* :mod:`.open_job` — the worker's resumable run of a background opening;
* :mod:`.queueing` — asking for background work: the shared opening entry (at once or as an
  open job), the automatic QC check after each judgment, the requeue of stalled open jobs;
* :mod:`.assignments` — late judges, join-link participants, instructions seen;
* :mod:`.submission` — submitting a judgment (the judge's hot path);
* :mod:`.exclusions` — excluding and re-including judges;
* :mod:`.judgment_import` — the judges of judgments collected elsewhere (each protocol's
  import is in its package).
"""
