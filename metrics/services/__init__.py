"""Writes for metric runs, their scores, metric resources and PEM models.

Views, APIs, Celery tasks, the demo and management commands call these. The
numbers come from ``metrics.core`` (the registry's metrics and
:func:`metrics.core.base.bootstrap.bootstrap_ci`); this package only moves data between
the database and the metric engine and keeps each run's state.

Life of a run (the tasks in ``metrics/tasks.py`` call the three worker steps):

1. :func:`~.runs.metric_run_create` (web): validates the slug, parameters and
   resources by building the metric, snapshots the study's candidate ids into
   :class:`~metrics.models.MetricRunChunk` rows of ``chunk_size`` and queues the
   start task on commit.
2. :func:`~.worker.metric_run_start` (worker): marks the run running, records its
   signature and returns the chunks still to do; the task fans them out.
3. :func:`~.worker.metric_run_chunk_execute` (worker, many in parallel): scores one
   chunk, upserts its :class:`~metrics.models.MetricScore` rows and flips the
   chunk's ``done`` flag and the run's chunk counter in ONE transaction, so a
   chunk executed twice writes the same rows and counts once.
4. :func:`~.worker.metric_run_finalize` (worker, by whichever chunk completed the run):
   corpus score, bootstrap CI and per-system scores from ALL stored statistics.

Layout
------
One module a concern: :mod:`.resources` (uploaded resource files), :mod:`.runs` (create,
cancel, retry, requeue: what people ask for; it queues the tasks), :mod:`.worker` (start,
chunk, finalize, fail: the worker side), :mod:`.instances` (the per-process cache of metric
objects), :mod:`.pem_models` (queueing the training of PEM models and running them),
:mod:`.pem_training` (the training, on the worker) and :mod:`.pem_out_of_fold`
(PEM's out-of-fold meta-evaluation run), over :mod:`._shared` (helpers they share).
Import each name from the module that defines it; this package holds no names of its own. The Celery tasks
are in ``metrics/tasks.py`` (their names are their dotted paths).
"""
