"""Judging pages: the judge's rating pages and the researcher's design, progress and QC.

Judge pages render only :class:`~annotation.judging.selectors.JudgeItem` values and
the design's criteria texts: no system, control kind, expected score or database
id of a candidate, original or system reaches the judge's browser.

The package re-exports every view and helper that ``urls.py`` and other code use
(``views.rate``, ``from annotation.judging.views import csv_response``). Its modules:

* :mod:`.judge` — the judge's pages (home, rate, revise, submit, instructions, end);
* :mod:`.study` — the researcher's design, opening, closing, resetting and progress;
* :mod:`.results` — judge QC and exclusions, the CSV exports, importing judgments.
"""

from .judge import criteria_for_judge, finished, instructions, judge_home, rate, revise, submit
from .results import (
                      csv_response,
                      exclusion,
                      export_filename,
                      export_tidy,
                      export_wide,
                      import_judgments,
                      qc,
)
from .study import (
                      assign_late,
                      close_study,
                      design,
                      open_job_payload,
                      open_job_status,
                      open_study,
                      open_summary_text,
                      progress,
                      progress_json,
                      reopen_study,
                      reset_study,
)

__all__ = [
    "assign_late",
    "close_study",
    "criteria_for_judge",
    "csv_response",
    "design",
    "exclusion",
    "export_filename",
    "export_tidy",
    "export_wide",
    "finished",
    "import_judgments",
    "instructions",
    "judge_home",
    "open_job_payload",
    "open_job_status",
    "open_study",
    "open_summary_text",
    "progress",
    "progress_json",
    "qc",
    "rate",
    "reopen_study",
    "reset_study",
    "revise",
    "submit",
]
