"""Parse import files (study files, judgments, ParaBank's evaluation) without touching the DB.

The readers every parser shares are here too; a judging protocol's own files (ESA spans and
proposals, rankings) are parsed in its package (``annotation/judging/protocols/<name>/parsers.py``),
over these readers.

Parsing is separate from writing so that the same checks run behind all three
doors (CLI, upload form, API) and so that nothing is written unless the whole
file is valid. Every problem is reported with the file name, the line (1-based,
the header being line 1 for CSV/TSV) and the column. The writing, all or nothing,
is the services' (:mod:`annotation.services.imports`, the judging and alignment
services).

One module per kind of file, over the shared reader; this package itself exports
nothing, so import each name from its module, e.g.
``from annotation.importing.reading import StudyImportError``:

- ``reading``: formats, :class:`~.reading.ImportIssue`, :class:`~.reading.StudyImportError`,
  decoding, CSV/TSV/JSONL records (the alignment app's pair importer reads through it too);
- ``studies``: study files, long or wide layout (:func:`~.studies.parse_study_file`);
- ``judgments``: judgments collected elsewhere (:func:`~.judgments.parse_judgments_file`);
- ``parabank``: ParaBank's crowd evaluation as a design and two files;
- ``fields``: rows of any format as dicts, and the checks of a system name, a judge name and
  a number, shared by every parser (the protocols' too).
"""
