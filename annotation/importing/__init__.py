"""Parse import files (study files, judgments, ParaBank's evaluation) without touching the DB.

Parsing is separate from writing so that the same checks run behind all three
doors (CLI, upload form, API) and so that nothing is written unless the whole
file is valid. Every problem is reported with the file name, the line (1-based,
the header being line 1 for CSV/TSV) and the column. The writing, all or nothing,
is the services' (:mod:`annotation.services.imports`, the judging and alignment
services).

One module per kind of file, over the shared reader; every name is re-exported
here, so ``from annotation.importing import StudyImportError`` keeps working:

- ``reading``: formats, :class:`ImportIssue`, :class:`StudyImportError`, decoding,
  CSV/TSV/JSONL records (the alignment app's pair importer reads through it too);
- ``studies``: study files, long or wide layout (:func:`parse_study_file`);
- ``judgments``: judgments collected elsewhere (:func:`parse_judgments_file`);
- ``parabank``: ParaBank's crowd evaluation as a design and two files;
- ``esa_spans``: error-span (ESA) annotations in JSON Lines, paraeval's, Appraise's and
  Pearmut's span shapes (:func:`~.esa_spans.parse_esa_spans_file`; import it from there);
- ``rankings``: k-way rankings with ties as nested lists (:func:`~.rankings.parse_rankings_file`);
- ``_common``: rows of any format as dicts and the system-name check, shared by
  ``studies`` and ``judgments``.
"""

from .judgments import (
    JUDGMENT_KNOWN,
    JUDGMENT_OPTIONAL,
    JUDGMENT_REQUIRED,
    JUDGMENT_WHICH,
    MAX_JUDGE_CHARS,
    JudgmentRow,
    ParsedJudgments,
    parse_judgments_file,
)
from .parabank import PARABANK_CRITERIA, parabank_files
from .reading import (
    FORMATS,
    MAX_FIELD_CHARS,
    MAX_ISSUES,
    MAX_NAME_CHARS,
    RESERVED_SYSTEM_PREFIX,
    ImportIssue,
    StudyImportError,
    csv_records,
    decode_utf8,
    detect_format,
    jsonl_objects,
)
from .studies import (
    KNOWN,
    LONG_ONLY,
    OPTIONAL,
    REQUIRED,
    CandidateData,
    OriginalData,
    ParsedStudyData,
    parse_study_file,
)

__all__ = [
    "FORMATS",
    "JUDGMENT_KNOWN",
    "JUDGMENT_OPTIONAL",
    "JUDGMENT_REQUIRED",
    "JUDGMENT_WHICH",
    "KNOWN",
    "LONG_ONLY",
    "MAX_FIELD_CHARS",
    "MAX_ISSUES",
    "MAX_JUDGE_CHARS",
    "MAX_NAME_CHARS",
    "OPTIONAL",
    "PARABANK_CRITERIA",
    "REQUIRED",
    "RESERVED_SYSTEM_PREFIX",
    "CandidateData",
    "ImportIssue",
    "JudgmentRow",
    "OriginalData",
    "ParsedJudgments",
    "ParsedStudyData",
    "StudyImportError",
    "csv_records",
    "decode_utf8",
    "detect_format",
    "jsonl_objects",
    "parabank_files",
    "parse_judgments_file",
    "parse_study_file",
]
