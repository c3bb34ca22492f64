"""The shared reader of every importer (study files, judgments, alignment pairs): formats, errors, decoding, records.

Every problem is a :class:`ImportIssue` naming the line (1-based, the header being
line 1 for CSV/TSV) and the column; a :class:`StudyImportError` carries all of them.
Nothing here touches the database.
"""

from __future__ import annotations

from pathlib import PurePath

from metrics.core import tabular
from metrics.core.text import has_nul

#: Imported systems may not use this prefix: paraeval names its controls with it.
RESERVED_SYSTEM_PREFIX = "control:"
MAX_ISSUES = 50
MAX_FIELD_CHARS = 100_000
MAX_NAME_CHARS = 200
#: The size limit of a JSON Lines file (spans, proposals, rankings) when the caller names none;
#: the importing services pass ``settings.PARAEVAL_IMPORT_MAX_BYTES``.
MAX_FILE_BYTES = 20_000_000
FORMATS = ("csv", "tsv", "jsonl")


#: One problem in an import file (message, line, column): the shared reader's issue type.
ImportIssue = tabular.TabularIssue


class StudyImportError(Exception):
    """The file cannot be imported; ``issues`` says every place that is wrong."""

    def __init__(self, filename: str, issues: list[ImportIssue]):
        self.filename = filename
        self.issues = issues
        super().__init__(self.describe())

    def describe(self, limit: int = 20) -> str:
        lines = [i.render(self.filename) for i in self.issues[:limit]]
        if len(self.issues) > limit:
            lines.append(f"… and {len(self.issues) - limit} more problems")
        return "\n".join(lines)


def detect_format(filename: str, explicit: str | None = None) -> str:
    """``explicit`` if given, else the file extension (``.csv``, ``.tsv``/``.tab``, ``.jsonl``/``.ndjson``).

    Compression suffixes are not supported: upload the plain file.
    """
    if explicit:
        fmt = explicit.lower().lstrip(".")
        if fmt not in FORMATS:
            raise StudyImportError(
                filename, [ImportIssue(f"unknown format '{explicit}'; use one of {', '.join(FORMATS)}")]
            )
        return fmt
    suffix = PurePath(filename).suffix.lower()
    mapping = {".csv": "csv", ".tsv": "tsv", ".tab": "tsv", ".txt": "tsv", ".jsonl": "jsonl", ".ndjson": "jsonl"}
    if suffix not in mapping:
        raise StudyImportError(
            filename,
            [
                ImportIssue(
                    f"cannot tell the format from the extension '{suffix or '(none)'}'; name the file .csv, .tsv or .jsonl, or pass the format"
                )
            ],
        )
    return mapping[suffix]


def upload_text(data: bytes, filename: str, max_bytes: int) -> str:
    """An uploaded file's text: refused whole before any work when it is over ``max_bytes``,
    then decoded by :func:`decode_utf8`."""
    if len(data) > max_bytes:
        raise StudyImportError(filename, [ImportIssue(f"the file is {len(data):,} bytes; the limit is {max_bytes:,}")])
    return decode_utf8(data, filename)


def decode_utf8(data: bytes, filename: str) -> str:
    """Decode strictly as UTF-8 (a BOM is allowed), naming the line of the first bad byte."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        col = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise StudyImportError(
            filename,
            [
                ImportIssue(
                    f"not valid UTF-8 (byte 0x{data[exc.start]:02x} at character {col}); save the file as UTF-8",
                    line=line,
                )
            ],
        ) from None
    if "\x00" in text:
        line = text[: text.index("\x00")].count("\n") + 1
        raise StudyImportError(filename, [ImportIssue("contains a NUL character; is this a binary file?", line=line)])
    return text


def csv_records(text: str, delimiter: str, filename: str):
    """Yield (line_of_record_start, header_or_row_list).

    The shared reader of :mod:`metrics.core.tabular`: CSV with RFC 4180 quoting, TSV
    raw (no quoting: a TSV text may start with ``"``), the same errors everywhere.
    """
    try:
        yield from tabular.csv_records(text, "csv" if delimiter == "," else "tsv", filename)
    except tabular.TabularError as exc:
        raise StudyImportError(filename, [ImportIssue(i.message, i.line, i.column) for i in exc.issues]) from None


def jsonl_objects(text: str, issues: list[ImportIssue]):
    """Yield (line, object) for each non-blank line of a JSON Lines text that holds a
    JSON object; every other line becomes an issue naming it (bad JSON, nesting too
    deep, not an object, a NUL character). Shared by every JSONL importer; lines end
    at "\n" only (:func:`metrics.core.tabular.jsonl_objects`)."""
    found: list[tabular.TabularIssue] = []
    for lineno, obj in tabular.jsonl_objects(text, found):
        while found:
            i = found.pop(0)
            issues.append(ImportIssue(i.message, i.line, i.column))
        if has_nul(obj):
            issues.append(ImportIssue("contains a NUL character", line=lineno))
            continue
        yield lineno, obj
    issues.extend(ImportIssue(i.message, i.line, i.column) for i in found)
