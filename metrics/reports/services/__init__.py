"""Writes for reports: create a report, build it (the worker's side), fill a study with
simulated judges.

Views, APIs, the task and the management commands call these. Statistics come from
``metrics.core.stats.build_report``; this package only gathers the study's data, calls
it, draws the figures and stores the result.

Layout
------
:mod:`.report_settings` (defaults, bounds, :func:`report_settings_clean`), :mod:`.build`
(create, build, fail, rebuild, requeue) and :mod:`.simulation` (the judge simulator).
Every public name is re-exported here, so ``from metrics.reports import services`` and
``services.report_build(...)`` keep working; the Celery task stays in
``metrics/reports/tasks.py``.
"""

from __future__ import annotations

# Re-exported because callers used them through this module before it was a package
# (``services.build_report`` in tests/metrics/reports/test_build_frame_once.py).
from metrics.core.stats import build_report as build_report
from metrics.core.stats import human_reference as human_reference

from .build import PHASES, report_build, report_create, report_fail, report_rebuild, reports_requeue_stale
from .build import subset_in_criteria_order as subset_in_criteria_order
from .report_settings import (
    DEFAULT_SETTINGS,
    MIN_SHARED_MAX,
    MIN_SHARED_MIN,
    N_BOOT_MAX,
    N_BOOT_MIN,
    report_settings_clean,
)
from .simulation import SIM_JUDGE_PREFIX, SimulationSummary, simulated_judges_fill

__all__ = [
    "DEFAULT_SETTINGS",
    "MIN_SHARED_MAX",
    "MIN_SHARED_MIN",
    "N_BOOT_MAX",
    "N_BOOT_MIN",
    "PHASES",
    "SIM_JUDGE_PREFIX",
    "SimulationSummary",
    "report_build",
    "report_create",
    "report_fail",
    "report_rebuild",
    "report_settings_clean",
    "reports_requeue_stale",
    "simulated_judges_fill",
]
