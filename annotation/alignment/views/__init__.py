"""Pages of the alignment app: the annotator's task list, grid and guidelines; the
researcher's alignment page, pair preview, scoring runs, results and exports.

One module per audience and page family; every view is re-exported here, so
``urls`` (``views.grid``, ``views.study_page``, ...) keeps working:

- ``annotators``: the task list, the next pair, the guidelines, the grid;
- ``study``: the researcher's alignment page and its forms;
- ``pairs``: exports, the pair list and one pair's read-only grid;
- ``scoring``: scoring runs, their results and exports;
- ``_common``: downloads, the grid's data and import errors, shared by the others.
"""

from .annotators import annotator_assignment_required, grid, guidelines, home, next_task
from .pairs import export_alignments, export_pairs, pair_list, pair_view
from .scoring import SUMMARY_MEANINGS, run_detail, run_export, run_status, scoring
from .study import (
    aligner_run_status,
    assign,
    import_pairs,
    import_system,
    run_aligner,
    study_page,
    system_delete,
    update_settings,
)

__all__ = [
    "SUMMARY_MEANINGS",
    "aligner_run_status",
    "annotator_assignment_required",
    "assign",
    "export_alignments",
    "export_pairs",
    "grid",
    "guidelines",
    "home",
    "import_pairs",
    "import_system",
    "next_task",
    "pair_list",
    "pair_view",
    "run_aligner",
    "run_detail",
    "run_export",
    "run_status",
    "scoring",
    "study_page",
    "system_delete",
    "update_settings",
]
