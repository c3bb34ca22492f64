"""Writes for reports: create a report, build it (the worker's side), fill a study with
simulated judges.

Views, APIs, the task and the management commands call these. Statistics come from
``metrics.core.stats.report.build_report``; this package only gathers the study's data, calls
it, draws the figures and stores the result.

Layout
------
:mod:`.report_settings` (defaults, bounds, :func:`report_settings_clean`), :mod:`.queueing`
(create a report and queue its build, rebuild, requeue the stranded), :mod:`.build` (the
build the worker runs, fail), :mod:`.progress` (a running report's phases). The judge simulator, which writes absolute judgments, is
:mod:`annotation.judging.protocols.absolute.simulation`.
Import each name from the module that defines it; this package holds no names of its own. The Celery task is in
``metrics/reports/tasks.py``.
"""
