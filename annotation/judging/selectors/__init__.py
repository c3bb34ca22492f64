"""Reads for judging: a judge's items (blinded), progress, the canonical judgments
frame, exclusions, QC and exports.

What a judge receives is built only by :func:`item_next_for_judge`,
:func:`item_for_judge` and :func:`item_previous_for_judge` (and their fast twins on
the hot path) as :class:`JudgeItem` values, which hold texts, positions and opaque
tokens — never a system, a control kind, an expected score or a database id.

The package re-exports every name callers use (``selectors.judgments_frame``,
``from annotation.judging.selectors import ...``). Its modules:

* :mod:`.judge` — the judge's side through the ORM (items, the one before, their studies);
* :mod:`.hot_path` — the judge's hot path in fixed SQL (``items/next``, the submit's answer);
* :mod:`.design` — the design, the criteria and the controls' expected values;
* :mod:`.exclusions` — excluded and screened-out judges;
* :mod:`.progress` — progress per judge and per system;
* :mod:`.frame` — the canonical judgments frame;
* :mod:`.qc` — quality control per judge and the judgments' fingerprint;
* :mod:`.export_rows` — the rows of the tidy and wide CSV exports.

A test or benchmark that changes a module constant (``FRAME_CHUNK_SIZE``,
``EXPORT_CHUNK_SIZE``) sets it on the module that reads it (:mod:`.frame`,
:mod:`.export_rows`), not here.
"""

from .design import (
    design_for_study,
    study_control_expected,
    study_criteria,
    study_criteria_slugs,
    study_qc_tests,
)
from .exclusions import judge_exclusion_history, judges_excluded, judges_screened_out_names
from .export_rows import EXPORT_CHUNK_SIZE, TIDY_EXPORT_COLUMNS, export_tidy_rows, export_wide_rows
from .frame import FRAME_CHUNK_SIZE, JUDGMENT_FRAME_COLUMNS, judgments_frame
from .hot_path import assignment_done_count_fast, assignment_ready_for_judge, item_next_for_judge_fast, study_for_judge
from .judge import (
                    CONTEXT_SENTENCES,
                    JudgeItem,
                    assignment_done_count,
                    assignment_for_judge,
                    item_for_judge,
                    item_next_for_judge,
                    item_previous_for_judge,
                    original_context,
                    studies_for_judge,
)
from .progress import study_has_judgments, study_progress
from .qc import STRAIGHTLINE_MIN_SCORES, STRAIGHTLINE_THRESHOLD, judge_qc, judgments_fingerprint

__all__ = [
    "CONTEXT_SENTENCES",
    "EXPORT_CHUNK_SIZE",
    "FRAME_CHUNK_SIZE",
    "JUDGMENT_FRAME_COLUMNS",
    "STRAIGHTLINE_MIN_SCORES",
    "STRAIGHTLINE_THRESHOLD",
    "TIDY_EXPORT_COLUMNS",
    "JudgeItem",
    "assignment_done_count",
    "assignment_done_count_fast",
    "assignment_for_judge",
    "assignment_ready_for_judge",
    "design_for_study",
    "export_tidy_rows",
    "export_wide_rows",
    "item_for_judge",
    "item_next_for_judge",
    "item_next_for_judge_fast",
    "item_previous_for_judge",
    "judge_exclusion_history",
    "judge_qc",
    "judges_excluded",
    "judges_screened_out_names",
    "judgments_fingerprint",
    "judgments_frame",
    "original_context",
    "studies_for_judge",
    "study_control_expected",
    "study_qc_tests",
    "study_criteria",
    "study_criteria_slugs",
    "study_for_judge",
    "study_has_judgments",
    "study_progress",
]
