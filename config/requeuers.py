"""Every kind of worker-run job paraeval has, and the service function that resends it.

Its own module so that :mod:`config.recovery` (the requeue pass of workers and Celery
beat) and the ``requeue_jobs`` management command share one list without the
recovery code importing a management command (the layers in ``.importlinter``:
services and tasks never import commands, views or APIs). The entries are dotted
names, resolved when the pass runs, so importing this module loads no app code.
"""

#: (module, function, what it resends). Each function takes ``stale_after`` (and may
#: take ``queued_after``); :func:`config.recovery.requeue_jobs` calls them all.
REQUEUERS = (
    ("annotation.services", "jobs_requeue_stale", "import/generation job(s)"),
    ("annotation.alignment.services", "jobs_requeue_stale", "alignment scoring/aligner run(s)"),
    ("metrics.services", "metric_runs_requeue_stale", "metric run(s)"),
    ("metrics.reports.services", "reports_requeue_stale", "report(s)"),
    ("annotation.judging.services", "jobs_requeue_stale", "judging opening(s)"),
)
